// The memlab command from the outside: exit codes and messages, as a user meets them.
// No GPU is needed: the no-device path is forced with CUDA_VISIBLE_DEVICES="".
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace {

struct outcome {
  int code = -1;
  std::string output;  // stdout and stderr together
};

outcome memlab(const std::string& args, const std::string& env = "") {
  const std::string cmd = env + " '" MEMLAB_BINARY "' " + args + " 2>&1";
  outcome o;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return o;
  std::array<char, 4096> buf{};
  std::size_t got = 0;
  while ((got = fread(buf.data(), 1, buf.size(), p)) > 0) o.output.append(buf.data(), got);
  const int status = pclose(p);
  o.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return o;
}

const std::string no_gpu = "CUDA_VISIBLE_DEVICES=";

TEST(cli, help_explains_subcommands_and_exit_codes) {
  const auto o = memlab("--help");
  EXPECT_EQ(o.code, 0);
  for (const char* s : {"list", "run", "inspect", "device", "Exit codes", "reads + writes"})
    EXPECT_NE(o.output.find(s), std::string::npos) << s;
  const auto r = memlab("run --help");
  EXPECT_EQ(r.code, 0);
  for (const char* s : {"--variant", "--dtype", "--sizes", "--device", "--max-time", "--no-verify", "--format", "--out"})
    EXPECT_NE(r.output.find(s), std::string::npos) << s;
}

TEST(cli, no_subcommand_is_a_usage_error) { EXPECT_EQ(memlab("").code, 2); }

TEST(cli, bad_values_are_usage_errors_with_a_clear_message_even_without_a_gpu) {
  const std::array<std::pair<const char*, const char*>, 12> cases{{
      {"run --sizes 2^61 --dtype f64", "too large"},
      {"run --device -1", "device ordinal"},
      {"run --out /nonexistent-dir/r.json", "cannot open for writing"},
      {"run --dtype f17", "unknown dtype 'f17'"},
      {"run nosuchlab", "unknown lab 'nosuchlab'"},
      {"run --variant fastest", "unknown variant 'fastest'"},
      {"run --sizes 2^x", "2^x"},
      {"run --sizes 10..1", "10..1"},
      {"run --max-time -1", "max-time"},
      {"run --format yaml", "yaml"},
      {"run --out results.xyz", "results.xyz"},
      {"run --frobnicate", "frobnicate"},
  }};
  for (const auto& [args, needle] : cases) {
    const auto o = memlab(args, no_gpu);
    EXPECT_EQ(o.code, 2) << args << "\n" << o.output;
    EXPECT_NE(o.output.find(needle), std::string::npos) << args << "\n" << o.output;
  }
}

TEST(cli, a_rejected_run_leaves_no_out_file_behind) {
  const std::string path = ::testing::TempDir() + "memlab_cli_out_probe.json";
  std::remove(path.c_str());
  EXPECT_EQ(memlab("run --sizes 2^x --out " + path, no_gpu).code, 2);
  EXPECT_EQ(memlab("run --sizes 1K --out " + path, no_gpu).code, 3);
  FILE* f = std::fopen(path.c_str(), "r");
  EXPECT_EQ(f, nullptr) << path << " was created";
  if (f != nullptr) std::fclose(f);
}

TEST(cli, no_gpu_exits_3_and_says_what_still_works) {
  for (const char* args : {"run copy --sizes 4096", "device"}) {
    const auto o = memlab(args, no_gpu);
    EXPECT_EQ(o.code, 3) << args << "\n" << o.output;
    EXPECT_NE(o.output.find("no usable CUDA device"), std::string::npos) << o.output;
    EXPECT_NE(o.output.find("memlab inspect"), std::string::npos) << o.output;
  }
}

TEST(cli, list_shows_every_copy_variant_without_a_gpu) {
  const auto o = memlab("list", no_gpu);
  EXPECT_EQ(o.code, 0);
  for (const char* v : {"scalar", "vec8", "vec16", "vec16_unroll", "memcpy", "cub", "thrust"})
    EXPECT_NE(o.output.find(v), std::string::npos) << v;
  EXPECT_EQ(memlab("list nosuchlab").code, 2);
}

TEST(cli, inspect_rejects_unknown_labs_and_unreadable_binaries) {
  EXPECT_EQ(memlab("inspect nosuchlab").code, 2);
  const auto o = memlab("inspect --binary /nonexistent/memlab");
  EXPECT_EQ(o.code, 2);
  EXPECT_NE(o.output.find("/nonexistent/memlab"), std::string::npos) << o.output;
}

}  // namespace
