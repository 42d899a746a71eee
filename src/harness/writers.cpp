#include "harness/writers.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <type_traits>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "harness/text.hpp"

namespace memlab {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string cc_string(const device_info& d) { return fmt::format("{}.{}", d.cc_major, d.cc_minor); }

std::string version_string(int v) { return fmt::format("{}.{}", v / 1000, v % 1000 / 10); }

std::string device_text(const device_info& d) {
  return fmt::format("{} (device {}, cc {}, {} SMs, L2 {})", d.name, d.ordinal, cc_string(d), d.sm_count,
                     format_bytes(d.l2_bytes));
}

std::string ceiling_text(const device_info& d) {
  return d.measured_peak_gbps > 0 ? fmt::format("{:.1f} GB/s (cudaMemcpy D2D)", d.measured_peak_gbps) : "not measured";
}

std::string status_text(const result& r) {
  const char* tag = r.status == result_status::skipped ? "SKIP" : r.status == result_status::failed ? "FAIL" : "ok";
  if (r.note.empty()) return tag;
  return fmt::format("{}: {}", tag, shorten(r.note, 40));
}

std::vector<const result*> results_of(const run_report& rep, std::string_view lab) {
  std::vector<const result*> out;
  for (const auto& r : rep.results)
    if (r.lab == lab) out.push_back(&r);
  return out;
}

// ---- terminal and Markdown: a table per lab -----------------------------------------------------------

std::string header_text(const run_report& rep) {
  const auto& d = rep.device;
  std::string out = fmt::format("device {} | theoretical peak {:.1f} GB/s | measured ceiling {} | bytes = reads + writes",
                                device_text(d), d.peak_gbps, ceiling_text(d));
  if (d.nvlink_links > 0) {
    // The roof is the data rate; NVML's line rate (the link's signalling) beside it where the driver gives it.
    out += fmt::format("\nNVLink: {} links x {:.3f} GB/s data rate ({}) = {:.1f} GB/s per direction{}{}", d.nvlink_links,
                       d.nvlink_link_gbps, d.nvlink_rate_from, d.nvlink_gbps, d.nvlink_switch ? ", through NVSwitch" : "",
                       d.nvlink_line_gbps > 0 && d.nvlink_rate_from != "NVML line rate"
                           ? fmt::format(" (line rate {:.3f} GB/s a link, NVML)", d.nvlink_line_gbps)
                           : "");
  }
  if (rep.world.size > 1) {
    out += fmt::format("\n{} ranks, one process each ({}), met at {}", rep.world.size, rep.world.launcher, rep.world.root);
  }
  return out;
}

std::string lab_heading(const lab_info& l) {
  return fmt::format("{}: {} (roof: {})", l.name, l.teaches, rule_of(l.roof).label);
}

void write_tables(std::ostream& os, const run_report& rep) {
  os << header_text(rep) << "\n";
  if (rep.results.empty()) os << "(no results)\n";
  for (const auto& l : rep.labs) {
    const text_table t = lab_table(rep, l);
    if (t.rows.empty()) continue;
    os << "\n" << lab_heading(l) << "\n";
    write_aligned(os, t);
    if (const auto s = lab_summary(rep, l); !s.empty()) os << s << "\n";
  }
  if (rep.ended != "complete") os << "\nrun " << rep.ended << "\n";
}

void write_md(std::ostream& os, const run_report& rep) {
  const auto& d = rep.device;
  // A command holding a backtick needs a longer fence to stay one code span.
  const std::string fence = rep.command.find('`') == std::string::npos ? "`" : "``";
  const std::string pad = fence.size() > 1 ? " " : "";
  os << fmt::format(
      "## memlab results\n\n"
      "- device: {}, driver {}, runtime {}\n"
      "- theoretical peak: {:.1f} GB/s (2 x memory clock x bus width / 8)\n"
      "- measured ceiling: {}\n"
      "- command: {}{}{}{}{}\n"
      "- memlab {}, git {}, created {}\n"
      "- bytes = reads + writes; GB/s and % from the cold (L2 flushed) median, host launch cost excluded\n"
      "- run: {} ({} of {} cases)\n",
      device_text(d), version_string(d.driver_version), version_string(d.runtime_version), d.peak_gbps, ceiling_text(d),
      fence, pad, rep.command, pad, fence, rep.memlab_version, rep.git_sha, rep.created, rep.ended, rep.results.size(),
      rep.planned);
  for (const auto& l : rep.labs) {
    const text_table t = lab_table(rep, l);
    if (t.rows.empty()) continue;
    os << "\n### " << lab_heading(l) << "\n\n";
    write_markdown(os, t);
    if (const auto s = lab_summary(rep, l); !s.empty()) os << "\n" << s << "\n";
  }
}

// ---- CSV (RFC 4180): one record per case ---------------------------------------------------------------

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

// A result's model figures in one field: "smem_ld_wavefronts=32 gld_sectors=4" ("" when none).
std::string model_text(const std::vector<model_figure>& model) {
  std::vector<std::string> parts;
  for (const auto& m : model) parts.push_back(fmt::format("{}={}", m.name, exact(m.value)));
  return fmt::format("{}", fmt::join(parts, " "));
}

// A result's measured figures in one field: "cycles_per_load=412.5cycles ns_per_load=221ns".
std::string measured_text(const std::vector<measured_figure>& measured) {
  std::vector<std::string> parts;
  for (const auto& m : measured) parts.push_back(fmt::format("{}={}{}", m.name, exact(m.value), m.unit));
  return fmt::format("{}", fmt::join(parts, " "));
}

// A transfer's directions in one field: "h2d=1073741824B@55.1GB/s d2h=...".
std::string directions_text(const std::vector<direction_figure>& directions) {
  std::vector<std::string> parts;
  for (const auto& d : directions) parts.push_back(fmt::format("{}={}B@{}GB/s", d.name, d.bytes, exact(d.gbps)));
  return fmt::format("{}", fmt::join(parts, " "));
}

// Param names in the order they are first seen across the labs of the report.
std::vector<std::string> param_names(const run_report& rep) {
  std::vector<std::string> names;
  for (const auto& l : rep.labs)
    for (const auto& p : l.params)
      if (std::find(names.begin(), names.end(), p) == names.end()) names.push_back(p);
  for (const auto& r : rep.results)
    for (const auto& p : r.params)
      if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  return names;
}

// A field's value as CSV and the model text write it: whole numbers in decimal, doubles exactly.
std::string field_text(const field_value& v) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return x;
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, double>) {
          return exact(x);
        } else {
          return fmt::format("{}", x);
        }
      },
      v);
}

// The CSV's columns: result fields by name (params: a column each), in the order the format has
// had since its first version; each value is read through the field's declaration.
constexpr std::string_view csv_columns[] = {"lab",
                                            "variant",
                                            "params",
                                            "bytes",
                                            "flops",
                                            "policy",
                                            "cold_median_ms",
                                            "cold_min_ms",
                                            "cold_p25_ms",
                                            "cold_p75_ms",
                                            "cold_samples",
                                            "cold_rel_spread",
                                            "batch_median_ms",
                                            "batch_min_ms",
                                            "batch_samples",
                                            "batch_rel_spread",
                                            "gbps",
                                            "batch_gbps",
                                            "pct_peak",
                                            "pct_measured",
                                            "l2_resident",
                                            "verified",
                                            "status",
                                            "note",
                                            "hardware_bytes",
                                            "hardware_gbps",
                                            "graph_median_ms",
                                            "graph_samples",
                                            "graph_gbps",
                                            "gflops",
                                            "roof",
                                            "roof_value",
                                            "roof_unit",
                                            "pct_roof",
                                            "sm_clock_mhz",
                                            "throttled_samples",
                                            "model",
                                            "measured"};

void write_csv(std::ostream& os, const run_report& rep) {
  const auto names = param_names(rep);
  std::vector<const result_field*> columns;
  for (std::string_view c : csv_columns) columns.push_back(&result_field_named(c));
  const auto row = [&os](const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) os << (i ? "," : "") << csv_field(fields[i]);
    os << '\n';
  };
  std::vector<std::string> header;
  for (const result_field* c : columns) {
    if (c->kind == field_kind::params) {
      header.insert(header.end(), names.begin(), names.end());
    } else {
      header.emplace_back(c->name);
    }
  }
  row(header);
  for (const auto& r : rep.results) {
    std::vector<std::string> f;
    for (const result_field* c : columns) {
      switch (c->kind) {
        case field_kind::params:
          for (const auto& n : names) {
            const param_value* v = r.find(n);  // none, or not applicable: an empty cell
            f.push_back(v == nullptr || std::holds_alternative<std::monostate>(*v) ? "" : to_string(*v));
          }
          break;
        case field_kind::model: f.push_back(model_text(r.model)); break;
        case field_kind::measured: f.push_back(measured_text(r.measured)); break;
        case field_kind::directions: f.push_back(directions_text(r.directions)); break;
        case field_kind::value: f.push_back(field_text(c->get(r))); break;
      }
    }
    row(f);
  }
}

// ---- JSON: memlab.results/1 --------------------------------------------------------------------------
// The keys of docs/design.md ("Results files") first in each object, the extensions after;
// docs/results-schema.md lists them.

ordered_json header_json(const run_report& rep) {
  ordered_json j;
  j["schema"] = std::string(results_schema);
  j["memlab_version"] = rep.memlab_version;
  j["git_sha"] = rep.git_sha;
  j["created"] = rep.created;
  j["command"] = rep.command;
  j["argv"] = rep.argv;
  j["ended"] = rep.ended;
  j["planned_cases"] = static_cast<std::uint64_t>(rep.planned);
  ordered_json options = ordered_json::object();
  for (const auto& [k, v] : rep.options) options[k] = v;
  j["options"] = std::move(options);
  j["units"] = {{"time", "ms"},
                {"bytes", "bytes"},
                {"bandwidth", "GB/s (1e9 bytes per second)"},
                {"compute", "GFLOP/s (1e9 floating-point operations per second)"},
                {"clock", "MHz"}};
  j["byte_convention"] =
      "bytes: the fewest bytes the job must move through the memory level of the lab's roof, reads plus writes (a "
      "copy of N bytes moves 2N); hardware_bytes: what the access pattern really moves (32-byte sectors, halos), 0 "
      "when the same; transfers between memories (directions): bytes counted once per direction (a 1 GiB host to "
      "device copy moves 1 GiB), a bidirectional case's bytes the sum of its directions; collectives: bytes is "
      "nccl-tests' S (gbps its algbw), busbw_gbps = gbps x bus_factor";
  const auto& t = rep.timing;
  j["timing"] = {
      {"cold",
       "L2 flushed (a memset of l2_flush_bytes), then a blocking kernel holds the stream while the host enqueues a "
       "clock reading, the start event, one launch, the stop event and a clock reading; then the stream is released. "
       "Host launch cost is not timed. Samples whose SM clock is under throttle_threshold of the default clock are "
       "dropped and counted (throttled_samples)."},
      {"batch",
       "launches queued behind the blocking kernel (at most max_queued_launches, about batch_target_ms of GPU time), "
       "then released: GPU time per launch, L2 warm, no host gap between launches"},
      {"graph",
       "the same launches captured once in a CUDA graph, launched as one behind the blocking kernel: GPU "
       "time per launch; absent (samples 0, graph_note) when a variant cannot be captured"},
      {"statistics", "median, min, max, p25, p75 (type 7), mean; rel_spread = (p75 - p25) / median"},
      {"stopping",
       "sampling stops once rel_spread < target_rel_spread with at least min_samples, or when the case's "
       "budget ends (max_time_s per case: half cold, a quarter batch, a quarter graph)"},
      {"max_time_s", t.max_time_s},
      {"target_rel_spread", t.target_rel_spread},
      {"min_samples", static_cast<std::uint64_t>(t.min_samples)},
      {"max_samples", static_cast<std::uint64_t>(t.max_samples)},
      {"throttle_threshold", t.throttle_threshold},
      {"l2_flush_bytes", t.l2_flush_bytes},
      {"batch_target_ms", t.batch_target_ms},
      {"max_queued_launches", t.max_queued_launches},
      {"blocking_timeout_s", t.blocking_timeout_s}};
  if (t.nccl_tests_iters > 0) {
    j["timing"]["nccl_tests"] =
        "nccl-tests' method, for the rungs that have it (records' nccl_tests): nccl_tests_warmup launches and a sync, "
        "then (after a barrier across the ranks) the host clock around nccl_tests_iters launches enqueued back to back "
        "and the wait for the last; the mean per launch, averaged over the ranks as nccl-tests does; repeated like a "
        "sample, median over the repetitions. No L2 flush, no blocking kernel: the host's launch cost is inside, as in "
        "nccl-tests' own figure";
    if (t.nccl_tests_graph_launches > 0) {
      j["timing"]["nccl_tests"] =
          "nccl-tests' method in its graph mode (nccl-tests -G nccl_tests_graph_launches), for the rungs that have it "
          "(records' nccl_tests): nccl_tests_warmup launches and a sync, then nccl_tests_iters launches captured once, "
          "each rank's stream into its own CUDA graph; a sample is (after a barrier across the ranks) the host clock "
          "around nccl_tests_graph_launches replays of every graph and the wait for the last, divided by "
          "nccl_tests_iters x nccl_tests_graph_launches, averaged over the ranks; median over the samples. No L2 "
          "flush, no blocking kernel; the host's per-launch cost is out of the figure, as in nccl-tests -G";
    }
    j["timing"]["nccl_tests_warmup"] = t.nccl_tests_warmup;
    j["timing"]["nccl_tests_iters"] = t.nccl_tests_iters;
    j["timing"]["nccl_tests_graph_launches"] = t.nccl_tests_graph_launches;
  }
  const auto& d = rep.device;
  ordered_json dev;
  dev["name"] = d.name;
  dev["cc"] = cc_string(d);
  dev["sm_count"] = d.sm_count;
  dev["l2_bytes"] = d.l2_bytes;
  dev["mem_clock_khz"] = d.mem_clock_khz;
  dev["bus_width_bits"] = d.bus_width_bits;
  dev["peak_gbps"] = d.peak_gbps;
  dev["ordinal"] = d.ordinal;
  dev["global_mem_bytes"] = d.global_mem_bytes;
  dev["measured_peak_gbps"] = d.measured_peak_gbps;
  dev["measured_l2_gbps"] = d.measured_l2_gbps;
  dev["sm_default_clock_khz"] = d.sm_default_clock_khz;
  dev["driver_version"] = version_string(d.driver_version);
  dev["runtime_version"] = version_string(d.runtime_version);
  dev["device_count"] = d.device_count;
  dev["link"] = {{"source", d.link_source},  {"pcie_gen", d.pcie_gen},         {"pcie_width", d.pcie_width},
                 {"pcie_gbps", d.pcie_gbps}, {"nvlink_links", d.nvlink_links}, {"nvlink_gbps", d.nvlink_gbps}};
  if (d.nvlink_links > 0) {
    dev["link"]["nvlink_link_gbps"] = d.nvlink_link_gbps;
    dev["link"]["nvlink_rate_from"] = d.nvlink_rate_from;
    dev["link"]["nvlink_line_gbps"] = d.nvlink_line_gbps;
    dev["link"]["nvlink_switch"] = d.nvlink_switch;
    if (!d.nvlink_gpus.empty()) dev["link"]["nvlink_gpus"] = d.nvlink_gpus;
  }
  j["device"] = std::move(dev);
  if (rep.devices.size() > 1) {
    ordered_json all = ordered_json::array();
    for (const auto& x : rep.devices) {
      all.push_back({{"ordinal", x.ordinal},
                     {"name", x.name},
                     {"measured_peak_gbps", x.measured_peak_gbps},
                     {"link",
                      {{"source", x.link_source},
                       {"pcie_gen", x.pcie_gen},
                       {"pcie_width", x.pcie_width},
                       {"pcie_gbps", x.pcie_gbps},
                       {"nvlink_links", x.nvlink_links},
                       {"nvlink_gbps", x.nvlink_gbps}}}});
    }
    j["devices"] = std::move(all);
  }
  // Who ran: for a distributed run, and for any run with collectives (which NCCL).
  const bool collectives =
      std::any_of(rep.results.begin(), rep.results.end(), [](const result& r) { return r.bus_factor > 0; });
  if (!rep.world.launcher.empty() || (collectives && rep.world.nccl_version > 0)) {
    const auto& w = rep.world;
    ordered_json world{{"launcher", w.launcher.empty() ? "none (one process)" : w.launcher},
                       {"size", w.size},
                       {"nccl_version", w.nccl_version}};
    if (!w.root.empty()) {
      world["root"] = w.root;
      world["root_from"] = w.root_from;
      world["rank_timeout_s"] = w.rank_timeout_s;
    }
    ordered_json ranks = ordered_json::array();
    for (const auto& r : w.ranks) {
      ranks.push_back(
          {{"rank", r.rank}, {"host", r.host}, {"pid", r.pid}, {"device", r.device}, {"bus_id", r.bus_id}});
    }
    if (!w.ranks.empty()) world["ranks"] = std::move(ranks);
    j["world"] = std::move(world);
  }
  ordered_json env = ordered_json::object();
  for (const auto& e : rep.environment) env[e.name] = {{"value", e.value}, {"set_by", e.set_by}};
  j["environment"] = std::move(env);
  ordered_json labs = ordered_json::object();
  for (const auto& l : rep.labs) {
    labs[l.name] = {{"teaches", l.teaches},
                    {"size_meaning", l.size_meaning},
                    {"roof", std::string(to_string(l.roof))},
                    {"params", l.params}};
  }
  j["labs"] = std::move(labs);
  return j;
}

ordered_json json_of(const field_value& v) {
  return std::visit([](const auto& x) { return ordered_json(x); }, v);
}

// A record: each result field at its place (docs/results-schema.md), in the fields' order.
ordered_json result_json(const result& r) {
  ordered_json o;
  for (const result_field& f : result_fields()) {
    switch (f.kind) {
      case field_kind::params: {
        ordered_json params = ordered_json::object();
        for (const auto& p : r.params) {
          if (const auto* i = std::get_if<std::int64_t>(&p.value)) {
            params[p.name] = *i;
          } else if (const auto* w = std::get_if<std::string>(&p.value)) {
            params[p.name] = *w;
          } else {
            params[p.name] = nullptr;  // not applicable: the rung does not read this axis
          }
        }
        o[std::string(f.key)] = std::move(params);
        break;
      }
      case field_kind::model: {
        ordered_json model = ordered_json::object();
        for (const auto& m : r.model) model[m.name] = m.value;
        o[std::string(f.key)] = std::move(model);
        break;
      }
      case field_kind::measured: {  // an extension: only where the lab's kernels measured something
        if (r.measured.empty()) break;
        ordered_json measured = ordered_json::object();
        for (const auto& m : r.measured) measured[m.name] = {{"value", m.value}, {"unit", m.unit}};
        o[std::string(f.key)] = std::move(measured);
        break;
      }
      case field_kind::directions: {  // an extension: only for transfers
        if (r.directions.empty()) break;
        ordered_json dirs = ordered_json::object();
        for (const auto& d : r.directions) dirs[d.name] = {{"bytes", d.bytes}, {"gbps", d.gbps}};
        o[std::string(f.key)] = std::move(dirs);
        break;
      }
      case field_kind::value:
        if (f.key.empty()) break;  // written otherwise in the JSON (the policy as an object)
        if (f.only_when != nullptr && !f.only_when(r)) break;  // an extension this record does not carry
        if (f.object.empty()) {
          o[std::string(f.key)] = json_of(f.get(r));
        } else {
          o[std::string(f.object)][std::string(f.key)] = json_of(f.get(r));
        }
        break;
    }
  }
  return o;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

// ---- per lab --------------------------------------------------------------------------------------------

namespace {

// A cell of a lab's table: the result field it shows, read through its declaration and formatted
// by its unit; "-" where `shown` says the figure does not exist (a case never timed, no roof value).
struct table_column {
  std::string header;
  const result_field* field;
  bool (*shown)(const result&, const device_info&);
};

std::string cell_text(const result_field& f, const result& r) {
  const field_value v = f.get(r);
  if (f.unit == "bytes") return format_bytes(std::get<std::uint64_t>(v));
  if (f.unit == "ms") return human_ms(std::get<double>(v));
  if (f.unit == "GB/s" || f.unit == "GFLOP/s" || f.unit == "%") return fixed(std::get<double>(v), 1);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "yes" : "";
  return field_text(v);
}

bool timed(const result& r, const device_info&) { return r.cold.samples > 0; }

}  // namespace

text_table lab_table(const run_report& rep, const lab_info& l) {
  const auto rows = results_of(rep, l.name);
  const roof_rule& rule = rule_of(l.roof);
  text_table t;
  std::vector<std::string> names = l.params;
  for (const result* r : rows)
    for (const auto& p : r->params)
      if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  const bool several = std::any_of(rows.begin(), rows.end(), [](const result* r) { return r->device >= 0; });
  const bool collectives = std::any_of(rows.begin(), rows.end(), [](const result* r) { return r->bus_factor > 0; });
  const bool nccl_tests =
      std::any_of(rows.begin(), rows.end(), [](const result* r) { return r->nccl_tests.samples > 0; });
  t.column("variant", false);
  if (several) t.column("gpu", true);
  for (const auto& n : names) {
    bool numeric = true;  // numbers right, words left
    for (const result* r : rows) {
      const param_value* v = r->find(n);
      if (v != nullptr && std::holds_alternative<std::string>(*v)) numeric = false;
    }
    t.column(n, numeric);
  }
  const bool flops =
      l.roof == roof_kind::fp32 || std::any_of(rows.begin(), rows.end(), [](const result* r) { return r->flops > 0; });
  const bool hardware = std::any_of(rows.begin(), rows.end(), [](const result* r) { return r->hardware_bytes > 0; });
  // The lab's model figures, a column each, in the order first seen.
  std::vector<std::string> model_names;
  for (const result* r : rows)
    for (const auto& m : r->model)
      if (std::find(model_names.begin(), model_names.end(), m.name) == model_names.end()) model_names.push_back(m.name);
  // The figures the lab's kernels measured, a column each ("cycles_per_load [cycles]"), first seen first.
  std::vector<std::pair<std::string, std::string>> measured_names;
  for (const result* r : rows)
    for (const auto& m : r->measured)
      if (!m.detail && std::find_if(measured_names.begin(), measured_names.end(),
                                    [&](const auto& x) { return x.first == m.name; }) == measured_names.end())
        measured_names.emplace_back(m.name, m.unit);

  const auto field = [](std::string_view name) { return &result_field_named(name); };
  const auto always = [](const result&, const device_info&) { return true; };
  std::vector<table_column> columns{
      {"bytes", field("bytes"), always},
      {"policy", field("policy"), always},
      {"cold", field("cold_median_ms"), [](const result& r, const device_info&) { return r.cold.samples > 0; }},
      {"batch", field("batch_median_ms"), [](const result& r, const device_info&) { return r.batch.samples > 0; }},
      {"graph", field("graph_median_ms"), [](const result& r, const device_info&) { return r.graph.samples > 0; }},
      {std::string(rule.bandwidth_header), field(rule.bandwidth == &result::batch_gbps ? "batch_gbps" : "gbps"), timed},
  };
  if (flops) columns.push_back({"GFLOP/s", field("gflops"), timed});
  // Collectives: nccl-tests' busbw from the cold time, and nccl-tests' own method beside it.
  if (collectives) {
    columns.push_back({"busbw", field("busbw_gbps"),
                       [](const result& r, const device_info&) { return r.cold.samples > 0 && r.bus_factor > 0; }});
  }
  if (nccl_tests) {
    // nccl-tests' graph mode named as nccl-tests names it: its -G flag.
    const std::string method = rep.timing.nccl_tests_graph_launches > 0 ? "nccl-tests -G" : "nccl-tests";
    columns.push_back({method, field("nccl_tests_median_ms"),
                       [](const result& r, const device_info&) { return r.nccl_tests.samples > 0; }});
    columns.push_back({"busbw " + method, field("nccl_tests_busbw_gbps"), [](const result& r, const device_info&) {
                         return r.nccl_tests.samples > 0 && r.bus_factor > 0;
                       }});
  }
  columns.push_back({std::string(rule.pct_header), field("pct_roof"),
                     [](const result& r, const device_info&) { return r.cold.samples > 0 && r.roof.value > 0; }});
  if (l.roof == roof_kind::dram) {
    columns.push_back({"%ceiling", field("pct_measured"), [](const result& r, const device_info& d) {
                         return r.cold.samples > 0 && d.measured_peak_gbps > 0;
                       }});
  }
  if (hardware) {
    columns.push_back({"HW GB/s", field("hardware_gbps"),
                       [](const result& r, const device_info&) { return r.cold.samples > 0 && r.hardware_bytes > 0; }});
  }
  for (const auto& c : columns) t.column(c.header, c.header != "policy");
  for (const auto& n : model_names) t.column(n, true);
  for (const auto& [n, unit] : measured_names) t.column(unit.empty() ? n : n + " [" + unit + "]", true);
  t.column("L2", false);
  t.column("status", false);
  for (const result* r : rows) {
    std::vector<std::string> row{r->variant};
    if (several) row.push_back(r->device >= 0 ? std::to_string(r->device) : "");
    for (const auto& n : names) {
      const param_value* v = r->find(n);
      if (v == nullptr) {
        row.emplace_back();
      } else if (const auto* i = std::get_if<std::int64_t>(v); i != nullptr && n == "n" && *i >= 0) {
        row.push_back(format_count(static_cast<std::uint64_t>(*i)));
      } else {
        row.push_back(to_string(*v));
      }
    }
    for (const auto& c : columns) row.push_back(c.shown(*r, rep.device) ? cell_text(*c.field, *r) : "-");
    for (const auto& n : model_names) {
      const auto m = std::find_if(r->model.begin(), r->model.end(), [&](const model_figure& x) { return x.name == n; });
      row.push_back(m == r->model.end() ? "-" : fixed_g(m->value));
    }
    for (const auto& n : measured_names) {
      const auto m = std::find_if(r->measured.begin(), r->measured.end(),
                                  [&](const measured_figure& x) { return x.name == n.first; });
      row.push_back(m == r->measured.end() ? "-" : fixed_g(m->value));
    }
    row.push_back(cell_text(*field("l2_resident"), *r));
    row.push_back(status_text(*r));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string lab_summary(const run_report& rep, const lab_info& l) {
  const auto s = summarize_ladder(rep, l);
  if (!s) return {};
  const roof_rule& rule = rule_of(s->roof);
  std::vector<std::string> point;
  for (const auto& p : s->point) {
    const auto* i = std::get_if<std::int64_t>(&p.value);
    point.push_back(
        fmt::format("{}={}", p.name,
                    p.name == "n" && i != nullptr ? format_count(static_cast<std::uint64_t>(*i)) : to_string(p.value)));
  }
  std::string out = fmt::format("{}: best {} at {}: {:.1f} {}, {:.1f}% of {}", l.name, s->best, fmt::join(point, " "),
                                s->best_rate, rule.unit, s->best_pct_roof, rule.label);
  if (!s->worst.empty()) {
    out += fmt::format("; worst there {}: {:.1f} {} ({:.2f}x)", s->worst, s->worst_rate, rule.unit, s->best_over_worst);
  }
  for (std::size_t i = 0; i < s->peers.size(); ++i) {
    out += fmt::format("{}{} {:.1f} {}", i == 0 ? "; peers there: " : ", ", s->peers[i].first, s->peers[i].second,
                       rule.unit);
  }
  return out;
}

ordered_json to_json(const run_report& rep) {
  ordered_json j = header_json(rep);
  ordered_json results = ordered_json::array();
  for (const auto& r : rep.results) results.push_back(result_json(r));
  j["results"] = std::move(results);
  return j;
}

std::string render(const run_report& rep, output_format f) {
  std::ostringstream os;
  switch (f) {
    case output_format::table: write_tables(os, rep); break;
    case output_format::csv: write_csv(os, rep); break;
    case output_format::markdown: write_md(os, rep); break;
    case output_format::json:
      // Invalid UTF-8 in a name or note is replaced, not fatal.
      os << to_json(rep).dump(2, ' ', false, ordered_json::error_handler_t::replace) << '\n';
      break;
  }
  return os.str();
}

// ---- files and stdout -------------------------------------------------------------------------------------

void write_file_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmpl = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
  const auto fail = [&](const std::string& what) -> void {
    throw write_error(fmt::format("could not write {}: {} ({})", path, what, std::strerror(errno)));
  };
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail(fmt::format("cannot create a temporary file in {}", dir.string()));
  struct remover {
    std::string p;
    bool armed = true;
    ~remover() {
      if (armed) ::unlink(p.c_str());
    }
  } cleanup{tmpl};
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      fail("write failed");
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail("fsync failed");
  }
  // mkstemp makes the file 0600; results are for reading: 0644 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (::fchmod(fd, 0644 & ~mask) != 0) {
    ::close(fd);
    fail("fchmod failed");
  }
  if (::close(fd) != 0) fail("close failed");
  if (::rename(tmpl.c_str(), path.c_str()) != 0) fail("rename failed");
  cleanup.armed = false;
}

void stdout_sink::print_labs_before(const run_report& r, std::size_t end) {
  // Shows the labs whose results lie in [printed_, end): each lab's table once its cases are done.
  if (printed_ >= end) return;
  if (!header_) {
    os_ << header_text(r) << "\n";
    header_ = true;
  }
  while (printed_ < end) {
    const std::string& name = r.results[printed_].lab;
    const auto info = std::find_if(r.labs.begin(), r.labs.end(), [&](const lab_info& l) { return l.name == name; });
    std::size_t next = printed_;
    while (next < end && r.results[next].lab == name) ++next;
    if (info != r.labs.end()) {
      run_report part;  // this lab's rows only (a lab planned twice prints each block as it ends)
      part.device = r.device;
      part.timing = r.timing;  // the method the columns name (nccl-tests' graph mode reads "nccl-tests -G")
      part.results.assign(r.results.begin() + static_cast<std::ptrdiff_t>(printed_),
                          r.results.begin() + static_cast<std::ptrdiff_t>(next));
      os_ << "\n" << lab_heading(*info) << "\n";
      write_aligned(os_, lab_table(part, *info));
      if (const auto s = lab_summary(part, *info); !s.empty()) os_ << s << "\n";
    }
    printed_ = next;
  }
  os_.flush();
}

void stdout_sink::update(const run_report& r) {
  if (f_ != output_format::table || r.results.empty()) return;
  // The last result's lab may still be running: print only the labs finished before it.
  std::size_t end = r.results.size();
  const std::string& current = r.results.back().lab;
  while (end > printed_ && r.results[end - 1].lab == current) --end;
  print_labs_before(r, end);
}

void stdout_sink::lab_done(const run_report& r) {
  if (f_ == output_format::table) print_labs_before(r, r.results.size());
}

void stdout_sink::finish(const run_report& r) {
  if (f_ == output_format::table) {
    print_labs_before(r, r.results.size());
    if (!header_) os_ << header_text(r) << "\n(no results)\n";
    if (r.ended != "complete") os_ << "\nrun " << r.ended << "\n";
  } else {
    os_ << render(r, f_);
  }
  os_.flush();
  os_.clear();  // a closed stdout must not fail what comes after
}

// ---- formats ------------------------------------------------------------------------------------------------

std::optional<output_format> parse_format(std::string_view name) {
  if (name == "table") return output_format::table;
  if (name == "csv") return output_format::csv;
  if (name == "json") return output_format::json;
  if (name == "md" || name == "markdown") return output_format::markdown;
  return std::nullopt;
}

std::optional<output_format> format_from_path(std::string_view path) {
  const auto slash = path.find_last_of('/');
  const std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const auto dot = file.find_last_of('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string ext = lower(file.substr(dot + 1));
  if (ext == "csv") return output_format::csv;
  if (ext == "json") return output_format::json;
  if (ext == "md") return output_format::markdown;
  if (ext == "txt") return output_format::table;
  return std::nullopt;
}

std::string_view to_string(output_format f) {
  switch (f) {
    case output_format::table: return "table";
    case output_format::csv: return "csv";
    case output_format::json: return "json";
    case output_format::markdown: return "markdown";
  }
  return "?";
}

}  // namespace memlab
