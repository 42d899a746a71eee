// SASS proof for the copy lab and memlab::copy (its variant auto): every rung and dtype is there, and
// the ladder's widths: scalar element-wide, vec8 64-bit, vec16 128-bit (four in flight when unrolled),
// vec32 and the library's 32-byte body 256-bit on sm_100 and absent before; the library's body
// 128-bit also when realigning. Needs cuobjdump, not a GPU.
#include <array>

#include "inspect/sass_fixture.hpp"
#include "labs/copy/copy.hpp"

namespace memlab::inspect {
namespace {

const std::array<std::pair<const char*, int>, 5> dtypes{
    {{"u8", 8}, {"f16", 16}, {"bf16", 16}, {"f32", 32}, {"f64", 64}}};

TEST_F(sass_proof, every_copy_variant_and_dtype_is_found_on_every_arch) {
  for (const auto& [arch, r] : reports) {
    for (const char* v : {"scalar", "vec8", "vec16", "vec16_unroll", "vec32", "cub"}) {
      for (const auto& [dt, bits] : dtypes) {
        EXPECT_NE(find(r, "copy", v, dt), nullptr) << arch << " " << v << " " << dt;
      }
    }
  }
}

// The lesson of the ladder, asserted: the main path moves 16-byte vectors; the only narrower
// accesses are the one load and one store of the rolled, element-wise tail.
void expect_vector_path(const labeled_kernel& k, int vec_bits, int elem_bits, int min_vector_ops) {
  for (mem_dir dir : {mem_dir::load, mem_dir::store}) {
    const auto w = global_widths(k, dir);
    SCOPED_TRACE(std::string(to_string(dir)));
    ASSERT_TRUE(w.contains(vec_bits));
    EXPECT_GE(w.at(vec_bits), min_vector_ops);
    for (const auto& [bits, count] : w) {
      if (bits == vec_bits) continue;
      EXPECT_EQ(bits, elem_bits) << "a global access neither vector- nor element-wide";
      EXPECT_EQ(count, 1) << "the tail should be one rolled element loop";
    }
  }
  EXPECT_EQ(count_space(k, mem_space::generic), 0) << "generic LD/ST: the compiler lost the global address space";
  EXPECT_EQ(count_space(k, mem_space::local), 0) << "local memory: spills";
}

TEST_F(sass_proof, vec16_moves_global_data_with_128_bit_accesses) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [dt, bits] : dtypes) {
      SCOPED_TRACE(arch + " vec16 " + dt);
      const auto* k = find(r, "copy", "vec16", dt);
      ASSERT_NE(k, nullptr);
      expect_vector_path(*k, 128, bits, 1);
    }
  }
}

TEST_F(sass_proof, vec16_unroll_keeps_four_128_bit_loads_in_flight) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [dt, bits] : dtypes) {
      SCOPED_TRACE(arch + " vec16_unroll " + dt);
      const auto* k = find(r, "copy", "vec16_unroll", dt);
      ASSERT_NE(k, nullptr);
      // Four in the unrolled body, one more for the partial tile.
      expect_vector_path(*k, 128, bits, labs::copy::unroll_vectors + 1);
      // In flight means issued back to back: the first four global loads precede the first store.
      int loads_before_store = 0;
      for (const auto& op : k->code.opcodes) {
        const auto m = classify_sass(op);
        if (!m || m->space != mem_space::global) continue;
        if (m->dir == mem_dir::store) break;
        ++loads_before_store;
      }
      EXPECT_GE(loads_before_store, labs::copy::unroll_vectors);
    }
  }
}

// memlab::copy (variant auto): its body kernels, the aligned one and the four realigning ones (one
// per word offset), move global data only with 128-bit loads and stores; the only narrower
// accesses are the byte-wise head and tail (8-bit). The realigning path included: that is the
// point of shuffling neighbour words instead of loading each pair twice.
TEST_F(sass_proof, auto_body_is_128_bit_also_when_realigning) {
  for (const auto& [arch, r] : reports) {
    int aligned = 0, realign = 0;
    for (const auto& k : r.kernels) {
      if (k.lab != "copy" || k.variant != "auto") continue;
      const bool is_aligned = k.code.name.find("copy_aligned16_kernel") != std::string::npos;
      const bool is_realign = k.code.name.find("copy_realign16_kernel") != std::string::npos;
      if (!is_aligned && !is_realign) continue;  // the byte kernel for copies under 63 bytes
      SCOPED_TRACE(arch + " " + k.code.name);
      aligned += is_aligned;
      realign += is_realign;
      for (mem_dir dir : {mem_dir::load, mem_dir::store}) {
        const auto w = global_widths(k, dir);
        ASSERT_TRUE(w.contains(128)) << to_string(dir);
        for (const auto& [bits, count] : w) {
          EXPECT_TRUE(bits == 128 || bits == 8) << to_string(dir) << " of " << bits << " bits";
          if (bits == 8) {
            EXPECT_LE(count, 2) << "the byte-wise head and tail: one load and one store per thread";
          }
        }
      }
      EXPECT_EQ(count_space(k, mem_space::local), 0) << "local memory: spills or dynamic indexing";
      EXPECT_EQ(count_space(k, mem_space::generic), 0);
    }
    EXPECT_GE(aligned, 1) << arch;
    EXPECT_GE(realign, 4) << arch << ": one realigning kernel per word offset 0..3";
  }
}

// 32-byte accesses (issue "32-byte global accesses on Blackwell"): on sm_100 the copy lab's vec32 and
// memlab::copy's 32-byte body are LDG.E.ENL2.256 / STG.E.ENL2.256 (as cuobjdump prints them), the
// only narrower accesses their element- or byte-wise edges; built for sm_80 and sm_90 they hold no
// global access at all (they trap: vec32 is refused there, plan_copy never picks the 32-byte body).
TEST_F(sass_proof, vec32_and_the_32_byte_copy_body_are_256_bit_on_sm_100) {
  if (!reports.contains("sm_100")) GTEST_SKIP() << "this build carries no sm_100 code (" MEMLAB_CUDA_ARCHS ")";
  const auto& r = reports.at("sm_100");
  for (const auto& [dt, bits] : dtypes) {
    SCOPED_TRACE("sm_100 vec32 " + std::string(dt));
    const auto* k = find(r, "copy", "vec32", dt);
    ASSERT_NE(k, nullptr);
    expect_vector_path(*k, 256, bits, 1);
    bool mnemonic = false;
    for (const auto& h : k->histogram) mnemonic = mnemonic || h.op.op == "LDG.E.ENL2.256";
    EXPECT_TRUE(mnemonic) << "the 256-bit load as cuobjdump 13 prints it";
  }
  int wide = 0;
  for (const auto& k : r.kernels) {
    if (k.lab != "copy" || k.code.name.find("copy_aligned32_kernel") == std::string::npos) continue;
    SCOPED_TRACE(k.code.name);
    ++wide;
    for (mem_dir dir : {mem_dir::load, mem_dir::store}) {
      const auto w = global_widths(k, dir);
      ASSERT_TRUE(w.contains(256)) << to_string(dir);
      for (const auto& [b, count] : w) EXPECT_TRUE(b == 256 || b == 8) << b << "-bit " << to_string(dir);
    }
    EXPECT_EQ(count_space(k, mem_space::local), 0);
  }
  EXPECT_EQ(wide, 3) << "one 32-byte body kernel per vectors-per-thread (1, 2, 4)";
}

TEST_F(sass_proof, before_sm_100_the_32_byte_kernels_hold_no_global_access) {
  for (const auto& [arch, r] : reports) {
    if (arch == "sm_100") continue;
    for (const auto& k : r.kernels) {
      const bool vec32 = k.lab == "copy" && k.variant == "vec32";
      const bool body32 = k.code.name.find("copy_aligned32_kernel") != std::string::npos;
      if (!vec32 && !body32) continue;
      SCOPED_TRACE(arch + " " + k.code.name);
      EXPECT_EQ(count_space(k, mem_space::global), 0);
    }
  }
}

TEST_F(sass_proof, vec8_moves_global_data_with_64_bit_accesses) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [dt, bits] : dtypes) {
      SCOPED_TRACE(arch + " vec8 " + dt);
      const auto* k = find(r, "copy", "vec8", dt);
      ASSERT_NE(k, nullptr);
      if (bits == 64) {  // f64: the element is the vector, and the tail never runs
        EXPECT_EQ(global_widths(*k, mem_dir::load).begin()->first, 64);
        continue;
      }
      expect_vector_path(*k, 64, bits, 1);
    }
  }
}

TEST_F(sass_proof, scalar_accesses_are_element_wide) {
  for (const auto& [arch, r] : reports) {
    for (const auto& [dt, bits] : dtypes) {
      SCOPED_TRACE(arch + " scalar " + dt);
      const auto* k = find(r, "copy", "scalar", dt);
      ASSERT_NE(k, nullptr);
      for (mem_dir dir : {mem_dir::load, mem_dir::store}) {
        const auto w = global_widths(*k, dir);
        ASSERT_EQ(w.size(), 1u);
        EXPECT_EQ(w.begin()->first, bits);  // f32: LDG.E / STG.E, 32-bit
      }
    }
  }
}

}  // namespace
}  // namespace memlab::inspect
