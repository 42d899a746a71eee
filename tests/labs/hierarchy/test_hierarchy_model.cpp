// The hierarchy lab on the host: the chain is one cycle through every node, walks and walker
// starts, the plans' byte counts, refusals and per-case roofs, and the figures made from samples.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <variant>

#include "lab_helpers.hpp"
#include "labs/hierarchy/hierarchy.hpp"

namespace memlab::labs::hierarchy {
const lab& table();
namespace {

device_info h100() {
  device_info d;
  d.name = "H100 (host model)";
  d.cc_major = 9;
  d.sm_count = 132;
  d.max_threads_per_sm = 2048;
  d.smem_per_block_optin = 232448;
  d.l2_bytes = 50u << 20;
  return d;
}

case_params hcase(std::uint64_t bytes, std::initializer_list<std::pair<std::string_view, axis_value>> v = {}) {
  return table().make_case(dtype::f32, bytes / 4, v);
}
axis_value num(std::uint64_t x) { return axis_value{{x, 0, 0}, 1}; }
// A rung's traits, as the lab's table gives them.
const rung_traits& rung(std::string_view name) { return test::traits_of<rung_traits>(table(), name); }

TEST(hierarchy_chain, random_chain_is_one_cycle_through_every_node) {
  for (std::uint64_t nodes : {2u, 3u, 4u, 5u, 17u, 128u, 1000u, 4097u, 1u << 20}) {
    SCOPED_TRACE(nodes);
    const auto next = make_chain(nodes, chase_order::random, 42 + nodes);
    ASSERT_EQ(next.size(), nodes);
    EXPECT_TRUE(is_single_cycle(next));
    std::set<std::uint64_t> seen(next.begin(), next.end());
    EXPECT_EQ(seen.size(), nodes) << "a permutation";
    for (std::uint64_t i = 0; i < nodes; ++i) EXPECT_NE(next[i], i) << "no node points to itself";
  }
}

TEST(hierarchy_chain, sequential_chain_steps_by_one_and_wraps) {
  const auto next = make_chain(10, chase_order::sequential, 1);
  EXPECT_TRUE(is_single_cycle(next));
  EXPECT_EQ(next[0], 1u);
  EXPECT_EQ(next[9], 0u);
  EXPECT_EQ(walk(next, 3, 25), 8u);
}

TEST(hierarchy_chain, seeds_give_different_cycles_and_the_detector_rejects_two_loops) {
  EXPECT_NE(make_chain(1000, chase_order::random, 1), make_chain(1000, chase_order::random, 2));
  std::vector<std::uint64_t> two_loops{1, 0, 3, 2};
  EXPECT_FALSE(is_single_cycle(two_loops));
  std::vector<std::uint64_t> out_of_range{1, 7};
  EXPECT_FALSE(is_single_cycle(out_of_range));
}

TEST(hierarchy_chain, a_walk_of_the_cycle_length_returns_home_and_walkers_start_apart) {
  const auto next = make_chain(5000, chase_order::random, 7);
  EXPECT_EQ(walk(next, 123, 5000), 123u);
  const chase_plan p = plan_chase(5000 * 128, 128, 4096, true, 132);
  ASSERT_EQ(p.walkers, 132u);
  std::set<std::uint64_t> starts;
  const auto all = walker_starts(next, p);
  ASSERT_EQ(all.size(), 132u);
  for (std::uint64_t w = 0; w < p.walkers; ++w) {
    EXPECT_EQ(all[w], walker_start(next, p, w)) << w;
    starts.insert(all[w]);
  }
  EXPECT_EQ(starts.size(), 132u);
}

TEST(hierarchy_plan, chase_warms_the_whole_short_cycle_and_caps_the_long_one) {
  const chase_plan small = plan_chase(32 << 10, 128, 4096, false, 132);
  EXPECT_EQ(small.nodes, 256u);
  EXPECT_EQ(small.warmup, 256u);
  EXPECT_EQ(small.samples, max_samples);
  EXPECT_EQ(small.walkers, 1u);
  const chase_plan big = plan_chase(std::uint64_t{4} << 30, 128, 100, false, 132);
  EXPECT_EQ(big.nodes, std::uint64_t{1} << 25);
  EXPECT_EQ(big.warmup, warmup_cap);
  EXPECT_EQ(big.samples, 100u);
}

TEST(hierarchy_plan, stream_bytes_are_passes_times_arrays_times_size) {
  const rung_traits &dot = rung("dot"), &triad = rung("triad"), &all = rung("dot_l2_all");
  for (std::uint64_t bytes : {std::uint64_t{16}, std::uint64_t{4096}, std::uint64_t{1} << 20, std::uint64_t{1} << 30,
                              std::uint64_t{3} << 30}) {
    SCOPED_TRACE(bytes);
    const auto d = plan_bandwidth(dot, bytes, 132, 4, 4);
    EXPECT_EQ(d.vectors, bytes / 16);
    EXPECT_LE(d.grid, std::min<std::uint64_t>(528, std::max<std::uint64_t>(1, d.vectors / 1024)));
    EXPECT_GE(d.grid, 1u);
    EXPECT_EQ(d.sms_busy, std::min<std::uint64_t>(d.grid, 132));
    if (d.grid > 1) {
      EXPECT_GE(d.slice, 1024u) << "every CTA gets a full tile of 256 threads x 4 vectors";
    }
    EXPECT_GE(d.slice * d.grid, d.vectors) << "every vector belongs to a CTA";
    EXPECT_EQ(d.bytes, std::uint64_t{2} * bytes * d.passes);
    EXPECT_GE(d.bytes, std::min<std::uint64_t>(bandwidth_target_bytes, d.bytes));
    EXPECT_EQ(d.flops, 2 * (bytes / 4) * d.passes);
    const auto t = plan_bandwidth(triad, bytes, 132, 4, 4);
    EXPECT_EQ(t.bytes, std::uint64_t{3} * bytes * t.passes);
    const auto a = plan_bandwidth(all, bytes, 132, 4, 4);
    EXPECT_EQ(a.slice, a.vectors);
    EXPECT_EQ(a.bytes, std::uint64_t{2} * bytes * a.grid * a.passes);
  }
  EXPECT_EQ(plan_bandwidth(dot, std::uint64_t{1} << 30, 132, 4, 4).passes, 1u) << "1 GiB arrays: one pass";
  EXPECT_EQ(plan_bandwidth(dot, std::uint64_t{1} << 30, 132, 4, 4).grid, 528u) << "big arrays: every SM, 4 CTAs each";
  EXPECT_EQ(bytes_in_flight_per_sm(dot, 256, 4, 4), 4u * 256 * 4 * 16 * 2);
  const auto once = plan_bandwidth(triad, 4096, 132, 4, 4, 1);
  EXPECT_EQ(once.passes, 1u) << "--passes 1 (the sanitizer runs)";
  EXPECT_EQ(once.bytes, 3u * 4096);
}

// BabelStream's operations as the stream table states them: the arrays an element reads (in order) and
// writes, the bytes and FLOPs per element, and its element on sample values (x = 1.5 and y = 0.25 the
// elements read, s = 0.5 the scalar or, for a reduction, the sum so far).
TEST(hierarchy_streams, each_operation_reads_writes_and_computes_what_babelstream_says) {
  constexpr auto a = stream_array::a, b = stream_array::b, c = stream_array::c, none = stream_array::none;
  struct expected {
    std::string_view rung;
    std::array<stream_array, 2> reads;
    stream_array writes;
    int bytes, flops;  // per element
    float element;
  };
  for (const expected& e : {
           expected{"smem_dot", {a, b}, none, 8, 2, 1.5f * 0.25f + 0.5f},
           expected{"dot", {a, b}, none, 8, 2, 1.5f * 0.25f + 0.5f},
           expected{"dot_l2_all", {a, b}, none, 8, 2, 1.5f * 0.25f + 0.5f},
           expected{"write", {none, none}, c, 4, 0, 0.5f},
           expected{"copy", {a, none}, c, 8, 0, 1.5f},
           expected{"mul", {c, none}, b, 8, 1, 0.5f * 1.5f},
           expected{"add", {a, b}, c, 12, 1, 1.5f + 0.25f},
           expected{"triad", {a, b}, c, 12, 2, 1.5f + 0.5f * 0.25f},
       }) {
    SCOPED_TRACE(std::string(e.rung));
    const rung_traits& t = rung(e.rung);
    EXPECT_TRUE(t.op.reads == e.reads);
    EXPECT_TRUE(t.op.writes == e.writes);
    EXPECT_EQ(4 * (t.op.arrays_read() + t.op.arrays_written()), e.bytes);
    EXPECT_EQ(t.op.flops, e.flops);
    ASSERT_NE(t.element, nullptr);
    EXPECT_EQ(t.element(1.5f, 0.25f, 0.5f), e.element);
  }
}

// Every stream rung's plan follows from its operation: bytes and FLOPs per element, the array it writes
// as the output (poisoned and checked), the arrays it reads as the lab's own (filled by setup).
TEST(hierarchy_streams, every_stream_rungs_bytes_flops_and_buffers_follow_from_its_operation) {
  const lab& l = table();
  const device_info d = h100();
  const rung_kind* stream = rung("dot").kind;
  int streams = 0;
  for (const auto& v : l.variants) {
    const rung_traits& t = v.traits_as<rung_traits>();
    if (t.kind != stream) continue;
    ++streams;
    SCOPED_TRACE(std::string(v.name));
    const std::uint64_t bytes = std::uint64_t{8} << 20;  // every stream rung takes it (smem_dot: 64 KiB per SM)
    const auto p = hcase(bytes);
    ASSERT_FALSE(l.why_not(v, p, d).has_value()) << *l.why_not(v, p, d);
    const case_plan plan = l.plan(v, p, d);
    const auto figure =
        std::find_if(plan.model.begin(), plan.model.end(), [](const auto& m) { return m.name == "passes"; });
    ASSERT_NE(figure, plan.model.end());
    const auto passes = static_cast<std::uint64_t>(figure->value);
    const std::uint64_t readers = t.every_cta_reads_all ? plan.policy.grid : 1;
    const auto arrays = static_cast<std::uint64_t>(t.op.arrays_read() + t.op.arrays_written());
    EXPECT_EQ(plan.bytes, arrays * bytes * readers * passes);
    EXPECT_EQ(plan.flops, static_cast<std::uint64_t>(t.op.flops) * (bytes / 4) * readers * passes);
    ASSERT_EQ(plan.buffers.size(), 4u);
    for (const stream_array x : {stream_array::a, stream_array::b, stream_array::c}) {
      const buffer_spec& buf = plan.buffers.at(buffer_of(x));
      EXPECT_EQ(buf.bytes, bytes);
      EXPECT_EQ(buf.role, x == t.op.writes ? buffer_role::output : buffer_role::scratch) << buf.name;
    }
    EXPECT_EQ(t.op.reduces(), t.op.writes == stream_array::none);
    EXPECT_EQ(v.kernels.size(), stream_ilps.size()) << "one kernel per --ilp";
  }
  EXPECT_GE(streams, 8);
}

TEST(hierarchy_plan, a_share_an_sm_keeps_moves_48_mib_per_busy_sm_per_launch) {
  const rung_traits &dot = rung("dot"), &dot_l2 = rung("dot_l2"), &smem = rung("smem_dot"), &copy = rung("copy");
  const std::uint64_t mib4 = std::uint64_t{4} << 20;
  EXPECT_TRUE(served_by_sm(dot, mib4, 132)) << "64 KiB per SM";
  EXPECT_TRUE(served_by_sm(dot, std::uint64_t{8448} << 10, 132)) << "128 KiB per SM: the rule's edge";
  EXPECT_FALSE(served_by_sm(dot, std::uint64_t{12} << 20, 132)) << "192 KiB per SM";
  EXPECT_FALSE(served_by_sm(dot_l2, mib4, 132)) << ".cg never stays in L1";
  EXPECT_FALSE(served_by_sm(copy, mib4, 132)) << "stores go to the L2";
  EXPECT_TRUE(served_by_sm(smem, mib4, 132));
  for (const auto& t : {dot, smem}) {
    for (int ilp : {1, 2, 4, 8}) {
      SCOPED_TRACE(ilp);
      const auto p = plan_bandwidth(t, mib4, 132, ilp, 4);
      EXPECT_GE(p.bytes, sm_target_bytes * p.sms_busy);
      EXPECT_LT(p.bytes, sm_target_bytes * p.sms_busy + 2 * mib4) << "the fewest passes that reach it";
    }
  }
  const auto tiny = plan_bandwidth(dot, 4096, 132, 4, 4);
  EXPECT_EQ(tiny.sms_busy, 1u);
  EXPECT_EQ(tiny.passes, sm_target_bytes / 8192) << "one busy SM: 48 MiB, not 6 GiB";
  const auto l2 = plan_bandwidth(dot_l2, mib4, 132, 4, 4);
  EXPECT_EQ(l2.bytes, bandwidth_target_bytes) << "the L2 and DRAM keep 1 GiB per launch";
  EXPECT_EQ(plan_bandwidth(dot, mib4, 132, 4, 4, 3).passes, 3u) << "--passes wins";
}

TEST(hierarchy_plan, the_dots_tolerance_is_derived_from_its_longest_float_chain) {
  const rung_traits &dot = rung("dot"), &smem = rung("smem_dot"), &all = rung("dot_l2_all");
  constexpr double u = 1.0 / (1 << 24);
  // 4 MiB arrays, --ilp 4: 256 tiles of 1024 vectors over 256 CTAs, 4 vectors per thread and pass.
  const auto d = plan_bandwidth(dot, std::uint64_t{4} << 20, 132, 4, 4);
  ASSERT_EQ(d.grid, 256u);
  EXPECT_EQ(dot_vectors_per_thread(dot, d), 4u);
  ASSERT_LT(16.0 * 4 * d.passes, 1 << 18) << "the accumulators stay exact";
  EXPECT_DOUBLE_EQ(dot_tolerance(dot, d), 16 * u / (1 - 16 * u)) << "3 accumulator adds, 5 shuffles, 8 warp sums";
  // Partial tiles: 257 vectors, one CTA, --ilp 4: its threads read one or two vectors per pass.
  const auto p = plan_bandwidth(dot, 257 * 16, 132, 4, 4, 1);
  EXPECT_EQ(p.grid, 1u);
  EXPECT_EQ(dot_vectors_per_thread(dot, p), 2u);
  // 4 MiB, --ilp 1: 1024 tiles over 528 CTAs, two each at most.
  EXPECT_EQ(dot_vectors_per_thread(dot, plan_bandwidth(dot, std::uint64_t{4} << 20, 132, 1, 4)), 2u);
  // smem_dot: its contiguous slice, 497 vectors at --ctas-per-sm 4: two per thread.
  const auto s = plan_bandwidth(smem, std::uint64_t{4} << 20, 132, 1, 4);
  EXPECT_EQ(s.slice, 497u);
  EXPECT_EQ(dot_vectors_per_thread(smem, s), 2u);
  // Every CTA reads all of it: 16 MiB = 4096 tiles of 256 vectors.
  EXPECT_EQ(dot_vectors_per_thread(all, plan_bandwidth(all, std::uint64_t{16} << 20, 132, 1, 4)), 4096u);
  // Past 2^18 every FFMA of a thread's chain may round: the bound grows with the passes, then ends.
  const auto many = plan_bandwidth(dot, std::uint64_t{4} << 20, 132, 4, 4, 1u << 14);
  const double m = 4.0 * 4 * (1u << 14) + 16;
  EXPECT_DOUBLE_EQ(dot_tolerance(dot, many), m * u / (1 - m * u));
  EXPECT_TRUE(std::isinf(dot_tolerance(dot, plan_bandwidth(dot, std::uint64_t{4} << 20, 132, 4, 4, 1u << 20))));
}

TEST(hierarchy_lab, every_rung_has_traits_and_plans_without_a_gpu) {
  const lab& l = table();
  const device_info d = h100();
  for (const auto& v : l.variants) {
    SCOPED_TRACE(std::string(v.name));
    ASSERT_NO_THROW((void)v.traits_as<rung_traits>());
    const auto p = hcase(4096);
    if (l.why_not(v, p, d)) continue;
    const case_plan plan = l.plan(v, p, d);
    EXPECT_FALSE(plan.buffers.empty());
  }
}

// What `memlab list --format json` shows of each rung (the lab's facts) is its traits, read: the Python tools
// pick the rungs of each picture by these facts, so they must say what the kernel is, kind by kind.
TEST(hierarchy_lab, every_rungs_facts_are_its_traits) {
  const lab& l = table();
  ASSERT_EQ(l.facts, &facts);
  std::set<std::string_view> kinds;
  for (const auto& v : l.variants) {
    SCOPED_TRACE(std::string(v.name));
    const rung_traits& t = v.traits_as<rung_traits>();
    std::map<std::string_view, std::variant<bool, std::int64_t, std::string_view>> f;
    for (const rung_fact& x : l.facts(v)) EXPECT_TRUE(f.emplace(x.name, x.value).second) << x.name << " twice";
    ASSERT_TRUE(f.contains("kind"));
    EXPECT_EQ(std::get<std::string_view>(f["kind"]), t.kind->name);
    kinds.insert(t.kind->name);
    EXPECT_FALSE(t.kind->walks && t.kind->streams);
    const std::size_t expected = 1 + (t.kind->walks ? 3 : 0) + (t.kind->streams ? 5 : 0);
    EXPECT_EQ(f.size(), expected);
    if (t.kind->walks || t.kind->streams) {
      EXPECT_EQ(std::get<std::string_view>(f["path"]), t.path == load_path::l1   ? "l1"
                                                       : t.path == load_path::l2 ? "l2"
                                                                                 : "shared");
    }
    if (t.kind->walks) {
      EXPECT_EQ(std::get<std::string_view>(f["order"]), t.order == chase_order::random ? "random" : "sequential");
      EXPECT_EQ(std::get<bool>(f["per_sm"]), t.per_sm);
    }
    if (t.kind->streams) {
      EXPECT_EQ(std::get<std::int64_t>(f["arrays_read"]), t.op.arrays_read());
      EXPECT_EQ(std::get<std::int64_t>(f["arrays_written"]), t.op.arrays_written());
      EXPECT_EQ(std::get<std::int64_t>(f["flops_per_element"]), t.op.flops);
      EXPECT_EQ(std::get<bool>(f["every_cta_reads_all"]), t.every_cta_reads_all);
    }
  }
  EXPECT_EQ(kinds.size(), 4u) << "the register chain, the chases, the loaded chase, the streams";
}

TEST(hierarchy_lab, refusals_say_why) {
  const lab& l = table();
  const device_info d = h100();
  EXPECT_TRUE(test::refusal(l, "register_chain", hcase(1 << 20), d).has_value());
  EXPECT_FALSE(test::refusal(l, "register_chain", hcase(4096), d).has_value());
  EXPECT_TRUE(test::refusal(l, "chase_shared", hcase(1 << 20), d).has_value());
  EXPECT_FALSE(test::refusal(l, "chase_shared", hcase(32 << 10), d).has_value());
  EXPECT_TRUE(test::refusal(l, "chase_l1", hcase(4096, {{"node_stride", num(12)}}), d).has_value());
  EXPECT_TRUE(test::refusal(l, "chase_l1", hcase(128, {{"node_stride", num(128)}}), d).has_value()) << "one node";
  EXPECT_TRUE(test::refusal(l, "dot", hcase(4096, {{"ilp", num(3)}}), d).has_value());
  EXPECT_TRUE(test::refusal(l, "loaded_chase", hcase(1 << 20, {{"load_ctas", num(132)}}), d).has_value());
  EXPECT_FALSE(test::refusal(l, "loaded_chase", hcase(1 << 20, {{"load_ctas", num(131)}}), d).has_value());
  EXPECT_TRUE(test::refusal(l, "smem_dot", hcase(std::uint64_t{1} << 30), d).has_value());
  EXPECT_TRUE(test::refusal(l, "dot_l2_all", hcase(std::uint64_t{1} << 30), d).has_value());
  EXPECT_FALSE(test::refusal(l, "dot_l2_all", hcase(16 << 20), d).has_value());
  EXPECT_FALSE(test::refusal(l, "smem_dot", hcase(8 << 20), d).has_value());
  EXPECT_TRUE(test::refusal(l, "dot", hcase(4 << 20, {{"passes", num(1 << 16)}}), d).has_value())
      << "a float sum the derived bound cannot check to 1e-3";
  EXPECT_FALSE(test::refusal(l, "dot", hcase(4 << 20, {{"passes", num(1 << 10)}}), d).has_value());
  EXPECT_FALSE(test::refusal(l, "copy", hcase(4 << 20, {{"passes", num(1 << 16)}}), d).has_value())
      << "copies are checked byte for byte";
}

TEST(hierarchy_lab, each_stream_case_names_the_level_it_is_bound_by) {
  const lab& l = table();
  const device_info d = h100();
  EXPECT_EQ(test::plan_of(l, "dot", hcase(4 << 20), d).roof, roof_kind::smem) << "32 KiB per SM: L1";
  EXPECT_EQ(test::plan_of(l, "dot_l2", hcase(4 << 20), d).roof, roof_kind::l2);
  EXPECT_EQ(test::plan_of(l, "copy", hcase(4 << 20), d).roof, roof_kind::l2) << "stores go to L2";
  EXPECT_EQ(test::plan_of(l, "dot", hcase(std::uint64_t{1} << 30), d).roof, roof_kind::dram);
  EXPECT_EQ(test::plan_of(l, "smem_dot", hcase(4 << 20), d).roof, roof_kind::smem);
  EXPECT_FALSE(test::plan_of(l, "chase_l1", hcase(4096), d).roof.has_value()) << "a chase keeps the lab's";
}

TEST(hierarchy_lab, chase_bytes_count_every_load_of_every_walker) {
  const lab& l = table();
  const device_info d = h100();
  const case_plan one = test::plan_of(l, "chase_l2", hcase(1 << 20), d);
  const chase_plan c = plan_chase(1 << 20, 128, 4096, false, 132);
  EXPECT_EQ(one.bytes, 8 * (c.warmup + c.steps + c.samples));
  const case_plan all = test::plan_of(l, "chase_l2_per_sm", hcase(1 << 20), d);
  EXPECT_EQ(all.bytes, 132 * one.bytes);
  EXPECT_EQ(all.policy.grid, 132u);
  EXPECT_EQ(test::plan_of(l, "register_chain", hcase(4096), d).bytes, 0u);
}

TEST(hierarchy_figures, per_load_figures_quantiles_and_histogram) {
  std::vector<std::uint32_t> samples;
  for (std::uint32_t i = 0; i < 90; ++i) samples.push_back(200);
  for (std::uint32_t i = 0; i < 10; ++i) samples.push_back(600);
  const auto f = walk_figures(4096 * 250, 4096 * 125, 4096, samples);
  const auto get = [&](std::string_view n) {
    for (const auto& m : f)
      if (m.name == n) return m;
    ADD_FAILURE() << n;
    return measured_figure{};
  };
  EXPECT_DOUBLE_EQ(get("cycles_per_load").value, 250.0);
  EXPECT_EQ(get("cycles_per_load").unit, "cycles");
  EXPECT_DOUBLE_EQ(get("ns_per_load").value, 125.0);
  EXPECT_DOUBLE_EQ(get("sm_clock_mhz").value, 2000.0);
  EXPECT_DOUBLE_EQ(get("p50_cycles").value, 200.0);
  EXPECT_DOUBLE_EQ(get("p90_cycles").value, 200.0);
  EXPECT_DOUBLE_EQ(get("p99_cycles").value, 600.0);
  EXPECT_DOUBLE_EQ(get("hist_192_208").value, 90.0);
  EXPECT_TRUE(get("hist_592_608").detail);
  EXPECT_DOUBLE_EQ(get("hist_592_608").value, 10.0);
  EXPECT_EQ(quantile({}, 0.5), 0.0);
}

}  // namespace
}  // namespace memlab::labs::hierarchy
