// The async lab's host-side model (model.cpp): which part of the array each path moves, the rules
// a case must meet (alignment, stages, shared memory, device features), and the launch policies.
// The lab itself (kernels, reference, table): async.cu.
//
// The task: a payload of n elements copied global -> shared -> global, tile by tile. The variant's
// path moves the `main` part (the payload rounded down to 16 bytes, to 256 for tma_tensor, whose
// view is rows of 256 bytes); the few bytes past it (< 16, < 256) are copied byte by byte by one
// thread, global to global. The source starts src_offset bytes past its 256-byte aligned
// allocation, each CTA's tile smem_offset bytes past its dynamic shared memory (128-byte aligned).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "harness/lab.hpp"

namespace memlab::labs::async {

// How a rung moves a tile from global to shared memory.
enum class tile_path {
  registers,   // LDG + STS
  cp_async,    // LDGSTS (cp.async .ca or .cg)
  tma_bulk,    // cp.async.bulk (UBLKCP) on an mbarrier
  tma_tensor,  // a 2D tensor map (UTMALDG / UTMASTG)
  library,     // a peer: its own path
};

// What the lab's model reads of a rung (its table record's traits).
struct rung_traits {
  tile_path path = tile_path::library;
  int access_bytes = 0;    // bytes per access of the global -> shared path (TMA: 16, its address rule); peers: 0
  bool pipelined = false;  // streams its tiles through --stages buffers (pipelined, divergent_commit)
  // The kernel for a write-back width and a stage count (nullptr for the peers).
  const void* (*kernel)(int writeback, std::uint64_t stages) = nullptr;
};

inline constexpr int threads_per_cta = 256;
// The TMA rungs: one warp per CTA, lane 0 issues the copies; residency is then bounded by shared
// memory (tile bytes per CTA), not by threads.
inline constexpr int tma_threads = 32;
// tma_tensor's 2D view of the payload: rows of 256 bytes, a tile a box of tile / 256 whole rows.
inline constexpr std::uint64_t tensor_row_bytes = 256;
inline constexpr std::uint64_t max_box_rows = 256;  // TMA's largest box extent
inline constexpr int max_stages = 4;
// Static shared memory of a TMA kernel (its mbarrier), reserved below the device's opt-in limit.
inline constexpr std::uint64_t tma_static_smem = 16;

// The default tile (--tile-bytes): 4 KiB, one 16-byte chunk per thread of a 256-thread CTA. The
// best of 4..64 KiB for the one-tile rungs on the H100 at 2^28 f32 (docs/notes/async.md: ldg_sts16
// and ldgsts_cg16 3037 GB/s at 4 KiB, 2976-2990 at 16 KiB; CUB 3011 in the same run).
inline constexpr std::uint64_t default_tile_bytes = 4 * 1024;

bool is_tma(const rung_traits& t);

// Alignment the global source must have (bytes); the shared destination's.
std::uint64_t src_alignment(const rung_traits& t);
std::uint64_t smem_alignment(const rung_traits& t);

// Width of the common write-back (LDS + STG) for a tile at smem_offset: the widest of 16, 8, 4
// bytes that divides it. The 16-byte paths only run at multiples of 16: theirs is always 16.
int writeback_bytes(std::uint64_t smem_offset);

// How the payload splits for variant v with tiles of `tile` bytes.
struct copy_geometry {
  std::uint64_t payload = 0;  // bytes
  std::uint64_t main = 0;     // bytes the variant's path moves, tile by tile
  std::uint64_t tile = 0;     // bytes per tile (per stage)
  std::uint64_t tiles = 0;    // ceil(main / tile); the last one may be partial
};
copy_geometry geometry(const variant& v, std::uint64_t payload, std::uint64_t tile);

// Dynamic shared memory a CTA of v asks for: its tile(s) plus the offset.
std::uint64_t smem_bytes(const variant& v, std::uint64_t tile, std::uint64_t stages, std::uint64_t smem_offset);

// The device-independent rules: element-aligned offsets, the path's alignment, tile sizes, stages.
struct case_shape {
  std::size_t elem_size = 4;
  std::uint64_t n = 0;
  std::uint64_t src_offset = 0, smem_offset = 0;
  std::uint64_t stages = 1;
  std::uint64_t tile = default_tile_bytes;
};
std::optional<std::string> case_rule(const variant& v, const case_shape& s);
// The same plus the device's shared memory per CTA (TMA's sm_90 is the rung's needs, checked by the
// harness first).
std::optional<std::string> device_rule(const variant& v, const case_shape& s, int smem_per_block_optin);

// Threads, chunks per thread per tile, bytes per access (TMA: the tile, one instruction), stages,
// grid. The tile rungs launch one CTA per tile; pipelined and divergent_commit one CTA per SM
// (at most one per tile), each streaming its tiles through the stages; the peers plan their own.
launch_policy plan(const variant& v, const case_shape& s, int sm_count);

const lab& table();

}  // namespace memlab::labs::async
