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

using labs::matmul::rung_traits;
using labs::matmul::tiling;

// memlab's rungs (not the peers), as the table lists them, with their tilings.
std::vector<std::pair<std::string_view, tiling>> lab_rungs() {
  std::vector<std::pair<std::string_view, tiling>> out;
  for (const auto& v : labs::matmul::table().variants)
    if (!v.peer) out.emplace_back(v.name, v.traits_as<rung_traits>().tile);
  return out;
}
const auto rungs = lab_rungs();

TEST_F(sass_proof, matmul_every_rung_found_no_spills_no_generic_accesses) {
  ASSERT_FALSE(reports.empty());
  for (const auto& [arch, r] : reports) {
    for (const auto& [v, t] : rungs) {
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
    for (const auto& [v, t] : rungs) {
      SCOPED_TRACE(arch + " " + std::string(v));
      const labeled_kernel& k = kernel(r, v);
      const int bits = 8 * t.vec_bytes;
      EXPECT_EQ(widths(global_widths(k, mem_dir::load)), std::set<int>{bits}) << "LDG width";
      EXPECT_EQ(widths(global_widths(k, mem_dir::store)), std::set<int>{bits}) << "STG width";
    }
  }
}

// From each rung's tiling: no shared memory without shared tiles (tile_k 0); one float staged per thread
// per operand (STS, 32-bit), and with the A tile transposed B staged with STS.128 beside A's 4 scalar
// STS. With 8 x 8 register blocks (outputs 64) every shared load is LDS.128: ptxas itself fuses a
// thread's 4 steps of one A row and its 4 contiguous B values where the source loads floats, and the
// later rungs do by design; an 8-deep step of an 8 x 8 block unrolled, 16 FMAs or more per LDS.128.
TEST_F(sass_proof, matmul_shared_memory_from_naive_to_warp_tiles) {
  int blocked = 0;
  for (const auto& [arch, r] : reports) {
    for (const auto& [v, t] : rungs) {
      SCOPED_TRACE(arch + " " + std::string(v));
      const labeled_kernel& k = kernel(r, v);
      if (t.tile_k == 0) {
        EXPECT_EQ(count_space(k, mem_space::shared), 0);
        continue;
      }
      EXPECT_EQ(widths(shared_widths(k, mem_dir::store)),
                t.a_transposed ? (std::set<int>{32, 128}) : std::set<int>{32});
      if (t.outputs != 64) continue;
      EXPECT_EQ(widths(shared_widths(k, mem_dir::load)), std::set<int>{128}) << "LDS.128 only";
      const int ffma = count_opcode(k, "FFMA"), lds128 = count_exact(k, "LDS.128");
      EXPECT_GE(ffma, 512) << "an 8-deep step of an 8 x 8 block, unrolled";
      EXPECT_GE(ffma, 16 * lds128) << "16 FMAs or more per 16-byte shared load";
      ++blocked;
    }
  }
  EXPECT_GT(blocked, 0);
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

// Double buffering's point, in its SASS: in a rung of two stages the next step's LDG.E.128 issue before
// this step's FFMAs and are stored after them; a warp-tiled rung of one stage loads, stores, syncs,
// then does the math. (With `if (s + 1 < steps)` around both the prefetch and its store, ptxas merged
// the two blocks and sank the loads below the math: no overlap, seen on sm_90.)
TEST_F(sass_proof, matmul_double_buffered_loads_are_in_flight_during_the_math) {
  int double_buffered = 0;
  for (const auto& [arch, r] : reports) {
    for (const auto& [v, t] : rungs) {
      SCOPED_TRACE(arch + " " + std::string(v));
      if (t.stages == 2) {
        EXPECT_GE(ffma_under_a_load(kernel(r, v)), 128) << "the prefetch overlaps the math";
        ++double_buffered;
      } else if (t.warp_m != 0) {
        EXPECT_EQ(ffma_under_a_load(kernel(r, v)), 0) << "single buffer: loads, store, sync, then math";
      }
    }
  }
  EXPECT_GT(double_buffered, 0);
}

}  // namespace
}  // namespace memlab::inspect
