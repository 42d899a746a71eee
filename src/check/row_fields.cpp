// The fields of a check's row, declared once: what the table, the check file, Prometheus's text format
// and the one line show of a row, and how each reads it (check.hpp, "the fields of a row").
#include <fmt/format.h>

#include <cmath>
#include <stdexcept>

#include "check/check.hpp"
#include "harness/text.hpp"

namespace memlab::check {

namespace {

using M = const measurement&;
using R = const row&;

row_value words_or_none(std::string_view s) { return s.empty() ? row_value{} : row_value{std::string(s)}; }
row_value number_or_none(double v) { return std::isnan(v) ? row_value{} : row_value{v}; }
row_value ordinal_or_none(int v) { return v >= 0 ? row_value{std::int64_t{v}} : row_value{}; }

// The GPU a row is on (a pair's: the GPU that drives it); nullptr for the node.
const gpu_facts* gpu_of(M m, R r) {
  if (r.gpu < 0) return nullptr;
  for (const auto& g : m.gpus)
    if (g.ordinal == r.gpu) return &g;
  return nullptr;
}

// The command of a row's case: on its GPU, or on the node's first (the collective spans the rest).
std::string measured_by(M m, R r) {
  if (!r.m->from_lab()) return "NVML";
  if (m.gpus.empty() || (r.m->where == scope::pair && r.peer < 0)) return "memlab run " + command_of(r.m->measured);
  return "memlab run " + command_of(r.m->measured, r.gpu >= 0 ? r.gpu : m.gpus.front().ordinal, r.peer,
                                    static_cast<int>(m.gpus.size()));
}

// Where a row is, in the table's narrow column: "3", "3->0", "node".
std::string where_short(M, R r) {
  if (r.m->where == scope::pair) return r.gpu < 0 ? "pairs" : fmt::format("{}->{}", r.gpu, r.peer);
  if (r.m->where == scope::node) return "node";
  return std::to_string(r.gpu);
}

// What the table says of a row besides its figures: its fault code, what it points at, and why (the
// judge's words on a flagged row; why a row was skipped or not measured).
std::string explanation(R r) {
  std::string out = r.points_at;
  const std::string& words = !r.judged.empty() ? r.judged : r.note;
  const bool say_why = r.f != nullptr || r.v == verdict::skip || r.v == verdict::interrupted;
  if (say_why && !words.empty()) out += (out.empty() ? "" : ": ") + words;
  if (r.f != nullptr) out = fmt::format("[{}] {}", r.f->code, out);
  return out;
}

std::vector<std::string_view> verdict_names() {
  std::vector<std::string_view> out;
  for (verdict v : all_verdicts) out.push_back(to_string(v));
  return out;
}

using enum prometheus_role;
const row_field fields[] = {
    {.name = "where",
     .get = [](M, R r) -> row_value { return where_text(r); },
     .table = {.header = "gpu", .right = true, .text = where_short},
     .line = "{}"},
    {.name = "metric",
     .get = [](M, R r) -> row_value { return std::string(r.m->name); },
     .json = true,
     .replayed = true,
     .table = {.header = "metric"},
     .prometheus = {.role = label, .label = 3},
     .line = "{}"},
    {.name = "scope",
     .get = [](M, R r) -> row_value { return std::string(to_string(r.m->where)); },
     .json = true,
     .replayed = true,
     .prometheus = {.role = label, .label = 4}},
    {.name = "gpu",
     .get = [](M, R r) { return ordinal_or_none(r.gpu); },
     .json = true,
     .replayed = true,
     .prometheus = {.role = label, .label = 1}},
    {.name = "peer",
     .get = [](M, R r) { return ordinal_or_none(r.peer); },
     .json = true,
     .replayed = true,
     .prometheus = {.role = label, .label = 2}},
    {.name = "unit", .get = [](M, R r) -> row_value { return std::string(r.m->unit); }, .json = true},
    {.name = "higher_is_better", .get = [](M, R r) -> row_value { return r.m->higher_is_better; }, .json = true},
    {.name = "value",
     .unit = "unit",
     .get = [](M, R r) { return number_or_none(r.value); },
     .json = true,
     .replayed = true,
     .prometheus = {.role = gauge, .help = "A row's measured value, in the unit of its unit label.", .with = {"unit"}}},
    {.name = "shown",
     .get = [](M, R r) -> row_value { return format_value(r); },
     .json = true,
     .replayed = true,
     .table = {.header = "measured", .right = true},
     .line = "{}"},
    {.name = "reference",
     .unit = "unit",
     .get = [](M, R r) { return r.reference ? row_value{*r.reference} : row_value{}; },
     .json = true,
     .replayed = true,
     .table = {.header = "reference", .right = true},
     .prometheus = {.role = gauge,
                    .help = "The reference median of the row's metric (an NVML rule: the value expected)."}},
    {.name = "warn_at",
     .unit = "unit",
     .get = [](M, R r) { return r.at ? row_value{r.at->warn_at} : row_value{}; },
     .json = true},
    {.name = "fail_at",
     .unit = "unit",
     .get = [](M, R r) { return r.at ? row_value{r.at->fail_at} : row_value{}; },
     .json = true},
    {.name = "ratio",
     .get = [](M, R r) { return number_or_none(r.ratio); },
     .json = true,
     .table = {.header = "ratio", .right = true},
     .prometheus = {.role = gauge, .help = "A row's value over its reference median."}},
    {.name = "verdict",
     .get = [](M, R r) -> row_value { return std::string(to_string(r.v)); },
     .json = true,
     .replayed = true,
     .table = {.header = "verdict"},
     .prometheus = {.role = stateset,
                    .help = "A row's verdict, one series a verdict: 1 for the row's.",
                    .states = verdict_names},
     .line = "{}"},
    {.name = "level", .get = [](M, R r) -> row_value { return std::string(r.m->level); }, .json = true},
    // The judge's words on a flagged row, else what was read or why nothing was.
    {.name = "note", .get = [](M, R r) -> row_value { return !r.judged.empty() ? r.judged : r.note; }, .json = true},
    {.name = "seconds",
     .unit = "s",
     .get = [](M, R r) -> row_value { return r.seconds; },
     .json = true,
     .replayed = true},
    {.name = "measured_by", .get = [](M m, R r) -> row_value { return measured_by(m, r); }, .json = true},
    {.name = "measured_note", .get = [](M, R r) -> row_value { return r.note; }, .json = true, .replayed = true},
    {.name = "failed", .get = [](M, R r) { return words_or_none(r.failed); }, .json = true, .replayed = true},
    {.name = "fault",
     .get = [](M, R r) { return r.f != nullptr ? row_value{std::string(r.f->code)} : row_value{}; },
     .json = true,
     .prometheus = {.role = info,
                    .help = "A flagged row's fault code and action (value 1); no series for other rows.",
                    .with = {"action"}}},
    {.name = "action",
     .get = [](M, R r) { return r.act ? row_value{std::string(to_string(*r.act))} : row_value{}; },
     .json = true,
     .table = {.header = "action", .none = ""},
     .line = "({})"},
    {.name = "points_at", .get = [](M, R r) { return words_or_none(r.points_at); }, .json = true},
    {.name = "reason", .get = [](M, R r) { return words_or_none(r.reason); }, .json = true},
    // The identity of the row's GPU (a pair's: the GPU that drives it; the node: none, and the model of the
    // node's GPUs).
    {.name = "uuid",
     .get = [](M m, R r) -> row_value {
       const gpu_facts* g = gpu_of(m, r);
       return g != nullptr ? g->uuid : "";
     },
     .prometheus = {.role = label, .label = 5}},
    {.name = "serial",
     .get = [](M m, R r) -> row_value {
       const gpu_facts* g = gpu_of(m, r);
       return g != nullptr ? g->serial : "";
     },
     .prometheus = {.role = label, .label = 6}},
    {.name = "model",
     .get = [](M m, R r) -> row_value {
       const gpu_facts* g = gpu_of(m, r);
       return g != nullptr ? g->model.name : m.gpus.empty() ? "" : m.gpus.front().model.name;
     },
     .prometheus = {.role = label, .label = 7}},
    {.name = "explanation",
     .get = [](M, R r) -> row_value { return explanation(r); },
     .table = {.header = "points at / note", .max_width = 110}},
};

}  // namespace

std::span<const row_field> row_fields() { return fields; }

const row_field& row_field_named(std::string_view name, std::span<const row_field> in) {
  for (const auto& f : in)
    if (f.name == name) return f;
  throw std::out_of_range(fmt::format("no field of a check's row is named {}", name));
}

std::string row_text(const row_field& f, const measurement& m, const row& r) {
  const row_value v = f.get(m, r);
  if (std::holds_alternative<std::monostate>(v)) return "-";
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "yes" : "no";
  const double x = std::get<double>(v);
  if (f.unit == "unit") return format_number(x, *r.m);
  if (f.unit == "s") return fmt::format("{:.1f} s", x);
  return fmt::format("{:.3f}", x);
}

}  // namespace memlab::check
