// Runs the memlab binary as a user would, for the CLI tests.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace memlab::test {

struct outcome {
  int code = -1;
  std::string output;  // stdout and stderr together
};

// `env` is prepended to the command line ("CUDA_VISIBLE_DEVICES="), `args` as a shell would split them.
inline outcome memlab(const std::string& args, const std::string& env = "") {
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

// No GPU, whatever this machine has: the runtime sees none.
inline const std::string no_gpu = "CUDA_VISIBLE_DEVICES=";

inline std::size_t lines_of(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace memlab::test
