// memlab::copy from another project: copies a buffer whose source is 2 bytes off alignment (the
// case where cudaMemcpy drops to narrow accesses) and checks the result. Exit 0 when it matches.
#include <memlab/copy.cuh>

#include <cstdio>
#include <vector>

int main() {
  const std::size_t n = 1 << 20;
  std::vector<unsigned short> host(n + 1);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned short>(i * 2654435761u);
  unsigned short *src = nullptr, *dst = nullptr;
  if (cudaMalloc(&src, (n + 1) * sizeof *src) != cudaSuccess || cudaMalloc(&dst, n * sizeof *dst) != cudaSuccess) {
    std::printf("no GPU memory: %s\n", cudaGetErrorString(cudaGetLastError()));
    return 3;
  }
  cudaMemcpy(src, host.data(), host.size() * sizeof *src, cudaMemcpyHostToDevice);

  cudaError_t e = memlab::copy(dst, src + 1, n);  // src + 1: 2 bytes off 16-byte alignment
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("memlab::copy failed: %s\n", cudaGetErrorString(e));
    return 1;
  }

  std::vector<unsigned short> back(n);
  cudaMemcpy(back.data(), dst, n * sizeof *dst, cudaMemcpyDeviceToHost);
  for (std::size_t i = 0; i < n; ++i) {
    if (back[i] != host[i + 1]) {
      std::printf("mismatch at %zu\n", i);
      return 1;
    }
  }
  std::printf("memlab::copy: %zu elements copied from a misaligned source, all equal\n", n);
  cudaFree(src);
  cudaFree(dst);
  return 0;
}
