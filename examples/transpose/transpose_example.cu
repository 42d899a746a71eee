// memlab::transpose from another project: a 12289 x 3001 f32 matrix (rows of neither matrix 16-byte
// aligned: the realigning path) and a batch of 3 f16 matrices, checked on the host. Exit 0 when both match.
#include <memlab/transpose.cuh>

#include <cstdint>
#include <cstdio>
#include <vector>

template <class T>
int check(std::size_t batch, std::size_t rows, std::size_t cols) {
  const std::size_t n = batch * rows * cols;
  std::vector<T> host(n), back(n);
  for (std::size_t i = 0; i < n; ++i) host[i] = static_cast<T>(i * 2654435761u);
  T *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, n * sizeof(T)) != cudaSuccess || cudaMalloc(&dst, n * sizeof(T)) != cudaSuccess) {
    std::printf("no GPU memory: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 3;
  }
  cudaMemcpy(src, host.data(), n * sizeof(T), cudaMemcpyHostToDevice);
  cudaError_t e = memlab::transpose_batched(dst, src, batch, rows, cols);  // dst[b] = src[b]^T, cols x rows
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("memlab::transpose failed: %s\n", cudaGetErrorString(e));
    return 1;
  }
  cudaMemcpy(back.data(), dst, n * sizeof(T), cudaMemcpyDeviceToHost);
  for (std::size_t b = 0; b < batch; ++b)
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t c = 0; c < cols; ++c)
        if (back[(b * cols + c) * rows + r] != host[(b * rows + r) * cols + c]) {
          std::printf("mismatch at matrix %zu, row %zu, column %zu\n", b, r, c);
          return 1;
        }
  std::printf("memlab::transpose: %zu x %zu x %zu elements of %zu bytes, all equal (path %s)\n", batch, rows, cols,
              sizeof(T),
              memlab::to_string(memlab::plan_transpose(reinterpret_cast<std::uintptr_t>(dst),
                                                       reinterpret_cast<std::uintptr_t>(src), batch, rows, cols,
                                                       sizeof(T), memlab::copy_device{})
                                    .path));
  cudaFree(src);
  cudaFree(dst);
  return 0;
}

int main() {
  if (const int rc = check<float>(1, 12289, 3001)) return rc;
  return check<std::uint16_t>(3, 1023, 1025);
}
