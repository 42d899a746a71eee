// memlab/copy_plan.hpp: how memlab::copy moves `bytes` from `src` to `dst`, decided on the host
// from the two real addresses, the size and the device. Pure C++ (no CUDA needed), so a host test
// or a tool can ask what a copy will do without a GPU.
//
// The plan splits the destination into three parts:
//
//   dst:  | head (bytes) | body: `vectors` x 16 B, dst 16-byte aligned | tail (bytes) |
//
// The head runs up to the first 16-byte boundary of dst, so every body store is a 16-byte store.
// Then `shift` = (src - dst) mod 16 says where the source of each body vector sits:
//   shift == 0   src and dst share their misalignment: the body is plain 16-byte loads and stores.
//   shift != 0   each body vector spans two aligned 16-byte source vectors; each lane loads one
//                (16-byte loads, still), borrows the next lane's words with a shuffle and
//                funnel-shifts the 16 bytes it needs out of the 32 (31 outputs per warp).
//                The head and tail are widened so both source vectors lie inside [src, src+bytes):
//                no load ever touches a byte outside the caller's buffers.
// Head and tail are under 32 bytes each and go byte by byte; a copy too small for one body vector
// is all bytes.
#pragma once

#include <cstddef>
#include <cstdint>

namespace memlab {

enum class copy_path : int {
  none,       // nothing to copy
  bytes,      // too small for a 16-byte body: one byte per thread
  aligned16,  // 16-byte loads and stores
  realign16,  // 16-byte loads, funnel shift in registers, 16-byte stores
};

constexpr const char* to_string(copy_path p) {
  switch (p) {
    case copy_path::none: return "none";
    case copy_path::bytes: return "bytes";
    case copy_path::aligned16: return "aligned16";
    case copy_path::realign16: return "realign16";
  }
  return "?";
}

struct copy_plan {
  copy_path path = copy_path::none;
  std::size_t head = 0;     // bytes copied one by one before the body
  std::size_t vectors = 0;  // 16-byte vectors in the body
  std::size_t tail = 0;     // bytes copied one by one after the body
  int shift = 0;            // (src - dst) mod 16: where each body vector's bytes start in the source
  // Launch policy, printed with every result.
  int threads = 0;             // threads per CTA
  int vectors_per_thread = 0;  // body vectors each thread stores (its loads are issued first)
  int vec_bytes = 0;           // width of each body load and store
  std::uint64_t grid = 0;      // CTAs
};

namespace copy_tuning {
inline constexpr int threads = 256;
// Bytes of loads a CTA of the plain 16-byte body keeps in flight per thread, and the size from
// which the plan gives each thread two vectors instead of one. Measured on H100 SXM (132 SMs,
// docs/notes/copy.md, section 2): one short-lived grid, never a persistent one (a grid-stride
// copy trails it by ~6% on that GPU); at full occupancy one 16-byte vector per thread keeps
// 32 KiB in flight per SM, past the ~16-32 KiB where more stopped helping.
inline constexpr int max_vectors_per_thread = 2;
// Below this many body vectors per resident thread slot, one vector per thread: a small copy
// wants every load issued at once by as many threads as possible.
inline constexpr std::size_t waves_for_two_vectors = 4;
inline constexpr int resident_threads_per_sm = 2048;  // sm_80, sm_90, sm_100
}  // namespace copy_tuning

// What memlab::copy will do. `sm_count` is the device's multiprocessor count (any value >= 1 is
// valid: it only tunes the policy, never correctness).
constexpr copy_plan plan_copy(std::uintptr_t dst, std::uintptr_t src, std::size_t bytes, int sm_count) {
  copy_plan p;
  if (bytes == 0) return p;
  p.threads = copy_tuning::threads;
  p.vec_bytes = 1;
  p.vectors_per_thread = 1;
  const auto fall_back_to_bytes = [&] {
    p.path = copy_path::bytes;
    p.head = bytes;
    p.vectors = 0;
    p.tail = 0;
    p.grid = (bytes + static_cast<std::size_t>(p.threads) - 1) / static_cast<std::size_t>(p.threads);
    return p;
  };
  std::size_t head = (16 - dst % 16) % 16;                  // up to dst's first 16-byte boundary
  const int shift = static_cast<int>((src - dst) % 16);     // unsigned wrap-around is the modulus
  if (shift != 0 && head < static_cast<std::size_t>(shift)) head += 16;  // first source vector >= src
  if (head >= bytes) return fall_back_to_bytes();
  const std::size_t rest = bytes - head;
  // Realigned: output vector j reads source vectors at src + head - shift + 16 j and + 16 (j + 1);
  // the last one must end inside the source: 16 (j + 2) <= rest + shift.
  const std::size_t vectors = shift == 0 ? rest / 16 : (rest + static_cast<std::size_t>(shift) >= 32
                                                           ? (rest + static_cast<std::size_t>(shift) - 16) / 16
                                                           : 0);
  if (vectors == 0) return fall_back_to_bytes();
  p.path = shift == 0 ? copy_path::aligned16 : copy_path::realign16;
  p.head = head;
  p.vectors = vectors;
  p.tail = rest - 16 * vectors;
  p.shift = shift;
  p.vec_bytes = 16;
  const std::size_t resident = static_cast<std::size_t>(sm_count > 0 ? sm_count : 1) *
                               static_cast<std::size_t>(copy_tuning::resident_threads_per_sm);
  p.vectors_per_thread = vectors >= copy_tuning::waves_for_two_vectors * resident ? copy_tuning::max_vectors_per_thread
                                                                                   : 1;
  // A realigning warp stores 31 vectors per 32 lanes (lane 31 lends its source vector, copy.cuh).
  const std::size_t per_warp = p.path == copy_path::realign16 ? 31 : 32;
  const std::size_t per_cta =
      static_cast<std::size_t>(p.threads / 32) * per_warp * static_cast<std::size_t>(p.vectors_per_thread);
  p.grid = (vectors + per_cta - 1) / per_cta;
  return p;
}

}  // namespace memlab
