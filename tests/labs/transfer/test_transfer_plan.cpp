// The transfer lab on the host: byte counting per direction, nccl-tests' bus-bandwidth formulas
// (doc/PERFORMANCE.md), collective buffer sizes and the reference's sources, the link rates and the one
// NVLink roof, the refusals on one GPU and between GPUs without peer access (from what the device says,
// no CUDA call), and a sweep that runs a rung once per axis it reads.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/link.hpp"
#include "harness/plan.hpp"
#include "harness/registry.hpp"
#include "harness/writers.hpp"
#include "lab_helpers.hpp"
#include "labs/transfer/transfer.hpp"

namespace memlab {
namespace labs::transfer {
const lab& table();
}
namespace {

using namespace labs::transfer;

const lab& L() { return labs::transfer::table(); }

axis_value word(std::uint64_t i) { return {{i, 0, 0}, 1}; }

case_params host_case(std::uint64_t n, direction d, host_memory m) {
  return L().make_case(dtype::u8, n, {{"direction", word(std::uint64_t(d))}, {"host_memory", word(std::uint64_t(m))}});
}

device_info one_gpu() {
  device_info d;
  d.name = "test";
  d.sm_count = 132;
  d.device_count = 1;
  d.pcie_gbps = 63.0;
  return d;
}

bool has(const std::optional<std::string>& why, std::string_view text) {
  return why && why->find(text) != std::string::npos;
}

TEST(transfer_plan, bytes_are_counted_once_per_direction) {
  const std::uint64_t gib = std::uint64_t{1} << 30;
  for (const char* rung : {"ce", "sm", "auto"}) {
    const case_plan h2d = test::plan_of(L(), rung, host_case(gib, direction::h2d, host_memory::pinned), one_gpu());
    EXPECT_EQ(h2d.bytes, gib) << rung;  // a 1 GiB host -> device copy moves 1 GiB
    ASSERT_EQ(h2d.directions.size(), 1u);
    EXPECT_EQ(h2d.directions[0].name, "h2d");
    EXPECT_EQ(h2d.roof, roof_kind::pcie);
    const case_plan d2h = test::plan_of(L(), rung, host_case(gib, direction::d2h, host_memory::pinned), one_gpu());
    EXPECT_EQ(d2h.bytes, gib);
    EXPECT_EQ(d2h.directions[0].name, "d2h");
    const case_plan bi = test::plan_of(L(), rung, host_case(gib, direction::bidir, host_memory::pinned), one_gpu());
    EXPECT_EQ(bi.bytes, 2 * gib);         // the sum of both directions ...
    ASSERT_EQ(bi.directions.size(), 2u);  // ... each reported on its own
    EXPECT_EQ(bi.directions[0].bytes, gib);
    EXPECT_EQ(bi.directions[1].bytes, gib);
  }
}

TEST(transfer_plan, only_the_device_side_is_a_harness_buffer) {
  const case_plan h2d = test::plan_of(L(), "ce", host_case(4096, direction::h2d, host_memory::pinned), one_gpu());
  EXPECT_EQ(h2d.buffers[0].bytes, 0u);     // no device source
  EXPECT_EQ(h2d.buffers[1].bytes, 4096u);  // the device destination, poisoned and guarded
  EXPECT_EQ(h2d.device_bytes(), 4096u + 256u);
}

TEST(transfer_plan, pageable_copies_are_timed_without_holding_the_stream) {
  EXPECT_TRUE(test::plan_of(L(), "ce", host_case(4096, direction::h2d, host_memory::pageable), one_gpu()).host_waits);
  EXPECT_FALSE(test::plan_of(L(), "ce", host_case(4096, direction::h2d, host_memory::pinned), one_gpu()).host_waits);
}

TEST(transfer_plan, kernels_refuse_pageable_memory) {
  for (const char* rung : {"sm", "auto"}) {
    EXPECT_TRUE(has(test::refusal(L(), rung, host_case(4096, direction::h2d, host_memory::pageable), one_gpu()),
                    "mapped into the GPU"));
    for (auto m : {host_memory::pinned, host_memory::registered, host_memory::write_combined}) {
      EXPECT_FALSE(test::refusal(L(), rung, host_case(4096, direction::bidir, m), one_gpu()));
    }
  }
  EXPECT_FALSE(test::refusal(L(), "ce", host_case(4096, direction::h2d, host_memory::pageable), one_gpu()));
}

// nccl-tests, doc/PERFORMANCE.md, "Summary": all-reduce 2(n-1)/n; reduce-scatter, all-gather and
// all-to-all (n-1)/n; broadcast and reduce 1.
TEST(transfer_plan, bus_factors_are_nccl_tests) {
  for (int n : {1, 2, 3, 4, 8, 16}) {
    const double spread = double(n - 1) / n;
    EXPECT_DOUBLE_EQ(bus_factor(collective::all_reduce, n), 2 * spread) << n;
    EXPECT_DOUBLE_EQ(bus_factor(collective::all_gather, n), spread) << n;
    EXPECT_DOUBLE_EQ(bus_factor(collective::reduce_scatter, n), spread) << n;
    EXPECT_DOUBLE_EQ(bus_factor(collective::all_to_all, n), spread) << n;
    EXPECT_DOUBLE_EQ(bus_factor(collective::broadcast, n), 1.0) << n;
  }
  EXPECT_DOUBLE_EQ(bus_factor(collective::all_reduce, 8), 1.75);  // the figure users quote for 8 GPUs
}

// S is nccl-tests' size: the all-gather's output (recvcount x n), the reduce-scatter's input.
TEST(transfer_plan, collective_buffers_follow_nccl_tests_sizes) {
  EXPECT_EQ(buffers_of(collective::all_reduce, 1024, 4).send, 1024u);
  EXPECT_EQ(buffers_of(collective::all_reduce, 1024, 4).recv, 1024u);
  EXPECT_EQ(buffers_of(collective::all_gather, 1024, 4).send, 256u);
  EXPECT_EQ(buffers_of(collective::all_gather, 1024, 4).recv, 1024u);
  EXPECT_EQ(buffers_of(collective::reduce_scatter, 1024, 4).send, 1024u);
  EXPECT_EQ(buffers_of(collective::reduce_scatter, 1024, 4).recv, 256u);
  EXPECT_EQ(buffers_of(collective::broadcast, 1024, 4).recv, 1024u);
  EXPECT_EQ(buffers_of(collective::all_to_all, 1024, 4).send, 1024u);
  EXPECT_TRUE(has(collective_refusal(collective::all_gather, 1001, 4), "multiple of the 4 ranks"));
  EXPECT_FALSE(collective_refusal(collective::all_reduce, 1001, 4));
}

TEST(transfer_plan, collective_sources) {
  // all-gather, 4 ranks of 256 B: output byte 300 is rank 1's byte 44.
  auto s = source_of(collective::all_gather, 1024, 4, 2, 300);
  EXPECT_EQ(s.first_rank, 1);
  EXPECT_EQ(s.ranks, 1);
  EXPECT_EQ(s.byte, 44u);
  // reduce-scatter: rank 2's byte 5 sums every rank's byte 2 x 256 + 5.
  s = source_of(collective::reduce_scatter, 1024, 4, 2, 5);
  EXPECT_EQ(s.ranks, 4);
  EXPECT_EQ(s.byte, 517u);
  // all-to-all: rank 3's byte 300 is rank 1's byte 3 x 256 + 44.
  s = source_of(collective::all_to_all, 1024, 4, 3, 300);
  EXPECT_EQ(s.first_rank, 1);
  EXPECT_EQ(s.byte, 812u);
  s = source_of(collective::all_reduce, 1024, 4, 3, 7);
  EXPECT_EQ(s.ranks, 4);
  EXPECT_EQ(s.byte, 7u);
}

TEST(transfer_plan, one_gpu_refuses_peers_and_multi_rank_collectives) {
  const lab& l = L();
  for (const auto& v : l.variants) {
    const rung_traits& t = v.traits_as<rung_traits>();
    if (t.where == route::peer) {
      EXPECT_TRUE(has(l.why_not(v, l.make_case(dtype::u8, 4096), one_gpu()), "need 2 GPUs")) << v.name;
    }
    if (t.where == route::collective) {
      EXPECT_TRUE(
          has(l.why_not(v, l.make_case(dtype::u8, 4096, {{"gpus", word(2)}}), one_gpu()), "--gpus 2 needs 2 GPUs"))
          << v.name;
      // One rank runs on one GPU (NCCL's one-rank collectives).
      EXPECT_FALSE(l.why_not(v, l.make_case(dtype::u8, 4096, {{"gpus", word(1)}}), one_gpu())) << v.name;
      const case_plan p = l.plan(v, l.make_case(dtype::u8, 4096, {{"gpus", word(8)}}), one_gpu());
      EXPECT_EQ(p.bytes, 4096u);  // S: algbw = S / t
      EXPECT_DOUBLE_EQ(p.bus_factor, bus_factor(t.op, 8));
    }
  }
  device_info two = one_gpu();
  two.device_count = 2;
  // Peer copies are held to NVLink where it is up, else to PCIe.
  EXPECT_EQ(l.plan(test::variant_of(l, "peer_ce"), l.make_case(dtype::u8, 64), two).roof, roof_kind::pcie);
  two.nvlink_gbps = 450;
  two.nvlink_link_gbps = 25;
  // Links, but none to this peer (no NVSwitch, no link to its bus id): PCIe.
  EXPECT_EQ(l.plan(test::variant_of(l, "peer_ce"), l.make_case(dtype::u8, 64), two).roof, roof_kind::pcie);
  two.nvlink_switch = true;  // through NVSwitch: every GPU at the device's full rate
  const case_plan switched = l.plan(test::variant_of(l, "peer_ce"), l.make_case(dtype::u8, 64), two);
  EXPECT_EQ(switched.roof, roof_kind::nvlink);
  EXPECT_EQ(switched.link_gbps, 0.0);  // the device's own rate
  EXPECT_TRUE(has(l.why_not(test::variant_of(l, "peer_ce"), l.make_case(dtype::u8, 64, {{"peer", word(0)}}), two),
                  "is this GPU"));
  EXPECT_TRUE(
      has(l.why_not(test::variant_of(l, "peer_ce"), l.make_case(dtype::u8, 64, {{"peer", word(5)}}), two), "no GPU 5"));
}

TEST(transfer_plan, rungs_run_once_per_axis_they_read) {
  run_request req;
  req.labs = {"transfer"};
  req.sizes = "4KiB";
  req.axes = {{"direction", "all"}, {"host_memory", "all"}, {"gpus", "1,2"}};
  const auto cases = plan_cases(req, all_labs(), missing_labs());
  std::map<std::string, int> per_rung;
  for (const auto& c : cases) ++per_rung[std::string(c.v->name)];
  EXPECT_EQ(per_rung["ce"], 3 * 4);   // every direction x host memory, once per peer and gpus
  EXPECT_EQ(per_rung["peer_ce"], 1);  // no direction, host memory or gpus
  if (per_rung.count("nccl_all_reduce")) {
    EXPECT_EQ(per_rung["nccl_all_reduce"], 2 * 2);  // gpus x placement only
  }
}

TEST(transfer_plan, words_axis) {
  const axis& a = *L().find_axis("direction");
  EXPECT_EQ(parse_axis(a, "all").size(), 3u);
  EXPECT_EQ(parse_axis(a, "bidir,h2d")[0][0], 2u);
  EXPECT_THROW(parse_axis(a, "h2x"), std::invalid_argument);
  const auto params = L().params(host_case(64, direction::d2h, host_memory::write_combined));
  bool saw = false;
  for (const auto& p : params) {
    if (p.name == "host_memory") {
      EXPECT_EQ(to_string(p.value), "write_combined");
      saw = true;
    }
  }
  EXPECT_TRUE(saw);
}

TEST(transfer_plan, link_rates) {
  EXPECT_NEAR(pcie_lane_gbps(5) * 16, 63.015, 1e-3);  // Gen5 x16: 64 GB/s before 128b/130b
  EXPECT_NEAR(pcie_lane_gbps(4) * 16, 31.508, 1e-3);
  EXPECT_NEAR(pcie_lane_gbps(3) * 16, 15.754, 1e-3);
  EXPECT_DOUBLE_EQ(pcie_lane_gbps(1), 0.25);
  EXPECT_EQ(pcie_gen_of_speed("32.0 GT/s PCIe"), 5);
  EXPECT_EQ(pcie_gen_of_speed("2.5 GT/s PCIe"), 1);
  EXPECT_EQ(pcie_gen_of_speed("16 GT/s"), 4);
  EXPECT_FALSE(pcie_gen_of_speed("Unknown"));
  EXPECT_DOUBLE_EQ(nvlink_link_gbps(6, 9) * 18, 450.0);  // H100 SXM: 18 NVLink 4.0 links
  EXPECT_DOUBLE_EQ(nvlink_link_gbps(7, 9), 25.0);        // an H100 reported as NVLink 5.0
  EXPECT_DOUBLE_EQ(nvlink_link_gbps(7, 10), 50.0);       // B200
  EXPECT_DOUBLE_EQ(nvlink_link_gbps(0, 9), 0.0);
}

TEST(transfer_plan, link_roofs_are_per_direction) {
  device_info d = one_gpu();
  result r;
  r.bytes = 2'000'000'000;
  r.cold.median_ms = 50;  // 40 GB/s in all
  r.directions = {{"h2d", 1'000'000'000, 0}, {"d2h", 1'000'000'000, 0}};
  derive(r, roof_kind::pcie, d, 0);
  EXPECT_DOUBLE_EQ(r.roof.value, 2 * 63.0);  // both directions at once: twice the link
  EXPECT_NEAR(r.directions[0].gbps, 20.0, 1e-9);
  EXPECT_NEAR(r.pct_roof, 100.0 * 40 / 126, 1e-9);
  r.directions.pop_back();
  derive(r, roof_kind::pcie, d, 0);
  EXPECT_DOUBLE_EQ(r.roof.value, 63.0);
  result c;
  c.bytes = 1'000'000'000;
  c.cold.median_ms = 10;
  c.bus_factor = 1.75;
  derive(c, roof_kind::nvlink, d, 0);
  EXPECT_NEAR(c.busbw_gbps, 175.0, 1e-9);  // algbw 100 x 2(8-1)/8
}

TEST(transfer_plan, sendrecv_is_a_ring) {
  EXPECT_DOUBLE_EQ(bus_factor(collective::send_recv, 4), 1.0);  // nccl-tests' sendrecv_perf: busbw = algbw
  EXPECT_EQ(buffers_of(collective::send_recv, 1024, 4).send, 1024u);
  EXPECT_EQ(buffers_of(collective::send_recv, 1024, 4).recv, 1024u);
  for (int r = 0; r < 4; ++r) {
    const auto s = source_of(collective::send_recv, 1024, 4, r, 77);
    EXPECT_EQ(s.first_rank, (r + 3) % 4);  // from the previous rank ...
    EXPECT_EQ(s.ranks, 1);
    EXPECT_EQ(s.byte, 77u);  // ... byte for byte
  }
}

TEST(transfer_plan, in_place_follows_nccl_tests_offsets) {
  // nccl-tests' getCollByteCount: all-gather sends its share from its place in the output;
  // reduce-scatter receives into its place in the input; the others use the one buffer from 0.
  const auto ag = buffers_of(collective::all_gather, 1024, 4);
  EXPECT_EQ(ag.send_step, 256u);
  EXPECT_EQ(ag.recv_step, 0u);
  EXPECT_EQ(ag.in_place_bytes(), 1024u);
  const auto rs = buffers_of(collective::reduce_scatter, 1024, 4);
  EXPECT_EQ(rs.send_step, 0u);
  EXPECT_EQ(rs.recv_step, 256u);
  EXPECT_EQ(rs.in_place_bytes(), 1024u);
  for (auto op : {collective::all_reduce, collective::broadcast}) {
    EXPECT_EQ(buffers_of(op, 1024, 4).send_step, 0u);
    EXPECT_EQ(buffers_of(op, 1024, 4).recv_step, 0u);
  }
  // In place, a collective plans one buffer: input and output at once.
  device_info four = one_gpu();
  four.device_count = 4;
  const lab& l = L();
  const case_plan p = l.plan(test::variant_of(l, "nccl_all_gather"),
                             l.make_case(dtype::u8, 1024, {{"gpus", word(4)}, {"placement", word(1)}}), four);
  ASSERT_GE(p.buffers.size(), 1u);
  EXPECT_EQ(p.buffers[0].bytes, 1024u);
  EXPECT_EQ(p.buffers[0].role, buffer_role::input);
  // NCCL defines no in-place all-to-all or send/receive: refused, with the reason.
  for (const char* rung : {"nccl_all_to_all", "nccl_sendrecv"}) {
    EXPECT_TRUE(has(l.why_not(test::variant_of(l, rung),
                              l.make_case(dtype::u8, 1024, {{"gpus", word(4)}, {"placement", word(1)}}), four),
                    "no in-place form"))
        << rung;
    EXPECT_FALSE(l.why_not(test::variant_of(l, rung), l.make_case(dtype::u8, 1024, {{"gpus", word(4)}}), four)) << rung;
  }
}

TEST(transfer_plan, collectives_run_on_every_rank_and_by_nccl_tests_method) {
  for (const auto& v : L().variants) {
    const bool collective = v.traits_as<rung_traits>().where == route::collective;
    EXPECT_EQ(v.all_ranks, collective) << v.name;  // only collectives span the ranks of a distributed run
    EXPECT_EQ(v.loop.has_value(), collective) << v.name;
  }
  EXPECT_EQ(L().ranks_axis, "gpus");
}

TEST(transfer_plan, a_distributed_run_sets_the_ranks_axis) {
  run_request req;
  req.labs = {"transfer"};
  req.variants = {"nccl_all_reduce"};
  req.sizes = "1MiB";
  req.world_size = 4;
  const auto cases = plan_cases(req, all_labs(), missing_labs());
  for (const auto& c : cases) EXPECT_EQ(c.p[*L().find_axis("gpus")], 4u);
  req.axes = {{"gpus", "2"}};
  try {
    (void)plan_cases(req, all_labs(), missing_labs());
    ADD_FAILURE() << "--gpus 2 in a world of 4 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a distributed run has 4 ranks"), std::string::npos) << e.what();
  }
  req.axes = {{"gpus", "4"}};  // the same as the world: fine
  EXPECT_FALSE(plan_cases(req, all_labs(), missing_labs()).empty());
  // Rank 1 runs on its GPU 1, which is the peer axis's default: the collectives, which do not read
  // that axis, are planned all the same.
  req.axes.clear();
  req.devices = {1};
  req.device_count = 4;
  EXPECT_EQ(plan_cases(req, all_labs(), missing_labs()).size(), 2u);  // out of place, in place
}

TEST(transfer_plan, every_ordered_pair_once) {
  run_request req;
  req.labs = {"transfer"};
  req.variants = {"peer_ce", "peer_sm_read"};
  req.sizes = "4KiB";
  req.devices = {0, 1, 2, 3};
  req.device_count = 4;
  req.axes = {{"peer", "all"}};
  const auto cases = plan_cases(req, all_labs(), missing_labs());
  std::map<std::pair<int, std::uint64_t>, int> pairs;
  for (const auto& c : cases) {
    EXPECT_NE(static_cast<std::uint64_t>(c.device), c.p[*L().find_axis("peer")]);  // never the GPU itself
    ++pairs[{c.device, c.p[*L().find_axis("peer")]}];
  }
  EXPECT_EQ(pairs.size(), 12u);                                                              // 4 x 3 ordered pairs
  for (const auto& [pair, n] : pairs) EXPECT_EQ(n, 2) << pair.first << "->" << pair.second;  // one per rung
}

TEST(transfer_plan, latency_probes) {
  device_info two = one_gpu();
  two.device_count = 2;
  const lab& l = L();
  const case_plan chase = l.plan(test::variant_of(l, "peer_chase"), l.make_case(dtype::u8, 1 << 20), two);
  EXPECT_EQ(chase.bytes, 8u * ((1u << 20) / 128));  // a node every 128 bytes, 8 bytes a load
  EXPECT_EQ(chase.policy.threads, 1);
  const case_plan big = l.plan(test::variant_of(l, "peer_chase"), l.make_case(dtype::u8, 1ull << 32), two);
  EXPECT_EQ(big.bytes, 8u << 14);  // hops capped: one launch stays short
  EXPECT_TRUE(has(l.why_not(test::variant_of(l, "peer_chase"), l.make_case(dtype::u8, 4), two), "8-byte node"));
  const case_plan pp = l.plan(test::variant_of(l, "peer_pingpong"), l.make_case(dtype::u8, 4096), two);
  EXPECT_EQ(pp.bytes, 8u * 2 * 1024);  // 1024 rounds, two stores each
}

// Planning and refusals ask the driver nothing: which GPUs this one reaches by peer access, and their bus
// ids, come with the device (harness/device.cpp reads them when it opens the GPU).
TEST(transfer_plan, peer_access_and_links_come_with_the_device) {
  device_info two = one_gpu();
  two.device_count = 2;
  two.bus_ids = {"0000:1B:00.0", "0000:2C:00.0"};
  two.peer_access = {false, false};
  const lab& l = L();
  EXPECT_TRUE(
      has(l.why_not(test::variant_of(l, "peer_ce"), l.make_case(dtype::u8, 64), two), "cannot access GPU 1's memory"));
  two.peer_access = {false, true};
  EXPECT_FALSE(l.why_not(test::variant_of(l, "peer_ce"), l.make_case(dtype::u8, 64), two));
  // Two NVLinks straight to GPU 1 (no NVSwitch): the pair's roof is those two links' data rate.
  two.nvlink_links = 18;
  two.nvlink_link_gbps = 25;
  two.nvlink_gbps = 450;
  two.nvlink_gpus = {"0000:2C:00.0", "0000:2C:00.0", "0000:3D:00.0"};
  const case_plan p = l.plan(test::variant_of(l, "peer_ce"), l.make_case(dtype::u8, 64), two);
  EXPECT_EQ(p.roof, roof_kind::nvlink);
  EXPECT_DOUBLE_EQ(p.link_gbps, 50.0);
}

// One NVLink roof: a link's data rate (25 GB/s on NVLink 4: 450 GB/s a direction for an H100's 18), whatever
// the driver reports; NVML's line rate (26.562) is recorded beside it, never used as the roof.
TEST(transfer_plan, the_nvlink_roof_is_the_data_rate) {
  device_info h100 = one_gpu();
  h100.device_count = 8;
  h100.nvlink_links = 18;
  h100.nvlink_link_gbps = nvlink_link_gbps(6, 9);  // NVLink 4.0
  h100.nvlink_gbps = 18 * h100.nvlink_link_gbps;
  h100.nvlink_rate_from = "NVLink version";
  h100.nvlink_line_gbps = 26.562;
  h100.nvlink_switch = true;
  result r;
  r.bytes = 400'000'000'000ull;
  r.cold.median_ms = 1000;  // 400 GB/s
  r.directions = {{"0->1", r.bytes, 0}};
  derive(r, roof_kind::nvlink, h100, 0);
  EXPECT_DOUBLE_EQ(r.roof.value, 450.0);
  EXPECT_NEAR(r.pct_roof, 100.0 * 400 / 450, 1e-9);
  run_report rep;
  rep.device = h100;
  const auto j = to_json(rep);
  EXPECT_DOUBLE_EQ(j["device"]["link"]["nvlink_gbps"].get<double>(), 450.0);
  EXPECT_DOUBLE_EQ(j["device"]["link"]["nvlink_link_gbps"].get<double>(), 25.0);
  EXPECT_DOUBLE_EQ(j["device"]["link"]["nvlink_line_gbps"].get<double>(), 26.562);
  EXPECT_EQ(j["device"]["link"]["nvlink_rate_from"].get<std::string>(), "NVLink version");
  // The roof's definition, as `memlab list` and the results' header give it.
  for (const roof_rule& rule : roof_rules()) {
    if (rule.kind != roof_kind::nvlink) continue;
    EXPECT_NE(std::string(rule.derived).find("data rate"), std::string::npos) << rule.derived;
    EXPECT_NE(std::string(rule.derived).find("26.562"), std::string::npos) << rule.derived;
  }
}

// Run alone by the ctest transfer_nccl_unloadable (MEMLAB_NCCL_LIBRARY names a library that does not exist):
// every collective is refused with the loader's reason, after its own refusals; every other rung plans.
TEST(transfer_plan, DISABLED_collectives_are_refused_without_nccl) {
  ASSERT_NE(std::getenv("MEMLAB_NCCL_LIBRARY"), nullptr) << "run by the ctest transfer_nccl_unloadable";
  device_info four = one_gpu();
  four.device_count = 4;
  const lab& l = L();
  int collectives = 0;
  for (const auto& v : l.variants) {
    if (v.traits_as<rung_traits>().where != route::collective) continue;
    ++collectives;
    const auto why = l.why_not(v, l.make_case(dtype::u8, 4096, {{"gpus", word(4)}}), four);
    EXPECT_TRUE(has(why, "NCCL is not available: cannot load libmemlab_no_such_nccl.so.2")) << v.name;
    // The lab's own refusals come first: they need no library.
    EXPECT_TRUE(has(l.why_not(v, l.make_case(dtype::u8, 4096, {{"gpus", word(8)}}), four), "--gpus 8 needs 8 GPUs"));
  }
  EXPECT_EQ(collectives, 6);
  EXPECT_FALSE(test::refusal(L(), "ce", host_case(4096, direction::h2d, host_memory::pinned), one_gpu()));
}

}  // namespace
}  // namespace memlab
