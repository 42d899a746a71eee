// memlab/copy_plan.hpp: how memlab::copy moves `bytes` from `src` to `dst`, decided on the host
// from the two real addresses, the size and the device. Pure C++ (no CUDA needed), so a host test
// or a tool can ask what a copy will do without a GPU.
//
// The plan splits the destination into three parts:
//
//   dst:  | head (bytes) | body: `vectors` x 16 B, dst 16-byte aligned | tail (bytes) |
//
// The head runs up to the first 16-byte boundary of dst, so every body store is a 16-byte store.
// On a device with 32-byte global accesses (sm_100 and newer, copy_device::cc_major >= 10) where
// src and dst share their misalignment modulo 32, the body is 32-byte loads and stores instead
// (path aligned32): the head runs to dst's first 32-byte boundary. Otherwise
// `shift` = (src - dst) mod 16 says where the source of each body vector sits:
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
  aligned32,  // 32-byte loads and stores (sm_100 and newer)
};

constexpr const char* to_string(copy_path p) {
  switch (p) {
    case copy_path::none: return "none";
    case copy_path::bytes: return "bytes";
    case copy_path::aligned16: return "aligned16";
    case copy_path::realign16: return "realign16";
    case copy_path::aligned32: return "aligned32";
  }
  return "?";
}

struct copy_plan {
  copy_path path = copy_path::none;
  std::size_t head = 0;     // bytes copied one by one before the body
  std::size_t vectors = 0;  // vec_bytes-byte vectors in the body
  std::size_t tail = 0;     // bytes copied one by one after the body
  int shift = 0;            // (src - dst) mod 16: where each body vector's bytes start in the source
  // Launch policy, printed with every result.
  int threads = 0;             // threads per CTA
  int vectors_per_thread = 0;  // body vectors each thread stores (its loads are issued first)
  int vec_bytes = 0;           // width of each body load and store
  std::uint64_t grid = 0;      // CTAs
};

// What the plan needs to know of the device.
struct copy_device {
  int sm_count = 1;
  int max_threads_per_sm = 2048;  // sm_80, sm_90, sm_100: 2048; sm_86, sm_89: 1536; sm_75: 1024
  int cc_major = 0;               // 10 and up: 32-byte global loads and stores (sm_100)
  bool peer = false;              // dst or src in another GPU's memory: no one-wave rule (copy_vectors_per_thread)
};

namespace copy_tuning {
inline constexpr int threads = 256;
// Bytes of loads in flight per SM past which a 16-byte copy stops getting faster. H100 SXM
// (docs/notes/copy.md, section 1): 8 KiB/SM gave 2434 GB/s, 16 KiB 2754, 32 KiB and more
// 2825-2863 (Little's law at ~0.8 us loaded latency asks ~20 KB).
inline constexpr int bytes_in_flight_per_sm = 32 * 1024;
inline constexpr int max_vectors_per_thread = 4;
}  // namespace copy_tuning

// Body vectors per thread: enough that a full SM keeps bytes_in_flight_per_sm of loads in flight.
// 1 where 2048 threads x 16 B = 32 KiB already do (H100, H200: measured there, one vector per thread
// beat two by ~3% at 2^24..2^31 f16, docs/notes/copy.md section 2); more on GPUs with fewer threads
// per SM. Only for copies of at least one full wave; a smaller copy is all in flight at once anyway.
// And a copy of more than one wave of one-vector threads but at most max_vectors_per_thread runs as one wave
// of 2 or 4 vectors a thread (every CTA resident from the start, no wave waiting for the last to retire:
// docs/notes/copy.md, "Copies of one to four waves"), except between two GPUs (dev.peer), where over NVLink
// the one wave of 4 vectors a thread was 1.4% slower at 16 MiB (the same page).
constexpr int copy_vectors_per_thread(std::size_t vectors, const copy_device& dev, std::size_t vec_bytes = 16) {
  const auto threads_per_sm = static_cast<std::size_t>(dev.max_threads_per_sm > 0 ? dev.max_threads_per_sm : 2048);
  const auto sms = static_cast<std::size_t>(dev.sm_count > 0 ? dev.sm_count : 1);
  const std::size_t wave = sms * threads_per_sm;  // vectors of one wave of one-vector threads
  if (vectors <= wave) return 1;
  const std::size_t per_sm_at_one = threads_per_sm * vec_bytes;
  std::size_t u = (copy_tuning::bytes_in_flight_per_sm + per_sm_at_one - 1) / per_sm_at_one;
  constexpr auto most = static_cast<std::size_t>(copy_tuning::max_vectors_per_thread);
  if (!dev.peer && vectors <= most * wave) {
    const std::size_t one_wave = vectors <= 2 * wave ? 2 : 4;
    if (u < one_wave) u = one_wave;
  }
  if (u > most) u = most;
  return u <= 1 ? 1 : u <= 2 ? 2 : 4;  // the kernel is instantiated for 1, 2 and 4
}

// What memlab::copy will do. `dev` only tunes the policy, never correctness (any values are valid).
constexpr copy_plan plan_copy(std::uintptr_t dst, std::uintptr_t src, std::size_t bytes, const copy_device& dev) {
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
  // 32-byte body: head up to dst's first 32-byte boundary, every body access 32-byte aligned.
  if (dev.cc_major >= 10 && (src - dst) % 32 == 0) {
    const std::size_t head32 = (32 - dst % 32) % 32;
    if (head32 < bytes && (bytes - head32) / 32 > 0) {
      p.path = copy_path::aligned32;
      p.head = head32;
      p.vectors = (bytes - head32) / 32;
      p.tail = bytes - head32 - 32 * p.vectors;
      p.vec_bytes = 32;
      p.vectors_per_thread = copy_vectors_per_thread(p.vectors, dev, 32);
      const std::size_t per_cta = static_cast<std::size_t>(p.threads) * static_cast<std::size_t>(p.vectors_per_thread);
      p.grid = (p.vectors + per_cta - 1) / per_cta;
      return p;
    }
  }
  std::size_t head = (16 - dst % 16) % 16;                               // up to dst's first 16-byte boundary
  const int shift = static_cast<int>((src - dst) % 16);                  // unsigned wrap-around is the modulus
  if (shift != 0 && head < static_cast<std::size_t>(shift)) head += 16;  // first source vector >= src
  if (head >= bytes) return fall_back_to_bytes();
  const std::size_t rest = bytes - head;
  // Realigned: output vector j reads source vectors at src + head - shift + 16 j and + 16 (j + 1);
  // the last one must end inside the source: 16 (j + 2) <= rest + shift.
  const std::size_t vectors =
      shift == 0
          ? rest / 16
          : (rest + static_cast<std::size_t>(shift) >= 32 ? (rest + static_cast<std::size_t>(shift) - 16) / 16 : 0);
  if (vectors == 0) return fall_back_to_bytes();
  p.path = shift == 0 ? copy_path::aligned16 : copy_path::realign16;
  p.head = head;
  p.vectors = vectors;
  p.tail = rest - 16 * vectors;
  p.shift = shift;
  p.vec_bytes = 16;
  p.vectors_per_thread = copy_vectors_per_thread(vectors, dev);
  // A realigning warp stores 31 vectors per 32 lanes (lane 31 lends its source vector, copy.cuh).
  const std::size_t per_warp = p.path == copy_path::realign16 ? 31 : 32;
  const std::size_t per_cta =
      static_cast<std::size_t>(p.threads / 32) * per_warp * static_cast<std::size_t>(p.vectors_per_thread);
  p.grid = (vectors + per_cta - 1) / per_cta;
  return p;
}

}  // namespace memlab
