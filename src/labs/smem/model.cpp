// The smem lab's host-side model: addresses, regions, and the closed-form wavefront counts of every
// request and launch. Host-only; tested against the bank simulator (harness/bank_model.hpp), request
// by request and launch by launch, in tests/labs/smem/test_smem_model.cpp.
//
// The closed forms. A request of `width` bytes per lane is served in groups of 128 / width lanes
// (all 32 for 4 bytes, half-warps for 8, quarter-warps for 16); in a group, the lanes that fall in
// the same bank on different words take one wavefront each. Lane l's element is l*s + c (c the same
// for every lane): for 4-byte elements its bank is (l*s + c) mod 32, and lanes l, l' share one iff
// l = l' mod 32 / gcd(s, 32): B = 32 / gcd(s, 32) distinct banks, and `m` consecutive lanes put at
// most ceil(m / B) in one of them. For 8 (16) bytes the lane covers a pair (quad) of banks given by
// the element mod 16 (mod 8): B = 16 / gcd(s, 16) (8 / gcd(s, 8)) per half (quarter) warp. No two
// lanes ever touch the same element, so no broadcast. The padded (33 words per row) and swizzled
// (column xor row) patterns put the 32 lanes in 32 banks: one wavefront.
#include <cuda/cmath>

#include <algorithm>
#include <numeric>
#include <string>

#include "labs/smem/smem.hpp"

namespace memlab::labs::smem {

namespace {

// The load rungs' regions are whole 1 KiB blocks (a CTA's 256 threads x 4 bytes), so that every
// thread of the fill loop runs the same number of iterations: each of its stores is then one full
// 32-lane request. With a ragged last block, warps whose lanes ran different trip counts issued
// an extra partial store request (the compiler peels the unrolled loop's remainder): ncu counted
// 10 fill requests per CTA where a plain loop makes 9 (load_stride at stride 8, H100).
constexpr std::uint64_t fill_round = std::uint64_t{threads_per_cta} * 4;

// Wavefronts of `active` lanes (from lane 0) accessing elements l*s + c of `width` bytes.
int strided_wavefronts(std::uint64_t stride, int width, int active) {
  const int group = 128 / width;                                              // lanes served together
  const std::uint64_t residues = 32 / static_cast<std::uint64_t>(width / 4);  // element mod this -> banks
  const std::uint64_t banks = residues / std::gcd(stride, residues);          // distinct bank sets per group
  int total = 0;
  for (int g0 = 0; g0 < lanes; g0 += group) {
    const int m = std::clamp(active - g0, 0, group);
    total += static_cast<int>(cuda::ceil_div(static_cast<std::uint64_t>(m), banks));
  }
  return total;
}

}  // namespace

std::uint32_t address_of(const smem_rung& r, std::uint64_t stride, int lane, int k) {
  const auto l = static_cast<std::uint32_t>(lane), s = static_cast<std::uint32_t>(stride);
  // The loads walk the columns by their kernel's pattern (smem.hpp), from a region at 0; a store (and the
  // copies) keeps its one word, l*stride.
  const auto load = [&](auto pattern) {
    return decltype(pattern)::at(decltype(pattern)::lane_base(0, l, s), k % columns);
  };
  if (!r.load) return l * s * 4;
  switch (r.pattern) {
    case address_pattern::padded: return load(padded_pattern{});
    case address_pattern::swizzled: return load(swizzled_pattern{});
    case address_pattern::strided: break;
  }
  return r.access_bytes == 16  ? load(strided_pattern<16>{})
         : r.access_bytes == 8 ? load(strided_pattern<8>{})
                               : load(strided_pattern<4>{});
}

std::uint64_t region_bytes(const smem_rung& r, std::uint64_t stride) {
  const auto w = static_cast<std::uint64_t>(r.access_bytes);
  switch (r.pattern) {
    case address_pattern::padded: return cuda::round_up(32 * 33 * 4, fill_round);
    case address_pattern::swizzled: return 32 * 32 * 4;
    case address_pattern::strided:
      if (r.load) return cuda::round_up((31 * stride + columns) * w, fill_round);
      // store_stride: each warp its own 32 x stride words (8 warps: 256 x stride words); the copies:
      // 256 x stride words per shared array.
      static_assert(warps_per_cta * lanes == threads_per_cta);
      return static_cast<std::uint64_t>(std::max(r.copy_arrays, 1)) * threads_per_cta * stride * 4;
  }
  return 0;
}

std::uint64_t fill_words(const smem_rung& r, std::uint64_t stride) { return r.load ? region_bytes(r, stride) / 4 : 0; }

int request_wavefronts(const smem_rung& r, std::uint64_t stride, int active) {
  if (active <= 0) return 0;
  if (r.pattern != address_pattern::strided) return 1;
  return strided_wavefronts(stride, r.access_bytes, std::min(active, lanes));
}

std::uint64_t tasks_of(std::uint64_t n) { return cuda::ceil_div(n, lanes); }

launch_counts predict(const smem_rung& r, std::uint64_t s, std::uint64_t n, std::uint64_t grid) {
  launch_counts c;
  const std::uint64_t tasks = tasks_of(n), full = n / lanes;
  const int rem = static_cast<int>(n % lanes);
  // Wavefronts of one request by every warp (task) once: full warps, then the partial one.
  const auto per_warp = [&]() {
    return full * static_cast<std::uint64_t>(request_wavefronts(r, s, lanes)) +
           static_cast<std::uint64_t>(request_wavefronts(r, s, rem));
  };
  const auto p = static_cast<std::uint64_t>(accesses_per_thread);
  const auto w = static_cast<std::uint64_t>(r.access_bytes);
  if (r.load) {
    const std::uint64_t f = fill_words(r, s), fill_requests = grid * cuda::ceil_div(f, lanes);
    c.ld_requests = tasks * p;
    c.ld_wavefronts = p * per_warp();
    c.st_requests = fill_requests;  // 32 consecutive words each: one wavefront
    c.st_wavefronts = fill_requests;
    c.bytes = n * p * w + grid * f * 4;
  } else if (is_bank_bound(r)) {  // store_stride
    c.st_requests = tasks * p;
    c.st_wavefronts = p * per_warp();
    c.ld_requests = tasks;  // each lane reads its word back once
    c.ld_wavefronts = per_warp();
    c.bytes = n * p * 4 + n * 4;
  } else {
    const auto copies = static_cast<std::uint64_t>(r.copy_arrays);  // shared arrays each element passes
    c.st_requests = copies * tasks;
    c.st_wavefronts = copies * per_warp();
    c.ld_requests = copies * tasks;
    c.ld_wavefronts = copies * per_warp();
    c.bytes = 2 * copies * n * 4;
  }
  return c;
}

std::optional<std::string> stride_rule(const variant& v, std::uint64_t stride) {
  if (stride < 1 || stride > max_stride) {
    return "--lane-stride " + std::to_string(stride) + " is outside 1.." + std::to_string(max_stride);
  }
  if (v.traits_as<smem_rung>().pattern != address_pattern::strided && stride != 32) {
    return std::string(v.name) +
           " is the stride-32 pattern (a 32 x 32 tile read by columns) made conflict-free: run it at --lane-stride 32";
  }
  return std::nullopt;
}

std::uint64_t grid_of_case(const smem_rung& r, std::uint64_t n, std::uint64_t resident) {
  if (!is_bank_bound(r)) return cuda::ceil_div(n, threads_per_cta);
  return std::min(std::max<std::uint64_t>(resident, 1), cuda::ceil_div(tasks_of(n), warps_per_cta));
}

launch_policy plan(const smem_rung& r, std::uint64_t /*n*/, std::uint64_t grid) {
  return {.threads = threads_per_cta,
          .items_per_thread = is_bank_bound(r) ? accesses_per_thread : 1,
          .vec_bytes = r.access_bytes,
          .grid = grid};
}

}  // namespace memlab::labs::smem
