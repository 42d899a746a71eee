// Result records and writers: derive() arithmetic, JSON round trip and validation, and what the
// table, CSV and Markdown writers put on the page.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/result.hpp"
#include "harness/writers.hpp"

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

constexpr const char* skip_note = "needs sm_100, device is \"sm_90\"";

// Three results: a memlab kernel, a library peer that fits in L2, and a skipped variant.
run_report sample_report() {
  run_report rep;
  rep.memlab_version = "0.1.0";
  rep.git_sha = "0123456789ab";
  rep.created = "2025-01-02T03:04:05Z";
  rep.command = "memlab run copy --sizes 2^16,2^24 --out r.json";
  rep.device = h100();

  result a;
  a.lab = "copy";
  a.variant = "vec16";
  a.params = {{"dtype", std::string("f32")}, {"n", std::int64_t{1} << 24}, {"src_offset", std::int64_t{0}}};
  a.policy = {256, 4, 16, 0, 528};
  a.bytes = 2 * 4 * (std::uint64_t{1} << 24);
  a.cold = timings(0.0452, 1);
  a.batch = timings(0.0431, 10);
  a.verified = true;
  derive(a, rep.device, a.bytes);

  result b;
  b.lab = "copy";
  b.variant = "memcpy";
  b.params = {{"dtype", std::string("f32")}, {"n", std::int64_t{1} << 16}};
  b.bytes = 2 * 4 * (std::uint64_t{1} << 16);
  b.flops = 7;
  b.cold = timings(0.0031, 2);
  b.batch = timings(0.0009, 50);
  b.verified = true;
  derive(b, rep.device, b.bytes);

  result c;
  c.lab = "copy";
  c.variant = "vec32";
  c.params = {{"dtype", std::string("f32")}, {"n", std::int64_t{1} << 24}, {"src_offset", std::int64_t{-4}}};
  c.policy = {256, 2, 32, 0, 0};
  c.bytes = a.bytes;
  c.status = result_status::skipped;
  c.note = skip_note;
  derive(c, rep.device, c.bytes);

  rep.results = {a, b, c};
  return rep;
}

void expect_same(const summary& x, const summary& y, const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(x.min_ms, y.min_ms);
  EXPECT_EQ(x.max_ms, y.max_ms);
  EXPECT_EQ(x.median_ms, y.median_ms);
  EXPECT_EQ(x.mean_ms, y.mean_ms);
  EXPECT_EQ(x.p25_ms, y.p25_ms);
  EXPECT_EQ(x.p75_ms, y.p75_ms);
  EXPECT_EQ(x.samples, y.samples);
  EXPECT_EQ(x.rel_spread, y.rel_spread);
}

void expect_same(const run_report& x, const run_report& y) {
  EXPECT_EQ(x.memlab_version, y.memlab_version);
  EXPECT_EQ(x.git_sha, y.git_sha);
  EXPECT_EQ(x.created, y.created);
  EXPECT_EQ(x.command, y.command);
  const auto &d = x.device, &e = y.device;
  EXPECT_EQ(d.ordinal, e.ordinal);
  EXPECT_EQ(d.name, e.name);
  EXPECT_EQ(d.cc_major, e.cc_major);
  EXPECT_EQ(d.cc_minor, e.cc_minor);
  EXPECT_EQ(d.sm_count, e.sm_count);
  EXPECT_EQ(d.l2_bytes, e.l2_bytes);
  EXPECT_EQ(d.global_mem_bytes, e.global_mem_bytes);
  EXPECT_EQ(d.mem_clock_khz, e.mem_clock_khz);
  EXPECT_EQ(d.bus_width_bits, e.bus_width_bits);
  EXPECT_EQ(d.peak_gbps, e.peak_gbps);
  EXPECT_EQ(d.measured_peak_gbps, e.measured_peak_gbps);
  ASSERT_EQ(x.results.size(), y.results.size());
  for (std::size_t i = 0; i < x.results.size(); ++i) {
    SCOPED_TRACE("results[" + std::to_string(i) + "]");
    const result &r = x.results[i], &s = y.results[i];
    EXPECT_EQ(r.lab, s.lab);
    EXPECT_EQ(r.variant, s.variant);
    ASSERT_EQ(r.params.size(), s.params.size());
    for (std::size_t k = 0; k < r.params.size(); ++k) {
      EXPECT_EQ(r.params[k].name, s.params[k].name);
      EXPECT_EQ(r.params[k].value, s.params[k].value);
    }
    EXPECT_EQ(r.policy.threads, s.policy.threads);
    EXPECT_EQ(r.policy.items_per_thread, s.policy.items_per_thread);
    EXPECT_EQ(r.policy.vec_bytes, s.policy.vec_bytes);
    EXPECT_EQ(r.policy.stages, s.policy.stages);
    EXPECT_EQ(r.policy.grid, s.policy.grid);
    EXPECT_EQ(r.bytes, s.bytes);
    EXPECT_EQ(r.flops, s.flops);
    expect_same(r.cold, s.cold, "cold");
    expect_same(r.batch, s.batch, "batch");
    EXPECT_EQ(r.gbps, s.gbps);
    EXPECT_EQ(r.batch_gbps, s.batch_gbps);
    EXPECT_EQ(r.pct_peak, s.pct_peak);
    EXPECT_EQ(r.pct_measured, s.pct_measured);
    EXPECT_EQ(r.l2_resident, s.l2_resident);
    EXPECT_EQ(r.verified, s.verified);
    EXPECT_EQ(r.status, s.status);
    EXPECT_EQ(r.note, s.note);
  }
}

std::string render(const run_report& rep, output_format f) {
  std::ostringstream os;
  write_report(os, rep, f);
  return os.str();
}

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string line; std::getline(is, line);) out.push_back(line);
  return out;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// ---- result records ---------------------------------------------------------------------------------

TEST(Result, TheoreticalPeak) {
  // H100 SXM HBM3: 2 x 2619 MHz x 5120 bit / 8 = 3352.32 GB/s.
  EXPECT_NEAR(theoretical_peak_gbps(2619000, 5120), 3352.32, 1e-9);
  EXPECT_EQ(theoretical_peak_gbps(0, 5120), 0.0);
}

TEST(Result, DeriveArithmetic) {
  device_info dev;
  dev.peak_gbps = 4000;
  dev.measured_peak_gbps = 2500;
  dev.l2_bytes = 50 * MiB;
  result r;
  r.bytes = 1'000'000'000;
  r.cold.median_ms = 0.5;   // 1e9 B in 0.5 ms = 2000 GB/s
  r.batch.median_ms = 0.4;  // 2500 GB/s
  derive(r, dev, 50 * MiB);
  EXPECT_DOUBLE_EQ(r.gbps, 2000);
  EXPECT_DOUBLE_EQ(r.batch_gbps, 2500);
  EXPECT_DOUBLE_EQ(r.pct_peak, 50);
  EXPECT_DOUBLE_EQ(r.pct_measured, 80);
  EXPECT_TRUE(r.l2_resident);  // exactly L2-sized still fits

  derive(r, dev, 50 * MiB + 1);
  EXPECT_FALSE(r.l2_resident);

  // No timings, no peaks, no L2 size: every derived number is 0, none is inf or NaN.
  result z;
  z.bytes = 1000;
  derive(z, device_info{}, 0);
  EXPECT_EQ(z.gbps, 0.0);
  EXPECT_EQ(z.batch_gbps, 0.0);
  EXPECT_EQ(z.pct_peak, 0.0);
  EXPECT_EQ(z.pct_measured, 0.0);
  EXPECT_FALSE(z.l2_resident);
}

TEST(Result, PolicyText) {
  EXPECT_EQ(to_string(launch_policy{256, 4, 16, 0, 528}), "t256 i4 v16 g528");
  EXPECT_EQ(to_string(launch_policy{128, 0, 16, 4, 132}), "t128 v16 s4 g132");
  EXPECT_EQ(to_string(launch_policy{0, 0, 0, 0, 1}), "g1");
  EXPECT_EQ(to_string(launch_policy{}), "-");
}

TEST(Result, ParamsAndStatus) {
  result r;
  r.params = {{"dtype", std::string("bf16")}, {"n", std::int64_t{4096}}};
  ASSERT_NE(r.find("n"), nullptr);
  EXPECT_EQ(std::get<std::int64_t>(*r.find("n")), 4096);
  EXPECT_EQ(to_string(*r.find("dtype")), "bf16");
  EXPECT_EQ(to_string(param_value{std::int64_t{-3}}), "-3");
  EXPECT_EQ(r.find("stride"), nullptr);
  EXPECT_EQ(to_string(result_status::ok), "ok");
  EXPECT_EQ(to_string(result_status::skipped), "skipped");
  EXPECT_EQ(to_string(result_status::failed), "failed");
}

TEST(Result, SampleReportIsDerived) {
  const auto rep = sample_report();
  const result& a = rep.results[0];
  // 128 MiB in 45.2 us.
  EXPECT_NEAR(a.gbps, 134217728.0 / 45.2e-6 / 1e9, 1e-9);
  EXPECT_NEAR(a.pct_peak, 100 * a.gbps / 3352.32, 1e-9);
  EXPECT_FALSE(a.l2_resident);
  EXPECT_TRUE(rep.results[1].l2_resident);
  EXPECT_EQ(rep.results[2].gbps, 0.0);
}

// ---- formats ----------------------------------------------------------------------------------------

TEST(Writers, FormatNames) {
  EXPECT_EQ(parse_format("table"), output_format::table);
  EXPECT_EQ(parse_format("csv"), output_format::csv);
  EXPECT_EQ(parse_format("json"), output_format::json);
  EXPECT_EQ(parse_format("md"), output_format::markdown);
  EXPECT_EQ(parse_format("markdown"), output_format::markdown);
  EXPECT_EQ(parse_format("xml"), std::nullopt);
  EXPECT_EQ(format_from_path("out/r.csv"), output_format::csv);
  EXPECT_EQ(format_from_path("r.json"), output_format::json);
  EXPECT_EQ(format_from_path("docs/copy.md"), output_format::markdown);
  EXPECT_EQ(format_from_path("r.txt"), output_format::table);
  EXPECT_EQ(format_from_path("r.yaml"), std::nullopt);
  EXPECT_EQ(format_from_path("results"), std::nullopt);
  EXPECT_EQ(format_from_path("dir.csv/results"), std::nullopt);
  for (auto f : {output_format::table, output_format::csv, output_format::json, output_format::markdown}) {
    EXPECT_EQ(parse_format(to_string(f)), f);
  }
}

// ---- JSON ---------------------------------------------------------------------------------------------

TEST(Json, HasTheDesignSchema) {
  const json j = to_json(sample_report());
  EXPECT_EQ(j.at("schema"), "memlab.results/1");
  for (const char* k : {"memlab_version", "git_sha", "created", "command", "device", "results"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  const json& d = j.at("device");
  EXPECT_EQ(d.at("cc"), "9.0");
  EXPECT_EQ(d.at("sm_count"), 132);
  EXPECT_EQ(d.at("l2_bytes"), 50 * MiB);
  EXPECT_EQ(d.at("mem_clock_khz"), 2619000);
  EXPECT_EQ(d.at("bus_width_bits"), 5120);
  const json& r = j.at("results").at(0);
  EXPECT_EQ(r.at("params").at("n"), std::int64_t{1} << 24);
  EXPECT_TRUE(r.at("params").at("n").is_number_integer());
  EXPECT_TRUE(r.at("params").at("dtype").is_string());
  EXPECT_EQ(r.at("policy").at("threads"), 256);
  EXPECT_EQ(r.at("policy").at("grid"), 528);
  for (const char* k : {"median_ms", "min_ms", "max_ms", "p25_ms", "p75_ms", "samples", "rel_spread", "mean_ms"}) {
    EXPECT_TRUE(r.at("cold").contains(k)) << k;
    EXPECT_TRUE(r.at("batch").contains(k)) << k;
  }
  for (const char* k : {"lab", "variant", "bytes", "flops", "gbps", "pct_peak", "l2_resident", "verified",
                        "batch_gbps", "pct_measured", "status", "note"}) {
    EXPECT_TRUE(r.contains(k)) << k;
  }
  EXPECT_EQ(j.at("results").at(2).at("status"), "skipped");
}

TEST(Json, RoundTrip) {
  // Params are in name order here: nlohmann::json objects sort their keys, so a round trip through
  // it returns params sorted by name (the file written by write_report keeps them as given).
  const run_report rep = sample_report();
  const run_report back = report_from_json(json::parse(to_json(rep).dump()));
  expect_same(rep, back);
}

TEST(Json, RoundTripThroughWrittenFile) {
  const run_report rep = sample_report();
  const std::string text = render(rep, output_format::json);
  expect_same(rep, report_from_json(json::parse(text)));
  // The file itself keeps schema order: "schema" first, params as given.
  const auto o = nlohmann::ordered_json::parse(text);
  EXPECT_EQ(o.begin().key(), "schema");
  run_report unsorted = rep;
  unsorted.results[0].params = {{"n", std::int64_t{8}}, {"dtype", std::string("u8")}};
  const auto p = nlohmann::ordered_json::parse(render(unsorted, output_format::json))["results"][0]["params"];
  EXPECT_EQ(p.begin().key(), "n");
}

TEST(Json, ExtensionsAreOptional) {
  // A file with only the DESIGN.md keys still loads; extensions take their defaults.
  json j = to_json(sample_report());
  j.erase("command");
  for (const char* k : {"ordinal", "global_mem_bytes", "measured_peak_gbps"}) j["device"].erase(k);
  for (auto& r : j["results"]) {
    for (const char* k : {"batch_gbps", "pct_measured", "status", "note"}) r.erase(k);
    r["cold"].erase("mean_ms");
    r["batch"].erase("mean_ms");
  }
  const run_report rep = report_from_json(j);
  EXPECT_EQ(rep.command, "");
  EXPECT_EQ(rep.device.measured_peak_gbps, 0.0);
  EXPECT_EQ(rep.results[2].status, result_status::ok);
  EXPECT_EQ(rep.results[0].cold.mean_ms, 0.0);
  EXPECT_EQ(rep.results[0].variant, "vec16");
}

// Applies `edit` to a valid document and expects report_from_json to name `path` and `what`.
template <class Edit>
void expect_rejected(Edit edit, const std::string& path, const std::string& what) {
  json j = to_json(sample_report());
  edit(j);
  try {
    (void)report_from_json(j);
    ADD_FAILURE() << "accepted a document broken at " << path;
  } catch (const std::invalid_argument& e) {
    EXPECT_TRUE(contains(e.what(), path + ": " + what)) << "expected \"" << path << ": " << what << "\" in: " << e.what();
  }
}

TEST(Json, SchemaViolationsNameThePath) {
  expect_rejected([](json& j) { j["schema"] = "memlab.results/2"; }, "schema", "expected \"memlab.results/1\"");
  expect_rejected([](json& j) { j.erase("schema"); }, "schema", "missing");
  expect_rejected([](json& j) { j = json::array(); }, "(root)", "expected an object");
  expect_rejected([](json& j) { j["git_sha"] = 12; }, "git_sha", "expected a string");
  expect_rejected([](json& j) { j.erase("device"); }, "device", "missing");
  expect_rejected([](json& j) { j["device"]["cc"] = 9.0; }, "device.cc", "expected a string");
  expect_rejected([](json& j) { j["device"]["cc"] = "sm_90"; }, "device.cc", "expected a compute capability");
  expect_rejected([](json& j) { j["device"]["sm_count"] = "132"; }, "device.sm_count", "expected an integer");
  expect_rejected([](json& j) { j["device"]["l2_bytes"] = -1; }, "device.l2_bytes", "expected a non-negative integer");
  expect_rejected([](json& j) { j["results"] = json::object(); }, "results", "expected an array");
  expect_rejected([](json& j) { j["results"][1] = 5; }, "results[1]", "expected an object");
  expect_rejected([](json& j) { j["results"][1]["cold"]["median_ms"] = "fast"; }, "results[1].cold.median_ms",
                  "expected a number");
  expect_rejected([](json& j) { j["results"][2]["batch"].erase("samples"); }, "results[2].batch.samples", "missing");
  expect_rejected([](json& j) { j["results"][0]["batch"]["samples"] = 2.5; }, "results[0].batch.samples",
                  "expected a non-negative integer");
  expect_rejected([](json& j) { j["results"][0]["params"]["n"] = 1.5; }, "results[0].params.n",
                  "expected an integer or a string");
  expect_rejected([](json& j) { j["results"][0]["params"] = json::array(); }, "results[0].params", "expected an object");
  expect_rejected([](json& j) { j["results"][0]["policy"].erase("vec_bytes"); }, "results[0].policy.vec_bytes",
                  "missing");
  expect_rejected([](json& j) { j["results"][0]["verified"] = 1; }, "results[0].verified", "expected true or false");
  expect_rejected([](json& j) { j["results"][0]["bytes"] = -8; }, "results[0].bytes", "expected a non-negative integer");
  expect_rejected([](json& j) { j["results"][2]["status"] = "maybe"; }, "results[2].status", "expected \"ok\"");
  expect_rejected([](json& j) { j["results"][2]["note"] = nullptr; }, "results[2].note", "expected a string");
}

// ---- table ----------------------------------------------------------------------------------------------

TEST(Table, HeaderColumnsAndValues) {
  const run_report rep = sample_report();
  const std::string out = render(rep, output_format::table);
  const auto lines = lines_of(out);
  ASSERT_EQ(lines.size(), 1u + 2u + 3u);  // device line, column headers, rule, one row per result
  EXPECT_TRUE(contains(lines[0], "NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(contains(lines[0], "3352.3 GB/s"));
  EXPECT_TRUE(contains(lines[0], "2987.5 GB/s"));
  EXPECT_TRUE(contains(lines[0], "bytes = reads + writes"));
  for (const char* h : {"lab", "variant", "dtype", "n", "src_offset", "bytes", "policy", "cold median", "cold min",
                        "batch median", "GB/s", "%peak", "%ceiling", "L2", "status"}) {
    EXPECT_TRUE(contains(lines[1], h)) << h;
  }
  // Params appear in first-seen order, before bytes.
  EXPECT_LT(lines[1].find("dtype"), lines[1].find(" n "));
  EXPECT_LT(lines[1].find("src_offset"), lines[1].find("bytes"));
  const std::string& a = lines[3];
  EXPECT_TRUE(contains(a, "vec16"));
  EXPECT_TRUE(contains(a, "2^24"));
  EXPECT_TRUE(contains(a, "128.00 MiB"));
  EXPECT_TRUE(contains(a, "t256 i4 v16 g528"));
  EXPECT_TRUE(contains(a, "45.20 µs"));
  EXPECT_TRUE(contains(a, "43.84 µs"));  // cold min = 0.97 x median
  char gbps[32];
  std::snprintf(gbps, sizeof gbps, "%.1f", rep.results[0].gbps);
  EXPECT_TRUE(contains(a, gbps)) << gbps;
  EXPECT_TRUE(contains(a, " ok"));
  EXPECT_TRUE(contains(lines[4], "2^16"));
  EXPECT_TRUE(contains(lines[4], "yes"));  // 512 KiB fits in L2
  EXPECT_TRUE(contains(lines[5], "SKIP: needs sm_100"));
  // Columns line up: "variant" starts at the same place in every row.
  const auto col = lines[1].find("variant");
  EXPECT_EQ(lines[3].find("vec16"), col);
  EXPECT_EQ(lines[4].find("memcpy"), col);
  EXPECT_EQ(lines[5].find("vec32"), col);
}

TEST(Table, LongNotesAreShortened) {
  run_report rep = sample_report();
  rep.results[2].note = std::string(200, 'x');
  const auto lines = lines_of(render(rep, output_format::table));
  EXPECT_TRUE(contains(lines[5], "SKIP: " + std::string(37, 'x') + "..."));
  EXPECT_FALSE(contains(lines[5], std::string(38, 'x')));
}

TEST(Table, NoResults) {
  run_report rep = sample_report();
  rep.results.clear();
  rep.device.measured_peak_gbps = 0;
  const std::string out = render(rep, output_format::table);
  EXPECT_TRUE(contains(out, "not measured"));
  EXPECT_TRUE(contains(out, "(no results)"));
}

// ---- CSV ----------------------------------------------------------------------------------------------

// Splits one CSV record by RFC 4180 rules.
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

TEST(Csv, HeaderValuesAndQuoting) {
  const run_report rep = sample_report();
  const auto lines = lines_of(render(rep, output_format::csv));
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0],
            "lab,variant,dtype,n,src_offset,bytes,flops,policy,cold_median_ms,cold_min_ms,cold_p25_ms,cold_p75_ms,"
            "cold_samples,cold_rel_spread,batch_median_ms,batch_min_ms,batch_samples,batch_rel_spread,gbps,"
            "batch_gbps,pct_peak,pct_measured,l2_resident,verified,status,note,hardware_bytes,hardware_gbps");
  const auto header = csv_fields(lines[0]);
  for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(csv_fields(lines[i]).size(), header.size()) << lines[i];

  const auto field = [&header](const std::vector<std::string>& row, const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? std::string("<no column>") : row[static_cast<std::size_t>(it - header.begin())];
  };
  const auto a = csv_fields(lines[1]);
  EXPECT_EQ(field(a, "variant"), "vec16");
  EXPECT_EQ(field(a, "n"), "16777216");  // raw numbers for machines
  EXPECT_EQ(field(a, "bytes"), "134217728");
  EXPECT_EQ(field(a, "policy"), "t256 i4 v16 g528");
  EXPECT_EQ(std::stod(field(a, "cold_median_ms")), 0.0452);  // exact, not rounded
  EXPECT_EQ(std::stod(field(a, "gbps")), rep.results[0].gbps);
  EXPECT_EQ(field(a, "cold_samples"), "20");
  EXPECT_EQ(field(a, "verified"), "true");
  EXPECT_EQ(field(a, "status"), "ok");
  const auto b = csv_fields(lines[2]);
  EXPECT_EQ(field(b, "src_offset"), "");  // memcpy has no such param
  EXPECT_EQ(field(b, "flops"), "7");
  EXPECT_EQ(field(b, "l2_resident"), "true");
  const auto c = csv_fields(lines[3]);
  EXPECT_EQ(field(c, "status"), "skipped");
  EXPECT_EQ(field(c, "src_offset"), "-4");
  EXPECT_EQ(field(c, "note"), skip_note);
  // The note holds a comma and quotes: quoted, inner quotes doubled.
  EXPECT_TRUE(contains(lines[3], ",\"needs sm_100, device is \"\"sm_90\"\"\""));
}

// ---- Markdown -------------------------------------------------------------------------------------------

TEST(Markdown, PreambleAndTable) {
  run_report rep = sample_report();
  rep.results[2].note = "a|b";
  const std::string out = render(rep, output_format::markdown);
  EXPECT_TRUE(contains(out, "NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(contains(out, "3352.3 GB/s"));
  EXPECT_TRUE(contains(out, "2987.5 GB/s"));
  EXPECT_TRUE(contains(out, "`memlab run copy --sizes 2^16,2^24 --out r.json`"));
  EXPECT_TRUE(contains(out, "0.1.0"));
  EXPECT_TRUE(contains(out, "0123456789ab"));
  EXPECT_TRUE(contains(out, "bytes = reads + writes"));
  EXPECT_TRUE(contains(out, "| lab | variant | dtype | n | src_offset | bytes | policy |"));
  EXPECT_TRUE(contains(out, "| --- | --- | --- | ---: | ---: | ---: | --- |"));  // words left, numbers right
  EXPECT_TRUE(contains(out, "| copy | vec16 | f32 | 2^24 | 0 | 128.00 MiB | t256 i4 v16 g528 |"));
  EXPECT_TRUE(contains(out, "SKIP: a\\|b"));  // a pipe in a cell must not split it
  // Every table row has as many cells as the header.
  const auto lines = lines_of(out);
  const auto pipes = [](const std::string& s) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.size(); ++i) n += s[i] == '|' && (i == 0 || s[i - 1] != '\\');
    return n;
  };
  std::size_t rows = 0, header_pipes = 0;
  for (const auto& l : lines) {
    if (l.empty() || l[0] != '|') continue;
    if (rows++ == 0) header_pipes = pipes(l);
    EXPECT_EQ(pipes(l), header_pipes) << l;
  }
  EXPECT_EQ(rows, 2u + 3u);
}

}  // namespace
