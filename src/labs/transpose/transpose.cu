// The transpose lab: bank conflicts in practice. out = in^T for a batch of row-major matrices, moved
// through shared memory so that both the reads of `in` and the writes of `out` stay coalesced, and
// what the banks then cost.
//
// Assumes: the lab's kernels move f16, f32 or f64 (their tiles' types), memlab::transpose and the copy any
// element size (so --dtype u8 or bf16 runs those two; cuBLAS moves f16, f32, f64); `in` is n matrices of rows x cols (--shape), one after the other, `out`
// receives their transposes (cols x rows) in the same order; both are separate cudaMalloc allocations
// (256-byte aligned). The geometry every kernel shares with the host model (which element a thread
// moves in each step, where an element of a tile lives in shared memory) is in transpose.hpp; the
// model itself (sectors per global request, wavefronts per shared request) in model.cpp.
//
// The ladder is the table at the end (`memlab list transpose`), each rung one record: its tile (edge,
// threads, access width, shared-memory layout; tile_traits, transpose.hpp), from which its kernel is
// instantiated, its launch policy planned and its warp requests replayed by the host model. Two kernel
// templates cover every rung of the lab's own:
//   elements_kernel  a thread per element, E x E tiles: straight from registers (the naive rung: reads
//                    along a row of `in`, coalesced, writes down a column of `out`: a warp's 32 stores
//                    land in 32 rows, 32 sectors for 128 useful bytes of f32), or through shared memory,
//                    row-major (a tile column in one bank: 32 wavefronts per request for f32), padded by
//                    a word per row or XOR-swizzled (both: one);
//   vectors_kernel   16-byte global loads and stores, whole 16-byte vectors into swizzled shared-memory
//                    slots, element reads out of them; tiles of 64 elements or of 256-byte rows, a warp's
//                    store V rows x 512 / V bytes or two whole 256-byte rows (longer runs per request at
//                    the same bytes).
// No TMA rung: a TMA tensor load would replace only the LDG + STS half of a tile, which is not what
// limits a transpose that already reaches DRAM; it cannot transpose 4-byte elements on the way.
// Peers in the same run:
//   cublas         cuBLAS: cublasSgeam / cublasDgeam (C = 1 x A^T + 0 x B), f16 through
//                  cublasLtMatrixTransform (cuBLAS has no Hgeam); one handle for the process.
//   copy           memlab::copy of the same bytes, not transposed: the ceiling a transpose aims at.
//
// Verification: the kernels and the copy move bytes and are checked byte for byte. cuBLAS computes
// 1 x a + 0 x b: a NaN comes out as some NaN, not necessarily the same bits, so its check compares
// values, bit for bit except that any NaN stands for a NaN (the inputs are random bytes: ~0.4% of
// f32 and ~3% of f16 values are NaNs).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <cuda/cmath>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "harness/check.hpp"
#include "harness/copy_peer.hpp"
#include "harness/cublas_check.hpp"
#include "harness/cublas_loader.hpp"
#include "harness/dispatch.cuh"
#include "harness/error.hpp"
#include "harness/launch.cuh"
#include "labs/transpose/transpose.hpp"
#include "memlab/arch/st_global.cuh"
#include "memlab/copy.cuh"
#include "memlab/transpose.cuh"
#include "memlab/vector.cuh"

namespace memlab::labs::transpose {

// ---- the CPU reference ----------------------------------------------------------------------------

// Output element e holds input element source_element(e): e = (b, c, r) in the batch of cols x rows
// transposes, the input element (b, r, c).
std::uint64_t source_element(std::uint64_t e, std::uint64_t rows, std::uint64_t cols) {
  const std::uint64_t per = rows * cols, b = e / per, k = e % per;
  return b * per + (k % rows) * cols + k / rows;
}

namespace {

// source_element() for the byte-by-byte check: a check walks the output in order, so after the
// first element of its range it steps (b, c, r) without dividing. Pure in (rows, cols, e): safe to
// keep per host thread across checks.
class source_cursor {
 public:
  std::uint64_t operator()(std::uint64_t rows, std::uint64_t cols, std::uint64_t e) {
    if (rows != rows_ || cols != cols_ || (e != e_ && e != e_ + 1)) {
      rows_ = rows;
      cols_ = cols;
      const std::uint64_t per = rows * cols;
      b_ = e / per;
      c_ = e % per / rows;
      r_ = e % per % rows;
    } else if (e == e_ + 1 && ++r_ == rows_) {
      r_ = 0;
      if (++c_ == cols_) {
        c_ = 0;
        ++b_;
      }
    }
    e_ = e;
    return (b_ * rows_ + r_) * cols_ + c_;
  }

 private:
  std::uint64_t rows_ = 0, cols_ = 0, e_ = 0, b_ = 0, c_ = 0, r_ = 0;
};

}  // namespace

// ---- the kernels ------------------------------------------------------------------------------------

// What every kernel gets: the matrices' extents and how many tiles cover one matrix.
struct matrices {
  std::uint64_t rows, cols;
  std::uint64_t tiles_r, tiles_c;  // per matrix, down the rows and along the columns
  std::uint64_t band;              // tile_order (transpose.hpp)
};

namespace {

// The tile CTA blockIdx.x moves: its matrix's first element, the tile's first row and column in it
// (matrices one after the other; inside one, tile_order's bands).
struct tile_origin {
  std::uint64_t base, r0, c0;
};
__device__ __forceinline__ tile_origin tile_of(const matrices& m, std::uint64_t edge) {
  const std::uint64_t t = blockIdx.x, per = m.tiles_r * m.tiles_c;
  const tile_rc k = tile_order(t % per, m.tiles_r, m.tiles_c, m.band);
  return {t / per * m.rows * m.cols, k.tr * edge, k.tc * edge};
}

}  // namespace

// One element per access (tile_traits vec_bytes 0): thread (tx, ty) = (t % E, t / E) moves column tx of
// tile rows ty + R j, R = threads / E (block_rows), all its loads issued before the first store.
//   layout none (naive): a thread per element and no shared memory: reads along rows (lane = column:
//     coalesced), stores down columns of `out` (lane = output row: one sector per lane).
//   any other layout: the tile through shared memory (smem_offset, transpose.hpp). In: warp ty reads
//     tile rows ty + R j, lane tx column tx (a row segment of `in`), and writes them to tile row ty + R j.
//     Out: warp ty writes output rows ty + R j of the tile (= tile columns), lane tx output column tx (a
//     row segment of `out`), reading tile element (tx, ty + R j): a column. Row-major, a column's 32
//     words are 128 B apart (f32): one bank; padded, 33 words apart: 32 banks; swizzled, word index XOR
//     row: 32 banks for a column and for a row.
namespace {

// The tile through shared memory, laid out as the tile's layout says.
template <class Tile, class T>
__device__ __forceinline__ void tile_through_smem(T* __restrict__ out, const T* __restrict__ in, const matrices& m) {
  constexpr tile_traits tile = Tile::value;
  constexpr std::size_t es = sizeof(T);
  constexpr int edge = static_cast<int>(tile_edge(tile, es)), rows = block_rows(tile, es), items = edge / rows;
  __shared__ __align__(16) unsigned char smem[smem_bytes(tile, es)];
  const auto at = [&](std::uint32_t r, std::uint32_t c) -> T& {
    return *reinterpret_cast<T*>(
        smem + element_offset(Tile::value.layout, std::integral_constant<std::uint32_t, edge>{}, es, r, c));
  };
  const tile_origin o = tile_of(m, edge);
  const std::uint32_t tx = threadIdx.x % edge, ty = threadIdx.x / edge;
  T v[items]{};
#pragma unroll
  for (int j = 0; j < items; ++j) {  // every load in flight before the first shared store
    const std::uint64_t r = o.r0 + ty + rows * j;
    if (r < m.rows && o.c0 + tx < m.cols) v[j] = in[o.base + r * m.cols + o.c0 + tx];
  }
#pragma unroll
  for (int j = 0; j < items; ++j) {
    if (o.r0 + ty + rows * j < m.rows && o.c0 + tx < m.cols) at(ty + rows * j, tx) = v[j];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < items; ++j) {
    const std::uint32_t c = ty + rows * j;  // the output row in the tile = the input column
    if (o.c0 + c < m.cols && o.r0 + tx < m.rows) out[o.base + (o.c0 + c) * m.rows + o.r0 + tx] = at(tx, c);
  }
}

}  // namespace

template <class Tile, class T>
__global__ void __launch_bounds__(Tile::value.threads)
    elements_kernel(T* __restrict__ out, const T* __restrict__ in, matrices m) {
  if constexpr (Tile::value.layout == smem_layout::none) {
    constexpr std::size_t es = sizeof(T);
    constexpr int edge = static_cast<int>(tile_edge(Tile::value, es)), rows = block_rows(Tile::value, es);
    constexpr int items = edge / rows;
    const tile_origin o = tile_of(m, edge);
    const std::uint64_t tx = threadIdx.x % edge, ty = threadIdx.x / edge, c = o.c0 + tx;
    T v[items]{};
#pragma unroll
    for (int j = 0; j < items; ++j) {
      const std::uint64_t r = o.r0 + ty + rows * j;
      if (r < m.rows && c < m.cols) v[j] = in[o.base + r * m.cols + c];
    }
#pragma unroll
    for (int j = 0; j < items; ++j) {
      const std::uint64_t r = o.r0 + ty + rows * j;
      if (r < m.rows && c < m.cols) out[o.base + c * m.rows + r] = v[j];  // (32) rows apart across the warp
    }
  } else {
    tile_through_smem<Tile>(out, in, m);
  }
}

namespace {

// V elements' bits (bits_t<sizeof(T)>) packed into one 16-byte vector, without local memory.
__device__ __forceinline__ uint4 pack16(const bits_t<4> (&x)[4]) { return {x[0], x[1], x[2], x[3]}; }
__device__ __forceinline__ uint4 pack16(const bits_t<2> (&x)[8]) {
  const auto pair = [&](int i) { return static_cast<unsigned>(x[i]) | static_cast<unsigned>(x[i + 1]) << 16; };
  return {pair(0), pair(2), pair(4), pair(6)};
}
__device__ __forceinline__ uint4 pack16(const bits_t<8> (&x)[2]) {
  const auto lo = [](std::uint64_t w) { return static_cast<unsigned>(w); };
  const auto hi = [](std::uint64_t w) { return static_cast<unsigned>(w >> 32); };
  return {lo(x[0]), hi(x[0]), lo(x[1]), hi(x[1])};
}

}  // namespace

// 16-byte vectors (tile_traits vec_bytes 16; vector_load_pos / vector_store_pos, transpose.hpp):
// tile_steps 16-byte loads per thread, all in flight before the first shared store, each stored whole
// into its slot (vector_slot: for xor_halves its two 8-byte halves swapped in registers on odd row
// groups); each store step reads V elements of one tile column (V consecutive input rows) from shared
// memory and writes them as one 16-byte vector of an output row. Needs rows and cols multiples of V
// (the lab refuses others); a cut tile at the matrix's edge is cut at whole vectors.
// min_ctas_per_sm (smem_vec_rows): at least 8 CTAs (2048 threads) per SM for f32 and f64: ptxas gave the
// f32 kernel 33 registers, which rounds to 40 and leaves room for 6; at 32 it keeps 8 without spilling.
// f16's 32 KiB tiles allow at most 6 CTAs anyway (and 16 B x 8 loads per thread need the registers): 4.
template <class Tile, class T>
__global__ void __launch_bounds__(Tile::value.threads, Tile::value.min_ctas_per_sm(sizeof(T)))
    vectors_kernel(T* __restrict__ out, const T* __restrict__ in, matrices m) {
  constexpr tile_traits tile = Tile::value;
  constexpr std::size_t es = sizeof(T);
  constexpr std::uint32_t per = vec_elems(es);
  constexpr int steps = tile_steps(tile, es);
  using bits = bits_t<static_cast<int>(es)>;
  __shared__ __align__(128) unsigned char smem[smem_bytes(tile, es)];
  const tile_origin o = tile_of(m, tile_edge(tile, es));
  const int t = static_cast<int>(threadIdx.x);
  uint4 v[steps];
#pragma unroll
  for (int i = 0; i < steps; ++i) {
    const tile_pos p = vector_load_pos(Tile{}, es, t, i);
    if (o.r0 + p.r < m.rows && o.c0 + p.c < m.cols)
      v[i] = *reinterpret_cast<const uint4*>(in + o.base + (o.r0 + p.r) * m.cols + o.c0 + p.c);
  }
#pragma unroll
  for (int i = 0; i < steps; ++i) {
    const tile_pos p = vector_load_pos(Tile{}, es, t, i);
    if (o.r0 + p.r < m.rows && o.c0 + p.c < m.cols) {
      const slot s = vector_slot(Tile{}, es, p.r, p.c);
      *reinterpret_cast<uint4*>(smem + s.offset) = s.swap_halves ? uint4{v[i].z, v[i].w, v[i].x, v[i].y} : v[i];
    }
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < steps; ++j) {
    const tile_pos p = vector_store_pos(Tile{}, es, t, j);  // p.r: the first of V input rows; p.c: the output row
    if (o.c0 + p.c < m.cols && o.r0 + p.r < m.rows) {
      bits x[per];
#pragma unroll
      for (std::uint32_t k = 0; k < per; ++k)
        x[k] = *reinterpret_cast<const bits*>(smem + smem_offset(Tile{}, es, p.r + k, p.c));
      arch::st_global_v4(out + o.base + (o.c0 + p.c) * m.rows + o.r0 + p.r,
                         pack16(x));  // a plain uint4 store: 4x STG.E
    }
  }
}

// ---- the peers ----------------------------------------------------------------------------------------

namespace {

// One cuBLAS and one cuBLASLt handle for the process, created on the first cuBLAS case (before any
// timing: a case is verified first). Never destroyed: destroying them from a static destructor
// would race the CUDA runtime's own teardown at exit; the process's end releases them.
struct cublas_handles {
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
};
const cublas_handles& handles() {
  static const cublas_handles h = [] {
    cublas_handles x;
    check_cublas(cublas().cublasCreate_v2(&x.blas), "cublasCreate");
    check_cublas(cublas().cublasLtCreate(&x.lt), "cublasLtCreate");
    return x;
  }();
  return h;
}

// cublasLtMatrixTransform's descriptors for one f16 case: C (rows x cols, column-major, ld rows) =
// 1 x op(A), A (cols x rows, column-major, ld cols: `in` as stored), op = transpose; made by setup().
struct lt_transform {
  cublasLtMatrixTransformDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, c = nullptr;
  lt_transform(std::uint64_t rows, std::uint64_t cols) {
    const cublas_api& api = cublas();
    check_cublas(api.cublasLtMatrixTransformDescCreate(&desc, CUDA_R_32F), "cublasLtMatrixTransformDescCreate");
    const cublasOperation_t t = CUBLAS_OP_T;
    check_cublas(
        api.cublasLtMatrixTransformDescSetAttribute(desc, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &t, sizeof(t)),
        "cublasLtMatrixTransformDescSetAttribute");
    check_cublas(api.cublasLtMatrixLayoutCreate(&a, CUDA_R_16F, cols, rows, static_cast<std::int64_t>(cols)),
                 "cublasLtMatrixLayoutCreate");
    check_cublas(api.cublasLtMatrixLayoutCreate(&c, CUDA_R_16F, rows, cols, static_cast<std::int64_t>(rows)),
                 "cublasLtMatrixLayoutCreate");
  }
  ~lt_transform() {
    const cublas_api& api = cublas();  // loaded: the constructor ran
    if (c != nullptr) (void)api.cublasLtMatrixLayoutDestroy(c);
    if (a != nullptr) (void)api.cublasLtMatrixLayoutDestroy(a);
    if (desc != nullptr) (void)api.cublasLtMatrixTransformDescDestroy(desc);
  }
  lt_transform(const lt_transform&) = delete;
  lt_transform& operator=(const lt_transform&) = delete;
};

}  // namespace

// ---- plans, refusals and launchers --------------------------------------------------------------------

namespace {

enum buffer_index { in_buffer, out_buffer };

const axis shape_axis{.name = "shape",
                      .meaning = "each matrix's ROWSxCOLS (elements); the output holds their COLSxROWS transposes",
                      .unit = "elements",
                      .grammar = axis_grammar::shape,
                      .defaults = "16384x16384,10000x7000",
                      .min = 0,
                      .max = std::uint64_t{1} << 31,
                      .extents = {"rows", "cols"}};
const axis band_axis{.name = "band",
                     .meaning =
                         "tile rows a band of consecutive CTAs walks down before moving right (memlab's "
                         "kernels; the peers run at the default only)",
                     .unit = "tile rows",
                     .defaults = "1",
                     .min = 1,
                     .max = 1u << 20};
constexpr std::uint64_t default_band = 1;

dims dims_of(const case_params& p) { return {p.n, p.shape(shape_axis)[0], p.shape(shape_axis)[1]}; }
std::uint64_t elements_of(const case_params& p) {
  const dims d = dims_of(p);
  return d.batch * d.rows * d.cols;
}

// The element types the lab's kernels are built for: each tile rung's kernels, its launch's dispatch and its
// dtypes read this list. memlab::transpose moves every element size (transpose_moves): its rung's dtypes.
using tile_dtypes = dtype_list<__half, float, double>;
std::vector<dtype> library_dtypes() {
  std::vector<dtype> out;
  for (dtype t : all_dtypes())
    if (transpose_moves(size_of(t))) out.push_back(t);
  return out;
}

// A rung of the lab's own: its kernel for each element type, instantiated from its tile.
template <tile_traits Tile>
struct tile_rung {
  template <class T>
  static auto kernel() {
    if constexpr (Tile.vec_bytes == 0) {
      return &elements_kernel<tile_t<Tile>, T>;
    } else {
      return &vectors_kernel<tile_t<Tile>, T>;
    }
  }
};

template <tile_traits Tile>
void launch_tiles(const case_ctx& c, cudaStream_t s) {
  const launch_policy& p = c.plan.policy;
  if (p.grid == 0) return;
  const dims d = dims_of(c.p);
  const std::uint64_t edge = tile_edge(Tile, size_of(c.p.type));
  const matrices m{d.rows, d.cols, cuda::ceil_div(d.rows, edge), cuda::ceil_div(d.cols, edge), c.p[band_axis]};
  visit_dtype(tile_dtypes{}, c.p.type, [&](auto tag) {
    using T = decltype(tag);
    tile_rung<Tile>::template kernel<T>()<<<grid_of(p.grid, "transpose"), static_cast<unsigned>(p.threads), 0, s>>>(
        c.ptr<T>(out_buffer), c.ptr<const T>(in_buffer), m);
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

// A rung of the lab's own, from its record: what it launches and needs follows from its tile.
template <tile_traits Tile>
variant lab_rung(variant v) {
  v.launch = launch_tiles<Tile>;
  v.kernels = kernels_per_dtype<tile_rung<Tile>>(tile_dtypes{});
  v.dtypes = dtypes_of(tile_dtypes{});
  static_assert(Tile.vec_bytes == 0 || Tile.vec_bytes == 16, "one element or 16-byte vectors per access");
  if (Tile.vec_bytes != 0)
    v.needs = {.alignment = Tile.vec_bytes, .shape = "rows and columns of whole 16-byte vectors"};
  v.traits = rung_traits{.tile = Tile};
  return v;
}

// auto: memlab::transpose, the library, which picks its path from the pointers, the shape and the element size.
void launch_auto(const case_ctx& c, cudaStream_t s) {
  const dims d = dims_of(c.p);
  MEMLAB_CUDA_CHECK(memlab::transpose_bytes(c.ptr(out_buffer), c.ptr<const std::byte>(in_buffer), d.batch, d.rows,
                                            d.cols, size_of(c.p.type), s));
}

// memlab::transpose's kernels (include/memlab/transpose.cuh) for every element size it moves: every path it
// may launch; the copy path's kernels are the copy lab's `auto` rung's.
std::vector<kernel_ref> auto_kernels() {
  using memlab::detail::transpose_tile_kernel;
  std::vector<kernel_ref> k;
  const auto add = [&](auto es) {
    constexpr int Es = decltype(es)::value;
    k.push_back(kernel_ref::of(&transpose_tile_kernel<Es, false, false>));
    k.push_back(kernel_ref::of(&transpose_tile_kernel<Es, true, false>));
    k.push_back(kernel_ref::of(&transpose_tile_kernel<Es, false, true>));
    k.push_back(kernel_ref::of(&transpose_tile_kernel<Es, true, true>));
  };
  add(std::integral_constant<int, 1>{});
  add(std::integral_constant<int, 2>{});
  add(std::integral_constant<int, 4>{});
  add(std::integral_constant<int, 8>{});
  k.push_back(kernel_ref::of(&memlab::detail::transpose_elem8_kernel<8>));
  for (const auto& few : memlab::detail::few_kernels()) k.push_back(kernel_ref::of(few));  // few rows/columns
  return k;
}

// cuBLAS sees `in` as a cols x rows column-major matrix (ld cols) and `out` as rows x cols
// column-major (ld rows): out = 1 x in^T + 0 x out, the in-place form for B (B = C, ldb = ldc,
// transb = N) so that no third buffer is needed; with beta 0 cuBLAS need not read it. One call per
// matrix of the batch.
void launch_cublas(const case_ctx& c, cudaStream_t s) {
  const dims d = dims_of(c.p);
  if (d.batch == 0 || d.rows == 0 || d.cols == 0) return;
  const cublas_api& api = cublas();
  const cublas_handles& h = handles();
  const std::uint64_t per = d.rows * d.cols;
  const auto rows = static_cast<std::int64_t>(d.rows), cols = static_cast<std::int64_t>(d.cols);
  if (c.p.type == dtype::f16) {
    const auto& lt = *std::any_cast<const std::shared_ptr<lt_transform>&>(c.state);
    const float one = 1.0f, zero = 0.0f;
    for (std::uint64_t b = 0; b < d.batch; ++b) {
      check_cublas(api.cublasLtMatrixTransform(h.lt, lt.desc, &one, c.ptr<const __half>(in_buffer) + b * per, lt.a,
                                               &zero, nullptr, nullptr, c.ptr<__half>(out_buffer) + b * per, lt.c, s),
                   "cublasLtMatrixTransform");
    }
    return;
  }
  check_cublas(api.cublasSetStream_v2(h.blas, s), "cublasSetStream");
  for (std::uint64_t b = 0; b < d.batch; ++b) {
    if (c.p.type == dtype::f32) {
      const float one = 1.0f, zero = 0.0f;
      float* out = c.ptr<float>(out_buffer) + b * per;
      check_cublas(api.cublasSgeam_64(h.blas, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one,
                                      c.ptr<const float>(in_buffer) + b * per, cols, &zero, out, rows, out, rows),
                   "cublasSgeam_64");
    } else {
      const double one = 1.0, zero = 0.0;
      double* out = c.ptr<double>(out_buffer) + b * per;
      check_cublas(api.cublasDgeam_64(h.blas, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one,
                                      c.ptr<const double>(in_buffer) + b * per, cols, &zero, out, rows, out, rows),
                   "cublasDgeam_64");
    }
  }
}

void launch_copy(const case_ctx& c, cudaStream_t s) {
  MEMLAB_CUDA_CHECK(memlab::copy_bytes(c.ptr(out_buffer), c.ptr<const std::byte>(in_buffer),
                                       elements_of(c.p) * size_of(c.p.type), s));
}

const rung_traits& traits_of(const variant& v) { return v.traits_as<rung_traits>(); }

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& /*dev*/) {
  const dims d = dims_of(p);
  const std::size_t es = size_of(p.type);
  // Byte counts (and every index the kernels form) must stay far from 64-bit overflow.
  constexpr std::uint64_t limit = std::uint64_t{1} << 62;
  if (d.rows != 0 && d.cols != 0 && (d.batch > limit / es / d.rows / d.cols)) {
    return std::to_string(d.batch) + " matrices of " + std::to_string(d.rows) + " x " + std::to_string(d.cols) +
           " elements span more than 2^62 bytes";
  }
  const tile_traits& t = traits_of(v).tile;
  if (!has_tiles(t) && p[band_axis] != default_band) {
    return "--band orders memlab's tiles; " + std::string(v.name) + " has none and runs at the default band (" +
           std::to_string(default_band) + ") only";
  }
  if (auto why = shape_rule(v.name, t, es, d)) return why;
  if (tiles_of(t, es, d) > 0x7fffffffu) {
    return std::to_string(tiles_of(t, es, d)) + " tiles (one CTA each) exceed a grid of 2^31 - 1 CTAs";
  }
  if (traits_of(v).cublas) return cublas_unavailable();  // skipped where cuBLAS cannot be loaded
  return std::nullopt;
}

case_plan plan_case(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& r = traits_of(v);
  const std::size_t es = size_of(p.type);
  const dims d = dims_of(p);
  const std::uint64_t payload = elements_of(p) * es;
  case_plan out;
  out.policy = r.policy != nullptr ? r.policy(p, dev) : plan(r.tile, es, d);
  out.bytes = 2 * payload;  // every element read once and written once
  out.working_set = 2 * payload;
  out.buffers = {{"in", payload, buffer_role::input}, {"out", payload, buffer_role::output}};
  if (has_tiles(r.tile)) {
    const launch_cost cost = model(r.tile, es, d);
    out.hardware_bytes = (cost.gld.units + cost.gst.units) * sector_bytes;
    out.model = {{"ld_sectors", cost.gld.per_request()}, {"st_sectors", cost.gst.per_request()}};
    if (r.tile.layout != smem_layout::none) {
      out.model.push_back({"smem_st_wavefronts", cost.sst.per_request()});
      out.model.push_back({"smem_ld_wavefronts", cost.sld.per_request()});
    }
  }
  return out;
}

// memlab::transpose plans from the real addresses; cudaMalloc's are 256-byte aligned.
launch_policy library_policy(const case_params& p, const device_info& dev) {
  const dims d = dims_of(p);
  constexpr std::uintptr_t base = std::uintptr_t{1} << 40;
  const transpose_plan tp = plan_transpose(base, 2 * base, d.batch, d.rows, d.cols, size_of(p.type),
                                           copy_device{dev.sm_count, dev.max_threads_per_sm, dev.cc_major});
  return tp.path == transpose_path::copy ? launch_policy{.threads = tp.copy.threads,
                                                         .items_per_thread = tp.copy.vectors_per_thread,
                                                         .vec_bytes = tp.copy.vec_bytes,
                                                         .grid = tp.copy.grid}
                                         : launch_policy{.threads = tp.threads,
                                                         .items_per_thread = tp.vectors_per_thread,
                                                         .vec_bytes = tp.vec_bytes,
                                                         .grid = tp.grid};
}

launch_policy copy_peer_policy(const case_params& p, const device_info& dev) {
  return copy_policy(elements_of(p) * size_of(p.type), dev);
}

void setup(case_ctx& c) {
  if (const auto f = traits_of(*c.v).setup) f(c);
}

// cuBLAS's handles for the process, and for f16 cublasLtMatrixTransform's descriptors of the case.
void setup_cublas(case_ctx& c) {
  (void)handles();  // created here, outside any timing
  if (c.p.type == dtype::f16) {
    const dims d = dims_of(c.p);
    c.state = std::make_shared<lt_transform>(d.rows, d.cols);
  }
}

// "0x7fc00000": an element's bits, es bytes wide.
std::string hex_bits(std::uint64_t x, std::size_t es) {
  std::string out = "0x";
  for (std::size_t k = es; k-- > 0;) out += hex_byte(static_cast<unsigned>(x >> (8 * k)) & 0xffu).substr(2);
  return out;
}

// cuBLAS's output against the reference, element by element: equal bits, or both NaN.
template <class Bits>
bool same_value(Bits got, Bits want, std::size_t es) {
  const auto nan = [es](Bits x) {
    if (es == 2) return (x & 0x7c00u) == 0x7c00u && (x & 0x03ffu) != 0;
    if (es == 4) return (x & 0x7f800000u) == 0x7f800000u && (x & 0x007fffffu) != 0;
    return (x & 0x7ff0000000000000ull) == 0x7ff0000000000000ull && (x & 0x000fffffffffffffull) != 0;
  };
  return got == want || (nan(got) && nan(want));
}

std::string verify_values(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const dims d = dims_of(c.p);
  const std::size_t es = size_of(c.p.type);
  const std::uint64_t n = elements_of(c.p), seed = c.seeds[in_buffer];
  const device_buffer& out = c.buffers[out_buffer];
  // The guard after the output (check_bytes over the whole allocation would demand equal bits of the
  // payload too).
  if (auto why = check_guard(out, n * es); !why.empty()) return why;
  constexpr std::uint64_t chunk = std::uint64_t{1} << 24;  // elements staged at a time
  std::vector<std::uint8_t> host(std::min(n, chunk) * es);
  for (std::uint64_t first = 0; first < n; first += chunk) {
    const std::uint64_t count = std::min(chunk, n - first);
    MEMLAB_CUDA_CHECK(cudaMemcpy(host.data(), out.data() + first * es, count * es, cudaMemcpyDeviceToHost));
    const auto bits = [&](const std::uint8_t* p) {
      std::uint64_t x = 0;
      std::memcpy(&x, p, es);  // little-endian: the element's bits in the low bytes
      return x;
    };
    const auto want = [&](std::uint64_t e) {
      std::uint8_t b[8]{};
      const std::uint64_t src = source_element(e, d.rows, d.cols);
      for (std::size_t k = 0; k < es; ++k) b[k] = random_byte(seed, src * es + k);
      return bits(b);
    };
    const std::uint64_t bad = first_where(
        count, [&](std::uint64_t i) { return !same_value(bits(host.data() + i * es), want(first + i), es); });
    if (bad == count) continue;
    const std::uint64_t e = first + bad, src = source_element(e, d.rows, d.cols);
    return "element " + std::to_string(e) + " (from input element " + std::to_string(src) + ") is " +
           hex_bits(bits(host.data() + bad * es), es) + ", expected " + hex_bits(want(e), es) +
           " (values compared bit for bit, any NaN for a NaN)";
  }
  return {};
}

// The copy peer: its output is its input, byte for byte.
std::string verify_copy(const case_ctx& c) {
  const std::uint64_t seed = c.seeds[in_buffer], payload = elements_of(c.p) * size_of(c.p.type);
  return check_bytes(c.buffers[out_buffer], 0, payload, size_of(c.p.type),
                     [&](std::uint64_t j) { return random_byte(seed, j); });
}

std::string verify(const case_ctx& c) {
  if (const auto f = traits_of(*c.v).verify) return f(c);
  const dims d = dims_of(c.p);
  return check_elements_from(
      c.buffers[out_buffer], elements_of(c.p), size_of(c.p.type), c.seeds[in_buffer], [&](std::uint64_t e) {
        thread_local source_cursor source;  // one per checking thread: each walks its range in order
        return source(d.rows, d.cols, e);
      });
}

}  // namespace

// ---- the lab's table ------------------------------------------------------------------------------------

const lab& table() {
  // The lab's dtypes: every type a rung moves (rung_dtypes), so --dtype u8 runs memlab::transpose and the copy.
  static const lab transpose_lab = [] {
    lab l{
        .name = "transpose",
        .teaches =
            "bank conflicts in practice: out = in^T through shared memory, conflicted, padded, swizzled, "
            "vectorized, next to cuBLAS and a copy of the same bytes",
        .default_dtype = dtype::f32,
        .default_sizes = "1",
        .size_meaning = "matrices in the batch (each --shape ROWSxCOLS, transposed one after the other)",
        .axes = {shape_axis, band_axis},
        .roof = roof_kind::dram,
        .variants =
            {
                lab_rung<tile_traits{.edge = 32}>({
                    .name = "naive",
                    .teaches =
                        "32x32 tiles, a thread per element: coalesced reads, stores down columns (a sector per lane)",
                }),
                lab_rung<tile_traits{.edge = 32, .layout = smem_layout::row_major}>({
                    .name = "smem",
                    .teaches =
                        "the tile through shared memory (32x32, row-major): coalesced both ways, column reads of the "
                        "tile in one bank",
                }),
                lab_rung<tile_traits{.edge = 32, .layout = smem_layout::padded}>({
                    .name = "smem_padded",
                    .teaches = "+1 word per tile row: the column reads spread over the 32 banks",
                }),
                lab_rung<tile_traits{.edge = 32, .layout = smem_layout::xor_words}>({
                    .name = "smem_swizzled",
                    .teaches = "no padding: word index XOR row, conflict-free rows and columns",
                }),
                lab_rung<tile_traits{.edge = 64, .layout = smem_layout::padded}>({
                    .name = "smem_padded64",
                    .teaches = "smem_padded on 64x64 tiles: 16 elements in flight per thread (64 B of f32, smem_vec's "
                               "bytes) through one-element accesses, the tile size apart from the access width",
                }),
                lab_rung<tile_traits{.edge = 64, .vec_bytes = 16, .layout = smem_layout::xor_slots}>({
                    .name = "smem_vec",
                    .teaches = "64x64 tiles, 16-byte global loads and stores (16 B x sizeof(T) in flight per thread), "
                               "16-byte shared stores into swizzled slots",
                }),
                lab_rung<tile_traits{.row_bytes = 256,
                                     .vec_bytes = 16,
                                     .layout = smem_layout::xor_halves,
                                     .lanes = store_lanes::along_rows,
                                     .min_ctas_per_sm = {.b2 = 4, .b4 = 8, .b8 = 8}}>({
                    .name = "smem_vec_rows",
                    .teaches =
                        "tiles of 256-byte rows, each warp loading and storing two whole rows (smem_vec stores 4 x "
                        "128 B per warp for f32); an 8-byte XOR swizzle, vector halves swapped in registers",
                }),
                {
                    .name = "auto",
                    .teaches =
                        "memlab::transpose, the library: smem_vec_rows where every row of in and out is 16-byte "
                        "aligned, else the same 16-byte accesses realigned in registers, each tile storing whole "
                        "sectors of out; 8-byte elements one per lane (any shape, any alignment)",
                    .launch = launch_auto,
                    .kernels = auto_kernels(),
                    .traits = rung_traits{.policy = library_policy},
                    .dtypes = library_dtypes(),
                },
                {
                    .name = "cublas",
                    .teaches = "cuBLAS: cublasSgeam / cublasDgeam (1 x A^T + 0 x B); f16: cublasLtMatrixTransform",
                    .launch = launch_cublas,
                    .peer = true,
                    .traits = rung_traits{.setup = setup_cublas, .verify = verify_values, .cublas = true},
                    .dtypes = {dtype::f16, dtype::f32, dtype::f64},  // cublasLtMatrixTransform, Sgeam, Dgeam
                },
                // No kernels listed: memlab::copy's are the copy lab's `auto` rung's (`memlab inspect copy`),
                // and a kernel is labelled once.
                {
                    .name = "copy",
                    .teaches = "memlab::copy of the same bytes, not transposed: the ceiling",
                    .launch = launch_copy,
                    .peer = true,
                    .traits = rung_traits{.policy = copy_peer_policy, .verify = verify_copy},
                },
            },
        .unsupported = refusal,
        .plan = plan_case,
        .setup = setup,
        .verify = verify,
    };
    l.dtypes = rung_dtypes(l.variants);
    return l;
  }();
  return transpose_lab;
}

}  // namespace memlab::labs::transpose
