// SASS proof for the layout lab: aos and soa read element by element (the lesson is the addresses);
// aos_vec loads whole structures as three 16-byte vectors and stores one, plus a one-element tail.
// Needs cuobjdump, not a GPU.
#include "inspect/sass_fixture.hpp"
#include "labs/layout/layout.hpp"

namespace memlab::inspect {
namespace {

const std::array<std::pair<const char*, int>, 3> layout_dtypes{{{"f16", 16}, {"f32", 32}, {"f64", 64}}};

TEST_F(sass_proof, layout_aos_and_soa_use_element_wide_accesses) {
  for (const auto& [arch, r] : reports) {
    for (const auto& rung : labs::layout::table().variants) {
      if (rung.traits_as<labs::layout::layout_rung>().whole_structures) continue;  // aos_vec: below
      const std::string v(rung.name);
      for (const auto& [dt, bits] : layout_dtypes) {
        SCOPED_TRACE(arch + " " + v + " " + dt);
        const auto* k = find(r, "layout", v, dt);
        ASSERT_NE(k, nullptr);
        for (mem_dir dir : {mem_dir::load, mem_dir::store}) {
          const auto w = global_widths(*k, dir);
          ASSERT_EQ(w.size(), 1u);
          EXPECT_EQ(w.begin()->first, bits);
          EXPECT_GE(w.begin()->second, 16 / (bits / 8) + 1);  // 16 B per thread unrolled + the rolled tile
        }
        EXPECT_EQ(count_space(*k, mem_space::local), 0);
      }
    }
  }
}

TEST_F(sass_proof, layout_aos_vec_loads_whole_structures_in_16_byte_vectors) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [dt, bits] : layout_dtypes) {
      SCOPED_TRACE(arch + " aos_vec " + dt);
      const auto* k = find(r, "layout", "aos_vec", dt);
      ASSERT_NE(k, nullptr);
      const auto loads = global_widths(*k, mem_dir::load), stores = global_widths(*k, mem_dir::store);
      // Three whole LDG.E.128 (not narrowed to the field's words), one element load for the tail.
      EXPECT_EQ(loads, (std::map<int, int>{{bits, 1}, {128, 3}}));
      EXPECT_EQ(stores, (std::map<int, int>{{bits, 1}, {128, 1}}));
      EXPECT_EQ(count_space(*k, mem_space::local), 0) << "the field pick went through local memory";
    }
  }
}

}  // namespace
}  // namespace memlab::inspect
