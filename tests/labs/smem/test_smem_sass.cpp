// SASS proof for the smem lab: what each rung's shared-memory accesses compiled to, on every
// architecture in the binary. Needs cuobjdump, not a GPU.
//   - the bank-bound rungs keep every one of their 32 unrolled accesses per pass (volatile: none
//     reused, hoisted or dropped), at their width: STS, LDS, LDS.64, LDS.128;
//   - the load rungs' only stores are the region fill (STS, 32-bit);
//   - the reference's copy: LDG -> STS, BAR, LDS -> STG; and shared -> shared is an LDS into a
//     register and an STS out of it (no instruction copies shared to shared).
#include <algorithm>
#include <string>
#include <vector>

#include "inspect/sass_fixture.hpp"
#include "labs/smem/smem.hpp"

namespace memlab::inspect {
namespace {

int count_opcode(const labeled_kernel& k, std::string_view op) {
  return static_cast<int>(std::count_if(k.code.opcodes.begin(), k.code.opcodes.end(), [&](const std::string& o) {
    return o == op || o.starts_with(std::string(op) + ".");
  }));
}

TEST_F(sass_proof, smem_bank_bound_rungs_keep_every_access_at_their_width) {
  struct want {
    std::string variant;
    mem_dir dir;
    int bits;
  };
  // Every bank-bound rung of the table, at the direction and width its traits give.
  std::vector<want> wants;
  for (const auto& v : labs::smem::table().variants) {
    const auto& t = v.traits_as<labs::smem::smem_rung>();
    if (!labs::smem::is_bank_bound(t)) continue;
    wants.push_back({std::string(v.name), t.load ? mem_dir::load : mem_dir::store, 8 * t.access_bytes});
  }
  ASSERT_EQ(wants.size(), 6u);  // store_stride, load_stride, smem_padded, smem_swizzled, load_vec8, load_vec16
  for (const auto& [arch, r] : reports) {
    for (const want& w : wants) {
      SCOPED_TRACE(arch + " " + w.variant);
      const auto* k = find(r, "smem", w.variant, "");
      ASSERT_NE(k, nullptr);
      const auto main = shared_widths(*k, w.dir);
      ASSERT_TRUE(main.contains(w.bits));
      EXPECT_EQ(main.at(w.bits), 32) << "one access per column of a pass, all 32 unrolled";
      const auto other = shared_widths(*k, w.dir == mem_dir::load ? mem_dir::store : mem_dir::load);
      if (w.dir == mem_dir::store) {
        EXPECT_EQ(other, (std::map<int, int>{{32, 1}})) << "the read-back: one LDS";
      } else {
        ASSERT_EQ(other.size(), 1u) << "the fill: 32-bit stores only";
        EXPECT_TRUE(other.contains(32));
      }
      EXPECT_EQ(count_space(*k, mem_space::local), 0) << "spills";
      EXPECT_EQ(count_space(*k, mem_space::generic), 0);
    }
  }
}

TEST_F(sass_proof, smem_the_references_copies_and_shared_to_shared_through_registers) {
  for (const auto& [arch, r] : reports) {
    SCOPED_TRACE(arch);
    const auto* g = find(r, "smem", "global_strided_store", "");
    ASSERT_NE(g, nullptr);
    EXPECT_EQ(global_widths(*g, mem_dir::load), (std::map<int, int>{{32, 1}}));
    EXPECT_EQ(shared_widths(*g, mem_dir::store), (std::map<int, int>{{32, 1}}));
    EXPECT_EQ(shared_widths(*g, mem_dir::load), (std::map<int, int>{{32, 1}}));
    EXPECT_EQ(global_widths(*g, mem_dir::store), (std::map<int, int>{{32, 1}}));
    EXPECT_EQ(count_opcode(*g, "BAR"), 1) << "the reference's __syncthreads";

    const auto* s = find(r, "smem", "smem_to_smem", "");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(shared_widths(*s, mem_dir::store), (std::map<int, int>{{32, 2}})) << "STS into a, STS into b";
    EXPECT_EQ(shared_widths(*s, mem_dir::load), (std::map<int, int>{{32, 2}})) << "LDS from a (the copy), LDS from b";
    EXPECT_EQ(count_space(*s, mem_space::async_copy), 0) << "no instruction copies shared to shared";
    EXPECT_EQ(count_opcode(*s, "BAR"), 2);
  }
}

}  // namespace
}  // namespace memlab::inspect
