// The layout lab's host-side model: launch policies and exact sector counts (per request and per warp),
// warp by warp in O(1) each. Host-only; held to a brute-force replay of every thread's accesses in
// tests/labs/layout/test_layout_plan.cpp.
#include <cuda/cmath>

#include <algorithm>

#include "labs/layout/layout.hpp"

namespace memlab::labs::layout {

namespace {

// Distinct sectors of the byte range [lo, hi) (0 when empty): harness/sectors.hpp's.
std::uint64_t span_sectors(std::uint64_t lo, std::uint64_t hi) { return sectors_of(byte_range{lo, hi}); }

}  // namespace

launch_policy plan(const layout_rung& r, std::size_t elem_size, std::uint64_t n) {
  if (r.whole_structures) {
    const std::uint64_t main = n / vec_points(elem_size);
    const std::uint64_t threads = main + (main * vec_points(elem_size) < n ? 1 : 0);  // + the tail's thread
    return {.threads = threads_per_cta,
            .items_per_thread = 1,
            .vec_bytes = 16,
            .grid = cuda::ceil_div(threads, threads_per_cta)};
  }
  const auto items = static_cast<int>(bytes_per_thread / static_cast<int>(elem_size));
  return {.threads = threads_per_cta,
          .items_per_thread = items,
          .vec_bytes = static_cast<int>(elem_size),
          .grid = cuda::ceil_div(n, std::uint64_t{threads_per_cta} * static_cast<std::uint64_t>(items))};
}

layout_sectors sectors_touched(const layout_rung& r, std::size_t elem_size, std::uint64_t n, std::uint64_t field) {
  layout_sectors c;
  const std::uint64_t es = elem_size;
  if (!r.whole_structures) {
    // Each warp request: 32 consecutive points e0 .. e0 + k - 1 (the full tiles and the rolled partial
    // tile alike), field f: aos elements 3 e + f (a 3-element stride is under a sector: the span
    // counts), soa elements f n + e; the stores out[e]. Requests of a warp cover disjoint points.
    for (std::uint64_t e0 = 0; e0 < n; e0 += warp_size) {
      const std::uint64_t k = std::min(warp_size, n - e0);
      const std::uint64_t ld = r.layout == point_layout::aos
                                   ? span_sectors((3 * e0 + field) * es, (3 * (e0 + k - 1) + field + 1) * es)
                                   : span_sectors((field * n + e0) * es, (field * n + e0 + k) * es);
      const std::uint64_t st = span_sectors(e0 * es, (e0 + k) * es);
      c.ld_requests += 1;
      c.st_requests += 1;
      c.ld_per_request += ld;
      c.ld_per_warp += ld;
      c.st_per_request += st;
      c.st_per_warp += st;
    }
    return c;
  }
  // aos_vec: thread j < main loads bytes [48 j, 48 j + 48) of the points as three 16-byte requests
  // (lane l of request i: bytes 48 j + 16 i .. + 15, one sector each, 32 distinct sectors per full
  // request) and stores out vector j (16 bytes); thread `main` copies points [V main, n) one at a time,
  // a request with one active lane per point, loads and stores.
  const std::uint64_t per = vec_points(es), main = n / per, tail = n - main * per;
  const std::uint64_t threads = main + (tail > 0 ? 1 : 0);
  for (std::uint64_t w0 = 0; w0 < threads; w0 += warp_size) {
    const std::uint64_t w1 = std::min(w0 + warp_size, main);   // vector threads of this warp: [w0, w1)
    std::uint64_t ld_lo = 0, ld_hi = 0, st_lo = 0, st_hi = 0;  // this warp's vector bytes
    if (w1 > w0) {
      for (std::uint64_t i = 0; i < 3; ++i) {
        // Lane pieces 16 bytes long, 48 apart, 16-byte aligned: each in one sector, no two in the same.
        c.ld_requests += 1;
        c.ld_per_request += w1 - w0;
      }
      c.st_requests += 1;
      c.st_per_request += span_sectors(16 * w0, 16 * w1);
      ld_lo = 48 * w0;
      ld_hi = 48 * w1;
      st_lo = 16 * w0;
      st_hi = 16 * w1;
    }
    std::uint64_t tail_ld_lo = 0, tail_ld_hi = 0, tail_st_lo = 0, tail_st_hi = 0;
    if (tail > 0 && main >= w0 && main < w0 + warp_size) {  // this warp holds the tail's thread
      for (std::uint64_t e = main * per; e < n; ++e) {
        c.ld_requests += 1;
        c.ld_per_request += 1;
        c.st_requests += 1;
        c.st_per_request += 1;
      }
      tail_ld_lo = (3 * main * per + field) * es;
      tail_ld_hi = (3 * (n - 1) + field + 1) * es;
      tail_st_lo = main * per * es;
      tail_st_hi = n * es;
    }
    // Per warp: the union of its vector bytes and its tail's bytes (adjacent ranges: one span each
    // when both exist, sharing at most a boundary sector).
    const auto unite = [](std::uint64_t a0, std::uint64_t a1, std::uint64_t b0, std::uint64_t b1) {
      return sectors_of(byte_range{a0, a1}, byte_range{b0, b1});
    };
    c.ld_per_warp += unite(ld_lo, ld_hi, tail_ld_lo, tail_ld_hi);
    c.st_per_warp += unite(st_lo, st_hi, tail_st_lo, tail_st_hi);
  }
  return c;
}

}  // namespace memlab::labs::layout
