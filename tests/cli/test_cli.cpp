// The memlab command from the outside: exit codes and messages, as a user meets them. No GPU is
// needed: the no-device path is forced with CUDA_VISIBLE_DEVICES="".
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace {

using memlab::test::lines_of;
using memlab::test::memlab;
using memlab::test::no_gpu;

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
  for (const char* s : {"--variant", "--dtype", "--sizes", "--device", "--max-time", "--no-verify", "--format", "--out",
                        "--src-offset", "--stride", "--lane-stride", "--node-stride", "--table-bytes", "--tile", "--ctas",
                        // A flag several labs declare: each lab's meaning, and the unit.
                        "copy, stride, tile: bytes added to the source pointer", "async: bytes added to the global source",
                        "elements between the accesses of neighbouring threads\n",
                        "(axis of stride; elements; values 1..1048576, written as counts", "values one of 1, 2, 4, 8"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s << "\n" << r.output;
}

TEST(cli, no_subcommand_is_a_usage_error) { EXPECT_EQ(memlab("").code, 2); }

// Every bad input of issue "Measure like NVBench": exit 2, one line, naming the flag, before any GPU
// work (the machine here has none: a run that got that far would exit 3).
TEST(cli, bad_values_are_one_line_usage_errors_naming_the_flag) {
  std::filesystem::create_directories(temp("memlab_dir.json"));
  const std::vector<std::pair<std::string, std::string>> cases{
      {"run --max-time nan", "--max-time: takes seconds"},
      {"run --max-time inf", "--max-time: takes seconds"},
      {"run --max-time 0", "--max-time: takes seconds"},
      {"run --max-time -1", "--max-time: takes seconds"},
      {"run --src-offset 0..999 --dst-offset 0..999", "more than 20000 cases"},
      {"run --src-offset 0..9999", "--src-offset: 4097 is outside 0..4096"},
      {"run --dtype u8 --sizes 2^62 --src-offset 2^62 --dst-offset 2^62", "--src-offset"},
      {"run --out " + temp("memlab_dir.json"), "is a folder"},
      {"run --out /nonexistent-dir/r.json", "cannot open for writing"},
      // A folder no one can create files in, root included (procfs): the writer's own test, not access().
      {"run --out /proc/memlab_r.json", "--out: /proc/memlab_r.json: cannot write in /proc"},
      {"run --out results.xyz", "--out: results.xyz: the extension gives the format"},
      {"run --sizes ''", "--sizes: an empty value"},
      {"run --stride ''", "--stride: an empty value"},
      // One flag, one reading: the stride lab's elements, smem's accesses, the hierarchy's bytes.
      {"run smem --stride 2", "--stride is not an axis of lab smem"},
      {"run stride --lane-stride 2", "--lane-stride is not an axis of lab stride"},
      {"run hierarchy --node-stride 4KiB --stride 2", "--stride is not an axis of lab hierarchy"},
      {"run --lane-stride 33", "--lane-stride: 33 is outside 1..32"},
      {"run --node-stride 12", "--node-stride: 12 is not 8..4294967296, multiples of 8"},
      // Every documented choice is checked when parsed, not skipped case by case.
      {"run --ilp 3", "--ilp: 3 is not one of 1, 2, 4, 8"},
      {"run hierarchy --ilp 1,3", "--ilp: 3 is not one of 1, 2, 4, 8"},
      {"run --tile-bytes 4100", "--tile-bytes: 4100 is not 16..1048576, multiples of 16"},
      {"run --direction sideways", "--direction: 'sideways' is not one of h2d, d2h, bidir"},
      {"run copy --sizes 2^61 --dtype f64", "--sizes: 2^61 is too large"},
      {"run --sizes 2^x", "--sizes: invalid size \"2^x\""},
      {"run --sizes 10..1", "--sizes: invalid size \"10..1\""},
      {"run --sizes 6B --dtype f32", "--sizes"},
      {"run --device -1", "--device: invalid value \"-1\""},
      {"run --device zero", "--device: invalid value \"zero\""},
      {"run --rank-timeout 0", "--rank-timeout"},
      {"run --dtype f17", "--dtype: f17 not in"},
      {"run copy --dtype f16 --variant fastest", "--variant: unknown variant 'fastest'"},
      {"run gather --dtype f16", "--dtype: lab gather does not support f16"},
      {"run copy --stride 2", "--stride is not an axis of lab copy"},
      {"run nosuchlab", "unknown lab 'nosuchlab'"},
      {"run --format yaml", "--format: yaml not in"},
      {"run --frobnicate", "--frobnicate"},
      {"run --tile 12", "--tile: invalid shape \"12\""},
      {"inspect --binary /tmp", "--binary: '/tmp' is not a file"},
      {"inspect --binary /etc/passwd", "--binary: '/etc/passwd' is not an executable"},
      {"inspect --binary /nonexistent/memlab", "/nonexistent/memlab"},
      {"inspect nosuchlab", "unknown lab 'nosuchlab'"},
      {"list nosuchlab", "unknown lab 'nosuchlab'"},
  };
  for (const auto& [args, needle] : cases) {
    const auto o = memlab(args, no_gpu);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.output;
    EXPECT_NE(o.output.find(needle), std::string::npos) << args << "\n" << o.output;
    EXPECT_EQ(lines_of(o.output), 1u) << args << "\n" << o.output;
  }
  std::filesystem::remove_all(temp("memlab_dir.json"));
}

// A list option takes one value per flag: the lab after it is a lab (without a GPU: exit 3, not a
// usage error about an unknown variant, dtype or file).
TEST(cli, list_options_do_not_swallow_the_lab) {
  const std::string out = temp("memlab_swallow.json");
  for (const std::string& args :
       {"run --out " + out + " copy --sizes 1K", std::string("run --dtype f32 copy --sizes 1K"),
        std::string("run --variant vec16 copy --sizes 1K")}) {
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
  for (const char* args : {"run copy --sizes 4096", "device"}) {
    const auto o = memlab(args, no_gpu);
    EXPECT_EQ(o.code, 3) << args << "\n" << o.output;
    EXPECT_NE(o.output.find("no usable CUDA device"), std::string::npos) << o.output;
    EXPECT_NE(o.output.find("memlab inspect"), std::string::npos) << o.output;
  }
}

// A launcher's environment that contradicts itself, or a flag a distributed run decides for itself:
// one line naming the variable or the flag, exit 2, before any GPU work (no GPU needed to say so).
// A rank on a machine without GPUs: exit 3, one line.
TEST(cli, launcher_environments_are_checked_before_any_gpu_work) {
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
  for (const char* s : {"scalar", "vec8", "vec16", "vec16_unroll", "auto", "memcpy", "cub", "thrust", "strided_rw",
                        "random", "sorted", "roof: dram", "--src-offset:", "--table-bytes:"})
    EXPECT_NE(o.output.find(s), std::string::npos) << s;
  const auto j = memlab("list copy --format json", no_gpu);
  EXPECT_EQ(j.code, 0);
  for (const char* key : {"\"schema\": \"memlab.labs/1\"", "\"flag\": \"--src-offset\"", "\"unit\": \"bytes\"",
                          "\"roofs\"", "\"judges\": \"gflops\"", "\"per_sm_clock\"", "\"dtypes\"", "\"suffix\": \"MiB\"",
                          "\"target_rel_spread\"", "\"units\"", "\"kernels\"", "\"size_meaning\""})
    EXPECT_NE(j.output.find(key), std::string::npos) << key << "\n" << j.output;
  EXPECT_EQ(j.output.find("\"name\": \"stride\""), std::string::npos) << "only the labs asked for";
  const auto s = memlab("list smem hierarchy", no_gpu);
  EXPECT_NE(s.output.find("--lane-stride: distance between neighbouring lanes' accesses"), std::string::npos) << s.output;
  EXPECT_NE(s.output.find("(accesses; counts 1..32;"), std::string::npos) << s.output;
  EXPECT_NE(s.output.find("(vectors; counts one of 1, 2, 4, 8;"), std::string::npos) << s.output;
}

}  // namespace
