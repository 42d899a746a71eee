// The smem lab's host-side model (model.cpp): which shared-memory word every lane of every request
// touches, and the closed-form count of wavefronts (passes through the 32 banks) each request and
// each whole launch takes. Tested against the lane-by-lane simulator (harness/bank_model.hpp) in
// tests/labs/smem/test_smem_model.cpp; every result row carries it as hardware_bytes (wavefronts x
// 128 B). The lab itself (kernels, reference, table): smem.cu.
//
// The cases. n counts threads (lanes), 32 to a warp; a warp with fewer than 32 (the last, when n is
// not a multiple of 32) issues partial requests from its lowest lanes.
//   The shared-memory-bound rungs (store_stride ... load_vec16): every lane makes
//   `accesses_per_thread` accesses of its width. A warp's requests are its "task" (32 lanes x
//   1024 accesses); a persistent grid of warps takes tasks g, g + warps, ... Request k of lane l:
//     load_stride, load_vec8, load_vec16   element l*stride + (k mod 32) of the CTA's region (elements
//                                          of the access width; the column k mod 32 shifts every lane
//                                          by the same banks, so each request has the same conflicts);
//     smem_padded    word l*33 + (k mod 32):  a 32 x 32 tile read by columns, rows padded to 33 words;
//     smem_swizzled  word l*32 + ((k mod 32) xor l): the same tile, columns XOR-swizzled by row;
//     store_stride  word l*stride of the warp's own region, every request (the same word: no two
//                 lanes ever write one word, and the last value stays for the check).
//   The load rungs first fill their region (whole 1 KiB blocks: 4-byte stores, 32 consecutive
//   words per request) once per CTA; store_stride reads each lane's word back once per task (one
//   4-byte load request).
//   The reference's copies (one element per thread, a CTA of 256 threads, a non-persistent grid):
//     global_strided_store  global -> word t*stride of the CTA's array -> global (t: thread in CTA);
//     smem_to_smem          the same through a second array: a shared -> shared copy, which goes
//                           through registers (LDS then STS).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "harness/lab.hpp"
#include "memlab/arch/config.cuh"

namespace memlab::labs::smem {

// Where a rung's lanes point, within the region of its CTA (or warp).
enum class address_pattern {
  strided,   // lane l: access l*stride (+ the column k mod 32 for the loads), in accesses of the rung's width
  padded,    // word l*33 + column: a 32 x 32 tile read by columns, rows padded to 33 words
  swizzled,  // word l*32 + (column xor l): the same tile, columns XOR-swizzled by row
};

// A rung, by its properties (its traits in the table): what the model below reads.
struct smem_rung {
  address_pattern pattern = address_pattern::strided;
  int access_bytes = 4;  // per lane and access: 4, 8 or 16
  bool load = false;     // reads a region it filled first; false: stores (store_stride) or copies
  // 0: shared-memory-bound (a persistent grid, accesses_per_thread accesses per lane). 1 or 2: one of
  // the reference's copies, one element per thread through that many shared arrays (2: the element
  // goes shared -> shared between them).
  int copy_arrays = 0;
};

inline constexpr int threads_per_cta = 256;
inline constexpr int warps_per_cta = threads_per_cta / 32;
inline constexpr int lanes = 32;
// Accesses per lane of a shared-memory-bound rung: 32 passes over the 32 columns. At 1024 the
// region fill (at most 16 KiB per CTA) and the write-back are under 0.5% of a task's traffic.
inline constexpr int accesses_per_thread = 1024;
inline constexpr int columns = 32;
inline constexpr std::uint64_t max_stride = 32;
inline constexpr std::uint64_t wavefront_bytes = 128;  // 32 banks x 4 bytes

// The persistent, shared-memory-bound rungs (all but the reference's copies).
constexpr bool is_bank_bound(const smem_rung& r) { return r.copy_arrays == 0; }

// ---- the load rungs' address patterns: the kernels' (smem.cu) and the host model's ---------------------------
// Each pattern gives a lane's address for column c (0..31); request k reads column k mod 32. The addresses are a
// per-lane base plus a compile-time offset, so every load is one LDS [R + imm] (swizzled: one LOP3 more). The
// host model replays them from a region at address 0 (address_of).

//   load_stride, load_vec8, load_vec16: lane l reads element l*stride + c of Width bytes.
template <int Width>
struct strided_pattern {
  static constexpr int width = Width;
  MEMLAB_HOST_DEVICE static constexpr std::uint32_t lane_base(std::uint32_t region, std::uint32_t lane,
                                                              std::uint32_t stride) {
    return region + lane * stride * Width;
  }
  MEMLAB_HOST_DEVICE static constexpr std::uint32_t at(std::uint32_t base, int c) {
    return base + static_cast<std::uint32_t>(c * Width);
  }
};

//   padded (smem_padded): the 32 x 32 tile with rows of 33 words; lane l reads row l, column c: bank (l + c) mod 32.
struct padded_pattern {
  static constexpr int width = 4;
  MEMLAB_HOST_DEVICE static constexpr std::uint32_t lane_base(std::uint32_t region, std::uint32_t lane, std::uint32_t) {
    return region + lane * 33 * 4;
  }
  MEMLAB_HOST_DEVICE static constexpr std::uint32_t at(std::uint32_t base, int c) {
    return base + static_cast<std::uint32_t>(c * 4);
  }
};

//   swizzled (smem_swizzled): the 32 x 32 tile with no padding; column c of row l is stored at column c xor l, so the
//   32 lanes reading column c hit 32 different banks. With the region 128-byte aligned, the byte
//   address region + 128 l + 4 (c xor l) is (region + 128 l + 4 l) xor 4 c: one LOP3 per load.
struct swizzled_pattern {
  static constexpr int width = 4;
  MEMLAB_HOST_DEVICE static constexpr std::uint32_t lane_base(std::uint32_t region, std::uint32_t lane, std::uint32_t) {
    return region + lane * 128 + lane * 4;
  }
  MEMLAB_HOST_DEVICE static constexpr std::uint32_t at(std::uint32_t base, int c) {
    return base ^ static_cast<std::uint32_t>(c * 4);
  }
};

// The pattern a load rung's traits name: its kernel is load_kernel<pattern_t<R>> (smem.cu), and the model's
// addresses come from the same type.
template <smem_rung R>
using pattern_t = std::conditional_t<
    R.pattern == address_pattern::padded, padded_pattern,
    std::conditional_t<R.pattern == address_pattern::swizzled, swizzled_pattern, strided_pattern<R.access_bytes>>>;

// The byte offset, from the start of the region its warp uses, of what lane `lane` touches in
// request k of a task (k < accesses_per_thread) of rung r at `stride`. For store_stride the region is
// the warp's own; for the global copies, `lane` is the thread in its CTA (0..255) and k is 0.
std::uint32_t address_of(const smem_rung& r, std::uint64_t stride, int lane, int k);

// Shared memory one CTA uses (dynamic), and the 4-byte words a load rung fills.
std::uint64_t region_bytes(const smem_rung& r, std::uint64_t stride);
std::uint64_t fill_words(const smem_rung& r, std::uint64_t stride);

// Closed forms. Wavefronts of one request of r at `stride` whose lanes 0 .. active-1 take part
// (1 <= active <= 32; for the global copies the request of any warp of the CTA), and of the
// write-back / fill requests.
int request_wavefronts(const smem_rung& r, std::uint64_t stride, int active);

// Everything one launch asks of shared memory: warp-level requests (instructions) and the
// wavefronts they take, loads and stores apart; and the bytes the lanes ask for (the fewest bytes
// the job moves: lanes x width, loads + stores).
struct launch_counts {
  std::uint64_t ld_requests = 0, ld_wavefronts = 0;
  std::uint64_t st_requests = 0, st_wavefronts = 0;
  std::uint64_t bytes = 0;
  [[nodiscard]] std::uint64_t wavefronts() const { return ld_wavefronts + st_wavefronts; }
  [[nodiscard]] std::uint64_t hardware_bytes() const { return wavefronts() * wavefront_bytes; }
};
// `grid`: CTAs launched (the load rungs fill once per CTA).
launch_counts predict(const smem_rung& r, std::uint64_t stride, std::uint64_t n, std::uint64_t grid);

// Why rung v (its traits, its name for the message) cannot run at this stride (the padded and
// swizzled patterns are the stride-32 tile only).
std::optional<std::string> stride_rule(const variant& v, std::uint64_t stride);

// Tasks (warps of 32 lanes) of n threads; CTAs of a non-persistent grid.
std::uint64_t tasks_of(std::uint64_t n);
// The grid: the bank-bound rungs as many CTAs as `resident` allows, at most one per 8 tasks; the
// global copies one CTA per 256 threads.
std::uint64_t grid_of_case(const smem_rung& r, std::uint64_t n, std::uint64_t resident);
launch_policy plan(const smem_rung& r, std::uint64_t n, std::uint64_t grid);

// The CPU reference: lane `lane`'s sum (mod 2^32) of the 4-byte words it loads in one task, from a
// region whose word i is word(i); and the value a store_stride lane leaves in its word.
template <class Word>
std::uint32_t load_sum(const smem_rung& r, std::uint64_t stride, int lane, Word&& word) {
  std::uint32_t sum = 0;
  const int words = r.access_bytes / 4;
  for (int k = 0; k < accesses_per_thread; ++k) {
    const std::uint32_t w0 = address_of(r, stride, lane, k) / 4;
    for (int j = 0; j < words; ++j) sum += word(w0 + static_cast<std::uint32_t>(j));
  }
  return sum;
}
inline std::uint32_t stored_value(std::uint32_t input) {
  return input + static_cast<std::uint32_t>(accesses_per_thread - 1);
}

const lab& table();

}  // namespace memlab::labs::smem
