// memlab::transpose over a grid of shapes, each against a copy of the same bytes (cudaMemcpyAsync D2D) in
// the same process: the data of the "fraction of a copy" heat map (docs/labs/transpose.md, every shape;
// docs/notes/transpose_skinny.md). Not part of the build; tools/gpu/measure_transpose_heatmap.sh builds and runs
// it on the GPU machine:
//   nvcc -O3 -std=c++20 -arch=sm_90 --expt-relaxed-constexpr -Iinclude \
//       tools/studies/transpose_shapes_bench.cu -o /tmp/tsb
//   /tmp/tsb --out shapes.csv [--budget 150] [--samples 3] [--es 1,2,4,8] [--sides ...] [--crossover]
//            [--progress FILE] [--resume]
//
// The grid (rows and cols in 1..64 and powers of two and primes up to 2^16, and the transposes of each):
// every side in 1..64, the powers of two 128..65536, and 20 primes next to them (67 .. 65521) instead of all
// 6542 primes below 2^16: 94 sides, every pair (rows, cols) of them, each element size. A case moves at
// least 64 MiB: `batch` matrices of rows x cols, batch = ceil(32 MiB / matrix bytes); one matrix above
// 4 GiB is skipped (65536 x 65536 of 2 bytes and more: the tiled paths at sizes measured elsewhere).
//
// The grid grows a side at a time: the 25 sides of a coarse grid first (1..8, 12, 16, 24, 32, 48, 64, 127,
// 128, 256, 1021, 1024, 4093, 4096, 16381, 16384, 65521, 65536), then the others in ascending order; adding
// a side runs every pair it makes with the sides already in. A budget cut therefore leaves a complete grid
// over the sides that joined (and one side part-done), never holes scattered over the map.
//
// Each case: the output poisoned (zero; the input has no zero byte), memlab::transpose_bytes (the library's
// entry point, what a user calls) run once and compared on the device element by element, plus a guard
// after the output; then `samples` cold samples of the transpose and of the copy, interleaved (the L2
// flushed before each by a 2 x L2-size memset that also covers the host's enqueueing; events around one
// launch), medians. fraction = copy median / transpose median.
// With --crossover, shapes next to the few paths' thresholds (a side of 17..128 elements, or a matrix of
// 1..16 KiB) are also timed on the path plan_transpose did not take (the tiled path where it took a few
// path, and the other way round), verified the same way first: the alt_* columns (alt_path ends in "(WRONG)"
// where its output was wrong), data for the thresholds in transpose_plan.hpp. --crossover-all does so at every
// shape (for the tiled paths: the few path whose plan fits, small matrices first, then the shorter side's).
//
// Crash tolerance (tools/gpu/measure_transpose_heatmap.sh): --progress FILE holds the case being run ("running
// ES ROWS COLS BATCH") and "done" at the end; --resume appends to --out and skips the cases already in it,
// so a run that a CUDA error stopped can go on after the case that stopped it. Exit: 0 every case verified,
// 1 a case failed verification, or a CUDA error (then the progress file still names the case), 2 usage.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <tuple>
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

// Elements of dst that differ from a correct transpose of src (batch matrices of rows x cols elements T).
// Index arithmetic in I: 32-bit wherever the whole batch, plus one stride of the grid, stays below 2^32
// elements (divisions by a run-time value cost a fraction of the 64-bit ones).
template <class T, class I>
__global__ void mismatches(const T* dst, const T* src, I n, I rows, I cols, unsigned long long* count) {
  const I per = rows * cols;
  unsigned long long bad = 0;
  for (I e = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; e < n;
       e += static_cast<I>(gridDim.x) * blockDim.x) {
    const I m = e / per, k = e - m * per;  // k = c x rows + r
    const I c = k / rows, r = k - c * rows;
    bad += dst[e] != src[m * per + r * cols + c];
  }
  if (bad != 0) atomicAdd(count, bad);
}

// Bytes of the guard after the output that are no longer the poison (zero).
__global__ void guard_touched(const std::uint8_t* guard, unsigned n, unsigned long long* count) {
  for (unsigned i = threadIdx.x; i < n; i += blockDim.x) {
    if (guard[i] != 0) atomicAdd(count, 1ull);
  }
}

template <class T>
void launch_mismatches(const void* dst, const void* src, std::uint64_t n, std::uint64_t rows, std::uint64_t cols,
                       unsigned long long* count) {
  const auto* d = static_cast<const T*>(dst);
  const auto* s = static_cast<const T*>(src);
  constexpr std::uint64_t grid_threads = 4096 * 256;  // e + grid_threads must not wrap
  if (n < (std::uint64_t{1} << 32) - grid_threads) {
    mismatches<T, std::uint32_t><<<4096, 256>>>(d, s, static_cast<std::uint32_t>(n), static_cast<std::uint32_t>(rows),
                                                static_cast<std::uint32_t>(cols), count);
  } else {
    mismatches<T, std::uint64_t><<<4096, 256>>>(d, s, n, rows, cols, count);
  }
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
  // Milliseconds of one cold launch of f (L2 flushed first; the flush, ~35 us on an H100, keeps the GPU busy
  // while the host enqueues the start event and the launch, so the host's cost is not timed).
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

// The sides in the order they join the grid: a coarse grid first, then every other side ascending.
std::vector<std::uint64_t> default_sides() {
  std::vector<std::uint64_t> order{1,  2,   3,   4,   5,    6,    7,    8,    12,    16,    24,    32,   48,
                                   64, 127, 128, 256, 1021, 1024, 4093, 4096, 16381, 16384, 65521, 65536};
  std::vector<std::uint64_t> rest;
  for (std::uint64_t i = 1; i <= 64; ++i) rest.push_back(i);
  for (std::uint64_t p = 128; p <= 65536; p *= 2) rest.push_back(p);
  for (std::uint64_t p : {67,   97,   127,  131,  251,  257,  509,   521,   1021,  1031,
                          2039, 2053, 4093, 4099, 8191, 8209, 16381, 16411, 32749, 65521}) {
    rest.push_back(p);
  }
  std::sort(rest.begin(), rest.end());
  for (const auto s : rest) {
    if (std::find(order.begin(), order.end(), s) == order.end()) order.push_back(s);
  }
  return order;
}

std::vector<std::uint64_t> parse_list(const char* text) {
  std::vector<std::uint64_t> v;
  for (const char* p = text; *p != 0;) {
    char* end = nullptr;
    v.push_back(std::strtoull(p, &end, 10));
    if (end == p) break;
    p = *end == ',' ? end + 1 : end;
  }
  return v;
}

// Near the few paths' thresholds: worth timing the other path too.
bool near_threshold(std::uint64_t rows, std::uint64_t cols, std::uint64_t es) {
  const std::uint64_t shorter = std::min(rows, cols), matrix = rows * cols * es;
  return (shorter >= 17 && shorter <= 128) || (matrix >= 1024 && matrix <= 16384);
}

using cell = std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>;  // elem_size, rows, cols

// The cells already in a CSV this bench wrote (--resume).
std::set<cell> cells_in(const char* path) {
  std::set<cell> done;
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return done;
  char line[1024];
  while (std::fgets(line, sizeof line, f) != nullptr) {
    unsigned long long es = 0, rows = 0, cols = 0;
    if (line[0] != '#' && std::sscanf(line, "%llu,%llu,%llu,", &es, &rows, &cols) == 3) done.insert({es, rows, cols});
  }
  std::fclose(f);
  return done;
}

void say_progress(FILE* f, const char* text) {
  if (f == nullptr) return;
  std::rewind(f);
  std::fprintf(f, "%-64s\n", text);  // fixed width: a shorter line leaves no tail of the last
  std::fflush(f);
}

}  // namespace

int main(int argc, char** argv) {
  const char* out_path = "transpose_shapes.csv";
  const char* progress_path = nullptr;
  double budget_s = 150;
  int samples = 3;
  bool crossover = false, crossover_all = false, resume = false;
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
    } else if (a == "--progress") {
      progress_path = v, ++i;
    } else if (a == "--crossover") {
      crossover = true;
    } else if (a == "--crossover-all") {
      crossover = crossover_all = true;
    } else if (a == "--resume") {
      resume = true;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--out CSV] [--budget S] [--samples N] [--es 1,2,4,8] [--sides ...] [--crossover] "
                   "[--crossover-all] [--progress FILE] [--resume]\n",
                   argv[0]);
      return 2;
    }
  }
  for (const auto es : elem_sizes) {
    if (es != 1 && es != 2 && es != 4 && es != 8) {
      std::fprintf(stderr, "--es: element sizes are 1, 2, 4 or 8\n");
      return 2;
    }
  }
  if (sides.empty() || std::find(sides.begin(), sides.end(), 0) != sides.end()) {
    std::fprintf(stderr, "--sides: a list of positive integers\n");
    return 2;
  }
  // A case moves 2 x batch x matrix bytes >= 64 MiB; one matrix at most max_matrix_bytes.
  constexpr std::uint64_t min_matrix_bytes = 32ull << 20, max_matrix_bytes = 4ull << 30, guard = 64;
  const std::set<cell> done_before = resume ? cells_in(out_path) : std::set<cell>{};
  FILE* progress = progress_path != nullptr ? std::fopen(progress_path, "w") : nullptr;
  if (progress_path != nullptr && progress == nullptr) {
    std::perror(progress_path);
    return 2;
  }

  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  // The largest batch of matrices the grid asks for: a matrix up to the cap, or < 2 x min_matrix_bytes.
  std::uint64_t largest = 0;
  for (const auto r : sides)
    for (const auto c : sides)
      for (const auto es : elem_sizes) {
        const std::uint64_t m = r * c * es;
        if (m <= max_matrix_bytes) largest = std::max(largest, (min_matrix_bytes + m - 1) / m * m);
      }
  std::uint8_t *src = nullptr, *dst = nullptr;
  unsigned long long* count = nullptr;
  CHECK(cudaMalloc(&src, largest));
  CHECK(cudaMalloc(&dst, largest + guard));
  CHECK(cudaMalloc(&count, sizeof *count));
  fill<<<4096, 256>>>(src, largest, 12345u);
  CHECK(cudaGetLastError());
  timer tm;
  const memlab::copy_device dev{prop.multiProcessorCount, prop.maxThreadsPerMultiProcessor, prop.major};

  const bool append = resume && !done_before.empty();
  FILE* out = std::fopen(out_path, append ? "a" : "w");
  if (out == nullptr) {
    std::perror(out_path);
    return 2;
  }
  if (!append) {
    std::fprintf(out,
                 "# memlab::transpose_bytes against cudaMemcpyAsync of the same bytes, cold medians of %d samples, "
                 "every output verified first\n",
                 samples);
    std::fprintf(out, "# device: %s (%d SMs), L2 %d bytes\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize);
    std::fprintf(out,
                 "elem_size,rows,cols,batch,bytes_moved,path,unit,transpose_ms,copy_ms,fraction,gbps,verified,"
                 "alt_path,alt_ms,alt_fraction\n");
  } else {
    std::fprintf(out, "# resumed: %zu cells already here\n", done_before.size());
  }
  std::fflush(out);

  // The grid, a side at a time (default_sides: coarse first): the pairs side i makes with sides 0..i.
  std::vector<std::pair<std::uint64_t, std::uint64_t>> pairs;
  for (std::size_t i = 0; i < sides.size(); ++i) {
    for (std::size_t j = 0; j <= i; ++j) {
      pairs.emplace_back(sides[i], sides[j]);
      if (j != i) pairs.emplace_back(sides[j], sides[i]);
    }
  }
  const auto t0 = std::chrono::steady_clock::now();
  int done = 0, cut = 0, wrong = 0, skipped = 0;
  for (const auto& [rows, cols] : pairs) {
    for (const std::uint64_t es : elem_sizes) {
      const std::uint64_t matrix = rows * cols * es;
      if (matrix > max_matrix_bytes) {
        ++skipped;
        continue;
      }
      if (done_before.count({es, rows, cols}) != 0) continue;
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > budget_s) {
        ++cut;
        continue;
      }
      const std::uint64_t batch = (min_matrix_bytes + matrix - 1) / matrix, bytes = batch * matrix;
      char what[96];
      std::snprintf(what, sizeof what, "running %llu %llu %llu %llu", static_cast<unsigned long long>(es),
                    static_cast<unsigned long long>(rows), static_cast<unsigned long long>(cols),
                    static_cast<unsigned long long>(batch));
      say_progress(progress, what);
      const auto d = reinterpret_cast<std::uintptr_t>(dst), s = reinterpret_cast<std::uintptr_t>(src);
      const memlab::transpose_plan plan = memlab::plan_transpose(d, s, batch, rows, cols, es, dev);
      const auto run = [&] { CHECK(memlab::transpose_bytes(dst, src, batch, rows, cols, es)); };
      // Verify: every element, and the guard after the output untouched.
      const std::uint64_t n = batch * rows * cols;
      const auto mismatched = [&](auto&& launch) {
        CHECK(cudaMemset(dst, 0, bytes + guard));
        CHECK(cudaMemset(count, 0, sizeof *count));
        launch();
        switch (es) {
          case 1: launch_mismatches<std::uint8_t>(dst, src, n, rows, cols, count); break;
          case 2: launch_mismatches<std::uint16_t>(dst, src, n, rows, cols, count); break;
          case 4: launch_mismatches<std::uint32_t>(dst, src, n, rows, cols, count); break;
          default: launch_mismatches<std::uint64_t>(dst, src, n, rows, cols, count); break;
        }
        guard_touched<<<1, 64>>>(dst + bytes, static_cast<unsigned>(guard), count);
        CHECK(cudaGetLastError());
        unsigned long long bad = 0;
        CHECK(cudaMemcpy(&bad, count, sizeof bad, cudaMemcpyDeviceToHost));
        return bad;
      };
      const unsigned long long bad = mismatched(run);
      wrong += bad != 0;
      // Time, interleaved with the copy.
      std::vector<float> t_tr, t_cp;
      for (int k = 0; k < samples; ++k) {
        t_tr.push_back(tm.cold(run));
        t_cp.push_back(tm.cold([&] { CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); }));
      }
      const float tr = median(t_tr), cp = median(t_cp);
      // The other path, near the thresholds.
      std::string alt_path;
      float alt = 0;
      if (crossover && (crossover_all || near_threshold(rows, cols, es)) && plan.path != memlab::transpose_path::copy) {
        using memlab::transpose_path;
        memlab::transpose_plan other = memlab::detail::plan_transpose_tiled(d, s, batch, rows, cols, es, dev);
        if (memlab::is_tiled(plan.path)) {  // the few path that fits: small matrices, else the shorter side
          const transpose_path shorter = cols <= rows ? transpose_path::few_cols : transpose_path::few_rows;
          const transpose_path longer = cols <= rows ? transpose_path::few_rows : transpose_path::few_cols;
          for (const transpose_path few : {transpose_path::small_matrices, shorter, longer}) {
            other = memlab::detail::plan_transpose_few(few, d, s, batch, rows, cols, es);
            if (other.path != transpose_path::unsupported) break;
          }
        }
        // launch_transpose refuses (cudaErrorInvalidValue, nothing launched) a plan its checks do not pass.
        const bool launches = other.path != memlab::transpose_path::unsupported && other.path != plan.path &&
                              memlab::launch_transpose(other, dst, src) == cudaSuccess;
        (void)cudaGetLastError();  // a refused launch leaves nothing for the next check to trip on
        if (launches) {
          const auto run_other = [&] { CHECK(memlab::launch_transpose(other, dst, src)); };
          alt_path = memlab::to_string(other.path);
          if (mismatched(run_other) != 0) alt_path += "(WRONG)";  // verified too: its time stays, marked
          std::vector<float> t_alt;
          for (int k = 0; k < samples; ++k) {
            t_alt.push_back(tm.cold(run_other));
          }
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
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(out, "# %d cases, %d wrong, %d cut by the %.0f s budget, %d skipped (matrix > 4 GiB), %.1f s\n", done,
               wrong, cut, budget_s, skipped, took);
  std::fclose(out);
  say_progress(progress, "done");
  std::printf("%d cases, %d wrong, %d cut by the budget, %d skipped, %.1f s\n", done, wrong, cut, skipped, took);
  return wrong == 0 ? 0 : 1;
}
