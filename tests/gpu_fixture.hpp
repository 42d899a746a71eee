// The GPU tests' shared fixture: device 0 opened once per suite; without a usable GPU every test
// reports SKIPPED with the reason (ctest maps that to "skipped", never to "passed").
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "harness/device.hpp"

namespace memlab::test {

template <class Base = ::testing::Test>
struct gpu_test : Base {
  static void SetUpTestSuite() {
    try {
      dev = open_device(0);
      have_gpu = true;
    } catch (const no_device_error& e) {
      no_gpu_reason = e.what();
    }
  }
  void SetUp() override {
    if (!have_gpu) GTEST_SKIP() << no_gpu_reason;
  }
  static inline bool have_gpu = false;
  static inline std::string no_gpu_reason;
  static inline device_info dev;
};

// The sizes every lab's GPU tests sweep (STYLE.md, habit 9), in elements.
inline const std::vector<std::uint64_t> edge_sizes{0, 1, 15, 16, 17, 127, 128, 129, 4095, 4096, 4097, 100000};

}  // namespace memlab::test
