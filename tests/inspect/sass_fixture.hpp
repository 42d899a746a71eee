// The SASS proof's shared state: the memlab binary read once (inspect_every_arch: one cuobjdump per
// SASS architecture, run side by side, or the one arch sass_arch() names; all labs at once), and helpers to ask a kernel's histogram
// what widths it uses. Each lab's SASS test file includes this; all of them link into one
// memlab_sass_tests process, whose main() (test_sass_binary.cpp) reads the binary before any test
// runs:
//   - cuobjdump missing and not under CI: the process prints why and exits 77 (ctest: skipped);
//   - anything else that keeps the proof from being read (cuobjdump missing under CI, a tool or
//     parser failure, no kernels): the process fails.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cli/labels.hpp"
#include "harness/registry.hpp"
#include "inspect/inspect.hpp"

namespace memlab::inspect {

// The one SASS arch this process reads ("sm_90"; MEMLAB_SASS_ARCH, set by ctest: one ctest per arch,
// each one cuobjdump), or "" for every arch the binary carries (one process, one cuobjdump per arch side
// by side). A test about one arch only is named "..._on_sm_NNN", and the other arches' ctests filter
// it out.
inline std::string sass_arch() {
  const char* a = std::getenv("MEMLAB_SASS_ARCH");
  return a == nullptr ? std::string() : std::string(a);
}

// The labs whose cubins this process reads (MEMLAB_SASS_LABS, comma-separated, set by ctest: each arch's tests run
// as two processes, each reading its labs' cubins), or none for every lab. The tests of a lab not read are left
// out by the ctest's filter; the tests about every lab look at these labs alone.
inline std::vector<std::string> sass_labs() {
  std::vector<std::string> labs;
  const char* a = std::getenv("MEMLAB_SASS_LABS");
  for (std::string_view s = a == nullptr ? "" : a; !s.empty();) {
    const std::size_t end = std::min(s.find(','), s.size());
    if (end > 0) labs.emplace_back(s.substr(0, end));
    s.remove_prefix(std::min(end + 1, s.size()));
  }
  return labs;
}

inline bool lab_is_read(std::string_view lab) {
  static const std::vector<std::string> labs = sass_labs();
  return labs.empty() || std::find(labs.begin(), labs.end(), lab) != labs.end();
}

struct sass_proof : ::testing::Test {
  // arch ("sm_90") -> every labelled kernel of every lab (sass_arch(): that arch alone).
  static inline std::map<std::string, inspect_report> reports;
};

// The first kernel of `lab`'s `variant` for `dtype` ("" matches a kernel whose name carries none).
inline const labeled_kernel* find(const inspect_report& r, std::string_view lab, std::string_view variant,
                                  std::string_view dtype) {
  for (const auto& k : r.kernels)
    if (k.lab == lab && k.variant == variant && k.dtype == dtype) return &k;
  return nullptr;
}

// Global-memory instructions of one direction, by width: {width_bits: count of instructions}.
inline std::map<int, int> global_widths(const labeled_kernel& k, mem_dir dir) {
  std::map<int, int> out;
  for (const auto& h : k.histogram)
    if (h.op.space == mem_space::global && h.op.dir == dir) out[h.op.width_bits] += h.count;
  return out;
}

inline int count_space(const labeled_kernel& k, mem_space s) {
  int n = 0;
  for (const auto& h : k.histogram) n += h.op.space == s ? h.count : 0;
  return n;
}

// Shared-memory instructions of one direction, by width.
inline std::map<int, int> shared_widths(const labeled_kernel& k, mem_dir dir) {
  std::map<int, int> out;
  for (const auto& h : k.histogram)
    if (h.op.space == mem_space::shared && h.op.dir == dir) out[h.op.width_bits] += h.count;
  return out;
}

}  // namespace memlab::inspect
