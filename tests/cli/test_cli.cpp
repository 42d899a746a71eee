// The memlab command from the outside: exit codes and messages, as a user meets them. No GPU is
// needed: the no-device path is forced with CUDA_VISIBLE_DEVICES="". The binary holds the labs this
// build has (MEMLAB_ONLY_LABS builds a subset; the tile lab needs CuTe), the same all_labs() this test
// is linked with: what is asserted of every lab is asserted of those, and a case about a named lab
// runs where that lab is built.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "cli_run.hpp"
#include "harness/registry.hpp"
#include "harness/result.hpp"

namespace {

using memlab::all_labs;
using memlab::test::lines_of;
using memlab::test::memlab;
using memlab::test::no_gpu;

// Whether this build has every one of `labs`.
bool built(const std::vector<std::string_view>& labs) {
  return std::all_of(labs.begin(), labs.end(), [](std::string_view name) {
    return std::any_of(all_labs().begin(), all_labs().end(), [&](const memlab::lab* l) { return l->name == name; });
  });
}

std::string temp(const std::string& name) {
  const auto dot = name.rfind('.');
  return (std::filesystem::temp_directory_path() /
          (name.substr(0, dot) + "_" + std::to_string(::getpid()) + name.substr(dot)))
      .string();
}

TEST(cli, help_explains_subcommands_exit_codes_and_lists) {
  const auto o = memlab("--help");
  EXPECT_EQ(o.code, 0);
  for (const char* s : {"list", "run", "inspect", "device", "Exit codes", "reads + writes", "130 interrupted",
                        "4 nothing measured", "one value per"})
    EXPECT_NE(o.output.find(s), std::string::npos) << s;
  const auto r = memlab("run --help");
  EXPECT_EQ(r.code, 0);
  for (const char* s :
       {"--variant", "--dtype", "--sizes", "--device", "--max-time", "--no-verify", "--format", "--out"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s;
  // One flag per axis of every lab built; an axis several labs declare says whose it is.
  for (const memlab::lab* l : all_labs()) {
    for (const auto& a : l->axes) EXPECT_NE(r.output.find(a.flag()), std::string::npos) << l->name << " " << a.flag();
  }
  if (built({"copy", "stride", "tile"})) {
    EXPECT_NE(r.output.find("copy, stride, tile: bytes added to the source pointer"), std::string::npos) << r.output;
  }
  // A flag several labs declare: each lab's meaning, and the unit.
  if (built({"copy", "stride", "tile", "async"})) {
    EXPECT_NE(r.output.find("async: bytes added to the global source"), std::string::npos) << r.output;
  }
  if (built({"stride"})) {
    for (const char* s : {"elements between the accesses of neighbouring threads\n",
                          "(axis of stride; elements; values 1..1048576, written as counts"})
      EXPECT_NE(r.output.find(s), std::string::npos) << s << "\n" << r.output;
  }
}

TEST(cli, no_subcommand_is_a_usage_error) { EXPECT_EQ(memlab("").code, 2); }

// Every bad input of issue "Measure like NVBench": exit 2, one line, naming the flag, before any GPU
// work (the machine here has none: a run that got that far would exit 3). A case that uses a lab's
// name or axis says which labs it needs.
TEST(cli, bad_values_are_one_line_usage_errors_naming_the_flag) {
  std::filesystem::create_directories(temp("memlab_dir.json"));
  struct usage_case {
    std::string args, needle;
    std::vector<std::string_view> needs{};
  };
  const std::vector<usage_case> cases{
      {"run --max-time nan", "--max-time: takes seconds"},
      {"run --max-time inf", "--max-time: takes seconds"},
      {"run --max-time 0", "--max-time: takes seconds"},
      {"run --max-time -1", "--max-time: takes seconds"},
      {"run --src-offset 0..999 --dst-offset 0..999", "more than 20000 cases", {"copy"}},
      {"run --src-offset 0..9999", "--src-offset: 4097 is outside 0..4096", {"copy"}},
      {"run --dtype u8 --sizes 2^62 --src-offset 2^62 --dst-offset 2^62", "--src-offset", {"copy"}},
      {"run --out " + temp("memlab_dir.json"), "is a folder"},
      {"run --out /nonexistent-dir/r.json", "cannot open for writing"},
      // A folder no one can create files in, root included (procfs): the writer's own test, not access().
      {"run --out /proc/memlab_r.json", "--out: /proc/memlab_r.json: cannot write in /proc"},
      {"run --out results.xyz", "--out: results.xyz: the extension gives the format"},
      {"run --sizes ''", "--sizes: an empty value"},
      {"run --stride ''", "--stride: an empty value", {"stride"}},
      {"run copy --sizes 2^61 --dtype f64", "--sizes: 2^61 is too large", {"copy"}},
      {"run --ilp 3", "--ilp: 3 is not one of 1, 2, 4, 8", {"hierarchy"}},
      // One flag, one reading: the stride lab's elements, smem's accesses, the hierarchy's bytes.
      {"run smem --stride 2", "--stride is not an axis of lab smem", {"smem", "stride"}},
      {"run stride --lane-stride 2", "--lane-stride is not an axis of lab stride", {"smem", "stride"}},
      {"run hierarchy --node-stride 4KiB --stride 2", "--stride is not an axis of lab hierarchy", {"hierarchy", "stride"}},
      {"run --lane-stride 33", "--lane-stride: 33 is outside 1..32", {"smem"}},
      {"run --node-stride 12", "--node-stride: 12 is not 8..4294967296, multiples of 8", {"hierarchy"}},
      // Every documented choice is checked when parsed, not skipped case by case.
      {"run hierarchy --ilp 1,3", "--ilp: 3 is not one of 1, 2, 4, 8", {"hierarchy"}},
      {"run --tile-bytes 4100", "--tile-bytes: 4100 is not 16..1048576, multiples of 16", {"async"}},
      {"run --direction sideways", "--direction: 'sideways' is not one of h2d, d2h, bidir", {"transfer"}},
      {"run --sizes 2^x", "--sizes: invalid size \"2^x\""},
      {"run --sizes 10..1", "--sizes: invalid size \"10..1\""},
      {"run copy --sizes 6B --dtype f32", "--sizes", {"copy"}},
      {"run --device -1", "--device: invalid value \"-1\""},
      {"run --device zero", "--device: invalid value \"zero\""},
      {"run --rank-timeout 0", "--rank-timeout"},
      {"run --nccl-tests-graph 1001", "--nccl-tests-graph"},
      {"run copy --nccl-tests-graph 10", "--nccl-tests-graph: no chosen rung is timed by nccl-tests' method", {"copy"}},
      {"run transfer --variant peer_ce --nccl-tests-graph 10", "--nccl-tests-graph: no chosen rung", {"transfer"}},
      {"run --dtype f17", "--dtype: f17 not in"},
      {"run copy --dtype f16 --variant fastest", "--variant: unknown variant 'fastest'", {"copy"}},
      {"run gather --dtype f16", "--dtype: lab gather does not support f16", {"gather"}},
      {"run copy --stride 2", "--stride is not an axis of lab copy", {"copy", "stride"}},
      {"run nosuchlab", "unknown lab 'nosuchlab'"},
      {"run --format yaml", "--format: yaml not in"},
      {"run --frobnicate", "--frobnicate"},
      {"run --tile 12", "--tile: invalid shape \"12\"", {"tile"}},
      {"inspect --binary /tmp", "--binary: '/tmp' is not a file"},
      {"inspect --binary /etc/passwd", "--binary: '/etc/passwd' is not an executable"},
      {"inspect --binary /nonexistent/memlab", "/nonexistent/memlab"},
      {"inspect nosuchlab", "unknown lab 'nosuchlab'"},
      {"list nosuchlab", "unknown lab 'nosuchlab'"},
  };
  for (const auto& [args, needle, needs] : cases) {
    if (!built(needs)) continue;
    const auto o = memlab(args, no_gpu);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.output;
    EXPECT_NE(o.output.find(needle), std::string::npos) << args << "\n" << o.output;
    EXPECT_EQ(lines_of(o.output), 1u) << args << "\n" << o.output;
  }
  std::filesystem::remove_all(temp("memlab_dir.json"));
}

// A list option takes one value per flag: the lab after it is a lab (without a GPU: exit 3, not a
// usage error about an unknown variant, dtype or file). Any lab will do: the first one built.
TEST(cli, list_options_do_not_swallow_the_lab) {
  if (all_labs().empty()) GTEST_SKIP() << "this build has no lab (MEMLAB_ONLY_LABS)";
  const memlab::lab& l = *all_labs().front();
  const std::string lab(l.name), variant(l.variants.front().name), dtype(to_string(l.default_dtype));
  const std::string out = temp("memlab_swallow.json");
  for (const std::string& args :
       {"run --out " + out + " " + lab, "run --dtype " + dtype + " " + lab, "run --variant " + variant + " " + lab}) {
    const auto o = memlab(args, no_gpu);
    EXPECT_EQ(o.code, 3) << args << "\n" << o.output;
  }
  EXPECT_FALSE(std::filesystem::exists(out)) << "no file from a run that measured nothing";
}

TEST(cli, a_rejected_run_leaves_no_out_file_behind) {
  const std::string path = temp("memlab_cli_out_probe.json");
  std::filesystem::remove(path);
  EXPECT_EQ(memlab("run --sizes 2^x --out " + path, no_gpu).code, 2);
  EXPECT_EQ(memlab("run --sizes 1K --out " + path, no_gpu).code, 3);
  EXPECT_FALSE(std::filesystem::exists(path)) << path << " was created";
}

TEST(cli, no_gpu_exits_3_and_says_what_still_works) {
  for (const char* args : {"run", "device"}) {
    const auto o = memlab(args, no_gpu);
    EXPECT_EQ(o.code, 3) << args << "\n" << o.output;
    EXPECT_NE(o.output.find("no usable CUDA device"), std::string::npos) << o.output;
    EXPECT_NE(o.output.find("memlab inspect"), std::string::npos) << o.output;
  }
}

// A launcher's environment that contradicts itself, or a flag a distributed run decides for itself:
// one line naming the variable or the flag, exit 2, before any GPU work (no GPU needed to say so).
// A rank on a machine without GPUs: exit 3, one line. Asked of the transfer lab, the one that runs across GPUs.
TEST(cli, launcher_environments_are_checked_before_any_gpu_work) {
  if (!built({"transfer"})) GTEST_SKIP() << "the transfer lab is not built (MEMLAB_ONLY_LABS)";
  const struct {
    const char* env;
    const char* args;
    int code;
    const char* needle;
  } cases[] = {
      {"RANK=4 WORLD_SIZE=4", "run transfer", 2, "RANK=4 is not a rank of a world of WORLD_SIZE=4 ranks"},
      {"RANK=0 WORLD_SIZE=two", "run transfer", 2, "WORLD_SIZE=two: not a rank or a count"},
      {"RANK=0 WORLD_SIZE=8 LOCAL_RANK=0 LOCAL_WORLD_SIZE=4", "run transfer", 2, "set MASTER_ADDR"},
      {"RANK=0 WORLD_SIZE=2", "run transfer --device 1", 2, "--device: a run of one process per GPU"},
      {"RANK=0 WORLD_SIZE=2", "run transfer --gpus 4", 2, "--gpus: a distributed run has 2 ranks"},
      {"RANK=0 WORLD_SIZE=2", "run transfer", 3, "no CUDA device on this rank"},
  };
  for (const auto& c : cases) {
    const auto o = memlab(c.args, no_gpu + " " + c.env);
    EXPECT_EQ(o.code, c.code) << c.env << " " << c.args << "\n" << o.output;
    EXPECT_NE(o.output.find(c.needle), std::string::npos) << c.env << " " << c.args << "\n" << o.output;
    EXPECT_EQ(lines_of(o.output), 1u) << o.output;
  }
}

TEST(cli, list_shows_every_lab_its_axes_and_roof_without_a_gpu) {
  const auto o = memlab("list", no_gpu);
  EXPECT_EQ(o.code, 0);
  for (const memlab::lab* l : all_labs()) {
    SCOPED_TRACE(l->name);
    EXPECT_NE(o.output.find(std::string(l->name) + ": "), std::string::npos);
    EXPECT_NE(o.output.find("roof: " + std::string(to_string(l->roof))), std::string::npos);
    for (const auto& v : l->variants) EXPECT_NE(o.output.find(v.name), std::string::npos) << v.name;
    for (const auto& a : l->axes) EXPECT_NE(o.output.find(a.flag() + ":"), std::string::npos) << a.flag();
    const auto j = memlab("list " + std::string(l->name) + " --format json", no_gpu);
    EXPECT_EQ(j.code, 0);
    for (const auto& a : l->axes)
      EXPECT_NE(j.output.find("\"flag\": \"" + a.flag() + "\""), std::string::npos) << j.output;
  }
  for (const auto& m : memlab::missing_labs()) {
    EXPECT_NE(o.output.find(std::string(m.name) + ": not built: "), std::string::npos) << m.name;
  }
  if (built({"copy"})) {
    const auto j = memlab("list copy --format json", no_gpu);
    EXPECT_EQ(j.code, 0);
    for (const char* key : {"\"schema\": \"memlab.labs/1\"", "\"flag\": \"--src-offset\"", "\"unit\": \"bytes\"",
                            "\"roofs\"", "\"judges\": \"gflops\"", "\"per_sm_clock\"", "\"dtypes\"",
                            "\"suffix\": \"MiB\"", "\"target_rel_spread\"", "\"units\"", "\"kernels\"",
                            "\"size_meaning\""})
      EXPECT_NE(j.output.find(key), std::string::npos) << key << "\n" << j.output;
    EXPECT_EQ(j.output.find("\"name\": \"stride\""), std::string::npos) << "only the labs asked for";
  }
  if (built({"smem", "hierarchy"})) {
    const auto s = memlab("list smem hierarchy", no_gpu);
    EXPECT_NE(s.output.find("--lane-stride: distance between neighbouring lanes' accesses"), std::string::npos)
        << s.output;
    EXPECT_NE(s.output.find("(accesses; counts 1..32;"), std::string::npos) << s.output;
    EXPECT_NE(s.output.find("(vectors; counts one of 1, 2, 4, 8;"), std::string::npos) << s.output;
  }
}

}  // namespace
