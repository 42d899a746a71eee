// The memlab command line: subcommands, flags and their validators, built from the labs' tables
// (one flag per axis any lab declares). Every usage error is one line naming the flag, exit 2,
// before any GPU work.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "check/check.hpp"
#include "check/reference.hpp"
#include "cli/commands.hpp"
#include "harness/text.hpp"
#include "harness/writers.hpp"
#include "memlab_git_sha.hpp"

namespace memlab::cli {
namespace {

constexpr const char* footer =
    "Lists are comma-separated (--dtype f16,f32) or the flag repeated; a list flag takes one value per\n"
    "occurrence, so `memlab run --out r.json copy` runs the copy lab and writes r.json.\n"
    "Exit codes: 0 ok; 1 a verification failed, or a CUDA error or a failed write stopped the run;\n"
    "2 usage error; 3 no usable CUDA device; 4 nothing measured (every case skipped);\n"
    "130 interrupted (SIGINT/SIGTERM: the results measured so far are written).\n"
    "memlab check: 0 every metric passed; 1 a metric failed; 5 a warning or a sibling, nothing failed;\n"
    "6 no reference for this GPU model (measured, not judged); 7 busy (another process on a GPU).\n"
    "Bytes in every report are the fewest the job must move through the roof's memory level: reads + writes.";

// ---- validators ---------------------------------------------------------------------------------------

const CLI::Validator non_empty([](std::string& s) -> std::string { return s.empty() ? "an empty value" : ""; }, "");

// A CUDA device ordinal: a whole number >= 0 (CLI11's NonNegativeNumber would print DBL_MAX as the bound).
const CLI::Validator device_ordinal(
    [](std::string& s) -> std::string {
      const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
      return digits && s.size() < 6 ? "" : fmt::format("takes a device ordinal: 0, 1, ... (got '{}')", s);
    },
    "ORDINAL");

// Seconds: a finite number above 0 (nan, inf, 0 and negatives are refused without printing a bound).
const CLI::Validator seconds(
    [](std::string& s) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      const bool number = !s.empty() && end != nullptr && *end == '\0';
      if (!number || !std::isfinite(v) || v <= 0 || v > 3600) {
        return fmt::format("takes seconds, a number above 0 and at most 3600, as in 0.5 (got '{}')", s);
      }
      return "";
    },
    "SECONDS");

// A file to write: not a folder, and a place that can be written ("" when it can be).
std::string unwritable(const std::string& path) {
  if (path.empty()) return "an empty path";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return fmt::format("{} is a folder", path);
    if (::access(path.c_str(), W_OK) != 0) return fmt::format("{}: cannot open for writing", path);
  }
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return fmt::format("{}: cannot open for writing (no folder {})", path, dir);
  }
  // The writers replace the file through a temporary one in its folder: try creating and removing
  // one, now. access() passes root in a read-only folder, and anyone on a read-only file system.
  std::string probe = fmt::format("{}/.memlab-probe-XXXXXX", dir);
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    const int err = errno;
    return fmt::format("{}: cannot write in {} ({})", path, dir, std::strerror(err));
  }
  ::close(fd);
  if (::unlink(probe.c_str()) != 0) {  // a folder that takes files but gives none back (append-only)
    const int err = errno;
    return fmt::format("{}: cannot replace files in {} ({}; {} is left there)", path, dir, std::strerror(err), probe);
  }
  return "";
}

// A results file: a known extension, not a folder, and a place that can be written.
const CLI::Validator results_file(
    [](std::string& path) -> std::string {
      if (path.empty()) return "an empty path";
      if (!format_from_path(path))
        return fmt::format("{}: the extension gives the format: .json, .csv, .md or .txt", path);
      return unwritable(path);
    },
    "FILE");

// memlab check's --out: the check file (.json) or Prometheus's text format (.prom, node_exporter's
// textfile collector reads *.prom), in a place that can be written.
const CLI::Validator check_out_file(
    [](std::string& path) -> std::string {
      if (!path.ends_with(".json") && !path.ends_with(".prom"))
        return fmt::format("{}: the extension gives the format: .json (the check file) or .prom (Prometheus)", path);
      return unwritable(path);
    },
    "FILE");

// A path memlab check writes (--out, --write-reference), its patterns expanded before the checks of the
// file: %N this host's short name (`srun memlab check --out DIR/%N.json`: a file a node), %% a percent.
const CLI::Validator host_patterns(
    [](std::string& path) -> std::string {
      try {
        path = check::expand_path(path, check::short_host_name());
      } catch (const std::invalid_argument& e) {
        return e.what();
      }
      return "";
    },
    "");

// A JSON file to write (memlab check's --out and --write-reference): a results file ending in .json.
const CLI::Validator json_file(
    [](std::string& path) -> std::string {
      if (!path.ends_with(".json")) return fmt::format("{}: a .json file", path);
      return results_file(path);
    },
    "FILE.json");

// A folder of memlab check's references: one that holds a reference at least (a .json file that names
// its schema; reading it as a reference is the check's, which names a malformed one).
const CLI::Validator reference_folder(
    [](std::string& dir) -> std::string {
      std::error_code ec;
      if (!std::filesystem::is_directory(dir, ec)) return fmt::format("{}: no such folder", dir);
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
        if (e.path().extension() != ".json" || !e.is_regular_file(ec)) continue;
        std::ifstream in(e.path());
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        if (text.find(check::reference_schema) != std::string::npos) return "";
      }
      return fmt::format("{}: no reference in it (a .json file of schema {})", dir, check::reference_schema);
    },
    "DIR");

std::vector<std::string> dtype_names() {
  std::vector<std::string> out;
  for (dtype t : all_dtypes()) out.emplace_back(to_string(t));
  return out;
}

std::string joined_command(int argc, char** argv) {
  std::vector<std::string_view> words{"memlab"};
  for (int i = 1; i < argc; ++i) words.emplace_back(argv[i]);
  return fmt::format("{}", fmt::join(words, " "));
}

// A list option: one value per occurrence (so a positional lab after it is not swallowed), repeatable,
// comma-separated values split.
CLI::Option* list_option(CLI::App* app, const std::string& name, std::vector<std::string>& into,
                         const std::string& help) {
  return app->add_option(name, into, help)->delimiter(',')->allow_extra_args(false)->check(non_empty);
}

// What the user gave to `run`, for the report: each option once, its values as typed.
std::vector<std::pair<std::string, std::string>> given_options(const CLI::App* run) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const CLI::Option* opt : run->get_options()) {
    if (opt->count() == 0 || opt->get_name() == "--help") continue;
    out.emplace_back(opt->get_name(), fmt::format("{}", fmt::join(opt->results(), ",")));
  }
  return out;
}

std::string grammar_help(const axis& a) {
  switch (a.grammar) {
    case axis_grammar::shape: return "shapes joined by x: 128x256,64x64";
    case axis_grammar::bytes: return "byte counts: 8MiB,1GiB; 4MiB..1GiB:*4";
    case axis_grammar::counts: return "counts: 2; 0,2,8; 0..15 counts up by 1; 1..16:*2";
    case axis_grammar::words: return fmt::format("any of {}; all", fmt::join(a.words, ","));
  }
  return "";
}

std::string_view grammar_type(axis_grammar g) {
  switch (g) {
    case axis_grammar::shape: return "SHAPES";
    case axis_grammar::bytes: return "BYTES";
    case axis_grammar::counts: return "COUNTS";
    case axis_grammar::words: return "WORDS";
  }
  return "";
}

// The flag's help: each lab's meaning (labs sharing a flag may mean different things by it), then
// the unit and the grammar its values are written in.
std::string axis_help(const axis_flag& f) {
  const axis a = f.accepted();
  const auto m = f.meanings();
  std::string text;
  if (m.size() == 1) {
    text = fmt::format("{}\n(axis of {}; ", m.front().first, join(f.labs));
  } else {
    for (const auto& [meaning, labs] : m) text += fmt::format("{}: {}\n", join(labs), meaning);
    text += "(";
  }
  const std::string values =
      a.grammar == axis_grammar::words ? "" : fmt::format("{}; values {}, written as ", a.unit, accepted_values(a));
  return text + fmt::format("{}{}; defaults in `memlab list`)", values, grammar_help(a));
}

// The memlab command line: every subcommand and flag, with the values they fill. Typed where they
// are parsed: dtypes, sizes and axis values reach the planner as values, each parsed once.
class command_line {
 public:
  command_line(int argc, char** argv, const lab_set& labs);

  CLI::App app{
      "memlab: what a GPU's memory system delivers for each access pattern, kernel by kernel.\n"
      "Each lab is a ladder of kernel variants; each is verified against a CPU reference, then timed\n"
      "cold (L2 flushed), in batches and as a CUDA graph, and placed under the roof it is bound by.",
      "memlab"};
  CLI::App* list = nullptr;
  CLI::App* run = nullptr;
  CLI::App* inspect = nullptr;
  CLI::App* device = nullptr;
  CLI::App* check = nullptr;
  list_options lo;
  run_options ro;
  inspect_options io;
  device_options dopt;
  check_options co;
};

command_line::command_line(int argc, char** argv, const lab_set& labs) {
  app.footer(footer);
  app.set_version_flag("--version", fmt::format("{} ({})", MEMLAB_VERSION, MEMLAB_GIT_SHA));
  app.require_subcommand(1);

  list = app.add_subcommand("list", "List the labs: variants, axes, roof, what each teaches (no GPU needed)");
  list->add_option("lab", lo.labs, "Labs to list (default: all)");
  list->add_option("--format", lo.format, "table, json, or md (each lab's ladder as a Markdown table)")
      ->check(CLI::IsMember({"table", "json", "md"}))
      ->capture_default_str();

  ro.request.command = joined_command(argc, argv);
  for (int i = 0; i < argc; ++i) ro.request.argv.emplace_back(i == 0 ? "memlab" : argv[i]);
  run = app.add_subcommand(
      "run",
      "Verify and time lab variants on the GPU (--device: several, or all). Started by torchrun, srun or mpirun\n"
      "(one process per GPU), each process finds its rank in the launcher's environment, takes its local\n"
      "rank's GPU and runs the rungs that span every rank (the collectives) with the others; rank 0 writes");
  run->add_option("lab", ro.request.labs, "Labs to run (default: all)");
  list_option(run, "--variant", ro.request.variants, "Variants to run (default: all of each lab)");
  run->add_option_function<std::vector<std::string>>(
         "--dtype",
         [this](const std::vector<std::string>& names) {
           for (const auto& n : names) ro.request.dtypes.push_back(*parse_dtype(n));  // IsMember checked it
         },
         "Element types: u8, f16, bf16, f32, f64 (default: each lab's)")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(non_empty)
      ->check(CLI::IsMember(dtype_names()));
  run->add_option_function<std::string>(
         "--sizes",
         [this](const std::string& text) {
           try {
             ro.request.sizes = parse_sizes(text);
           } catch (const std::invalid_argument& e) {
             throw CLI::ValidationError("--sizes", e.what());
           }
         },
         "Problem sizes: counts (4096, 1M, 2^20) or bytes (64MiB, 1GiB); lists (1M,64M) and ranges\n"
         "(2^12..2^30 doubles; 2^10..2^20:*4; 1000..5000:+1000). Default: each lab's")
      ->type_name("SIZES")
      ->check(non_empty);
  // One flag per axis any lab declares, its values parsed by the flag in the axis's grammar (labs
  // sharing a flag read its values alike: axis_flags checks) and checked against the widest range any
  // lab declares it with; each lab checks its own range when the run is planned.
  for (const auto& f : axis_flags(labs.built)) {
    const axis accepted = f.accepted();
    run->add_option_function<std::string>(
           accepted.flag(),
           [this, name = std::string(f.name), accepted](const std::string& text) {
             try {
               ro.request.axes.emplace_back(name, parse_axis(accepted, text));
             } catch (const std::invalid_argument& e) {
               throw CLI::ValidationError(e.what());  // names the flag already
             }
           },
           axis_help(f))
        ->type_name(std::string(grammar_type(accepted.grammar)))
        ->check(non_empty);
  }
  run->add_option_function<std::string>(
         "--device",
         [this](const std::string& text) {
           ro.request.device_given = true;
           if (text == "all") {
             ro.request.all_devices = true;
             return;
           }
           try {
             for (auto v : parse_counts(text, "--device")) {
               if (v > 1023) throw std::invalid_argument(fmt::format("--device: {} is not a device ordinal", v));
               ro.request.devices.push_back(static_cast<int>(v));
             }
           } catch (const std::invalid_argument& e) {
             throw CLI::ValidationError(e.what());
           }
         },
         "CUDA device ordinals: 0 (default); 0,2; 0..3; all. Several: every case runs on each in turn (a\n"
         "column says which). A run of one process per GPU (torchrun, srun, mpirun) takes its local rank's GPU")
      ->type_name("ORDINALS")
      ->check(non_empty);
  run->add_option("--rank-timeout", ro.request.rank_timeout_s,
                  "A run of one process per GPU: seconds a rank waits for the others to meet, or waits with\n"
                  "nothing done (a long collective that progresses is waited for), before it stops with an error;\n"
                  "a rank that exits is named by the others at once, with its host")
      ->check(seconds)
      ->capture_default_str();
  run->add_option("--max-time", ro.request.max_time_s,
                  "Time budget per case in seconds: half for cold timing, a quarter each for batch and graph;\n"
                  "sampling stops earlier once the relative spread (IQR / median) is under 0.5%")
      ->check(seconds)
      ->capture_default_str();
  run->add_option("--nccl-tests-graph", ro.request.nccl_tests_graph_launches,
                  "Collectives: time nccl-tests' method in its graph mode, as `nccl-tests -G N` does: the 20\n"
                  "back-to-back launches captured once in a CUDA graph per GPU, replayed N times a sample, so the\n"
                  "host's launch cost is out of the figure (below a few MiB it is most of it). 0: launched from\n"
                  "the host, nccl-tests' default")
      ->type_name("N")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  run->add_flag("!--no-verify", ro.request.verify, "Skip the CPU-reference check (results say verified: false)");
  run->add_flag("!--quiet", ro.request.progress, "No progress lines on stderr");
  run->add_flag("--profile", ro.request.profile,
                "For profilers (ncu, nsys), which serialize launches: each case verified, then launched once\n"
                "more and timed without the blocking kernel; no batch or graph figure, no ceiling measured");
  run->add_option_function<std::string>(
         "--format", [this](const std::string& name) { ro.format = *parse_format(name); },  // IsMember checked it
         "stdout format: table (one per lab), csv, json, md")
      ->check(CLI::IsMember({"table", "csv", "json", "md", "markdown"}))
      ->default_str("table");
  run->add_option_function<std::vector<std::string>>(
         "--out",
         [this](const std::vector<std::string>& paths) {
           for (const auto& path : paths)
             ro.outs.emplace_back(path, *format_from_path(path));  // results_file checked it
         },
         "Also write the results to FILE, rewritten after every case (a temporary file renamed into\n"
         "place); the format from its extension: .json .csv .md .txt. Repeat for several files")
      ->delimiter(',')
      ->allow_extra_args(false)
      ->check(non_empty)
      ->check(results_file);

  inspect = app.add_subcommand(
      "inspect", "Show the memory instructions each variant compiled to (SASS via cuobjdump; no GPU needed)");
  inspect->add_option("lab", io.lab, "Lab to show (default: all)");
  inspect->add_option("--binary", io.binary, "Binary to read (default: this memlab executable)")->check(non_empty);
  inspect->add_option("--arch", io.arch, "SASS architecture, e.g. sm_90 (default: the newest in the binary)")
      ->check(non_empty);
  inspect->add_flag("--all-kernels", io.all_kernels, "Also list kernels that belong to no lab variant");
  inspect->add_option("--format", io.format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();

  check = app.add_subcommand(
      "check",
      "Is this node what its GPU model should be? A short fixed suite on every GPU (HBM and L2 bandwidth and\n"
      "latency, the SM clock, PCIe both ways, NVML's clock events, ECC and PCIe link), every pair (peer copies)\n"
      "and the node (NCCL all-reduce), each measured by its lab; judged against the model's reference\n"
      "(references/<model>.json) and against the node's other GPUs. docs/check.md explains each metric.\n"
      "Exit: 0 all pass; 1 a metric failed; 5 a warning or a sibling, nothing failed; 6 no reference for\n"
      "this GPU model (measured, not judged); 7 busy: another process on a GPU could have moved a flagged\n"
      "figure (run again when it is idle); 130 interrupted (the rows measured are written); 2 usage error\n"
      "(before any GPU work); 3 no usable CUDA device");
  co.command = ro.request.command;
  check
      ->add_option_function<std::string>(
          "--devices",
          [this](const std::string& text) {
            try {
              for (auto v : parse_counts(text, "--devices")) {
                if (v > 1023) throw std::invalid_argument(fmt::format("--devices: {} is not a device ordinal", v));
                co.devices.push_back(static_cast<int>(v));
              }
            } catch (const std::invalid_argument& e) {
              throw CLI::ValidationError(e.what());
            }
          },
          "CUDA device ordinals to check: 0,2; 0..3 (default: every GPU visible; CUDA_VISIBLE_DEVICES applies)")
      ->type_name("ORDINALS")
      ->check(non_empty);
  check
      ->add_option("--reference", co.reference,
                   "The reference to judge by (default: the one in the references folder whose model matches)")
      ->type_name("FILE")
      ->check(non_empty);
  check
      ->add_option("--references", co.references_dir,
                   "The folder of references (default: $MEMLAB_REFERENCES, else the source tree's references/)")
      ->type_name("DIR")
      ->check(non_empty)
      ->check(reference_folder);
  check
      ->add_option("--write-reference", co.write_reference,
                   "Run the suite --runs times and write a reference for this GPU model to FILE (a file there of\n"
                   "the same model keeps its node sections for other GPU counts; %N in FILE: this host's short name)")
      ->transform(host_patterns)
      ->check(json_file);
  check->add_option("--runs", co.runs, "With --write-reference: runs of the suite (default 3)")
      ->check(CLI::Range(1, 50));
  check->add_option("--max-time", co.max_time_s, "Time budget per lab case in seconds (as memlab run's)")
      ->check(seconds)
      ->capture_default_str();
  check
      ->add_option("--format", co.format,
                   "stdout format: table, json (the check file, memlab.check/2), prometheus (the text format) or\n"
                   "line (one line for a scheduler: the verdict, the action, the flagged rows)")
      ->check(CLI::IsMember({"table", "json", "prometheus", "line"}))
      ->capture_default_str();
  check
      ->add_option("--out", co.outs,
                   "Also write the check to FILE: .json the check file (memlab.check/2), .prom Prometheus's text\n"
                   "format for node_exporter's textfile collector; each written to a temporary file and renamed.\n"
                   "In FILE, %N is this host's short name (hostname -s) and %% a percent sign: one file a node\n"
                   "from srun --nodes=N memlab check --out DIR/%N.json; any other % is a usage error")
      ->type_name("FILE")
      ->allow_extra_args(false)
      ->transform(host_patterns)
      ->check(check_out_file);
  check
      ->add_option("--replay", co.replay,
                   "Judge a check file (memlab.check/1 or /2) again, without a GPU: against the model's reference,\n"
                   "or --reference; the same table, files and exit status as the run it records")
      ->type_name("FILE")
      ->check(non_empty);
  check->add_option("--line-max", co.line_max, "The most characters --format line writes (default 200)")
      ->check(CLI::Range(40, 4096));
  check->add_flag("!--quiet", co.progress, "No progress lines on stderr");

  device = app.add_subcommand("device", "Print the GPU, its theoretical peak and the measured copy ceiling");
  device->add_option("--device", dopt.device, "CUDA device ordinal")->check(device_ordinal);
  device->add_flag("!--no-ceiling", dopt.ceiling, "Skip the cudaMemcpy ceiling measurement");
  device->add_option("--format", dopt.format, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
}

}  // namespace

std::vector<std::pair<std::string, std::vector<std::string>>> value_flags(const lab_set& labs) {
  char name[] = "memlab";
  char* argv[] = {name, nullptr};
  const command_line cl(1, argv, labs);
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  for (const CLI::App* sub : {cl.list, cl.run, cl.inspect, cl.device, cl.check}) {
    auto& [subcommand, flags] = out.emplace_back(sub->get_name(), std::vector<std::string>{});
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->nonpositional() && opt->get_expected_max() > 0 && opt->get_type_size_max() > 0) {
        flags.push_back(opt->get_name());
      }
    }
  }
  return out;
}

int main_with(int argc, char** argv, const lab_set& labs, case_runner* runner, check::check_backend* checker) {
  command_line cl(argc, argv, labs);
  try {
    cl.app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cl.app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return cl.app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return cl.app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, naming the flag: CLI11's message, without its second line.
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : {cl.run, cl.list, cl.inspect, cl.device, cl.check})
      if (sub == nullptr && s->parsed()) sub = s;
    const std::string command = sub != nullptr ? fmt::format("memlab {}", sub->get_name()) : "memlab";
    std::cerr << fmt::format("{}: {} (see {} --help)\n", command, what, command);
    return exit_usage;
  }

  if (*cl.list) return list_command(labs, cl.lo);
  if (*cl.run) {
    cl.ro.request.options = given_options(cl.run);
    return run_command(labs, std::move(cl.ro), runner);
  }
  if (*cl.inspect) return inspect_command(labs, cl.io);
  if (*cl.device) return device_command(cl.dopt);
  if (*cl.check) return check_command(labs, cl.co, checker);
  return exit_usage;
}

}  // namespace memlab::cli
