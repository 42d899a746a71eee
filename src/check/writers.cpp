// memlab check's writers besides the check file: the table, Prometheus's text format, one line for a
// scheduler. Each reads a row through its fields' declarations (row_fields.cpp), as judge() left it;
// none judges, and none names a field of a row.
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

// A row's cell in the table: the field's text (its column's own form, if it has one), cut to the
// column's width.
std::string cell_text(const row_field& f, const measurement& m, const row& r) {
  std::string cell = f.table.text != nullptr                               ? f.table.text(m, r)
                     : std::holds_alternative<std::monostate>(f.get(m, r)) ? std::string(f.table.none)
                                                                           : row_text(f, m, r);
  return f.table.max_width > 0 ? shorten(cell, f.table.max_width) : cell;
}

}  // namespace

void write_table(std::ostream& os, const measurement& m, const check_header& h,
                 std::span<const row_field> fields) {
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
  for (const row_field& f : fields)
    if (!f.table.header.empty()) t.column(std::string(f.table.header), f.table.right);
  for (const row& r : m.rows) {
    std::vector<std::string> cells;
    for (const row_field& f : fields)
      if (!f.table.header.empty()) cells.push_back(cell_text(f, m, r));
    t.rows.push_back(std::move(cells));
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
// A row field's value as a sample: a number or a flag (1, 0).
std::string sample(const row_value& v) {
  if (const auto* d = std::get_if<double>(&v)) return sample(*d);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "1" : "0";
  throw std::logic_error("a row's field in words is not a Prometheus sample: declare it a label or an info series");
}

long long unix_seconds(const std::string& iso) {
  std::tm tm{};
  if (strptime(iso.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return 0;
  return static_cast<long long>(timegm(&tm));
}

struct family {
  std::string name;
  std::string_view help;
  std::vector<std::string> lines;
  const row_field* field = nullptr;  // a row's: the field it shows
};

// A field's value as a label: "" for none.
std::string label_text(const row_value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* d = std::get_if<double>(&v)) return sample(*d);
  return "";
}

}  // namespace

std::string check_prometheus(const measurement& m, const check_header& h, std::span<const row_field> fields) {
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

  for (const auto& g : m.gpus) {
    const auto cuda = [](int v) { return v > 0 ? fmt::format("{}.{}", v / 1000, v % 1000 / 10) : std::string(); };
    const auto who = std::vector<std::pair<std::string_view, std::string>>{
        {"gpu", std::to_string(g.ordinal)}, {"uuid", g.uuid}, {"serial", g.serial}, {"model", g.model.name}};
    auto info = who;
    info.insert(info.end(), {{"bus_id", g.bus_id}, {"driver", g.driver}, {"cuda", cuda(g.driver_version)}});
    gpu_info.lines.push_back(labels(info) + " 1");
    gpu_procs.lines.push_back(labels(who) + fmt::format(" {}", g.processes.size()));
  }
  // The rows: a family per field that is a series, in the fields' order; each series labelled with the
  // row's labels (the fields that are labels, in their places), then its own.
  std::vector<const row_field*> row_labels;
  std::vector<family> row_families;
  for (const row_field& f : fields) {
    if (f.prometheus.role == prometheus_role::label) row_labels.push_back(&f);
    if (f.prometheus.role == prometheus_role::gauge || f.prometheus.role == prometheus_role::stateset ||
        f.prometheus.role == prometheus_role::info)
      row_families.push_back({fmt::format("memlab_check_{}", f.name), f.prometheus.help, {}, &f});
  }
  std::stable_sort(row_labels.begin(), row_labels.end(),
                   [](const row_field* a, const row_field* b) { return a->prometheus.label < b->prometheus.label; });
  for (const row& r : m.rows) {
    std::vector<std::pair<std::string_view, std::string>> base;
    for (const row_field* f : row_labels) base.emplace_back(f->name, label_text(f->get(m, r)));
    for (family& fam : row_families) {
      const row_field& f = *fam.field;
      const row_value v = f.get(m, r);
      auto with = base;
      if (f.prometheus.role == prometheus_role::stateset) {
        const std::string now = label_text(v);
        for (std::string_view state : f.prometheus.states()) {
          with.resize(base.size());
          with.emplace_back(f.name, std::string(state));
          fam.lines.push_back(labels(with) + (state == now ? " 1" : " 0"));
        }
        continue;
      }
      if (std::holds_alternative<std::monostate>(v)) continue;  // no value: no series
      if (f.prometheus.role == prometheus_role::info) with.emplace_back(f.name, label_text(v));
      for (std::string_view name : f.prometheus.with)
        if (!name.empty()) with.emplace_back(name, label_text(row_field_named(name, fields).get(m, r)));
      fam.lines.push_back(labels(with) + " " + (f.prometheus.role == prometheus_role::info ? "1" : sample(v)));
    }
  }
  std::string out;
  std::vector<const family*> all{&run_info, &run_time,     &run_duration, &run_exit,
                                 &run_verdicts, &run_action, &gpu_info,  &gpu_procs};
  for (const family& f : row_families) all.push_back(&f);
  for (const family* f : all) {
    if (f->lines.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f->name, f->help, f->name);
    for (const auto& l : f->lines) out += fmt::format("{}{}\n", f->name, l);
  }
  return out;
}

// ---- one line -----------------------------------------------------------------------------------------

std::string check_line(const measurement& m, const check_header& h, std::size_t max_chars,
                       std::span<const row_field> fields) {
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
    std::vector<std::string> parts;  // the fields the line shows, each in its form
    for (const row_field& f : fields)
      if (!f.line.empty()) parts.push_back(fmt::format(fmt::runtime(f.line), row_text(f, m, *r)));
    items.push_back(fmt::format("{}", fmt::join(parts, " ")));
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
