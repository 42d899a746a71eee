// SASS proof for the hierarchy lab: every chase is a chain of dependent loads as compiled (each
// load's address register is the destination of the load before it: no unrolling into independent
// loads, no prefetch), the register chain keeps its 64 dependent FFMAs per iteration, and the
// streams move 16 bytes per access without spilling. Needs cuobjdump, not a GPU.
#include <algorithm>
#include <regex>
#include <string>

#include "harness/lab.hpp"
#include "inspect/sass_fixture.hpp"
#include "labs/hierarchy/hierarchy.hpp"

namespace memlab::labs::hierarchy {
const lab& table();
}
namespace memlab::inspect {
namespace {

// "R4, desc[UR4][R8.64]" -> {"R4", "R8"}; "R7, [R7+UR5]" -> {"R7", "R7"}.
std::pair<std::string, std::string> dest_and_address(const std::string& operands) {
  static const std::regex re(R"(^(R\d+)\s*,.*\[(R\d+)(?:\.64)?(?:\+[^\]]*)?\]\s*$)");
  std::smatch m;
  if (!std::regex_search(operands, m, re)) return {};
  return {m[1], m[2]};
}

struct chain_report {
  int loads = 0;    // loads of the wanted opcode
  int chained = 0;  // of them, those whose address is the previous such load's (or its own) result
};

chain_report follow(const labeled_kernel& k, std::string_view opcode) {
  chain_report r;
  std::string previous_dest;
  for (std::size_t i = 0; i < k.code.opcodes.size(); ++i) {
    const std::string& op = k.code.opcodes[i];
    if (!(op == opcode || op.starts_with(std::string(opcode) + "."))) continue;
    // Global chases load 8-byte nodes (the loaded chase's generators: 16 bytes; its flag: 4).
    if (opcode == "LDG" && !op.starts_with("LDG.E.64")) continue;
    const auto [dest, addr] = dest_and_address(k.code.operands.at(i));
    ++r.loads;
    if (!addr.empty() && (addr == previous_dest || addr == dest)) ++r.chained;
    previous_dest = dest;
  }
  return r;
}

TEST_F(sass_proof, hierarchy_every_chase_is_a_chain_of_dependent_loads) {
  for (const auto& [arch, r] : reports) {
    for (const char* v : {"chase_l1", "chase_l2", "chase_stride", "chase_l2_per_sm", "loaded_chase"}) {
      SCOPED_TRACE(arch + " " + v);
      const auto* k = find(r, "hierarchy", v, "");
      ASSERT_NE(k, nullptr);
      ASSERT_EQ(k->code.operands.size(), k->code.opcodes.size());
      const chain_report c = follow(*k, "LDG");
      // warm-up 1, timed 4 (unrolled) + 1 (remainder), samples 1; the walker's start is the one load
      // not fed by another.
      EXPECT_GE(c.loads, 7);
      EXPECT_GE(c.chained, c.loads - 1) << "a load whose address is not the previous load's value";
      EXPECT_EQ(count_space(*k, mem_space::local), 0) << "spills";
      const auto widths = global_widths(*k, mem_dir::load);
      EXPECT_TRUE(widths.contains(64)) << "8-byte node loads";
      if (std::string_view(v) == "chase_l1" || std::string_view(v) == "chase_stride") {
        const int weak = static_cast<int>(std::count(k->code.opcodes.begin(), k->code.opcodes.end(), "LDG.E.64"));
        EXPECT_EQ(weak, c.loads) << "default (weak, L1-cached) loads, not .STRONG";
      }
    }
    SCOPED_TRACE(arch + " chase_shared");
    const auto* s = find(r, "hierarchy", "chase_shared", "");
    ASSERT_NE(s, nullptr);
    const chain_report c = follow(*s, "LDS");
    EXPECT_GE(c.loads, 7);
    EXPECT_GE(c.chained, c.loads - 1) << "a shared load whose address is not the previous load's value";
  }
}

TEST_F(sass_proof, hierarchy_cg_chases_bypass_l1) {
  for (const auto& [arch, r] : reports) {
    for (const char* v : {"chase_l2", "chase_l2_per_sm"}) {
      SCOPED_TRACE(arch + " " + v);
      const auto* k = find(r, "hierarchy", v, "");
      ASSERT_NE(k, nullptr);
      const int strong =
          static_cast<int>(std::count_if(k->code.opcodes.begin(), k->code.opcodes.end(),
                                         [](const std::string& o) { return o.starts_with("LDG.E.64.STRONG.GPU"); }));
      EXPECT_GE(strong, 6) << "ld.global.cg compiles to LDG.E.64.STRONG.GPU on sm_90";
    }
  }
}

TEST_F(sass_proof, hierarchy_register_chain_keeps_every_dependent_ffma) {
  for (const auto& [arch, r] : reports) {
    SCOPED_TRACE(arch);
    const auto* k = find(r, "hierarchy", "register_chain", "");
    ASSERT_NE(k, nullptr);
    int ffma = 0, chained = 0;
    std::string previous;
    for (std::size_t i = 0; i < k->code.opcodes.size(); ++i) {
      if (!k->code.opcodes[i].starts_with("FFMA")) continue;
      ++ffma;
      const std::string& ops = k->code.operands[i];
      const std::string dest = ops.substr(0, ops.find(','));
      if (!previous.empty() && ops.find(previous, ops.find(',')) != std::string::npos) ++chained;
      previous = dest;
    }
    EXPECT_EQ(ffma, 64);
    EXPECT_EQ(chained, 63) << "each FFMA reads the one before";
  }
}

// Every stream rung of the table (each operation, path and --ilp; the shared-memory dot's kernels
// too): 16 bytes per access of the arrays, as many arrays as its operation reads and writes, no spill.
// A reduction's one other store is its CTA's 4-byte partial sum.
TEST_F(sass_proof, hierarchy_streams_move_16_bytes_per_access) {
  const lab& l = labs::hierarchy::table();
  const auto* stream = l.find_variant("dot")->traits_as<labs::hierarchy::rung_traits>().kind;
  for (const auto& [arch, r] : reports) {
    int rungs = 0;
    for (const auto& v : l.variants) {
      const auto& t = v.traits_as<labs::hierarchy::rung_traits>();
      if (t.kind != stream) continue;
      ++rungs;
      int kernels = 0;
      for (const auto& k : r.kernels) {
        if (k.lab != "hierarchy" || k.variant != v.name) continue;
        SCOPED_TRACE(arch + " " + k.code.name);
        ++kernels;
        EXPECT_EQ(count_space(k, mem_space::local), 0) << "spills";
        const auto loads = global_widths(k, mem_dir::load), stores = global_widths(k, mem_dir::store);
        if (t.path == labs::hierarchy::load_path::shared) {
          EXPECT_TRUE(shared_widths(k, mem_dir::load).contains(128));
        } else {
          EXPECT_EQ(loads.size(), t.op.arrays_read() > 0 ? 1u : 0u);
          if (t.op.arrays_read() > 0) {
            EXPECT_TRUE(loads.contains(128));
          }
        }
        const std::map<int, int> array_stores(stores.lower_bound(128), stores.end());
        EXPECT_EQ(array_stores.size(), t.op.arrays_written() > 0 ? 1u : 0u);
        if (t.op.arrays_written() > 0) {
          EXPECT_TRUE(stores.contains(128));
        }
        EXPECT_EQ(stores.size() - array_stores.size(), t.op.reduces() ? 1u : 0u) << "a reduction's partial sum";
        if (t.op.reduces()) {
          EXPECT_TRUE(stores.contains(32));
        }
      }
      EXPECT_EQ(kernels, static_cast<int>(labs::hierarchy::stream_ilps.size())) << arch << " " << v.name;
    }
    EXPECT_GE(rungs, 8);
  }
}

// The dots' hot loop (docs/notes/hierarchy_l1_bandwidth.md): a block (up to a branch) with one
// whole tile's 2 x Ilp unguarded 16-byte loads (no per-vector test) and its 4 x Ilp FFMAs, the loads
// first (at --ilp 8 ptxas may start the FFMAs once 4 vectors are in flight). The L1 dot's loads are
// weak (LDG.E.128: cached in L1), the .cg dots' strong (LDG.E.128.STRONG.GPU: past L1).
int dot_ilp(const labeled_kernel& k) {
  static const std::regex stream(R"(stream_kernel<.*, (\d+), (?:true|false)>\()"), smem(R"(smem_dot_kernel<(\d+)>\()");
  std::smatch m;
  if (std::regex_search(k.code.name, m, stream) || std::regex_search(k.code.name, m, smem)) return std::stoi(m[1]);
  return 0;
}

TEST_F(sass_proof, hierarchy_dots_issue_a_whole_tiles_loads_before_its_ffmas) {
  for (const auto& [arch, r] : reports) {
    for (const std::string v : {"dot", "dot_l2", "dot_l2_all", "smem_dot"}) {
      int kernels = 0;
      for (const auto& k : r.kernels) {
        if (k.lab != "hierarchy" || k.variant != v) continue;
        SCOPED_TRACE(arch + " " + k.code.name);
        ++kernels;
        const int ilp = dot_ilp(k);
        ASSERT_GT(ilp, 0);
        const std::string load = v == "smem_dot" ? "LDS.128" : v == "dot" ? "LDG.E.128" : "LDG.E.128.STRONG.GPU";
        int hot = 0, wide_global = 0;  // wide_global: LDG of any kind
        int loads = 0, ffma = 0, loads_before_ffma = 0;
        for (std::size_t i = 0; i < k.code.opcodes.size(); ++i) {
          const std::string& op = k.code.opcodes[i];
          if (op.starts_with("LDG.")) {  // not LDGSTS
            ++wide_global;
            EXPECT_EQ(op, load) << "every global load of the dot";
          }
          if (op == load && !k.code.guarded[i]) {
            ++loads;
            loads_before_ffma += ffma == 0 ? 1 : 0;
          }
          if (op.starts_with("FFMA")) ++ffma;
          if (op.starts_with("BRA") || op == "EXIT") {
            if (loads == 2 * ilp && ffma == 4 * ilp && loads_before_ffma >= 2 * std::min(ilp, 4)) ++hot;
            loads = ffma = loads_before_ffma = 0;
          }
        }
        EXPECT_GE(hot, 1) << "no block with a whole tile's unguarded loads ahead of its FFMAs";
        if (v == "smem_dot") {
          EXPECT_EQ(wide_global, 0) << "staged by cp.async (LDGSTS), not LDG";
        }
      }
      EXPECT_EQ(kernels, 4) << arch << " " << v << ": --ilp 1, 2, 4, 8";
    }
  }
}

}  // namespace
}  // namespace memlab::inspect
