#include "check/check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstdlib>
#include <map>
#include <ostream>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <variant>

#include "harness/dtype.hpp"
#include "harness/error.hpp"
#include "harness/plan.hpp"
#include "harness/table.hpp"
#include "harness/text.hpp"
#include "memlab_git_sha.hpp"

namespace memlab::check {

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// A lab case's outcome: its result, or why it did not run.
using case_outcome = std::variant<result, std::string>;

// The figure `name` of `r`: a figure the lab's kernels measured, else a result field.
std::optional<double> figure_of(const result& r, std::string_view name) {
  for (const auto& f : r.measured)
    if (f.name == name) return f.value;
  try {
    const field_value v = result_field_named(name).get(r);
    if (const auto* d = std::get_if<double>(&v)) return *d;
    if (const auto* u = std::get_if<std::uint64_t>(&v)) return static_cast<double>(*u);
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  } catch (const std::out_of_range&) {
  }
  return std::nullopt;
}

class suite_runner {
 public:
  suite_runner(std::span<const lab* const> built, std::span<const missing_lab> missing, check_backend& b,
               const check_options& o, std::ostream& progress)
      : built_(built), missing_(missing), b_(b), o_(o), progress_(progress) {}

  // Runs `c` on GPU `gpu`, "$peer" and "$gpus" in its axes replaced; NVML sampled meanwhile. After a
  // CUDA error (the GPU's context may be lost) no case runs: each says why.
  case_outcome run(const lab_case& c, int gpu, int peer, int gpus) {
    if (!stopped_.empty()) return stopped_;
    const lab* l = nullptr;
    for (const lab* x : built_)
      if (x->name == c.lab) l = x;
    if (l == nullptr) {
      for (const auto& m : missing_)
        if (m.name == c.lab) return fmt::format("lab {} is not built: {}", c.lab, m.why);
      return fmt::format("lab {} is not built in this memlab", c.lab);
    }
    if (std::none_of(l->variants.begin(), l->variants.end(), [&](const variant& v) { return v.name == c.variant; })) {
      return l->built_without.empty() ? fmt::format("lab {} has no rung {}", c.lab, c.variant)
                                      : fmt::format("{} is not built: built without {}", c.variant, l->built_without);
    }
    run_request req;
    req.labs = {std::string(c.lab)};
    req.variants = {std::string(c.variant)};
    req.dtypes = {*parse_dtype(c.dtype)};
    req.sizes.text = std::string(c.size);
    for (auto& [axis, value] : axes_of(c, peer, gpus)) req.axes.emplace_back(axis, axis_values(std::move(value)));
    req.devices = {gpu};
    req.device_count = b_.device_count();
    req.max_time_s = o_.max_time_s;
    req.progress = false;
    req.measure_ceiling = false;
    req.command = "memlab run " + command_of(c, gpu, peer, gpus);
    std::vector<planned_case> cases;
    try {
      cases = plan_cases(req, built_, missing_);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    if (cases.size() != 1) return fmt::format("the case plans {} cases, not one", cases.size());
    cases.front().device = gpu;  // a run of one GPU plans it as "the run's only one"
    b_.nvml_start(gpu);
    result r;
    try {
      r = b_.runner().run(cases.front(), req);
    } catch (const cuda_error& e) {
      // The GPU's context may be lost: this metric fails with the error, and the check measures nothing
      // more (what it measured so far is judged and written).
      (void)b_.nvml_stop(gpu);
      stopped_ = fmt::format("not measured: a CUDA error on GPU {} stopped the check", gpu);
      r.status = result_status::failed;
      r.note = fmt::format("a CUDA error stopped the check: {}", e.what());
      return r;
    } catch (const std::exception& e) {
      // Another error (NCCL's, a host allocation): this metric fails with it, the check goes on.
      (void)b_.nvml_stop(gpu);
      r.status = result_status::failed;
      r.note = fmt::format("an error stopped the case: {}", e.what());
      return r;
    }
    merge(b_.nvml_stop(gpu));
    if (r.status == result_status::skipped) return r.note;
    return r;
  }

  // The samples of every case on the current GPU, together; why there are none when no case ran.
  nvml_samples take_samples() {
    nvml_samples s = std::exchange(samples_, {});
    if (s.samples == 0 && s.why.empty()) s.why = "no case ran on this GPU while NVML was sampled";
    return s;
  }

 private:
  void merge(const nvml_samples& s) {
    if (s.samples == 0) {
      if (samples_.samples == 0) samples_.why = s.why;
      return;
    }
    samples_.why.clear();
    samples_.samples += s.samples;
    samples_.reasons |= s.reasons;
    samples_.gen = std::max(samples_.gen, s.gen);
    samples_.width = std::max(samples_.width, s.width);
  }

  std::span<const lab* const> built_;
  std::span<const missing_lab> missing_;
  check_backend& b_;
  const check_options& o_;
  std::ostream& progress_;
  nvml_samples samples_;
  std::string stopped_;  // non-empty: a CUDA error stopped the check; why the cases after it did not run
};

std::string format_value(const row& r) {
  if (!r.shown.empty()) return r.shown;
  if (!r.measured()) return "-";
  const double v = r.value;
  if (r.m->unit == "GB/s" || r.m->unit == "MHz") return fmt::format("{:.1f} {}", v, r.m->unit);
  if (r.m->unit == "ns") return fmt::format("{:.1f} ns", v);
  return fmt::format("{:.0f} {}", v, r.m->unit);
}

std::string where_of(const row& r) {
  if (r.m->where == scope::pair) return r.gpu < 0 ? "pairs" : fmt::format("{}->{}", r.gpu, r.peer);
  if (r.m->where == scope::node) return "node";
  return std::to_string(r.gpu);
}

// The row of a lab case's outcome.
row lab_row(const metric& m, int gpu, int peer, const case_outcome& out, double seconds) {
  row r{.m = &m, .gpu = gpu, .peer = peer, .seconds = seconds};
  if (const auto* why = std::get_if<std::string>(&out)) {
    r.note = *why;
    return r;
  }
  const result& res = std::get<result>(out);
  if (res.status == result_status::failed) {
    r.v = verdict::fail;
    r.note = res.note;
    return r;
  }
  const auto f = figure_of(res, m.measured.figure);
  if (!f || *f <= 0) {
    r.note = fmt::format("the case gave no {}", m.measured.figure);
    return r;
  }
  r.value = *f;
  return r;
}

// The rows NVML's readings give, each judged by its own rule.
std::vector<row> nvml_rows(int gpu, const nvml_readings& rd, const nvml_samples& s) {
  std::vector<row> out;
  for (const metric& m : suite()) {
    if (m.nvml == nvml_reading::none) continue;
    row r{.m = &m, .gpu = gpu};
    const auto fail_if = [&](bool bad, verdict worse) { r.v = bad ? worse : verdict::pass; };
    if (!rd.why.empty()) {
      r.note = rd.why;
      out.push_back(std::move(r));
      continue;
    }
    switch (m.nvml) {
      case nvml_reading::none: break;
      case nvml_reading::clock_events: {
        if (!s.why.empty()) {
          r.note = s.why;
          break;
        }
        const std::uint64_t seen = s.reasons & (clock_event::failing | clock_event::warning);
        r.value = static_cast<double>(std::popcount(seen));
        r.reference = 0;
        r.shown = clock_event_text(seen);
        r.v = (seen & clock_event::failing) != 0   ? verdict::fail
              : (seen & clock_event::warning) != 0 ? verdict::warn
                                                   : verdict::pass;
        r.note = fmt::format("{} samples; all reasons seen: {}", s.samples, clock_event_text(s.reasons));
        break;
      }
      case nvml_reading::ecc_volatile:
      case nvml_reading::ecc_aggregate: {
        const auto& count = m.nvml == nvml_reading::ecc_volatile ? rd.ecc_volatile : rd.ecc_aggregate;
        if (!count) {
          r.note = rd.ecc_why;
          break;
        }
        r.value = static_cast<double>(*count);
        r.reference = 0;
        // Since the driver loaded: a failing part now. Over the life of the GPU: a history that may
        // be handled already (rows remapped), worth a look.
        fail_if(*count > 0, m.nvml == nvml_reading::ecc_volatile ? verdict::fail : verdict::warn);
        break;
      }
      case nvml_reading::pcie_gen:
      case nvml_reading::pcie_width: {
        const bool gen = m.nvml == nvml_reading::pcie_gen;
        const int seen = gen ? s.gen : s.width, most = gen ? rd.max_gen : rd.max_width;
        if (!s.why.empty() || seen == 0 || most == 0) {
          r.note = !s.why.empty() ? s.why : "NVML gave no PCIe link reading";
          break;
        }
        r.value = seen;
        r.reference = most;
        r.shown = gen ? fmt::format("Gen{}", seen) : fmt::format("x{}", seen);
        fail_if(seen < most, verdict::fail);
        r.note = fmt::format("the most the link trains to: {}{}", gen ? "Gen" : "x", most);
        break;
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

void say(std::ostream& progress, const check_options& o, const row& r) {
  if (!o.progress) return;
  std::string tail = r.measured() ? format_value(r) : fmt::format("skipped: {}", r.note);
  if (r.v == verdict::fail && !r.measured()) tail = fmt::format("FAILED: {}", r.note);
  progress << fmt::format("check: {:>5}  {:<13} {}{}\n", where_of(r), r.m->name, tail,
                          r.seconds > 0 ? fmt::format("  ({:.1f} s)", r.seconds) : "")
           << std::flush;
}

std::string link_of(std::span<const gpu_facts> gpus) {
  if (gpus.empty()) return "";
  for (const auto& g : gpus)
    if (g.model.link != gpus.front().model.link) return "mixed";
  return gpus.front().model.link;
}

}  // namespace

measurement measure(std::span<const lab* const> built, std::span<const missing_lab> missing, check_backend& backend,
                    const check_options& o, std::ostream& progress) {
  const auto t0 = clock_type::now();
  measurement out;
  for (int d : o.devices) out.gpus.push_back(backend.facts(d));
  out.link = link_of(out.gpus);
  // The labs' environment (the transfer lab's NCCL_NVLS_ENABLE=0: NVLink multicast stays off), set as
  // memlab run sets it, before the GPUs or NCCL read it; a value the user set stays.
  for (const metric& m : suite()) {
    for (const lab* l : built) {
      if (l->name != m.measured.lab) continue;
      for (const auto& [name, value] : l->environment) setenv(std::string(name).c_str(), std::string(value).c_str(), 0);
    }
  }
  run_request open_req;
  open_req.devices = o.devices;
  open_req.progress = false;
  open_req.measure_ceiling = false;
  open_req.max_time_s = o.max_time_s;
  (void)backend.runner().open(open_req, {}, progress);
  suite_runner runner(built, missing, backend, o, progress);

  // Each GPU in turn: its lab cases (a case two metrics read runs once), then NVML's readings.
  for (int gpu : o.devices) {
    std::map<std::string, std::pair<case_outcome, double>> done;
    for (const metric& m : suite()) {
      if (m.where != scope::gpu || !m.from_lab()) continue;
      const std::string key = command_of(m.measured);
      auto it = done.find(key);
      if (it == done.end()) {
        const auto t = clock_type::now();
        case_outcome res = runner.run(m.measured, gpu, -1, 1);
        it = done.emplace(key, std::make_pair(std::move(res), seconds_since(t))).first;
      }
      out.rows.push_back(lab_row(m, gpu, -1, it->second.first, it->second.second));
      say(progress, o, out.rows.back());
    }
    for (row& r : nvml_rows(gpu, backend.nvml_read(gpu), runner.take_samples())) {
      out.rows.push_back(std::move(r));
      say(progress, o, out.rows.back());
    }
  }
  // Every ordered pair, then the node. Pairs and node need two GPUs; the all-reduce needs them to be
  // consecutive ordinals (the transfer lab's one-process collective takes the GPUs from the first on).
  const int n = static_cast<int>(o.devices.size());
  bool consecutive = true;
  for (int i = 1; i < n; ++i)
    consecutive = consecutive && o.devices[static_cast<std::size_t>(i)] == o.devices.front() + i;
  for (const metric& m : suite()) {
    if (m.where == scope::gpu) continue;
    if (n < 2) {
      row r{.m = &m, .note = "one GPU checked: node metrics need two or more"};
      out.rows.push_back(r);
      say(progress, o, out.rows.back());
      continue;
    }
    if (m.where == scope::pair) {
      for (int a : o.devices)
        for (int b : o.devices) {
          if (a == b) continue;
          const auto t = clock_type::now();
          const case_outcome res = runner.run(m.measured, a, b, n);
          out.rows.push_back(lab_row(m, a, b, res, seconds_since(t)));
          say(progress, o, out.rows.back());
        }
      continue;
    }
    if (!consecutive) {
      out.rows.push_back(row{.m = &m,
                             .note = "the GPUs checked are not consecutive ordinals (the one-process collective "
                                     "takes GPUs from the first on): choose them with CUDA_VISIBLE_DEVICES"});
      say(progress, o, out.rows.back());
      continue;
    }
    const auto t = clock_type::now();
    const case_outcome res = runner.run(m.measured, o.devices.front(), -1, n);
    out.rows.push_back(lab_row(m, -1, -1, res, seconds_since(t)));
    say(progress, o, out.rows.back());
  }
  (void)runner.take_samples();
  out.seconds = seconds_since(t0);
  return out;
}

void judge(measurement& m, const reference* ref) {
  const floor_rule rule = ref != nullptr ? ref->rule : floor_rule{};
  const node_section* node = ref != nullptr ? ref->node_for(static_cast<int>(m.gpus.size()), m.link) : nullptr;
  const auto figure = [&](const metric& x) -> const reference_figure* {
    if (ref == nullptr) return nullptr;
    return x.where == scope::gpu ? ref->find(x.name) : node != nullptr ? node->find(x.name) : nullptr;
  };
  for (row& r : m.rows) {
    if (!r.m->has_reference()) continue;  // NVML's rules judged it when it was read
    if (!r.measured()) {
      if (r.v != verdict::fail) r.v = verdict::skip;
      continue;
    }
    const reference_figure* f = figure(*r.m);
    if (f == nullptr) {
      r.v = verdict::no_reference;
      if (ref != nullptr) {
        r.note = r.m->where == scope::gpu
                     ? "the reference has no figure for it"
                     : fmt::format("the reference has no node section for {} GPUs joined by {}", m.gpus.size(), m.link);
      }
      continue;
    }
    r.reference = f->median;
    r.at = f->at;
    r.ratio = r.value / f->median;
    r.v = judge(r.value, f->at, f->higher_is_better);
    if (r.v == verdict::fail || r.v == verdict::warn) {
      const bool failed = r.v == verdict::fail;
      r.note =
          fmt::format("{} the {} line, {}", f->higher_is_better ? "below" : "above", failed ? "failure" : "warning",
                      format_value(row{.m = r.m, .value = failed ? f->at.fail_at : f->at.warn_at}));
    }
  }
  // Siblings: per metric, over the GPUs (or the pairs) of this node.
  for (const metric& x : suite()) {
    if (!x.has_reference() || x.where == scope::node) continue;
    std::vector<row*> rows;
    std::vector<double> values;
    for (row& r : m.rows)
      if (r.m == &x) {
        rows.push_back(&r);
        values.push_back(r.value);
      }
    const reference_figure* f = figure(x);
    const double margin = sibling_margin(f != nullptr ? f->spread : 0, rule);
    const auto flagged = siblings(values, margin, x.higher_is_better);
    const double med = [&] {
      std::vector<double> known;
      for (double v : values)
        if (!std::isnan(v)) known.push_back(v);
      return median_of(known);
    }();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      row& r = *rows[i];
      if (!flagged[i] || r.v == verdict::fail) continue;
      r.v = verdict::sibling;
      r.note = fmt::format("{:.1f}% {} the node's median ({}), beyond the {:.0f}% sibling margin",
                           100 * std::abs(r.value / med - 1), x.higher_is_better ? "below" : "above",
                           format_value(row{.m = &x, .value = med}), 100 * margin);
    }
  }
}

std::vector<verdict> verdicts_of(const measurement& m) {
  std::vector<verdict> out;
  for (const row& r : m.rows) out.push_back(r.v);
  return out;
}

reference make_reference(std::span<const measurement> runs, const std::string& machine) {
  reference ref;
  if (runs.empty() || runs.front().gpus.empty()) return ref;
  const measurement& first = runs.front();
  ref.model = first.gpus.front().model;
  ref.model.link.clear();
  ref.machine = machine;
  ref.memlab_version = MEMLAB_VERSION;
  ref.git_sha = MEMLAB_GIT_SHA;
  ref.driver_version = first.gpus.front().driver_version;
  ref.runs = static_cast<int>(runs.size());
  ref.gpus = static_cast<int>(first.gpus.size());
  node_section node{.gpus = ref.gpus, .link = first.link};
  for (const metric& x : suite()) {
    if (!x.has_reference()) continue;
    std::vector<double> values;
    for (const measurement& run : runs)
      for (const row& r : run.rows)
        if (r.m == &x && r.measured()) values.push_back(r.value);
    if (values.empty()) continue;
    auto f = make_figure(std::string(x.name), std::string(x.unit), x.higher_is_better, std::move(values), ref.rule);
    if (x.where == scope::gpu) {
      ref.per_gpu.push_back(std::move(f));
    } else {
      node.metrics.push_back(std::move(f));
    }
  }
  if (!node.metrics.empty()) ref.node.push_back(std::move(node));
  return ref;
}

reference merge_reference(reference fresh, const reference& old) {
  for (const auto& s : old.node) {
    if (fresh.node_for(s.gpus, s.link) == nullptr) fresh.node.push_back(s);
  }
  std::sort(fresh.node.begin(), fresh.node.end(), [](const node_section& a, const node_section& b) {
    return std::tie(a.gpus, a.link) < std::tie(b.gpus, b.link);
  });
  return fresh;
}

// ---- output ------------------------------------------------------------------------------------

namespace {

std::map<verdict, int> counts_of(const measurement& m) {
  std::map<verdict, int> c;
  for (const row& r : m.rows) ++c[r.v];
  return c;
}

std::string counts_text(const measurement& m) {
  const auto c = counts_of(m);
  std::vector<std::string> parts;
  for (verdict v :
       {verdict::pass, verdict::warn, verdict::fail, verdict::sibling, verdict::skip, verdict::no_reference}) {
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

std::string number(double v, const metric& m) { return format_value(row{.m = &m, .value = v}); }

}  // namespace

void write_table(std::ostream& os, const measurement& m, const check_header& h) {
  os << fmt::format("memlab check: {}; {:.1f} s\n", gpus_text(m), m.seconds);
  os << fmt::format("reference: {}\n\n", h.reference_note);
  text_table t;
  t.column("gpu", true);
  t.column("metric", false);
  t.column("measured", true);
  t.column("reference", true);
  t.column("ratio", true);
  t.column("verdict", false);
  t.column("points at / note", false);
  for (const row& r : m.rows) {
    std::string ref = "-";
    if (r.reference) ref = r.m->has_reference() ? number(*r.reference, *r.m) : fmt::format("{:.0f}", *r.reference);
    if (r.m->nvml == nvml_reading::pcie_gen && r.reference) ref = fmt::format("Gen{:.0f}", *r.reference);
    if (r.m->nvml == nvml_reading::pcie_width && r.reference) ref = fmt::format("x{:.0f}", *r.reference);
    if (r.m->nvml == nvml_reading::clock_events) ref = r.reference ? "none" : "-";
    const bool flagged = r.v == verdict::fail || r.v == verdict::warn || r.v == verdict::sibling;
    std::string note = flagged ? std::string(r.m->level) : "";
    if ((flagged || r.v == verdict::skip) && !r.note.empty()) note += (note.empty() ? "" : ": ") + r.note;
    t.rows.push_back({where_of(r), std::string(r.m->name), format_value(r), ref,
                      std::isnan(r.ratio) ? "-" : fmt::format("{:.3f}", r.ratio),
                      r.v == verdict::pass ? "pass" : fmt::format("{}", to_string(r.v)), shorten(note, 110)});
  }
  write_aligned(os, t);
  os << fmt::format("\n{} (exit {})\n", counts_text(m), h.exit_status);
}

std::string check_json(const measurement& m, const check_header& h) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schema"] = check_schema;
  j["memlab_version"] = MEMLAB_VERSION;
  j["git_sha"] = MEMLAB_GIT_SHA;
  j["created"] = h.created;
  j["command"] = h.command;
  j["machine"] = h.machine;
  j["seconds"] = m.seconds;
  j["link"] = m.link;
  j["gpus"] = ordered_json::array();
  for (const auto& g : m.gpus) {
    j["gpus"].push_back({{"ordinal", g.ordinal},
                         {"name", g.model.name},
                         {"memory_gib", g.model.memory_gib},
                         {"sm_count", g.model.sm_count},
                         {"link", g.model.link},
                         {"bus_id", g.bus_id},
                         {"driver_version", g.driver_version}});
  }
  if (h.ref != nullptr) {
    j["reference"] = {{"path", h.ref->path}, {"model", h.ref->model.name}, {"machine", h.ref->machine},
                      {"date", h.ref->date}, {"runs", h.ref->runs},        {"rule", rule_text(h.ref->rule)}};
  } else {
    j["reference"] = nullptr;
  }
  j["reference_note"] = h.reference_note;
  const auto num = [](double v) { return std::isnan(v) ? ordered_json(nullptr) : ordered_json(v); };
  // The command of a row's case: on its GPU, or on the node's first (the collective spans the rest).
  const int gpus = static_cast<int>(m.gpus.size());
  const auto measured_by = [&](const row& r) -> std::string {
    if (!r.m->from_lab()) return "NVML";
    if (m.gpus.empty() || (r.m->where == scope::pair && r.peer < 0)) return "memlab run " + command_of(r.m->measured);
    return "memlab run " + command_of(r.m->measured, r.gpu >= 0 ? r.gpu : m.gpus.front().ordinal, r.peer, gpus);
  };
  j["rows"] = ordered_json::array();
  for (const row& r : m.rows) {
    ordered_json rj{{"metric", r.m->name},
                    {"scope", to_string(r.m->where)},
                    {"gpu", r.gpu >= 0 ? ordered_json(r.gpu) : ordered_json(nullptr)},
                    {"peer", r.peer >= 0 ? ordered_json(r.peer) : ordered_json(nullptr)},
                    {"unit", r.m->unit},
                    {"higher_is_better", r.m->higher_is_better},
                    {"value", num(r.value)},
                    {"shown", format_value(r)},
                    {"reference", r.reference ? ordered_json(*r.reference) : ordered_json(nullptr)},
                    {"warn_at", r.at ? ordered_json(r.at->warn_at) : ordered_json(nullptr)},
                    {"fail_at", r.at ? ordered_json(r.at->fail_at) : ordered_json(nullptr)},
                    {"ratio", num(r.ratio)},
                    {"verdict", to_string(r.v)},
                    {"level", r.m->level},
                    {"note", r.note},
                    {"seconds", r.seconds},
                    {"measured_by", measured_by(r)}};
    j["rows"].push_back(std::move(rj));
  }
  ordered_json counts = ordered_json::object();
  for (const auto& [v, n] : counts_of(m)) counts[std::string(to_string(v))] = n;
  j["counts"] = counts;
  j["exit_status"] = h.exit_status;
  return j.dump(2) + "\n";
}

}  // namespace memlab::check
