// Every transfer rung on the GPU, verified byte for byte (the guard after every destination, host
// or device, checked for stray stores): host <-> device in each direction and host memory kind at
// edge sizes; peers and multi-rank collectives where the machine has the GPUs, else their refusal;
// NCCL's one-rank collectives on one GPU. Without a GPU every test here reports SKIPPED.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gpu_fixture.hpp"
#include "lab_helpers.hpp"
#include "labs/transfer/transfer.hpp"

namespace memlab {
namespace labs::transfer {
const lab& table();
}
namespace {

using namespace labs::transfer;

const std::vector<std::uint64_t> sizes{0, 1, 15, 16, 17, 4095, 4096, 4097, 100000, (1u << 22) + 7};

axis_value word(std::uint64_t i) { return {{i, 0, 0}, 1}; }

struct transfer_gpu : test::gpu_test<::testing::TestWithParam<std::string>> {};

TEST_P(transfer_gpu, verified_or_refused) {
  const lab& l = labs::transfer::table();
  const variant& v = test::variant_of(l, GetParam());
  const rung_traits& t = v.traits_as<rung_traits>();
  int ran = 0;
  const auto run = [&](const case_params& p, const std::string& what) {
    SCOPED_TRACE(what);
    if (const auto why = l.why_not(v, p, dev)) {
      if (t.where == route::peer && !(t.probe == peer_probe::chase && p.n < 8)) {
        EXPECT_LT(dev.device_count, 2) << *why;  // refused only on one GPU (a chase: or under one node) ...
      }
      return;
    }
    case_ctx c = test::prepare(l, GetParam(), p, dev);
    EXPECT_EQ(test::run_and_verify(c), "");
    ++ran;
  };
  switch (t.where) {
    case route::host:
      for (std::uint64_t d = 0; d < 3; ++d)
        for (std::uint64_t m = 0; m < 4; ++m)
          for (const std::uint64_t n : sizes)
            run(l.make_case(dtype::u8, n, {{"direction", word(d)}, {"host_memory", word(m)}}),
                "direction " + std::to_string(d) + " memory " + std::to_string(m) + " n=" + std::to_string(n));
      EXPECT_GT(ran, 0);
      break;
    case route::peer:
      for (const std::uint64_t n : sizes)
        run(l.make_case(dtype::u8, n, {{"peer", word(dev.ordinal == 0 ? 1 : 0)}}), "n=" + std::to_string(n));
      if (dev.device_count < 2) {
        EXPECT_EQ(ran, 0);  // ... and always there
      }
      break;
    case route::collective:
      for (std::uint64_t g = 1; g <= static_cast<std::uint64_t>(std::min(dev.device_count, 4)); ++g)
        for (std::uint64_t in_place = 0; in_place < 2; ++in_place)
          for (const std::uint64_t n : {8ull, 4096ull, 1000000ull, (1ull << 22) + 8})
            run(l.make_case(dtype::u8, n, {{"gpus", word(g)}, {"placement", word(in_place)}}),
                "gpus " + std::to_string(g) + (in_place ? " in place" : " out of place") + " n=" + std::to_string(n));
      EXPECT_GT(ran, 0);  // one rank runs on one GPU
      break;
  }
}

INSTANTIATE_TEST_SUITE_P(rungs, transfer_gpu, ::testing::ValuesIn(test::variant_names(labs::transfer::table())),
                         [](const ::testing::TestParamInfo<std::string>& rung) { return rung.param; });

}  // namespace
}  // namespace memlab
