// The matmul lab: reuse through tiling. C = A·B in f32, row-major, from one output per thread to a
// register-blocked, warptiled, double-buffered SIMT kernel, next to cuBLAS (SGEMM, and TF32 tensor
// cores as a separately labelled peer), under the FP32 roof (SMs x 128 lanes x 2 x the SM clock
// measured during each case).
//
// Assumes: f32 only. The run's size is n (columns of B and C); the m and k axes give the rows of A
// and the inner dimension, 0 meaning "the same as n", so `--sizes 4096` is 4096 x 4096 x 4096.
// The vectorized rungs (vectorized, warptiled, double_buffered) need n and k multiples of 4 and
// refuse other shapes; every other rung and the peers take any shape. Each matrix holds fewer than
// 2^31 elements (32-bit indices).
//
// Inputs: the harness's random bytes, read as floats, hold NaN, infinities and huge values, so A and
// B are the lab's own scratch buffers, filled in setup by a counter-based hash with odd multiples of
// 2^-24 in (-1, 1) (never zero; a fresh seed per case). C is the harness's output buffer, poisoned
// with a guard behind it.
//
// The check (verify): the CPU reference sums each checked element in double, together with
// sum_p |a_ip b_pj|; an element passes when |got - ref| <= gamma_k x that sum, gamma_k = k u / (1 - k u)
// with u = 2^-24 (the worst-case error of any f32 summation order, Higham 3.1); the TF32 peer adds
// its inputs' rounding (model.cpp, error_bound). Small products are checked whole; larger ones on
// whole rows and columns (the edges and two random) and on one element in every 64 x 64 block of C.
// The guard behind C must still hold poison.
//
// Reading order: the CPU reference, the kernels (kernels.cuh, naive -> best), the peers, then
// plans, refusals, setup, the check and the lab's table.
#include <cublas_v2.h>

#include <cuda/cmath>

#include <algorithm>
#include <any>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "harness/check.hpp"
#include "harness/cublas_check.hpp"
#include "harness/cublas_loader.hpp"
#include "harness/error.hpp"
#include "harness/launch.cuh"
#include "harness/text.hpp"
#include "labs/matmul/kernels.cuh"
#include "labs/matmul/matmul.hpp"

namespace memlab::labs::matmul {

// ---- the CPU reference ----------------------------------------------------------------------------

// C_ij = sum_p A_ip B_pj, summed in double, and sum_p |A_ip B_pj| for the error bound.
struct reference_value {
  double value = 0, sum_abs = 0;
};

// One element from row i of A and column j of B, the column already gathered (b_col[p] = B_pj).
reference_value reference_dot(const float* a_row, const float* b_col, std::uint64_t k) {
  reference_value r;
  for (std::uint64_t p = 0; p < k; ++p) {
    const double t = static_cast<double>(a_row[p]) * static_cast<double>(b_col[p]);
    r.value += t;
    r.sum_abs += std::fabs(t);
  }
  return r;
}

// Columns [j0, j1) of row i of C: A_ip times row p of B, accumulated over p (B read row by row).
void reference_row(const float* A, const float* B, const gemm_shape& s, std::uint64_t i, std::uint64_t j0,
                   std::uint64_t j1, reference_value* out) {
  std::fill(out, out + (j1 - j0), reference_value{});
  for (std::uint64_t p = 0; p < s.k; ++p) {
    const double a = A[i * s.k + p];
    const float* b = B + p * s.n;
    for (std::uint64_t j = j0; j < j1; ++j) {
      const double t = a * static_cast<double>(b[j]);
      out[j - j0].value += t;
      out[j - j0].sum_abs += std::fabs(t);
    }
  }
}

// ---- the peers ----------------------------------------------------------------------------------------
//   cublas_sgemm  cublasSgemm, CUBLAS_DEFAULT_MATH: f32 products on the FP32 pipes, what the SIMT
//                 ladder is measured against
//   cublas_tf32   cublasGemmEx with CUBLAS_COMPUTE_32F_FAST_TF32: the same f32 buffers, but the inputs
//                 rounded to TF32 (10-bit mantissa) and multiplied on tensor cores. Not an f32
//                 product (its own, looser bound in the check); here for scale only, under the TF32
//                 roof (its record's roof), not the FP32 one.
// cuBLAS is column-major: row-major C = A·B is column-major C^T = B^T·A^T, so cuBLAS is handed B as
// the (n, k) first operand (ld n) and A as the (k, m) second (ld k), and writes C^T (n, m) with ld n:
// the same bytes as row-major C.

namespace {

// One handle per case, created in setup (never per launch), destroyed with the case.
class blas_handle {
 public:
  blas_handle() {
    check_cublas(cublas().cublasCreate_v2(&h_), "cublasCreate");
    check_cublas(cublas().cublasSetMathMode(h_, CUBLAS_DEFAULT_MATH), "cublasSetMathMode");  // no TF32 in SGEMM
  }
  ~blas_handle() {
    if (h_ != nullptr) (void)cublas().cublasDestroy_v2(h_);
  }
  blas_handle(const blas_handle&) = delete;
  blas_handle& operator=(const blas_handle&) = delete;
  [[nodiscard]] cublasHandle_t get() const { return h_; }

 private:
  cublasHandle_t h_ = nullptr;
};

// cuBLAS's workspace, a scratch buffer of the case: allocated before timing, so that no launch
// allocates and every launch can be captured in a CUDA graph. 32 MiB: cuBLAS's recommendation for Hopper.
constexpr std::uint64_t workspace_bytes = std::uint64_t{32} << 20;

// ---- plans, refusals, setup and launchers ---------------------------------------------------------------

enum buffer_index { a_buffer, b_buffer, c_buffer, workspace_buffer };

const axis m_axis{.name = "m",
                  .meaning = "rows of A and C; 0 = the same as n (the size)",
                  .unit = "elements",
                  .defaults = "0",
                  .max = max_extent};
const axis k_axis{.name = "k",
                  .meaning = "the inner dimension: columns of A, rows of B; 0 = the same as n",
                  .unit = "elements",
                  .defaults = "0",
                  .max = max_extent};

gemm_shape shape_of(const case_params& p) { return resolve(p.n, p[m_axis], p[k_axis]); }

// What setup leaves for launch and verify.
struct case_state {
  std::uint64_t seed_a = 0, seed_b = 0;
  std::shared_ptr<blas_handle> blas;  // the peers' handle (std::any needs a copyable state)
};
const case_state& state_of(const case_ctx& c) { return std::any_cast<const case_state&>(c.state); }

const rung_traits& traits_of(const variant& v) { return v.traits_as<rung_traits>(); }

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& /*dev*/) {
  if (p.type != dtype::f32) return "matmul is f32 only (" + std::string(to_string(p.type)) + " asked)";
  if (auto why = shape_rule(traits_of(v).tile, shape_of(p))) return why;
  if (v.peer) return cublas_unavailable();  // the peers are cuBLAS's: skipped where it cannot be loaded
  return std::nullopt;
}

case_plan plan_case(const variant& v, const case_params& p, const device_info& /*dev*/) {
  const gemm_shape s = shape_of(p);
  case_plan out;
  out.policy = plan(traits_of(v).tile, s);
  out.flops = flops_of(s);
  out.bytes = bytes_of(s);  // A and B read once, C written once: the roofline's DRAM bytes
  out.working_set = bytes_of(s);
  out.buffers = {{"a", 4 * s.m * s.k, buffer_role::scratch},
                 {"b", 4 * s.k * s.n, buffer_role::scratch},
                 {"c", 4 * s.m * s.n, buffer_role::output}};
  if (v.peer) out.buffers.push_back({"cublas_workspace", workspace_bytes, buffer_role::scratch});
  return out;
}

void fill_inputs(float* dst, std::uint64_t count, std::uint64_t seed) {
  if (count == 0) return;
  const std::uint64_t blocks = std::min<std::uint64_t>(cuda::ceil_div(count, std::uint64_t{256}), 4096);
  fill_inputs_kernel<<<grid_of(blocks, "matmul"), 256>>>(dst, count, seed);
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void setup(case_ctx& c) {
  const gemm_shape s = shape_of(c.p);
  case_state st;
  st.seed_a = next_seed();
  st.seed_b = next_seed();
  fill_inputs(c.ptr<float>(a_buffer), s.m * s.k, st.seed_a);
  fill_inputs(c.ptr<float>(b_buffer), s.k * s.n, st.seed_b);
  if (c.v->peer) st.blas = std::make_shared<blas_handle>();
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  c.state = std::move(st);
}

// The rung's kernel on the planned grid: kernel(C, A, B, m, n, k), x over column tiles, y over rows.
template <auto Kernel, tiling T>
void launch_rung(const case_ctx& c, cudaStream_t st) {
  const gemm_shape s = shape_of(c.p);
  if (s.m == 0 || s.n == 0) return;
  const dim3 grid(static_cast<unsigned>(cuda::ceil_div(s.n, static_cast<std::uint64_t>(T.tile_n))),
                  static_cast<unsigned>(cuda::ceil_div(s.m, static_cast<std::uint64_t>(T.tile_m))));
  // One output per thread: a 2D CTA, threadIdx.x along n, threadIdx.y along m.
  const dim3 block = T.outputs == 1 ? dim3(static_cast<unsigned>(T.tile_n), static_cast<unsigned>(T.tile_m))
                                    : dim3(static_cast<unsigned>(T.threads));
  Kernel<<<grid, block, 0, st>>>(c.ptr<float>(c_buffer), c.ptr<const float>(a_buffer), c.ptr<const float>(b_buffer),
                                 static_cast<int>(s.m), static_cast<int>(s.n), static_cast<int>(s.k));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

// cuBLAS: SGEMM, or GemmEx with TF32 tensor cores where the record says the inputs are rounded to TF32.
void launch_cublas(const case_ctx& c, cudaStream_t st) {
  const gemm_shape s = shape_of(c.p);
  if (s.m == 0 || s.n == 0) return;
  const cublas_api& api = cublas();
  const cublasHandle_t h = state_of(c).blas->get();
  check_cublas(api.cublasSetStream_v2(h, st), "cublasSetStream");
  // After cublasSetStream, which resets the workspace to cuBLAS's own pool.
  check_cublas(api.cublasSetWorkspace_v2(h, c.ptr(workspace_buffer), workspace_bytes), "cublasSetWorkspace");
  const float alpha = 1.f, beta = 0.f;
  const int m = static_cast<int>(s.m), n = static_cast<int>(s.n), k = static_cast<int>(s.k);
  const float* a = c.ptr<const float>(a_buffer);
  const float* b = c.ptr<const float>(b_buffer);
  float* out = c.ptr<float>(c_buffer);
  if (!traits_of(*c.v).tf32) {
    check_cublas(api.cublasSgemm_v2(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, n, a, k, &beta, out, n),
                 "cublasSgemm");
  } else {
    check_cublas(api.cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, b, CUDA_R_32F, n, a, CUDA_R_32F, k,
                                  &beta, out, CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx (TF32)");
  }
}

// ---- the check -------------------------------------------------------------------------------------------

// Runs f(0) .. f(count - 1) over up to 16 host threads.
template <class F>
void parallel_for(std::uint64_t count, F&& f) {
  const auto workers = static_cast<std::uint64_t>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
  if (count < 2 || workers == 1) {
    for (std::uint64_t i = 0; i < count; ++i) f(i);
    return;
  }
  std::vector<std::thread> pool;
  for (std::uint64_t w = 0; w < std::min(workers, count); ++w) {
    pool.emplace_back([&, w] {
      for (std::uint64_t i = w; i < count; i += workers) f(i);
    });
  }
  for (auto& t : pool) t.join();
}

template <class T>
std::vector<T> to_host(const device_buffer& b, std::uint64_t count) {
  std::vector<T> out(count);
  if (count > 0) MEMLAB_CUDA_CHECK(cudaMemcpy(out.data(), b.data(), count * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

struct checked_element {
  std::uint64_t i = 0, j = 0;
  reference_value ref;
};

std::string verify(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  const gemm_shape s = shape_of(c.p);
  const std::uint64_t c_elems = s.m * s.n;
  // C and its guard, which must still hold poison.
  const auto c_bytes = to_host<std::uint8_t>(c.buffers[c_buffer], c.buffers[c_buffer].size());
  if (auto why = check_guard(c.buffers[c_buffer], 4 * c_elems, "C"); !why.empty()) return why;
  if (c_elems == 0) return {};
  std::vector<float> got(c_elems);
  std::memcpy(got.data(), c_bytes.data(), 4 * c_elems);
  const auto A = to_host<float>(c.buffers[a_buffer], s.m * s.k);  // exactly what the kernel read
  const auto B = to_host<float>(c.buffers[b_buffer], s.k * s.n);
  const bool tf32 = traits_of(*c.v).tf32;
  const sample_set set = samples_of(s, state_of(c).seed_a ^ state_of(c).seed_b);

  std::vector<checked_element> checked;
  constexpr std::uint64_t chunk = 1024;  // columns of one row per task
  const auto add_rows = [&](const std::vector<std::uint64_t>& rows) {
    const std::size_t first = checked.size();
    for (const auto i : rows)
      for (std::uint64_t j = 0; j < s.n; ++j) checked.push_back({i, j, {}});
    const std::uint64_t per_row = cuda::ceil_div(s.n, chunk);
    parallel_for(rows.size() * per_row, [&](std::uint64_t task) {
      const std::uint64_t r = task / per_row, j0 = (task % per_row) * chunk, j1 = std::min(s.n, j0 + chunk);
      std::vector<reference_value> out(j1 - j0);
      reference_row(A.data(), B.data(), s, rows[r], j0, j1, out.data());
      for (std::uint64_t j = j0; j < j1; ++j) checked[first + r * s.n + j].ref = out[j - j0];
    });
  };
  if (set.full) {
    std::vector<std::uint64_t> all(s.m);
    for (std::uint64_t i = 0; i < s.m; ++i) all[i] = i;
    add_rows(all);
  } else {
    add_rows(set.rows);
    // Whole columns, and the grid of one element per 64 x 64 block: columns of B gathered first.
    std::vector<std::uint64_t> cols = set.cols;
    cols.insert(cols.end(), set.grid_cols.begin(), set.grid_cols.end());
    std::vector<float> b_cols(cols.size() * s.k);
    for (std::size_t c2 = 0; c2 < cols.size(); ++c2)
      for (std::uint64_t p = 0; p < s.k; ++p) b_cols[c2 * s.k + p] = B[p * s.n + cols[c2]];
    const std::size_t first_col = checked.size();
    for (std::size_t c2 = 0; c2 < set.cols.size(); ++c2)
      for (std::uint64_t i = 0; i < s.m; ++i) checked.push_back({i, set.cols[c2], {}});
    parallel_for(s.m, [&](std::uint64_t i) {
      for (std::size_t c2 = 0; c2 < set.cols.size(); ++c2)
        checked[first_col + c2 * s.m + i].ref = reference_dot(&A[i * s.k], &b_cols[c2 * s.k], s.k);
    });
    const std::size_t first_grid = checked.size(), gc = set.grid_cols.size();
    for (const auto i : set.grid_rows)
      for (const auto j : set.grid_cols) checked.push_back({i, j, {}});
    parallel_for(set.grid_rows.size(), [&](std::uint64_t r) {
      for (std::size_t g = 0; g < gc; ++g) {
        checked[first_grid + r * gc + g].ref =
            reference_dot(&A[set.grid_rows[r] * s.k], &b_cols[(set.cols.size() + g) * s.k], s.k);
      }
    });
  }

  for (const auto& e : checked) {
    const double g = got[e.i * s.n + e.j];
    const double bound = error_bound(s.k, e.ref.sum_abs, tf32);
    if (!std::isfinite(g) || !(std::fabs(g - e.ref.value) <= bound)) {
      return "C[" + std::to_string(e.i) + "][" + std::to_string(e.j) + "] of " + shape_text(s) + " (m x n x k) is " +
             fixed_g(g) + (c_bytes[4 * (e.i * s.n + e.j)] == poison_byte && g == 0 ? " (never written?)" : "") +
             ", expected " + fixed_g(e.ref.value) + " within " + fixed_g(bound) + " (|error| " +
             fixed_g(std::fabs(g - e.ref.value)) + "; " + (tf32 ? "TF32" : "f32") +
             " bound for k = " + std::to_string(s.k) + ")";
    }
  }
  return {};
}

// A rung of the lab's own, from its record: its kernel instantiated for its tiling, and what it needs
// (the 16-byte rungs: 16-byte aligned rows).
template <class Kernel, tiling T>
variant lab_rung(variant v) {
  constexpr auto kernel = Kernel::template of<tiling_t<T>>;
  v.launch = launch_rung<kernel, T>;
  v.kernels = {kernel_ref::of(kernel)};
  v.needs = {.alignment = T.vec_bytes == 16 ? 16 : 0};
  v.traits = rung_traits{.tile = T};
  return v;
}

}  // namespace

// ---- the lab's table ------------------------------------------------------------------------------------

const lab& table() {
  static const lab matmul_lab{
      .name = "matmul",
      .teaches =
          "reuse through tiling: C = A·B in f32 from one output per thread to a register-blocked, warptiled, "
          "double-buffered SIMT kernel, next to cuBLAS SGEMM (and TF32, labelled as such)",
      .dtypes = {dtype::f32},
      .default_dtype = dtype::f32,
      // 4096^3 and 4100^3: the second tiles no rung exactly (4100 = 32 x 128 + 4), and both fit the
      // 15-second tour with the slow rungs. 8192^3: `--sizes 4096,8192,4100` (docs/labs/matmul.md).
      .default_sizes = "4096,4100",
      .size_meaning = "n: columns of B and C (m and k are axes; 0 = n)",
      .axes = {m_axis, k_axis},
      .roof = roof_kind::fp32,
      // The tiles of the last three rungs were chosen on an H100 80GB HBM3 (docs/notes/matmul.md, the
      // sweep of tools/studies/matmul_tile_sweep.cu).
      .variants =
          {
              lab_rung<naive, tiling{.tile_m = 8, .tile_n = 32, .threads = 256, .outputs = 1, .vec_bytes = 4}>({
                  .name = "naive",
                  .teaches = "one output per thread, both operands from global memory (threads along n: B coalesced, A "
                             "broadcast)",
              }),
              lab_rung<smem_tiled, tiling{.tile_m = 32,
                                          .tile_n = 32,
                                          .tile_k = 32,
                                          .threads = 1024,
                                          .outputs = 1,
                                          .vec_bytes = 4,
                                          .stages = 1}>({
                  .name = "smem_tiled",
                  .teaches = "32 x 32 tiles of A and B in shared memory, one output per thread: each loaded element "
                             "serves 32 FMAs",
              }),
              lab_rung<blocktiled_1d, tiling{.tile_m = 64,
                                             .tile_n = 64,
                                             .tile_k = 8,
                                             .threads = 512,
                                             .outputs = 8,
                                             .vec_bytes = 4,
                                             .stages = 1}>({
                  .name = "blocktiled_1d",
                  .teaches = "1D register blocking: 8 outputs of a column per thread, one shared B value serves 8 FMAs",
              }),
              lab_rung<blocktiled_2d, tiling{.tile_m = 128,
                                             .tile_n = 128,
                                             .tile_k = 8,
                                             .threads = 256,
                                             .outputs = 64,
                                             .vec_bytes = 4,
                                             .stages = 1}>({
                  .name = "blocktiled_2d",
                  .teaches = "2D register blocking: an 8 x 8 block per thread, 64 FMAs per 16 shared loads, 128 x 128 "
                             "CTA tiles",
              }),
              lab_rung<vectorized, tiling{.tile_m = 128,
                                          .tile_n = 128,
                                          .tile_k = 8,
                                          .threads = 256,
                                          .outputs = 64,
                                          .vec_bytes = 16,
                                          .stages = 1,
                                          .a_transposed = true}>({
                  .name = "vectorized",
                  .teaches = "16-byte global loads and stores, the A tile transposed in shared memory: LDS.128 for "
                             "both operands",
              }),
              lab_rung<warptiled, tiling{.tile_m = 128,
                                         .tile_n = 128,
                                         .tile_k = 8,
                                         .warp_m = 32,
                                         .warp_n = 64,
                                         .threads = 256,
                                         .outputs = 64,
                                         .vec_bytes = 16,
                                         .stages = 1,
                                         .a_transposed = true}>({
                  .name = "warptiled",
                  .teaches = "warp tiles: 4 x 8 lanes, each thread 2 x 2 blocks of 4 x 4: conflict-free B fragments (4 "
                             "wavefronts, "
                             "not 8)",
              }),
              lab_rung<warptiled, tiling{.tile_m = 128,
                                         .tile_n = 128,
                                         .tile_k = 8,
                                         .warp_m = 32,
                                         .warp_n = 64,
                                         .threads = 256,
                                         .outputs = 64,
                                         .vec_bytes = 16,
                                         .stages = 2,
                                         .a_transposed = true}>({
                  .name = "double_buffered",
                  .teaches =
                      "two shared buffers and a register prefetch: the next step's loads hide behind this step's math",
              }),
              {
                  .name = "cublas_sgemm",
                  .teaches = "cuBLAS SGEMM (f32 products, CUBLAS_DEFAULT_MATH)",
                  .launch = launch_cublas,
                  .peer = true,
                  .traits = rung_traits{},
              },
              {
                  .name = "cublas_tf32",
                  .teaches =
                      "cuBLAS GemmEx, CUBLAS_COMPUTE_32F_FAST_TF32: TF32 tensor cores, NOT an f32 product (for scale)",
                  .launch = launch_cublas,
                  .peer = true,
                  .roof = roof_kind::tf32,
                  .traits = rung_traits{.tf32 = true},
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = setup,
      .verify = verify,
  };
  return matmul_lab;
}

}  // namespace memlab::labs::matmul
