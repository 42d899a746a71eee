// SASS proof: what each tile variant's global -> shared copy really compiled to, read from the memlab
// binary for every SASS architecture it carries. Needs cuobjdump, not a GPU.
//
// The lesson, asserted: under the tutorial's local_partition (8, 32) a thread owns every 8th element
// of a column, so no copy policy and no static layout can vectorize it (element-wide LDG and STS);
// once the partition gives each thread 16 contiguous bytes, the width is the policy's: UniversalCopy<T>
// and copy() on dynamic layouts stay element-wide (they assume no alignment), copy() on static
// layouts, AutoVectorizingCopyWithAssumedAlignment<128> and a 128-bit atom give 128-bit accesses.
#include <set>
#include <string>
#include <vector>

#include "inspect/sass_fixture.hpp"
#include "labs/tile/tile.hpp"

namespace memlab::inspect {
namespace {

struct expected_widths {
  std::string variant;
  bool vector;  // 128-bit global loads and shared stores; else one element each
};

// Every rung that copies through registers (LDG + STS; not cp.async), with the width its traits
// claim: 16 bytes, or one element.
std::vector<expected_widths> ladder() {
  std::vector<expected_widths> out;
  for (const auto& v : labs::tile::table().variants) {
    const auto& t = v.traits_as<labs::tile::tile_rung>();
    if (!t.async_copy) out.push_back({std::string(v.name), t.access_bytes == 16});
  }
  return out;
}

const std::vector<std::pair<const char*, int>> dtypes{{"f32", 32}, {"f16", 16}};

std::vector<const labeled_kernel*> kernels_of(const inspect_report& r, std::string_view variant, std::string_view dt) {
  std::vector<const labeled_kernel*> out;
  for (const auto& k : r.kernels)
    if (k.lab == "tile" && k.variant == variant && k.dtype == dt) out.push_back(&k);
  return out;
}

std::set<int> widths(const std::map<int, int>& w) {
  std::set<int> out;
  for (const auto& [bits, count] : w) out.insert(bits);
  return out;
}

// The write-back every variant shares: LDS.128 + STG.E.128; no spills, no generic accesses.
void expect_common_write_back(const labeled_kernel& k) {
  EXPECT_EQ(widths(shared_widths(k, mem_dir::load)), std::set<int>{128}) << "write-back: LDS.128";
  EXPECT_EQ(widths(global_widths(k, mem_dir::store)), std::set<int>{128}) << "write-back: STG.E.128";
  EXPECT_EQ(count_space(k, mem_space::generic), 0) << "generic LD/ST: the compiler lost the address space";
  EXPECT_EQ(count_space(k, mem_space::local), 0) << "local memory: spills";
}

TEST_F(sass_proof, tile_every_variant_and_dtype_is_found_on_every_arch) {
  const std::size_t statics = labs::tile::static_tiles.size();
  for (const auto& [arch, r] : reports) {
    for (const auto& info : labs::tile::table().variants) {
      for (const auto& [dt, bits] : dtypes) {
        const auto ks = kernels_of(r, info.name, dt);
        const bool is_static = info.traits_as<labs::tile::tile_rung>().static_layout;
        EXPECT_EQ(ks.size(), is_static ? statics : 1u) << arch << " " << info.name << " " << dt;
      }
    }
  }
}

TEST_F(sass_proof, tile_global_to_shared_widths_per_variant) {
  for (const auto& [arch, r] : reports) {
    const auto rungs = ladder();
    ASSERT_EQ(rungs.size(), labs::tile::table().variants.size() - 1) << "one cp.async rung";
    for (const auto& e : rungs) {
      for (const auto& [dt, bits] : dtypes) {
        const int want = e.vector ? 128 : bits;
        for (const auto* k : kernels_of(r, e.variant, dt)) {
          SCOPED_TRACE(arch + " " + e.variant + " " + dt + " " + k->code.name);
          EXPECT_EQ(widths(global_widths(*k, mem_dir::load)), std::set<int>{want}) << "global -> shared: LDG width";
          EXPECT_EQ(widths(shared_widths(*k, mem_dir::store)), std::set<int>{want}) << "global -> shared: STS width";
          EXPECT_EQ(count_space(*k, mem_space::async_copy), 0);
          expect_common_write_back(*k);
        }
        // The policy each result row prints says the same width.
        const memlab::variant* info = labs::tile::table().find_variant(e.variant);
        ASSERT_NE(info, nullptr) << e.variant;
        const auto& t = info->traits_as<labs::tile::tile_rung>();
        EXPECT_EQ(labs::tile::plan(t, static_cast<std::size_t>(bits / 8), 128, 128, 1).vec_bytes * 8, want)
            << e.variant;
      }
    }
  }
}

TEST_F(sass_proof, tile_ldgsts_cg16_copies_with_cp_async_cg_16_bytes_and_no_register_round_trip) {
  ASSERT_TRUE(labs::tile::table().find_variant("ldgsts_cg16")->traits_as<labs::tile::tile_rung>().async_copy);
  for (const auto& [arch, r] : reports) {
    for (const auto& [dt, bits] : dtypes) {
      SCOPED_TRACE(arch + " ldgsts_cg16 " + dt);
      const auto ks = kernels_of(r, "ldgsts_cg16", dt);
      ASSERT_EQ(ks.size(), 1u);
      const auto& k = *ks[0];
      EXPECT_TRUE(global_widths(k, mem_dir::load).empty()) << "no LDG: the data never enters registers";
      EXPECT_TRUE(shared_widths(k, mem_dir::store).empty()) << "no STS";
      int async16 = 0, bypass = 0;
      for (const auto& h : k.histogram) {
        if (h.op.space != mem_space::async_copy) continue;
        EXPECT_EQ(h.op.width_bits, 128) << h.op.op;
        async16 += h.count;
        bypass += h.op.op.find("BYPASS") != std::string::npos ? h.count : 0;
      }
      EXPECT_GE(async16, 1);
      EXPECT_EQ(bypass, async16) << "cp.async.cg: L1 bypassed (LDGSTS.E.BYPASS.128)";
      expect_common_write_back(k);
    }
  }
}

// The static 128x256 f32 rungs unroll the whole tile: 128 KiB / 256 threads / access width.
TEST_F(sass_proof, tile_static_layouts_unroll_the_whole_tile) {
  for (const auto& [arch, r] : reports) {
    for (const auto* k : kernels_of(r, "cute_tiled_default_static", "f32")) {
      if (k->code.name.find("<128, 256>") == std::string::npos) continue;
      SCOPED_TRACE(arch);
      EXPECT_EQ(global_widths(*k, mem_dir::load).at(128), 32);
    }
    for (const auto* k : kernels_of(r, "cute_universal_static", "f32")) {
      if (k->code.name.find("<128, 256>") == std::string::npos) continue;
      SCOPED_TRACE(arch);
      EXPECT_EQ(global_widths(*k, mem_dir::load).at(32), 128);
    }
  }
}

}  // namespace
}  // namespace memlab::inspect
