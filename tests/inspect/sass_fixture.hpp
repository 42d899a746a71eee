// The SASS proof's shared fixture: the memlab binary read once per SASS architecture (all labs at
// once), and helpers to ask a kernel's histogram what widths it uses. Each lab's SASS test file
// includes this; all of them link into one memlab_sass_tests process.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <stdexcept>
#include <string>

#include "harness/lab.hpp"
#include "inspect/inspect.hpp"

namespace memlab::inspect {

// Without cuobjdump (or the nvdisasm it runs) the proof cannot be read: skip locally and say why,
// but fail under CI, where tools/setup.sh must have installed both.
struct sass_proof : ::testing::Test {
  static void SetUpTestSuite() {
    if (!reports.empty() || !missing.empty()) return;  // read already, for another lab's suite
    if (find_cuobjdump().empty()) {
      missing = "cuobjdump not found (pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)";
      return;
    }
    try {
      // One read per architecture, every lab at once, shared by every test of every lab.
      const auto first = inspect_binary(MEMLAB_BINARY, kernel_labels(), "", "", false);
      for (const auto& arch : first.archs) {
        if (arch.rfind("sm_", 0) != 0) continue;
        reports.emplace(arch, inspect_binary(MEMLAB_BINARY, kernel_labels(), "", arch, false));
      }
    } catch (const std::runtime_error& e) {
      missing = e.what();
    }
  }
  void SetUp() override {
    if (missing.empty()) return;
    if (std::getenv("CI") != nullptr) FAIL() << "CI must read the SASS: " << missing;
    GTEST_SKIP() << missing;
  }
  static inline std::map<std::string, inspect_report> reports;
  static inline std::string missing;
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
