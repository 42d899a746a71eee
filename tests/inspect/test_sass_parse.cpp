// Host tests of the SASS reader: opcode classification, splitting real cuobjdump output (captured
// under data/, see data/README.md) into kernels, dtype labels, demangling, and inspect_binary's
// labelling and errors through a stand-in cuobjdump. No GPU and no cuobjdump needed.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inspect/inspect.hpp"
#include "inspect/sass.hpp"

namespace mi = memlab::inspect;
using mi::mem_dir;
using mi::mem_space;

namespace {

std::string read_data(const std::string& name) {
  std::ifstream f(std::string(MEMLAB_TEST_DATA_DIR) + "/" + name, std::ios::binary);
  EXPECT_TRUE(f.good()) << "missing test data " << name;
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct expected_op {
  const char* opcode;
  mem_space space;
  mem_dir dir;
  int width_bits;
};

const mi::kernel_code* find_kernel(const std::vector<mi::kernel_code>& ks, std::string_view arch,
                                   std::string_view name_part) {
  for (const auto& k : ks)
    if (k.arch == arch && k.name.find(name_part) != std::string::npos) return &k;
  return nullptr;
}

// Histogram as "OP:space:dir:width×count" strings, easy to compare in one EXPECT.
std::vector<std::string> summary(const std::vector<mi::histogram_entry>& h) {
  std::vector<std::string> out;
  for (const auto& e : h)
    out.push_back(e.op.op + ":" + std::string(mi::to_string(e.op.space)) + ":" + std::string(mi::to_string(e.op.dir)) +
                  ":" + std::to_string(e.op.width_bits) + "x" + std::to_string(e.count));
  return out;
}

}  // namespace

// ---- classify_sass ----------------------------------------------------------------------------------

TEST(ClassifySass, MemoryOpcodes) {
  const expected_op table[] = {
      // global: every width, and cache/ordering modifiers that must not read as widths
      {"LDG.E.U8", mem_space::global, mem_dir::load, 8},
      {"LDG.E.S8", mem_space::global, mem_dir::load, 8},
      {"LDG.E.U16", mem_space::global, mem_dir::load, 16},
      {"LDG.E.S16", mem_space::global, mem_dir::load, 16},
      {"LDG.E", mem_space::global, mem_dir::load, 32},
      {"LDG.E.CONSTANT", mem_space::global, mem_dir::load, 32},
      {"LDG.E.64", mem_space::global, mem_dir::load, 64},
      {"LDG.E.128", mem_space::global, mem_dir::load, 128},
      {"LDG.E.128.CONSTANT", mem_space::global, mem_dir::load, 128},
      {"LDG.E.EF.128", mem_space::global, mem_dir::load, 128},
      {"LDG.E.LTC128B.128.CONSTANT", mem_space::global, mem_dir::load, 128},
      {"LDG.E.LTC128B", mem_space::global, mem_dir::load, 32},
      {"LDG.E.EL.64.STRONG.GPU", mem_space::global, mem_dir::load, 64},
      {"LDG.E.ENL2.256", mem_space::global, mem_dir::load, 256},
      {"LDG.E.256", mem_space::global, mem_dir::load, 256},
      {"STG.E.U8", mem_space::global, mem_dir::store, 8},
      {"STG.E.U16", mem_space::global, mem_dir::store, 16},
      {"STG.E", mem_space::global, mem_dir::store, 32},
      {"STG.E.64.STRONG.GPU", mem_space::global, mem_dir::store, 64},
      {"STG.E.128", mem_space::global, mem_dir::store, 128},
      {"STG.E.ENL2.256", mem_space::global, mem_dir::store, 256},
      // shared
      {"LDS", mem_space::shared, mem_dir::load, 32},
      {"LDS.U8", mem_space::shared, mem_dir::load, 8},
      {"LDS.U.128", mem_space::shared, mem_dir::load, 128},
      {"LDS.64", mem_space::shared, mem_dir::load, 64},
      {"STS.U16", mem_space::shared, mem_dir::store, 16},
      {"STS.128", mem_space::shared, mem_dir::store, 128},
      // ldmatrix: 32 bits per thread per 8x8 b16 matrix; the ".16" is the element size
      {"LDSM.16.M88", mem_space::shared, mem_dir::load, 32},
      {"LDSM.16.M88.2", mem_space::shared, mem_dir::load, 64},
      {"LDSM.16.M88.4", mem_space::shared, mem_dir::load, 128},
      {"LDSM.16.MT88.4", mem_space::shared, mem_dir::load, 128},
      {"STSM.16.M88.4", mem_space::shared, mem_dir::store, 128},
      // local (spills)
      {"LDL", mem_space::local, mem_dir::load, 32},
      {"LDL.LU.64", mem_space::local, mem_dir::load, 64},
      {"STL.128", mem_space::local, mem_dir::store, 128},
      // generic
      {"LD.E", mem_space::generic, mem_dir::load, 32},
      {"LD.E.64.STRONG.SYS", mem_space::generic, mem_dir::load, 64},
      {"ST.E", mem_space::generic, mem_dir::store, 32},
      {"ST.E.U8", mem_space::generic, mem_dir::store, 8},
      // atomics (forms observed with nvcc 13.0 for sm_90: REDG.E.ADD.F32..., ATOMS.POPC.INC.32)
      {"ATOM.E.ADD.STRONG.GPU", mem_space::generic, mem_dir::atomic, 32},
      {"ATOMG.E.ADD.STRONG.GPU", mem_space::global, mem_dir::atomic, 32},
      {"ATOMG.E.CAS.64.STRONG.GPU", mem_space::global, mem_dir::atomic, 64},
      {"ATOMS.POPC.INC.32", mem_space::shared, mem_dir::atomic, 32},
      {"RED.E.ADD.STRONG.GPU", mem_space::generic, mem_dir::atomic, 32},
      {"REDG.E.ADD.F32.FTZ.RN.STRONG.GPU", mem_space::global, mem_dir::atomic, 32},
      {"REDG.E.ADD.F64.RN.STRONG.GPU", mem_space::global, mem_dir::atomic, 64},
      {"REDG.E.MAX.64.STRONG.GPU", mem_space::global, mem_dir::atomic, 64},
      // asynchronous copies
      {"LDGSTS.E.BYPASS.128", mem_space::async_copy, mem_dir::copy, 128},
      {"LDGSTS.E.BYPASS.LTC128B.128", mem_space::async_copy, mem_dir::copy, 128},
      {"LDGSTS.E.64", mem_space::async_copy, mem_dir::copy, 64},
      {"LDGSTS.E", mem_space::async_copy, mem_dir::copy, 32},
      {"UBLKCP.S.G", mem_space::async_copy, mem_dir::copy, 0},
      {"UBLKRED.G.S.ADD.F32.RN", mem_space::async_copy, mem_dir::copy, 0},
      {"UTMALDG.2D", mem_space::async_copy, mem_dir::copy, 0},
      {"UTMASTG.3D", mem_space::async_copy, mem_dir::copy, 0},
  };
  for (const auto& e : table) {
    SCOPED_TRACE(e.opcode);
    auto op = mi::classify_sass(e.opcode);
    ASSERT_TRUE(op.has_value());
    EXPECT_EQ(op->op, e.opcode);
    EXPECT_EQ(op->space, e.space);
    EXPECT_EQ(op->dir, e.dir);
    EXPECT_EQ(op->width_bits, e.width_bits);
  }
}

TEST(ClassifySass, NotMemory) {
  // Constant-bank loads, barriers, the cp.async group fence, prefetches, warp reductions, ALU.
  for (const char* op : {"LDC",
                         "LDC.64",
                         "LDC.U8",
                         "ULDC",
                         "ULDC.64",
                         "MOV",
                         "IADD3",
                         "IADD3.X",
                         "S2R",
                         "S2UR",
                         "LDGDEPBAR",
                         "DEPBAR.LE",
                         "BAR.SYNC",
                         "BAR.SYNC.DEFER_BLOCKING",
                         "EXIT",
                         "BRA",
                         "NOP",
                         "REDUX.SUM",
                         "UTMAPF.L2.2D",
                         "UBLKPF.L2",
                         "SYNCS.ARRIVE.TRANS64.RED.A1T0",
                         "MEMBAR.SC.GPU",
                         "CCTL.IVALL",
                         "LDGMC.E",
                         "LDSX",
                         "STGX",
                         ""}) {
    SCOPED_TRACE(op);
    EXPECT_FALSE(mi::classify_sass(op).has_value());
  }
}

// ---- parse_sass on real cuobjdump output -------------------------------------------------------------

TEST(ParseSass, SplitsFunctionsAndArchs) {
  const auto ks = mi::parse_sass(read_data("cuobjdump_sass_sm80_sm90.txt"));
  ASSERT_EQ(ks.size(), 6u);  // sm_80: cp_async16, copy_u4; sm_90: all four
  int sm80 = 0, sm90 = 0;
  for (const auto& k : ks) {
    EXPECT_TRUE(k.arch == "sm_80" || k.arch == "sm_90") << k.arch;
    sm80 += k.arch == "sm_80";
    sm90 += k.arch == "sm_90";
    EXPECT_FALSE(k.opcodes.empty()) << k.mangled;
    EXPECT_TRUE(k.mangled.starts_with("_ZN3lab")) << k.mangled;
  }
  EXPECT_EQ(sm80, 2);
  EXPECT_EQ(sm90, 4);
  const auto* u4 = find_kernel(ks, "sm_90", "copy_u4");
  ASSERT_NE(u4, nullptr);
  EXPECT_EQ(u4->mangled, "_ZN3lab7copy_u4EP5uint4PKS0_m");
  EXPECT_EQ(u4->name, "lab::copy_u4(uint4*, uint4 const*, unsigned long)");
  // 22 instructions at /*0000*/../*0150*/ plus the trailing BRA; NOP padding was trimmed from the data.
  EXPECT_EQ(u4->opcodes.front(), "LDC");
  EXPECT_EQ(u4->opcodes.back(), "BRA");
  // Predicates stripped: "@P0 EXIT" -> "EXIT"; operands and encodings gone.
  for (const auto& op : u4->opcodes) {
    EXPECT_EQ(op.find_first_of(" @;/,["), std::string::npos) << op;
  }
  EXPECT_NE(std::find(u4->opcodes.begin(), u4->opcodes.end(), "ISETP.GE.U32.AND.EX"), u4->opcodes.end());
  EXPECT_EQ(std::count(u4->opcodes.begin(), u4->opcodes.end(), "EXIT"), 2);  // "@P0 EXIT" and "EXIT"
}

TEST(ParseSass, Uint4CopyIsExactly128BitLdgStg) {
  const auto ks = mi::parse_sass(read_data("cuobjdump_sass_sm80_sm90.txt"));
  for (const char* arch : {"sm_80", "sm_90"}) {
    SCOPED_TRACE(arch);
    const auto* u4 = find_kernel(ks, arch, "copy_u4");
    ASSERT_NE(u4, nullptr);
    EXPECT_EQ(summary(mi::memory_histogram(*u4)),
              (std::vector<std::string>{"LDG.E.128.CONSTANT:global:load:128x1", "STG.E.128:global:store:128x1"}));
  }
}

TEST(ParseSass, ScalarHalfSharedAndCpAsync) {
  const auto ks = mi::parse_sass(read_data("cuobjdump_sass_sm80_sm90.txt"));
  const auto* h = find_kernel(ks, "sm_90", "copy_scalar<__half>");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(summary(mi::memory_histogram(*h)),
            (std::vector<std::string>{"LDG.E.U16:global:load:16x1", "STG.E.U16:global:store:16x1"}));

  const auto* s = find_kernel(ks, "sm_90", "smem_rt");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(summary(mi::memory_histogram(*s)),
            (std::vector<std::string>{"LDG.E:global:load:32x1", "STS:shared:store:32x1", "LDS:shared:load:32x1",
                                      "STG.E:global:store:32x1"}));

  // sm_90 puts three never-executed "@!PT LDS RZ, [RZ]" next to the LDGSTS: they must not count.
  for (const char* arch : {"sm_80", "sm_90"}) {
    SCOPED_TRACE(arch);
    const auto* c = find_kernel(ks, arch, "cp_async16");
    ASSERT_NE(c, nullptr);
    EXPECT_EQ(summary(mi::memory_histogram(*c)),
              (std::vector<std::string>{"LDGSTS.E.BYPASS.128:async_copy:copy:128x1", "LDS.128:shared:load:128x1",
                                        "STG.E.128:global:store:128x1"}));
    EXPECT_NE(std::find(c->opcodes.begin(), c->opcodes.end(), "LDGDEPBAR"), c->opcodes.end());
  }
}

TEST(ParseSass, PredicatesAndOddLines) {
  const std::string text =
      "\tcode for sm_100a\n"
      "\t\tFunction : _Z1kPf\n"
      "\t.headerflags\t@\"EF_CUDA_SM100\"\n"
      "        /*0000*/                   LDC R1, c[0x0][0x28] ;   /* 0x00000a00ff017b82 */\n"
      "                                                           /* 0x000fe20000000800 */\n"
      "        /*0010*/              @!P0 LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;   /* 0x0 */\n"
      "        /*0020*/              @P1 STG.E.ENL2.256 desc[UR4][R2.64], R4, R12 ;\n"
      "        /*0030*/             @!UP0 UBLKCP.S.G [UR8], [UR4], UR10 ;\n"
      "        /*0040*/              @!PT LDS RZ, [RZ] ;\n"
      "        /*0050*/                   NOP;\n"
      "\t\t..........\n";
  const auto ks = mi::parse_sass(text);
  ASSERT_EQ(ks.size(), 1u);
  EXPECT_EQ(ks[0].arch, "sm_100a");
  EXPECT_EQ(ks[0].name, "k(float*)");
  EXPECT_EQ(ks[0].opcodes,
            (std::vector<std::string>{"LDC", "LDG.E.128.CONSTANT", "STG.E.ENL2.256", "UBLKCP.S.G", "NOP"}));
  EXPECT_EQ(ks[0].guarded, (std::vector<bool>{false, true, true, true, false})) << "@!P0, @P1, @!UP0: guarded";
  EXPECT_EQ(summary(mi::memory_histogram(ks[0])),
            (std::vector<std::string>{"LDG.E.128.CONSTANT:global:load:128x1", "STG.E.ENL2.256:global:store:256x1",
                                      "UBLKCP.S.G:async_copy:copy:0x1"}));
  EXPECT_TRUE(mi::parse_sass("cuobjdump info    : File 'x' does not contain device code\n").empty());
}

// ---- names ------------------------------------------------------------------------------------------

TEST(Names, DtypeFromName) {
  EXPECT_EQ(mi::dtype_from_name("void memlab::labs::copy::vec16_kernel<__half>(__half*, const __half*, unsigned long)"),
            "f16");
  EXPECT_EQ(mi::dtype_from_name("void k<unsigned char>(unsigned char*, unsigned char const*, unsigned long)"), "u8");
  EXPECT_EQ(mi::dtype_from_name("void k<__nv_bfloat16>(__nv_bfloat16*)"), "bf16");
  EXPECT_EQ(mi::dtype_from_name("void k<float>(float*)"), "f32");
  EXPECT_EQ(mi::dtype_from_name("void k<double, 4>(double*)"), "f64");
  // the first dtype among the template arguments wins
  EXPECT_EQ(mi::dtype_from_name("void k<4, float, double>(double*)"), "f32");
  // whole tokens only
  EXPECT_EQ(mi::dtype_from_name("void k<float2>(float2*)"), "");
  EXPECT_EQ(mi::dtype_from_name("void k<__half2>(__half2*)"), "");
  EXPECT_EQ(mi::dtype_from_name("void k<__nv_bfloat162>(float*)"), "");
  EXPECT_EQ(mi::dtype_from_name("void k<my_unsigned char_t>(int*)"), "");
  EXPECT_EQ(mi::dtype_from_name("void k<unsigned_char>(int*)"), "");
  EXPECT_EQ(mi::dtype_from_name("void k<signed char>(int*)"), "");
  EXPECT_EQ(mi::dtype_from_name("void k<long double>(long double*)"), "");
  EXPECT_EQ(mi::dtype_from_name("void k<floatish::tag, double>(int*)"), "f64");
  // nested arguments count; the parameters of the function do not
  EXPECT_EQ(mi::dtype_from_name("void k<cute::tuple<__half, int>>(char*)"), "f16");
  EXPECT_EQ(mi::dtype_from_name("void k<4>(float*)"), "");
  EXPECT_EQ(mi::dtype_from_name("lab::copy_u4(uint4*, uint4 const*, unsigned long)"), "");
  EXPECT_EQ(mi::dtype_from_name(""), "");
}

TEST(Names, Demangle) {
  EXPECT_EQ(mi::demangle("_ZN3lab11copy_scalarI6__halfEEvPT_PKS2_m"),
            "void lab::copy_scalar<__half>(__half*, __half const*, unsigned long)");
  EXPECT_EQ(mi::demangle("_Z1kPf"), "k(float*)");
  EXPECT_EQ(mi::demangle("main"), "main");
  EXPECT_EQ(mi::demangle("f"), "f");  // a type code, not a symbol: left alone
  EXPECT_EQ(mi::demangle("_Znot_valid"), "_Znot_valid");
  EXPECT_EQ(mi::demangle(""), "");
}

TEST(Names, EnumStrings) {
  EXPECT_EQ(mi::to_string(mem_space::async_copy), "async_copy");
  EXPECT_EQ(mi::to_string(mem_space::generic), "generic");
  EXPECT_EQ(mi::to_string(mem_dir::atomic), "atomic");
  EXPECT_EQ(mi::to_string(mem_dir::copy), "copy");
}

// ---- inspect_binary, through a stand-in cuobjdump that prints the captured listing ------------------

namespace {

// Sets an environment variable for one scope.
class scoped_env {
 public:
  scoped_env(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value, 1);
  }
  ~scoped_env() {
    if (old_)
      ::setenv(name_, old_->c_str(), 1);
    else
      ::unsetenv(name_);
  }
  scoped_env(const scoped_env&) = delete;
  scoped_env& operator=(const scoped_env&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
}

// A file that starts like an ELF executable (inspect checks the magic; the stand-in reads nothing).
std::string write_fake_elf() {
  const auto path = temp_path("memlab_fake_elf");
  std::ofstream(path, std::ios::binary) << std::string(
                                               "\x7f"
                                               "ELF\x02\x01\x01",
                                               7)
                                        << std::string(64, '\0');
  return path.string();
}

// An executable script that prints the captured `cuobjdump -sass` listing, whatever it is asked.
std::string write_fake_cuobjdump() {
  const auto path = temp_path("memlab_fake_cuobjdump");
  std::ofstream(path) << "#!/bin/sh\ncat '" << MEMLAB_TEST_DATA_DIR << "/cuobjdump_sass_sm80_sm90.txt'\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

// A stand-in that answers as cuobjdump does: `-lelf` names a cubin per arch, `-sass -arch A` prints
// only A's sections of the captured listing, `-sass` all of it.
std::string write_fake_cuobjdump_per_arch() {
  const auto path = temp_path("memlab_fake_cuobjdump_per_arch");
  std::ofstream(path)
      << "#!/bin/sh\n"
         "data='" MEMLAB_TEST_DATA_DIR
         "/cuobjdump_sass_sm80_sm90.txt'\n"
         "if [ \"$1\" = -lelf ]; then\n"
         "  printf 'ELF file    1: lab.sm_80.cubin\\nELF file    2: lab.sm_90.cubin\\n'; exit 0\n"
         "fi\n"
         "if [ \"$2\" = -arch ]; then\n"
         "  awk -v a=\"$3\" '/^Fatbin/ {keep = 0} /^arch = / {keep = ($3 == a)} keep' \"$data\"; exit 0\n"
         "fi\n"
         "cat \"$data\"\n";
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path.string();
}

}  // namespace

// Every arch read once (one cuobjdump per arch, or one dump when the cubins' names say nothing):
// each arch's report is the one inspect_binary gives for that arch.
TEST(InspectBinary, EveryArchAtOnceEqualsOneArchAtATime) {
  const std::string bin = write_fake_elf();
  const std::vector<mi::kernel_label> labels{
      {"copy", "vec16", {"_ZN3lab7copy_u4EP5uint4PKS0_m"}, {}},
      {"copy", "scalar", {}, {"__half"}},
      {"async", "ldgsts16", {"_ZN3lab10cp_async16EP5uint4PKS0_"}, {}},
  };
  for (const std::string& tool : {write_fake_cuobjdump_per_arch(), write_fake_cuobjdump()}) {
    SCOPED_TRACE(tool);
    scoped_env use("MEMLAB_CUOBJDUMP", tool.c_str());
    const auto every = mi::inspect_every_arch(bin, labels);
    ASSERT_EQ(every.size(), 2u);
    for (const std::string arch : {"sm_80", "sm_90"}) {
      const auto one = mi::inspect_binary(bin, labels, "", arch, false);
      const auto& all = every.at(arch);
      EXPECT_EQ(all.archs, one.archs);
      ASSERT_EQ(all.kernels.size(), one.kernels.size()) << arch;
      for (std::size_t i = 0; i < one.kernels.size(); ++i) {
        EXPECT_EQ(all.kernels[i].code.mangled, one.kernels[i].code.mangled);
        EXPECT_EQ(all.kernels[i].code.arch, arch);
        EXPECT_EQ(all.kernels[i].code.opcodes, one.kernels[i].code.opcodes);
        EXPECT_EQ(all.kernels[i].variant, one.kernels[i].variant);
      }
    }
    EXPECT_EQ(every.at("sm_80").kernels.size(), 2u);
    EXPECT_EQ(every.at("sm_90").kernels.size(), 3u);
    std::filesystem::remove(tool);
  }
  std::filesystem::remove(bin);
}

TEST(InspectBinary, LabelsKernelsByMangledNameOrByATypeInTheirName) {
  const std::string tool = write_fake_cuobjdump();
  scoped_env use("MEMLAB_CUOBJDUMP", tool.c_str());
  const std::string bin = write_fake_elf();
  const std::vector<mi::kernel_label> labels{
      {"copy", "vec16", {"_ZN3lab7copy_u4EP5uint4PKS0_m"}, {}},
      {"copy", "scalar", {}, {"__half"}},  // by a type in the name, as CUB's kernels are found
      {"async", "ldgsts16", {"_ZN3lab10cp_async16EP5uint4PKS0_"}, {}},
  };
  const auto r = mi::inspect_binary(bin, labels, "", "", false);
  EXPECT_EQ(r.archs, (std::vector<std::string>{"sm_80", "sm_90"}));
  ASSERT_EQ(r.kernels.size(), 3u);  // smem_rt matches no label
  // Ladder order of `labels`, on the newest arch.
  EXPECT_EQ(r.kernels[0].variant, "vec16");
  EXPECT_EQ(r.kernels[1].variant, "scalar");
  EXPECT_EQ(r.kernels[1].dtype, "f16");
  EXPECT_EQ(r.kernels[2].lab, "async");
  for (const auto& k : r.kernels) EXPECT_EQ(k.code.arch, "sm_90");

  const auto only_copy = mi::inspect_binary(bin, labels, "copy", "sm_80", true);
  ASSERT_EQ(only_copy.kernels.size(), 1u);  // sm_80 holds copy_u4 and cp_async16; async is filtered out
  EXPECT_EQ(only_copy.kernels[0].variant, "vec16");

  try {
    (void)mi::inspect_binary(bin, labels, "", "sm_70", false);
    ADD_FAILURE() << "sm_70 is not in the listing";
  } catch (const std::invalid_argument& e) {  // the caller's mistake: a usage error for the CLI
    EXPECT_NE(std::string(e.what()).find("--arch: sm_70"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("available: sm_80, sm_90"), std::string::npos) << e.what();
  }

  std::ostringstream table, json;
  mi::write_inspect_table(table, r);
  mi::write_inspect_json(json, r);
  EXPECT_NE(table.str().find("LDG.E.128.CONSTANT×1"), std::string::npos) << table.str();
  const auto j = nlohmann::json::parse(json.str());
  EXPECT_EQ(j["schema"], "memlab.inspect/1");
  ASSERT_EQ(j["kernels"].size(), 3u);
  EXPECT_EQ(j["kernels"][1]["dtype"], "f16");
  EXPECT_EQ(j["kernels"][1]["memory"][0]["space"], "global");
  EXPECT_EQ(j["kernels"][1]["memory"][0]["dir"], "load");
  EXPECT_EQ(j["kernels"][1]["memory"][0]["width_bits"], 16);
  std::filesystem::remove(bin);
  std::filesystem::remove(tool);
}

// Inputs that are not a CUDA binary are the caller's mistake (std::invalid_argument: exit 2 in the
// CLI); a missing tool is not (std::runtime_error: exit 1), and says how to install it.
TEST(InspectBinary, BadInputsAndAMissingToolAreTold) {
  const auto expect_input_error = [](const std::string& binary, std::string_view needle) {
    try {
      (void)mi::inspect_binary(binary, {}, "", "", false);
      ADD_FAILURE() << "no error for " << binary;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_input_error("/nonexistent/memlab_binary", "/nonexistent/memlab_binary");
  expect_input_error(std::filesystem::temp_directory_path().string(), "is not a file");
  const auto text = temp_path("memlab_text_file");
  std::ofstream(text) << "root:x:0:0:root:/root:/bin/bash\n";
  expect_input_error(text.string(), "not ELF");
  std::filesystem::remove(text);

  scoped_env no_tool("MEMLAB_CUOBJDUMP", "none");
  ASSERT_EQ(mi::find_cuobjdump(), "");
  const std::string bin = write_fake_elf();
  try {
    (void)mi::inspect_binary(bin, {}, "", "", false);
    ADD_FAILURE() << "no error without cuobjdump";
  } catch (const std::invalid_argument& e) {
    ADD_FAILURE() << "a missing tool is not a usage error: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("pip install nvidia-cuda-cuobjdump"), std::string::npos) << e.what();
  }
  std::filesystem::remove(bin);
}

TEST(InspectBinary, SelfExecutable) {
  const std::string self = mi::self_executable();
  ASSERT_FALSE(self.empty());
  EXPECT_TRUE(std::filesystem::exists(self));
}
