// SASS proof: what each stencil rung compiled to, read from the memlab binary for every SASS
// architecture it carries. Needs cuobjdump, not a GPU.
//
// Asserted per architecture:
//   - access widths: LDG + STS of 4 bytes for the ldg rungs (1d_ldg: LDG only), LDGSTS of 4 bytes
//     and no LDG for the 4-byte ldgsts rungs, 128-bit LDGSTS (.BYPASS: cp.async.cg) with LDS.128 and
//     STG.E.128 for the 16-byte rungs; no spills, no generic accesses;
//   - branch structure. The parser keeps each instruction's opcode, in order, and whether a
//     predicate guards it. The *_no_branch rungs guard every global -> shared access. The opcode
//     order shows the branches: ptxas opens a divergent region with BSSY, branches inside it (BRA) and
//     reconverges at BSYNC; a load between such a BRA and its BSYNC is a load some threads branch
//     around. The *_no_branch rungs (and the 16-byte ones built on them) have no global -> shared
//     access in such a region, one access per element (8 + 1 halo per 1D thread, 18 per 3D thread),
//     and select their sources (SEL); the branching rungs have their accesses inside divergent
//     regions and one access instruction per domain a branch can pick.
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "inspect/sass_fixture.hpp"
#include "labs/stencil/stencil.hpp"

namespace memlab::inspect {
namespace {

const labeled_kernel& kernel_of(const inspect_report& r, std::string_view variant) {
  const labeled_kernel* k = find(r, "stencil", variant, "");
  if (k == nullptr) throw std::runtime_error("no kernel for stencil " + std::string(variant) + " in " + r.binary);
  return *k;
}

std::string base_of(const std::string& opcode) { return opcode.substr(0, opcode.find('.')); }

bool is_global_to_shared(const std::string& opcode) {
  const std::string b = base_of(opcode);
  return b == "LDG" || b == "LDGSTS";
}

struct branch_structure {
  int accesses = 0;   // LDG and LDGSTS instructions
  int guarded = 0;    // of them, under a predicate (@P0 LDG: the threads whose predicate is false skip it)
  int divergent = 0;  // of them, inside a divergent region after its branch
  int sel = 0;
  int bra = 0;
};

branch_structure structure_of(const labeled_kernel& k) {
  branch_structure s;
  std::vector<bool> regions;  // open BSSY regions: has a BRA been taken inside yet
  for (std::size_t i = 0; i < k.code.opcodes.size(); ++i) {
    const std::string& op = k.code.opcodes[i];
    const std::string b = base_of(op);
    if (b == "BSSY") {
      regions.push_back(false);
    } else if (b == "BSYNC") {
      if (!regions.empty()) regions.pop_back();
    } else if (b == "BRA") {
      ++s.bra;
      if (!regions.empty()) regions.back() = true;
    } else if (b == "SEL") {
      ++s.sel;
    }
    if (is_global_to_shared(op)) {
      ++s.accesses;
      s.guarded += k.code.guarded.at(i);
      for (bool taken : regions) {
        if (taken) {
          ++s.divergent;
          break;
        }
      }
    }
  }
  return s;
}

std::map<int, int> async_widths(const labeled_kernel& k) {
  std::map<int, int> out;
  for (const auto& h : k.histogram)
    if (h.op.space == mem_space::async_copy) out[h.op.width_bits] += h.count;
  return out;
}

std::set<int> widths(const std::map<int, int>& w) {
  std::set<int> out;
  for (const auto& [bits, count] : w) out.insert(bits);
  return out;
}

void expect_clean(const labeled_kernel& k) {
  EXPECT_EQ(count_space(k, mem_space::local), 0) << "local memory: spills";
  EXPECT_EQ(count_space(k, mem_space::generic), 0) << "generic LD/ST: the compiler lost the address space";
}

TEST_F(sass_proof, stencil_every_rung_is_found_on_every_arch) {
  for (const auto& [arch, r] : reports) {
    for (const auto& v : labs::stencil::table().variants) {
      if (v.peer) continue;  // memlab::copy's kernels: the copy lab's auto
      int n = 0;
      for (const auto& k : r.kernels) n += k.lab == "stencil" && k.variant == v.name;
      // 3d_ldgsts_overlap: one kernel per stage count (2, 3, 4).
      EXPECT_EQ(n, std::string(v.name) == "3d_ldgsts_overlap" ? 3 : 1) << arch << " " << v.name;
    }
  }
}

TEST_F(sass_proof, stencil_ldg_rungs_stage_through_registers_4_bytes) {
  for (const auto& [arch, r] : reports) {
    for (const char* v : {"1d_ldg", "1d_ldg_sts", "1d_ldg_no_branch", "3d_ldg", "3d_ldg_no_branch"}) {
      SCOPED_TRACE(arch + " " + v);
      const auto& k = kernel_of(r, v);
      EXPECT_EQ(widths(global_widths(k, mem_dir::load)), std::set<int>{32});
      EXPECT_TRUE(async_widths(k).empty());
      EXPECT_EQ(widths(global_widths(k, mem_dir::store)), std::set<int>{32});
      if (std::string(v) == "1d_ldg") {
        EXPECT_EQ(count_space(k, mem_space::shared), 0) << "no staging";
      } else {
        EXPECT_EQ(widths(shared_widths(k, mem_dir::store)), std::set<int>{32});
        EXPECT_EQ(widths(shared_widths(k, mem_dir::load)), std::set<int>{32});
      }
      expect_clean(k);
    }
  }
}

TEST_F(sass_proof, stencil_4_byte_ldgsts_rungs_never_load_into_registers) {
  for (const auto& [arch, r] : reports) {
    for (const char* v : {"1d_ldgsts", "1d_ldgsts_no_branch", "3d_ldgsts", "3d_ldgsts_no_branch"}) {
      SCOPED_TRACE(arch + " " + v);
      const auto& k = kernel_of(r, v);
      EXPECT_TRUE(global_widths(k, mem_dir::load).empty()) << "no LDG: cp.async bypasses the registers";
      EXPECT_TRUE(shared_widths(k, mem_dir::store).empty()) << "no STS";
      EXPECT_EQ(widths(async_widths(k)), std::set<int>{32}) << "LDGSTS.E, 4 bytes";
      EXPECT_EQ(widths(shared_widths(k, mem_dir::load)), std::set<int>{32});
      EXPECT_EQ(widths(global_widths(k, mem_dir::store)), std::set<int>{32});
      expect_clean(k);
    }
  }
}

// ldgsts_vec16 (both dimensions) and ldgsts_overlap: 128-bit LDGSTS through cp.async.cg (BYPASS),
// LDS.128 and STG.E.128. 1D keeps 4-byte copies for the chunk that straddles two arrays or is
// misaligned, and element stores for a ragged last quad.
TEST_F(sass_proof, stencil_vec16_rungs_use_128_bit_ldgsts) {
  for (const auto& [arch, r] : reports) {
    for (const char* v : {"1d_ldgsts_vec16", "3d_ldgsts_vec16", "3d_ldgsts_overlap"}) {
      SCOPED_TRACE(arch + " " + v);
      const auto& k = kernel_of(r, v);
      const bool one_d = std::string(v) == "1d_ldgsts_vec16";
      const auto async = async_widths(k);
      ASSERT_TRUE(async.count(128)) << "LDGSTS.E.BYPASS.128";
      const std::set<int> want_async = one_d ? std::set<int>{32, 128} : std::set<int>{128};
      EXPECT_EQ(widths(async), want_async);
      int bypass128 = 0;
      for (const auto& h : k.histogram) {
        if (h.op.space == mem_space::async_copy && h.op.width_bits == 128) {
          EXPECT_NE(h.op.op.find("BYPASS"), std::string::npos) << h.op.op << ": cp.async.cg, L1 bypassed";
          bypass128 += h.count;
        }
      }
      // One 16-byte copy per chunk of the thread: 1D, 512 tile chunks and 2 halo chunks over 256
      // threads; 3D, 1152 chunks over 256 threads, per tile (overlap: 5 per tile it starts in its
      // prologue and in its loop).
      if (std::string(v) == "3d_ldgsts_overlap") {
        EXPECT_GE(bypass128, 10);
        EXPECT_EQ(bypass128 % 5, 0);
      } else {
        EXPECT_EQ(bypass128, one_d ? 3 : 5);
      }
      EXPECT_TRUE(global_widths(k, mem_dir::load).empty()) << "no LDG";
      EXPECT_EQ(widths(shared_widths(k, mem_dir::load)), std::set<int>{128});
      const auto stores = global_widths(k, mem_dir::store);
      const std::set<int> want_stores = one_d ? std::set<int>{32, 128} : std::set<int>{128};
      EXPECT_EQ(widths(stores), want_stores);
      expect_clean(k);
    }
  }
}

// The lesson of the ladder: the same loads with branches choosing the domain, and without.
TEST_F(sass_proof, stencil_no_branch_rungs_have_no_divergent_branch_around_their_loads) {
  struct pair {
    const char* branching;
    const char* no_branch;
    int accesses;  // per thread, in the branch-free rung
  };
  const std::vector<pair> pairs{{"1d_ldg_sts", "1d_ldg_no_branch", 9},
                                {"1d_ldgsts", "1d_ldgsts_no_branch", 9},
                                {"3d_ldg", "3d_ldg_no_branch", 18},
                                {"3d_ldgsts", "3d_ldgsts_no_branch", 18}};
  for (const auto& [arch, r] : reports) {
    for (const auto& p : pairs) {
      SCOPED_TRACE(arch + " " + p.branching + " vs " + p.no_branch);
      const branch_structure b = structure_of(kernel_of(r, p.branching));
      const branch_structure nb = structure_of(kernel_of(r, p.no_branch));
      EXPECT_EQ(nb.divergent, 0) << "a load inside a divergent region of the branch-free rung";
      EXPECT_EQ(nb.accesses, p.accesses) << "one predicated access per element";
      EXPECT_EQ(nb.guarded, nb.accesses) << "every access of the branch-free rung is predicated (@P LDG, @P LDGSTS)";
      EXPECT_GT(nb.sel, b.sel) << "the branch-free rung selects its sources";
      EXPECT_GT(b.divergent, 0) << "the branching rung's loads sit behind divergent branches";
      EXPECT_GT(b.accesses, nb.accesses) << "the branching rung has one load per domain a branch can pick";
      EXPECT_GT(b.bra, nb.bra);
    }
    // Built on the branch-free loads: no divergent branch around them either.
    for (const char* v : {"1d_ldgsts_vec16", "3d_ldgsts_vec16"}) {
      EXPECT_EQ(structure_of(kernel_of(r, v)).divergent, 0) << arch << " " << v;
    }
    // 1d_ldg loads every neighbour through branches.
    EXPECT_GT(structure_of(kernel_of(r, "1d_ldg")).divergent, 0) << arch;
  }
}

// The policy each result prints says the width the SASS shows.
TEST_F(sass_proof, stencil_policies_print_the_compiled_width) {
  for (const auto& v : labs::stencil::table().variants) {
    if (v.peer) continue;
    const auto id = v.traits_as<labs::stencil::variant_id>();
    const bool sixteen = std::string(v.name).find("vec16") != std::string::npos ||
                         std::string(v.name).find("overlap") != std::string::npos;
    EXPECT_EQ(labs::stencil::access_bytes(id), sixteen ? 16 : 4) << v.name;
  }
}

}  // namespace
}  // namespace memlab::inspect
