// SASS proof for the transpose lab, for every rung of its table from what its tile says: the rungs of
// one element per access move their elements four (tile_steps) per thread, through shared memory where
// their layout says so; the 16-byte rungs move 16-byte vectors to and from global memory and into
// shared memory (LDG.E.128, STS.128, STG.E.128) and read the tile element by element. No rung spills.
// Needs cuobjdump, not a GPU.
#include "inspect/sass_fixture.hpp"
#include "labs/transpose/transpose.hpp"

namespace memlab::inspect {
namespace {

using labs::transpose::rung_traits;
using labs::transpose::smem_layout;
using labs::transpose::tile_traits;

const std::array<std::pair<const char*, int>, 3> transpose_dtypes{{{"f16", 16}, {"f32", 32}, {"f64", 64}}};

TEST_F(sass_proof, transpose_rungs_move_what_their_tiles_say) {
  int checked = 0;
  for (const auto& v : labs::transpose::table().variants) {
    const tile_traits& t = v.traits_as<rung_traits>().tile;
    if (!labs::transpose::has_tiles(t)) continue;  // a library's rung (memlab::transpose: tests/library)
    for (const auto& [arch, r] : reports) {
      for (const auto& [dt, bits] : transpose_dtypes) {
        SCOPED_TRACE(arch + " " + std::string(v.name) + " " + dt);
        const auto* k = find(r, "transpose", v.name, dt);
        ASSERT_NE(k, nullptr);
        const int steps = labs::transpose::tile_steps(t, static_cast<std::size_t>(bits / 8));  // unrolled, each way
        const int width = t.vec_bytes == 0 ? bits : 8 * t.vec_bytes;
        EXPECT_EQ(global_widths(*k, mem_dir::load), (std::map<int, int>{{width, steps}}));
        EXPECT_EQ(global_widths(*k, mem_dir::store), (std::map<int, int>{{width, steps}}));
        const auto sts = shared_widths(*k, mem_dir::store), lds = shared_widths(*k, mem_dir::load);
        if (t.layout == smem_layout::none) {
          EXPECT_TRUE(sts.empty() && lds.empty()) << "no shared memory";
        } else {
          EXPECT_EQ(sts, (std::map<int, int>{{width, steps}}));  // whole vectors into their slots
          // The tile's columns element by element: V per output vector.
          EXPECT_EQ(lds, (std::map<int, int>{{bits, steps * (width / bits)}}));
        }
        EXPECT_EQ(count_space(*k, mem_space::generic), 0);
        EXPECT_EQ(count_space(*k, mem_space::local), 0) << "a spill, or a vector packed through local memory";
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace memlab::inspect
