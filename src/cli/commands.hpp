// The memlab subcommands. Each returns the process exit code (DESIGN.md):
// 0 ok; 1 a verification failed (or a CUDA error stopped the run); 2 usage error; 3 no usable CUDA device.
#pragma once

#include <string>
#include <vector>

#include "harness/runner.hpp"

namespace memlab::cli {

inline constexpr int exit_ok = 0;
inline constexpr int exit_failed = 1;
inline constexpr int exit_usage = 2;
inline constexpr int exit_no_device = 3;

struct list_options {
  std::vector<std::string> labs;
  std::string format = "table";
};
int list_command(const list_options& o);

struct run_options {
  run_request request;
  std::vector<std::string> dtype_names;
  // Axis lists as typed (grammar of harness/sizes.hpp), parsed by run_command.
  std::string src_offset, dst_offset, stride, ctas, tile, table_bytes;
  std::string format = "table";  // stdout
  std::vector<std::string> outs;  // files; format from each one's extension
};
int run_command(run_options o);

struct inspect_options {
  std::string lab;
  std::string binary;  // empty: this executable
  std::string arch;    // empty: the newest SASS arch in the binary
  bool all_kernels = false;
  std::string format = "table";
};
int inspect_command(const inspect_options& o);

struct device_options {
  int device = 0;
  bool ceiling = true;
  std::string format = "table";
};
int device_command(const device_options& o);

// What still works without a GPU, printed with every exit-3 message.
extern const char* const no_gpu_hint;

}  // namespace memlab::cli
