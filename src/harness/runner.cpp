#include "harness/runner.hpp"

#include <unistd.h>
#include <chrono>
#include <csignal>
#include <ctime>
#include <ostream>

#include <algorithm>
#include <atomic>
#include <cstdlib>

#include <fmt/format.h>

#include "harness/text.hpp"
#include "memlab_git_sha.hpp"

namespace memlab {
namespace {

std::atomic<int> g_stop_signal{0};
std::atomic<long long> g_first_signal_ns{0};

long long monotonic_ns() {  // async-signal-safe
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

// The first signal asks for a stop after the current case. A second one at least half a second
// later (a user pressing Ctrl-C again) ends the process at once; one that arrives with the first
// (`timeout` signals the child and then its whole process group) is the same request.
extern "C" void on_stop_signal(int sig) {
  const long long now = monotonic_ns();
  if (g_stop_signal.exchange(sig) == 0) {
    g_first_signal_ns.store(now);
    return;
  }
  if (now - g_first_signal_ns.load() > 500000000LL) _exit(130);
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT: return "SIGINT";
    case SIGTERM: return "SIGTERM";
    default: return fmt::format("signal {}", sig);
  }
}

// The parameters beyond dtype and n that apply to the rung, for progress lines: " name=2 other=4".
std::string axis_text(const std::vector<param>& params) {
  std::string out;
  for (const auto& p : params) {
    if (p.name != "dtype" && p.name != "n" && !std::holds_alternative<std::monostate>(p.value))
      out += fmt::format(" {}={}", p.name, to_string(p.value));
  }
  return out;
}

// The rate the case's roof judges, and how far it gets: "2950.1 GB/s (88.0% of dram)".
std::string rate_text(const result& r) {
  return fmt::format("{:.1f} {} ({:.1f}% of {})", judged_rate(r), rule_of(r.roof.kind).unit, r.pct_roof, r.roof.name);
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sa.sa_flags = SA_RESTART;  // a system call inside the CUDA runtime resumes instead of failing
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int stop_signal() { return g_stop_signal.load(); }
void request_stop(int sig) {
  g_stop_signal.store(sig);
  g_first_signal_ns.store(sig == 0 ? 0 : monotonic_ns());
}

run_report run_cases(const run_request& req, const std::vector<planned_case>& cases, case_runner& runner,
                     std::span<results_sink* const> sinks, std::ostream& progress) {
  run_report report;
  report.memlab_version = MEMLAB_VERSION;
  report.git_sha = MEMLAB_GIT_SHA;
  report.created = utc_now_iso8601();
  report.command = req.command;
  report.argv = req.argv;
  report.options = req.options;
  report.planned = cases.size();
  report.timing = runner.timing(req);
  std::vector<const lab*> labs;
  for (const auto& c : cases) {
    if (std::find(labs.begin(), labs.end(), c.l) == labs.end()) {
      labs.push_back(c.l);
      report.labs.push_back(info_of(*c.l));
    }
  }
  report.ended = "running";
  // The labs' environment, before the device (and any library the labs load) reads it.
  for (const lab* l : labs) {
    for (const auto& [name, value] : l->environment) {
      const std::string n(name);
      if (std::any_of(report.environment.begin(), report.environment.end(),
                      [&](const env_setting& e) { return e.name == n; })) {
        continue;
      }
      if (const char* user = std::getenv(n.c_str())) {
        report.environment.push_back({n, user, "user"});
      } else {
        setenv(n.c_str(), std::string(value).c_str(), 0);
        report.environment.push_back({n, std::string(value), "memlab"});
      }
    }
  }
  report.device = runner.open(req, labs, progress);
  if (auto all = runner.devices(); all.size() > 1) report.devices = std::move(all);
  report.world = runner.world();

  const auto finish = [&](std::string ended) {
    report.ended = std::move(ended);
    for (auto* s : sinks) s->finish(report);
  };
  std::size_t index = 0;
  // Each lab's wall time on the progress stream when the next one starts (and at the end): what a
  // lab's defaults cost is visible in every run.
  using clock = std::chrono::steady_clock;
  const lab* current = nullptr;
  std::size_t lab_cases = 0;
  clock::time_point lab_start{}, run_start = clock::now();
  const auto seconds_since = [](clock::time_point t) {
    return std::chrono::duration<double>(clock::now() - t).count();
  };
  // A lab's table right after its last case (not at the next lab's first result), then its time.
  const auto lab_done = [&] {
    if (current == nullptr) return;
    for (auto* s : sinks) s->lab_done(report);
    if (req.progress) {
      progress << fmt::format("{}: {} {} in {:.1f} s\n", current->name, lab_cases, lab_cases == 1 ? "case" : "cases",
                              seconds_since(lab_start))
               << std::flush;
    }
  };
  try {
    for (const auto& c : cases) {
      if (const int sig = stop_signal(); sig != 0) {
        finish(fmt::format("interrupted by {} after {} of {} cases", signal_name(sig), report.results.size(),
                           cases.size()));
        return report;
      }
      ++index;
      if (c.l != current) {
        lab_done();
        current = c.l;
        lab_cases = 0;
        lab_start = clock::now();
      }
      ++lab_cases;
      const std::string label = fmt::format("[{}/{}] {}{} {} {} {}{}", index, cases.size(),
                                            c.device >= 0 ? fmt::format("gpu {} ", c.device) : "", c.l->name,
                                            c.v->name, to_string(c.p.type), c.size_text,
                                            axis_text(c.l->params(c.p, c.v)));
      result r = runner.run(c, req);
      if (req.progress) {
        std::string outcome;
        switch (r.status) {
          case result_status::skipped: outcome = fmt::format("skipped: {}", r.note); break;
          case result_status::failed: outcome = fmt::format("FAILED: {}", r.note); break;
          case result_status::ok:
            outcome = fmt::format("{}{}", rate_text(r), r.verified ? "" : ", not verified");
            break;
        }
        progress << fmt::format("{} ... {}\n", label, outcome) << std::flush;
      }
      report.results.push_back(std::move(r));
      report.world = runner.world();  // what the case loaded (NCCL, on first use) joins the header
      for (auto* s : sinks) s->update(report);
    }
    lab_done();  // inside the try: a sink that fails here still gets finish() with what was measured
  } catch (const write_error&) {
    throw;  // the sinks cannot write: nothing more to finish
  } catch (const std::exception& e) {
    finish(fmt::format("stopped at case {} of {} by an error: {}", index, cases.size(), e.what()));
    throw;
  }
  finish("complete");
  if (req.progress && labs.size() > 1) {
    progress << fmt::format("{} cases in {:.1f} s\n", index, seconds_since(run_start)) << std::flush;
  }
  return report;
}

}  // namespace memlab
