// Every copy variant x dtype x edge size x alignment, on the GPU, compared byte for byte with the
// CPU reference (and the poisoned guard after the output checked for stray stores).
// Without a GPU every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "harness/device.hpp"
#include "harness/lab.hpp"
#include "lab_helpers.hpp"
#include "labs/copy/copy.hpp"

namespace memlab {
namespace {

const std::vector<std::uint64_t> edge_sizes{0, 1, 15, 16, 17, 127, 128, 129, 4095, 4096, 4097, 100000, (1u << 24) + 7};

// A copy case: n elements of `type`, the source `so` and the destination `doff` bytes off.
case_params copy_case(dtype type, std::uint64_t n, std::uint64_t so, std::uint64_t doff) {
  return labs::copy::table().make_case(
      type, n, {{"src_offset", axis_value{{so, 0, 0}, 1}}, {"dst_offset", axis_value{{doff, 0, 0}, 1}}});
}

struct copy_gpu : test::gpu_test<::testing::TestWithParam<std::tuple<std::string, dtype>>> {
  // vec32 needs sm_100 or newer. On an older device every case of it must be refused with that
  // reason (asserted here), never launched; the test then has nothing more to run.
  bool refused_on_this_device(const std::string& name, dtype type) {
    if (name != "vec32" || dev.cc_major >= 10) return false;
    const lab& l = labs::copy::table();
    for (const std::uint64_t n : {std::uint64_t{0}, std::uint64_t{4097}, std::uint64_t{1} << 20}) {
      const auto why = test::refusal(l, name, l.make_case(type, n), dev);
      EXPECT_TRUE(why && why->find("sm_100 or newer") != std::string::npos) << (why ? *why : "ran on " + dev.name);
    }
    return true;
  }
};

TEST_P(copy_gpu, edge_sizes_and_alignments) {
  const auto& [name, type] = GetParam();
  if (refused_on_this_device(name, type)) return;
  const lab& l = labs::copy::table();
  const variant& v = test::variant_of(l, name);
  const std::uint64_t es = size_of(type);
  // Aligned; each pointer one element off; both one element off; both 16 bytes off (aligned again).
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> offsets{{0, 0}, {es, 0}, {0, es}, {es, es}, {16, 16}};
  int ran = 0;
  for (const auto& [so, doff] : offsets) {
    for (const std::uint64_t n : edge_sizes) {
      const case_params p = copy_case(type, n, so, doff);
      SCOPED_TRACE("n=" + std::to_string(n) + " src+" + std::to_string(so) + " dst+" + std::to_string(doff));
      if (const auto why_not = l.unsupported(v, p, dev)) {
        // Only the vector variants may refuse, and only for pointers off their vector width.
        const int align = v.needs.alignment;
        EXPECT_GT(align, 0) << name << " refused an element-aligned case: " << *why_not;
        if (align > 0) {
          EXPECT_TRUE(so % static_cast<std::uint64_t>(align) != 0 || doff % static_cast<std::uint64_t>(align) != 0)
              << *why_not;
        }
        continue;
      }
      auto c = test::prepare(l, name, p, dev);
      ASSERT_EQ(test::run_and_verify(c), "");
      ++ran;
    }
  }
  EXPECT_GE(ran, static_cast<int>(edge_sizes.size())) << "every variant must run at least the aligned sizes";
}

// One prepared case, reset and run twice: each run verifies against its own fresh input
// (that each reset draws a new seed is asserted by fill_seed.next_seed_never_repeats).
TEST_P(copy_gpu, verifies_again_after_each_reset) {
  const auto& [name, type] = GetParam();
  if (refused_on_this_device(name, type)) return;
  const lab& l = labs::copy::table();
  auto c = test::prepare(l, name, copy_case(type, 4097, 0, 0), dev);
  for (int round = 0; round < 2; ++round) ASSERT_EQ(test::run_and_verify(c), "") << "round " << round;
}

// Poison without a launch: the checker must see the unwritten output (the check is not vacuous).
TEST_P(copy_gpu, checker_catches_an_unwritten_output) {
  const auto& [name, type] = GetParam();
  // Nothing is launched, so a variant this device refuses (vec32) is checked too.
  const lab& l = labs::copy::table();
  const variant& v = test::variant_of(l, name);
  const case_params p = copy_case(type, 129, 0, 0);
  auto c = prepare_case(l, v, p, dev, l.plan(v, p, dev));
  reset(c);
  const std::string diff = c.l->verify(c);
  EXPECT_NE(diff.find("never written"), std::string::npos) << diff;
}

INSTANTIATE_TEST_SUITE_P(all, copy_gpu,
                         ::testing::Combine(::testing::ValuesIn(test::variant_names(labs::copy::table())),
                                            ::testing::ValuesIn(all_dtypes().begin(), all_dtypes().end())),
                         test::variant_dtype_name{});

}  // namespace
}  // namespace memlab
