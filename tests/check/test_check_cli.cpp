// memlab check from end to end without a GPU: the real suite planned through the real labs of this
// build, run by a fake backend (a case runner that answers each case with a figure, NVML's readings
// made up), through the command line: the table, the JSON, the reference written and read, the exit
// statuses, and every usage error before any GPU work. And the binary itself without a GPU.
#include <gtest/gtest.h>

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/check.hpp"
#include "cli/cli_run.hpp"
#include "cli/commands.hpp"
#include "harness/dtype.hpp"
#include "harness/error.hpp"
#include "harness/plan.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"

namespace memlab::check {
namespace {

using nlohmann::json;

bool built(std::string_view name) {
  for (const lab* l : all_labs())
    if (l->name == name) return true;
  return false;
}
bool every_lab_built() { return built("copy") && built("hierarchy") && built("transfer"); }

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_check_" + name)).string();
}

// A node of `gpus` H100s: every case answers with the figure of its metric, times the slowdown of
// its GPU (a latency divided by it).
struct fake_node final : check_backend, case_runner {
  int gpus = 4;
  std::map<int, double> slow;  // GPU -> factor (0.5: half the bandwidth, twice the latency)
  std::map<int, std::uint64_t> ecc_volatile;  // GPU -> uncorrected ECC errors since the driver loaded
  int opened = 0, ran = 0, facts_read = 0;
  std::string throw_at;  // a rung whose case throws (as NCCL's errors do)
  std::string cuda_error_at;  // a rung whose case on GPU cuda_error_gpu throws a CUDA error (a lost context)
  int cuda_error_gpu = -1;
  std::map<int, gpu_process> before, during;  // another process on a GPU, seen before or during its cases
  std::map<int, std::uint64_t> reasons;       // GPU -> NVML's clock-event reasons while its cases ran
  std::map<int, std::string> skip_for_memory;  // GPU -> a rung the runner skips for want of memory
  int stop_after = -1;                         // a stop request (SIGTERM) after this many cases
  std::string oom_at;                          // a rung whose case on GPU oom_gpu runs out of device memory
  int oom_gpu = -1;

  int device_count() override { return gpus; }
  gpu_facts facts(int ordinal) override {
    ++facts_read;
    return {.ordinal = ordinal,
            .model = {.name = "NVIDIA H100 80GB HBM3", .memory_gib = 79.19, .sm_count = 132, .link = "NVSwitch"},
            .bus_id = "0000:1" + std::to_string(ordinal) + ":00.0",
            .driver_version = 13000};
  }
  case_runner& runner() override { return *this; }
  nvml_readings nvml_read(int ordinal) override {
    const std::uint64_t ecc = ecc_volatile.contains(ordinal) ? ecc_volatile[ordinal] : 0;
    return {.ecc_volatile = ecc, .ecc_aggregate = ecc, .max_gen = 5, .max_width = 16};
  }
  void nvml_start(int) override {}
  nvml_samples nvml_stop(int ordinal) override {
    nvml_samples s{.samples = 10, .reasons = clock_event::gpu_idle | reasons[ordinal], .gen = 5, .width = 16};
    s.self_seen = true;
    if (during.contains(ordinal)) s.processes = {during[ordinal]};
    return s;
  }
  std::vector<gpu_process> processes(int ordinal) override {
    if (!before.contains(ordinal)) return {};
    return {before[ordinal]};
  }

  device_info open(const run_request&, std::span<const lab* const>, std::ostream&) override {
    ++opened;
    return {};
  }
  result run(const planned_case& c, const run_request&) override {
    ++ran;
    if (ran == stop_after) request_stop(SIGTERM);
    if (skip_for_memory.contains(c.device) && skip_for_memory[c.device] == c.v->name) {
      result r;
      r.status = result_status::skipped;
      r.note = "needs 512.00 MiB of device memory, 100.00 MiB free";
      return r;
    }
    if (c.v->name == throw_at) throw std::runtime_error("NCCL failure: unhandled system error");
    if (c.v->name == cuda_error_at && c.device == cuda_error_gpu)
      throw cuda_error(cudaErrorIllegalAddress, "kernel<<<>>>", "/build/machine/src/labs/fake.cu", 17);
    if (c.v->name == oom_at && c.device == oom_gpu)
      throw cuda_error(cudaErrorMemoryAllocation, "cudaMalloc(&p, bytes)", "/build/machine/src/harness/x.cu", 12);
    result r;
    r.lab = std::string(c.l->name);
    r.variant = std::string(c.v->name);
    r.device = c.device;
    r.verified = true;
    const double f = slow.contains(c.device) ? slow[c.device] : 1.0;
    const std::string v(c.v->name);
    if (v == "vec16") {
      r.gbps = 3000 * f;
      r.sm_clock_mhz = 1980;
    } else if (v == "dot") {
      r.gbps = 3100 * f;
    } else if (v == "dot_l2") {
      r.batch_gbps = 9000 * f;
    } else if (v == "chase_l2") {
      const double ns = c.p.n <= (1u << 20) ? 250 : 650;
      r.measured.push_back({"ns_per_load", ns / f, "ns"});
    } else if (v == "ce") {
      r.gbps = 55 * f;
    } else if (v == "peer_ce") {
      r.gbps = 370 * f;
    } else if (v == "nccl_all_reduce") {
      r.nccl_tests_busbw_gbps = 360;
    }
    return r;
  }
  [[nodiscard]] timing_info timing(const run_request&) const override { return {}; }
};

struct outcome {
  int code = -1;
  std::string out, err;
};

outcome check_cli(std::vector<std::string> args, fake_node& node) {
  args.insert(args.begin(), {"memlab", "check"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  outcome o;
  o.code = cli::main_with(static_cast<int>(argv.size()), argv.data(), {all_labs(), missing_labs()}, nullptr, &node);
  o.out = testing::internal::GetCapturedStdout();
  o.err = testing::internal::GetCapturedStderr();
  return o;
}

json read_json(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

// The JSON Schema beside the docs, through tests/harness/validate_results.py (jsonschema).
void expect_valid(const std::string& schema, const std::string& path) {
  const std::string cmd = "python3 '" MEMLAB_SOURCE_DIR "/tests/harness/validate_results.py' '" MEMLAB_SOURCE_DIR
                          "/docs/" +
                          schema + "' '" + path + "' 2>&1";
  FILE* p = ::popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int status = ::pclose(p);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 77) GTEST_SKIP() << out;
  EXPECT_EQ(code, 0) << path << " against " << schema << ":\n" << out;
}

// The rows of a check's JSON whose verdict is not pass or skip: "metric@gpu" ("metric@0->1", "metric@node").
std::vector<std::string> flagged(const json& j) {
  std::vector<std::string> out;
  for (const auto& r : j["rows"]) {
    const std::string v = r["verdict"];
    if (v == "pass" || v == "skip") continue;
    std::string where = r["scope"] == "node" ? "node"
                        : r["scope"] == "pair"
                            ? std::to_string(r["gpu"].get<int>()) + "->" + std::to_string(r["peer"].get<int>())
                            : std::to_string(r["gpu"].get<int>());
    out.push_back(r["metric"].get<std::string>() + "@" + where + ":" + v);
  }
  return out;
}

class check_cli_test : public testing::Test {
 protected:
  void SetUp() override {
    if (!every_lab_built()) GTEST_SKIP() << "needs the copy, hierarchy and transfer labs in this build";
    dir = temp("refs");
    std::filesystem::create_directories(dir);
    ref = dir + "/nvidia-h100-80gb-hbm3.json";
    fake_node writer;
    const auto o = check_cli({"--write-reference", ref, "--runs", "2", "--quiet"}, writer);
    ASSERT_EQ(o.code, 0) << o.out << o.err;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string dir, ref;
};

TEST_F(check_cli_test, a_written_reference_holds_every_lab_metric_and_validates) {
  expect_valid("check-reference.schema.json", ref);
  const reference r = read_reference(ref);
  EXPECT_EQ(r.model.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.runs, 2);
  EXPECT_EQ(r.gpus, 4);
  for (const metric& m : suite()) {
    if (!m.has_reference()) continue;
    if (m.where == scope::gpu) {
      ASSERT_NE(r.find(m.name), nullptr) << m.name;
      EXPECT_EQ(r.find(m.name)->values.size(), 8u) << m.name << ": 4 GPUs x 2 runs";
    } else {
      ASSERT_NE(r.node_for(4, "NVSwitch"), nullptr);
      ASSERT_NE(r.node_for(4, "NVSwitch")->find(m.name), nullptr) << m.name;
    }
  }
  EXPECT_EQ(r.node_for(4, "NVSwitch")->find("peer_ce")->values.size(), 24u) << "12 ordered pairs x 2 runs";
  // A one-GPU machine's reference written over it keeps the node section of four.
  fake_node one;
  one.gpus = 1;
  ASSERT_EQ(check_cli({"--write-reference", ref, "--runs", "1", "--quiet"}, one).code, 0);
  const reference merged = read_reference(ref);
  EXPECT_EQ(merged.gpus, 1);
  EXPECT_NE(merged.node_for(4, "NVSwitch"), nullptr);
}

TEST_F(check_cli_test, a_healthy_node_passes_with_a_table_and_json) {
  fake_node node;
  const std::string out = temp("check.json");
  const auto o = check_cli({"--references", dir, "--out", out}, node);
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  EXPECT_NE(o.out.find("hbm_copy"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("0->1"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("all_reduce"), std::string::npos) << o.out;
  EXPECT_NE(o.err.find("check:     3  hbm_copy"), std::string::npos) << "a progress line per metric and GPU\n" << o.err;
  expect_valid("check.schema.json", out);
  const json j = read_json(out);
  EXPECT_EQ(j["exit_status"], 0);
  EXPECT_TRUE(flagged(j).empty()) << testing::PrintToString(flagged(j));
  EXPECT_EQ(j["counts"]["pass"].get<int>(), static_cast<int>(j["rows"].size()));
  // Every lab case ran once per GPU (hbm_copy and sm_clock share one), then the pairs and the node.
  EXPECT_EQ(node.ran, 4 * 7 + 12 + 1);
  // Each row's command is one `memlab run` can take as it stands: its GPU, its peer, the node's GPUs.
  std::map<std::string, std::string> by;
  for (const auto& r : j["rows"]) {
    const std::string key = r["metric"].get<std::string>() + "@" + (r["gpu"].is_null() ? "" : r["gpu"].dump()) +
                            (r["peer"].is_null() ? "" : ">" + r["peer"].dump());
    by[key] = r["measured_by"];
    EXPECT_EQ(r["measured_by"].get<std::string>().find('$'), std::string::npos) << r.dump();
  }
  EXPECT_EQ(by["hbm_copy@3"], "memlab run copy --variant vec16 --dtype f32 --sizes 2^26 --device 3");
  EXPECT_EQ(by["peer_ce@2>1"], "memlab run transfer --variant peer_ce --dtype u8 --sizes 256MiB --peer 1 --device 2");
  EXPECT_EQ(by["all_reduce@"], "memlab run transfer --variant nccl_all_reduce --dtype u8 --sizes 1GiB --gpus 4 "
                               "--placement out_of_place --device 0");
  EXPECT_EQ(by["ecc_volatile@1"], "NVML");
  std::filesystem::remove(out);
}

TEST_F(check_cli_test, writing_a_reference_writes_out_and_its_exit_status_is_the_tables) {
  const std::string out = temp("written.json"), again = dir + "/again.json";
  {  // --out is written beside the reference, as for a plain check
    fake_node node;
    const auto o = check_cli({"--write-reference", again, "--runs", "1", "--out", out, "--quiet"}, node);
    EXPECT_EQ(o.code, 0) << o.out << o.err;
    EXPECT_TRUE(std::filesystem::exists(again));
    ASSERT_TRUE(std::filesystem::exists(out)) << "--out ignored with --write-reference\n" << o.err;
    EXPECT_EQ(read_json(out)["exit_status"], 0);
    std::filesystem::remove(again);
    std::filesystem::remove(out);
  }
  {  // a GPU slower than its neighbours: the reference is written, the exit status says what the table says
    fake_node node;
    node.slow[1] = 0.93;
    const auto o = check_cli({"--write-reference", again, "--runs", "1", "--quiet"}, node);
    EXPECT_EQ(o.code, 5) << o.out << o.err;
    EXPECT_NE(o.out.find("(exit 5)"), std::string::npos) << o.out;
    EXPECT_TRUE(std::filesystem::exists(again));
    std::filesystem::remove(again);
  }
  {  // an NVML rule fails (an uncorrected ECC error on GPU 1): no reference from a failing machine
    fake_node node;
    node.ecc_volatile[1] = 2;
    const auto o = check_cli({"--write-reference", again, "--runs", "1", "--out", out, "--quiet"}, node);
    EXPECT_EQ(o.code, 1) << o.out << o.err;
    EXPECT_NE(o.out.find("(exit 1)"), std::string::npos) << o.out;
    EXPECT_FALSE(std::filesystem::exists(again)) << "a reference written from a GPU that fails a rule";
    EXPECT_NE(o.err.find("no reference written"), std::string::npos) << o.err;
    ASSERT_TRUE(std::filesystem::exists(out)) << "what was measured is kept\n" << o.err;
    EXPECT_EQ(flagged(read_json(out)), (std::vector<std::string>{"ecc_volatile@1:fail", "ecc_aggregate@1:warn"}));
    std::filesystem::remove(out);
  }
}

TEST_F(check_cli_test, a_competing_load_on_one_gpu_flags_that_gpu_only) {
  fake_node node;
  node.slow[3] = 0.5;
  const auto o = check_cli({"--references", dir, "--format", "json", "--quiet"}, node);
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  const json j = json::parse(o.out);
  for (const std::string& f : flagged(j)) {
    EXPECT_NE(f.find("3"), std::string::npos) << f << ": only GPU 3 and its pairs";
  }
  const auto f = flagged(j);
  EXPECT_NE(std::find(f.begin(), f.end(), "hbm_copy@3:fail"), f.end()) << testing::PrintToString(f);
  EXPECT_NE(std::find(f.begin(), f.end(), "hbm_latency@3:fail"), f.end()) << testing::PrintToString(f);
}

TEST_F(check_cli_test, a_gpu_slower_than_its_siblings_but_above_the_floor_is_a_sibling) {
  fake_node node;
  node.slow[1] = 0.93;  // 7% below the others: above the floor (90%), beyond the 5% sibling margin
  const auto o = check_cli({"--references", dir, "--format", "json", "--quiet"}, node);
  EXPECT_EQ(o.code, 5) << o.out << o.err;
  const auto f = flagged(json::parse(o.out));
  EXPECT_NE(std::find(f.begin(), f.end(), "hbm_copy@1:sibling"), f.end()) << testing::PrintToString(f);
  EXPECT_NE(std::find(f.begin(), f.end(), "l2_latency@1:sibling"), f.end()) << testing::PrintToString(f);
  for (const std::string& x : f) EXPECT_NE(x.find('1'), std::string::npos) << x;
}

TEST_F(check_cli_test, a_reference_out_of_reach_fails_naming_the_metric) {
  json j = read_json(ref);
  for (const char* k : {"median", "warn_at", "fail_at"})
    j["per_gpu"]["hbm_read"][k] = j["per_gpu"]["hbm_read"][k].get<double>() * 2;
  const std::string edited = temp("edited.json");
  std::ofstream(edited) << j.dump(2);
  fake_node node;
  const auto o = check_cli({"--reference", edited, "--quiet"}, node);
  EXPECT_EQ(o.code, 1) << o.out;
  std::istringstream lines(o.out);
  int failed = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(" fail ") == std::string::npos || line.find("(exit ") != std::string::npos) continue;
    ++failed;
    EXPECT_NE(line.find("hbm_read"), std::string::npos) << line;
    EXPECT_NE(line.find("HBM"), std::string::npos) << "names the level: " << line;
  }
  EXPECT_EQ(failed, 4) << o.out;
  std::filesystem::remove(edited);
}

TEST_F(check_cli_test, no_reference_for_the_model_measures_and_says_how_to_write_one) {
  fake_node node;
  // A folder with another model's reference only.
  const std::string empty = temp("other");
  std::filesystem::create_directories(empty);
  json other = read_json(ref);
  other["model"]["name"] = "NVIDIA H200";
  std::ofstream(empty + "/nvidia-h200.json") << other.dump(2);
  const auto o = check_cli({"--references", empty, "--quiet"}, node);
  EXPECT_EQ(o.code, 6) << o.out << o.err;
  EXPECT_NE(o.err.find("--write-reference"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("no_reference"), std::string::npos) << o.out;
  std::filesystem::remove_all(empty);
}

TEST_F(check_cli_test, an_error_in_one_case_fails_that_metric_and_the_check_goes_on) {
  fake_node node;
  node.throw_at = "nccl_all_reduce";
  const auto o = check_cli({"--references", dir, "--format", "json", "--quiet"}, node);
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  const json j = json::parse(o.out);
  EXPECT_EQ(flagged(j), std::vector<std::string>{"all_reduce@node:fail"});
  for (const auto& r : j["rows"]) {
    if (r["metric"] == "all_reduce") {
      EXPECT_NE(r["note"].get<std::string>().find("NCCL failure"), std::string::npos) << r.dump();
    }
  }
}

TEST_F(check_cli_test, a_cuda_error_stops_the_check_and_keeps_what_it_measured) {
  fake_node node;
  node.cuda_error_at = "dot";  // hbm_read, on GPU 2: GPUs 0 and 1 were measured before it
  node.cuda_error_gpu = 2;
  const std::string out = temp("stopped.json");
  const auto o = check_cli({"--references", dir, "--out", out, "--quiet"}, node);
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  EXPECT_NE(o.out.find("(exit 1)"), std::string::npos) << "the table, with what was measured\n" << o.out;
  ASSERT_TRUE(std::filesystem::exists(out)) << "--out written\n" << o.err;
  const json j = read_json(out);
  EXPECT_EQ(j["exit_status"], 1);
  EXPECT_EQ(flagged(j), std::vector<std::string>{"hbm_read@2:fail"});
  int passed = 0, lab_rows_after = 0;
  bool after = false;
  for (const auto& r : j["rows"]) {
    if (r["metric"] == "hbm_read" && r["gpu"] == 2) {
      EXPECT_NE(r["note"].get<std::string>().find("cudaErrorIllegalAddress"), std::string::npos) << r.dump();
      EXPECT_EQ(r["note"].get<std::string>().find("/build/machine"), std::string::npos) << "no build path: " << r.dump();
      EXPECT_EQ(r["fault"], "cuda_error") << r.dump();
      EXPECT_EQ(r["action"], "reset") << r.dump();
      after = true;
      continue;
    }
    if (r["verdict"] == "pass") ++passed;
    if (!after) continue;
    // Nothing after the error is judged as if it had run: no lab case, and no clock events without samples
    // (GPU 2's were sampled during its HBM copy).
    if (r["metric"] == "sm_clock" && r["gpu"] == 2) {
      EXPECT_EQ(r["verdict"], "pass") << "read from the HBM copy's case, which ran before the error: " << r.dump();
    } else if (r["measured_by"] != "NVML") {
      ++lab_rows_after;
      EXPECT_EQ(r["verdict"], "skip") << r.dump();
      EXPECT_NE(r["note"].get<std::string>().find("CUDA error on GPU 2"), std::string::npos) << r.dump();
    } else if (r["metric"] == "clock_events" && r["gpu"] == 3) {
      EXPECT_EQ(r["verdict"], "skip") << "no case ran on GPU 3: nothing sampled, nothing passed\n" << r.dump();
    }
  }
  EXPECT_GE(passed, 2 * 13 + 2) << "GPUs 0 and 1 and GPU 2's HBM copy and SM clock kept";
  EXPECT_EQ(lab_rows_after, 5 + 8 + 12 + 1) << "GPU 2's other lab rows, GPU 3's, the pairs, the node";
  std::filesystem::remove(out);
}

TEST_F(check_cli_test, one_gpu_checked_skips_the_node_with_the_reason) {
  fake_node node;
  const auto o = check_cli({"--references", dir, "--devices", "2", "--format", "json", "--quiet"}, node);
  EXPECT_EQ(o.code, 0) << o.out << o.err;
  const json j = json::parse(o.out);
  for (const auto& r : j["rows"]) {
    if (r["scope"] == "gpu") {
      EXPECT_EQ(r["gpu"], 2);
    } else {
      EXPECT_EQ(r["verdict"], "skip");
      EXPECT_NE(r["note"].get<std::string>().find("one GPU checked"), std::string::npos);
    }
  }
}

TEST_F(check_cli_test, usage_errors_come_before_any_gpu_work) {
  const std::string bad = temp("bad.json");
  std::ofstream(bad) << "{ \"schema\": ";
  json other = read_json(ref);
  other["model"]["name"] = "NVIDIA H200";
  other["model"]["memory_gib"] = 139.8;
  const std::string h200 = temp("h200.json");
  std::ofstream(h200) << other.dump(2);
  json typed = read_json(ref);
  typed["schema"] = 1;  // valid JSON, a key of the wrong type
  const std::string schema_number = temp("schema_number.json");
  std::ofstream(schema_number) << typed.dump(2);
  struct usage_case {
    std::vector<std::string> args;
    std::string needle;
  };
  const std::vector<usage_case> cases{
      {{"--reference", temp("missing.json")}, "missing.json: cannot be read"},
      {{"--reference", bad}, "bad.json: not JSON"},
      {{"--reference", h200}, "the reference is for NVIDIA H200"},
      {{"--reference", schema_number}, "schema_number.json: schema"},
      {{"--devices", "4"}, "--devices: GPU 4 is not visible (this machine shows 4 GPUs: 0..3)"},
      {{"--devices", "0,1,0"}, "--devices: GPU 0 given twice"},
      {{"--devices", "3,0..3"}, "--devices: GPU 3 given twice"},
      {{"--runs", "2"}, "--runs: only with --write-reference"},
      {{"--reference", ref, "--write-reference", temp("w.json")}, "one or the other"},
      {{"--write-reference", bad}, "--write-reference"},
      {{"--references", temp("none")}, "--references"},
  };
  for (const auto& c : cases) {
    fake_node node;
    const auto o = check_cli(c.args, node);
    EXPECT_EQ(o.code, 2) << testing::PrintToString(c.args) << o.out << o.err;
    EXPECT_EQ(memlab::test::lines_of(o.err), 1u) << o.err;
    EXPECT_NE(o.err.find(c.needle), std::string::npos) << c.needle << " in " << o.err;
    EXPECT_EQ(node.opened + node.ran, 0) << "GPU work before a usage error: " << testing::PrintToString(c.args);
  }
  // A references folder named by the environment that is not there: the same as --references.
  {
    setenv("MEMLAB_REFERENCES", temp("no_such_folder").c_str(), 1);
    fake_node env_node;
    const auto e = check_cli({}, env_node);
    unsetenv("MEMLAB_REFERENCES");
    EXPECT_EQ(e.code, 2) << e.out << e.err;
    EXPECT_EQ(memlab::test::lines_of(e.err), 1u) << e.err;
    EXPECT_NE(e.err.find("MEMLAB_REFERENCES: "), std::string::npos) << e.err;
    EXPECT_EQ(env_node.opened + env_node.ran, 0) << "GPU work before a usage error";
  }
  // Another model names both.
  fake_node node;
  const auto o = check_cli({"--reference", h200}, node);
  EXPECT_NE(o.err.find("this GPU is NVIDIA H100 80GB HBM3"), std::string::npos) << o.err;
  std::filesystem::remove(bad);
  std::filesystem::remove(h200);
  std::filesystem::remove(schema_number);
}

// The rows of a check's JSON that carry a fault: "metric@where:verdict:fault:action".
std::vector<std::string> faulted(const json& j) {
  std::vector<std::string> out;
  for (const auto& r : j["rows"]) {
    if (r["fault"].is_null()) continue;
    std::string where = r["scope"] == "node" ? "node"
                        : r["scope"] == "pair"
                            ? std::to_string(r["gpu"].get<int>()) + "->" + std::to_string(r["peer"].get<int>())
                            : std::to_string(r["gpu"].get<int>());
    out.push_back(fmt::format("{}@{}:{}:{}:{}", r["metric"].get<std::string>(), where, r["verdict"].get<std::string>(),
                              r["fault"].get<std::string>(), r["action"].get<std::string>()));
  }
  return out;
}

TEST_F(check_cli_test, another_process_computing_on_a_gpu_makes_its_flagged_rows_busy_and_is_named_first) {
  fake_node node;
  node.slow[3] = 0.5;  // what a competing job does to GPU 3's figures
  node.during[3] = {.pid = 4242, .name = "python3", .used_mib = 1234.0, .seen = "during"};
  node.reasons[3] = clock_event::sw_power_cap;  // the other job's power draw
  const std::string out = temp("busy.json");
  const auto o = check_cli({"--references", dir, "--out", out, "--quiet"}, node);
  EXPECT_EQ(o.code, 7) << o.out << o.err;
  EXPECT_EQ(o.out.find("GPU 3 was busy: pid 4242 python3 holding 1234 MiB (during the check)"),
            o.out.find('\n') + 1)
      << "the second line of the table names the process\n"
      << o.out;
  const json j = read_json(out);
  expect_valid("check.schema.json", out);
  EXPECT_TRUE(j["busy"]);
  EXPECT_EQ(j["action"], "rerun");
  EXPECT_EQ(j["gpus"][3]["processes"][0]["pid"], 4242);
  EXPECT_EQ(j["gpus"][3]["processes"][0]["name"], "python3");
  EXPECT_FALSE(j["gpus"][0]["busy"]);
  const auto f = faulted(j);
  ASSERT_FALSE(f.empty());
  for (const std::string& x : f) {
    EXPECT_NE(x.find(":busy:gpu_busy:rerun"), std::string::npos) << x << ": not blamed on the hardware";
    EXPECT_NE(x.find('3'), std::string::npos) << x << ": GPU 3 and its pairs only";
  }
  EXPECT_NE(std::find(f.begin(), f.end(), "hbm_copy@3:busy:gpu_busy:rerun"), f.end()) << testing::PrintToString(f);
  EXPECT_NE(std::find(f.begin(), f.end(), "clock_events@3:busy:gpu_busy:rerun"), f.end()) << testing::PrintToString(f);
  for (const auto& r : j["rows"]) {
    if (r["verdict"] != "busy") continue;
    EXPECT_NE(r["points_at"].get<std::string>().find("pid 4242 python3"), std::string::npos) << r.dump();
    for (const char* part : {"HBM", "clock", "PCIe", "NVLink"})
      EXPECT_EQ(r["points_at"].get<std::string>().find(part), std::string::npos) << r.dump();
  }
  // The replay judges it the same way.
  fake_node unused;
  const auto again = check_cli({"--replay", out, "--references", dir, "--format", "json", "--quiet"}, unused);
  EXPECT_EQ(again.code, 7) << again.err;
  EXPECT_EQ(faulted(json::parse(again.out)), f);
  EXPECT_EQ(unused.opened + unused.ran + unused.facts_read, 0) << "a replay touches no GPU";
  std::filesystem::remove(out);
}

TEST_F(check_cli_test, a_busy_gpu_still_fails_what_no_process_can_move) {
  fake_node node;
  node.during[1] = {.pid = 77, .name = "train", .seen = "during"};
  node.ecc_volatile[1] = 3;
  node.slow[1] = 0.5;
  const auto o = check_cli({"--references", dir, "--format", "json", "--quiet"}, node);
  EXPECT_EQ(o.code, 1) << o.out << o.err;
  const auto f = faulted(json::parse(o.out));
  EXPECT_NE(std::find(f.begin(), f.end(), "ecc_volatile@1:fail:ecc_uncorrected:reset"), f.end())
      << testing::PrintToString(f);
  EXPECT_NE(std::find(f.begin(), f.end(), "hbm_copy@1:busy:gpu_busy:rerun"), f.end()) << testing::PrintToString(f);
}

TEST_F(check_cli_test, memory_another_process_holds_is_busy_and_never_a_links_fault) {
  {  // the runner skips the HBM copy for want of memory; another process holds it: busy, not a skip
    fake_node node;
    node.skip_for_memory[0] = "vec16";
    node.before[0] = {.pid = 99, .name = "holder", .used_mib = 79000.0, .seen = "before"};
    const auto o = check_cli({"--references", dir, "--format", "json", "--quiet", "--devices", "0"}, node);
    EXPECT_EQ(o.code, 7) << o.out << o.err;
    const auto f = faulted(json::parse(o.out));
    EXPECT_EQ(f, (std::vector<std::string>{"hbm_copy@0:busy:gpu_busy:rerun", "sm_clock@0:busy:gpu_busy:rerun"}));
  }
  {  // a CUDA out-of-memory error in a PCIe case with the memory held: busy, and the check goes on
    fake_node node;
    node.oom_at = "ce";
    node.oom_gpu = 0;
    node.before[0] = {.pid = 99, .name = "holder", .used_mib = 79000.0, .seen = "before"};
    const auto o = check_cli({"--references", dir, "--format", "json", "--quiet", "--devices", "0,1"}, node);
    EXPECT_EQ(o.code, 7) << o.out << o.err;
    const json j = json::parse(o.out);
    const auto f = faulted(j);
    EXPECT_EQ(f, (std::vector<std::string>{"h2d_pinned@0:busy:gpu_busy:rerun", "d2h_pinned@0:busy:gpu_busy:rerun"}));
    for (const auto& r : j["rows"]) {
      EXPECT_EQ(r["note"].get<std::string>().find("/build/machine"), std::string::npos) << r.dump();
      if (r["gpu"] == 1 && r["scope"] == "gpu") {
        EXPECT_EQ(r["verdict"], "pass") << "the check went on: " << r.dump();
      }
    }
  }
  {  // no other process in sight: the allocation is the GPU's state, never the PCIe link
    fake_node node;
    node.oom_at = "ce";
    node.oom_gpu = 0;
    const auto o = check_cli({"--references", dir, "--format", "json", "--quiet", "--devices", "0"}, node);
    EXPECT_EQ(o.code, 1) << o.out << o.err;
    const json j = json::parse(o.out);
    EXPECT_EQ(faulted(j), (std::vector<std::string>{"h2d_pinned@0:fail:out_of_memory:reset",
                                                    "d2h_pinned@0:fail:out_of_memory:reset"}));
    for (const auto& r : j["rows"])
      if (!r["points_at"].is_null()) {
        EXPECT_EQ(r["points_at"].get<std::string>().find("PCIe"), std::string::npos) << r.dump();
      }
  }
}

TEST_F(check_cli_test, a_sigterm_writes_the_rows_measured_and_exits_130) {
  fake_node node;
  node.stop_after = 9;  // in GPU 1's cases (7 cases a GPU)
  const std::string out = temp("interrupted.json"), prom = temp("interrupted.prom");
  const auto o = check_cli({"--references", dir, "--out", out, "--out", prom, "--quiet"}, node);
  request_stop(0);
  EXPECT_EQ(o.code, 130) << o.out << o.err;
  EXPECT_EQ(node.ran, 9) << "no case after the stop request";
  EXPECT_NE(o.out.find("interrupted by SIGTERM"), std::string::npos) << o.out;
  ASSERT_TRUE(std::filesystem::exists(out));
  expect_valid("check.schema.json", out);
  const json j = read_json(out);
  EXPECT_TRUE(j["interrupted"]);
  EXPECT_EQ(j["interrupted_by"], "SIGTERM");
  EXPECT_EQ(j["exit_status"], 130);
  int passed = 0, interrupted = 0;
  for (const auto& r : j["rows"]) {
    passed += r["verdict"] == "pass" ? 1 : 0;
    interrupted += r["verdict"] == "interrupted" ? 1 : 0;
  }
  EXPECT_GE(passed, 13 + 2) << "GPU 0's rows and GPU 1's first cases kept";
  EXPECT_EQ(passed + interrupted, static_cast<int>(j["rows"].size()));
  EXPECT_NE(std::ifstream(prom).peek(), EOF) << "the textfile written too";
  fake_node unused;
  EXPECT_EQ(check_cli({"--replay", out, "--references", dir, "--quiet"}, unused).code, 130) << "replayed alike";
  // A signal before the first case: every row interrupted, and still a file.
  fake_node early;
  request_stop(SIGTERM);
  const auto e = check_cli({"--references", dir, "--out", out, "--quiet"}, early);
  request_stop(0);
  EXPECT_EQ(e.code, 130) << e.out << e.err;
  EXPECT_EQ(early.ran, 0);
  EXPECT_EQ(read_json(out)["counts"]["interrupted"].get<int>(), static_cast<int>(read_json(out)["rows"].size()));
  std::filesystem::remove(out);
  std::filesystem::remove(prom);
}

// Every lab case of the suite is one case of its lab that the lab itself does not refuse on an H100 of a
// 4-GPU NVSwitch node, and fits its memory: what the fake runner above never asks.
TEST(check_suite, every_lab_case_is_one_case_its_lab_runs_on_an_h100) {
  if (!every_lab_built()) GTEST_SKIP() << "needs the copy, hierarchy and transfer labs in this build";
  device_info h100;
  h100.ordinal = 0;
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.cc_major = 9;
  h100.sm_count = 132;
  h100.max_threads_per_sm = 2048;
  h100.smem_per_block_optin = 227 * 1024;
  h100.l2_bytes = 50u << 20;
  h100.global_mem_bytes = 85ull << 30;
  h100.device_count = 4;
  h100.nvlink_links = 18;
  h100.nvlink_gbps = 478.1;
  h100.nvlink_link_gbps = 26.562;
  h100.nvlink_switch = true;
  int checked = 0;
  for (const metric& m : suite()) {
    if (!m.from_lab() || m.where == scope::pair) continue;  // a pair's refusal asks the driver about peer access
    // What the check plans on a node of 4 (the node's case on GPU 0 over all 4).
    const case_plan_result plan = plan_case(m.measured, all_labs(), missing_labs(), 0, -1, 4, 4);
    if (!plan.planned && m.where == scope::node && plan.why.find("built without") != std::string::npos)
      continue;  // built without NCCL: the check skips it, saying so
    ASSERT_TRUE(plan.planned.has_value()) << m.name << ": " << plan.why;
    const planned_case& c = *plan.planned;
    EXPECT_EQ(c.l->why_not(*c.v, c.p, h100), std::nullopt) << m.name;
    EXPECT_LT(c.l->plan(*c.v, c.p, h100).device_bytes(), 8ull << 30) << m.name;
    // The figure it reads is a result field, or one its lab's kernels measure.
    if (m.measured.figure != "ns_per_load") {
      EXPECT_NO_THROW((void)result_field_named(m.measured.figure)) << m.name << ": " << m.measured.figure;
    }
    ++checked;
  }
  EXPECT_GE(checked, 8) << "the per-GPU lab metrics, and the all-reduce where NCCL is built";
}

// A malformed case is caught here, not on a node: a word the lab's axis does not take, a rung or a lab it
// does not have, a size the lab refuses.
TEST(check_suite, a_malformed_case_says_why_it_plans_nothing) {
  if (!every_lab_built()) GTEST_SKIP() << "needs the copy, hierarchy and transfer labs in this build";
  const lab_case good{.lab = "transfer", .variant = "ce", .type = dtype::u8, .count = 256ull << 20, .bytes = true,
                      .axes = {{"direction", "d2h"}, {"host_memory", "pinned"}}, .figure = "gbps"};
  ASSERT_TRUE(plan_case(good, all_labs(), missing_labs(), 0, -1, 1, 1).planned) << "the suite's own d2h case";
  EXPECT_EQ(command_of(good), "transfer --variant ce --dtype u8 --sizes 256MiB --direction d2h --host-memory pinned");
  struct bad {
    lab_case c;
    std::string why;
  };
  lab_case word = good, rung = good, lab = good, axis = good;
  word.axes = {{"direction", "sideways"}};
  rung.variant = "ce_fast";
  lab.lab = "nolab";
  axis.axes = {{"tile", std::uint64_t{4}}};
  for (const auto& [c, why] : std::vector<bad>{{word, "--direction takes"},
                                               {rung, "lab transfer has no rung 'ce_fast'"},
                                               {lab, "unknown lab 'nolab'"},
                                               {axis, "lab transfer has no axis tile"}}) {
    const auto p = plan_case(c, all_labs(), missing_labs(), 0, -1, 1, 1);
    EXPECT_FALSE(p.planned.has_value()) << command_of(c);
    EXPECT_NE(p.why.find(why), std::string::npos) << why << " in " << p.why;
  }
  const rung_lookup copy = find_rung(all_labs(), missing_labs(), "copy", "vec16");
  EXPECT_TRUE(copy.why.empty() && copy.l != nullptr && copy.v != nullptr && copy.v->name == "vec16") << copy.why;
}

// The binary, as a user meets it on a machine without a GPU.
TEST(check_binary, without_a_gpu_exits_3_and_bad_input_exits_2) {
  const auto none = memlab::test::memlab("check", memlab::test::no_gpu);
  EXPECT_EQ(none.code, 3) << none.output;
  EXPECT_NE(none.output.find("memlab list"), std::string::npos) << none.output;
  const auto missing = memlab::test::memlab("check --reference /nonexistent/ref.json", memlab::test::no_gpu);
  EXPECT_EQ(missing.code, 2) << missing.output;
  EXPECT_EQ(memlab::test::lines_of(missing.output), 1u) << missing.output;
  EXPECT_NE(missing.output.find("/nonexistent/ref.json"), std::string::npos) << missing.output;
  const auto help = memlab::test::memlab("check --help");
  EXPECT_EQ(help.code, 0);
  for (const char* s : {"--devices", "--reference", "--write-reference", "--runs", "5 a warning", "6 no reference"})
    EXPECT_NE(help.output.find(s), std::string::npos) << s;
}

}  // namespace
}  // namespace memlab::check
