// SASS proof for the async lab: which instructions each path from global to shared memory compiled
// to, on every architecture in the binary. Needs cuobjdump, not a GPU.
//   ldg_sts<W>     LDG (W bytes) + STS (W bytes): the data passes through registers; no LDGSTS
//   ldgsts_ca<W>   LDGSTS.E[.64|.128] and no BYPASS; no LDG and no STS of the tile
//   ldgsts_cg16, pipelined, divergent_commit   LDGSTS.E.BYPASS.128 only
//   divergent_commit   two LDGDEPBAR per commit site (one per branch), pipelined one
//   tma_bulk       UBLKCP both ways, tma_tensor UTMALDG + UTMASTG (sm_90 and newer; no thread
//                  touches the data: no LDG/STS/LDS/STG but the byte tail's)
// and every tile rung writes back with LDS + STG of its kernel's write-back width. The byte-wise
// tail (LDG.E.U8 / STG.E.U8, once) is in every kernel.
#include <algorithm>
#include <string>

#include "inspect/sass_fixture.hpp"

namespace memlab::inspect {
namespace {

std::vector<const labeled_kernel*> kernels_of(const inspect_report& r, std::string_view variant) {
  std::vector<const labeled_kernel*> out;
  for (const auto& k : r.kernels)
    if (k.lab == "async" && k.variant == variant) out.push_back(&k);
  return out;
}

int count_opcode(const labeled_kernel& k, std::string_view op) {
  return static_cast<int>(std::count_if(k.code.opcodes.begin(), k.code.opcodes.end(), [&](const std::string& o) {
    return o == op || o.starts_with(std::string(op) + ".");
  }));
}

bool has_tma(const std::string& arch) { return arch >= "sm_90" || arch.size() > 5; }  // sm_100 sorts before sm_90

// The write-back width a tile kernel was instantiated with: tile_kernel<Path, 16>.
int writeback_bits(const labeled_kernel& k) {
  const auto& n = k.code.name;
  if (n.ends_with(", 4>(memlab::labs::async::copy_args)")) return 32;
  if (n.ends_with(", 8>(memlab::labs::async::copy_args)")) return 64;
  return 128;
}

// Widths of one direction and space, the byte tail's 8-bit access left out.
std::map<int, int> without_tail(std::map<int, int> w) {
  if (auto it = w.find(8); it != w.end() && it->second == 1) w.erase(it);
  return w;
}

std::map<int, int> async_widths(const labeled_kernel& k, int& bypass) {
  std::map<int, int> out;
  bypass = 0;
  for (const auto& h : k.histogram) {
    if (h.op.space != mem_space::async_copy) continue;
    out[h.op.width_bits] += h.count;
    if (h.op.op.find("BYPASS") != std::string::npos) bypass += h.count;
  }
  return out;
}

TEST_F(sass_proof, async_every_variant_is_found_on_every_arch) {
  for (const auto& [arch, r] : reports) {
    for (const char* v : {"ldg_sts4", "ldg_sts8", "ldg_sts16", "ldgsts_ca4", "ldgsts_ca8", "ldgsts_ca16", "ldgsts_cg16",
                          "pipelined", "divergent_commit", "tma_bulk", "tma_tensor"}) {
      EXPECT_FALSE(kernels_of(r, v).empty()) << arch << " " << v;
    }
  }
}

TEST_F(sass_proof, async_ldg_sts_goes_through_registers_at_its_width) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [v, bits] : {std::pair{"ldg_sts4", 32}, std::pair{"ldg_sts8", 64}, std::pair{"ldg_sts16", 128}}) {
      for (const auto* k : kernels_of(r, v)) {
        SCOPED_TRACE(arch + " " + k->code.name);
        const auto loads = without_tail(global_widths(*k, mem_dir::load));
        ASSERT_EQ(loads.size(), 1u);
        EXPECT_EQ(loads.begin()->first, bits) << "LDG width";
        EXPECT_GE(loads.begin()->second, 8) << "a batch of 8 chunks per thread, unrolled";
        const auto sts = shared_widths(*k, mem_dir::store);
        ASSERT_EQ(sts.size(), 1u);
        EXPECT_EQ(sts.begin()->first, bits) << "STS width";
        EXPECT_EQ(count_space(*k, mem_space::async_copy), 0);
        EXPECT_EQ(shared_widths(*k, mem_dir::load).begin()->first, writeback_bits(*k)) << "write-back LDS";
        EXPECT_EQ(without_tail(global_widths(*k, mem_dir::store)).begin()->first, writeback_bits(*k))
            << "write-back STG";
        EXPECT_EQ(count_space(*k, mem_space::local), 0);
      }
    }
  }
}

TEST_F(sass_proof, async_cp_async_ca_allocates_in_l1_and_uses_no_registers_for_the_tile) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [v, bits] :
         {std::pair{"ldgsts_ca4", 32}, std::pair{"ldgsts_ca8", 64}, std::pair{"ldgsts_ca16", 128}}) {
      for (const auto* k : kernels_of(r, v)) {
        SCOPED_TRACE(arch + " " + k->code.name);
        int bypass = 0;
        const auto w = async_widths(*k, bypass);
        ASSERT_EQ(w.size(), 1u);
        EXPECT_EQ(w.begin()->first, bits) << "LDGSTS.E width";
        EXPECT_EQ(bypass, 0) << ".ca: no BYPASS";
        EXPECT_TRUE(without_tail(global_widths(*k, mem_dir::load)).empty())
            << "no LDG: the tile never enters registers";
        EXPECT_TRUE(shared_widths(*k, mem_dir::store).empty()) << "no STS";
        EXPECT_EQ(shared_widths(*k, mem_dir::load).begin()->first, writeback_bits(*k)) << "write-back LDS";
      }
    }
  }
}

TEST_F(sass_proof, async_cp_async_cg_bypasses_l1_16_bytes_at_a_time) {
  for (const auto& [arch, r] : reports) {
    for (const char* v : {"ldgsts_cg16", "pipelined", "divergent_commit"}) {
      const auto ks = kernels_of(r, v);
      ASSERT_FALSE(ks.empty()) << arch << " " << v;
      for (const auto* k : ks) {
        SCOPED_TRACE(arch + " " + k->code.name);
        int bypass = 0;
        const auto w = async_widths(*k, bypass);
        ASSERT_EQ(w.size(), 1u);
        EXPECT_EQ(w.begin()->first, 128);
        EXPECT_EQ(bypass, w.begin()->second) << "LDGSTS.E.BYPASS.128 only";
        EXPECT_TRUE(without_tail(global_widths(*k, mem_dir::load)).empty());
        EXPECT_TRUE(shared_widths(*k, mem_dir::store).empty());
        EXPECT_EQ(shared_widths(*k, mem_dir::load).begin()->first, 128) << "write-back LDS.128";
        EXPECT_EQ(count_space(*k, mem_space::local), 0);
      }
    }
  }
}

// The pitfall, in the machine code: the divergent branch keeps a commit (LDGDEPBAR) on each side,
// so a warp that runs both executes two per tile. The pipeline has one per commit site.
TEST_F(sass_proof, async_a_commit_in_a_divergent_branch_is_two_commits) {
  for (const auto& [arch, r] : reports) {
    const auto pipelined = kernels_of(r, "pipelined");
    const auto divergent = kernels_of(r, "divergent_commit");
    ASSERT_EQ(pipelined.size(), 4u) << arch;
    ASSERT_EQ(divergent.size(), 4u) << arch;
    for (std::size_t i = 0; i < 4; ++i) {
      const int stages = static_cast<int>(i) + 1;
      const auto stage_of = [](const labeled_kernel& k) { return k.code.name.substr(k.code.name.find('<') + 1, 1); };
      for (const auto* ks : {&pipelined, &divergent}) {
        const auto* k = *std::find_if(ks->begin(), ks->end(),
                                      [&](const labeled_kernel* x) { return stage_of(*x) == std::to_string(stages); });
        SCOPED_TRACE(arch + " " + k->code.name);
        const int commits = count_opcode(*k, "LDGDEPBAR");
        // The prologue's Stages - 1 commits (unrolled) and the loop's one, per side of the branch.
        EXPECT_EQ(commits, (ks == &divergent ? 2 : 1) * stages) << "LDGDEPBAR";
        EXPECT_GE(count_opcode(*k, "DEPBAR"), 1) << "the wait";
      }
    }
  }
}

TEST_F(sass_proof, async_tma_copies_the_tile_with_one_instruction_each_way) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [v, in, out] :
         {std::tuple{"tma_bulk", "UBLKCP.S.G", "UBLKCP.G.S"}, std::tuple{"tma_tensor", "UTMALDG.2D", "UTMASTG.2D"}}) {
      const auto ks = kernels_of(r, v);
      ASSERT_EQ(ks.size(), 1u) << arch << " " << v;
      const auto& k = *ks[0];
      SCOPED_TRACE(arch + " " + v);
      if (!has_tma(arch)) {
        EXPECT_EQ(count_space(k, mem_space::async_copy), 0) << "built without TMA: a trap";
        continue;
      }
      EXPECT_EQ(count_opcode(k, in), 1);
      EXPECT_EQ(count_opcode(k, out), 1);
      EXPECT_EQ(count_space(k, mem_space::async_copy), 2);
      EXPECT_TRUE(shared_widths(k, mem_dir::load).empty()) << "no thread touches the tile";
      EXPECT_TRUE(shared_widths(k, mem_dir::store).empty());
      EXPECT_TRUE(without_tail(global_widths(k, mem_dir::load)).empty());
      EXPECT_TRUE(without_tail(global_widths(k, mem_dir::store)).empty());
      EXPECT_GE(count_opcode(k, "SYNCS"), 1) << "the mbarrier (SYNCS.*)";
    }
  }
}

}  // namespace
}  // namespace memlab::inspect
