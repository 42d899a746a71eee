// The example lab (example_lab.cu) through the same paths as the real labs: the generated registry,
// the axis grammar, run planning, the CLI parser (its axis becomes a flag), and the runner, with a
// fake case runner on the host (streaming, interruption, errors) and the GPU's where there is one.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "harness/device.hpp"
#include "harness/registry.hpp"
#include "harness/writers.hpp"
#include "schema_check.hpp"

namespace memlab {
namespace {

using nlohmann::json;

const lab& example() {
  EXPECT_EQ(all_labs().size(), 1u);
  return *all_labs().front();
}

// Runs the memlab command line in this process over the registered labs.
int memlab_cli(std::vector<std::string> args, case_runner* runner = nullptr) {
  args.insert(args.begin(), "memlab");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return cli::main_with(static_cast<int>(argv.size()), argv.data(), {all_labs(), missing_labs()}, runner);
}

// A case runner without a GPU: every case "runs" in 1 us per MB; it can ask for a stop (as a
// signal would) after some cases, or throw at one.
struct fake_runner final : case_runner {
  std::size_t stop_after = 0;  // 0: never
  bool real_signals = false;   // stop by raising SIGINT twice at once (as `timeout` delivers it)
  std::size_t throw_at = 0;    // 1-based; 0: never
  std::vector<planned_case> seen;

  device_info open(const run_request&, std::span<const lab* const>, std::ostream&) override {
    device_info d;
    d.name = "fake GPU";
    d.cc_major = 9;
    d.sm_count = 132;
    d.l2_bytes = 50u << 20;
    d.peak_gbps = 3352.3;
    d.driver_version = 13000;
    d.runtime_version = 13000;
    return d;
  }
  result run(const planned_case& c, const run_request&) override {
    if (throw_at != 0 && seen.size() + 1 == throw_at) throw std::runtime_error("the fake GPU fell over");
    seen.push_back(c);
    const case_plan plan = c.l->plan(*c.v, c.p, {});
    result r;
    r.lab = std::string(c.l->name);
    r.variant = std::string(c.v->name);
    r.params = c.l->params(c.p);
    r.policy = plan.policy;
    r.bytes = plan.bytes;
    r.verified = true;
    r.cold.median_ms = r.batch.median_ms = r.graph.median_ms = static_cast<double>(plan.bytes) / 1e9;
    r.cold.samples = r.batch.samples = r.graph.samples = 10;
    derive(r, c.l->roof, open({}, {}, std::cerr), plan.working_set);
    if (stop_after != 0 && seen.size() == stop_after) {
      if (real_signals) {
        std::raise(SIGINT);
        std::raise(SIGINT);
      } else {
        request_stop(SIGINT);
      }
    }
    return r;
  }
  timing_info timing(const run_request& req) const override {
    timing_info t;
    t.max_time_s = req.max_time_s;
    t.target_rel_spread = 0.005;
    t.min_samples = 10;
    t.max_samples = 5000;
    t.throttle_threshold = 0.75;
    t.batch_target_ms = 1;
    t.max_queued_launches = 256;
    t.blocking_timeout_s = 10;
    return t;
  }
};

// A unique path in the temp folder that keeps `name`'s extension: "r.json" -> /tmp/r_1234.json.
std::string temp_file(const std::string& name) {
  const auto dot = name.rfind('.');
  return (std::filesystem::temp_directory_path() /
          (name.substr(0, dot) + "_" + std::to_string(::getpid()) + name.substr(dot)))
      .string();
}

json read_json(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f);
}

struct example_lab : ::testing::Test {
  void SetUp() override { request_stop(0); }
  void TearDown() override { request_stop(0); }
};

TEST_F(example_lab, is_registered_through_the_generated_list) {
  const lab& l = example();
  EXPECT_EQ(l.name, "example");
  EXPECT_TRUE(missing_labs().empty());
  ASSERT_EQ(l.axes.size(), 1u);
  EXPECT_EQ(l.axes[0].flag(), "--increment");
}

TEST_F(example_lab, its_axis_has_a_grammar_a_range_and_defaults) {
  const lab& l = example();
  const auto values = parse_axis(l.axes[0], "0..3,9");
  ASSERT_EQ(values.size(), 5u);
  EXPECT_EQ(values.back()[0], 9u);
  EXPECT_THROW((void)parse_axis(l.axes[0], "256"), std::invalid_argument);  // outside 0..255
  EXPECT_THROW((void)parse_axis(l.axes[0], ""), std::invalid_argument);
  try {
    (void)parse_axis(l.axes[0], "300");
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--increment: 300 is outside 0..255"), std::string::npos) << e.what();
  }
  const case_params p = l.make_case(dtype::u8, 100);
  EXPECT_EQ(p.axes.size(), 1u);
  EXPECT_EQ(p.axes[0].second[0], 1u);  // the default
  const auto params = l.params(l.make_case(dtype::u8, 7, {{"increment", axis_value{{5, 0, 0}, 1}}}));
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[2].name, "increment");
  EXPECT_EQ(std::get<std::int64_t>(params[2].value), 5);
  EXPECT_THROW((void)l.make_case(dtype::u8, 7, {{"stride", axis_value{}}}), std::invalid_argument);
}

TEST_F(example_lab, plans_the_product_of_sizes_and_its_axis) {
  run_request r;
  r.sizes = "100,200";
  r.axes = {{"increment", "0,7,9"}};
  r.variants = {"add"};  // the product below is of one rung
  const auto cases = plan_cases(r, all_labs());
  ASSERT_EQ(cases.size(), 6u);
  EXPECT_EQ(cases[0].p.n, 100u);
  EXPECT_EQ(cases[2].p.axes[0].second[0], 9u);
  EXPECT_EQ(cases[3].p.n, 200u);
  r.axes = {{"stride", "2"}};
  EXPECT_THROW((void)plan_cases(r, all_labs()), std::invalid_argument);
  r.axes = {{"increment", "0..255"}};
  r.sizes = "1..100:+1";
  try {
    (void)plan_cases(r, all_labs());  // 256 x 100 = 25600 cases
    ADD_FAILURE() << "a sweep over the case limit was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("more than 20000 cases"), std::string::npos) << e.what();
  }
}

// plan_run: the one place the options become the cases or the refusal (the CLI only maps it to an exit).
TEST_F(example_lab, plan_run_gives_the_cases_or_one_refusal_with_its_kind) {
  run_request r;
  r.sizes = "100";
  r.variants = {"add"};
  run_host host;
  host.gpus = 2;
  run_plan p = plan_run(r, all_labs(), {}, host);
  EXPECT_EQ(p.refused, refusal_kind::none);
  EXPECT_EQ(p.cases.size(), 1u);
  EXPECT_EQ(p.request.device_count, 2);

  r.all_devices = true;  // --device all: every GPU shown, each in turn
  p = plan_run(r, all_labs(), {}, host);
  EXPECT_EQ(p.request.devices, (std::vector<int>{0, 1}));
  EXPECT_EQ(p.cases.size(), 2u);
  host.gpus = 0;
  p = plan_run(r, all_labs(), {}, host);
  EXPECT_EQ(p.refused, refusal_kind::no_device);
  EXPECT_TRUE(p.cases.empty());
  host.asked = false;  // a fake runner plans on the host: nothing refused for the GPUs
  EXPECT_EQ(plan_run(r, all_labs(), {}, host).refused, refusal_kind::none);
  r.all_devices = false;

  r.nccl_tests_graph_launches = 10;  // changes nothing for these rungs: refused, not ignored
  p = plan_run(r, all_labs(), {}, host);
  EXPECT_EQ(p.refused, refusal_kind::usage);
  EXPECT_NE(p.why.find("--nccl-tests-graph: no chosen rung"), std::string::npos) << p.why;
  r.nccl_tests_graph_launches = 0;

  r.variants = {"nosuch"};
  EXPECT_EQ(plan_run(r, all_labs(), {}, host).refused, refusal_kind::usage);
  r.variants = {"add"};

  // A rank of a distributed job: its local rank's GPU; --device refused; a rank with no GPU is exit 3.
  host.launch.launcher = "torchrun";
  host.launch.rank = host.launch.local_rank = 1;
  host.launch.size = host.launch.local_size = 2;
  host.gpus = 2;
  p = plan_run(r, all_labs(), {}, host);
  EXPECT_EQ(p.refused, refusal_kind::none);
  EXPECT_EQ(p.request.devices, (std::vector<int>{1}));
  EXPECT_EQ(p.request.world_size, 2);
  EXPECT_FALSE(p.request.progress);  // rank 0 speaks for the run
  host.gpus = 0;
  EXPECT_EQ(plan_run(r, all_labs(), {}, host).refused, refusal_kind::too_few_gpus);
  r.device_given = true;
  EXPECT_EQ(plan_run(r, all_labs(), {}, host).refused, refusal_kind::usage);
}

// The CLI hands the planner typed values (its flag parsed them once); each lab checks them against
// its own declaration of the axis, and parses its defaults once.
TEST_F(example_lab, plans_typed_axis_values_and_checks_them_against_its_range) {
  const lab& l = example();
  run_request r;
  r.sizes = std::vector<size_spec>{{64, false, "64"}};
  r.axes = {{"increment", parse_axis(l.axes[0], "3,4")}};
  r.variants = {"add"};
  const auto cases = plan_cases(r, all_labs());
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[1].p[l.axes[0]], 4u);
  EXPECT_EQ(cases[1].size_text, "64");
  r.axes = {{"increment", std::vector<axis_value>{{{300, 0, 0}, 1}}}};
  try {
    (void)plan_cases(r, all_labs());
    ADD_FAILURE() << "a value outside the lab's range was planned";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("--increment: 300 is outside 0..255"), std::string::npos) << e.what();
  }
  EXPECT_EQ(&default_values(l.axes[0]), &default_values(l.axes[0])) << "parsed once, kept";
  EXPECT_EQ(default_values(l.axes[0]).front()[0], 1u);
}

TEST_F(example_lab, list_prints_its_ladder_as_markdown) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(memlab_cli({"list", "example", "--format", "md"}), 0);
  const std::string md = testing::internal::GetCapturedStdout();
  EXPECT_EQ(md.find("| rung | what it teaches | needs | peer |\n| --- | --- | --- | --- |\n"), 0u) << md;
  EXPECT_NE(md.find("| `add` | one byte per thread |"), std::string::npos) << md;
}

TEST_F(example_lab, the_cli_turns_its_axis_into_a_flag) {
  testing::internal::CaptureStdout();
  EXPECT_EQ(memlab_cli({"run", "--help"}), 0);
  const std::string help = testing::internal::GetCapturedStdout();
  EXPECT_NE(help.find("--increment"), std::string::npos) << help;
  EXPECT_NE(help.find("what is added to every byte"), std::string::npos);
  EXPECT_NE(help.find("axis of example"), std::string::npos);

  testing::internal::CaptureStdout();
  EXPECT_EQ(memlab_cli({"list", "example"}), 0);
  EXPECT_NE(testing::internal::GetCapturedStdout().find("--increment: what is added"), std::string::npos);

  fake_runner fake;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(memlab_cli({"run", "example", "--variant", "add", "--increment", "2,5", "--sizes", "64", "--quiet"}, &fake),
            0);
  const std::string out = testing::internal::GetCapturedStdout();
  (void)testing::internal::GetCapturedStderr();
  ASSERT_EQ(fake.seen.size(), 2u);
  EXPECT_EQ(fake.seen[0].p.axes[0].second[0], 2u);
  EXPECT_EQ(fake.seen[1].p.axes[0].second[0], 5u);
  EXPECT_NE(out.find("example: the smallest lab"), std::string::npos) << out;
  EXPECT_NE(out.find("increment"), std::string::npos) << "the axis is a column of the lab's table:\n" << out;

  testing::internal::CaptureStderr();
  EXPECT_EQ(memlab_cli({"run", "--increment", "300"}, &fake), 2);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("--increment: 300 is outside 0..255"), std::string::npos);
  testing::internal::CaptureStderr();
  EXPECT_EQ(memlab_cli({"run", "--stride", "2"}, &fake), 2);  // no lab here declares it: no such flag
  EXPECT_NE(testing::internal::GetCapturedStderr().find("--stride"), std::string::npos);
}

TEST_F(example_lab, results_stream_to_the_files_and_validate) {
  const std::string json_path = temp_file("memlab_example.json"), csv_path = temp_file("memlab_example.csv");
  fake_runner fake;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(
      memlab_cli({"run", "--out", json_path, "example", "--variant", "add", "--increment", "0..3", "--out", csv_path},
                 &fake),
      0);
  (void)testing::internal::GetCapturedStdout();
  const std::string progress = testing::internal::GetCapturedStderr();
  EXPECT_NE(progress.find("[4/4] example"), std::string::npos) << progress;
  EXPECT_NE(progress.find("example: 4 cases in "), std::string::npos) << "each lab's wall time:\n" << progress;
  EXPECT_EQ(fake.seen.size(), 4u) << "`--out FILE example`: the lab after --out is a lab, not a second file";
  const json j = read_json(json_path);
  EXPECT_EQ(j["results"].size(), 4u);
  EXPECT_EQ(j["ended"], "complete");
  EXPECT_EQ(j["argv"][1], "run");
  EXPECT_EQ(j["options"]["--increment"], "0..3");
  EXPECT_EQ(j["labs"]["example"]["params"], json({"dtype", "n", "increment"}));
  test::expect_valid_results(json_path);
  std::ifstream csv(csv_path);
  int lines = 0;
  for (std::string line; std::getline(csv, line);) ++lines;
  EXPECT_EQ(lines, 5);
  std::filesystem::remove(json_path);
  std::filesystem::remove(csv_path);
}

TEST_F(example_lab, an_interrupted_run_keeps_every_finished_case_and_exits_130) {
  const std::string path = temp_file("memlab_interrupted.json");
  fake_runner fake;
  fake.stop_after = 3;  // SIGINT arrives during the third case
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(memlab_cli({"run", "example", "--variant", "add", "--increment", "0..9", "--out", path}, &fake), 130);
  (void)testing::internal::GetCapturedStdout();
  EXPECT_NE(testing::internal::GetCapturedStderr().find("interrupted by SIGINT after 3 of 10 cases"),
            std::string::npos);
  EXPECT_EQ(fake.seen.size(), 3u) << "the run stops after the current case";
  const json j = read_json(path);
  EXPECT_EQ(j["results"].size(), 3u);
  EXPECT_EQ(j["planned_cases"], 10);
  EXPECT_EQ(j["ended"], "interrupted by SIGINT after 3 of 10 cases");
  test::expect_valid_results(path);
  std::filesystem::remove(path);
}

// `timeout -s INT` signals the child and then its process group: two SIGINTs at once are one
// request, not a "stop now" that would skip writing the results.
TEST_F(example_lab, two_signals_at_once_still_write_the_results) {
  const std::string path = temp_file("memlab_two_signals.json");
  fake_runner fake;
  fake.stop_after = 2;
  fake.real_signals = true;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(memlab_cli({"run", "example", "--variant", "add", "--increment", "0..9", "--out", path}, &fake), 130);
  (void)testing::internal::GetCapturedStdout();
  (void)testing::internal::GetCapturedStderr();
  const json j = read_json(path);
  EXPECT_EQ(j["results"].size(), 2u);
  EXPECT_EQ(j["ended"], "interrupted by SIGINT after 2 of 10 cases");
  std::filesystem::remove(path);
}

TEST_F(example_lab, an_error_keeps_what_was_measured_before_it) {
  const std::string path = temp_file("memlab_error.json");
  fake_runner fake;
  fake.throw_at = 3;
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(memlab_cli({"run", "example", "--variant", "add", "--increment", "0..9", "--out", path}, &fake), 1);
  (void)testing::internal::GetCapturedStdout();
  EXPECT_NE(testing::internal::GetCapturedStderr().find("the fake GPU fell over"), std::string::npos);
  const json j = read_json(path);
  EXPECT_EQ(j["results"].size(), 2u);
  EXPECT_NE(j["ended"].get<std::string>().find("stopped at case 3 of 10 by an error: the fake GPU fell over"),
            std::string::npos);
  test::expect_valid_results(path);
  std::filesystem::remove(path);
}

TEST_F(example_lab, a_rejected_run_leaves_no_file_and_a_failed_write_is_an_error) {
  const std::string path = temp_file("memlab_rejected.json");
  std::filesystem::remove(path);
  fake_runner fake;
  testing::internal::CaptureStderr();
  EXPECT_EQ(memlab_cli({"run", "example", "--sizes", "2^x", "--out", path}, &fake), 2);
  (void)testing::internal::GetCapturedStderr();
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(fake.seen.empty());
}

// Every case skipped: nothing measured is not success.
TEST_F(example_lab, a_run_where_every_case_is_skipped_exits_4) {
  fake_runner fake;
  struct skipping final : case_runner {
    fake_runner& f;
    explicit skipping(fake_runner& x) : f(x) {}
    device_info open(const run_request& r, std::span<const lab* const> l, std::ostream& o) override {
      return f.open(r, l, o);
    }
    result run(const planned_case& c, const run_request&) override {
      result r;
      r.lab = std::string(c.l->name);
      r.variant = std::string(c.v->name);
      r.params = c.l->params(c.p);
      r.status = result_status::skipped;
      r.note = "not on this device";
      return r;
    }
    timing_info timing(const run_request& r) const override { return f.timing(r); }
  } skip(fake);
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  EXPECT_EQ(memlab_cli({"run", "example"}, &skip), 4);
  (void)testing::internal::GetCapturedStdout();
  EXPECT_NE(testing::internal::GetCapturedStderr().find("every case was skipped"), std::string::npos);
}

// For real on the GPU when there is one (verified, timed cold, batch and graph); else exit 3 with
// what still works.
TEST_F(example_lab, runs_on_the_gpu_or_says_there_is_none) {
  bool gpu = true;
  try {
    (void)device_count();
  } catch (const no_device_error&) {
    gpu = false;
  }
  const std::string path = temp_file("memlab_example_gpu.json");
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int code = memlab_cli(
      {"run", "example", "--sizes", "0,1,4097,2^20", "--increment", "0,255", "--max-time", "0.05", "--out", path});
  (void)testing::internal::GetCapturedStdout();
  const std::string err = testing::internal::GetCapturedStderr();
  if (!gpu) {
    EXPECT_EQ(code, 3) << err;
    EXPECT_NE(err.find("memlab inspect"), std::string::npos) << err;
    EXPECT_FALSE(std::filesystem::exists(path));
    return;
  }
  ASSERT_EQ(code, 0) << err;
  const json j = read_json(path);
  ASSERT_EQ(j["results"].size(), 16u);  // 4 sizes x 2 increments x 2 rungs
  for (const auto& r : j["results"]) {
    EXPECT_EQ(r["status"], "ok") << r.dump();
    EXPECT_TRUE(r["verified"].get<bool>()) << r.dump();
    EXPECT_GT(r["cold"]["samples"].get<int>(), 0);
    EXPECT_GT(r["graph"]["samples"].get<int>(), 0) << r["graph_note"];
  }
  // (Schema validity is asserted by the host tests above, where the validator is installed.)
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace memlab
