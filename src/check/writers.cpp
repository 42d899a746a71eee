// memlab check's writers besides the check file: the table, Prometheus's text format, one line for a
// scheduler. Each reads a row's fields as judge() left them; none judges.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <ctime>
#include <map>
#include <ostream>

#include "check/check.hpp"
#include "harness/table.hpp"
#include "harness/text.hpp"
#include "memlab_git_sha.hpp"

namespace memlab::check {

namespace {

std::map<verdict, int> counts_of(const measurement& m) {
  std::map<verdict, int> c;
  for (const row& r : m.rows) ++c[r.v];
  return c;
}

std::string counts_text(const measurement& m) {
  const auto c = counts_of(m);
  std::vector<std::string> parts;
  for (verdict v : all_verdicts) {
    const auto it = c.find(v);
    if (it != c.end()) parts.push_back(fmt::format("{} {}", it->second, to_string(v)));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string gpus_text(const measurement& m) {
  if (m.gpus.empty()) return "no GPU";
  const auto& g = m.gpus.front().model;
  return fmt::format("{} x {} ({} SMs, {:.1f} GiB), joined by {}", m.gpus.size(), g.name, g.sm_count, g.memory_gib,
                     m.link);
}

std::string process_text(const gpu_process& p) {
  return fmt::format("pid {} {}{}", p.pid, p.name.empty() ? "(name not visible here)" : p.name,
                     p.used_mib ? fmt::format(" holding {:.0f} MiB", *p.used_mib) : "");
}

std::string where_short(const row& r) {
  if (r.m->where == scope::pair) return r.gpu < 0 ? "pairs" : fmt::format("{}->{}", r.gpu, r.peer);
  if (r.m->where == scope::node) return "node";
  return std::to_string(r.gpu);
}

// The run's verdict in one word: interrupted, fail, busy, no_reference, warn (a warning or a sibling), pass.
std::string_view run_verdict(int exit_status) {
  switch (exit_status) {
    case exit_interrupted: return "interrupted";
    case exit_fail: return "fail";
    case exit_busy: return "busy";
    case exit_no_reference: return "no_reference";
    case exit_warn: return "warn";
    default: return "pass";
  }
}

}  // namespace

void write_table(std::ostream& os, const measurement& m, const check_header& h) {
  if (h.replay) {
    os << fmt::format("memlab check, replayed: {} ({}, measured {} on {})\n", h.replay->path, h.replay->schema,
                      m.started, h.machine);
  }
  os << fmt::format("memlab check: {}; {:.1f} s\n", gpus_text(m), m.seconds);
  // Who else was on the GPUs comes first: it changes how every flagged row below reads.
  for (const auto& g : m.gpus) {
    if (!g.busy()) continue;
    std::vector<std::string> who;
    for (const auto& p : g.processes) who.push_back(fmt::format("{} ({} the check)", process_text(p), p.seen));
    os << fmt::format("GPU {} was busy: {}\n", g.ordinal, fmt::join(who, "; "));
  }
  if (m.busy()) os << "rows another process could have moved are busy, not faults: run the check again when idle\n";
  if (!m.interrupted_by.empty()) {
    os << fmt::format("interrupted by {}: the rows not measured say so\n", m.interrupted_by);
  }
  os << fmt::format("reference: {}\n\n", h.reference_note);
  text_table t;
  t.column("gpu", true);
  t.column("metric", false);
  t.column("measured", true);
  t.column("reference", true);
  t.column("ratio", true);
  t.column("verdict", false);
  t.column("action", false);
  t.column("points at / note", false);
  for (const row& r : m.rows) {
    const std::string ref = r.reference ? format_number(*r.reference, *r.m) : "-";
    std::string note = r.points_at;
    const std::string words = !r.judged.empty() ? r.judged : r.note;
    const bool say_why = r.f != nullptr || r.v == verdict::skip || r.v == verdict::interrupted;
    if (say_why && !words.empty()) note += (note.empty() ? "" : ": ") + words;
    if (r.f != nullptr) note = fmt::format("[{}] {}", r.f->code, note);
    t.rows.push_back({where_short(r), std::string(r.m->name), format_value(r), ref,
                      std::isnan(r.ratio) ? "-" : fmt::format("{:.3f}", r.ratio), std::string(to_string(r.v)),
                      r.act ? std::string(to_string(*r.act)) : "", shorten(note, 110)});
  }
  write_aligned(os, t);
  const auto act = action_of(m);
  os << fmt::format("\n{}{} (exit {})\n", counts_text(m), act ? fmt::format("; action: {}", to_string(*act)) : "",
                    h.exit_status);
}

// ---- Prometheus ---------------------------------------------------------------------------------------

namespace {

// A label value in the text format: backslash, double quote and newline escaped.
std::string label_value(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string labels(const std::vector<std::pair<std::string_view, std::string>>& kv) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : kv) parts.push_back(fmt::format("{}=\"{}\"", k, label_value(v)));
  return parts.empty() ? "" : fmt::format("{{{}}}", fmt::join(parts, ","));
}

// A sample's value: integers as integers, the rest with every digit a double holds.
std::string sample(double v) {
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{:.0f}", v);
  return fmt::format("{}", v);
}

long long unix_seconds(const std::string& iso) {
  std::tm tm{};
  if (strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return 0;
  return static_cast<long long>(timegm(&tm));
}

struct family {
  std::string_view name, help;
  std::vector<std::string> lines;
};

}  // namespace

std::string check_prometheus(const measurement& m, const check_header& h) {
  // The families, in the order docs/check.md lists them.
  family run_info{"memlab_check_run_info",
                  "The check run (value 1): the machine, the memlab that judged it, the reference, the link.", {}};
  family run_time{"memlab_check_run_timestamp_seconds", "When the check started measuring, Unix time.", {}};
  family run_duration{"memlab_check_run_duration_seconds", "How long the check measured.", {}};
  family run_exit{"memlab_check_run_exit_status",
                  "The check's exit status: 0 pass, 1 fail, 5 warn, 6 no reference, 7 busy, 130 interrupted.", {}};
  family run_verdicts{"memlab_check_run_verdict", "The check's verdict, one series a verdict: 1 for this run's.", {}};
  family run_action{"memlab_check_run_action",
                    "The most urgent action the check asks for, one series an action: 1 for this run's.", {}};
  family gpu_info{"memlab_check_gpu_info", "A GPU checked (value 1): its identity, driver and CUDA.", {}};
  family gpu_procs{"memlab_check_gpu_other_processes",
                   "Other processes found on the GPU before or during the check.", {}};
  family value{"memlab_check_value", "A row's measured value, in the unit of its unit label.", {}};
  family reference{"memlab_check_reference",
                   "The reference median of the row's metric (an NVML rule: the value expected).", {}};
  family ratio{"memlab_check_ratio", "A row's value over its reference median.", {}};
  family verdicts{"memlab_check_verdict", "A row's verdict, one series a verdict: 1 for the row's.", {}};
  family faults_f{"memlab_check_fault", "A flagged row's fault code and action (value 1); no series for other rows.",
                  {}};

  run_info.lines.push_back(labels({{"machine", h.machine},
                                   {"memlab_version", MEMLAB_VERSION},
                                   {"git_sha", MEMLAB_GIT_SHA},
                                   {"reference", h.ref != nullptr ? h.ref->path : ""},
                                   {"link", m.link},
                                   {"replay", h.replay ? h.replay->path : ""}}) +
                           " 1");
  run_time.lines.push_back(fmt::format(" {}", unix_seconds(m.started)));
  run_duration.lines.push_back(fmt::format(" {}", sample(m.seconds)));
  run_exit.lines.push_back(fmt::format(" {}", h.exit_status));
  const std::string_view rv = run_verdict(h.exit_status);
  for (std::string_view v : {"pass", "warn", "fail", "busy", "no_reference", "interrupted"})
    run_verdicts.lines.push_back(labels({{"verdict", std::string(v)}}) + (v == rv ? " 1" : " 0"));
  const auto act = action_of(m);
  for (action a : {action::monitor, action::rerun, action::reset, action::drain, action::replace})
    run_action.lines.push_back(labels({{"action", std::string(to_string(a))}}) + (act && *act == a ? " 1" : " 0"));

  std::map<int, const gpu_facts*> by_ordinal;
  for (const auto& g : m.gpus) {
    by_ordinal[g.ordinal] = &g;
    const auto cuda = [](int v) { return v > 0 ? fmt::format("{}.{}", v / 1000, v % 1000 / 10) : std::string(); };
    const auto who = std::vector<std::pair<std::string_view, std::string>>{
        {"gpu", std::to_string(g.ordinal)}, {"uuid", g.uuid}, {"serial", g.serial}, {"model", g.model.name}};
    auto info = who;
    info.insert(info.end(), {{"bus_id", g.bus_id}, {"driver", g.driver}, {"cuda", cuda(g.driver_version)}});
    gpu_info.lines.push_back(labels(info) + " 1");
    gpu_procs.lines.push_back(labels(who) + fmt::format(" {}", g.processes.size()));
  }
  for (const row& r : m.rows) {
    // A row's labels: where it is, its metric, and the identity of its GPU (a pair: the GPU that drives
    // it; the node: none).
    const gpu_facts* g = r.gpu >= 0 && by_ordinal.contains(r.gpu) ? by_ordinal[r.gpu] : nullptr;
    const std::vector<std::pair<std::string_view, std::string>> base{
        {"gpu", r.gpu >= 0 ? std::to_string(r.gpu) : ""},
        {"peer", r.peer >= 0 ? std::to_string(r.peer) : ""},
        {"metric", std::string(r.m->name)},
        {"scope", std::string(to_string(r.m->where))},
        {"uuid", g != nullptr ? g->uuid : ""},
        {"serial", g != nullptr ? g->serial : ""},
        {"model", g != nullptr ? g->model.name : m.gpus.empty() ? "" : m.gpus.front().model.name}};
    if (r.measured()) {
      auto with_unit = base;
      with_unit.emplace_back("unit", std::string(r.m->unit));
      value.lines.push_back(labels(with_unit) + " " + sample(r.value));
    }
    if (r.reference) reference.lines.push_back(labels(base) + " " + sample(*r.reference));
    if (!std::isnan(r.ratio)) ratio.lines.push_back(labels(base) + " " + sample(r.ratio));
    for (verdict v : all_verdicts) {
      auto with = base;
      with.emplace_back("verdict", std::string(to_string(v)));
      verdicts.lines.push_back(labels(with) + (r.v == v ? " 1" : " 0"));
    }
    if (r.f != nullptr && r.act) {
      auto with = base;
      with.emplace_back("fault", std::string(r.f->code));
      with.emplace_back("action", std::string(to_string(*r.act)));
      faults_f.lines.push_back(labels(with) + " 1");
    }
  }
  std::string out;
  for (const family* f : {&run_info, &run_time, &run_duration, &run_exit, &run_verdicts, &run_action, &gpu_info,
                          &gpu_procs, &value, &reference, &ratio, &verdicts, &faults_f}) {
    if (f->lines.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f->name, f->help, f->name);
    for (const auto& l : f->lines) out += fmt::format("{}{}\n", f->name, l);
  }
  return out;
}

// ---- one line -----------------------------------------------------------------------------------------

std::string check_line(const measurement& m, const check_header& h, std::size_t max_chars) {
  const auto act = action_of(m);
  // An interrupted check that failed on a row it measured says fail first: a scheduler acts on it.
  const bool failed = std::any_of(m.rows.begin(), m.rows.end(), [](const row& r) { return r.v == verdict::fail; });
  const std::string_view word = h.exit_status == exit_interrupted && failed ? "fail" : run_verdict(h.exit_status);
  std::string head = fmt::format("memlab check {}", word);
  if (act) head += fmt::format(" ({})", to_string(*act));
  if (!m.interrupted_by.empty()) head += fmt::format(" interrupted by {}", m.interrupted_by);
  // The flagged rows, the most urgent action first, then in the table's order.
  std::vector<const row*> flagged;
  for (const row& r : m.rows)
    if (r.act) flagged.push_back(&r);
  std::stable_sort(flagged.begin(), flagged.end(), [](const row* a, const row* b) {
    return static_cast<int>(*a->act) > static_cast<int>(*b->act);
  });
  std::vector<std::string> items;
  if (m.busy()) {
    for (const auto& g : m.gpus)
      for (const auto& p : g.processes) items.push_back(fmt::format("GPU {} busy: {}", g.ordinal, process_text(p)));
  }
  for (const row* r : flagged) {
    if (r->v == verdict::busy) continue;  // the processes above say it
    items.push_back(fmt::format("{} {} {} {} ({})", where_text(*r), r->m->name, format_value(*r), to_string(r->v),
                                to_string(*r->act)));
  }
  if (items.empty()) {
    const auto c = counts_of(m);
    const int pass = c.contains(verdict::pass) ? c.at(verdict::pass) : 0;
    return shorten(fmt::format("{}: {} of {} rows pass", head, pass, m.rows.size()), max_chars);
  }
  std::string out = head + ":";
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string next = fmt::format("{}{}", i == 0 ? " " : "; ", items[i]);
    const std::size_t left = items.size() - i - 1;
    const std::string more = left > 0 ? fmt::format("; +{} more", left) : "";
    // Room for this item and, when others follow, for the count of those cut.
    const std::string after_cut = fmt::format("; +{} more", items.size() - i);
    if (display_width(out + next + more) > max_chars) {
      if (i == 0) return shorten(out + next, max_chars);
      return display_width(out + after_cut) <= max_chars ? out + after_cut : shorten(out + after_cut, max_chars);
    }
    out += next;
  }
  return out;
}

}  // namespace memlab::check
