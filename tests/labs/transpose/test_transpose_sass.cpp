// SASS proof for the transpose lab: the 32 x 32 rungs move one element per access, through shared
// memory where they claim to; smem_vec moves 16-byte vectors to and from global memory and into
// shared memory (LDG.E.128, STS.128, STG.E.128) and reads the tile element by element. No rung
// spills. Needs cuobjdump, not a GPU.
#include "inspect/sass_fixture.hpp"

namespace memlab::inspect {
namespace {

const std::array<std::pair<const char*, int>, 3> transpose_dtypes{{{"f16", 16}, {"f32", 32}, {"f64", 64}}};

// {width_bits: count} holds exactly one width.
int only_width(const std::map<int, int>& w) {
  EXPECT_EQ(w.size(), 1u) << "more than one access width";
  return w.empty() ? 0 : w.begin()->first;
}

TEST_F(sass_proof, transpose_32x32_rungs_move_elements_four_per_thread) {
  for (const auto& [arch, r] : reports) {
    for (const char* v : {"naive", "smem", "smem_padded", "smem_swizzled"}) {
      for (const auto& [dt, bits] : transpose_dtypes) {
        SCOPED_TRACE(arch + " " + v + " " + dt);
        const auto* k = find(r, "transpose", v, dt);
        ASSERT_NE(k, nullptr);
        const auto loads = global_widths(*k, mem_dir::load), stores = global_widths(*k, mem_dir::store);
        EXPECT_EQ(only_width(loads), bits);
        EXPECT_EQ(only_width(stores), bits);
        EXPECT_EQ(loads.begin()->second, 4);  // unrolled: 4 elements in flight per thread
        EXPECT_EQ(stores.begin()->second, 4);
        const auto sts = shared_widths(*k, mem_dir::store), lds = shared_widths(*k, mem_dir::load);
        if (std::string_view(v) == "naive") {
          EXPECT_TRUE(sts.empty() && lds.empty()) << "naive goes through no shared memory";
        } else {
          EXPECT_EQ(only_width(sts), bits);
          EXPECT_EQ(only_width(lds), bits);
          EXPECT_EQ(sts.begin()->second, 4);
          EXPECT_EQ(lds.begin()->second, 4);
        }
        EXPECT_EQ(count_space(*k, mem_space::generic), 0);
        EXPECT_EQ(count_space(*k, mem_space::local), 0);
      }
    }
  }
}

TEST_F(sass_proof, transpose_smem_vec_moves_16_byte_vectors_through_global_and_into_shared) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [dt, bits] : transpose_dtypes) {
      SCOPED_TRACE(arch + " smem_vec " + dt);
      const auto* k = find(r, "transpose", "smem_vec", dt);
      ASSERT_NE(k, nullptr);
      const int steps = bits / 8;  // sizeof(T) vectors per thread each way
      const auto loads = global_widths(*k, mem_dir::load), stores = global_widths(*k, mem_dir::store);
      EXPECT_EQ(only_width(loads), 128);
      EXPECT_EQ(loads.begin()->second, steps);
      EXPECT_EQ(only_width(stores), 128);
      EXPECT_EQ(stores.begin()->second, steps);
      const auto sts = shared_widths(*k, mem_dir::store), lds = shared_widths(*k, mem_dir::load);
      EXPECT_EQ(only_width(sts), 128);  // STS.128: whole vectors into their slots
      EXPECT_EQ(sts.begin()->second, steps);
      EXPECT_EQ(only_width(lds), bits);  // the tile's columns element by element: V per output vector
      EXPECT_EQ(lds.begin()->second, steps * (128 / bits));
      EXPECT_EQ(count_space(*k, mem_space::generic), 0);
      EXPECT_EQ(count_space(*k, mem_space::local), 0) << "the packing of a vector went through local memory";
    }
  }
}

TEST_F(sass_proof, transpose_smem_vec_rows_moves_16_byte_vectors_through_global_and_into_shared) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [dt, bits] : transpose_dtypes) {
      SCOPED_TRACE(arch + " smem_vec_rows " + dt);
      const auto* k = find(r, "transpose", "smem_vec_rows", dt);
      ASSERT_NE(k, nullptr);
      const int steps = 128 / bits;  // 16 / sizeof(T) vectors per thread each way
      EXPECT_EQ(global_widths(*k, mem_dir::load), (std::map<int, int>{{128, steps}}));
      EXPECT_EQ(global_widths(*k, mem_dir::store), (std::map<int, int>{{128, steps}}));
      EXPECT_EQ(shared_widths(*k, mem_dir::store), (std::map<int, int>{{128, steps}}));
      EXPECT_EQ(shared_widths(*k, mem_dir::load), (std::map<int, int>{{bits, steps * (128 / bits)}}));
      EXPECT_EQ(count_space(*k, mem_space::generic), 0);
      EXPECT_EQ(count_space(*k, mem_space::local), 0);
    }
  }
}

}  // namespace
}  // namespace memlab::inspect
