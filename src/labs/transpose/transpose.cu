// The transpose lab: bank conflicts in practice. out = in^T for a batch of row-major matrices, moved
// through shared memory so that both the reads of `in` and the writes of `out` stay coalesced, and
// what the banks then cost.
//
// Assumes: f16, f32 or f64; `in` is n matrices of rows x cols (--shape), one after the other, `out`
// receives their transposes (cols x rows) in the same order; both are separate cudaMalloc allocations
// (256-byte aligned). The geometry every kernel shares with the host model (which element a thread
// moves in each step, where an element of a tile lives in shared memory) is in transpose.hpp; the
// model itself (sectors per global request, wavefronts per shared request) in model.cpp.
//
// The ladder, in reading order; each rung adds one thing:
//   naive          a thread per element of a 32 x 32 tile (4 per thread): reads along a row of `in`
//                  (coalesced), writes down a column of `out`: a warp's 32 stores land in 32 rows, 32
//                  sectors for 128 useful bytes (f32).
//   smem           the tile goes through shared memory (32 x 32, row-major): reads and writes of
//                  global memory are both row segments now, but the column reads of the tile hit one
//                  bank 32 times (f32: 32 wavefronts per request).
//   smem_padded    + one 4-byte word per tile row: a column walks across all 32 banks (1 wavefront).
//   smem_swizzled  no padding: the word index XORed with the row, the same effect at no extra space.
//   smem_vec       64 x 64 tiles, 16-byte global loads and stores (4 per thread for f32), whole 16-byte
//                  vectors into shared memory, element reads out of it; a 16-byte-slot swizzle keeps
//                  both at their fewest wavefronts. A warp's 16-byte stores cover 4 output rows x 128 B.
//   smem_vec_rows  tiles of 256-byte rows (256 / sizeof(T) elements square) and every warp access two
//                  whole rows, loads and stores: longer runs per warp request at the same bytes; the
//                  swizzle moves to 8-byte units so that the element reads stay conflict-free.
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

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "harness/check.hpp"
#include "harness/copy_peer.hpp"
#include "harness/cublas_check.hpp"
#include "harness/error.hpp"
#include "harness/launch.cuh"
#include "labs/transpose/transpose.hpp"
#include "memlab/arch/st_global.cuh"
#include "memlab/copy.cuh"
#include "memlab/transpose.cuh"

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

// A thread per element, 4 per thread: loads along rows (lane = column: coalesced), stores down
// columns of `out` (lane = output row: one sector per lane). All 4 loads are issued before a store.
template <class T>
__global__ void __launch_bounds__(threads32) naive_kernel(T* __restrict__ out, const T* __restrict__ in, matrices m) {
  const tile_origin o = tile_of(m, tile32);
  const std::uint64_t tx = threadIdx.x % 32, ty = threadIdx.x / 32, c = o.c0 + tx;
  T v[items32]{};
#pragma unroll
  for (int j = 0; j < items32; ++j) {
    const std::uint64_t r = o.r0 + ty + block_rows * j;
    if (r < m.rows && c < m.cols) v[j] = in[o.base + r * m.cols + c];
  }
#pragma unroll
  for (int j = 0; j < items32; ++j) {
    const std::uint64_t r = o.r0 + ty + block_rows * j;
    if (r < m.rows && c < m.cols) out[o.base + c * m.rows + r] = v[j];  // (32) rows apart across the warp
  }
}

namespace {

// The 32 x 32 tile through shared memory, laid out as Layout says (smem32_offset, transpose.hpp).
// In: warp ty reads tile rows ty + 8 j, lane tx column tx (a row segment of `in`), and writes them to
// tile row ty + 8 j. Out: warp ty writes output rows ty + 8 j of the tile (= tile columns), lane tx
// output column tx (a row segment of `out`), reading tile element (tx, ty + 8 j): a column.
template <variant_id Layout, class T>
__device__ __forceinline__ void transpose_tile32(T* __restrict__ out, const T* __restrict__ in, const matrices& m) {
  constexpr std::size_t es = sizeof(T);
  __shared__ __align__(16) unsigned char tile[smem32_bytes(Layout, es)];
  const auto at = [&](std::uint32_t r, std::uint32_t c) -> T& {
    return *reinterpret_cast<T*>(tile + smem32_offset(Layout, es, r, c));
  };
  const tile_origin o = tile_of(m, tile32);
  const std::uint32_t tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  T v[items32]{};
#pragma unroll
  for (int j = 0; j < items32; ++j) {  // all 4 loads in flight before the first shared store
    const std::uint64_t r = o.r0 + ty + block_rows * j;
    if (r < m.rows && o.c0 + tx < m.cols) v[j] = in[o.base + r * m.cols + o.c0 + tx];
  }
#pragma unroll
  for (int j = 0; j < items32; ++j) {
    if (o.r0 + ty + block_rows * j < m.rows && o.c0 + tx < m.cols) at(ty + block_rows * j, tx) = v[j];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < items32; ++j) {
    const std::uint32_t c = ty + block_rows * j;  // the output row in the tile = the input column
    if (o.c0 + c < m.cols && o.r0 + tx < m.rows) out[o.base + (o.c0 + c) * m.rows + o.r0 + tx] = at(tx, c);
  }
}

}  // namespace

// 32 x 32 row-major tile: the column reads of `at(tx, c)` are 32 words 128 B apart (f32): one bank.
template <class T>
__global__ void __launch_bounds__(threads32) smem_kernel(T* __restrict__ out, const T* __restrict__ in, matrices m) {
  transpose_tile32<variant_id::smem>(out, in, m);
}

// One word of padding per row: the column's words are 33 words apart, on 32 different banks.
template <class T>
__global__ void __launch_bounds__(threads32)
    smem_padded_kernel(T* __restrict__ out, const T* __restrict__ in, matrices m) {
  transpose_tile32<variant_id::smem_padded>(out, in, m);
}

// No padding; word index XOR row: a column's 32 words land on 32 different banks, and so do a row's.
template <class T>
__global__ void __launch_bounds__(threads32)
    smem_swizzled_kernel(T* __restrict__ out, const T* __restrict__ in, matrices m) {
  transpose_tile32<variant_id::smem_swizzled>(out, in, m);
}

namespace {

// The bits of one element, for packing V of them into a 16-byte vector without local memory.
template <std::size_t Bytes>
struct bits_of;
template <>
struct bits_of<2> {
  using type = std::uint16_t;
};
template <>
struct bits_of<4> {
  using type = std::uint32_t;
};
template <>
struct bits_of<8> {
  using type = std::uint64_t;
};

__device__ __forceinline__ uint4 pack16(const std::uint32_t (&x)[4]) { return {x[0], x[1], x[2], x[3]}; }
__device__ __forceinline__ uint4 pack16(const std::uint16_t (&x)[8]) {
  const auto pair = [&](int i) { return static_cast<unsigned>(x[i]) | static_cast<unsigned>(x[i + 1]) << 16; };
  return {pair(0), pair(2), pair(4), pair(6)};
}
__device__ __forceinline__ uint4 pack16(const std::uint64_t (&x)[2]) {
  const auto lo = [](std::uint64_t w) { return static_cast<unsigned>(w); };
  const auto hi = [](std::uint64_t w) { return static_cast<unsigned>(w >> 32); };
  return {lo(x[0]), hi(x[0]), lo(x[1]), hi(x[1])};
}

}  // namespace

// 64 x 64 tile, 16-byte global accesses both ways (vec_load_pos / vec_store_pos, transpose.hpp):
// sizeof(T) 16-byte loads per thread, all in flight before the first shared store; each store step
// reads V elements of one tile column (V consecutive input rows) from shared memory and writes them as
// one 16-byte vector of an output row. Needs rows and cols multiples of V (the lab refuses others);
// a cut tile at the matrix's edge is cut at whole vectors.
template <class T>
__global__ void __launch_bounds__(vec_threads)
    smem_vec_kernel(T* __restrict__ out, const T* __restrict__ in, matrices m) {
  constexpr std::size_t es = sizeof(T);
  constexpr std::uint32_t per = vec_elems(es);
  constexpr int steps = vec_steps(es);
  using bits = typename bits_of<es>::type;
  __shared__ __align__(128) unsigned char tile[vec_smem_bytes(es)];
  const tile_origin o = tile_of(m, vec_tile);
  const int t = static_cast<int>(threadIdx.x);
  uint4 v[steps];
#pragma unroll
  for (int i = 0; i < steps; ++i) {
    const tile_pos p = vec_load_pos(es, t, i);
    if (o.r0 + p.r < m.rows && o.c0 + p.c < m.cols)
      v[i] = *reinterpret_cast<const uint4*>(in + o.base + (o.r0 + p.r) * m.cols + o.c0 + p.c);
  }
#pragma unroll
  for (int i = 0; i < steps; ++i) {
    const tile_pos p = vec_load_pos(es, t, i);
    if (o.r0 + p.r < m.rows && o.c0 + p.c < m.cols) *reinterpret_cast<uint4*>(tile + vec_offset(es, p.r, p.c)) = v[i];
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < steps; ++j) {
    const tile_pos p = vec_store_pos(es, t, j);  // p.r: the first of V input rows; p.c: the output row
    if (o.c0 + p.c < m.cols && o.r0 + p.r < m.rows) {
      bits x[per];
#pragma unroll
      for (std::uint32_t k = 0; k < per; ++k)
        x[k] = *reinterpret_cast<const bits*>(tile + vec_offset(es, p.r + k, p.c));
      arch::st_global_v4(out + o.base + (o.c0 + p.c) * m.rows + o.r0 + p.r,
                         pack16(x));  // a plain uint4 store: 4x STG.E
    }
  }
}

// Tiles of 256-byte rows (E = 256 / sizeof(T) elements square), every warp access two whole rows of
// one, both ways (rows_load_pos / rows_store_pos, transpose.hpp): smem_vec's store steps wrote 4 rows x
// 128 B per warp (f32). The 8-byte-unit swizzle (rows_offset) moves a loaded vector into its slot whole,
// its halves swapped in registers on odd row groups (rows_slot).
// At least 8 CTAs (2048 threads) per SM for f32 and f64: ptxas gave the f32 kernel 33 registers, which
// rounds to 40 and leaves room for 6; at 32 it keeps 8 without spilling. f16's 32 KiB tiles allow at
// most 6 CTAs anyway (and 16 B x 8 loads per thread need the registers).
template <class T>
__global__ void __launch_bounds__(vec_threads, sizeof(T) == 2 ? 4 : 8)
    smem_vec_rows_kernel(T* __restrict__ out, const T* __restrict__ in, matrices m) {
  constexpr std::size_t es = sizeof(T);
  constexpr std::uint32_t per = vec_elems(es);
  constexpr int steps = rows_steps(es);
  using bits = typename bits_of<es>::type;
  __shared__ __align__(128) unsigned char tile[rows_smem_bytes(es)];
  const tile_origin o = tile_of(m, rows_edge(es));
  const int t = static_cast<int>(threadIdx.x);
  uint4 v[steps];
#pragma unroll
  for (int i = 0; i < steps; ++i) {
    const tile_pos p = rows_load_pos(es, t, i);
    if (o.r0 + p.r < m.rows && o.c0 + p.c < m.cols)
      v[i] = *reinterpret_cast<const uint4*>(in + o.base + (o.r0 + p.r) * m.cols + o.c0 + p.c);
  }
#pragma unroll
  for (int i = 0; i < steps; ++i) {
    const tile_pos p = rows_load_pos(es, t, i);
    if (o.r0 + p.r < m.rows && o.c0 + p.c < m.cols) {
      const slot s = rows_slot(es, p.r, p.c);
      *reinterpret_cast<uint4*>(tile + s.offset) = s.swap_halves ? uint4{v[i].z, v[i].w, v[i].x, v[i].y} : v[i];
    }
  }
  __syncthreads();
#pragma unroll
  for (int j = 0; j < steps; ++j) {
    const tile_pos p = rows_store_pos(es, t, j);  // p.r: the first of V input rows; p.c: the output row
    if (o.c0 + p.c < m.cols && o.r0 + p.r < m.rows) {
      bits x[per];
#pragma unroll
      for (std::uint32_t k = 0; k < per; ++k)
        x[k] = *reinterpret_cast<const bits*>(tile + rows_offset(es, p.r + k, p.c));
      arch::st_global_v4(out + o.base + (o.c0 + p.c) * m.rows + o.r0 + p.r, pack16(x));
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
    check_cublas(cublasCreate(&x.blas), "cublasCreate");
    check_cublas(cublasLtCreate(&x.lt), "cublasLtCreate");
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
    check_cublas(cublasLtMatrixTransformDescCreate(&desc, CUDA_R_32F), "cublasLtMatrixTransformDescCreate");
    const cublasOperation_t t = CUBLAS_OP_T;
    check_cublas(cublasLtMatrixTransformDescSetAttribute(desc, CUBLASLT_MATRIX_TRANSFORM_DESC_TRANSA, &t, sizeof(t)),
                 "cublasLtMatrixTransformDescSetAttribute");
    check_cublas(cublasLtMatrixLayoutCreate(&a, CUDA_R_16F, cols, rows, static_cast<std::int64_t>(cols)),
                 "cublasLtMatrixLayoutCreate");
    check_cublas(cublasLtMatrixLayoutCreate(&c, CUDA_R_16F, rows, cols, static_cast<std::int64_t>(rows)),
                 "cublasLtMatrixLayoutCreate");
  }
  ~lt_transform() {
    if (c != nullptr) (void)cublasLtMatrixLayoutDestroy(c);
    if (a != nullptr) (void)cublasLtMatrixLayoutDestroy(a);
    if (desc != nullptr) (void)cublasLtMatrixTransformDescDestroy(desc);
  }
  lt_transform(const lt_transform&) = delete;
  lt_transform& operator=(const lt_transform&) = delete;
};

}  // namespace

// ---- plans, refusals and launchers --------------------------------------------------------------------

namespace {

enum buffer_index { in_buffer, out_buffer };

const axis shape_axis{"shape",
                      "each matrix's ROWSxCOLS (elements); the output holds their COLSxROWS transposes",
                      axis_grammar::shape,
                      "16384x16384,10000x7000",
                      0,
                      std::uint64_t{1} << 31,
                      {"rows", "cols"}};
const axis band_axis{"band",
                     "tile rows a band of consecutive CTAs walks down before moving right (memlab's "
                     "kernels; the peers run at the default only)",
                     axis_grammar::counts,
                     "1",
                     1,
                     1u << 20};
constexpr std::uint64_t default_band = 1;

dims dims_of(const case_params& p) { return {p.n, p.shape(shape_axis)[0], p.shape(shape_axis)[1]}; }
std::uint64_t elements_of(const case_params& p) {
  const dims d = dims_of(p);
  return d.batch * d.rows * d.cols;
}

// A rung: its kernel for each element type, named once for launch and for `memlab inspect`.
struct naive_rung {
  template <class T>
  static auto kernel() {
    return &naive_kernel<T>;
  }
};
struct smem_rung {
  template <class T>
  static auto kernel() {
    return &smem_kernel<T>;
  }
};
struct smem_padded_rung {
  template <class T>
  static auto kernel() {
    return &smem_padded_kernel<T>;
  }
};
struct smem_swizzled_rung {
  template <class T>
  static auto kernel() {
    return &smem_swizzled_kernel<T>;
  }
};
struct smem_vec_rung {
  template <class T>
  static auto kernel() {
    return &smem_vec_kernel<T>;
  }
};
struct smem_vec_rows_rung {
  template <class T>
  static auto kernel() {
    return &smem_vec_rows_kernel<T>;
  }
};

template <class Rung>
std::vector<kernel_ref> kernels_of_lab_dtypes() {
  return kernels_of<Rung, __half, float, double>();
}

template <class F>
decltype(auto) visit_lab_dtype(dtype t, F&& f) {
  switch (t) {
    case dtype::f16: return f(__half{});
    case dtype::f32: return f(float{});
    case dtype::f64: return f(double{});
    default: break;
  }
  throw std::invalid_argument("transpose: dtype " + std::string(to_string(t)) + " is not built (f16, f32, f64)");
}

template <class Rung>
void launch_rung(const case_ctx& c, cudaStream_t s) {
  const launch_policy& p = c.plan.policy;
  if (p.grid == 0) return;
  const dims d = dims_of(c.p);
  const auto edge = static_cast<std::uint64_t>(tile_edge(c.v->traits_as<variant_id>(), size_of(c.p.type)));
  const matrices m{d.rows, d.cols, ceil_div(d.rows, edge), ceil_div(d.cols, edge), c.p[band_axis]};
  visit_lab_dtype(c.p.type, [&](auto tag) {
    using T = decltype(tag);
    Rung::template kernel<T>()<<<grid_of(p.grid, "transpose"), static_cast<unsigned>(p.threads), 0, s>>>(
        c.ptr<T>(out_buffer), c.ptr<const T>(in_buffer), m);
  });
  MEMLAB_CUDA_CHECK_LAUNCH();
}

// auto: memlab::transpose, the library, which picks its path from the pointers and the shape.
void launch_auto(const case_ctx& c, cudaStream_t s) {
  const dims d = dims_of(c.p);
  visit_lab_dtype(c.p.type, [&](auto tag) {
    using T = decltype(tag);
    MEMLAB_CUDA_CHECK(
        memlab::transpose_batched(c.ptr<T>(out_buffer), c.ptr<const T>(in_buffer), d.batch, d.rows, d.cols, s));
  });
}

// memlab::transpose's kernels (include/memlab/transpose.cuh) for the lab's element sizes: every path it may
// launch; the copy path's kernels are the copy lab's `auto` rung's.
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
  const cublas_handles& h = handles();
  const std::uint64_t per = d.rows * d.cols;
  const auto rows = static_cast<std::int64_t>(d.rows), cols = static_cast<std::int64_t>(d.cols);
  if (c.p.type == dtype::f16) {
    const auto& lt = *std::any_cast<const std::shared_ptr<lt_transform>&>(c.state);
    const float one = 1.0f, zero = 0.0f;
    for (std::uint64_t b = 0; b < d.batch; ++b) {
      check_cublas(cublasLtMatrixTransform(h.lt, lt.desc, &one, c.ptr<const __half>(in_buffer) + b * per, lt.a, &zero,
                                           nullptr, nullptr, c.ptr<__half>(out_buffer) + b * per, lt.c, s),
                   "cublasLtMatrixTransform");
    }
    return;
  }
  check_cublas(cublasSetStream(h.blas, s), "cublasSetStream");
  for (std::uint64_t b = 0; b < d.batch; ++b) {
    if (c.p.type == dtype::f32) {
      const float one = 1.0f, zero = 0.0f;
      float* out = c.ptr<float>(out_buffer) + b * per;
      check_cublas(cublasSgeam_64(h.blas, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one,
                                  c.ptr<const float>(in_buffer) + b * per, cols, &zero, out, rows, out, rows),
                   "cublasSgeam_64");
    } else {
      const double one = 1.0, zero = 0.0;
      double* out = c.ptr<double>(out_buffer) + b * per;
      check_cublas(cublasDgeam_64(h.blas, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one,
                                  c.ptr<const double>(in_buffer) + b * per, cols, &zero, out, rows, out, rows),
                   "cublasDgeam_64");
    }
  }
}

void launch_copy(const case_ctx& c, cudaStream_t s) {
  MEMLAB_CUDA_CHECK(memlab::copy_bytes(c.ptr(out_buffer), c.ptr<const std::byte>(in_buffer),
                                       elements_of(c.p) * size_of(c.p.type), s));
}

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& /*dev*/) {
  const dims d = dims_of(p);
  const std::size_t es = size_of(p.type);
  // Byte counts (and every index the kernels form) must stay far from 64-bit overflow.
  constexpr std::uint64_t limit = std::uint64_t{1} << 62;
  if (d.rows != 0 && d.cols != 0 && (d.batch > limit / es / d.rows / d.cols)) {
    return std::to_string(d.batch) + " matrices of " + std::to_string(d.rows) + " x " + std::to_string(d.cols) +
           " elements span more than 2^62 bytes";
  }
  const auto id = v.traits_as<variant_id>();
  if ((v.peer || id == variant_id::library) && p[band_axis] != default_band) {
    return "--band orders memlab's tiles; " + std::string(v.name) + " has none and runs at the default band (" +
           std::to_string(default_band) + ") only";
  }
  if (auto why = shape_rule(id, es, d)) return why;
  if (tiles_of(id, es, d) > 0x7fffffffu) {
    return std::to_string(tiles_of(id, es, d)) + " tiles (one CTA each) exceed a grid of 2^31 - 1 CTAs";
  }
  return std::nullopt;
}

case_plan plan_case(const variant& v, const case_params& p, const device_info& dev) {
  const auto id = v.traits_as<variant_id>();
  const std::size_t es = size_of(p.type);
  const dims d = dims_of(p);
  const std::uint64_t payload = elements_of(p) * es;
  case_plan out;
  out.policy = plan(id, es, d);
  out.bytes = 2 * payload;  // every element read once and written once
  out.working_set = 2 * payload;
  out.buffers = {{"in", payload, buffer_role::input}, {"out", payload, buffer_role::output}};
  if (id == variant_id::library) {
    // memlab::transpose plans from the real addresses; cudaMalloc's are 256-byte aligned.
    constexpr std::uintptr_t base = std::uintptr_t{1} << 40;
    const transpose_plan tp = plan_transpose(base, 2 * base, d.batch, d.rows, d.cols, es,
                                             copy_device{dev.sm_count, dev.max_threads_per_sm, dev.cc_major});
    out.policy = tp.path == transpose_path::copy
                     ? launch_policy{tp.copy.threads, tp.copy.vectors_per_thread, tp.copy.vec_bytes, 0, tp.copy.grid}
                     : launch_policy{tp.threads, tp.vectors_per_thread, tp.vec_bytes, 0, tp.grid};
    out.model = {};
  }
  if (id == variant_id::copy) {
    out.policy = copy_policy(payload, dev);
  }
  if (tile_edge(id, es) > 0) {
    const launch_cost cost = model(id, es, d);
    out.hardware_bytes = (cost.gld.units + cost.gst.units) * sector_bytes;
    out.model = {{"ld_sectors", cost.gld.per_request()}, {"st_sectors", cost.gst.per_request()}};
    if (id != variant_id::naive) {
      out.model.push_back({"smem_st_wavefronts", cost.sst.per_request()});
      out.model.push_back({"smem_ld_wavefronts", cost.sld.per_request()});
    }
  }
  return out;
}

void setup(case_ctx& c) {
  if (c.v->traits_as<variant_id>() != variant_id::cublas) return;
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

std::string verify(const case_ctx& c) {
  const auto id = c.v->traits_as<variant_id>();
  if (id == variant_id::cublas) return verify_values(c);
  const std::size_t es = size_of(c.p.type);
  const std::uint64_t seed = c.seeds[in_buffer], payload = elements_of(c.p) * es;
  if (id == variant_id::copy) {
    return check_bytes(c.buffers[out_buffer], 0, payload, es, [&](std::uint64_t j) { return random_byte(seed, j); });
  }
  const dims d = dims_of(c.p);
  return check_elements_from(c.buffers[out_buffer], elements_of(c.p), es, seed, [&](std::uint64_t e) {
    thread_local source_cursor source;  // one per checking thread: each walks its range in order
    return source(d.rows, d.cols, e);
  });
}

}  // namespace

// ---- the lab's table ------------------------------------------------------------------------------------

const lab& table() {
  static const lab transpose_lab{
      .name = "transpose",
      .teaches =
          "bank conflicts in practice: out = in^T through shared memory, conflicted, padded, swizzled, "
          "vectorized, next to cuBLAS and a copy of the same bytes",
      .dtypes = {dtype::f16, dtype::f32, dtype::f64},
      .default_dtype = dtype::f32,
      .default_sizes = "1",
      .size_meaning = "matrices in the batch (each --shape ROWSxCOLS, transposed one after the other)",
      .axes = {shape_axis, band_axis},
      .roof = roof_kind::dram,
      .variants =
          {
              {
                  .name = "naive",
                  .teaches =
                      "32x32 tiles, a thread per element: coalesced reads, stores down columns (a sector per lane)",
                  .launch = launch_rung<naive_rung>,
                  .kernels = kernels_of_lab_dtypes<naive_rung>(),
                  .traits = variant_id::naive,
              },
              {
                  .name = "smem",
                  .teaches =
                      "the tile through shared memory (32x32, row-major): coalesced both ways, column reads of the "
                      "tile in one bank",
                  .launch = launch_rung<smem_rung>,
                  .kernels = kernels_of_lab_dtypes<smem_rung>(),
                  .traits = variant_id::smem,
              },
              {
                  .name = "smem_padded",
                  .teaches = "+1 word per tile row: the column reads spread over the 32 banks",
                  .launch = launch_rung<smem_padded_rung>,
                  .kernels = kernels_of_lab_dtypes<smem_padded_rung>(),
                  .traits = variant_id::smem_padded,
              },
              {
                  .name = "smem_swizzled",
                  .teaches = "no padding: word index XOR row, conflict-free rows and columns",
                  .launch = launch_rung<smem_swizzled_rung>,
                  .kernels = kernels_of_lab_dtypes<smem_swizzled_rung>(),
                  .traits = variant_id::smem_swizzled,
              },
              {
                  .name = "smem_vec",
                  .teaches = "64x64 tiles, 16-byte global loads and stores (16 B x sizeof(T) in flight per thread), "
                             "16-byte shared stores into swizzled slots",
                  .launch = launch_rung<smem_vec_rung>,
                  .kernels = kernels_of_lab_dtypes<smem_vec_rung>(),
                  .needs = {.alignment = 16, .shape = "rows and columns of whole 16-byte vectors"},
                  .traits = variant_id::smem_vec,
              },
              {
                  .name = "smem_vec_rows",
                  .teaches =
                      "tiles of 256-byte rows, each warp loading and storing two whole rows (smem_vec stores 4 x "
                      "128 B per warp for f32); an 8-byte XOR swizzle, vector halves swapped in registers",
                  .launch = launch_rung<smem_vec_rows_rung>,
                  .kernels = kernels_of_lab_dtypes<smem_vec_rows_rung>(),
                  .needs = {.alignment = 16, .shape = "rows and columns of whole 16-byte vectors"},
                  .traits = variant_id::smem_vec_rows,
              },
              {
                  .name = "auto",
                  .teaches =
                      "memlab::transpose, the library: smem_vec_rows where every row of in and out is 16-byte "
                      "aligned, else the same 16-byte accesses realigned in registers, each tile storing whole "
                      "sectors of out; 8-byte elements one per lane (any shape, any alignment)",
                  .launch = launch_auto,
                  .kernels = auto_kernels(),
                  .traits = variant_id::library,
              },
              {
                  .name = "cublas",
                  .teaches = "cuBLAS: cublasSgeam / cublasDgeam (1 x A^T + 0 x B); f16: cublasLtMatrixTransform",
                  .launch = launch_cublas,
                  .peer = true,
                  .traits = variant_id::cublas,
              },
              // No kernels listed: memlab::copy's are the copy lab's `auto` rung's (`memlab inspect copy`),
              // and a kernel is labelled once.
              {
                  .name = "copy",
                  .teaches = "memlab::copy of the same bytes, not transposed: the ceiling",
                  .launch = launch_copy,
                  .peer = true,
                  .traits = variant_id::copy,
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = setup,
      .verify = verify,
  };
  return transpose_lab;
}

}  // namespace memlab::labs::transpose
