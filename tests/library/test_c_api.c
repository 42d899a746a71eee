/* libmemlab from a C program (the header must be plain C): what needs no GPU always, the version, the
 * path of a transpose, refusals with messages, the last error read once; and where a GPU is present, a
 * transpose and a copy on memory this program allocated with its own CUDA runtime (libmemlab links
 * another, statically: the two share the device's primary context, as PyTorch's and libmemlab's do in
 * Python), checked byte for byte. Exit 0: passed (the GPU part skipped without a GPU, and said so). */
#include <cuda_runtime_api.h>
#include <memlab/c_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                        \
    }                                                                  \
  } while (0)

static int gpu_part(void) {
  enum { batch = 2, rows = 33, cols = 65, n = batch * rows * cols + 16 };
  unsigned char *host = malloc(n), *back = malloc(n), *src = NULL, *dst = NULL;
  size_t i, b, r, c;
  EXPECT(host != NULL && back != NULL);
  for (i = 0; i < n; ++i) host[i] = (unsigned char)(1 + (i * 2654435761u >> 24) % 255);
  EXPECT(cudaMalloc((void**)&src, n) == cudaSuccess && cudaMalloc((void**)&dst, n) == cudaSuccess);
  EXPECT(cudaMemcpy(src, host, n, cudaMemcpyHostToDevice) == cudaSuccess);
  EXPECT(cudaMemset(dst, 0, n) == cudaSuccess);
  /* src 3 bytes in, dst 1 byte in: both sides realign. */
  EXPECT(memlab_transpose(dst + 1, src + 3, batch, rows, cols, 1, NULL) == 0);
  EXPECT(memlab_stream_synchronize(NULL) == 0);
  EXPECT(cudaMemcpy(back, dst, n, cudaMemcpyDeviceToHost) == cudaSuccess);
  EXPECT(back[0] == 0 && back[1 + batch * rows * cols] == 0); /* the bytes around the output */
  for (b = 0; b < batch; ++b)
    for (r = 0; r < rows; ++r)
      for (c = 0; c < cols; ++c) EXPECT(back[1 + (b * cols + c) * rows + r] == host[3 + (b * rows + r) * cols + c]);
  EXPECT(memlab_copy_bytes(dst + 2, src + 7, n - 9, NULL) == 0);
  EXPECT(memlab_stream_synchronize(NULL) == 0);
  EXPECT(cudaMemcpy(back, dst, n, cudaMemcpyDeviceToHost) == cudaSuccess);
  EXPECT(memcmp(back + 2, host + 7, n - 9) == 0);
  {
    int device = -1;
    EXPECT(memlab_pointer_device(src, &device) == 0 && device >= 0);
    EXPECT(memlab_pointer_device(host, &device) != 0); /* host memory */
  }
  cudaFree(src);
  cudaFree(dst);
  free(host);
  free(back);
  printf("GPU part passed: a realigning transpose and copy, byte for byte\n");
  return 0;
}

int main(void) {
  int count = 0;
  EXPECT(memlab_abi_version() == MEMLAB_C_ABI_VERSION);
  EXPECT(strcmp(memlab_version(), "0.1.0") == 0);
  EXPECT(strcmp(memlab_transpose_path(0x10000, 0x20000, 1, 16384, 16384, 4), "aligned") == 0);
  EXPECT(strcmp(memlab_transpose_path(0x10000, 0x20000, 1, 12289, 3001, 4), "realign_both") == 0);
  EXPECT(strcmp(memlab_transpose_path(0x10000, 0x20000, 1, 1, 3001, 4), "copy") == 0);
  EXPECT(strcmp(memlab_transpose_path(0x10000, 0x20000, 1, 7, 7, 16), "unsupported") == 0);
  EXPECT(memlab_transpose((void*)0x10000, (const void*)0x20000, 1, 4, 4, 3, NULL) == 1); /* cudaErrorInvalidValue */
  EXPECT(strstr(memlab_last_error_message(), "elem_size=3") != NULL);
  EXPECT(memlab_get_last_error() == 1);
  EXPECT(memlab_get_last_error() == 0);
  EXPECT(memlab_copy_bytes((void*)0x10000, (const void*)0x10008, 64, NULL) == 1);
  EXPECT(strstr(memlab_last_error_message(), "overlap") != NULL);
  EXPECT(memlab_transpose(NULL, NULL, 0, 4, 4, 4, NULL) == 0); /* nothing to move */
  EXPECT(strcmp(memlab_error_name(100), "cudaErrorNoDevice") == 0);
  if (memlab_device_count(&count) != 0 || count == 0) {
    printf("GPU part skipped: %s\n", memlab_last_error_message());
    return 0;
  }
  return gpu_part();
}
