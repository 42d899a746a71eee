// SASS proof: what each matmul rung compiled to, for every SASS architecture the binary carries.
// Needs cuobjdump, not a GPU.
//
// Asserted per rung: no local memory (no spills) and no generic accesses anywhere; the global access
// widths each rung's policy claims (one float until vectorized, then LDG.E.128 / STG.E.128 only);
// LDS.128 for every shared load from blocktiled_2d on (there ptxas itself fuses four steps of one
// A row and four contiguous B values into 16-byte loads); and the register blocking: the 8-deep step
// unrolled into 512 FFMAs per 32 LDS.128 or better (16 FMAs per 16-byte shared load).
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "inspect/sass_fixture.hpp"
#include "labs/matmul/matmul.hpp"

namespace memlab::inspect {
namespace {

std::set<int> widths(const std::map<int, int>& w) {
  std::set<int> out;
  for (const auto& [bits, count] : w) out.insert(bits);
  return out;
}

int count_opcode(const labeled_kernel& k, std::string_view prefix) {
  return static_cast<int>(std::count_if(k.code.opcodes.begin(), k.code.opcodes.end(), [&](const std::string& op) {
    return op == prefix || op.starts_with(std::string(prefix) + ".");
  }));
}

int count_exact(const labeled_kernel& k, std::string_view opcode) {
  return static_cast<int>(std::count(k.code.opcodes.begin(), k.code.opcodes.end(), opcode));
}

const labeled_kernel& kernel(const inspect_report& r, std::string_view variant) {
  const labeled_kernel* k = find(r, "matmul", variant, "");
  if (k == nullptr) throw std::runtime_error("no SASS for matmul " + std::string(variant));
  return *k;
}

const std::vector<std::string_view> rungs{"naive",      "smem_tiled", "blocktiled_1d",  "blocktiled_2d",
                                          "vectorized", "warptiled",  "double_buffered"};

TEST_F(sass_proof, matmul_every_rung_found_no_spills_no_generic_accesses) {
  ASSERT_FALSE(reports.empty());
  for (const auto& [arch, r] : reports) {
    for (const auto v : rungs) {
      SCOPED_TRACE(arch + " " + std::string(v));
      const labeled_kernel* k = find(r, "matmul", v, "");
      ASSERT_NE(k, nullptr);
      EXPECT_EQ(count_space(*k, mem_space::local), 0) << "local memory: spills";
      EXPECT_EQ(count_space(*k, mem_space::generic), 0) << "generic LD/ST: the compiler lost the address space";
      EXPECT_EQ(count_space(*k, mem_space::async_copy), 0);
      EXPECT_GT(count_opcode(*k, "FFMA"), 0);
    }
  }
}

TEST_F(sass_proof, matmul_global_widths_are_what_each_policy_claims) {
  for (const auto& [arch, r] : reports) {
    for (const auto v : rungs) {
      SCOPED_TRACE(arch + " " + std::string(v));
      const labeled_kernel& k = kernel(r, v);
      const memlab::variant* info = labs::matmul::table().find_variant(v);
      ASSERT_NE(info, nullptr);
      const int bits = 8 * labs::matmul::tiling_of(info->traits_as<labs::matmul::variant_id>()).vec_bytes;
      EXPECT_EQ(widths(global_widths(k, mem_dir::load)), std::set<int>{bits}) << "LDG width";
      EXPECT_EQ(widths(global_widths(k, mem_dir::store)), std::set<int>{bits}) << "STG width";
    }
  }
}

TEST_F(sass_proof, matmul_shared_memory_from_naive_to_warp_tiles) {
  for (const auto& [arch, r] : reports) {
    SCOPED_TRACE(arch);
    // naive: no shared memory at all.
    EXPECT_EQ(count_space(kernel(r, "naive"), mem_space::shared), 0);
    // smem_tiled, blocktiled_1d: one float staged per thread per operand (STS, 32-bit).
    for (const auto v : {"smem_tiled", "blocktiled_1d", "blocktiled_2d"}) {
      EXPECT_EQ(widths(shared_widths(kernel(r, v), mem_dir::store)), std::set<int>{32}) << v;
    }
    // From blocktiled_2d on, every shared load is LDS.128: in blocktiled_2d because ptxas fuses a
    // thread's 4 steps of one A row and its 4 contiguous B values; in the later rungs by design.
    for (const auto v : {"blocktiled_2d", "vectorized", "warptiled", "double_buffered"}) {
      SCOPED_TRACE(v);
      const labeled_kernel& k = kernel(r, v);
      EXPECT_EQ(widths(shared_widths(k, mem_dir::load)), std::set<int>{128}) << "LDS.128 only";
      const int ffma = count_opcode(k, "FFMA"), lds128 = count_exact(k, "LDS.128");
      EXPECT_GE(ffma, 512) << "an 8-deep step of an 8 x 8 block, unrolled";
      EXPECT_GE(ffma, 16 * lds128) << "16 FMAs or more per 16-byte shared load";
    }
    // The vectorized rungs stage B with STS.128 and the transposed A with 4 scalar STS.
    for (const auto v : {"vectorized", "warptiled", "double_buffered"}) {
      EXPECT_EQ(widths(shared_widths(kernel(r, v), mem_dir::store)), (std::set<int>{32, 128})) << v;
    }
  }
}

// FFMAs between a global load and the next shared store (the one that stages what it loaded), the
// most over the kernel: 0 when every load is waited for before any math; hundreds when the loads
// of the next step are in flight during this step's math.
int ffma_under_a_load(const labeled_kernel& k) {
  int best = 0;
  for (std::size_t i = 0; i < k.code.opcodes.size(); ++i) {
    if (!k.code.opcodes[i].starts_with("LDG")) continue;
    int ffma = 0;
    for (std::size_t j = i + 1; j < k.code.opcodes.size() && !k.code.opcodes[j].starts_with("STS"); ++j) {
      ffma += k.code.opcodes[j].starts_with("FFMA") ? 1 : 0;
    }
    best = std::max(best, ffma);
  }
  return best;
}

// double_buffered's point, in its SASS: the next step's LDG.E.128 issue before this step's FFMAs
// and are stored after them. (With `if (s + 1 < steps)` around both the prefetch and its store,
// ptxas merged the two blocks and sank the loads below the math: no overlap, seen on sm_90.)
TEST_F(sass_proof, matmul_double_buffered_loads_are_in_flight_during_the_math) {
  for (const auto& [arch, r] : reports) {
    SCOPED_TRACE(arch);
    EXPECT_EQ(ffma_under_a_load(kernel(r, "warptiled")), 0) << "single buffer: loads, store, sync, then math";
    EXPECT_GE(ffma_under_a_load(kernel(r, "double_buffered")), 128) << "the prefetch overlaps the math";
  }
}

}  // namespace
}  // namespace memlab::inspect
