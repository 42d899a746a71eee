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

#include <nlohmann/json.hpp>

#include "harness/text.hpp"

namespace memlab {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string cc_string(const device_info& d) { return std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor); }

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

std::string device_text(const device_info& d) {
  return d.name + " (device " + std::to_string(d.ordinal) + ", cc " + cc_string(d) + ", " + std::to_string(d.sm_count) +
         " SMs, L2 " + format_bytes(d.l2_bytes) + ")";
}

std::string ceiling_text(const device_info& d) {
  return d.measured_peak_gbps > 0 ? fixed(d.measured_peak_gbps, 1) + " GB/s (cudaMemcpy D2D)" : "not measured";
}

std::string status_text(const result& r) {
  const char* tag = r.status == result_status::skipped ? "SKIP" : r.status == result_status::failed ? "FAIL" : "ok";
  if (r.note.empty()) return tag;
  return std::string(tag) + ": " + shorten(r.note, 40);
}

const char* roof_label(roof_kind k) {
  switch (k) {
    case roof_kind::dram: return "DRAM";
    case roof_kind::l2: return "L2";
    case roof_kind::smem: return "shared memory";
    case roof_kind::fp32: return "FP32";
    case roof_kind::pcie: return "PCIe";
    case roof_kind::nvlink: return "NVLink";
  }
  return "?";
}

// The rate a roof is measured by, in the roof's unit.
double achieved(const result& r, roof_kind k) {
  return k == roof_kind::fp32 ? r.gflops : k == roof_kind::l2 ? r.batch_gbps : r.gbps;
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
  return "device " + device_text(d) + " | theoretical peak " + fixed(d.peak_gbps, 1) + " GB/s | measured ceiling " +
         ceiling_text(d) + " | bytes = reads + writes";
}

std::string lab_heading(const lab_info& l) {
  return l.name + ": " + l.teaches + " (roof: " + roof_label(l.roof) + ")";
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
  os << "## memlab results\n\n"
     << "- device: " << device_text(d) << ", driver " << version_string(d.driver_version) << ", runtime "
     << version_string(d.runtime_version) << "\n"
     << "- theoretical peak: " << fixed(d.peak_gbps, 1) << " GB/s (2 x memory clock x bus width / 8)\n"
     << "- measured ceiling: " << ceiling_text(d) << "\n"
     << "- command: " << fence << pad << rep.command << pad << fence << "\n"
     << "- memlab " << rep.memlab_version << ", git " << rep.git_sha << ", created " << rep.created << "\n"
     << "- bytes = reads + writes; GB/s and % from the cold (L2 flushed) median, host launch cost excluded\n"
     << "- run: " << rep.ended << " (" << rep.results.size() << " of " << rep.planned << " cases)\n";
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
  std::string out;
  for (const auto& m : model) out += (out.empty() ? "" : " ") + m.name + "=" + exact(m.value);
  return out;
}

// A result's measured figures in one field: "cycles_per_load=412.5cycles ns_per_load=221ns".
std::string measured_text(const std::vector<measured_figure>& measured) {
  std::string out;
  for (const auto& m : measured) out += (out.empty() ? "" : " ") + m.name + "=" + exact(m.value) + m.unit;
  return out;
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

void write_csv(std::ostream& os, const run_report& rep) {
  const auto names = param_names(rep);
  const auto row = [&os](const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) os << (i ? "," : "") << csv_field(fields[i]);
    os << '\n';
  };
  std::vector<std::string> header{"lab", "variant"};
  header.insert(header.end(), names.begin(), names.end());
  for (const char* h :
       {"bytes", "flops", "policy", "cold_median_ms", "cold_min_ms", "cold_p25_ms", "cold_p75_ms", "cold_samples",
        "cold_rel_spread", "batch_median_ms", "batch_min_ms", "batch_samples", "batch_rel_spread", "gbps", "batch_gbps",
        "pct_peak", "pct_measured", "l2_resident", "verified", "status", "note", "hardware_bytes", "hardware_gbps",
        "graph_median_ms", "graph_samples", "graph_gbps", "gflops", "roof", "roof_value", "roof_unit", "pct_roof",
        "sm_clock_mhz", "throttled_samples", "model", "measured"}) {
    header.emplace_back(h);
  }
  row(header);
  for (const auto& r : rep.results) {
    std::vector<std::string> f{r.lab, r.variant};
    for (const auto& n : names) {
      const param_value* v = r.find(n);
      f.push_back(v ? to_string(*v) : "");
    }
    const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
    for (std::string s :
         {std::to_string(r.bytes), std::to_string(r.flops), to_string(r.policy), exact(r.cold.median_ms),
          exact(r.cold.min_ms), exact(r.cold.p25_ms), exact(r.cold.p75_ms), std::to_string(r.cold.samples),
          exact(r.cold.rel_spread), exact(r.batch.median_ms), exact(r.batch.min_ms), std::to_string(r.batch.samples),
          exact(r.batch.rel_spread), exact(r.gbps), exact(r.batch_gbps), exact(r.pct_peak), exact(r.pct_measured),
          flag(r.l2_resident), flag(r.verified), std::string(to_string(r.status)), r.note,
          std::to_string(r.hardware_bytes), exact(r.hardware_gbps), exact(r.graph.median_ms),
          std::to_string(r.graph.samples), exact(r.graph_gbps), exact(r.gflops), r.roof.name, exact(r.roof.value),
          r.roof.unit, exact(r.pct_roof), exact(r.sm_clock_mhz), std::to_string(r.throttled_samples),
          model_text(r.model), measured_text(r.measured)}) {
      f.push_back(std::move(s));
    }
    row(f);
  }
}

// ---- JSON: memlab.results/1 --------------------------------------------------------------------------
// The DESIGN.md keys first in each object, the extensions after; docs/results-schema.md lists them.

ordered_json summary_json(const summary& s) {
  ordered_json j;
  j["median_ms"] = s.median_ms;
  j["min_ms"] = s.min_ms;
  j["max_ms"] = s.max_ms;
  j["p25_ms"] = s.p25_ms;
  j["p75_ms"] = s.p75_ms;
  j["samples"] = static_cast<std::uint64_t>(s.samples);
  j["rel_spread"] = s.rel_spread;
  j["mean_ms"] = s.mean_ms;
  return j;
}

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
      {"graph", "the same launches captured once in a CUDA graph, launched as one behind the blocking kernel: GPU "
                "time per launch; absent (samples 0, graph_note) when a variant cannot be captured"},
      {"statistics", "median, min, max, p25, p75 (type 7), mean; rel_spread = (p75 - p25) / median"},
      {"stopping", "sampling stops once rel_spread < target_rel_spread with at least min_samples, or when the case's "
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
  dev["link"] = {{"source", d.link_source}, {"pcie_gen", d.pcie_gen}, {"pcie_width", d.pcie_width},
                 {"pcie_gbps", d.pcie_gbps}, {"nvlink_links", d.nvlink_links}, {"nvlink_gbps", d.nvlink_gbps}};
  j["device"] = std::move(dev);
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

ordered_json result_json(const result& r) {
  ordered_json o;
  o["lab"] = r.lab;
  o["variant"] = r.variant;
  ordered_json params = ordered_json::object();
  for (const auto& p : r.params) {
    if (const auto* i = std::get_if<std::int64_t>(&p.value)) {
      params[p.name] = *i;
    } else {
      params[p.name] = std::get<std::string>(p.value);
    }
  }
  o["params"] = std::move(params);
  o["policy"] = {{"threads", r.policy.threads},
                 {"items_per_thread", r.policy.items_per_thread},
                 {"vec_bytes", r.policy.vec_bytes},
                 {"stages", r.policy.stages},
                 {"grid", r.policy.grid}};
  o["bytes"] = r.bytes;
  o["flops"] = r.flops;
  o["cold"] = summary_json(r.cold);
  o["batch"] = summary_json(r.batch);
  o["gbps"] = r.gbps;
  o["pct_peak"] = r.pct_peak;
  o["l2_resident"] = r.l2_resident;
  o["verified"] = r.verified;
  o["batch_gbps"] = r.batch_gbps;
  o["pct_measured"] = r.pct_measured;
  o["status"] = std::string(to_string(r.status));
  o["note"] = r.note;
  o["hardware_bytes"] = r.hardware_bytes;
  o["hardware_gbps"] = r.hardware_gbps;
  o["graph"] = summary_json(r.graph);
  o["graph_gbps"] = r.graph_gbps;
  o["graph_note"] = r.graph_note;
  o["peer"] = r.peer;
  o["gflops"] = r.gflops;
  o["roof"] = {{"name", r.roof.name}, {"value", r.roof.value}, {"unit", r.roof.unit}};
  o["pct_roof"] = r.pct_roof;
  o["sm_clock_mhz"] = r.sm_clock_mhz;
  o["throttled_samples"] = static_cast<std::uint64_t>(r.throttled_samples);
  ordered_json model = ordered_json::object();
  for (const auto& m : r.model) model[m.name] = m.value;
  o["model"] = std::move(model);
  if (!r.directions.empty()) {
    ordered_json dirs = ordered_json::object();
    for (const auto& d : r.directions) dirs[d.name] = {{"bytes", d.bytes}, {"gbps", d.gbps}};
    o["directions"] = std::move(dirs);
  }
  if (r.bus_factor > 0) {
    o["bus_factor"] = r.bus_factor;
    o["busbw_gbps"] = r.busbw_gbps;
  }
  if (!r.measured.empty()) {
    ordered_json measured = ordered_json::object();
    for (const auto& m : r.measured) measured[m.name] = {{"value", m.value}, {"unit", m.unit}};
    o["measured"] = std::move(measured);
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

text_table lab_table(const run_report& rep, const lab_info& l) {
  const auto rows = results_of(rep, l.name);
  text_table t;
  std::vector<std::string> names = l.params;
  for (const result* r : rows)
    for (const auto& p : r->params)
      if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
  t.column("variant", false);
  for (const auto& n : names) {
    bool numeric = true;  // numbers right, words left
    for (const result* r : rows) {
      const param_value* v = r->find(n);
      if (v != nullptr && !std::holds_alternative<std::int64_t>(*v)) numeric = false;
    }
    t.column(n, numeric);
  }
  const bool flops = l.roof == roof_kind::fp32 ||
                     std::any_of(rows.begin(), rows.end(), [](const result* r) { return r->flops > 0; });
  const bool hardware = std::any_of(rows.begin(), rows.end(), [](const result* r) { return r->hardware_bytes > 0; });
  const bool dram = l.roof == roof_kind::dram;
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
  t.column("bytes", true);
  t.column("policy", false);
  for (const char* c : {"cold", "batch", "graph"}) t.column(c, true);
  t.column(l.roof == roof_kind::l2 ? "batch GB/s" : "GB/s", true);
  if (flops) t.column("GFLOP/s", true);
  t.column(std::string("%") + (l.roof == roof_kind::smem ? "smem" : l.roof == roof_kind::fp32 ? "fp32" : roof_label(l.roof)), true);
  if (dram) t.column("%ceiling", true);
  if (hardware) t.column("HW GB/s", true);
  for (const auto& n : model_names) t.column(n, true);
  for (const auto& [n, unit] : measured_names) t.column(unit.empty() ? n : n + " [" + unit + "]", true);
  t.column("L2", false);
  t.column("status", false);
  for (const result* r : rows) {
    std::vector<std::string> row{r->variant};
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
    // A case that never ran (skipped, or failed before timing) has no timings: "-", not 0.
    const bool cold = r->cold.samples > 0;
    const auto ms = [](const summary& s) { return s.samples > 0 ? human_ms(s.median_ms) : std::string("-"); };
    row.push_back(format_bytes(r->bytes));
    row.push_back(to_string(r->policy));
    row.push_back(ms(r->cold));
    row.push_back(ms(r->batch));
    row.push_back(ms(r->graph));
    row.push_back(cold ? fixed(l.roof == roof_kind::l2 ? r->batch_gbps : r->gbps, 1) : "-");
    if (flops) row.push_back(cold ? fixed(r->gflops, 1) : "-");
    row.push_back(cold && r->roof.value > 0 ? fixed(r->pct_roof, 1) : "-");
    if (dram) row.push_back(cold && rep.device.measured_peak_gbps > 0 ? fixed(r->pct_measured, 1) : "-");
    if (hardware) row.push_back(cold && r->hardware_bytes > 0 ? fixed(r->hardware_gbps, 1) : "-");
    for (const auto& n : model_names) {
      const auto m = std::find_if(r->model.begin(), r->model.end(), [&](const model_figure& x) { return x.name == n; });
      row.push_back(m == r->model.end() ? "-" : fixed_g(m->value));
    }
    for (const auto& n : measured_names) {
      const auto m = std::find_if(r->measured.begin(), r->measured.end(),
                                  [&](const measured_figure& x) { return x.name == n.first; });
      row.push_back(m == r->measured.end() ? "-" : fixed_g(m->value));
    }
    row.push_back(r->l2_resident ? "yes" : "");
    row.push_back(status_text(*r));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string lab_summary(const run_report& rep, const lab_info& l) {
  const auto rows = results_of(rep, l.name);
  const auto measured = [](const result* r) { return r->status == result_status::ok && r->cold.samples > 0; };
  const result* best = nullptr;
  for (const result* r : rows) {
    if (!measured(r) || r->peer) continue;
    if (best == nullptr || achieved(*r, l.roof) > achieved(*best, l.roof)) best = r;
  }
  if (best == nullptr) return {};
  const auto same_point = [&](const result* r) {
    if (r->params.size() != best->params.size()) return false;
    for (std::size_t i = 0; i < r->params.size(); ++i)
      if (r->params[i].name != best->params[i].name || r->params[i].value != best->params[i].value) return false;
    return true;
  };
  // The worst rung measured at the best one's point: what the ladder climbs. The peers measured
  // there: what a user would otherwise pick.
  const result* worst = best;
  std::vector<const result*> peers;
  for (const result* r : rows) {
    if (!measured(r) || !same_point(r)) continue;
    if (r->peer) {
      // One entry per peer: a point measured twice in one report lists its best figure.
      const auto same = std::find_if(peers.begin(), peers.end(), [&](const result* q) { return q->variant == r->variant; });
      if (same == peers.end()) peers.push_back(r);
      else if (achieved(*r, l.roof) > achieved(**same, l.roof)) *same = r;
    } else if (achieved(*r, l.roof) < achieved(*worst, l.roof)) worst = r;
  }
  std::string point;
  for (const auto& p : best->params)
    point += (point.empty() ? "" : " ") + p.name + "=" +
             (p.name == "n" && std::holds_alternative<std::int64_t>(p.value)
                  ? format_count(static_cast<std::uint64_t>(std::get<std::int64_t>(p.value)))
                  : to_string(p.value));
  const std::string unit = l.roof == roof_kind::fp32 ? " GFLOP/s" : " GB/s";
  std::string s = l.name + ": best " + best->variant + " at " + point + ": " + fixed(achieved(*best, l.roof), 1) + unit +
                  ", " + fixed(best->pct_roof, 1) + "% of " + roof_label(l.roof);
  if (worst != best && achieved(*worst, l.roof) > 0) {
    s += "; worst there " + worst->variant + ": " + fixed(achieved(*worst, l.roof), 1) + unit + " (" +
         fixed(achieved(*best, l.roof) / achieved(*worst, l.roof), 2) + "x)";
  }
  for (std::size_t i = 0; i < peers.size(); ++i)
    s += (i == 0 ? "; peers there: " : ", ") + peers[i]->variant + " " + fixed(achieved(*peers[i], l.roof), 1) + unit;
  return s;
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
    throw write_error("could not write " + path + ": " + what + " (" + std::strerror(errno) + ")");
  };
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) fail("cannot create a temporary file in " + dir.string());
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
