// SASS proof for the gather lab: both orders run the same code, element-wide table loads and
// stores, 32-bit index loads. Needs cuobjdump, not a GPU.
#include "inspect/sass_fixture.hpp"
#include "labs/gather/gather.hpp"

namespace memlab::inspect {
namespace {

TEST_F(sass_proof, gather_both_orders_load_32_bit_indices_and_element_wide_values) {
  for (const auto& [arch, r] : reports) {
    for (const auto& rung : labs::gather::table().variants) {
      const std::string v(rung.name);
      for (const auto& [dt, bits] : {std::pair<const char*, int>{"f32", 32}, {"f64", 64}}) {
        SCOPED_TRACE(arch + " " + v + " " + dt);
        const auto* k = find(r, "gather", v, dt);
        ASSERT_NE(k, nullptr);
        const auto loads = global_widths(*k, mem_dir::load);
        const auto stores = global_widths(*k, mem_dir::store);
        ASSERT_TRUE(loads.contains(32));  // the u32 indices (and the f32 values)
        ASSERT_EQ(stores.size(), 1u);
        EXPECT_EQ(stores.begin()->first, bits);
        // 4 lookups in the unrolled full tile + 1 rolled: 5 stores, 5 index + 5 table loads.
        EXPECT_GE(stores.begin()->second, 5);
        int total_loads = 0;
        for (const auto& [b, c] : loads) {
          EXPECT_TRUE(b == 32 || b == bits) << b;
          total_loads += c;
        }
        EXPECT_GE(total_loads, 10);
        EXPECT_EQ(count_space(*k, mem_space::generic), 0);
        EXPECT_EQ(count_space(*k, mem_space::local), 0);
      }
    }
  }
}

}  // namespace
}  // namespace memlab::inspect
