// memlab check's rules and references on the host: floors, the warning band, siblings, latency's
// inverse, exit statuses; a reference written and read back; every way a reference file is refused.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "check/reference.hpp"
#include "check/suite.hpp"
#include "check/verdict.hpp"

namespace memlab::check {
namespace {

std::string temp(const std::string& name) {
  return (std::filesystem::temp_directory_path() / (std::to_string(::getpid()) + "_" + name)).string();
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(check_verdict, floors_take_the_larger_of_the_margin_and_the_spread) {
  const floor_rule r;
  // A small spread: the fixed margins, 10% and 5%.
  auto f = floors_of(1000, 0.001, true, r);
  EXPECT_DOUBLE_EQ(f.fail_at, 900);
  EXPECT_DOUBLE_EQ(f.warn_at, 950);
  // A wide spread (4%): 4 x 4% = 16% for a failure, 2 x 4% = 8% for a warning.
  f = floors_of(1000, 0.04, true, r);
  EXPECT_DOUBLE_EQ(f.fail_at, 840);
  EXPECT_DOUBLE_EQ(f.warn_at, 920);
  // Latency: above the median.
  f = floors_of(500, 0.001, false, r);
  EXPECT_DOUBLE_EQ(f.fail_at, 550);
  EXPECT_DOUBLE_EQ(f.warn_at, 525);
}

TEST(check_verdict, judge_has_a_warning_band_and_latency_is_inverse) {
  const floors hi = floors_of(1000, 0, true, {});
  EXPECT_EQ(judge(1000, hi, true), verdict::pass);
  EXPECT_EQ(judge(950, hi, true), verdict::pass);  // on the line: not below it
  EXPECT_EQ(judge(949, hi, true), verdict::warn);
  EXPECT_EQ(judge(900, hi, true), verdict::warn);
  EXPECT_EQ(judge(899, hi, true), verdict::fail);
  EXPECT_EQ(judge(2000, hi, true), verdict::pass);  // faster than the reference is not a fault
  const floors lo = floors_of(500, 0, false, {});
  EXPECT_EQ(judge(400, lo, false), verdict::pass);
  EXPECT_EQ(judge(520, lo, false), verdict::pass);
  EXPECT_EQ(judge(530, lo, false), verdict::warn);
  EXPECT_EQ(judge(560, lo, false), verdict::fail);
}

TEST(check_verdict, spread_is_robust_to_one_odd_value) {
  EXPECT_EQ(relative_spread(std::vector<double>{}), 0);
  EXPECT_EQ(relative_spread(std::vector<double>{5}), 0);
  EXPECT_NEAR(relative_spread(std::vector<double>{99, 100, 101}), 1.4826 * 1 / 100, 1e-12);
  // One GPU at half speed moves the median absolute deviation little.
  EXPECT_NEAR(relative_spread(std::vector<double>{99, 100, 101, 100, 50}), 1.4826 * 1 / 100, 1e-12);
  EXPECT_DOUBLE_EQ(median_of({4, 1, 3, 2}), 2.5);
}

TEST(check_verdict, siblings_are_the_values_beyond_the_margin_of_the_median) {
  const std::vector<double> bw{3000, 3010, 2990, 2800};  // the last 6.7% below the median
  EXPECT_EQ(siblings(bw, 0.05, true), (std::vector<bool>{false, false, false, true}));
  EXPECT_EQ(siblings(bw, 0.08, true), (std::vector<bool>{false, false, false, false}));
  // Faster than the others is not a fault.
  EXPECT_EQ(siblings(std::vector<double>{3000, 3000, 3300}, 0.05, true), (std::vector<bool>{false, false, false}));
  // Latency: above the median.
  EXPECT_EQ(siblings(std::vector<double>{500, 505, 560}, 0.05, false), (std::vector<bool>{false, false, true}));
  // A value not measured is never flagged nor counted; one value has no siblings.
  EXPECT_EQ(siblings(std::vector<double>{3000, NAN, 2000}, 0.05, true), (std::vector<bool>{false, false, true}));
  EXPECT_EQ(siblings(std::vector<double>{1000}, 0.05, true), (std::vector<bool>{false}));
  EXPECT_DOUBLE_EQ(sibling_margin(0.001, {}), 0.05);
  EXPECT_DOUBLE_EQ(sibling_margin(0.02, {}), 0.08);
}

TEST(check_verdict, exit_status_orders_fail_no_reference_warn) {
  using v = verdict;
  EXPECT_EQ(exit_status(std::vector<v>{v::pass, v::skip}, true), exit_pass);
  EXPECT_EQ(exit_status(std::vector<v>{v::pass, v::warn}, true), exit_warn);
  EXPECT_EQ(exit_status(std::vector<v>{v::pass, v::sibling}, true), exit_warn);
  EXPECT_EQ(exit_status(std::vector<v>{v::warn, v::fail}, true), exit_fail);
  EXPECT_EQ(exit_status(std::vector<v>{v::no_reference, v::pass}, false), exit_no_reference);
  EXPECT_EQ(exit_status(std::vector<v>{v::no_reference, v::fail}, false), exit_fail);
  EXPECT_NE(rule_text({}).find("max(0.1, 4 s)"), std::string::npos) << rule_text({});
}

TEST(check_suite, every_metric_is_one_record_with_a_unit_and_a_level) {
  std::set<std::string_view> names;
  for (const metric& m : suite()) {
    EXPECT_TRUE(names.insert(m.name).second) << m.name;
    EXPECT_FALSE(m.unit.empty()) << m.name;
    EXPECT_FALSE(m.level.empty()) << m.name;
    EXPECT_NE(m.from_lab(), m.from_nvml()) << m.name << ": a lab's case or an NVML reading, not both";
    if (m.from_lab()) {
      EXPECT_FALSE(m.measured.figure.empty()) << m.name;
    }
  }
  EXPECT_EQ(find_metric("hbm_copy")->where, scope::gpu);
  EXPECT_EQ(find_metric("peer_ce")->where, scope::pair);
  EXPECT_EQ(find_metric("all_reduce")->where, scope::node);
  EXPECT_FALSE(find_metric("l2_latency")->higher_is_better);
  EXPECT_EQ(command_of(find_metric("h2d_pinned")->measured),
            "transfer --variant ce --dtype u8 --sizes 256MiB --direction h2d --host-memory pinned");
}

reference sample_reference() {
  reference r;
  r.model = {.name = "NVIDIA H100 80GB HBM3", .memory_gib = 79.19, .sm_count = 132};
  r.machine = "host";
  r.date = "2026-11-27";
  r.memlab_version = "0.1.0";
  r.git_sha = "abcdef1";
  r.driver_version = 13000;
  r.runs = 3;
  r.gpus = 4;
  r.per_gpu.push_back(make_figure("hbm_copy", "GB/s", true, {3000, 3010, 2990}, r.rule));
  r.per_gpu.push_back(make_figure("l2_latency", "ns", false, {250, 251, 249}, r.rule));
  r.node.push_back({.gpus = 4,
                    .link = "NVSwitch",
                    .metrics = {make_figure("peer_ce", "GB/s", true, {370, 371}, r.rule),
                                make_figure("all_reduce", "GB/s", true, {360}, r.rule)}});
  return r;
}

TEST(check_reference, written_and_read_back) {
  const reference r = sample_reference();
  const std::string path = temp("ref.json");
  write(path, reference_json(r));
  const reference back = read_reference(path);
  EXPECT_EQ(back.model.name, r.model.name);
  EXPECT_EQ(back.model.sm_count, 132);
  EXPECT_EQ(back.rule, r.rule);
  ASSERT_NE(back.find("hbm_copy"), nullptr);
  EXPECT_DOUBLE_EQ(back.find("hbm_copy")->median, 3000);
  EXPECT_DOUBLE_EQ(back.find("hbm_copy")->at.fail_at, 2700);
  EXPECT_FALSE(back.find("l2_latency")->higher_is_better);
  EXPECT_DOUBLE_EQ(back.find("l2_latency")->at.fail_at, 275);
  ASSERT_NE(back.node_for(4, "NVSwitch"), nullptr);
  EXPECT_EQ(back.node_for(2, "NVSwitch"), nullptr);
  EXPECT_EQ(back.node_for(4, "PCIe"), nullptr);
  EXPECT_DOUBLE_EQ(back.node_for(4, "NVSwitch")->find("all_reduce")->median, 360);
  std::filesystem::remove(path);
}

TEST(check_reference, model_match_and_slug) {
  const model_keys ref{.name = "NVIDIA H100 80GB HBM3", .memory_gib = 79.19, .sm_count = 132};
  EXPECT_EQ(model_mismatch(ref, {.name = "NVIDIA H100 80GB HBM3", .memory_gib = 79.6, .sm_count = 132}), "");
  const std::string why = model_mismatch(ref, {.name = "NVIDIA H200", .memory_gib = 139.8, .sm_count = 132});
  EXPECT_NE(why.find("NVIDIA H100 80GB HBM3"), std::string::npos) << why;
  EXPECT_NE(why.find("NVIDIA H200"), std::string::npos) << why;
  EXPECT_NE(why.find("name, memory"), std::string::npos) << why;
  EXPECT_EQ(model_slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
  EXPECT_EQ(model_slug("  NVIDIA  A100-SXM4-40GB "), "nvidia-a100-sxm4-40gb");
}

TEST(check_reference, every_malformed_file_is_one_line_naming_the_file) {
  const std::string good = reference_json(sample_reference());
  const auto edited = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    const auto at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
  };
  struct bad {
    std::string text, needle;
  };
  const std::vector<bad> cases{
      {"{ not json", "not JSON"},
      {"[1, 2]", "not a JSON object"},
      {edited("memlab.check.reference/1", "memlab.check.reference/9"), "schema"},
      // A schema of another JSON type: a reference_error too, not nlohmann's type_error (which no caller
      // catches: the process aborted instead of exiting 2).
      {edited("\"memlab.check.reference/1\"", "1"), "schema"},
      {edited("\"memlab.check.reference/1\"", "null"), "schema"},
      {edited("\"sm_count\": 132", "\"sm_count\": \"many\""), "model: \"sm_count\" is not a whole number"},
      {edited("\"made\"", "\"mode\""), "no \"made\""},
      {edited("\"hbm_copy\"", "\"hbm_copies\""), "per_gpu.hbm_copies: no such metric"},
      {edited("\"l2_latency\"", "\"peer_ce\""), "per_gpu.peer_ce: a pair metric has no place here"},
      {edited("\"median\": 3000.0", "\"median\": -1"), "per_gpu.hbm_copy: the median must be above 0"},
      {edited("\"fail_at\": 2700.0", "\"fail_at\": 2990.0"), "fail_at must lie beyond warn_at"},
      {edited("\"gpus\": 4,\n      \"link\"", "\"gpus\": 1,\n      \"link\""), "node[0]: a node section is for 2 GPUs"},
  };
  const std::string path = temp("bad_ref.json");
  for (const auto& c : cases) {
    write(path, c.text);
    try {
      (void)read_reference(path);
      ADD_FAILURE() << "accepted: " << c.needle << "\n" << c.text;
    } catch (const reference_error& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(path + ": ", 0), 0u) << what;
      EXPECT_NE(what.find(c.needle), std::string::npos) << c.needle << " in: " << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
  std::filesystem::remove(path);
  try {
    (void)read_reference(path);
    ADD_FAILURE() << "a missing file was read";
  } catch (const reference_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot be read"), std::string::npos) << e.what();
  }
}

TEST(check_reference, found_by_model_in_a_folder_and_a_bad_file_there_named) {
  const std::string dir = temp("refs");
  std::filesystem::create_directories(dir);
  write(dir + "/nvidia-h100-80gb-hbm3.json", reference_json(sample_reference()));
  const model_keys h100{.name = "NVIDIA H100 80GB HBM3", .memory_gib = 79.2, .sm_count = 132};
  const auto found = find_reference(dir, h100);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->path, dir + "/nvidia-h100-80gb-hbm3.json");
  EXPECT_FALSE(find_reference(dir, {.name = "NVIDIA H200", .memory_gib = 139.8, .sm_count = 132}).has_value());
  EXPECT_FALSE(find_reference(dir + "/none", h100).has_value());
  write(dir + "/broken.json", "{");
  EXPECT_THROW((void)find_reference(dir, h100), reference_error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace memlab::check
