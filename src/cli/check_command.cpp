// memlab check: is this node what its GPU model should be? The suite (check/suite.hpp) on every GPU,
// pair and node, judged against the model's reference and against the node's other GPUs. Every usage
// error (a reference file, a --devices ordinal, a reference of another model) is one line, exit 2,
// before any GPU work.
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "check/check.hpp"
#include "cli/commands.hpp"
#include "harness/device.hpp"
#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "harness/writers.hpp"

namespace memlab::cli {

static_assert(check::exit_fail == exit_failed && check::exit_warn == exit_warn &&
              check::exit_no_reference == exit_no_reference && check::exit_busy == exit_busy &&
              check::exit_interrupted == exit_interrupted);

namespace {

int usage(const std::string& what) {
  std::cerr << fmt::format("memlab check: {} (see memlab check --help)\n", what);
  return exit_usage;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string describe(const check::model_keys& m) {
  return fmt::format("{} ({:.1f} GiB, {} SMs)", m.name, m.memory_gib, m.sm_count);
}

}  // namespace

namespace {

// The table (or the JSON, the text format, the line) on stdout, and each --out file, written to a
// temporary file and renamed. Returns 0, or exit_failed when a file could not be written.
int write_outputs(const check::measurement& m, const check::check_header& h, const check_options& o) {
  using namespace check;
  if (o.format == "json") {
    std::cout << check_json(m, h);
  } else if (o.format == "prometheus") {
    std::cout << check_prometheus(m, h);
  } else if (o.format == "line") {
    std::cout << check_line(m, h, static_cast<std::size_t>(o.line_max)) << "\n";
  } else {
    write_table(std::cout, m, h);
  }
  std::cout << std::flush;
  for (const std::string& out : o.outs) {
    try {
      write_file_atomically(out, out.ends_with(".prom") ? check_prometheus(m, h) : check_json(m, h));
    } catch (const std::exception& e) {
      std::cerr << fmt::format("memlab check: {}\n", e.what());
      return exit_failed;
    }
    if (o.progress) std::cerr << fmt::format("wrote {}\n", out);
  }
  return 0;
}

std::string reference_text(const check::reference& ref) {
  return fmt::format("{} (made {} on {}, {} run{} of {} GPU{}, memlab {})", ref.path, ref.date, ref.machine, ref.runs,
                     ref.runs == 1 ? "" : "s", ref.gpus, ref.gpus == 1 ? "" : "s", ref.git_sha);
}

std::string no_reference_text(const check::model_keys& model, const std::string& dir) {
  return fmt::format(
      "none for {} in {}: measured, not judged. Make one on a healthy machine: memlab check "
      "--write-reference {}/{}.json --runs 3 (docs/check.md, \"Adding a model\")",
      describe(model), dir, dir, check::model_slug(model.name));
}

// --replay: a check file judged again, as the run it records was judged, with no GPU.
int replay_command(const check_options& o, std::optional<check::reference> given) {
  using namespace check;
  check_file f;
  try {
    f = read_check_file(o.replay);
  } catch (const check_file_error& e) {
    return usage(fmt::format("--replay: {}", e.what()));
  }
  const model_keys& model = f.m.gpus.front().model;
  for (const auto& g : f.m.gpus) {
    if (!model_mismatch(model, g.model).empty()) {
      return usage(fmt::format("--replay {}: GPU {} is {} and GPU {} is {}: a check covers one model", o.replay,
                               f.m.gpus.front().ordinal, describe(model), g.ordinal, describe(g.model)));
    }
  }
  std::optional<reference> ref;
  std::string note;
  const std::string dir = reference_dir(o.references_dir);
  if (given) {
    if (const std::string why = model_mismatch(given->model, model); !why.empty())
      return usage(fmt::format("--reference {}: {} (the GPUs of {})", o.reference, why, o.replay));
    ref = std::move(given);
  } else {
    try {
      ref = find_reference(dir, model);
    } catch (const reference_error& e) {
      return usage(fmt::format("a reference in {}: {}", dir, e.what()));
    }
  }
  note = ref ? reference_text(*ref) : no_reference_text(model, dir);
  judge(f.m, ref ? &*ref : nullptr);
  check_header h{.command = o.command,
                 .created = utc_now(),
                 .machine = f.machine,
                 .reference_note = note,
                 .ref = ref ? &*ref : nullptr,
                 .replay = f.source};
  h.exit_status = exit_status(verdicts_of(f.m), ref.has_value());
  if (const int e = write_outputs(f.m, h, o); e != 0) return e;
  if (!ref) std::cerr << fmt::format("memlab check: no reference: {}\n", note);
  return h.exit_status;
}

}  // namespace

int check_command(const lab_set& labs, const check_options& o, check::check_backend* backend) {
  using namespace check;
  // What the user typed, checked before the GPUs are touched.
  if (!o.replay.empty()) {
    if (!o.write_reference.empty()) return usage("--replay and --write-reference: a replay measures nothing");
    if (!o.devices.empty()) return usage("--replay and --devices: a replay checks the GPUs its file holds");
  }
  if (o.runs != 0 && o.write_reference.empty()) return usage("--runs: only with --write-reference");
  if (!o.reference.empty() && !o.write_reference.empty())
    return usage("--reference and --write-reference: one or the other");
  std::vector<int> devices;
  for (int d : o.devices) {  // each GPU once, in the order given
    if (std::find(devices.begin(), devices.end(), d) != devices.end())
      return usage(fmt::format("--devices: GPU {} given twice", d));
    devices.push_back(d);
  }
  std::optional<reference> given, previous;
  try {
    if (!o.reference.empty()) given = read_reference(o.reference);
  } catch (const reference_error& e) {
    return usage(fmt::format("--reference: {}", e.what()));
  }
  try {
    // A reference file written before keeps its node sections for other GPU counts: read it now.
    if (!o.write_reference.empty() && std::filesystem::exists(o.write_reference))
      previous = read_reference(o.write_reference);
  } catch (const reference_error& e) {
    return usage(fmt::format("--write-reference: {} (move it away to write a new one)", e.what()));
  }

  // A folder named by the environment is the user's word as much as --references is: one that is not there
  // is a usage error, not "no reference for this model".
  if (o.references_dir.empty()) {
    if (const char* env = std::getenv("MEMLAB_REFERENCES"); env != nullptr && *env != '\0') {
      std::error_code ec;
      if (!std::filesystem::is_directory(env, ec))
        return usage(fmt::format("MEMLAB_REFERENCES: '{}' is not a folder", env));
    }
  }
  if (!o.replay.empty()) return replay_command(o, std::move(given));
  // SIGINT, SIGTERM from here on: the check stops after the case it is in and writes what it measured
  // (exit 130); one that comes before the first case leaves every row interrupted, and still a file.
  install_stop_handlers();

  std::unique_ptr<check_backend> own;
  if (backend == nullptr) {
    own = gpu_backend();
    backend = own.get();
  }
  const int count = backend->device_count();
  if (count == 0) {
    std::cerr << fmt::format("memlab: no usable CUDA device: memlab check measures the GPUs\n{}\n", no_gpu_hint);
    return exit_no_device;
  }
  for (int d : devices) {
    if (d >= count) {
      return usage(fmt::format("--devices: GPU {} is not visible (this machine shows {} GPU{}: 0..{})", d, count,
                               count == 1 ? "" : "s", count - 1));
    }
  }
  if (devices.empty())
    for (int d = 0; d < count; ++d) devices.push_back(d);

  std::vector<gpu_facts> facts;
  try {
    for (int d : devices) facts.push_back(backend->facts(d));
  } catch (const no_device_error& e) {
    std::cerr << fmt::format("memlab: {}\n{}\n", e.what(), no_gpu_hint);
    return exit_no_device;
  }
  const model_keys& model = facts.front().model;
  for (const auto& f : facts) {
    if (!model_mismatch(model, f.model).empty()) {
      return usage(fmt::format("--devices: GPU {} is {} and GPU {} is {}: check each model apart with --devices",
                               devices.front(), describe(model), f.ordinal, describe(f.model)));
    }
  }
  // The reference: the one given, else the committed one that matches the model.
  std::optional<reference> ref;
  std::string note;
  const std::string dir = reference_dir(o.references_dir);
  if (given) {
    if (const std::string why = model_mismatch(given->model, model); !why.empty())
      return usage(fmt::format("--reference {}: {}", o.reference, why));
    ref = std::move(given);
  } else if (o.write_reference.empty()) {
    try {
      ref = find_reference(dir, model);
    } catch (const reference_error& e) {
      return usage(fmt::format("a reference in {}: {}", dir, e.what()));
    }
  }
  if (previous) {
    if (const std::string why = model_mismatch(previous->model, model); !why.empty())
      return usage(
          fmt::format("--write-reference {}: the file holds another model's reference ({})", o.write_reference, why));
  }
  if (ref) {
    note = reference_text(*ref);
  } else if (o.write_reference.empty()) {
    note = no_reference_text(model, dir);
  }

  check::check_options co;
  co.devices = devices;
  co.max_time_s = o.max_time_s;
  co.progress = o.progress;
  const int runs = o.write_reference.empty() ? 1 : (o.runs == 0 ? 3 : o.runs);
  std::vector<measurement> measured;
  // A case that failed (its verification, an error) in any run: no reference is written from it.
  std::string case_failed;
  try {
    for (int i = 0; i < runs && case_failed.empty() && (i == 0 || stop_signal() == 0); ++i) {
      if (o.progress && runs > 1) std::cerr << fmt::format("check: run {} of {}\n", i + 1, runs);
      measured.push_back(measure(labs.built, labs.missing, *backend, co, std::cerr));
      for (const row& r : measured.back().rows)
        if (case_failed.empty() && !r.failed.empty())
          case_failed = fmt::format("{} on GPU {} failed in run {} ({})", r.m->name, r.gpu, i + 1, r.note);
    }
  } catch (const no_device_error& e) {
    std::cerr << fmt::format("memlab: {}\n{}\n", e.what(), no_gpu_hint);
    return exit_no_device;
  } catch (const std::exception& e) {
    std::cerr << fmt::format("memlab check: an error stopped the check: {}\n", e.what());
    return exit_failed;
  }
  measurement& last = measured.back();
  const bool interrupted = !last.interrupted_by.empty();

  // Writing a reference: made from every run, the last run judged by it. A machine that fails a metric
  // (an NVML rule, a case failed or far from the other runs) gets no reference; the table says why.
  const bool writing = !o.write_reference.empty();
  if (writing) {
    ref = make_reference(measured, hostname());
    ref->date = utc_now().substr(0, 10);
    if (previous) ref = merge_reference(std::move(*ref), *previous);
  }

  judge(last, ref ? &*ref : nullptr);
  check_header h{.command = o.command,
                 .created = utc_now(),
                 .machine = hostname(),
                 .reference_note = note,
                 .ref = ref ? &*ref : nullptr};
  h.exit_status = exit_status(verdicts_of(last), ref.has_value());
  std::string not_written;
  if (writing) {
    if (!case_failed.empty()) h.exit_status = std::max(h.exit_status, exit_failed);
    if (interrupted) {
      not_written = fmt::format("interrupted by {}", last.interrupted_by);
    } else if (h.exit_status == exit_failed || h.exit_status == exit_busy) {
      not_written = !case_failed.empty()           ? case_failed
                    : h.exit_status == exit_busy ? "another process was on a GPU"
                                                 : "a metric failed on this machine";
    }
    if (!not_written.empty()) {
      h.reference_note = fmt::format("{}: not written: {}", o.write_reference, not_written);
    } else {
      try {
        write_file_atomically(o.write_reference, reference_json(*ref));
      } catch (const std::exception& e) {
        std::cerr << fmt::format("memlab check: {}\n", e.what());
        return exit_failed;
      }
      ref->path = o.write_reference;
      h.reference_note = fmt::format("{} (written now from {} run{})", o.write_reference, runs, runs == 1 ? "" : "s");
    }
  }
  if (const int e = write_outputs(last, h, o); e != 0) return e;
  if (writing) {
    std::cerr << (!not_written.empty()
                      ? fmt::format("memlab check: {}: no reference written (docs/check.md, \"Adding a model\": a "
                                    "machine known to be healthy, and idle)\n",
                                    not_written)
                      : fmt::format("wrote {}\n", o.write_reference));
  } else if (!ref) {
    std::cerr << fmt::format("memlab check: no reference: {}\n", note);
  }
  return h.exit_status;
}

}  // namespace memlab::cli
