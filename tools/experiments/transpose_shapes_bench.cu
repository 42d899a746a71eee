// memlab::transpose over a grid of shapes, each against a copy of the same bytes (cudaMemcpyAsync D2D) in
// the same process: the data of the "fraction of a copy" heat map (docs/labs/transpose.md, every shape;
// docs/notes/transpose_skinny.md). Not part of the build; tools/measure_transpose_shapes.sh builds and runs
// it on the GPU machine:
//   nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr -Iinclude \
//       tools/experiments/transpose_shapes_bench.cu -o /tmp/tsb
//   /tmp/tsb --out shapes.csv [--budget 150] [--samples 3] [--es 1,2,4,8] [--crossover]
//
// The grid (rows and cols in 1..64 and powers of two and primes up to 2^16, and the transposes of each,
// reduced to fit ~2-3 minutes on one H100): every side in 1..64, the powers of two
// 128..65536, and 20 primes next to them (67 .. 65521) instead of all 6542 primes below 2^16: 94 sides, every
// pair (rows, cols) of them, each element size. A case moves at least 64 MiB: `batch` matrices of
// rows x cols, batch = ceil(32 MiB / matrix bytes); a matrix above 256 MiB is skipped (a large x large
// shape, the tiled paths' measured ground). Pairs run in order of their shorter side, so a budget cut
// loses the large x large shapes first; the CSV says how many were cut.
//
// Each case: the output poisoned, transposed once and compared on the device byte for byte; then
// `samples` cold samples of the transpose and of the copy, interleaved (the L2 flushed before each by a
// 2 x L2-size memset; events around one launch), medians. fraction = copy median / transpose median.
// With --crossover, shapes next to the few paths' thresholds (a side of 17..128 elements, or a matrix of
// 1..16 KiB) are also timed on the path plan_transpose did not take (the tiled path where it took a few
// path, and the other way round): the alt_* columns, data for the thresholds in transpose_plan.hpp.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "memlab/transpose.cuh"

#include "check.cuh"

namespace {

__global__ void fill(std::uint8_t* p, std::uint64_t n, std::uint32_t seed) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint32_t h = static_cast<std::uint32_t>(i * 0x9E3779B97F4A7C15ull >> 32) ^ seed;
    h ^= h >> 15;
    h *= 0x2c1b3c6du;
    h ^= h >> 12;
    p[i] = static_cast<std::uint8_t>(h % 255 + 1);  // never zero: zero is the poison
  }
}

// Bytes of dst [0, bytes + guard) that differ from a correct transpose (the output, then poison).
__global__ void mismatches(const std::uint8_t* dst, const std::uint8_t* src, std::uint64_t batch, std::uint64_t rows,
                           std::uint64_t cols, std::uint64_t es, std::uint64_t guard, unsigned long long* count) {
  const std::uint64_t bytes = batch * rows * cols * es, per = rows * cols;
  unsigned long long bad = 0;
  for (std::uint64_t j = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; j < bytes + guard;
       j += std::uint64_t{gridDim.x} * blockDim.x) {
    std::uint8_t want = 0;
    if (j < bytes) {
      const std::uint64_t e = j / es, m = e / per, k = e % per;  // k = c x rows + r
      want = src[(m * per + (k % rows) * cols + k / rows) * es + j % es];
    }
    bad += dst[j] != want;
  }
  if (bad != 0) atomicAdd(count, bad);
}

struct timer {
  std::uint8_t* flush = nullptr;
  std::size_t flush_bytes = 0;
  cudaEvent_t a{}, b{};
  unsigned pattern = 0;
  timer() {
    int l2 = 0;
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    flush_bytes = 2 * static_cast<std::size_t>(l2);
    CHECK(cudaMalloc(&flush, flush_bytes));
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
  }
  // Milliseconds of one cold launch of f (L2 flushed first).
  template <class F>
  float cold(F&& f) {
    CHECK(cudaMemsetAsync(flush, static_cast<int>(++pattern & 0xff), flush_bytes));
    CHECK(cudaEventRecord(a));
    f();
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
  }
};

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0f : v[v.size() / 2];
}

std::vector<std::uint64_t> default_sides() {
  std::vector<std::uint64_t> s;
  for (std::uint64_t i = 1; i <= 64; ++i) s.push_back(i);
  for (std::uint64_t p = 128; p <= 65536; p *= 2) s.push_back(p);
  for (std::uint64_t p : {67,   97,   127,  131,  251,  257,  509,   521,   1021,  1031,
                          2039, 2053, 4093, 4099, 8191, 8209, 16381, 16411, 32749, 65521}) {
    s.push_back(p);
  }
  std::sort(s.begin(), s.end());
  return s;
}

std::vector<std::uint64_t> parse_list(const char* text) {
  std::vector<std::uint64_t> v;
  for (const char* p = text; *p != 0;) {
    char* end = nullptr;
    v.push_back(std::strtoull(p, &end, 10));
    p = *end == ',' ? end + 1 : end;
    if (end == p && *p != 0) break;
  }
  return v;
}

// Near the few paths' thresholds: worth timing the other path too.
bool near_threshold(std::uint64_t rows, std::uint64_t cols, std::uint64_t es) {
  const std::uint64_t shorter = std::min(rows, cols), matrix = rows * cols * es;
  return (shorter >= 17 && shorter <= 128) || (matrix >= 1024 && matrix <= 16384);
}

}  // namespace

int main(int argc, char** argv) {
  const char* out_path = "transpose_shapes.csv";
  double budget_s = 150;
  int samples = 3;
  bool crossover = false;
  std::vector<std::uint64_t> elem_sizes{1, 2, 4, 8}, sides = default_sides();
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : "";
    if (a == "--out") {
      out_path = v, ++i;
    } else if (a == "--budget") {
      budget_s = std::atof(v), ++i;
    } else if (a == "--samples") {
      samples = std::max(1, std::atoi(v)), ++i;
    } else if (a == "--es") {
      elem_sizes = parse_list(v), ++i;
    } else if (a == "--sides") {
      sides = parse_list(v), ++i;
    } else if (a == "--crossover") {
      crossover = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--out CSV] [--budget S] [--samples N] [--es 1,2,4,8] [--sides ...] [--crossover]\n",
                   argv[0]);
      return 2;
    }
  }
  constexpr std::uint64_t min_matrix_bytes = 32ull << 20, max_bytes = 256ull << 20, guard = 64;
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::uint8_t *src = nullptr, *dst = nullptr;
  unsigned long long* count = nullptr;
  CHECK(cudaMalloc(&src, max_bytes + 2 * min_matrix_bytes));
  CHECK(cudaMalloc(&dst, max_bytes + 2 * min_matrix_bytes + guard));
  CHECK(cudaMalloc(&count, sizeof *count));
  fill<<<4096, 256>>>(src, max_bytes + 2 * min_matrix_bytes, 12345u);
  CHECK(cudaGetLastError());
  timer tm;
  const memlab::copy_device dev{prop.multiProcessorCount, prop.maxThreadsPerMultiProcessor, prop.major};

  FILE* out = std::fopen(out_path, "w");
  if (out == nullptr) {
    std::perror(out_path);
    return 2;
  }
  std::fprintf(out, "# memlab::transpose against cudaMemcpyAsync of the same bytes, cold medians of %d samples\n",
               samples);
  std::fprintf(out, "# device: %s (%d SMs), L2 %d bytes\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize);
  std::fprintf(out,
               "elem_size,rows,cols,batch,bytes_moved,path,unit,transpose_ms,copy_ms,fraction,gbps,verified,alt_path,"
               "alt_ms,alt_fraction\n");

  // Pairs by their shorter side, then their longer: a budget cut loses large x large first.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  for (const auto r : sides)
    for (const auto c : sides) pairs.emplace_back(r, c);
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& x, const auto& y) {
    return std::make_pair(std::min(x.first, x.second), std::max(x.first, x.second)) <
           std::make_pair(std::min(y.first, y.second), std::max(y.first, y.second));
  });
  const auto t0 = std::chrono::steady_clock::now();
  int done = 0, cut = 0, wrong = 0, skipped = 0;
  for (const auto& [rows, cols] : pairs) {
    for (const std::uint64_t es : elem_sizes) {
      const std::uint64_t matrix = rows * cols * es;
      if (matrix > max_bytes) {
        ++skipped;
        continue;
      }
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > budget_s) {
        ++cut;
        continue;
      }
      const std::uint64_t batch = (min_matrix_bytes + matrix - 1) / matrix, bytes = batch * matrix;
      const auto d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
      const memlab::transpose_plan plan = memlab::plan_transpose(d, s, batch, rows, cols, es, dev);
      // Verify.
      CHECK(cudaMemset(dst, 0, bytes + guard));
      CHECK(cudaMemset(count, 0, sizeof *count));
      CHECK(memlab::launch_transpose(plan, dst, src));
      mismatches<<<2048, 256>>>(dst, src, batch, rows, cols, es, guard, count);
      CHECK(cudaGetLastError());
      unsigned long long bad = 0;
      CHECK(cudaMemcpy(&bad, count, sizeof bad, cudaMemcpyDeviceToHost));
      wrong += bad != 0;
      // Time, interleaved with the copy.
      std::vector<float> t_tr, t_cp;
      for (int k = 0; k < samples; ++k) {
        t_tr.push_back(tm.cold([&] { CHECK(memlab::launch_transpose(plan, dst, src)); }));
        t_cp.push_back(tm.cold([&] { CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); }));
      }
      const float tr = median(t_tr), cp = median(t_cp);
      // The other path, near the thresholds.
      std::string alt_path;
      float alt = 0;
      if (crossover && near_threshold(rows, cols, es) && plan.path != memlab::transpose_path::copy) {
        using memlab::transpose_path;
        memlab::transpose_plan other = memlab::plan_transpose_tiled(d, s, batch, rows, cols, es, dev);
        if (memlab::is_tiled(plan.path)) {  // the few path that fits: small matrices, else the shorter side
          const transpose_path shorter = cols <= rows ? transpose_path::few_cols : transpose_path::few_rows;
          const transpose_path longer = cols <= rows ? transpose_path::few_rows : transpose_path::few_cols;
          for (const transpose_path few : {transpose_path::small_matrices, shorter, longer}) {
            other = memlab::plan_transpose_few(few, d, s, batch, rows, cols, es);
            if (other.path != transpose_path::unsupported) break;
          }
        }
        if (other.path != memlab::transpose_path::unsupported && other.path != plan.path) {
          std::vector<float> t_alt;
          for (int k = 0; k < samples; ++k) {
            t_alt.push_back(tm.cold([&] { CHECK(memlab::launch_transpose(other, dst, src)); }));
          }
          alt_path = memlab::to_string(other.path);
          alt = median(t_alt);
        }
      }
      std::fprintf(out, "%llu,%llu,%llu,%llu,%llu,%s,%d,%.5f,%.5f,%.4f,%.1f,%s,%s,",
                   static_cast<unsigned long long>(es), static_cast<unsigned long long>(rows),
                   static_cast<unsigned long long>(cols), static_cast<unsigned long long>(batch),
                   static_cast<unsigned long long>(2 * bytes), memlab::to_string(plan.path), plan.unit_bytes, tr, cp,
                   cp / tr, 2.0 * bytes / (tr * 1e-3) / 1e9, bad == 0 ? "ok" : "WRONG", alt_path.c_str());
      if (alt > 0) {
        std::fprintf(out, "%.5f,%.4f\n", alt, cp / alt);
      } else {
        std::fprintf(out, ",\n");
      }
      std::fflush(out);
      ++done;
    }
  }
  std::fprintf(out, "# %d cases, %d wrong, %d cut by the %.0f s budget, %d skipped (matrix > 256 MiB)\n", done, wrong,
               cut, budget_s, skipped);
  std::fclose(out);
  std::printf("%d cases, %d wrong, %d cut by the budget, %d skipped, %.1f s\n", done, wrong, cut, skipped,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return wrong == 0 ? 0 : 1;
}
