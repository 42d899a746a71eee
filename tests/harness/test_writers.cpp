// Result records and writers: derive() with roofs, the per-lab terminal tables and summaries, CSV,
// Markdown, the self-describing JSON (validated against docs/results.schema.json), and the atomic
// file writes that never leave a part of a file behind.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/result.hpp"
#include "harness/table.hpp"
#include "harness/text.hpp"
#include "harness/writers.hpp"
#include "schema_check.hpp"

namespace {

using namespace memlab;
using nlohmann::json;

constexpr std::uint64_t MiB = 1024 * 1024;

device_info h100() {
  device_info d;
  d.ordinal = 1;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_bytes = 50 * MiB;
  d.global_mem_bytes = 85520809984ull;
  d.mem_clock_khz = 2619000;
  d.bus_width_bits = 5120;
  d.sm_default_clock_khz = 1980000;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  d.peak_gbps = theoretical_peak_gbps(d.mem_clock_khz, d.bus_width_bits);
  d.measured_peak_gbps = 2987.5;
  return d;
}

summary timings(double median, double scale) {
  summary s;
  s.median_ms = median;
  s.min_ms = median * 0.97;
  s.max_ms = median * 1.31;
  s.mean_ms = median * 1.02;
  s.p25_ms = median * 0.99;
  s.p75_ms = median * 1.03;
  s.samples = static_cast<std::size_t>(20 * scale);
  s.rel_spread = 0.04;
  return s;
}

lab_info copy_info() { return {"copy", "copies", "elements copied", roof_kind::dram, {"dtype", "n", "src_offset"}}; }
lab_info smem_info() { return {"smem", "banks", "requests", roof_kind::smem, {"dtype", "n", "stride"}}; }

// A copy lab with a kernel, a peer that fits in L2 and a skipped variant; a shared-memory lab.
run_report sample_report() {
  run_report rep;
  rep.memlab_version = "0.1.0";
  rep.git_sha = "0123456789ab";
  rep.created = "2025-01-02T03:04:05Z";
  rep.command = "memlab run copy --sizes 2^16,2^24 --out r.json";
  rep.argv = {"memlab", "run", "copy", "--sizes", "2^16,2^24", "--out", "r.json"};
  rep.options = {{"--sizes", "2^16,2^24"}, {"--out", "r.json"}};
  rep.timing.max_time_s = 0.5;
  rep.timing.target_rel_spread = 0.005;
  rep.timing.min_samples = 10;
  rep.timing.max_samples = 5000;
  rep.timing.throttle_threshold = 0.75;
  rep.timing.l2_flush_bytes = 100 * MiB;
  rep.timing.batch_target_ms = 1;
  rep.timing.max_queued_launches = 256;
  rep.timing.blocking_timeout_s = 10;
  rep.labs = {copy_info(), smem_info()};
  rep.device = h100();
  rep.planned = 4;
  rep.ended = "complete";

  result a;
  a.lab = "copy";
  a.variant = "vec16";
  a.params = {{"dtype", std::string("f32")}, {"n", std::int64_t{1} << 24}, {"src_offset", std::int64_t{0}}};
  a.policy = {256, 4, 16, 0, 528};
  a.bytes = 2 * 4 * (std::uint64_t{1} << 24);
  a.cold = timings(0.0452, 1);
  a.batch = timings(0.0431, 10);
  a.graph = timings(0.0430, 10);
  a.verified = true;
  a.sm_clock_mhz = 1980;
  derive(a, roof_kind::dram, rep.device, a.bytes);

  result s = a;
  s.variant = "scalar";
  s.cold = timings(0.0904, 1);
  derive(s, roof_kind::dram, rep.device, s.bytes);

  result b;
  b.lab = "copy";
  b.variant = "memcpy";
  b.params = {{"dtype", std::string("f32")}, {"n", std::int64_t{1} << 16}, {"src_offset", std::int64_t{0}}};
  b.bytes = 2 * 4 * (std::uint64_t{1} << 16);
  b.cold = timings(0.0031, 2);
  b.batch = timings(0.0009, 50);
  b.graph_note = "cannot be captured in a CUDA graph: test";
  b.verified = true;
  b.peer = true;
  derive(b, roof_kind::dram, rep.device, b.bytes);

  result c;
  c.lab = "copy";
  c.variant = "vec32";
  c.params = a.params;
  c.status = result_status::skipped;
  c.note = "needs sm_100, device is \"sm_90\"";
  c.roof.name = "dram";

  result m;
  m.lab = "smem";
  m.variant = "load_stride";
  m.params = {{"dtype", std::string("f32")}, {"n", std::int64_t{1} << 20}, {"stride", std::int64_t{2}}};
  m.bytes = 1ull << 30;
  m.cold = timings(0.1, 1);
  m.batch = timings(0.1, 1);
  m.sm_clock_mhz = 1755;
  m.verified = true;
  m.model = {{"smem_ld_wavefronts", 32}, {"gld_sectors", 4.5}};
  derive(m, roof_kind::smem, rep.device, 0);

  rep.results = {a, s, b, c, m};
  return rep;
}

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
}

std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// ---- results and derive ---------------------------------------------------------------------------------

TEST(Result, TheoreticalPeak) {
  // H100 SXM: 2619 MHz HBM3 on a 5120-bit bus.
  EXPECT_NEAR(theoretical_peak_gbps(2619000, 5120), 3352.32, 1e-9);
  EXPECT_EQ(theoretical_peak_gbps(0, 5120), 0.0);
}

TEST(Result, DeriveDramRoofFromTheColdMedian) {
  device_info d = h100();
  d.peak_gbps = 4000;
  d.measured_peak_gbps = 2500;
  result r;
  r.bytes = 2000000;
  r.cold.median_ms = 0.001;  // 2 MB in 1 us: 2000 GB/s
  r.batch.median_ms = 0.0008;
  r.graph.median_ms = 0.0005;
  derive(r, roof_kind::dram, d, d.l2_bytes);
  EXPECT_DOUBLE_EQ(r.gbps, 2000);
  EXPECT_DOUBLE_EQ(r.batch_gbps, 2500);
  EXPECT_DOUBLE_EQ(r.graph_gbps, 4000);
  EXPECT_DOUBLE_EQ(r.pct_peak, 50);
  EXPECT_DOUBLE_EQ(r.pct_measured, 80);
  EXPECT_EQ(r.roof.name, "dram");
  EXPECT_EQ(r.roof.unit, "GB/s");
  EXPECT_DOUBLE_EQ(r.roof.value, 4000);
  EXPECT_DOUBLE_EQ(r.pct_roof, 50);
  EXPECT_TRUE(r.l2_resident);  // exactly L2-sized still fits
  derive(r, roof_kind::dram, d, d.l2_bytes + 1);
  EXPECT_FALSE(r.l2_resident);
}

TEST(Result, SharedMemoryAndFp32RoofsUseTheMeasuredSmClock) {
  const device_info d = h100();  // 132 SMs
  result r;
  r.bytes = 1000000000;
  r.flops = 2000000000;
  r.cold.median_ms = 1;
  r.sm_clock_mhz = 1500;
  derive(r, roof_kind::smem, d, 0);
  EXPECT_DOUBLE_EQ(r.roof.value, 32.0 * 4 * 132 * 1.5e9 / 1e9);  // 25344 GB/s at 1500 MHz
  EXPECT_EQ(r.roof.unit, "GB/s");
  EXPECT_DOUBLE_EQ(r.pct_roof, 100.0 * 1000 / r.roof.value);
  derive(r, roof_kind::fp32, d, 0);
  EXPECT_DOUBLE_EQ(r.roof.value, 132.0 * 128 * 2 * 1.5e9 / 1e9);  // 50688 GFLOP/s
  EXPECT_EQ(r.roof.unit, "GFLOP/s");
  EXPECT_DOUBLE_EQ(r.gflops, 2000);
  EXPECT_DOUBLE_EQ(r.pct_roof, 100.0 * 2000 / r.roof.value);
  r.sm_clock_mhz = 0;  // no clock reading: no roof, no percentage (never a guess)
  derive(r, roof_kind::smem, d, 0);
  EXPECT_EQ(r.roof.value, 0.0);
  EXPECT_EQ(r.pct_roof, 0.0);
}

TEST(Result, L2RoofIsMeasuredAndJudgesTheBatchMedian) {
  device_info d = h100();
  d.measured_l2_gbps = 8000;
  result r;
  r.bytes = 4000000;
  r.cold.median_ms = 0.004;   // 1000 GB/s cold (L2 flushed: not what an L2 roof is about)
  r.batch.median_ms = 0.001;  // 4000 GB/s back to back
  derive(r, roof_kind::l2, d, 0);
  EXPECT_EQ(r.roof.name, "l2");
  EXPECT_DOUBLE_EQ(r.pct_roof, 50);
}

TEST(Result, NothingTimedDerivesZeros) {
  result z;
  derive(z, roof_kind::dram, device_info{}, 1);
  EXPECT_EQ(z.gbps, 0.0);
  EXPECT_EQ(z.batch_gbps, 0.0);
  EXPECT_EQ(z.graph_gbps, 0.0);
  EXPECT_EQ(z.pct_peak, 0.0);
  EXPECT_EQ(z.pct_measured, 0.0);
  EXPECT_EQ(z.pct_roof, 0.0);
  EXPECT_FALSE(z.l2_resident);
}

TEST(Result, PolicyParamsAndStatusText) {
  EXPECT_EQ(to_string(launch_policy{256, 4, 16, 0, 528}), "t256 i4 v16 g528");
  EXPECT_EQ(to_string(launch_policy{128, 0, 16, 4, 132}), "t128 v16 s4 g132");
  EXPECT_EQ(to_string(launch_policy{}), "-");
  result r;
  r.params = {{"dtype", std::string("bf16")}, {"n", std::int64_t{4096}}};
  EXPECT_EQ(std::get<std::int64_t>(*r.find("n")), 4096);
  EXPECT_EQ(r.find("stride"), nullptr);
  EXPECT_EQ(to_string(result_status::skipped), "skipped");
  EXPECT_EQ(to_string(roof_kind::smem), "smem");
}

// ---- per-lab tables and summaries ------------------------------------------------------------------------

TEST(Writers, EachLabHasItsOwnTableWithOnlyItsColumns) {
  const run_report rep = sample_report();
  const text_table copy = lab_table(rep, copy_info());
  ASSERT_EQ(copy.rows.size(), 4u);
  const auto has = [](const text_table& t, std::string_view h) {
    return std::find(t.headers.begin(), t.headers.end(), h) != t.headers.end();
  };
  EXPECT_TRUE(has(copy, "src_offset"));
  EXPECT_FALSE(has(copy, "stride")) << "another lab's axis";
  EXPECT_TRUE(has(copy, "%DRAM"));
  EXPECT_TRUE(has(copy, "%ceiling"));
  EXPECT_TRUE(has(copy, "graph"));
  EXPECT_FALSE(has(copy, "HW GB/s")) << "no copy result declares hardware bytes";
  EXPECT_FALSE(has(copy, "GFLOP/s"));
  const text_table smem = lab_table(rep, smem_info());
  ASSERT_EQ(smem.rows.size(), 1u);
  EXPECT_TRUE(has(smem, "stride"));
  EXPECT_FALSE(has(smem, "src_offset"));
  EXPECT_TRUE(has(smem, "%smem"));
  EXPECT_FALSE(has(smem, "%ceiling")) << "the DRAM ceiling means nothing to a shared-memory lab";

  const std::string text = render(rep, output_format::table);
  EXPECT_NE(text.find("copy: copies (roof: DRAM)"), std::string::npos) << text;
  EXPECT_NE(text.find("smem: banks (roof: shared memory)"), std::string::npos) << text;
  EXPECT_NE(text.find("SKIP: needs sm_100"), std::string::npos) << text;
  EXPECT_NE(text.find("2^24"), std::string::npos);
  EXPECT_EQ(text.find("run "), std::string::npos) << "a complete run says nothing more";
}

TEST(Writers, SummaryNamesTheBestRungItsRoofAndTheWorstAtTheSamePoint) {
  const run_report rep = sample_report();
  const std::string s = lab_summary(rep, copy_info());
  // vec16 at 2^24 (2969 GB/s) is the best; scalar at the same point took twice as long.
  EXPECT_NE(s.find("best vec16 at dtype=f32 n=2^24 src_offset=0"), std::string::npos) << s;
  EXPECT_NE(s.find("% of DRAM"), std::string::npos) << s;
  EXPECT_NE(s.find("worst there scalar"), std::string::npos) << s;
  EXPECT_NE(s.find("(2.00x)"), std::string::npos) << s;
  EXPECT_EQ(s.find("peers there"), std::string::npos) << "no peer was measured at 2^24: " << s;
  run_report none = rep;
  for (auto& r : none.results) r.status = result_status::skipped;
  EXPECT_EQ(lab_summary(none, copy_info()), "");
}

TEST(Writers, SummaryNeverNamesAPeerBestAndListsThePeersAtTheBestPoint) {
  run_report rep = sample_report();
  // A library faster than every rung at the best rung's point (cuBLAS TF32 beside FP32 rungs).
  result fast = rep.results[0];
  fast.variant = "memcpy";
  fast.peer = true;
  fast.cold = timings(0.0226, 1);
  derive(fast, roof_kind::dram, rep.device, fast.bytes);
  rep.results.push_back(fast);
  const std::string s = lab_summary(rep, copy_info());
  EXPECT_NE(s.find("best vec16 at dtype=f32 n=2^24"), std::string::npos) << s;
  EXPECT_NE(s.find("worst there scalar"), std::string::npos) << "a peer is not a rung: " << s;
  EXPECT_NE(s.find("; peers there: memcpy " + fixed(fast.gbps, 1) + " GB/s"), std::string::npos) << s;
  // The same point measured twice in one report: the peer is listed once, with its best figure.
  result slower = fast;
  slower.cold = timings(0.0300, 1);
  derive(slower, roof_kind::dram, rep.device, slower.bytes);
  rep.results.push_back(slower);
  const std::string twice = lab_summary(rep, copy_info());
  EXPECT_EQ(twice.find("memcpy"), twice.rfind("memcpy")) << twice;
  EXPECT_NE(twice.find("memcpy " + fixed(fast.gbps, 1)), std::string::npos) << twice;
  // Only peers: nothing of memlab's was measured, so there is no best rung to name.
  run_report peers_only = rep;
  for (auto& r : peers_only.results)
    if (!r.peer) r.status = result_status::skipped;
  EXPECT_EQ(lab_summary(peers_only, copy_info()), "");
}

TEST(Writers, AStoppedRunSaysSo) {
  run_report rep = sample_report();
  rep.ended = "interrupted by SIGINT after 5 of 9 cases";
  EXPECT_NE(render(rep, output_format::table).find("run interrupted by SIGINT after 5 of 9 cases"), std::string::npos);
  EXPECT_NE(render(rep, output_format::markdown).find("interrupted by SIGINT"), std::string::npos);
}

TEST(Writers, StdoutShowsEachLabOnceItsCasesAreDone) {
  run_report rep = sample_report();
  std::ostringstream out;
  stdout_sink sink(out, output_format::table);
  const auto all = rep.results;
  rep.results.assign(all.begin(), all.begin() + 2);  // two copy cases: the lab is still running
  sink.update(rep);
  EXPECT_EQ(out.str(), "");
  rep.results = all;  // the smem case arrived: copy is done
  sink.update(rep);
  EXPECT_NE(out.str().find("copy: copies"), std::string::npos);
  EXPECT_EQ(out.str().find("smem: banks"), std::string::npos);
  sink.finish(rep);
  EXPECT_NE(out.str().find("smem: banks"), std::string::npos);
  EXPECT_EQ(out.str().find("copy: copies"), out.str().rfind("copy: copies")) << "each lab once";
}

TEST(Writers, StdoutShowsALabAsSoonAsTheRunnerSaysItIsDone) {
  run_report rep = sample_report();
  rep.results.resize(4);  // the copy cases only
  std::ostringstream out;
  stdout_sink sink(out, output_format::table);
  sink.update(rep);
  EXPECT_EQ(out.str(), "") << "copy may still be running";
  sink.lab_done(rep);
  EXPECT_NE(out.str().find("copy: copies"), std::string::npos) << "shown before the next lab's first case";
  sink.finish(rep);
  EXPECT_EQ(out.str().find("copy: copies"), out.str().rfind("copy: copies")) << "each lab once";
}

// The table printed as a run goes names the method its columns hold, as the files do: nccl-tests' graph
// mode reads "nccl-tests -G" there too.
TEST(Writers, StdoutNamesNcclTestsGraphMode) {
  run_report rep = sample_report();
  rep.results.resize(4);  // the copy cases
  rep.results[0].nccl_tests = rep.results[0].batch;
  rep.timing.nccl_tests_graph_launches = 10;
  std::ostringstream out;
  stdout_sink sink(out, output_format::table);
  sink.finish(rep);
  EXPECT_NE(out.str().find("busbw nccl-tests -G"), std::string::npos) << out.str();
  EXPECT_NE(render(rep, output_format::table).find("busbw nccl-tests -G"), std::string::npos);
}

// ---- CSV, Markdown, JSON -------------------------------------------------------------------------------

TEST(Writers, CsvHasOneRecordPerCaseWithEveryParamColumn) {
  const std::string csv = render(sample_report(), output_format::csv);
  std::istringstream in(csv);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("lab,variant,dtype,n,src_offset,stride,bytes,flops,policy,", 0), 0u) << header;
  for (const char* col : {"graph_median_ms", "roof", "pct_roof", "sm_clock_mhz", "throttled_samples"})
    EXPECT_NE(header.find(col), std::string::npos) << col;
  int rows = 0;
  for (std::string line; std::getline(in, line);) ++rows;
  EXPECT_EQ(rows, 5);
  EXPECT_NE(csv.find("\"needs sm_100, device is \"\"sm_90\"\"\""), std::string::npos) << "RFC 4180 quoting";
}

TEST(Writers, MarkdownHasTheRunHeaderAndATablePerLab) {
  const std::string md = render(sample_report(), output_format::markdown);
  EXPECT_NE(md.find("- command: `memlab run copy --sizes 2^16,2^24 --out r.json`"), std::string::npos) << md;
  EXPECT_NE(md.find("driver 13.0, runtime 13.0"), std::string::npos) << md;
  EXPECT_NE(md.find("### copy:"), std::string::npos);
  EXPECT_NE(md.find("### smem:"), std::string::npos);
  EXPECT_NE(md.find("| variant |"), std::string::npos);
}

TEST(Writers, JsonHeaderDescribesItself) {
  const json j = json::parse(render(sample_report(), output_format::json));
  EXPECT_EQ(j["schema"], "memlab.results/1");
  EXPECT_EQ(j["argv"].size(), 7u);
  EXPECT_EQ(j["argv"][2], "copy");
  EXPECT_EQ(j["ended"], "complete");
  EXPECT_EQ(j["planned_cases"], 4);
  EXPECT_EQ(j["options"]["--sizes"], "2^16,2^24");
  EXPECT_EQ(j["units"]["bandwidth"], "GB/s (1e9 bytes per second)");
  EXPECT_NE(j["byte_convention"].get<std::string>().find("reads plus writes"), std::string::npos);
  EXPECT_NE(j["timing"]["cold"].get<std::string>().find("blocking kernel"), std::string::npos);
  EXPECT_EQ(j["timing"]["throttle_threshold"], 0.75);
  EXPECT_EQ(j["device"]["driver_version"], "13.0");
  EXPECT_EQ(j["device"]["sm_default_clock_khz"], 1980000);
  EXPECT_EQ(j["labs"]["copy"]["roof"], "dram");
  EXPECT_EQ(j["labs"]["copy"]["params"], json({"dtype", "n", "src_offset"}));
  const json& r = j["results"][0];
  EXPECT_EQ(r["roof"]["name"], "dram");
  EXPECT_EQ(r["graph"]["samples"], 200);
  EXPECT_EQ(j["results"][2]["graph_note"], "cannot be captured in a CUDA graph: test");
  EXPECT_EQ(j["results"][2]["peer"], true);  // memcpy: a library the lab compares with
  EXPECT_EQ(r["peer"], false);
  EXPECT_EQ(j["results"][4]["roof"]["name"], "smem");
}

TEST(Writers, ModelFiguresAreColumnsOfTheirLabOnlyAndKeysInJsonAndCsv) {
  const run_report rep = sample_report();
  const auto has = [](const text_table& t, std::string_view h) {
    return std::find(t.headers.begin(), t.headers.end(), h) != t.headers.end();
  };
  const text_table smem = lab_table(rep, smem_info());
  ASSERT_TRUE(has(smem, "smem_ld_wavefronts"));
  EXPECT_TRUE(has(smem, "gld_sectors"));
  const auto col = static_cast<std::size_t>(std::find(smem.headers.begin(), smem.headers.end(), "gld_sectors") -
                                            smem.headers.begin());
  EXPECT_EQ(smem.rows.at(0).at(col), "4.5");
  EXPECT_FALSE(has(lab_table(rep, copy_info()), "smem_ld_wavefronts")) << "no copy result carries it";
  const json j = json::parse(render(rep, output_format::json));
  EXPECT_EQ(j["results"][4]["model"]["smem_ld_wavefronts"], 32.0);
  EXPECT_EQ(j["results"][4]["model"]["gld_sectors"], 4.5);
  EXPECT_TRUE(j["results"][0]["model"].empty());
  const std::string csv = render(rep, output_format::csv);
  EXPECT_NE(csv.find("smem_ld_wavefronts=32 gld_sectors=4.5"), std::string::npos) << csv;
}

TEST(Writers, JsonKeepsTheLabsParamOrder) {
  // Written in declared order (an ordered object), and the header lists that order for readers
  // whose JSON objects have none.
  const std::string text = render(sample_report(), output_format::json);
  const auto dtype = text.find("\"dtype\": \"f32\""), n = text.find("\"n\": 16777216"),
             off = text.find("\"src_offset\": 0");
  ASSERT_NE(dtype, std::string::npos);
  EXPECT_LT(dtype, n);
  EXPECT_LT(n, off);
}

// One declaration per field: the JSON record holds exactly the declared fields, at their places,
// and every CSV column is a declared field.
TEST(Writers, EveryRecordFieldIsDeclaredOnce) {
  const run_report rep = sample_report();
  const json j = json::parse(render(rep, output_format::json));
  const json& rec = j["results"][0];
  // The extensions (measured figures, directions, a bus factor) are written only by records that carry
  // them: absent from this one, present once it has them.
  const auto extension = [](const result_field& f) {
    return f.only_when != nullptr || f.kind == field_kind::measured || f.kind == field_kind::directions;
  };
  std::size_t keys = 0;
  for (const auto& f : result_fields()) {
    if (f.key.empty()) continue;
    if (extension(f) && !f.object.empty()) {  // an extension in an object of its own: no object at all
      EXPECT_FALSE(rec.contains(std::string(f.object))) << f.name;
      continue;
    }
    const json& where = f.object.empty() ? rec : rec.at(std::string(f.object));
    EXPECT_EQ(where.contains(std::string(f.key)), !extension(f)) << f.name;
    if (extension(f)) continue;
    keys += f.object.empty() || f.key == where.begin().key() ? 1 : 0;  // each object once, by its first key
  }
  EXPECT_EQ(keys, rec.size()) << rec.dump();
  run_report extended = rep;
  extended.results[0].measured = {{"ns_per_load", 412.5, "ns"}};
  extended.results[0].directions = {{"h2d", 1024, 55.0}};
  extended.results[0].bus_factor = 1.5;
  extended.results[0].nccl_tests = extended.results[0].batch;  // timed by nccl-tests' method too
  extended.results[0].device = 2;                              // a run over several GPUs
  const json ext = json::parse(render(extended, output_format::json))["results"][0];
  for (const auto& f : result_fields()) {
    if (extension(f)) {
      const json& where = f.object.empty() ? ext : ext.at(std::string(f.object));
      EXPECT_TRUE(where.contains(std::string(f.key))) << f.name;
    }
  }
  std::istringstream csv(render(rep, output_format::csv));
  std::string header;
  std::getline(csv, header);
  const std::vector<std::string> params{"dtype", "n", "src_offset", "stride"};
  std::istringstream cols(header);
  for (std::string c; std::getline(cols, c, ',');) {
    if (std::find(params.begin(), params.end(), c) != params.end()) continue;
    EXPECT_NO_THROW((void)result_field_named(c)) << c;
  }
}

// Each roof judges one rate, in its unit: what % of roof, the progress line and the summary use.
TEST(Result, EachRoofJudgesOneRate) {
  result r;
  r.gbps = 1;
  r.batch_gbps = 2;
  r.gflops = 3;
  for (const auto& [k, rate, unit] :
       {std::tuple{roof_kind::dram, 1.0, "GB/s"}, std::tuple{roof_kind::l2, 2.0, "GB/s"},
        std::tuple{roof_kind::smem, 1.0, "GB/s"}, std::tuple{roof_kind::fp32, 3.0, "GFLOP/s"}}) {
    r.roof.kind = k;
    EXPECT_EQ(judged_rate(r), rate) << to_string(k);
    EXPECT_EQ(rule_of(k).unit, unit);
    EXPECT_EQ(rule_of(k).name, to_string(k));
  }
}

TEST(Writers, JsonValidatesAgainstTheSchema) {
  const auto path = temp_path("memlab_schema_probe") += ".json";
  run_report no_results = sample_report();
  no_results.results.clear();
  for (const run_report& rep : {sample_report(), no_results}) {
    write_file_atomically(path.string(), render(rep, output_format::json));
    test::expect_valid_results(path.string());
  }
  std::filesystem::remove(path);
}

// Figures a lab's kernels measure themselves (latency labs): `measured` in JSON (name -> value and
// unit, valid against the schema), one column each in the lab's table except `detail` ones.
TEST(Writers, MeasuredFiguresCarryTheirUnits) {
  run_report rep = sample_report();
  rep.results.front().measured = {
      {"cycles_per_load", 412.5, "cycles"}, {"ns_per_load", 220.25, "ns"}, {"hist_400_416", 37, "loads", true}};
  const json j = json::parse(render(rep, output_format::json));
  const auto& m = j["results"][0]["measured"];
  EXPECT_EQ(m["cycles_per_load"]["value"], 412.5);
  EXPECT_EQ(m["cycles_per_load"]["unit"], "cycles");
  EXPECT_EQ(m["hist_400_416"]["unit"], "loads");
  EXPECT_FALSE(j["results"][1].contains("measured")) << "absent when a lab measures nothing itself";
  const std::string table = render(rep, output_format::table);
  EXPECT_NE(table.find("cycles_per_load [cycles]"), std::string::npos);
  EXPECT_EQ(table.find("hist_400_416"), std::string::npos) << "a detail figure is no column";
  EXPECT_NE(render(rep, output_format::csv).find("cycles_per_load=412.5cycles"), std::string::npos);
  const auto path = temp_path("memlab_schema_measured") += ".json";
  write_file_atomically(path.string(), render(rep, output_format::json));
  test::expect_valid_results(path.string());
  std::filesystem::remove(path);
}

// A param of an axis the rung does not read is not applicable: JSON null (valid against the schema),
// an empty CSV cell, "-" in the tables; never the text "-" inside a numeric param.
TEST(Writers, ANotApplicableParamIsNullNotText) {
  run_report rep = sample_report();
  rep.results.back().params.push_back({"peer", std::monostate{}});
  rep.labs.back().params.push_back("peer");
  const json j = json::parse(render(rep, output_format::json));
  EXPECT_TRUE(j["results"][4]["params"]["peer"].is_null()) << j["results"][4]["params"].dump();
  EXPECT_EQ(j["results"][4]["params"]["stride"], 2) << "applicable params stay numbers";
  std::istringstream csv(render(rep, output_format::csv));
  const auto cells = [](const std::string& line) {
    std::vector<std::string> out(1);
    for (char ch : line) {
      if (ch == ',') {
        out.emplace_back();
      } else {
        out.back().push_back(ch);
      }
    }
    return out;
  };
  std::string line, last;
  std::getline(csv, line);
  const auto header = cells(line);
  while (std::getline(csv, line)) last = line;  // the smem record: no quoted commas
  const auto column = std::find(header.begin(), header.end(), "peer") - header.begin();
  ASSERT_LT(static_cast<std::size_t>(column), header.size());
  EXPECT_EQ(cells(last).at(static_cast<std::size_t>(column)), "") << last;
  EXPECT_EQ(to_string(param_value{}), "-");
  const std::string table = render(rep, output_format::table);
  EXPECT_NE(table.find("peer"), std::string::npos) << table;
  const auto path = temp_path("memlab_schema_not_applicable") += ".json";
  write_file_atomically(path.string(), render(rep, output_format::json));
  test::expect_valid_results(path.string());
  std::filesystem::remove(path);
}

// A rung whose roof is TF32 tensor cores (cuBLAS's TF32 GEMM) is held to SMs x the device's TF32 FLOP per SM
// per clock x the SM clock; a device whose figure is unknown gives no roof value.
TEST(Result, Tf32RoofIsPerSmPerClockByDevice) {
  result r;
  r.flops = 2000000000;
  r.cold = timings(1.0, 1);
  r.sm_clock_mhz = 1830;
  derive(r, roof_kind::tf32, h100(), 0);
  EXPECT_EQ(r.roof.name, "tf32");
  EXPECT_EQ(r.roof.unit, "GFLOP/s");
  EXPECT_DOUBLE_EQ(r.roof.value, 132 * 2048 * 1830e6 / 1e9);  // 494.7 TFLOP/s: NVIDIA's H100 SXM figure
  EXPECT_DOUBLE_EQ(r.pct_roof, 100 * r.gflops / r.roof.value);
  device_info other = h100();
  other.cc_minor = 9;
  derive(r, roof_kind::tf32, other, 0);
  EXPECT_EQ(r.roof.value, 0);
  EXPECT_EQ(r.pct_roof, 0);
  EXPECT_EQ(per_sm_clock(rule_of(roof_kind::fp32), other), 256);
  EXPECT_EQ(per_sm_clock(rule_of(roof_kind::smem), other), 128);
  EXPECT_EQ(per_sm_clock(rule_of(roof_kind::dram), other), 0);
}

TEST(Writers, FormatNamesAndExtensions) {
  EXPECT_EQ(parse_format("md"), output_format::markdown);
  EXPECT_EQ(parse_format("yaml"), std::nullopt);
  EXPECT_EQ(format_from_path("a/b/r.JSON"), output_format::json);
  EXPECT_EQ(format_from_path("r.txt"), output_format::table);
  EXPECT_EQ(format_from_path("results"), std::nullopt);
  EXPECT_EQ(format_from_path("dir.json/r"), std::nullopt);
}

// ---- files ---------------------------------------------------------------------------------------------

TEST(Files, AnAtomicWriteReplacesTheFileWhole) {
  const auto path = temp_path("memlab_atomic.txt");
  write_file_atomically(path.string(), "first\n");
  EXPECT_EQ(read_file(path), "first\n");
  write_file_atomically(path.string(), "second\n");
  EXPECT_EQ(read_file(path), "second\n");
  // No temporary left beside it.
  int siblings = 0;
  for (const auto& e : std::filesystem::directory_iterator(path.parent_path()))
    siblings += e.path().filename().string().find(path.filename().string()) != std::string::npos;
  EXPECT_EQ(siblings, 1);
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_NE(st.st_mode & S_IRGRP, 0u) << "results are readable by others, not 0600";
  std::filesystem::remove(path);
}

TEST(Files, AFailedWriteIsAnErrorAndKeepsThePreviousFile) {
  const auto dir = temp_path("memlab_write_fail_dir");
  std::filesystem::create_directories(dir);
  const auto path = dir / "r.json";
  write_file_atomically(path.string(), "good\n");
  // Out of space (as root too): a file-size limit makes write() fail with EFBIG, as a full disk
  // fails with ENOSPC. The message names the file; the previous content survives; no temp is left.
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small{1u << 20, old.rlim_max};
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  try {
    write_file_atomically(path.string(), std::string(4u << 20, 'x'));
    ADD_FAILURE() << "a write past the limit did not fail";
  } catch (const write_error& e) {
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_EQ(read_file(path), "good\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator{}), 1);
  // A folder where the file should go cannot be replaced.
  std::filesystem::create_directories(dir / "taken.json");
  EXPECT_THROW(write_file_atomically((dir / "taken.json").string(), "x"), write_error);
  std::filesystem::remove_all(dir);
}

TEST(Files, FileSinkRewritesAfterEveryCase) {
  const auto path = temp_path("memlab_sink.json");
  file_sink sink(path.string(), output_format::json);
  run_report rep = sample_report();
  rep.ended = "running";
  const auto all = rep.results;
  rep.results.resize(1);
  sink.update(rep);
  EXPECT_EQ(json::parse(read_file(path))["results"].size(), 1u);
  rep.results = all;
  rep.ended = "complete";
  sink.finish(rep);
  const json j = json::parse(read_file(path));
  EXPECT_EQ(j["results"].size(), all.size());
  EXPECT_EQ(j["ended"], "complete");
  std::filesystem::remove(path);
}

}  // namespace

TEST(Writers, MarkdownCellsEscapeBarsAndTagsOutsideCode) {
  text_table t;
  t.column("rung", false);
  t.rows.push_back({"UniversalCopy<T> | `wait_group<stages-1>` then <b>"});
  std::ostringstream os;
  write_markdown(os, t);
  EXPECT_NE(os.str().find("| UniversalCopy&lt;T> \\| `wait_group<stages-1>` then &lt;b> |"), std::string::npos)
      << os.str();
}
