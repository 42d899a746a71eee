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
#include <algorithm>
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

using labs::stencil::domain_pick;
using labs::stencil::load_path;
using labs::stencil::rung_traits;

// The lab's stencil rungs (not the copies: memlab::copy's kernels are the copy lab's auto), as the table
// lists them, with their traits. Every test below takes what it expects of a rung's SASS from them, so
// a record whose traits disagree with its kernel fails here.
std::vector<std::pair<std::string, rung_traits>> stencil_rungs() {
  std::vector<std::pair<std::string, rung_traits>> out;
  for (const auto& v : labs::stencil::table().variants) {
    const auto& t = v.traits_as<rung_traits>();
    if (!t.copy) out.emplace_back(std::string(v.name), t);
  }
  return out;
}

TEST_F(sass_proof, stencil_every_rung_is_found_on_every_arch) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [name, t] : stencil_rungs()) {
      int n = 0;
      for (const auto& k : r.kernels) n += k.lab == "stencil" && k.variant == name;
      // A pipelined rung: one kernel per stage count.
      const auto stage_counts =
          static_cast<int>(labs::stencil::max_overlap_stages - labs::stencil::min_overlap_stages + 1);
      EXPECT_EQ(n, t.pipelined ? stage_counts : 1) << arch << " " << name;
    }
  }
}

// Through registers, 4 bytes: LDG (and STS where the tile is staged), no cp.async.
TEST_F(sass_proof, stencil_ldg_rungs_stage_through_registers_4_bytes) {
  int checked = 0;
  for (const auto& [arch, r] : reports) {
    for (const auto& [name, t] : stencil_rungs()) {
      if (t.path == load_path::cp_async) continue;
      SCOPED_TRACE(arch + " " + name);
      ASSERT_EQ(t.access_bytes, 4);
      const auto& k = kernel_of(r, name);
      EXPECT_EQ(widths(global_widths(k, mem_dir::load)), std::set<int>{32});
      EXPECT_TRUE(async_widths(k).empty());
      EXPECT_EQ(widths(global_widths(k, mem_dir::store)), std::set<int>{32});
      if (t.path == load_path::none) {
        EXPECT_EQ(count_space(k, mem_space::shared), 0) << "no staging";
      } else {
        EXPECT_EQ(widths(shared_widths(k, mem_dir::store)), std::set<int>{32});
        EXPECT_EQ(widths(shared_widths(k, mem_dir::load)), std::set<int>{32});
      }
      expect_clean(k);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST_F(sass_proof, stencil_4_byte_ldgsts_rungs_never_load_into_registers) {
  int checked = 0;
  for (const auto& [arch, r] : reports) {
    for (const auto& [name, t] : stencil_rungs()) {
      if (t.path != load_path::cp_async || t.access_bytes != 4) continue;
      SCOPED_TRACE(arch + " " + name);
      const auto& k = kernel_of(r, name);
      EXPECT_TRUE(global_widths(k, mem_dir::load).empty()) << "no LDG: cp.async bypasses the registers";
      EXPECT_TRUE(shared_widths(k, mem_dir::store).empty()) << "no STS";
      EXPECT_EQ(widths(async_widths(k)), std::set<int>{32}) << "LDGSTS.E, 4 bytes";
      EXPECT_EQ(widths(shared_widths(k, mem_dir::load)), std::set<int>{32});
      EXPECT_EQ(widths(global_widths(k, mem_dir::store)), std::set<int>{32});
      expect_clean(k);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

// The 16-byte rungs: 128-bit LDGSTS through cp.async.cg (BYPASS), LDS.128 and STG.E.128. 1D keeps
// 4-byte copies for the chunk that straddles two arrays or is misaligned, and element stores for a
// ragged last quad.
TEST_F(sass_proof, stencil_vec16_rungs_use_128_bit_ldgsts) {
  int checked = 0;
  for (const auto& [arch, r] : reports) {
    for (const auto& [name, t] : stencil_rungs()) {
      if (t.access_bytes != 16) continue;
      SCOPED_TRACE(arch + " " + name);
      ASSERT_EQ(t.path, load_path::cp_async);
      const auto& k = kernel_of(r, name);
      const bool one_d = t.dims == 1;
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
      // threads; 3D, 1152 chunks over 256 threads, per tile (pipelined: 5 per tile it starts in its
      // prologue and in its loop).
      if (t.pipelined) {
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
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

// The lesson of the ladder: the same loads with branches choosing the domain, and without. Each
// rung of 4-byte selects beside its twin of branches (the same traits otherwise); every rung that
// selects (and stages one tile) has no divergent branch around its loads; a rung without staging
// loads every neighbour through branches.
TEST_F(sass_proof, stencil_no_branch_rungs_have_no_divergent_branch_around_their_loads) {
  const auto rungs = stencil_rungs();
  int pairs = 0;
  for (const auto& [arch, r] : reports) {
    for (const auto& [name, t] : rungs) {
      SCOPED_TRACE(arch + " " + name);
      const branch_structure nb = structure_of(kernel_of(r, name));
      if (t.path == load_path::none) {
        EXPECT_GT(nb.divergent, 0);
        continue;
      }
      // (A pipelined rung branches around whole tile loads, past the last tile.)
      if (t.pick != domain_pick::selects || t.pipelined) continue;
      EXPECT_EQ(nb.divergent, 0) << "a load inside a divergent region of the branch-free rung";
      if (t.access_bytes != 4) continue;
      const auto twin = std::find_if(rungs.begin(), rungs.end(), [&](const auto& other) {
        rung_traits b = other.second;
        b.pick = domain_pick::selects;
        return other.second.pick == domain_pick::branches && b.dims == t.dims && b.path == t.path &&
               b.access_bytes == t.access_bytes && b.pipelined == t.pipelined;
      });
      ASSERT_NE(twin, rungs.end()) << "no branching twin";
      SCOPED_TRACE("vs " + twin->first);
      const branch_structure b = structure_of(kernel_of(r, twin->first));
      EXPECT_EQ(nb.accesses, t.dims == 1 ? 9 : 18) << "one predicated access per element";
      EXPECT_EQ(nb.guarded, nb.accesses) << "every access of the branch-free rung is predicated (@P LDG, @P LDGSTS)";
      EXPECT_GT(nb.sel, b.sel) << "the branch-free rung selects its sources";
      EXPECT_GT(b.divergent, 0) << "the branching rung's loads sit behind divergent branches";
      EXPECT_GT(b.accesses, nb.accesses) << "the branching rung has one load per domain a branch can pick";
      EXPECT_GT(b.bra, nb.bra);
      ++pairs;
    }
  }
  EXPECT_GT(pairs, 0);
}

}  // namespace
}  // namespace memlab::inspect
