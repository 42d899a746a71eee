// SASS proof for the stride lab: the strided variants access global memory one element at a time
// (the lesson is the addresses, not the width); vec16 moves 128-bit vectors, misaligned or not.
// Needs cuobjdump, not a GPU.
#include "inspect/sass_fixture.hpp"
#include "labs/stride/stride.hpp"

namespace memlab::inspect {
namespace {

const std::array<std::pair<const char*, int>, 5> stride_dtypes{
    {{"u8", 8}, {"f16", 16}, {"bf16", 16}, {"f32", 32}, {"f64", 64}}};

TEST_F(sass_proof, stride_strided_variants_use_element_wide_accesses_only) {
  for (const auto& [arch, r] : reports) {
    for (const auto& rung : labs::stride::table().variants) {
      if (rung.traits_as<labs::stride::stride_rung>().vector_bytes != 0) continue;  // vec16: below
      const std::string v(rung.name);
      for (const auto& [dt, bits] : stride_dtypes) {
        SCOPED_TRACE(arch + " " + v + " " + dt);
        const auto* k = find(r, "stride", v, dt);
        ASSERT_NE(k, nullptr);
        for (mem_dir dir : {mem_dir::load, mem_dir::store}) {
          const auto w = global_widths(*k, dir);
          ASSERT_EQ(w.size(), 1u) << "one access width only";
          EXPECT_EQ(w.begin()->first, bits);
          // 16 bytes of elements per thread in the unrolled full tile, + one rolled partial tile.
          EXPECT_GE(w.begin()->second, 16 / (bits / 8) + 1);
        }
        EXPECT_EQ(count_space(*k, mem_space::generic), 0);
        EXPECT_EQ(count_space(*k, mem_space::local), 0);
      }
    }
  }
}

TEST_F(sass_proof, stride_vec16_moves_128_bit_vectors_and_an_element_tail) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [dt, bits] : stride_dtypes) {
      SCOPED_TRACE(arch + " vec16 " + dt);
      const auto* k = find(r, "stride", "vec16", dt);
      ASSERT_NE(k, nullptr);
      const auto loads = global_widths(*k, mem_dir::load);
      const auto stores = global_widths(*k, mem_dir::store);
      // Loads: the aligned path's vector, the realigning path's own and lane 31's extra vector.
      ASSERT_TRUE(loads.contains(128));
      EXPECT_GE(loads.at(128), 3);
      ASSERT_TRUE(stores.contains(128));
      EXPECT_GE(stores.at(128), 2);
      for (const auto& w : {loads, stores}) {
        for (const auto& [b, count] : w) {
          if (b == 128) continue;
          EXPECT_EQ(b, bits) << "neither vector- nor element-wide";
          EXPECT_EQ(count, 1) << "the tail should be one rolled element loop";
        }
      }
      EXPECT_EQ(count_space(*k, mem_space::generic), 0) << "generic LD/ST: the realigned pointer lost its global space";
      EXPECT_EQ(count_space(*k, mem_space::local), 0) << "local memory: the realign's word array spilled";
    }
  }
}

}  // namespace
}  // namespace memlab::inspect
