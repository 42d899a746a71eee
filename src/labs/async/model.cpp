// The async lab's host-side model: the split of the payload, the alignment each path needs, the
// rules a case must meet, and the launch policies. Host-only; tested in
// tests/labs/async/test_async_plan.cpp.
#include <cuda/cmath>

#include <algorithm>
#include <string>

#include "labs/async/async.hpp"

namespace memlab::labs::async {

namespace {

const rung_traits& traits(const variant& v) { return v.traits_as<rung_traits>(); }

// Why each path needs what it needs, for the refusals.
std::string alignment_reason(const rung_traits& t) {
  switch (t.path) {
    case tile_path::registers: return "its loads and stores are " + std::to_string(t.access_bytes) + "-byte vectors";
    case tile_path::cp_async:
      return "cp.async of " + std::to_string(t.access_bytes) + " bytes needs both addresses aligned to its size";
    case tile_path::tma_bulk: return "cp.async.bulk needs 16-byte aligned global and shared addresses";
    case tile_path::tma_tensor:
      return "a tensor map's global address must be 16-byte aligned, a tensor copy's shared address 128-byte aligned";
    case tile_path::library: return {};
  }
  return {};
}

}  // namespace

bool is_tma(const rung_traits& t) { return t.path == tile_path::tma_bulk || t.path == tile_path::tma_tensor; }

std::uint64_t src_alignment(const rung_traits& t) { return static_cast<std::uint64_t>(t.access_bytes); }

std::uint64_t smem_alignment(const rung_traits& t) {
  if (t.path == tile_path::tma_tensor) return 128;
  return static_cast<std::uint64_t>(t.access_bytes);
}

int writeback_bytes(std::uint64_t smem_offset) {
  if (smem_offset % 16 == 0) return 16;
  if (smem_offset % 8 == 0) return 8;
  return 4;
}

copy_geometry geometry(const variant& v, std::uint64_t payload, std::uint64_t tile) {
  copy_geometry g;
  g.payload = payload;
  g.tile = tile;
  if (v.peer) return g;
  const std::uint64_t granule = traits(v).path == tile_path::tma_tensor ? tensor_row_bytes : 16;
  g.main = payload / granule * granule;
  g.tiles = tile == 0 ? 0 : cuda::ceil_div(g.main, tile);  // a 0-byte tile (refused: case_rule) plans none
  return g;
}

std::uint64_t smem_bytes(const variant& v, std::uint64_t tile, std::uint64_t stages, std::uint64_t smem_offset) {
  if (v.peer) return 0;
  return (traits(v).pipelined ? stages : 1) * tile + smem_offset;
}

std::optional<std::string> case_rule(const variant& v, const case_shape& s) {
  const std::string name(v.name);
  const rung_traits& t = traits(v);
  const std::string es = std::to_string(s.elem_size);
  if (s.src_offset % s.elem_size != 0) {
    return "src offset +" + std::to_string(s.src_offset) + " B is not a whole " + es + "-byte element";
  }
  if (v.peer) {
    if (s.smem_offset != 0) return name + " uses no shared memory of memlab's: --smem-offset applies to memlab's paths";
    if (s.stages != 1) return name + " has no stages of memlab's: --stages applies to pipelined and divergent_commit";
    if (s.tile != default_tile_bytes) {
      return name + " has no tiles of memlab's: it runs at the default --tile-bytes (" +
             std::to_string(default_tile_bytes) + ") only";
    }
    return std::nullopt;
  }
  if (!t.pipelined && s.stages != 1) {
    return name + " copies one tile per CTA, a single stage: --stages applies to pipelined and divergent_commit";
  }
  if (s.stages < 1 || s.stages > static_cast<std::uint64_t>(max_stages)) {
    return "--stages " + std::to_string(s.stages) + " is outside 1.." + std::to_string(max_stages);
  }
  const std::uint64_t sa = src_alignment(t), ma = smem_alignment(t);
  if (s.src_offset % sa != 0) {
    return name + " needs the global source " + std::to_string(sa) + "-byte aligned (src +" +
           std::to_string(s.src_offset) + " B): " + alignment_reason(t);
  }
  if (s.smem_offset % ma != 0) {
    return name + " needs its shared tile " + std::to_string(ma) + "-byte aligned (smem +" +
           std::to_string(s.smem_offset) + " B): " + alignment_reason(t);
  }
  if (s.tile == 0 || s.tile % 16 != 0) {
    return "--tile-bytes " + std::to_string(s.tile) +
           " is not a positive multiple of 16 (every path moves 16-byte units)";
  }
  if (t.path == tile_path::tma_tensor) {
    if (s.tile % tensor_row_bytes != 0 || s.tile / tensor_row_bytes > max_box_rows) {
      return "tma_tensor's tile is a box of whole 256-byte rows, at most 256 of them: --tile-bytes must be a multiple "
             "of "
             "256 up to 65536 (got " +
             std::to_string(s.tile) + ")";
    }
  }
  return std::nullopt;
}

std::optional<std::string> device_rule(const variant& v, const case_shape& s, int smem_per_block_optin) {
  if (auto why = case_rule(v, s)) return why;
  if (v.peer) return std::nullopt;
  const rung_traits& t = traits(v);
  const std::uint64_t need = smem_bytes(v, s.tile, s.stages, s.smem_offset) + (is_tma(t) ? tma_static_smem : 0);
  if (smem_per_block_optin > 0 && need > static_cast<std::uint64_t>(smem_per_block_optin)) {
    return std::string(v.name) + " needs " + std::to_string(need) + " B of shared memory per CTA (" +
           (t.pipelined ? std::to_string(s.stages) + " stages x " : std::string()) + std::to_string(s.tile) +
           " B + offset " + std::to_string(s.smem_offset) + "); this device allows " +
           std::to_string(smem_per_block_optin) + " B";
  }
  return std::nullopt;
}

launch_policy plan(const variant& v, const case_shape& s, int sm_count) {
  if (v.peer) return {};
  const rung_traits& t = traits(v);
  const copy_geometry g = geometry(v, s.n * s.elem_size, s.tile);
  // A case with only a tail (main = 0) still launches one CTA: its thread 0 copies the tail.
  const std::uint64_t tail_cta = g.tiles == 0 && g.payload > 0 ? 1 : 0;
  if (is_tma(t)) {
    return {.threads = tma_threads,
            .items_per_thread = 1,
            .vec_bytes = static_cast<int>(s.tile),
            .stages = 1,
            .grid = g.tiles + tail_cta};
  }
  const int width = t.access_bytes;
  const auto chunks = static_cast<int>(cuda::ceil_div(s.tile / static_cast<std::uint64_t>(width), threads_per_cta));
  if (t.pipelined) {
    const std::uint64_t grid = std::min<std::uint64_t>(g.tiles, static_cast<std::uint64_t>(std::max(sm_count, 1)));
    return {.threads = threads_per_cta,
            .items_per_thread = chunks,
            .vec_bytes = width,
            .stages = static_cast<int>(s.stages),
            .grid = grid + (grid == 0 ? tail_cta : 0)};
  }
  return {.threads = threads_per_cta,
          .items_per_thread = chunks,
          .vec_bytes = width,
          .stages = 1,
          .grid = g.tiles + tail_cta};
}

}  // namespace memlab::labs::async
