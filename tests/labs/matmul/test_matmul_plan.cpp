// Host-only checks of the matmul lab: the ladder, shapes and refusals, launch plans, the declared
// FLOPs and bytes, the inputs, the error bound (against f32 and TF32 sums simulated on the host), the
// sample the check takes, and the bank model's wavefronts for each rung's fragment loads.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/bank_model.hpp"
#include "harness/plan.hpp"
#include "harness/registry.hpp"
#include "lab_helpers.hpp"
#include "labs/matmul/matmul.hpp"

namespace memlab::labs::matmul {
namespace {

// A case of n columns, m rows, inner dimension k (0: the same as n).
case_params mm_case(std::uint64_t m, std::uint64_t n, std::uint64_t k, dtype t = dtype::f32) {
  return table().make_case(t, n, {{"m", axis_value{{m, 0, 0}, 1}}, {"k", axis_value{{k, 0, 0}, 1}}});
}

bool mentions(const std::optional<std::string>& why, std::string_view needle) {
  return why && why->find(needle) != std::string::npos;
}

// memlab's rungs (not the peers), as the table lists them, with their tilings.
struct lab_rung {
  std::string_view name;
  tiling tile;
};
std::vector<lab_rung> lab_rungs() {
  std::vector<lab_rung> out;
  for (const auto& v : table().variants)
    if (!v.peer) out.push_back({v.name, v.traits_as<rung_traits>().tile});
  return out;
}
const std::vector<lab_rung> rungs = lab_rungs();

TEST(matmul_lab_registry, ladder_then_the_peers) {
  const lab& l = table();
  EXPECT_EQ(l.name, "matmul");
  EXPECT_EQ(l.roof, roof_kind::fp32);
  EXPECT_EQ(l.dtypes, std::vector<dtype>{dtype::f32});
  std::set<const void*> symbols;
  bool peers = false;
  for (const auto& v : l.variants) {
    const rung_traits& t = v.traits_as<rung_traits>();
    EXPECT_EQ(v.needs.alignment, t.tile.vec_bytes == 16 ? 16 : 0) << v.name;
    EXPECT_FALSE(v.teaches.empty()) << v.name;
    EXPECT_TRUE(!peers || v.peer) << v.name << ": the peers come after the ladder";
    peers = peers || v.peer;
    // One kernel per rung, by symbol, each its own; the peers launch cuBLAS's and have no tiling.
    EXPECT_EQ(v.kernels.size(), v.peer ? 0u : 1u) << v.name;
    EXPECT_EQ(t.tile.threads == 0, v.peer) << v.name;
    for (const auto& k : v.kernels) {
      EXPECT_NE(k.symbol, nullptr) << v.name;
      EXPECT_TRUE(symbols.insert(k.symbol).second) << v.name << " shares a kernel";
    }
    // A peer whose inputs are rounded to TF32 says so.
    if (t.tf32) {
      EXPECT_NE(v.teaches.find("TF32"), std::string_view::npos) << v.name;
      EXPECT_NE(v.teaches.find("NOT an f32"), std::string_view::npos) << v.name;
    }
  }
  EXPECT_TRUE(peers);
}

TEST(matmul_shapes, m_and_k_of_zero_mean_the_same_as_n) {
  EXPECT_EQ(resolve(4096, 0, 0), (gemm_shape{4096, 4096, 4096}));
  EXPECT_EQ(resolve(300, 7, 0), (gemm_shape{7, 300, 300}));
  EXPECT_EQ(resolve(300, 0, 5), (gemm_shape{300, 300, 5}));
  EXPECT_EQ(shape_text({1, 2, 3}), "1x2x3");
  // 2 m n k FLOPs; A, B read once and C written once.
  EXPECT_EQ(flops_of({4096, 4096, 4096}), 2ull << 36);
  EXPECT_EQ(bytes_of({4096, 4096, 4096}), 3ull * 4 * 4096 * 4096);
  EXPECT_EQ(bytes_of({2, 3, 5}), 4u * (2 * 5 + 5 * 3 + 2 * 3));
  const case_plan p = test::plan_of(table(), "double_buffered", mm_case(0, 8192, 0));
  EXPECT_EQ(p.flops, 2ull * 8192 * 8192 * 8192);
  EXPECT_EQ(p.bytes, 3ull * 4 * 8192 * 8192);
  EXPECT_EQ(p.working_set, p.bytes);
}

TEST(matmul_shapes, buffers_inputs_are_the_labs_own_and_the_peers_get_a_workspace) {
  const case_plan p = test::plan_of(table(), "naive", mm_case(3, 5, 7));
  ASSERT_EQ(p.buffers.size(), 3u);
  EXPECT_EQ(p.buffers[0].bytes, 4u * 3 * 7);  // A (m, k)
  EXPECT_EQ(p.buffers[1].bytes, 4u * 7 * 5);  // B (k, n)
  EXPECT_EQ(p.buffers[2].bytes, 4u * 3 * 5);  // C (m, n)
  EXPECT_EQ(p.buffers[0].role, buffer_role::scratch);
  EXPECT_EQ(p.buffers[1].role, buffer_role::scratch);
  EXPECT_EQ(p.buffers[2].role, buffer_role::output);
  for (const auto& v : table().variants) {
    if (!v.peer) continue;
    const case_plan q = table().plan(v, mm_case(3, 5, 7), {});
    ASSERT_EQ(q.buffers.size(), 4u) << v.name;
    EXPECT_EQ(q.buffers[3].role, buffer_role::scratch);
    EXPECT_EQ(q.buffers[3].bytes, 32u << 20);
    EXPECT_EQ(to_string(q.policy), "-") << v.name;
  }
}

TEST(matmul_refusals, vectorized_rungs_need_n_and_k_multiples_of_4) {
  const lab& l = table();
  for (const auto& [name, t] : rungs) {
    const bool vec = t.vec_bytes == 16;
    for (const auto& [m, n, k] :
         std::vector<std::array<std::uint64_t, 3>>{{5, 7, 9}, {4, 6, 8}, {8, 8, 6}, {3, 4, 8}}) {
      const auto why = test::refusal(l, name, mm_case(m, n, k));
      const bool ok = n % 4 == 0 && k % 4 == 0;
      SCOPED_TRACE(std::string(name) + " " + shape_text({m, n, k}));
      if (vec && !ok) {
        EXPECT_TRUE(mentions(why, "multiples of 4")) << why.value_or("(runs)");
      } else {
        EXPECT_FALSE(why) << *why;
      }
    }
  }
  for (const auto& v : l.variants) {
    if (v.peer) {
      EXPECT_FALSE(l.why_not(v, mm_case(5, 7, 9), {})) << v.name;
    }
  }
}

TEST(matmul_refusals, matrices_past_32_bit_indices_and_other_dtypes) {
  const lab& l = table();
  // 65536 x 65536 = 2^32 elements of C.
  EXPECT_TRUE(mentions(test::refusal(l, "naive", mm_case(65536, 65536, 4)), "32-bit"));
  EXPECT_TRUE(mentions(test::refusal(l, "cublas_sgemm", mm_case(4, 65536, 65536)), "B (k x n)"));
  EXPECT_FALSE(test::refusal(l, "naive", mm_case(32768, 32768, 4)));
  EXPECT_TRUE(mentions(test::refusal(l, "naive", mm_case(0, max_extent + 1, 1)), "exceeds"));
  EXPECT_TRUE(mentions(test::refusal(l, "naive", mm_case(4, 4, 4, dtype::f16)), "f32 only"));
}

TEST(matmul_plans, grids_cover_every_output_with_the_rungs_tiles) {
  for (const auto& [name, t] : rungs) {
    SCOPED_TRACE(std::string(name));
    for (const gemm_shape s : {gemm_shape{4096, 4096, 4096}, gemm_shape{4100, 4100, 4100}, gemm_shape{7, 300, 5}}) {
      const launch_policy p = plan(t, s);
      EXPECT_EQ(p.grid, ((s.m + t.tile_m - 1) / t.tile_m) * ((s.n + t.tile_n - 1) / t.tile_n));
      EXPECT_EQ(p.items_per_thread * p.threads, t.tile_m * t.tile_n) << "every output of the tile, once";
      EXPECT_EQ(p.threads, t.threads);
      EXPECT_EQ(p.vec_bytes, t.vec_bytes);
      EXPECT_EQ(p.stages, t.stages);
    }
    EXPECT_EQ(plan(t, {0, 0, 0}).grid, 0u);
    // A double-buffered rung is the single-buffered one before it with a second stage: what the ladder
    // compares.
    if (t.stages == 2) {
      const auto single = std::find_if(rungs.begin(), rungs.end(), [&](const lab_rung& r) {
        tiling a = r.tile;
        a.stages = 2;
        return r.tile.stages == 1 && std::memcmp(&a, &t, sizeof a) == 0;
      });
      EXPECT_NE(single, rungs.end()) << "no single-buffered rung of the same tiling";
    }
  }
  EXPECT_EQ(plan(tiling{}, {4096, 4096, 4096}).grid, 0u) << "the peers plan nothing";
  EXPECT_EQ(test::plan_of(table(), "naive", mm_case(4096, 4096, 4096)).policy.grid, (4096u / 32) * (4096u / 8));
}

TEST(matmul_inputs, odd_multiples_of_2_to_the_minus_24_inside_minus_one_one) {
  double sum = 0, sum_sq = 0;
  constexpr int count = 200000;
  for (std::uint64_t i = 0; i < count; ++i) {
    const float x = input_value(0x1234, i);
    ASSERT_TRUE(x > -1.f && x < 1.f) << x;
    ASSERT_NE(x, 0.f);
    const double scaled = static_cast<double>(x) * 0x1p24;  // an odd integer
    ASSERT_EQ(std::fmod(std::fabs(scaled), 2.0), 1.0) << x;
    sum += x;
    sum_sq += static_cast<double>(x) * x;
  }
  EXPECT_NEAR(sum / count, 0.0, 0.01);         // uniform on (-1, 1): mean 0
  EXPECT_NEAR(sum_sq / count, 1.0 / 3, 0.01);  // and second moment 1/3
  EXPECT_NE(input_value(1, 0), input_value(2, 0));
}

// ---- the error bound ------------------------------------------------------------------------------

// A dot product of k terms the way each kind of kernel sums it, in f32 with FMAs: `order` 0 sums
// p = 0..k-1 in turn (every rung does, per output); 1 splits into 8 interleaved partial sums added at
// the end (a split-k or vectorized reduction); inputs optionally cut to TF32 (10 mantissa bits, by
// truncation: the worse of the two conversions).
float tf32_truncate(float x) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, 4);
  bits &= ~((1u << 13) - 1);
  std::memcpy(&x, &bits, 4);
  return x;
}
float simulated_dot(const std::vector<float>& a, const std::vector<float>& b, int order, bool tf32) {
  const auto in = [&](float x) { return tf32 ? tf32_truncate(x) : x; };
  if (order == 0) {
    float acc = 0.f;
    for (std::size_t p = 0; p < a.size(); ++p) acc = std::fma(in(a[p]), in(b[p]), acc);
    return acc;
  }
  float part[8] = {};
  for (std::size_t p = 0; p < a.size(); ++p) part[p % 8] = std::fma(in(a[p]), in(b[p]), part[p % 8]);
  float acc = 0.f;
  for (float x : part) acc += x;
  return acc;
}

TEST(matmul_error_bound, gamma_k) {
  EXPECT_DOUBLE_EQ(gamma(1, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(gamma(4096, f32_unit_roundoff), 0x1p-12 / (1 - 0x1p-12));
  EXPECT_TRUE(std::isinf(gamma(std::uint64_t{1} << 24, f32_unit_roundoff)));
  EXPECT_EQ(error_bound(100, 0.0, false), 0.0);
  EXPECT_GT(error_bound(100, 1.0, true), error_bound(100, 1.0, false));
}

TEST(matmul_error_bound, holds_for_f32_sums_in_any_order_and_for_tf32_with_its_own) {
  std::mt19937_64 rng(7);
  for (const std::uint64_t k : {1u, 7u, 64u, 1000u, 8192u}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<float> a(k), b(k);
      double exact = 0, sum_abs = 0;
      for (std::uint64_t p = 0; p < k; ++p) {
        a[p] = input_value(rng(), p);
        b[p] = input_value(rng(), p);
        exact += static_cast<double>(a[p]) * b[p];  // exact products; the double sum within ~1e-12
        sum_abs += std::fabs(static_cast<double>(a[p]) * b[p]);
      }
      for (int order : {0, 1}) {
        const double f32_err = std::fabs(simulated_dot(a, b, order, false) - exact);
        EXPECT_LE(f32_err, error_bound(k, sum_abs, false)) << "k=" << k;
        const double tf32_err = std::fabs(simulated_dot(a, b, order, true) - exact);
        EXPECT_LE(tf32_err, error_bound(k, sum_abs, true)) << "k=" << k;
      }
    }
  }
}

// The f32 bound is a worst case, so it only catches TF32 where TF32's input rounding outgrows k
// roundings of f32: at small k. The lab's GPU tests run such shapes for every rung.
TEST(matmul_error_bound, tf32_results_fail_the_f32_bound_at_small_k) {
  std::mt19937_64 rng(11);
  int failed = 0;
  for (int trial = 0; trial < 100; ++trial) {
    std::vector<float> a(64), b(64);
    double exact = 0, sum_abs = 0;
    for (int p = 0; p < 64; ++p) {
      a[p] = input_value(rng(), 0);
      b[p] = input_value(rng(), 0);
      exact += static_cast<double>(a[p]) * b[p];
      sum_abs += std::fabs(static_cast<double>(a[p]) * b[p]);
    }
    failed += std::fabs(simulated_dot(a, b, 0, true) - exact) > error_bound(64, sum_abs, false) ? 1 : 0;
  }
  EXPECT_GT(failed, 90);
}

// ---- the sample -------------------------------------------------------------------------------------

TEST(matmul_sample, small_products_are_checked_whole) {
  EXPECT_TRUE(samples_of({512, 512, 512}, 1).full);
  EXPECT_TRUE(samples_of({1, 1, 1}, 1).full);
  EXPECT_TRUE(samples_of({0, 5, 0}, 1).full);
  EXPECT_FALSE(samples_of({4096, 4096, 4096}, 1).full);
  EXPECT_FALSE(samples_of({8192, 8192, 1}, 1).full);  // few terms, but 2^26 outputs: sampled
}

TEST(matmul_sample, every_64_by_64_block_edges_and_random_rows_and_columns) {
  for (const gemm_shape s : {gemm_shape{4096, 4096, 4096}, gemm_shape{4100, 8192, 4100}, gemm_shape{129, 100000, 20},
                             gemm_shape{2, 70000, 1024}}) {
    SCOPED_TRACE(shape_text(s));
    const sample_set set = samples_of(s, 42);
    ASSERT_FALSE(set.full);
    EXPECT_EQ(set.rows.front(), 0u);
    EXPECT_EQ(set.rows.back(), s.m - 1);
    EXPECT_EQ(set.cols.front(), 0u);
    EXPECT_EQ(set.cols.back(), s.n - 1);
    EXPECT_EQ(set.rows.size(), std::min<std::uint64_t>(4, s.m));
    EXPECT_EQ(set.cols.size(), std::min<std::uint64_t>(4, s.n));
    EXPECT_TRUE(std::is_sorted(set.rows.begin(), set.rows.end()));
    EXPECT_EQ(std::set<std::uint64_t>(set.rows.begin(), set.rows.end()).size(), set.rows.size());
    ASSERT_EQ(set.grid_rows.size(), (s.m + sample_band - 1) / sample_band);
    ASSERT_EQ(set.grid_cols.size(), (s.n + sample_band - 1) / sample_band);
    for (std::size_t b = 0; b < set.grid_rows.size(); ++b) {
      EXPECT_EQ(set.grid_rows[b] / sample_band, b);
      EXPECT_LT(set.grid_rows[b], s.m);
    }
    for (std::size_t b = 0; b < set.grid_cols.size(); ++b) {
      EXPECT_EQ(set.grid_cols[b] / sample_band, b);
      EXPECT_LT(set.grid_cols[b], s.n);
    }
  }
  // The seed moves the random ones.
  EXPECT_NE(samples_of({4096, 4096, 4096}, 1).grid_rows, samples_of({4096, 4096, 4096}, 2).grid_rows);
  // The check's cost at 8192^3 stays far below the product's: ~ 8 rows and columns + 128^2 dots.
  const gemm_shape big{8192, 8192, 8192};
  EXPECT_LT(check_macs(big, samples_of(big, 3)), std::uint64_t{1} << 30);
  EXPECT_EQ(check_macs({2, 2, 2}, samples_of({2, 2, 2}, 3)), 8u);
}

// ---- bank model: the fragment loads of each rung --------------------------------------------------------

int wavefronts(const tiling& t, char operand) {
  warp_addresses lanes;
  const auto bytes = fragment_lane_bytes(t, operand);
  for (int l = 0; l < 32; ++l) lanes[static_cast<std::size_t>(l)] = bytes[static_cast<std::size_t>(l)];
  return shared_request(lanes, 16).wavefronts;
}

TEST(matmul_bank_model, warp_tiles_make_every_fragment_load_one_wavefront_per_quarter_warp) {
  // A 16-byte request is served a quarter-warp at a time: 4 wavefronts at best. The rungs of 8 x 8
  // register blocks without warp tiles (threads 16 x 16, each a block): the B fragment's 8 distinct
  // float4 per quarter-warp lie 32 bytes apart, two per bank group: 2-way conflicts, 8. Their A
  // fragments: one address per quarter-warp (a broadcast): 4 in the model. The H100 serves this
  // pattern in 2 (ncu, docs/results/h100/matmul/ncu_fragment_patterns.csv); the B patterns as
  // modelled (8 and 4). Warp tiles: 4 x 8 lanes; a quarter-warp is one lane row: 8 contiguous float4
  // of B, one of A: 4 each.
  int blocked = 0, warp_tiled = 0;
  for (const auto& [name, t] : rungs) {
    SCOPED_TRACE(std::string(name));
    if (t.outputs != 64) {
      EXPECT_THROW((void)fragment_lane_bytes(t, 'a'), std::invalid_argument);
      continue;
    }
    EXPECT_EQ(wavefronts(t, 'a'), 4);
    EXPECT_EQ(wavefronts(t, 'b'), t.warp_m == 0 ? 8 : 4);
    ++(t.warp_m == 0 ? blocked : warp_tiled);
  }
  EXPECT_GT(blocked, 0);
  EXPECT_GT(warp_tiled, 0);
}

// ---- planning a run ---------------------------------------------------------------------------------------

TEST(matmul_run_planning, defaults_are_two_squares_for_every_variant) {
  run_request r;
  r.labs = {"matmul"};
  const auto cases = plan_cases(r, all_labs());
  ASSERT_EQ(cases.size(), 2u * table().variants.size());
  EXPECT_EQ(cases.front().p.n, 4096u);
  EXPECT_EQ(cases.back().p.n, 4100u);
  for (const auto& c : cases) {
    const auto params = table().params(c.p);
    ASSERT_EQ(params.size(), 4u);  // dtype, n, m, k
    EXPECT_EQ(params[2].name, "m");
    EXPECT_EQ(params[3].name, "k");
    EXPECT_FALSE(table().unsupported(*c.v, c.p, {})) << c.v->name;
  }
}

TEST(matmul_run_planning, the_acceptance_command_and_non_square_shapes) {
  run_request r;
  r.labs = {"matmul"};
  r.sizes = "4096,8192,4100";
  r.variants = {"double_buffered", "cublas_sgemm"};
  EXPECT_EQ(plan_cases(r, all_labs()).size(), 6u);
  r.sizes = "1000";
  r.axes = {{"m", "3000"}, {"k", "200"}};
  const auto cases = plan_cases(r, all_labs());
  ASSERT_EQ(cases.size(), 2u);
  const case_plan p = test::plan_of(table(), "double_buffered", cases.front().p);
  EXPECT_EQ(p.flops, 2ull * 3000 * 1000 * 200);
}

}  // namespace
}  // namespace memlab::labs::matmul
