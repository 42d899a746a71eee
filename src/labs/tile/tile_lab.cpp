// The tile lab: each CTA moves one tile of a column-major matrix global -> shared with the
// variant's copy, then writes it back with one fixed write-back; CuTe's copies next to memlab's.
#include <array>
#include <stdexcept>

#include "harness/buffer.hpp"
#include "harness/fill.hpp"
#include "labs/tile/tile.hpp"
#include "memlab/error.cuh"

namespace memlab::labs::tile {

namespace {

// In variant_id order (tile_case indexes it by id). kernel_name_contains: fragments of the demangled
// kernel name tile_kernel<Variant, T>; the trailing ',' or '<' keeps cute_default apart from
// cute_default_static.
const std::array<variant_entry<variant_id>, variant_count> entries{{
    {variant_id::cute_universal,
     {"cute_universal", "the tutorial: local_partition (8, 32) on dynamic layouts, UniversalCopy<T>, one element per copy",
      {"tile_kernel<memlab::labs::tile::cute_universal,"}, false}},
    {variant_id::cute_autovec64,
     {"cute_autovec64", "the tutorial's partition, AutoVectorizingCopyWithAssumedAlignment<64>",
      {"tile_kernel<memlab::labs::tile::cute_autovec64,"}, false}},
    {variant_id::cute_autovec128,
     {"cute_autovec128", "the tutorial's partition, AutoVectorizingCopyWithAssumedAlignment<128>",
      {"tile_kernel<memlab::labs::tile::cute_autovec128,"}, false}},
    {variant_id::cute_default,
     {"cute_default", "the tutorial's partition, copy(src, dst): CuTe's default policy",
      {"tile_kernel<memlab::labs::tile::cute_default,"}, false}},
    {variant_id::cute_universal_static,
     {"cute_universal_static", "cute_universal on static layouts (compile-time tile shape)",
      {"tile_kernel<memlab::labs::tile::cute_universal_static<"}, false}},
    {variant_id::cute_autovec128_static,
     {"cute_autovec128_static", "cute_autovec128 on static layouts",
      {"tile_kernel<memlab::labs::tile::cute_autovec128_static<"}, false}},
    {variant_id::cute_default_static,
     {"cute_default_static", "cute_default on static layouts (copy() then assumes 128-bit alignment)",
      {"tile_kernel<memlab::labs::tile::cute_default_static<"}, false}},
    {variant_id::cute_tiled_universal,
     {"cute_tiled_universal",
      "contiguous partition: make_tiled_copy, (8, 32) threads x (16 B, 1) values, UniversalCopy<T> atom",
      {"tile_kernel<memlab::labs::tile::cute_tiled_universal,"}, false}},
    {variant_id::cute_tiled_default,
     {"cute_tiled_default", "contiguous partition, copy(src, dst) on dynamic layouts",
      {"tile_kernel<memlab::labs::tile::cute_tiled_default,"}, false}},
    {variant_id::cute_tiled_default_static,
     {"cute_tiled_default_static", "contiguous partition, copy(src, dst) on static layouts",
      {"tile_kernel<memlab::labs::tile::cute_tiled_default_static<"}, false}},
    {variant_id::cute_tiled_autovec128,
     {"cute_tiled_autovec128", "contiguous partition, AutoVectorizingCopyWithAssumedAlignment<128>",
      {"tile_kernel<memlab::labs::tile::cute_tiled_autovec128,"}, false}},
    {variant_id::cute_tiled128,
     {"cute_tiled128", "contiguous partition, a UniversalCopy<uint128_t> atom: 128 bits by construction",
      {"tile_kernel<memlab::labs::tile::cute_tiled128,"}, false}},
    {variant_id::ldg_sts16,
     {"ldg_sts16", "memlab::tile::load_ldg_sts16: the tile as one byte range, 16-byte LDG + STS, batches of 8 per thread (ptxas keeps <= 4 in flight)",
      {"tile_kernel<memlab::labs::tile::ldg_sts16,"}, false}},
    {variant_id::ldgsts16,
     {"ldgsts16", "memlab::tile::load_ldgsts16: cp.async.cg 16 B (L1 bypass), every chunk in flight, commit + wait",
      {"tile_kernel<memlab::labs::tile::ldgsts16,"}, false}},
}};

const auto infos = infos_of(entries);

bool is_tiled(variant_id v) {
  switch (v) {
    case variant_id::cute_tiled_universal:
    case variant_id::cute_tiled_default:
    case variant_id::cute_tiled_default_static:
    case variant_id::cute_tiled_autovec128:
    case variant_id::cute_tiled128: return true;
    default: return false;
  }
}

// Global access width the variant compiles to, in bytes (asserted for f32 by tests/labs/tile/
// test_tile_sass.cpp): an element for a partition without contiguity or a policy that assumes no
// alignment, 16 bytes where CuTe may vectorize or memlab moves 16-byte chunks.
int access_bytes(variant_id v, std::size_t elem_size) {
  switch (v) {
    case variant_id::cute_tiled_default_static:
    case variant_id::cute_tiled_autovec128:
    case variant_id::cute_tiled128:
    case variant_id::ldg_sts16:
    case variant_id::ldgsts16: return 16;
    default: return static_cast<int>(elem_size);
  }
}


std::string tile_text(std::uint64_t rows, std::uint64_t cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

// CTAs the case launches: 0 means one per tile of the whole matrix.
std::uint64_t grid_of(const case_params& p) {
  const std::uint64_t tile_elems = p.rows * p.cols;
  return p.ctas != 0 ? p.ctas : (tile_elems == 0 ? 0 : p.n / tile_elems);
}
std::uint64_t payload_bytes(const case_params& p) { return grid_of(p) * p.rows * p.cols * size_of(p.type); }

// Shared memory a CTA may opt in to on device `ordinal`; 0 when it cannot be asked (no GPU).
int smem_optin_bytes(int ordinal) {
  int bytes = 0;
  if (cudaDeviceGetAttribute(&bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal) != cudaSuccess) {
    (void)cudaGetLastError();  // leave no error behind for the next launch check
    return 0;
  }
  return bytes;
}

// The device-independent rules, shared by unsupported() and prepare().
std::optional<std::string> case_rule(variant_id v, const case_params& p) {
  const std::size_t es = size_of(p.type);
  if (p.type != dtype::f32 && p.type != dtype::f16) return "tile is built for f32 and f16 only";
  if (auto why = tile_rule(v, es, p.rows, p.cols)) return why;
  const std::uint64_t tile_elems = p.rows * p.cols;
  if (p.n < tile_elems) {
    return "n = " + std::to_string(p.n) + " is smaller than one " + tile_text(p.rows, p.cols) + " tile (" +
           std::to_string(tile_elems) + " elements): the matrix is a stack of tiles";
  }
  if (p.n % tile_elems != 0) {
    return "n = " + std::to_string(p.n) + " is not a whole number of " + tile_text(p.rows, p.cols) + " tiles (" +
           std::to_string(tile_elems) + " elements each): the matrix is a stack of tiles";
  }
  const std::uint64_t tiles = p.n / tile_elems;
  if (p.ctas > tiles) {
    return "--ctas " + std::to_string(p.ctas) + " exceeds the " + std::to_string(tiles) + " tiles of the matrix (each CTA moves its own tile)";
  }
  if (p.src_offset % es != 0) {
    return "src offset +" + std::to_string(p.src_offset) + " B is not a whole " + std::to_string(es) + "-byte " +
           std::string(to_string(p.type)) + " element";
  }
  const int align = required_alignment(v);
  if (align > 0 && p.src_offset % static_cast<std::uint64_t>(align) != 0) {
    return std::string(entries[static_cast<std::size_t>(v)].info.name) + " assumes a " + std::to_string(align) +
           "-byte aligned source (src +" + std::to_string(p.src_offset) + " B)";
  }
  return std::nullopt;
}

class tile_case final : public prepared_case {
 public:
  tile_case(variant_id v, const case_params& p)
      : v_(v),
        p_(p),
        elem_(size_of(p.type)),
        grid_(grid_of(p)),
        payload_(payload_bytes(p)),
        src_(p.src_offset + payload_),
        dst_(payload_ + guard_bytes),
        policy_(plan(v, elem_, p.rows, p.cols, grid_)) {
    configure_kernel(v_, p_.type, p_.rows, p_.cols);
  }

  [[nodiscard]] launch_policy policy() const override { return policy_; }
  [[nodiscard]] std::uint64_t bytes() const override { return 2 * payload_; }  // each tile read once, written once
  [[nodiscard]] std::uint64_t working_set_bytes() const override { return 2 * payload_; }

  void reset() override {
    seed_ = next_seed();
    fill_random(src_.data(), src_.size(), seed_, nullptr);
    MEMLAB_CUDA_CHECK(cudaMemset(dst_.data(), poison_byte, dst_.size()));
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void launch(cudaStream_t s) override {
    launch_kernel(v_, p_.type, dst_.data(), src_.data() + p_.src_offset, p_.rows, p_.cols, grid_, s);
  }

  [[nodiscard]] std::string verify() override {
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    // The output is the input matrix, byte for byte: byte j of dst = byte src_offset + j of the stream.
    return check_against_stream(dst_.data(), dst_.size(), 0, payload_, seed_, p_.src_offset, elem_);
  }

 private:
  variant_id v_;
  case_params p_;
  std::size_t elem_;
  std::uint64_t grid_;
  std::uint64_t payload_;
  device_buffer src_, dst_;
  launch_policy policy_;
  std::uint64_t seed_ = 0;
};

constexpr std::array<axis, 3> tile_axes{axis::tile, axis::ctas, axis::src_offset};
constexpr std::array<dtype, 2> tile_dtypes{dtype::f32, dtype::f16};

class tile_lab_impl final : public lab {
 public:
  [[nodiscard]] std::string_view name() const override { return "tile"; }
  [[nodiscard]] std::string_view teaches() const override {
    return "CuTe copy atoms global -> shared: which partition, policy, layout and alignment give 128-bit "
           "accesses; next to memlab's LDG+STS and cp.async tile movers";
  }
  [[nodiscard]] std::span<const variant_info> variants() const override { return infos; }
  [[nodiscard]] std::span<const dtype> dtypes() const override { return tile_dtypes; }
  [[nodiscard]] dtype default_dtype() const override { return dtype::f32; }
  // 1 GiB of f32: ~20 x the H100's 50 MB L2.
  [[nodiscard]] std::string_view default_sizes() const override { return "2^28"; }
  [[nodiscard]] std::string_view size_meaning() const override {
    return "elements of the matrix (a column-major stack of tiles: tile rows x tiles * tile cols)";
  }
  [[nodiscard]] std::span<const axis> axes() const override { return tile_axes; }
  // The tutorial's 128x256 tile (128 KiB of f32: one CTA per SM) and 128x128 (64 KiB: three per SM);
  // the full grid and the tutorial's single CTA.
  [[nodiscard]] axis_values default_axes() const override {
    axis_values a;
    a.tile = {{128, 256}, {128, 128}};
    a.ctas = {0, 1};
    return a;
  }

  [[nodiscard]] std::optional<std::string> unsupported(std::string_view variant, const case_params& p,
                                                       const device_info& dev) const override {
    const auto v = variant_by_name(variant);
    if (!v) return "unknown variant '" + std::string(variant) + "'";
    if (auto why = case_rule(*v, p)) return why;
    const std::uint64_t tile_bytes = p.rows * p.cols * size_of(p.type);
    const int optin = smem_optin_bytes(dev.ordinal);
    if (optin > 0 && tile_bytes > static_cast<std::uint64_t>(optin)) {
      return "a " + tile_text(p.rows, p.cols) + " " + std::string(to_string(p.type)) + " tile needs " +
             std::to_string(tile_bytes) + " B of shared memory; this device allows " + std::to_string(optin) +
             " B per CTA";
    }
    return std::nullopt;
  }

  [[nodiscard]] std::vector<param> params(const case_params& p) const override {
    return {{"dtype", std::string(to_string(p.type))},
            {"n", static_cast<std::int64_t>(p.n)},
            {"rows", static_cast<std::int64_t>(p.rows)},
            {"cols", static_cast<std::int64_t>(p.cols)},
            {"ctas", static_cast<std::int64_t>(p.ctas)},
            {"src_offset", static_cast<std::int64_t>(p.src_offset)}};
  }

  [[nodiscard]] std::uint64_t device_bytes(const case_params& p) const override {
    return p.src_offset + 2 * payload_bytes(p) + guard_bytes;
  }

  [[nodiscard]] std::unique_ptr<prepared_case> prepare(std::string_view variant, const case_params& p,
                                                       const device_info& /*dev*/) const override {
    const auto v = variant_by_name(variant);
    if (!v) throw std::invalid_argument("tile: unknown variant '" + std::string(variant) + "'");
    if (auto why = case_rule(*v, p)) throw std::invalid_argument("tile: " + *why);
    return std::make_unique<tile_case>(*v, p);
  }
};

}  // namespace

std::optional<variant_id> variant_by_name(std::string_view name) { return id_by_name(entries, name); }

bool is_static(variant_id v) {
  return v == variant_id::cute_universal_static || v == variant_id::cute_autovec128_static ||
         v == variant_id::cute_default_static || v == variant_id::cute_tiled_default_static;
}

int required_alignment(variant_id v) {
  switch (v) {
    case variant_id::cute_autovec64: return 8;
    case variant_id::cute_autovec128:
    case variant_id::cute_autovec128_static:
    case variant_id::cute_default_static:
    case variant_id::cute_tiled_default_static:
    case variant_id::cute_tiled_autovec128:
    case variant_id::cute_tiled128:
    case variant_id::ldg_sts16:
    case variant_id::ldgsts16: return 16;
    default: return 0;
  }
}

std::optional<std::string> tile_rule(variant_id v, std::size_t elem_size, std::uint64_t rows, std::uint64_t cols) {
  const std::string tile = tile_text(rows, cols);
  if (rows == 0 || cols == 0) return "a " + tile + " tile is empty";
  // Far above any shared memory (227 KiB on sm_90); keeps rows x cols x size in int range.
  if (rows > (1u << 16) || cols > (1u << 16) || rows * cols * elem_size > (1u << 20)) {
    return "a " + tile + " tile does not fit in shared memory";
  }
  if (rows % thr_rows != 0 || cols % thr_cols != 0) {
    return "a " + tile + " tile is not a multiple of the (" + std::to_string(thr_rows) + ", " + std::to_string(thr_cols) +
           ") thread layout: rows must be a multiple of " + std::to_string(thr_rows) + " and cols of " +
           std::to_string(thr_cols);
  }
  if (is_tiled(v)) {
    const std::uint64_t per_thread = 16 / elem_size;  // elements of a thread's 16 contiguous bytes
    if (rows % (thr_rows * per_thread) != 0) {
      return "a " + tile + " tile does not split into 16-byte column pieces over 8 thread rows: rows must be a multiple of " +
             std::to_string(thr_rows * per_thread) + " (8 x " + std::to_string(per_thread) + " elements)";
    }
  }
  if (is_static(v)) {
    bool built = false;
    std::string shapes;
    for (const auto& [r, c] : static_tiles) {
      built = built || (rows == static_cast<std::uint64_t>(r) && cols == static_cast<std::uint64_t>(c));
      shapes += (shapes.empty() ? "" : ", ") + tile_text(static_cast<std::uint64_t>(r), static_cast<std::uint64_t>(c));
    }
    if (!built) return "static layouts need the tile shape at compile time: built for " + shapes + " only, not " + tile;
  }
  return std::nullopt;
}

launch_policy plan(variant_id v, std::size_t elem_size, std::uint64_t rows, std::uint64_t cols, std::uint64_t ctas) {
  const int vb = access_bytes(v, elem_size);
  const std::uint64_t tile_bytes = rows * cols * elem_size;
  const auto accesses = tile_bytes / threads_per_cta / static_cast<std::uint64_t>(vb);  // per thread
  return {threads_per_cta, static_cast<int>(accesses), vb, 0, ctas};
}

const lab& tile_lab() {
  static const tile_lab_impl instance;
  return instance;
}

}  // namespace memlab::labs::tile
