// memlab check's check file and what reads it, without a GPU: the fault codes as docs/check.md lists
// them, every committed check file (either schema) replayed with its own verdicts, a fake run written
// and replayed to the same verdicts, the writers (Prometheus's text format, the one line) and the one
// declaration of a row's fields they all read, another process on a GPU (busy), a stop request
// (interrupted), --replay's bad input, and the files --out names (%N).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check/check.hpp"
#include "check/faults.hpp"
#include "cli/cli_run.hpp"
#include "cli/commands.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"

namespace memlab::check {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string temp(const std::string& name) {
  return (fs::temp_directory_path() / (std::to_string(::getpid()) + "_replay_" + name)).string();
}

struct outcome {
  int code = -1;
  std::string out, err;
};

// memlab check in process, no GPU backend: what --replay needs.
outcome check_cli(std::vector<std::string> args) {
  args.insert(args.begin(), {"memlab", "check"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  outcome o;
  o.code = cli::main_with(static_cast<int>(argv.size()), argv.data(), {all_labs(), missing_labs()});
  o.out = testing::internal::GetCapturedStdout();
  o.err = testing::internal::GetCapturedStderr();
  return o;
}

// Every committed check file, of every schema.
std::vector<std::string> committed_check_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(MEMLAB_SOURCE_DIR "/docs/results")) {
    if (e.path().extension() != ".json") continue;
    const std::string text = read_text(e.path().string());
    if (text.find("\"schema\": \"memlab.check/") != std::string::npos) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> verdicts(const json& j) {
  std::vector<std::string> out;
  for (const auto& r : j["rows"])
    out.push_back(fmt::format("{}@{}>{}:{}", r["metric"].get<std::string>(), r["gpu"].dump(), r["peer"].dump(),
                              r["verdict"].get<std::string>()));
  return out;
}

TEST(check_faults, docs_check_md_lists_the_codes_of_the_code_and_nothing_else) {
  const std::string page = read_text(MEMLAB_SOURCE_DIR "/docs/check.md");
  const auto begin = page.find("<!-- fault codes:");
  const auto end = page.find("<!-- end of fault codes -->");
  ASSERT_NE(begin, std::string::npos) << "docs/check.md has no fault-code table";
  ASSERT_NE(end, std::string::npos);
  std::istringstream lines(page.substr(begin, end - begin));
  std::vector<std::string> documented;
  const std::regex row(R"(^\| `([a-z0-9_]+)` \| (.+) \| (.+) \| (.+) \| `([a-z]+)` \|$)");
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_match(line, m, row)) continue;
    const fault* f = find_fault(m[1].str());
    ASSERT_NE(f, nullptr) << "docs/check.md lists a code the code does not have: " << line;
    EXPECT_EQ(m[2].str(), f->raised_by) << line;
    EXPECT_EQ(m[3].str(), f->points_at) << line;
    EXPECT_EQ(m[4].str(), f->means) << line;
    EXPECT_EQ(m[5].str(), to_string(f->on_fail)) << line;
    documented.push_back(m[1].str());
  }
  std::vector<std::string> coded;
  for (const fault& f : faults()) coded.emplace_back(f.code);
  EXPECT_EQ(documented, coded) << "the page's table, row for row in the code's order";
}

TEST(check_faults, every_metric_names_a_code_and_every_code_is_raised) {
  for (const metric& m : suite()) {
    const fault* f = find_fault(m.fault);
    ASSERT_NE(f, nullptr) << m.name << ": no fault code " << m.fault;
    EXPECT_NE(std::string(f->raised_by).find(m.name), std::string::npos)
        << m.name << " raises " << f->code << ", whose row names " << f->raised_by;
  }
  for (std::string_view c : {fault_code::gpu_busy, fault_code::data_corruption, fault_code::cuda_error,
                             fault_code::case_error, fault_code::out_of_memory})
    EXPECT_NE(find_fault(c), nullptr) << c;
  EXPECT_EQ(most_urgent(action::monitor, action::replace), action::replace);
  EXPECT_EQ(most_urgent(action::drain, action::reset), action::drain);
  EXPECT_EQ(most_urgent(action::rerun, action::monitor), action::rerun);
}

TEST(check_faults, clock_event_words_read_back_as_their_mask) {
  for (std::uint64_t mask : {0ull, 0x4ull, 0x8ull | 0x40ull, 0x1ull | 0x2ull | 0x80ull, 0x1ffull, 0x1000ull | 0x4ull}) {
    const auto back = clock_events_named(clock_event_text(mask));
    ASSERT_TRUE(back.has_value()) << clock_event_text(mask);
    EXPECT_EQ(*back, mask) << clock_event_text(mask);
  }
  EXPECT_FALSE(clock_events_named("a slow fan").has_value());
}

// The committed runs, judged again by the committed reference: the verdicts they were written with,
// row for row, and the same exit status; each replay valid against the schema of its version.
TEST(check_replay, every_committed_check_file_replays_with_its_own_verdicts) {
  const auto files = committed_check_files();
  ASSERT_GE(files.size(), 5u) << "the 4-GPU runs, the load, the subset, the one-GPU run";
  int replayed = 0;
  for (const std::string& f : files) {
    const json was = json::parse(read_text(f));
    const std::string out = temp("replayed.json");
    const auto o = check_cli({"--replay", f, "--out", out, "--quiet", "--format", "line"});
    EXPECT_EQ(o.code, was["exit_status"].get<int>()) << f << "\n" << o.out << o.err;
    const json now = json::parse(read_text(out));
    EXPECT_EQ(now["schema"], "memlab.check/2");
    EXPECT_EQ(verdicts(now), verdicts(was)) << f;
    EXPECT_EQ(now["started"].get<std::string>().size(), 20u) << now["started"];
    EXPECT_EQ(now["replay"]["path"], f);
    EXPECT_EQ(now["replay"]["schema"], was["schema"]);
    EXPECT_EQ(now["machine"], was["machine"]);
    for (const auto& r : now["rows"]) {
      // A busy row (another process on the GPU) carries its code too: gpu_busy, rerun.
      const bool flagged = r["verdict"] == "fail" || r["verdict"] == "warn" || r["verdict"] == "sibling" ||
                           r["verdict"] == "busy";
      EXPECT_EQ(r["fault"].is_string(), flagged) << r.dump();
      EXPECT_EQ(r["action"].is_string(), flagged) << r.dump();
      if (flagged) {
        EXPECT_NE(r["reason"].get<std::string>().find(r["metric"].get<std::string>()), std::string::npos);
      }
    }
    fs::remove(out);
    ++replayed;
  }
  EXPECT_EQ(replayed, static_cast<int>(files.size()));
}

// The 4 x H100 run with a competing copy on GPU 3: GPU 3's rows and the node's all-reduce, which GPU 3
// takes part in, flagged with their codes; the one line names GPU 3, each metric and the action.
TEST(check_replay, the_load_on_gpu_3_gives_its_faults_and_actions) {
  const auto o = check_cli({"--replay", MEMLAB_SOURCE_DIR "/docs/results/h100x4/check/load.json", "--format", "json"});
  ASSERT_EQ(o.code, 1) << o.err;
  const json j = json::parse(o.out);
  std::vector<std::string> faults_found;
  for (const auto& r : j["rows"]) {
    if (!r["fault"].is_string()) continue;
    faults_found.push_back(fmt::format("{}@{}>{}:{}:{}", r["metric"].get<std::string>(), r["gpu"].dump(),
                                       r["peer"].dump(), r["fault"].get<std::string>(),
                                       r["action"].get<std::string>()));
  }
  EXPECT_EQ(faults_found, (std::vector<std::string>{
                              "l2_latency@3>null:l2_latency:drain", "hbm_latency@3>null:hbm_latency:drain",
                              "d2h_pinned@3>null:pcie_bandwidth:monitor", "peer_ce@3>0:nvlink_bandwidth:drain",
                              "peer_ce@3>1:nvlink_bandwidth:drain", "peer_ce@3>2:nvlink_bandwidth:drain",
                              "all_reduce@null>null:collective_bandwidth:drain"}));
  EXPECT_EQ(j["action"], "drain");
  const auto line = check_cli({"--replay", MEMLAB_SOURCE_DIR "/docs/results/h100x4/check/load.json", "--format",
                               "line", "--line-max", "120"});
  EXPECT_EQ(line.code, 1);
  EXPECT_EQ(memlab::test::lines_of(line.out), 1u) << line.out;
  EXPECT_LE(line.out.size(), 121u) << line.out;
  EXPECT_EQ(line.out.rfind("memlab check fail (drain): GPU 3 l2_latency 160.5 ns fail (drain)", 0), 0u) << line.out;
  EXPECT_NE(line.out.find("more"), std::string::npos) << line.out;
}

TEST(check_replay, no_path_of_the_build_machine_in_what_a_replay_writes) {
  for (const char* form : {"table", "json", "prometheus", "line"}) {
    const auto o = check_cli({"--replay", MEMLAB_SOURCE_DIR "/docs/results/h100x4/check/load.json", "--format", form});
    EXPECT_EQ(o.out.find(MEMLAB_SOURCE_DIR "/references"), std::string::npos) << form << "\n" << o.out;
    if (std::string_view(form) != "line") {
      EXPECT_NE(o.out.find("references/nvidia-h100-80gb-hbm3.json"), std::string::npos) << form;
    }
  }
}

TEST(check_replay, bad_input_is_one_line_and_exit_2) {
  const std::string good = MEMLAB_SOURCE_DIR "/docs/results/h100x4/check/load.json";
  const std::string text = read_text(good);
  const std::string cut = temp("cut.json"), v3 = temp("v3.json"), results = temp("results.json"),
                    other_ref = temp("h200_ref.json"), unknown_metric = temp("unknown_metric.json");
  std::ofstream(cut) << text.substr(0, text.size() / 2);
  json j = json::parse(text);
  j["schema"] = "memlab.check/3";
  std::ofstream(v3) << j.dump();
  std::ofstream(results) << R"({"schema": "memlab.results/1", "results": []})";
  json m = json::parse(text);
  m["rows"][0]["metric"] = "hbm_speed";
  std::ofstream(unknown_metric) << m.dump();
  json ref = json::parse(read_text(MEMLAB_SOURCE_DIR "/references/nvidia-h100-80gb-hbm3.json"));
  ref["model"]["name"] = "NVIDIA H200";
  ref["model"]["memory_gib"] = 139.8;
  std::ofstream(other_ref) << ref.dump();
  struct bad {
    std::vector<std::string> args;
    std::string needle;
  };
  const std::vector<bad> cases{
      {{"--replay", cut}, "cut.json: not JSON, or cut short"},
      {{"--replay", v3}, "\"memlab.check/3\": this memlab reads memlab.check/1, memlab.check/2"},
      {{"--replay", results}, "\"memlab.results/1\": this memlab reads"},
      {{"--replay", unknown_metric}, "metric \"hbm_speed\" is not in this memlab's suite"},
      {{"--replay", temp("missing.json")}, "missing.json: cannot be read"},
      {{"--replay", good, "--reference", other_ref}, "the reference is for NVIDIA H200"},
      {{"--replay", good, "--devices", "0"}, "--replay and --devices"},
      {{"--replay", good, "--write-reference", temp("w.json")}, "--replay and --write-reference"},
      {{"--replay", good, "--out", "/nonexistent_folder/x.prom"}, "/nonexistent_folder/x.prom"},
      {{"--replay", good, "--out", temp("x.txt")}, ".json (the check file) or .prom"},
  };
  for (const auto& c : cases) {
    const auto o = check_cli(c.args);
    EXPECT_EQ(o.code, 2) << testing::PrintToString(c.args) << o.out << o.err;
    EXPECT_EQ(memlab::test::lines_of(o.err), 1u) << o.err;
    EXPECT_NE(o.err.find(c.needle), std::string::npos) << c.needle << " in " << o.err;
    EXPECT_TRUE(o.out.empty()) << "nothing written before the usage error: " << o.out;
  }
  for (const auto& f : {cut, v3, results, other_ref, unknown_metric}) fs::remove(f);
}

// A folder node_exporter reads that cannot be written: exit 2 before anything; the .prom file written
// whole (a temporary file renamed), and nothing else left in the folder.
TEST(check_replay, a_textfile_is_written_whole_or_not_at_all) {
  const std::string dir = temp("textfile");
  fs::create_directories(dir);
  const auto o = check_cli({"--replay", MEMLAB_SOURCE_DIR "/docs/results/h100x4/check/run1.json", "--out",
                            dir + "/memlab_check.prom", "--quiet"});
  EXPECT_EQ(o.code, 0) << o.err;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  EXPECT_EQ(names, std::vector<std::string>{"memlab_check.prom"});
  const std::string prom = read_text(dir + "/memlab_check.prom");
  EXPECT_NE(prom.find("memlab_check_run_verdict{verdict=\"pass\"} 1\n"), std::string::npos) << prom;
  EXPECT_EQ(prom.back(), '\n');
  if (::geteuid() != 0) {  // root writes anywhere: the validator's probe file tells, not the mode bits
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
    const auto ro = check_cli({"--replay", MEMLAB_SOURCE_DIR "/docs/results/h100x4/check/run1.json", "--out",
                               dir + "/memlab_check.prom"});
    EXPECT_EQ(ro.code, 2) << ro.err;
    fs::permissions(dir, fs::perms::owner_all);
  }
  fs::remove_all(dir);
}

// ---- what a replay writes, byte for byte ---------------------------------------------------------
// Every committed check file replayed in every --format against the committed reference gives the
// output committed beside this test (tests/check/replayed/<the file's path under docs/results, / as
// __>.<format>), but for what names this run: its time, this build's commit, the source folder. A
// writer's change that moves a byte shows here as a diff a reviewer reads; an intended one is
// committed with the outputs written again: MEMLAB_WRITE_REPLAYED=1 ./memlab_cli_tests
// --gtest_filter='check_replay.every_format*' (a check file committed later gets its outputs so).

const std::vector<std::pair<std::string, std::string>> replayed_formats{
    {"table", "table.txt"}, {"json", "json.txt"}, {"prometheus", "prom.txt"}, {"line", "line.txt"}};

// A replay's output with what names this run written as words: the time it was written, this build's
// commit, and the source folder the test reads from.
std::string replay_as_committed(std::string out) {
  const std::string root = MEMLAB_SOURCE_DIR "/";
  for (std::size_t at; (at = out.find(root)) != std::string::npos;) out.replace(at, root.size(), "");
  // The check file's own time and commit: the first "created" and "git_sha" (the replayed file's follow).
  for (const char* key : {"created", "git_sha"}) {
    const std::regex first(fmt::format(R"re(\n  "{}": "[^"]*",\n)re", key));
    out = std::regex_replace(out, first, fmt::format("\n  \"{}\": \"(this run's)\",\n", key),
                             std::regex_constants::format_first_only);
  }
  // Prometheus's run_info: the commit of the memlab that judged the run.
  out = std::regex_replace(out, std::regex(R"re(,git_sha="[^"]*",)re"), R"x(,git_sha="(this run's)",)x",
                           std::regex_constants::format_first_only);
  return out;
}

TEST(check_replay, every_format_of_every_committed_check_file_is_the_committed_output) {
  const fs::path dir = MEMLAB_SOURCE_DIR "/tests/check/replayed";
  const bool write = std::getenv("MEMLAB_WRITE_REPLAYED") != nullptr;
  if (write) fs::create_directories(dir);
  const std::string results = MEMLAB_SOURCE_DIR "/docs/results/";
  int compared = 0;
  for (const std::string& f : committed_check_files()) {
    const std::string stem =
        std::regex_replace(fs::path(f.substr(results.size())).replace_extension().string(), std::regex("/"), "__");
    for (const auto& [format, ext] : replayed_formats) {
      const auto o = check_cli({"--replay", f, "--format", format});
      const fs::path committed = dir / (stem + "." + ext);
      const std::string now = replay_as_committed(o.out);
      if (write) {
        std::ofstream(committed) << now;
        continue;
      }
      if (!fs::exists(committed)) {  // a check file is committed with its outputs, as any result with its claims
        ADD_FAILURE() << f << " --format " << format << ": no committed output " << committed
                      << "; write them with MEMLAB_WRITE_REPLAYED=1 memlab_cli_tests "
                         "--gtest_filter='check_replay.every_format*' and commit the new files";
        continue;
      }
      EXPECT_EQ(now, read_text(committed.string())) << f << " --format " << format << " differs from " << committed;
      ++compared;
    }
  }
  if (!write) {
    EXPECT_GE(compared, 84) << "21 committed check files in 4 formats at least";
  }
}

// ---- the fields of a row: one declaration, read by every writer -----------------------------------

// The 4 x H100 run with a competing copy on GPU 3, judged by the committed reference: rows that pass,
// fail (with fault codes and actions) and are not judged.
struct judged_load {
  check_file f = read_check_file(MEMLAB_SOURCE_DIR "/docs/results/h100x4/check/load.json");
  std::optional<reference> ref = find_reference(MEMLAB_SOURCE_DIR "/references", f.m.gpus.front().model);
  check_header h;
  judged_load() {
    judge(f.m, ref ? &*ref : nullptr);
    h = {.command = "memlab check --replay load.json",
         .created = "2026-12-07T00:00:00Z",
         .machine = f.machine,
         .reference_note = "the committed reference",
         .ref = ref ? &*ref : nullptr,
         .replay = f.source};
    h.exit_status = exit_status(verdicts_of(f.m), ref.has_value());
  }
  judged_load(const judged_load&) = delete;
  judged_load& operator=(const judged_load&) = delete;
};

struct written {
  std::string table, json, prometheus, line;
};
written write_all(const judged_load& run, std::span<const row_field> fields) {
  std::ostringstream table;
  write_table(table, run.f.m, run.h, fields);
  return {table.str(), check_json(run.f.m, run.h, fields), check_prometheus(run.f.m, run.h, fields),
          check_line(run.f.m, run.h, 4096, fields)};
}

// The table's header: its first line after the blank line that ends the run's lines.
std::string table_header(const std::string& table) {
  const auto start = table.find("\n\n") + 2;
  return table.substr(start, table.find('\n', start) - start);
}

// The series of a row (every line of a per-row family).
std::vector<std::string> row_series(const std::string& prometheus) {
  std::vector<std::string> out;
  std::istringstream lines(prometheus);
  for (std::string l; std::getline(lines, l);) {
    if (l.starts_with("#") || l.starts_with("memlab_check_run_") || l.starts_with("memlab_check_gpu_")) continue;
    out.push_back(l);
  }
  return out;
}

// A writer that listed a row's fields itself would miss a field declared after it was written: a field
// added to the declaration shows in the check file, the table, Prometheus's series and the line.
TEST(check_row_fields, a_field_added_to_the_declaration_shows_in_every_writer) {
  const judged_load run;
  ASSERT_TRUE(run.ref.has_value());
  std::vector<row_field> fields(row_fields().begin(), row_fields().end());
  fields.push_back({.name = "added_words",
                    .get = [](const measurement&, const row& r) -> row_value { return fmt::format("w-{}", r.m->name); },
                    .json = true,
                    .table = {.header = "added words"},
                    .prometheus = {.role = prometheus_role::label, .label = 8},
                    .line = "<{}>"});
  fields.push_back({.name = "added_figure",
                    .get = [](const measurement&, const row& r) -> row_value { return r.seconds + 1000; },
                    .json = true,
                    .prometheus = {.role = prometheus_role::gauge, .help = "An added figure."}});
  const written w = write_all(run, fields);

  const auto j = nlohmann::ordered_json::parse(w.json);  // in the written order
  ASSERT_EQ(j["rows"].size(), run.f.m.rows.size());
  for (std::size_t i = 0; i < run.f.m.rows.size(); ++i) {
    const row& r = run.f.m.rows[i];
    const auto& rj = j["rows"][i];
    EXPECT_EQ(rj["added_words"], fmt::format("w-{}", r.m->name));
    EXPECT_EQ(rj["added_figure"].get<double>(), r.seconds + 1000);
    std::vector<std::string> keys, declared;
    for (const auto& [k, v] : rj.items()) keys.push_back(k);
    for (const row_field& f : fields)
      if (f.json) declared.emplace_back(f.name);
    EXPECT_EQ(keys, declared) << "a row's keys are the declared fields, in their order";
  }

  EXPECT_TRUE(table_header(w.table).ends_with("added words")) << table_header(w.table);
  for (const row& r : run.f.m.rows)
    EXPECT_NE(w.table.find(fmt::format("w-{}\n", r.m->name)), std::string::npos) << r.m->name;

  const auto series = row_series(w.prometheus);
  ASSERT_FALSE(series.empty());
  for (const auto& l : series) EXPECT_NE(l.find(",added_words=\"w-"), std::string::npos) << l;
  EXPECT_NE(w.prometheus.find("# HELP memlab_check_added_figure An added figure.\n"
                              "# TYPE memlab_check_added_figure gauge\n"),
            std::string::npos);
  const auto figures = std::count_if(series.begin(), series.end(),
                                     [](const std::string& l) { return l.starts_with("memlab_check_added_figure{"); });
  EXPECT_EQ(static_cast<std::size_t>(figures), run.f.m.rows.size());

  EXPECT_NE(w.line.find("GPU 3 l2_latency 160.5 ns fail (drain) <w-l2_latency>"), std::string::npos) << w.line;
}

// ... and a field taken out of it leaves every writer.
TEST(check_row_fields, a_field_taken_out_of_the_declaration_leaves_every_writer) {
  const judged_load run;
  std::vector<row_field> fields;
  for (const row_field& f : row_fields())
    if (f.name != "metric" && f.name != "ratio") fields.push_back(f);
  const written w = write_all(run, fields);
  for (const auto& rj : json::parse(w.json)["rows"]) {
    EXPECT_FALSE(rj.contains("metric")) << rj.dump();
    EXPECT_FALSE(rj.contains("ratio")) << rj.dump();
  }
  EXPECT_EQ(table_header(w.table).find("metric"), std::string::npos) << table_header(w.table);
  EXPECT_EQ(table_header(w.table).find("ratio"), std::string::npos) << table_header(w.table);
  EXPECT_EQ(w.prometheus.find("metric=\""), std::string::npos);
  EXPECT_EQ(w.prometheus.find("memlab_check_ratio"), std::string::npos);
  EXPECT_EQ(w.line.find("l2_latency"), std::string::npos) << w.line;
  EXPECT_NE(w.line.find("GPU 3 160.5 ns fail (drain)"), std::string::npos) << w.line;
  // The declaration itself writes what the committed replay holds.
  const written all = write_all(run, row_fields());
  EXPECT_NE(all.line.find("GPU 3 l2_latency 160.5 ns fail (drain)"), std::string::npos) << all.line;
}

// The check file's row is the schema's: the declared keys, in order, each required.
TEST(check_row_fields, the_check_files_row_is_the_schemas) {
  const auto schema = nlohmann::ordered_json::parse(read_text(MEMLAB_SOURCE_DIR "/docs/check.schema.json"));
  const auto& row_schema = schema["properties"]["rows"]["items"];
  std::vector<std::string> in_schema, declared;
  for (const auto& [k, v] : row_schema["properties"].items()) in_schema.push_back(k);
  for (const row_field& f : row_fields())
    if (f.json) declared.emplace_back(f.name);
  EXPECT_EQ(declared, in_schema);
  std::vector<std::string> required = row_schema["required"];
  std::sort(required.begin(), required.end());
  std::sort(declared.begin(), declared.end());
  EXPECT_EQ(declared, required);
}

// --replay reads back the fields declared replayed (what was measured) and no other: a /2 file without
// one of them cannot be replayed, and one without any other key of a row (the judge's) is judged anew.
TEST(check_row_fields, a_replay_reads_the_fields_declared_replayed_and_no_others) {
  const json written = json::parse(read_text(MEMLAB_SOURCE_DIR "/docs/results/h100x4/check/replayed/load.json"));
  ASSERT_EQ(written["schema"], "memlab.check/2");
  const std::string path = temp("without_a_key.json");
  int replayed = 0;
  for (const row_field& f : row_fields()) {
    if (!f.json) continue;
    json without = written;
    for (auto& r : without["rows"]) r.erase(std::string(f.name));
    std::ofstream(path) << without.dump();
    std::string error;
    try {
      read_check_file(path);
    } catch (const check_file_error& e) {
      error = e.what();
    }
    if (f.replayed) {
      EXPECT_NE(error.find(fmt::format("no \"{}\"", f.name)), std::string::npos) << f.name << ": " << error;
      ++replayed;
    } else {
      EXPECT_EQ(error, "") << f.name << " is the judge's: a replay writes it anew";
    }
  }
  EXPECT_GE(replayed, 5);
  fs::remove(path);
}

// docs/check.md names every series and label of a row the declaration gives Prometheus, in its order.
TEST(check_row_fields, docs_check_md_names_every_prometheus_series_and_label_of_a_row) {
  const std::string page = read_text(MEMLAB_SOURCE_DIR "/docs/check.md");
  const auto section = page.substr(page.find("### Prometheus"));
  std::vector<std::string> series, documented;
  std::vector<const row_field*> labels;
  for (const row_field& f : row_fields()) {
    if (f.prometheus.role == prometheus_role::label) labels.push_back(&f);
    if (f.prometheus.role != prometheus_role::none && f.prometheus.role != prometheus_role::label)
      series.push_back(fmt::format("memlab_check_{}", f.name));
  }
  const std::regex family(R"(^\| `(memlab_check_[a-z_]+)` \|)");
  std::istringstream lines(section.substr(0, section.find("\n### ")));
  for (std::string l; std::getline(lines, l);) {
    std::smatch m;
    if (std::regex_search(l, m, family) && !m[1].str().starts_with("memlab_check_run_") &&
        !m[1].str().starts_with("memlab_check_gpu_"))
      documented.push_back(m[1].str());
  }
  EXPECT_EQ(documented, series);
  std::stable_sort(labels.begin(), labels.end(),
                   [](const row_field* a, const row_field* b) { return a->prometheus.label < b->prometheus.label; });
  const auto start = section.find("A row's labels:");
  ASSERT_NE(start, std::string::npos);
  const std::string sentence = section.substr(start, section.find(". ", start) - start);
  std::vector<std::string> named, declared;
  const std::regex code("`([a-z_]+)`");
  for (auto it = std::sregex_iterator(sentence.begin(), sentence.end(), code); it != std::sregex_iterator(); ++it)
    named.push_back((*it)[1].str());
  for (const row_field* f : labels) declared.emplace_back(f->name);
  EXPECT_EQ(named, declared) << sentence;
}

// ---- where the files go ----------------------------------------------------------------------------

TEST(check_out, percent_n_is_the_short_host_name_and_percent_percent_a_percent) {
  EXPECT_EQ(expand_path("/shared/checks/2026-12-07/%N.json", "node17"), "/shared/checks/2026-12-07/node17.json");
  EXPECT_EQ(expand_path("%N/%N-100%%.prom", "gpu-a"), "gpu-a/gpu-a-100%.prom");
  EXPECT_EQ(expand_path("check.json", "node17"), "check.json");
  EXPECT_EQ(expand_path("%%N.json", "node17"), "%N.json");
  for (const auto& [path, bad] : std::vector<std::pair<std::string, std::string>>{
           {"/x/%j.json", "%j"}, {"/x/%n.json", "%n"}, {"/x/100%.json", "%."}, {"/x/a.json%", "a % at the end"}}) {
    try {
      expand_path(path, "node17");
      ADD_FAILURE() << path << " expanded";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(path + ": " + bad + " is not a pattern"), std::string::npos) << e.what();
    }
  }
  const std::string host = short_host_name();
  EXPECT_FALSE(host.empty());
  EXPECT_EQ(host.find('.'), std::string::npos) << host;
  char full[256] = {};
  ASSERT_EQ(::gethostname(full, sizeof full - 1), 0);
  EXPECT_TRUE(std::string(full).starts_with(host)) << full;
}

// `srun memlab check --out DIR/%N.json`: each node writes its own file; a pattern it does not know is bad
// input before anything is measured or written.
TEST(check_out, out_files_are_named_for_the_host_and_an_unknown_pattern_is_exit_2) {
  const std::string dir = temp("per_host");
  fs::create_directories(dir);
  const std::string run = MEMLAB_SOURCE_DIR "/docs/results/h100x4/check/run1.json";
  const auto o =
      check_cli({"--replay", run, "--format", "line", "--out", dir + "/%N.json", "--out", dir + "/%N-100%%.prom"});
  EXPECT_EQ(o.code, 0) << o.err;
  const std::string host = short_host_name();
  EXPECT_TRUE(fs::exists(dir + "/" + host + ".json")) << o.err;
  EXPECT_TRUE(fs::exists(dir + "/" + host + "-100%.prom")) << o.err;
  EXPECT_NE(o.err.find("wrote " + dir + "/" + host + ".json"), std::string::npos) << o.err;
  EXPECT_EQ(json::parse(read_text(dir + "/" + host + ".json"))["schema"], "memlab.check/2");
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& args : std::vector<std::vector<std::string>>{{"--replay", run, "--out", dir + "/%j.json"},
                                                                {"--write-reference", dir + "/ref-%H.json"}}) {
    const auto bad = check_cli(args);
    EXPECT_EQ(bad.code, 2) << testing::PrintToString(args) << bad.err;
    EXPECT_EQ(memlab::test::lines_of(bad.err), 1u) << bad.err;
    EXPECT_NE(bad.err.find(args[args.size() - 2] + ": " + dir), std::string::npos) << "names the flag: " << bad.err;
    EXPECT_NE(bad.err.find("is not a pattern"), std::string::npos) << bad.err;
    EXPECT_TRUE(bad.out.empty()) << bad.out;
  }
  EXPECT_TRUE(fs::is_empty(dir)) << "nothing written";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace memlab::check
