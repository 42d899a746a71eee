// SASS proof for the hierarchy lab: every chase is a chain of dependent loads as compiled (each
// load's address register is the destination of the load before it: no unrolling into independent
// loads, no prefetch), the register chain keeps its 64 dependent FFMAs per iteration, and the
// streams move 16 bytes per access without spilling. Needs cuobjdump, not a GPU.
#include <algorithm>
#include <regex>
#include <string>

#include "inspect/sass_fixture.hpp"

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

TEST_F(sass_proof, hierarchy_streams_move_16_bytes_per_access) {
  for (const auto& [arch, r] : reports) {
    for (const char* v : {"dot", "dot_l2", "dot_l2_all", "copy", "add", "triad", "write", "smem_dot"}) {
      SCOPED_TRACE(arch + " " + v);
      bool any = false;
      for (const auto& k : r.kernels) {
        if (k.lab != "hierarchy" || k.variant != v) continue;
        any = true;
        EXPECT_EQ(count_space(k, mem_space::local), 0) << k.code.name;
        const auto loads = global_widths(k, mem_dir::load), stores = global_widths(k, mem_dir::store);
        if (std::string_view(v) == "smem_dot") {
          EXPECT_TRUE(shared_widths(k, mem_dir::load).contains(128)) << k.code.name;
        } else if (std::string_view(v) != "write") {
          EXPECT_EQ(loads.size(), 1u) << k.code.name;
          EXPECT_TRUE(loads.contains(128)) << k.code.name;
        }
        if (std::string_view(v).starts_with("dot") || std::string_view(v) == "smem_dot") continue;
        EXPECT_TRUE(stores.contains(128)) << k.code.name;
      }
      EXPECT_TRUE(any);
    }
  }
}

}  // namespace
}  // namespace memlab::inspect
