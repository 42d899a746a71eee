#include "check/check.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <bit>
#include <chrono>
#include <csignal>
#include <ctime>
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
#include "harness/runner.hpp"
#include "harness/table.hpp"
#include "harness/text.hpp"
#include "memlab_git_sha.hpp"

namespace memlab::check {

bool measurement::busy() const {
  return std::any_of(gpus.begin(), gpus.end(), [](const gpu_facts& g) { return g.busy(); });
}

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point t0) {
  return std::chrono::duration<double>(clock_type::now() - t0).count();
}

std::string utc_iso(std::chrono::system_clock::time_point t) {
  const std::time_t tt = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string signal_text(int sig) {
  return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : fmt::format("signal {}", sig);
}

// A lab case's outcome: its result, or why it gave none (`failed`: the fault code of a case that
// failed rather than was skipped).
struct case_outcome {
  std::optional<result> r;
  std::string why;
  std::string_view failed;
};

// An error's words without the source location the harness's errors start with ("src/x.cpp:12: "
// or a build machine's absolute path): an operator reads what failed, not where in memlab.
std::string without_location(std::string what) {
  const auto colon = what.find(": ");
  if (colon == std::string::npos) return what;
  const std::string head = what.substr(0, colon);
  const auto line = head.rfind(':');
  const bool located = line != std::string::npos && line + 1 < head.size() &&
                       head.find_first_not_of("0123456789", line + 1) == std::string::npos &&
                       (head.find('/') != std::string::npos || head.find(".c") != std::string::npos);
  return located ? what.substr(colon + 2) : what;
}

// The runner's words for a case skipped because the GPU's memory was short (harness/gpu_runner.cpp):
// a fault of the GPU or of whoever holds its memory, never a skip to pass over.
bool memory_short(std::string_view why) { return why.find("of device memory") != std::string_view::npos; }

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

// The processes seen while sampling, less this one. NVML lists processes by the host's PIDs: in a
// container with a PID namespace of its own the check's own process is not getpid() there. Then the
// one process seen during the cases that /proc does not show is taken for the check itself.
std::vector<gpu_process> without_self(const nvml_samples& s) {
  if (s.self_seen || s.processes.empty()) return s.processes;
  std::vector<gpu_process> out;
  int unseen = 0;
  for (const auto& p : s.processes) unseen += p.seen == "during" && p.name.empty() ? 1 : 0;
  for (const auto& p : s.processes)
    if (!(unseen == 1 && p.seen == "during" && p.name.empty())) out.push_back(p);
  return out;
}

class suite_runner {
 public:
  suite_runner(std::span<const lab* const> built, std::span<const missing_lab> missing, check_backend& b,
               const check_options& o)
      : built_(built), missing_(missing), b_(b), o_(o) {}

  // Runs `c` on GPU `gpu`, "$peer" and "$gpus" in its axes replaced; NVML sampled meanwhile. After a
  // CUDA error (the GPU's context may be lost) no case runs: each says why.
  // Every case from now on gives no figure: `why`, the fault `code`.
  void refuse(std::string why, std::string_view code) {
    refused_ = std::move(why);
    refused_code_ = code;
  }

  case_outcome run(const lab_case& c, int gpu, int peer, int gpus) {
    if (!stopped_.empty()) return {.why = stopped_};
    if (!refused_.empty()) return {.why = refused_, .failed = refused_code_};
    case_plan_result plan = plan_case(c, built_, missing_, gpu, peer, gpus, b_.device_count());
    if (!plan.planned) return {.why = plan.why};
    run_request& req = plan.request;
    req.max_time_s = o_.max_time_s;
    b_.nvml_start(gpu);
    result r;
    try {
      r = b_.runner().run(*plan.planned, req);
    } catch (const cuda_error& e) {
      merge(gpu, b_.nvml_stop(gpu));
      if (e.code() == cudaErrorMemoryAllocation) {
        // Not a lost context: the check goes on. Whose fault it is (another process's, or memory the
        // check cannot see) is judge()'s, from the processes on the GPU.
        (void)cudaGetLastError();
        return {.why = fmt::format("an allocation failed: {}", without_location(e.what())),
                .failed = fault_code::out_of_memory};
      }
      // The GPU's context may be lost: this metric fails with the error, and the check measures nothing
      // more (what it measured so far is judged and written).
      stopped_ = fmt::format("not measured: a CUDA error on GPU {} stopped the check", gpu);
      return {.why = fmt::format("a CUDA error stopped the check: {}", without_location(e.what())),
              .failed = fault_code::cuda_error};
    } catch (const std::exception& e) {
      // Another error (NCCL's, a host allocation): this metric fails with it, the check goes on.
      merge(gpu, b_.nvml_stop(gpu));
      return {.why = fmt::format("an error stopped the case: {}", without_location(e.what())),
              .failed = fault_code::case_error};
    }
    merge(gpu, b_.nvml_stop(gpu));
    if (r.status == result_status::skipped) {
      if (memory_short(r.note)) return {.why = r.note, .failed = fault_code::out_of_memory};
      return {.why = r.note};
    }
    if (r.status == result_status::failed) return {.why = r.note, .failed = fault_code::data_corruption};
    return {.r = std::move(r)};
  }

  // The other processes seen on GPU `gpu` while its cases (or the pairs and the node it drove) ran.
  const std::vector<gpu_process>& processes(int gpu) { return seen_[gpu]; }

  // The samples of every case on the current GPU, together; why there are none when no case ran.
  nvml_samples take_samples() {
    nvml_samples s = std::exchange(samples_, {});
    if (s.samples == 0 && s.why.empty()) s.why = "no case ran on this GPU while NVML was sampled";
    return s;
  }

 private:
  void merge(int gpu, const nvml_samples& s) {
    add_processes(seen_[gpu], without_self(s));
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
  nvml_samples samples_;
  std::map<int, std::vector<gpu_process>> seen_;
  std::string refused_;
  std::string_view refused_code_;
  std::string stopped_;  // non-empty: a CUDA error stopped the check; why the cases after it did not run
};

std::string where_of(const row& r) {
  if (r.m->where == scope::pair) return r.gpu < 0 ? "pairs" : fmt::format("{}->{}", r.gpu, r.peer);
  if (r.m->where == scope::node) return "node";
  return std::to_string(r.gpu);
}

// The row of a lab case's outcome.
row lab_row(const metric& m, int gpu, int peer, const case_outcome& out, double seconds) {
  row r{.m = &m, .gpu = gpu, .peer = peer, .seconds = seconds};
  if (!out.r) {
    r.note = out.why;
    r.failed = out.failed;
    return r;
  }
  const auto f = figure_of(*out.r, m.measured.figure);
  if (!f || *f <= 0) {
    r.note = fmt::format("the case gave no {}", m.measured.figure);
    return r;
  }
  r.value = *f;
  return r;
}

// The rows NVML's readings give: what each metric's rule reads; the rules judge them in judge().
std::vector<row> nvml_rows(int gpu, const nvml_readings& rd, const nvml_samples& s) {
  std::vector<row> out;
  for (const metric& m : suite()) {
    if (!m.from_nvml()) continue;
    row r{.m = &m, .gpu = gpu};
    if (!rd.why.empty()) {
      r.note = rd.why;
    } else {
      m.nvml.read(r, rd, s);
    }
    out.push_back(std::move(r));
  }
  return out;
}

void say(std::ostream& progress, const check_options& o, const row& r) {
  if (!o.progress) return;
  std::string tail = r.measured() ? format_value(r) : fmt::format("skipped: {}", r.note);
  if (!r.failed.empty()) tail = fmt::format("FAILED: {}", r.note);
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

std::string format_number(double v, const metric& m) {
  // Each unit's one way to be shown: the table's value and reference, the JSON's "shown", the one line.
  if (m.unit == "GB/s" || m.unit == "MHz") return fmt::format("{:.1f} {}", v, m.unit);
  if (m.unit == "ns") return fmt::format("{:.1f} ns", v);
  if (m.unit == "gen") return fmt::format("Gen{:.0f}", v);
  if (m.unit == "lanes") return fmt::format("x{:.0f}", v);
  if (m.unit == "reasons" && v == 0) return "none";
  return fmt::format("{:.0f} {}", v, m.unit);
}

std::string format_value(const row& r) {
  if (!r.shown.empty()) return r.shown;
  if (!r.measured()) return "-";
  return format_number(r.value, *r.m);
}

std::string where_text(const row& r) {
  if (r.m->where == scope::pair) return r.gpu < 0 ? "pairs" : fmt::format("GPU {}->{}", r.gpu, r.peer);
  if (r.m->where == scope::node) return "node";
  return fmt::format("GPU {}", r.gpu);
}

measurement measure(std::span<const lab* const> built, std::span<const missing_lab> missing, check_backend& backend,
                    const check_options& o, std::ostream& progress) {
  const auto t0 = clock_type::now();
  measurement out;
  out.started = utc_iso(std::chrono::system_clock::now());
  for (int d : o.devices) out.gpus.push_back(backend.facts(d));
  out.link = link_of(out.gpus);
  // Who else is on the GPUs, before the check's own context exists there.
  for (auto& g : out.gpus) add_processes(g.processes, backend.processes(g.ordinal));
  const auto facts_of = [&](int ordinal) -> gpu_facts& {
    for (auto& g : out.gpus)
      if (g.ordinal == ordinal) return g;
    throw std::logic_error("a GPU the check was not given");
  };
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
  suite_runner runner(built, missing, backend, o);
  try {
    (void)backend.runner().open(open_req, {}, progress);
  } catch (const cuda_error& e) {
    // Too little memory even to open the GPUs (streams, the L2 flusher): every case says so, and whose
    // fault it is (another process's) is judge()'s.
    if (e.code() != cudaErrorMemoryAllocation) throw;
    (void)cudaGetLastError();
    runner.refuse(fmt::format("the GPUs could not be opened: {}", without_location(e.what())),
                  fault_code::out_of_memory);
  }

  // A stop request (SIGINT, SIGTERM) ends the measuring between cases: every row after it says so.
  const auto stopping = [&] {
    const int sig = stop_signal();
    if (sig != 0 && out.interrupted_by.empty()) out.interrupted_by = signal_text(sig);
    return sig != 0;
  };
  const auto push = [&](row r) {
    out.rows.push_back(std::move(r));
    say(progress, o, out.rows.back());
  };
  const auto interrupted = [&](const metric& m, int gpu, int peer) {
    out.rows.push_back(row{.m = &m, .gpu = gpu, .peer = peer, .note = "not measured: the check was interrupted by " +
                                                                        out.interrupted_by,
                           .interrupted = true});
  };

  // Each GPU in turn: its lab cases (a case two metrics read runs once), then NVML's readings.
  for (int gpu : o.devices) {
    std::map<std::string, std::pair<case_outcome, double>> done;
    for (const metric& m : suite()) {
      if (m.where != scope::gpu || !m.from_lab()) continue;
      const std::string key = command_of(m.measured);
      auto it = done.find(key);
      if (it == done.end()) {
        if (stopping()) {
          interrupted(m, gpu, -1);
          continue;
        }
        const auto t = clock_type::now();
        case_outcome res = runner.run(m.measured, gpu, -1, 1);
        it = done.emplace(key, std::make_pair(std::move(res), seconds_since(t))).first;
      }
      push(lab_row(m, gpu, -1, it->second.first, it->second.second));
    }
    nvml_samples samples = runner.take_samples();
    add_processes(facts_of(gpu).processes, runner.processes(gpu));
    if (stopping()) {
      for (const metric& m : suite())
        if (m.from_nvml()) interrupted(m, gpu, -1);
      continue;
    }
    for (row& r : nvml_rows(gpu, backend.nvml_read(gpu), samples)) push(std::move(r));
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
      push(row{.m = &m, .note = "one GPU checked: node metrics need two or more"});
      continue;
    }
    if (m.where == scope::pair) {
      for (int a : o.devices)
        for (int b : o.devices) {
          if (a == b) continue;
          if (stopping()) {
            interrupted(m, a, b);
            continue;
          }
          const auto t = clock_type::now();
          const case_outcome res = runner.run(m.measured, a, b, n);
          push(lab_row(m, a, b, res, seconds_since(t)));
        }
      continue;
    }
    if (!consecutive) {
      push(row{.m = &m,
               .note = "the GPUs checked are not consecutive ordinals (the one-process collective takes GPUs from "
                       "the first on): choose them with CUDA_VISIBLE_DEVICES"});
      continue;
    }
    if (stopping()) {
      interrupted(m, -1, -1);
      continue;
    }
    const auto t = clock_type::now();
    const case_outcome res = runner.run(m.measured, o.devices.front(), -1, n);
    push(lab_row(m, -1, -1, res, seconds_since(t)));
  }
  // The pairs' and the node's cases sample the GPU that drives them: whoever showed up there counts.
  (void)runner.take_samples();
  for (auto& g : out.gpus) add_processes(g.processes, runner.processes(g.ordinal));
  out.seconds = seconds_since(t0);
  if (stop_signal() != 0 && out.interrupted_by.empty()) out.interrupted_by = signal_text(stop_signal());
  return out;
}

namespace {

// Whether another process on a GPU could have moved row `r`'s figure.
bool moved_by_others(const measurement& m, const row& r) {
  if (!r.m->others_move_it) return false;
  const auto busy = [&](int ordinal) {
    for (const auto& g : m.gpus)
      if (g.ordinal == ordinal) return g.busy();
    return false;
  };
  if (r.m->where == scope::node) return m.busy();
  return busy(r.gpu) || (r.peer >= 0 && busy(r.peer));
}

std::string processes_text(const measurement& m, const row& r) {
  std::vector<std::string> parts;
  for (const auto& g : m.gpus) {
    const bool involved = r.m->where == scope::node || g.ordinal == r.gpu || g.ordinal == r.peer;
    if (!involved || !g.busy()) continue;
    for (const auto& p : g.processes)
      parts.push_back(fmt::format("GPU {} pid {}{}", g.ordinal, p.pid, p.name.empty() ? "" : " " + p.name));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The fault code, action, level and one-line reason of a judged row.
void assign_fault(const measurement& m, row& r) {
  r.f = nullptr;
  r.act.reset();
  r.points_at.clear();
  r.reason.clear();
  const bool flagged = r.v == verdict::fail || r.v == verdict::warn || r.v == verdict::sibling || r.v == verdict::busy;
  if (!flagged) return;
  const std::string_view code = r.v == verdict::busy ? fault_code::gpu_busy : !r.failed.empty() ? r.failed : r.m->fault;
  r.f = find_fault(code);
  if (r.f == nullptr) throw std::logic_error(fmt::format("metric {}: no fault code {}", r.m->name, code));
  r.act = r.v == verdict::fail || r.v == verdict::busy ? r.f->on_fail : action::monitor;
  r.points_at = r.v == verdict::busy ? fmt::format("another process ({})", processes_text(m, r))
                : r.failed.empty()   ? std::string(r.m->level)
                                     : std::string(r.f->points_at);
  std::string what;
  if (r.measured()) {
    what = fmt::format("{} {}", format_value(r), r.judged.empty() ? std::string(to_string(r.v)) : r.judged);
  } else {
    what = shorten(r.note, 120);
  }
  r.reason = fmt::format("{} {} {}: {} ({}): {}", where_text(r), r.m->name, to_string(r.v), what, r.points_at,
                         to_string(*r.act));
}

}  // namespace

void judge(measurement& m, const reference* ref) {
  const floor_rule rule = ref != nullptr ? ref->rule : floor_rule{};
  const node_section* node = ref != nullptr ? ref->node_for(static_cast<int>(m.gpus.size()), m.link) : nullptr;
  const auto figure = [&](const metric& x) -> const reference_figure* {
    if (ref == nullptr) return nullptr;
    return x.where == scope::gpu ? ref->find(x.name) : node != nullptr ? node->find(x.name) : nullptr;
  };
  for (row& r : m.rows) {
    r.reference.reset();
    r.at.reset();
    r.ratio = NAN;
    r.judged.clear();
    if (r.interrupted) {
      r.v = verdict::interrupted;
      continue;
    }
    if (!r.failed.empty()) {
      r.v = verdict::fail;
      continue;
    }
    if (!r.measured()) {
      r.v = verdict::skip;
      continue;
    }
    if (!r.m->has_reference()) {
      r.v = r.m->nvml.judge(r);
      r.reference = r.expected;
      continue;
    }
    const reference_figure* f = figure(*r.m);
    if (f == nullptr) {
      r.v = verdict::no_reference;
      if (ref != nullptr) {
        r.judged = r.m->where == scope::gpu ? "the reference has no figure for it"
                                            : fmt::format("the reference has no node section for {} GPUs joined by {}",
                                                          m.gpus.size(), m.link);
      }
      continue;
    }
    r.reference = f->median;
    r.at = f->at;
    r.ratio = r.value / f->median;
    r.v = judge(r.value, f->at, f->higher_is_better);
    if (r.v == verdict::fail || r.v == verdict::warn) {
      const bool failed = r.v == verdict::fail;
      r.judged = fmt::format("{} the {} line, {}", f->higher_is_better ? "below" : "above",
                             failed ? "failure" : "warning", format_number(failed ? f->at.fail_at : f->at.warn_at, *r.m));
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
      r.judged = fmt::format("{:.1f}% {} the node's median ({}), beyond the {:.0f}% sibling margin",
                             100 * std::abs(r.value / med - 1), x.higher_is_better ? "below" : "above",
                             format_number(med, x), 100 * margin);
    }
  }
  // Another process on the GPU: a flagged row it could have moved is not the hardware's fault, and a
  // case its memory crowded out is not the check's or the hardware's either.
  for (row& r : m.rows) {
    const bool flagged = r.v == verdict::fail || r.v == verdict::warn || r.v == verdict::sibling;
    const bool crowded_out = r.failed == fault_code::out_of_memory;
    if (!flagged || (!r.measured() && !crowded_out) || !moved_by_others(m, r)) continue;
    r.v = verdict::busy;
  }
  for (row& r : m.rows) assign_fault(m, r);
}

std::vector<verdict> verdicts_of(const measurement& m) {
  std::vector<verdict> out;
  for (const row& r : m.rows) out.push_back(r.v);
  return out;
}

std::optional<action> action_of(const measurement& m) {
  std::optional<action> out;
  for (const row& r : m.rows)
    if (r.act) out = out ? most_urgent(*out, *r.act) : *r.act;
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

}  // namespace memlab::check
