// Every value-taking flag of every subcommand, walked through values no flag accepts: each must be a
// one-line usage error (exit 2) that names the flag, before any GPU work. The flags are read from
// each subcommand's --help, so a flag added later is walked too.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli_run.hpp"

namespace {

using memlab::test::lines_of;
using memlab::test::memlab;
using memlab::test::no_gpu;

// "--name" of every option whose help line shows a value type ("--sizes TEXT", "--device INT:ORDINAL").
std::vector<std::string> value_flags(const std::string& subcommand) {
  const auto help = memlab(subcommand + " --help");
  EXPECT_EQ(help.code, 0) << help.output;
  std::vector<std::string> out;
  const std::regex line(R"(^\s+(--[a-z0-9-]+) (TEXT|INT|FLOAT|UINT)\b)");
  std::istringstream in(help.output);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) out.push_back(m[1]);
  }
  return out;
}

// Values that no flag of memlab accepts: empty, not a number, negative, NaN, infinite, overflowing,
// a bare range, shell-ish junk.
const std::vector<std::string> bad_values{"''", "nan", "-1", "x", "2^99", "1e400", "..", "'1 2'", "0x"};

TEST(cli_fuzz, every_flag_of_every_subcommand_refuses_bad_values) {
  int walked = 0;
  for (const std::string& sub : std::vector<std::string>{"list", "run", "inspect", "device"}) {
    const auto flags = value_flags(sub);
    EXPECT_FALSE(flags.empty()) << sub;
    for (const auto& flag : flags) {
      for (const auto& value : bad_values) {
        const std::string args = sub + " " + flag + " " + value;
        const auto o = memlab(args, no_gpu);
        EXPECT_EQ(o.code, 2) << args << "\n" << o.output;
        EXPECT_EQ(lines_of(o.output), 1u) << args << "\n" << o.output;
        EXPECT_NE(o.output.find(flag), std::string::npos) << args << ": the message must name the flag\n" << o.output;
        ++walked;
      }
    }
  }
  // list --format; run's dozen (axes included); inspect's three; device's two.
  EXPECT_GE(walked, 18 * static_cast<int>(bad_values.size()));
}

// A flag given without its value is a usage error too.
TEST(cli_fuzz, a_flag_without_its_value_is_a_usage_error) {
  for (const std::string& sub : std::vector<std::string>{"list", "run", "inspect", "device"}) {
    for (const auto& flag : value_flags(sub)) {
      const auto o = memlab(sub + " " + flag, no_gpu);
      EXPECT_EQ(o.code, 2) << sub << " " << flag << "\n" << o.output;
    }
  }
}

}  // namespace
