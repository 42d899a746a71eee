// Experiment for docs/notes/transpose_skinny.md section 6: the host time of memlab::plan_transpose, which
// memlab::transpose_bytes runs on every call (the GPU may wait for it: a 64 MiB transpose takes ~25-50 us on an
// H100). Pure host code, no GPU:
//
//   g++ -O3 -std=c++20 -Iinclude tools/studies/transpose_plan_time.cpp -o /tmp/tpt && /tmp/tpt [reps]
//
// Over the heat map's grid (tools/studies/transpose_shapes_bench.cu: rows and cols in 1..64, the powers of two
// 128..65536 and 20 primes next to them, every ordered pair, 1-, 2-, 4- and 8-byte elements, a batch making up
// 32 MiB a buffer, cudaMalloc-aligned pointers), two ways, microseconds per plan (each shape's median of `reps`):
//   first   each call a shape other than the last 35k (the grid in order, `reps` times): the few paths' layout
//           search runs every time (the memo's 64 slots hold none of them)
//   again   the same job planned back to back, as a loop of transposes does: from the memo
// Median, 99th percentile and maximum over the shapes, overall and per element size and few path, and the
// slowest shapes.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "memlab/transpose_plan.hpp"

namespace {

struct shape {
  std::uint64_t batch, rows, cols, es;
  std::string group;  // "es path"
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[std::min<std::size_t>(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  std::vector<std::uint64_t> sides;
  for (std::uint64_t i = 1; i <= 64; ++i) sides.push_back(i);
  for (std::uint64_t p = 128; p <= 65536; p *= 2) sides.push_back(p);
  for (const std::uint64_t p : {67,   97,   127,  131,  251,  257,  509,   521,   1021,  1031,
                                2039, 2053, 4093, 4099, 8191, 8209, 16381, 16411, 32749, 65521}) {
    sides.push_back(p);
  }
  std::sort(sides.begin(), sides.end());
  sides.erase(std::unique(sides.begin(), sides.end()), sides.end());
  const std::uintptr_t src = std::uintptr_t{0x7f} << 40, dst = src + (std::uintptr_t{5} << 30);  // 256-byte aligned
  const memlab::copy_device h100{132, 2048, 9};
  std::vector<shape> grid;
  for (const auto r : sides) {
    for (const auto c : sides) {
      for (const std::uint64_t es : {1, 2, 4, 8}) {
        const std::uint64_t matrix = r * c * es;
        if (matrix > (std::uint64_t{4} << 30)) continue;  // the bench's cap
        const std::uint64_t batch = ((std::uint64_t{32} << 20) + matrix - 1) / matrix;
        const memlab::transpose_plan p = memlab::plan_transpose(dst, src, batch, r, c, es, h100);
        grid.push_back({batch, r, c, es, std::to_string(es) + "-byte " + memlab::to_string(p.path)});
      }
    }
  }
  volatile std::uint32_t sink = 0;
  const auto time_one = [&](const shape& x) {
    const auto t0 = std::chrono::steady_clock::now();
    const memlab::transpose_plan p = memlab::plan_transpose(dst, src, x.batch, x.rows, x.cols, x.es, h100);
    const auto t1 = std::chrono::steady_clock::now();
    sink = sink + p.run_pitch + p.smem_swizzle + p.smem_swizzle_shift;  // the layout: none of the search is dead code
    return std::chrono::duration<double, std::micro>(t1 - t0).count();
  };
  std::vector<std::vector<double>> first(grid.size()), again(grid.size());
  for (int k = 0; k < reps; ++k) {
    for (std::size_t i = 0; i < grid.size(); ++i) first[i].push_back(time_one(grid[i]));
  }
  for (std::size_t i = 0; i < grid.size(); ++i) {
    time_one(grid[i]);
    for (int k = 0; k < reps; ++k) again[i].push_back(time_one(grid[i]));
  }
  for (const auto& [name, t] :
       {std::pair<const char*, const std::vector<std::vector<double>>*>{"first", &first}, {"again", &again}}) {
    std::vector<double> all;
    std::map<std::string, std::vector<double>> by;
    for (std::size_t i = 0; i < grid.size(); ++i) {
      all.push_back(quantile((*t)[i], 0.5));
      by[grid[i].group].push_back(all.back());
    }
    std::printf("%s: %zu shapes, us per plan: median %.3f, p99 %.3f, max %.3f\n", name, all.size(), quantile(all, 0.5),
                quantile(all, 0.99), quantile(all, 1.0));
    for (const auto& [group, v] : by) {
      if (group.find("few_rows") == std::string::npos && group.find("small_matrices") == std::string::npos) continue;
      std::printf("  %-22s %5zu shapes: median %.3f, p99 %.3f, max %.3f\n", group.c_str(), v.size(), quantile(v, 0.5),
                  quantile(v, 0.99), quantile(v, 1.0));
    }
    std::vector<std::pair<double, std::size_t>> slow;
    for (std::size_t i = 0; i < all.size(); ++i) slow.emplace_back(all[i], i);
    std::sort(slow.rbegin(), slow.rend());
    for (std::size_t w = 0; w < 3 && w < slow.size(); ++w) {
      const shape& x = grid[slow[w].second];
      std::printf("  slowest: %.2f us, %llu x %llu x %llu, %s\n", slow[w].first,
                  static_cast<unsigned long long>(x.batch), static_cast<unsigned long long>(x.rows),
                  static_cast<unsigned long long>(x.cols), x.group.c_str());
    }
  }
  return sink == 0xffffffffu ? 1 : 0;
}
