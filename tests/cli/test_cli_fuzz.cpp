// Every value-taking flag of every subcommand, walked through values no flag accepts: each must be a
// one-line usage error (exit 2) that names the flag, before any GPU work. In process, against the
// parser the memlab command builds over the labs of this build (main_with): the flags are read from
// that parser (cli::value_flags), so a flag added later, or an axis a lab declares, is walked too.
// A case that got past the usage checks would reach the runner, which records it and answers as a
// machine without a GPU does (exit 3). The exit codes of the real binary: test_cli.cpp.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "harness/device.hpp"
#include "harness/registry.hpp"

namespace memlab {
namespace {

// A runner that must never be reached: a usage error comes before any GPU work.
struct no_gpu_runner final : case_runner {
  std::vector<std::string> reached;
  std::string args;
  device_info open(const run_request&, std::span<const lab* const>, std::ostream&) override {
    reached.push_back(args);
    throw no_device_error("the fuzz test's runner has no GPU");
  }
  result run(const planned_case&, const run_request&) override { return {}; }
  [[nodiscard]] timing_info timing(const run_request&) const override { return {}; }
};

struct outcome {
  int code = -1;
  std::string output;  // stdout and stderr together
};

outcome memlab_cli(std::vector<std::string> args, no_gpu_runner& runner) {
  std::string joined;
  for (const auto& a : args) joined += " " + a;
  runner.args = joined;
  args.insert(args.begin(), "memlab");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  outcome o;
  o.code = cli::main_with(static_cast<int>(argv.size()), argv.data(), {all_labs(), missing_labs()}, &runner);
  o.output = testing::internal::GetCapturedStdout();
  o.output += testing::internal::GetCapturedStderr();
  return o;
}

std::size_t lines_of(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

// Values that no flag of memlab accepts: empty, not a number, negative, NaN, infinite, overflowing,
// a bare range, two words, a lone hex prefix.
const std::vector<std::string> bad_values{"", "nan", "-1", "x", "2^99", "1e400", "..", "1 2", "0x"};

TEST(cli_fuzz, every_flag_of_every_subcommand_refuses_bad_values) {
  no_gpu_runner runner;
  std::vector<std::string> walked_flags;
  int walked = 0;
  for (const auto& [sub, flags] : cli::value_flags({all_labs(), missing_labs()})) {
    EXPECT_FALSE(flags.empty()) << sub;
    for (const auto& flag : flags) {
      walked_flags.push_back(sub + " " + flag);
      for (const auto& value : bad_values) {
        const auto o = memlab_cli({sub, flag, value}, runner);
        const std::string args = sub + " " + flag + " '" + value + "'";
        EXPECT_EQ(o.code, 2) << args << "\n" << o.output;
        EXPECT_EQ(lines_of(o.output), 1u) << args << "\n" << o.output;
        EXPECT_NE(o.output.find(flag), std::string::npos) << args << ": the message must name the flag\n" << o.output;
        ++walked;
      }
    }
  }
  EXPECT_TRUE(runner.reached.empty()) << "reached the runner:" << testing::PrintToString(runner.reached);
  // list --format; run's ten without axes; inspect's three; device's two; and one per axis of the labs.
  for (const std::string f : {"list --format", "run --variant", "run --dtype", "run --sizes", "run --device",
                              "run --max-time", "run --format", "run --out", "inspect --binary", "inspect --arch",
                              "inspect --format", "device --device", "device --format"}) {
    EXPECT_NE(std::find(walked_flags.begin(), walked_flags.end(), f), walked_flags.end()) << f << " was not walked";
  }
  for (const lab* l : all_labs()) {
    for (const auto& a : l->axes) {
      const std::string f = "run " + a.flag();
      EXPECT_NE(std::find(walked_flags.begin(), walked_flags.end(), f), walked_flags.end()) << f << " was not walked";
    }
  }
  EXPECT_GE(walked, 13 * static_cast<int>(bad_values.size()));
}

// A flag given without its value is a usage error too.
TEST(cli_fuzz, a_flag_without_its_value_is_a_usage_error) {
  no_gpu_runner runner;
  for (const auto& [sub, flags] : cli::value_flags({all_labs(), missing_labs()})) {
    for (const auto& flag : flags) {
      const auto o = memlab_cli({sub, flag}, runner);
      EXPECT_EQ(o.code, 2) << sub << " " << flag << "\n" << o.output;
      EXPECT_EQ(lines_of(o.output), 1u) << sub << " " << flag << "\n" << o.output;
    }
  }
  EXPECT_TRUE(runner.reached.empty()) << testing::PrintToString(runner.reached);
}

}  // namespace
}  // namespace memlab
