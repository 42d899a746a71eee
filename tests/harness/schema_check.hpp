// Validating a results file against docs/results.schema.json from a test, with Python's jsonschema
// (tests/harness/validate_results.py). Only a missing validator outside CI skips; under CI, where
// tools/setup.sh installs it, that fails too.
#pragma once

#include <gtest/gtest.h>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace memlab::test {

inline void expect_valid_results(const std::string& path) {
  const std::string script = std::string(MEMLAB_SCHEMA).substr(0, std::string(MEMLAB_SCHEMA).rfind("/docs/")) +
                             "/tests/harness/validate_results.py";
  const std::string cmd = "python3 '" + script + "' '" MEMLAB_SCHEMA "' '" + path + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr) << "cannot run " << cmd;
  std::string out;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;) out.append(buf.data(), n);
  const int status = ::pclose(p);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 77) GTEST_SKIP() << out;
  EXPECT_EQ(code, 0) << path << " does not validate against " << MEMLAB_SCHEMA << ":\n" << out;
}

}  // namespace memlab::test
