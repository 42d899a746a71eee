// SASS proof for memlab::transpose, read from libmemlab (the C ABI, which instantiates every kernel the
// library launches) for every SASS architecture it carries: each tile kernel moves global data with
// 16-byte loads and stores (LDG.E.128, STG.E.128), whole vectors into shared memory (STS.128); the only
// narrower global accesses are the rolled loops of the two edges: byte loads of the buffer's first and
// last chunk (realigning loads only) and the 8/4/2/1-byte stores of a tile row's two shared chunks
// (realigning stores only). Sub-word elements are gathered as words. The elem8 kernel moves single 8-byte
// elements, global and shared. The few kernels (few_cols, few_rows, small_matrices) likewise move 16-byte
// vectors both ways. No spills, no generic accesses.
// Needs cuobjdump, not a GPU; part of memlab_sass_tests (whose main() decides what a missing cuobjdump means).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "inspect/inspect.hpp"
#include "inspect/sass_fixture.hpp"

namespace memlab::inspect {
namespace {

struct library_sass : ::testing::Test {
  // arch -> every kernel of libmemlab, read once for the suite (sass_arch(): that arch alone).
  static void SetUpTestSuite() { reports = inspect_every_arch(MEMLAB_C_API_LIBRARY, {}, sass_arch(), true); }
  static inline std::map<std::string, inspect_report> reports;
};

struct tile_kernel {
  int elem_size = 0;
  bool realign_in = false, realign_out = false;
};
// transpose_tile_kernel<Es, RealignIn, RealignOut> from its demangled name ("...<1, false, true>(...)").
std::optional<tile_kernel> parse(const std::string& name) {
  const auto at = name.find("transpose_tile_kernel<");
  if (at == std::string::npos) return std::nullopt;
  const auto end = name.find('>', at);
  const std::string args = name.substr(at + 22, end - at - 22);  // "1, false, true"
  const auto c1 = args.find(", "), c2 = args.find(", ", c1 + 2);
  if (c1 == std::string::npos || c2 == std::string::npos) return std::nullopt;
  return tile_kernel{std::stoi(args.substr(0, c1)), args.substr(c1 + 2, c2 - c1 - 2) == "true",
                     args.substr(c2 + 2) == "true"};
}

TEST_F(library_sass, transpose_tile_kernels_move_16_byte_vectors) {
  ASSERT_FALSE(reports.empty()) << MEMLAB_C_API_LIBRARY << " carries no SASS";
  for (const auto& [arch, r] : reports) {
    std::map<std::string, int> seen;
    for (const auto& k : r.kernels) {
      const auto tk = parse(k.code.name);
      if (!tk) continue;
      SCOPED_TRACE(arch + " " + k.code.name);
      ++seen[std::to_string(tk->elem_size) + (tk->realign_in ? "i" : "") + (tk->realign_out ? "o" : "")];
      const auto loads = global_widths(k, mem_dir::load), stores = global_widths(k, mem_dir::store);
      ASSERT_TRUE(loads.contains(128));
      ASSERT_TRUE(stores.contains(128));
      EXPECT_GE(loads.at(128), 16 / tk->elem_size) << "every load of a step in the body is LDG.E.128";
      for (const auto& [bits, count] : loads) {
        if (bits == 128) continue;
        EXPECT_TRUE(tk->realign_in && bits == 8) << bits << "-bit global loads";
        EXPECT_LE(count, 16) << "the clamped edge chunk: one rolled byte loop per load step";
      }
      for (const auto& [bits, count] : stores) {
        if (bits == 128) continue;
        EXPECT_TRUE(tk->realign_out && bits <= 64) << bits << "-bit global stores";
        EXPECT_LE(count, 32) << "a tile row's shared chunks: one rolled loop per store";
      }
      EXPECT_EQ(shared_widths(k, mem_dir::store), (std::map<int, int>{{128, 16 / tk->elem_size}}))
          << "whole 16-byte vectors into the tile";
      const auto lds = shared_widths(k, mem_dir::load);
      EXPECT_EQ(lds.size(), 1u);
      EXPECT_TRUE(lds.contains(tk->elem_size == 8 ? 64 : 32)) << "the gathers: words (sub-word elements packed)";
      EXPECT_EQ(count_space(k, mem_space::local), 0) << "local memory: spills or dynamic indexing";
      EXPECT_EQ(count_space(k, mem_space::generic), 0) << "generic LD/ST: the compiler lost the global space";
    }
    EXPECT_EQ(seen.size(), 16u) << arch << ": 4 element sizes x 4 paths";
  }
}

// The elem8 kernel: one 8-byte element per lane and access, global and shared; nothing else.
TEST_F(library_sass, transpose_elem8_kernel_moves_8_byte_elements) {
  ASSERT_FALSE(reports.empty()) << MEMLAB_C_API_LIBRARY << " carries no SASS";
  for (const auto& [arch, r] : reports) {
    int found = 0;
    for (const auto& k : r.kernels) {
      if (k.code.name.find("transpose_elem8_kernel") == std::string::npos) continue;
      ++found;
      SCOPED_TRACE(arch + " " + k.code.name);
      const auto loads = global_widths(k, mem_dir::load), stores = global_widths(k, mem_dir::store);
      EXPECT_EQ(loads.size(), 1u);
      EXPECT_GE(loads.count(64) ? loads.at(64) : 0, 5) << "the tile's and the halo's rows: LDG.E.64";
      EXPECT_EQ(stores.size(), 1u);
      EXPECT_TRUE(stores.contains(64)) << "STG.E.64";
      EXPECT_EQ(shared_widths(k, mem_dir::store).size(), 1u);
      EXPECT_TRUE(shared_widths(k, mem_dir::store).contains(64)) << "STS.64";
      EXPECT_EQ(shared_widths(k, mem_dir::load).size(), 1u);
      EXPECT_TRUE(shared_widths(k, mem_dir::load).contains(64)) << "LDS.64";
      EXPECT_EQ(count_space(k, mem_space::local), 0) << "local memory: spills or dynamic indexing";
      EXPECT_EQ(count_space(k, mem_space::generic), 0) << "generic LD/ST: the compiler lost the global space";
    }
    EXPECT_EQ(found, 1) << arch;
  }
}

// transpose_few_kernel<U, Path, Fixed> from its demangled name ("...<1, (memlab::transpose_path)9, true>(...)").
struct few_kernel {
  int unit = 0;
  std::string path;
  bool fixed = false;
};
std::optional<few_kernel> parse_few(const std::string& name) {
  const auto at = name.find("transpose_few_kernel<");
  if (at == std::string::npos) return std::nullopt;
  const auto end = name.find(">(", at);
  const std::string args = name.substr(at + 21, end - at - 21);  // "1, (memlab::transpose_path)9, true"
  const auto c1 = args.find(", "), c2 = args.rfind(", ");
  if (c1 == std::string::npos || c2 == c1) return std::nullopt;
  return few_kernel{std::stoi(args.substr(0, c1)), args.substr(c1 + 2, c2 - c1 - 2), args.substr(c2 + 2) == "true"};
}

// The few kernel (few_cols, few_rows, small_matrices), per unit U: the image loaded with 16-byte loads
// (LDG.E.128, all six steps) stored whole (STS.128), dst stored with 16-byte stores (STG.E.128); the gather
// reads U-byte units from shared memory. The only narrower global accesses: the byte loads of the buffer's
// first and last chunk, and the stores of partly owned chunks (the ends of a run): gathered as one vector and
// stored by store_bytes, the widest aligned of 8, 4, 2 and 1 bytes, none narrower than a unit.
TEST_F(library_sass, transpose_few_kernels_move_16_byte_vectors) {
  ASSERT_FALSE(reports.empty()) << MEMLAB_C_API_LIBRARY << " carries no SASS";
  for (const auto& [arch, r] : reports) {
    std::map<int, int> per_unit;
    for (const auto& k : r.kernels) {
      const auto at = k.code.name.find("transpose_few_kernel<");
      if (at == std::string::npos) continue;
      const int unit = std::stoi(k.code.name.substr(at + 21));
      ++per_unit[unit];
      SCOPED_TRACE(arch + " " + k.code.name);
      const auto loads = global_widths(k, mem_dir::load), stores = global_widths(k, mem_dir::store);
      ASSERT_TRUE(loads.contains(128));
      ASSERT_TRUE(stores.contains(128));
      EXPECT_GE(loads.at(128), 6) << "the six load steps: LDG.E.128, all in flight";
      for (const auto& [bits, count] : loads) {
        if (bits == 128) continue;
        EXPECT_EQ(bits, 8) << "the buffer's first and last chunk, byte by byte";
        EXPECT_LE(count, 6) << "one rolled byte loop per load step";
      }
      for (const auto& [bits, count] : stores) {
        if (bits == 128) continue;
        EXPECT_TRUE(bits >= 8 * unit && bits <= 64) << bits << "-bit global stores: partly owned chunks";
        EXPECT_LE(count, 2) << "one rolled store_bytes loop per store loop (few_cols' runs, the block)";
      }
      if (unit < 8) {
        EXPECT_TRUE(stores.contains(64)) << "partly owned chunks: 8-byte stores where the bytes allow";
      }
      EXPECT_EQ(shared_widths(k, mem_dir::store), (std::map<int, int>{{128, 6}})) << "whole 16-byte chunks";
      const auto lds = shared_widths(k, mem_dir::load);
      EXPECT_EQ(lds.size(), 1u);
      EXPECT_TRUE(lds.contains(8 * unit)) << "the gather: U-byte units";
      EXPECT_EQ(count_space(k, mem_space::local), 0) << "local memory: spills or dynamic indexing";
      EXPECT_EQ(count_space(k, mem_space::generic), 0) << "generic LD/ST: the compiler lost the global space";
    }
    EXPECT_EQ(per_unit, (std::map<int, int>{{1, 5}, {2, 5}, {4, 5}, {8, 5}}))
        << arch << ": 4 units x (few_cols, and few_rows and small_matrices with the fixed layout and the general one)";
  }
}

// The few kernel's image stores: the instructions after its last LDG.E.128 up to the __syncthreads after the
// STS.128s (each loaded chunk to its slot of the image, and for the general layout its words permuted first).
std::vector<std::string> image_stores(const std::vector<std::string>& ops) {
  std::size_t last_load = ops.size();
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].starts_with("LDG.E.128")) last_load = i;
  }
  if (last_load == ops.size()) return {};
  std::size_t bar = last_load;
  while (bar < ops.size() && !ops[bar].starts_with("BAR")) ++bar;
  return {ops.begin() + static_cast<std::ptrdiff_t>(last_load) + 1, ops.begin() + static_cast<std::ptrdiff_t>(bar)};
}
int count_op(const std::vector<std::string>& ops, std::string_view prefix) {
  return static_cast<int>(
      std::count_if(ops.begin(), ops.end(), [&](const std::string& o) { return o.starts_with(prefix); }));
}
int instructions(const std::vector<std::string>& ops) { return static_cast<int>(ops.size()) - count_op(ops, "NOP"); }

// The fixed layout's instantiation of few_rows and small_matrices (transpose_few_whole_chunks: the swizzle none or
// the slot XOR; docs/notes/transpose_skinny.md section 6): no word permute before the STS.128s, so its image stores
// hold no select (SEL) and no byte permute (PRMT), where the general one's hold the two conditional swaps of each
// chunk's words; and the kernel is smaller than the general one. (Measured on sm_90 with nvcc 13.0: u8 few_rows'
// image stores 160 instructions against the general 215 and 155 before the per-shape layouts; the gather of a
// chunk the same in all three.)
TEST_F(library_sass, transpose_few_kernels_fixed_layout_permutes_nothing) {
  ASSERT_FALSE(reports.empty()) << MEMLAB_C_API_LIBRARY << " carries no SASS";
  for (const auto& [arch, r] : reports) {
    std::map<std::string, const labeled_kernel*> fixed, general;  // "U path" -> kernel
    for (const auto& k : r.kernels) {
      const auto fk = parse_few(k.code.name);
      if (!fk) continue;
      (fk->fixed ? fixed : general)[std::to_string(fk->unit) + " " + fk->path] = &k;
    }
    EXPECT_EQ(fixed.size(), 12u) << arch << ": 4 units x 3 paths";
    EXPECT_EQ(general.size(), 8u) << arch << ": 4 units x (few_rows, small_matrices)";
    for (const auto& [key, g] : general) {
      SCOPED_TRACE(arch + " " + g->code.name);
      ASSERT_TRUE(fixed.contains(key));
      const auto& f = fixed.at(key)->code.opcodes;
      const auto fs = image_stores(f), gs = image_stores(g->code.opcodes);
      ASSERT_EQ(count_op(fs, "STS.128"), 6) << "the fixed kernel's image stores: the six load steps' chunks";
      ASSERT_EQ(count_op(gs, "STS.128"), 6) << "the general kernel's image stores";
      EXPECT_EQ(count_op(fs, "SEL"), 0) << "a word permute in the fixed layout's image stores";
      EXPECT_EQ(count_op(fs, "PRMT"), 0) << "a word permute in the fixed layout's image stores";
      EXPECT_GT(count_op(gs, "SEL") + count_op(gs, "PRMT"), 0)
          << "the general kernel's permute: the check is not vacuous";
      EXPECT_LT(static_cast<int>(fs.size()), static_cast<int>(gs.size())) << "image stores";
      EXPECT_LT(instructions(f), instructions(g->code.opcodes)) << "the whole kernel";
    }
  }
}

// 1-byte elements, few_rows and small_matrices (docs/notes/transpose_skinny.md section 7): the blocks' kernel
// (transpose_few_blocks_kernel, the fixed layout's and the general one for each path) reads the 16-byte chunks of
// src like the others (LDG.E.128, six steps; STS.128 into the image); its blocks of 2..8 rows (G columns a block: 8,
// 16, 4, 16, 8, 16, 4) and of 3 x 3 and 4 x 4 matrices read their runs as words (LDS.32: G / 4 + 1 a run, 123 in all;
// 37 and 5 for the matrices' blocks), join them with byte permutes (PRMT, at least one an output word: 88 and 40),
// and store every chunk with STG.E.128; the blocks of five chunks or more (5 and 7 rows, 3 x 3) go through the
// warp's staging area whole (STS.128 a chunk: 12 and 9; LDS.128 back). Beside them the chunk-by-chunk gather's
// LDS.U8. No spills.
TEST_F(library_sass, transpose_few_blocks_kernels_read_words_and_store_whole_chunks) {
  ASSERT_FALSE(reports.empty()) << MEMLAB_C_API_LIBRARY << " carries no SASS";
  for (const auto& [arch, r] : reports) {
    std::map<std::string, int> seen;
    for (const auto& k : r.kernels) {
      const auto at = k.code.name.find("transpose_few_blocks_kernel<");
      if (at == std::string::npos) continue;
      SCOPED_TRACE(arch + " " + k.code.name);
      const bool rows = k.code.name.find("transpose_path)9", at) != std::string::npos;
      ++seen[std::string(rows ? "few_rows" : "small_matrices") +
             (k.code.name.find("true>", at) != std::string::npos ? " fixed" : " general")];
      const auto loads = global_widths(k, mem_dir::load), stores = global_widths(k, mem_dir::store);
      ASSERT_TRUE(loads.contains(128));
      EXPECT_GE(loads.at(128), 6) << "the six load steps: LDG.E.128";
      EXPECT_EQ(shared_widths(k, mem_dir::store), (std::map<int, int>{{128, 6 + (rows ? 12 : 9)}}))
          << "whole 16-byte chunks: the image's and the staged blocks'";
      const auto lds = shared_widths(k, mem_dir::load);
      EXPECT_EQ(lds.size(), 3u);
      EXPECT_TRUE(lds.contains(8)) << "the chunks around the blocks: bytes";
      EXPECT_TRUE(lds.contains(128)) << "the staged blocks' chunks";
      ASSERT_TRUE(lds.contains(32)) << "the blocks' words";
      EXPECT_GE(lds.at(32), rows ? 123 : 37 + 5) << "G / 4 + 1 words a run";
      EXPECT_GE(stores.at(128), rows ? 1 + 10 + 2 : 1 + 1 + 1)
          << "STG.E.128: the chunk path's, the unstaged blocks' chunks (unrolled), the staged blocks' (a loop each)";
      EXPECT_GE(count_op(k.code.opcodes, "PRMT"), rows ? 88 : 40) << "at least one byte permute an output word";
      EXPECT_EQ(count_space(k, mem_space::local), 0) << "local memory: spills or dynamic indexing";
      EXPECT_EQ(count_space(k, mem_space::generic), 0) << "generic LD/ST: the compiler lost the global space";
    }
    EXPECT_EQ(seen.size(), 4u) << arch << ": few_rows and small_matrices, the fixed layout and the general one";
  }
}

}  // namespace
}  // namespace memlab::inspect
