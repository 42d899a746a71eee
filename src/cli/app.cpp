// The memlab command line: subcommands, flags and their validators, built from the labs' tables
// (one flag per axis any lab declares). Every usage error is one line naming the flag, exit 2,
// before any GPU work.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <sys/stat.h>
#include <unistd.h>

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
    "Bytes in every report are the fewest the job must move through the roof's memory level: reads + writes.";

// ---- validators ---------------------------------------------------------------------------------------

const CLI::Validator non_empty(
    [](std::string& s) -> std::string { return s.empty() ? "an empty value" : ""; }, "");

// A CUDA device ordinal: a whole number >= 0 (CLI11's NonNegativeNumber would print DBL_MAX as the bound).
const CLI::Validator device_ordinal(
    [](std::string& s) -> std::string {
      const bool digits = !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
      return digits && s.size() < 6 ? "" : "takes a device ordinal: 0, 1, ... (got '" + s + "')";
    },
    "ORDINAL");

// Seconds: a finite number above 0 (nan, inf, 0 and negatives are refused without printing a bound).
const CLI::Validator seconds(
    [](std::string& s) -> std::string {
      char* end = nullptr;
      const double v = std::strtod(s.c_str(), &end);
      const bool number = !s.empty() && end != nullptr && *end == '\0';
      if (!number || !std::isfinite(v) || v <= 0 || v > 3600) {
        return "takes seconds, a number above 0 and at most 3600, as in 0.5 (got '" + s + "')";
      }
      return "";
    },
    "SECONDS");

// A results file: a known extension, not a folder, and a place that can be written.
const CLI::Validator results_file(
    [](std::string& path) -> std::string {
      if (path.empty()) return "an empty path";
      if (!format_from_path(path)) return path + ": the extension gives the format: .json, .csv, .md or .txt";
      struct stat st{};
      if (::stat(path.c_str(), &st) == 0) {
        if (S_ISDIR(st.st_mode)) return path + " is a folder";
        if (::access(path.c_str(), W_OK) != 0) return path + ": cannot open for writing";
      }
      const auto slash = path.find_last_of('/');
      const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
      if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return path + ": cannot open for writing (no folder " + dir + ")";
      // The writers replace the file through a temporary one in its folder: try creating and removing
      // one, now. access() passes root in a read-only folder, and anyone on a read-only file system.
      std::string probe = dir + "/.memlab-probe-XXXXXX";
      const int fd = ::mkstemp(probe.data());
      if (fd < 0) {
        const int err = errno;
        return path + ": cannot write in " + dir + " (" + std::strerror(err) + ")";
      }
      ::close(fd);
      if (::unlink(probe.c_str()) != 0) {  // a folder that takes files but gives none back (append-only)
        const int err = errno;
        return path + ": cannot replace files in " + dir + " (" + std::strerror(err) + "; " + probe + " is left there)";
      }
      return "";
    },
    "FILE");

std::vector<std::string> dtype_names() {
  std::vector<std::string> out;
  for (dtype t : all_dtypes()) out.emplace_back(to_string(t));
  return out;
}

std::string joined_command(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i > 0 ? " " : "") + std::string(i == 0 ? "memlab" : argv[i]);
  return s;
}

// A list option: one value per occurrence (so a positional lab after it is not swallowed), repeatable,
// comma-separated values split.
CLI::Option* list_option(CLI::App* app, const std::string& name, std::vector<std::string>& into, const std::string& help) {
  return app->add_option(name, into, help)->delimiter(',')->allow_extra_args(false)->check(non_empty);
}

// What the user gave to `run`, for the report: each option once, its values as typed.
std::vector<std::pair<std::string, std::string>> given_options(const CLI::App* run) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const CLI::Option* opt : run->get_options()) {
    if (opt->count() == 0 || opt->get_name() == "--help") continue;
    std::string values;
    for (const auto& r : opt->results()) values += (values.empty() ? "" : ",") + r;
    out.emplace_back(opt->get_name(), values);
  }
  return out;
}

}  // namespace

int main_with(int argc, char** argv, const lab_set& labs, case_runner* runner) {
  CLI::App app{"memlab: what a GPU's memory system delivers for each access pattern, kernel by kernel.\n"
               "Each lab is a ladder of kernel variants; each is verified against a CPU reference, then timed\n"
               "cold (L2 flushed), in batches and as a CUDA graph, and placed under the roof it is bound by.",
               "memlab"};
  app.footer(footer);
  app.set_version_flag("--version", std::string(MEMLAB_VERSION) + " (" + MEMLAB_GIT_SHA + ")");
  app.require_subcommand(1);

  list_options lo;
  auto* list = app.add_subcommand("list", "List the labs: variants, axes, roof, what each teaches (no GPU needed)");
  list->add_option("lab", lo.labs, "Labs to list (default: all)");
  list->add_option("--format", lo.format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();

  run_options ro;
  ro.request.command = joined_command(argc, argv);
  for (int i = 0; i < argc; ++i) ro.request.argv.emplace_back(i == 0 ? "memlab" : argv[i]);
  auto* run = app.add_subcommand("run", "Verify and time lab variants on the GPU");
  run->add_option("lab", ro.request.labs, "Labs to run (default: all)");
  list_option(run, "--variant", ro.request.variants, "Variants to run (default: all of each lab)");
  list_option(run, "--dtype", ro.dtype_names, "Element types: u8, f16, bf16, f32, f64 (default: each lab's)")
      ->check(CLI::IsMember(dtype_names()));
  run->add_option("--sizes", ro.request.sizes,
                  "Problem sizes: counts (4096, 1M, 2^20) or bytes (64MiB, 1GiB); lists (1M,64M) and ranges\n"
                  "(2^12..2^30 doubles; 2^10..2^20:*4; 1000..5000:+1000). Default: each lab's")
      ->check(non_empty);
  // One flag per axis any lab declares; an axis several labs share is one flag.
  std::vector<std::pair<std::string, std::vector<std::string_view>>> axis_labs;
  std::vector<const axis*> first_decl;
  for (const lab* l : labs.built) {
    for (const auto& a : l->axes) {
      auto it = std::find_if(axis_labs.begin(), axis_labs.end(), [&](const auto& x) { return x.first == a.name; });
      if (it == axis_labs.end()) {
        axis_labs.emplace_back(std::string(a.name), std::vector<std::string_view>{});
        first_decl.push_back(&a);
        it = axis_labs.end() - 1;
      }
      it->second.push_back(l->name);
    }
  }
  for (std::size_t i = 0; i < axis_labs.size(); ++i) {
    const axis& a = *first_decl[i];
    std::string words;
    for (auto w : a.words) words += (words.empty() ? "" : ",") + std::string(w);
    const std::string grammar = a.grammar == axis_grammar::shape   ? "shapes joined by x: 128x256,64x64"
                                : a.grammar == axis_grammar::bytes ? "byte counts: 8MiB,1GiB; 4MiB..1GiB:*4"
                                : a.grammar == axis_grammar::words ? "any of " + words + "; all"
                                                                   : "counts: 2; 0,2,8; 0..15 counts up by 1; 1..16:*2";
    run->add_option(a.flag(), ro.axis_text[axis_labs[i].first],
                    std::string(a.meaning) + "\n(" + grammar + "; axis of " + join(axis_labs[i].second) +
                        "; defaults in `memlab list`)")
        ->check(non_empty);
  }
  run->add_option("--device", ro.request.device, "CUDA device ordinal")->check(device_ordinal);
  run->add_option("--max-time", ro.request.max_time_s,
                  "Time budget per case in seconds: half for cold timing, a quarter each for batch and graph;\n"
                  "sampling stops earlier once the relative spread (IQR / median) is under 0.5%")
      ->check(seconds)
      ->capture_default_str();
  run->add_flag("!--no-verify", ro.request.verify, "Skip the CPU-reference check (results say verified: false)");
  run->add_flag("!--quiet", ro.request.progress, "No progress lines on stderr");
  run->add_flag("--profile", ro.request.profile,
                "For profilers (ncu, nsys), which serialize launches: each case verified, then launched once\n"
                "more and timed without the blocking kernel; no batch or graph figure, no ceiling measured");
  run->add_option("--format", ro.format, "stdout format: table (one per lab), csv, json, md")
      ->check(CLI::IsMember({"table", "csv", "json", "md", "markdown"}))
      ->capture_default_str();
  list_option(run, "--out", ro.outs,
              "Also write the results to FILE, rewritten after every case (a temporary file renamed into\n"
              "place); the format from its extension: .json .csv .md .txt. Repeat for several files")
      ->check(results_file);

  inspect_options io;
  auto* inspect = app.add_subcommand(
      "inspect", "Show the memory instructions each variant compiled to (SASS via cuobjdump; no GPU needed)");
  inspect->add_option("lab", io.lab, "Lab to show (default: all)");
  inspect->add_option("--binary", io.binary, "Binary to read (default: this memlab executable)")->check(non_empty);
  inspect->add_option("--arch", io.arch, "SASS architecture, e.g. sm_90 (default: the newest in the binary)")->check(non_empty);
  inspect->add_flag("--all-kernels", io.all_kernels, "Also list kernels that belong to no lab variant");
  inspect->add_option("--format", io.format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();

  device_options dopt;
  auto* device = app.add_subcommand("device", "Print the GPU, its theoretical peak and the measured copy ceiling");
  device->add_option("--device", dopt.device, "CUDA device ordinal")->check(device_ordinal);
  device->add_flag("!--no-ceiling", dopt.ceiling, "Skip the cudaMemcpy ceiling measurement");
  device->add_option("--format", dopt.format, "table or json")->check(CLI::IsMember({"table", "json"}))->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    // One line, naming the flag: CLI11's message, without its second line.
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    const CLI::App* sub = run->parsed() ? run : list->parsed() ? list : inspect->parsed() ? inspect : device->parsed() ? device : nullptr;
    std::cerr << "memlab" << (sub ? " " + sub->get_name() : std::string()) << ": " << what << " (see memlab"
              << (sub ? " " + sub->get_name() : std::string()) << " --help)\n";
    return exit_usage;
  }

  if (*list) return list_command(labs, lo);
  if (*run) {
    for (auto it = ro.axis_text.begin(); it != ro.axis_text.end();) {
      const std::string flag = "--" + [&] {
        std::string f = it->first;
        std::replace(f.begin(), f.end(), '_', '-');
        return f;
      }();
      it = run->get_option(flag)->count() == 0 ? ro.axis_text.erase(it) : std::next(it);
    }
    ro.request.options = given_options(run);
    return run_command(labs, std::move(ro), runner);
  }
  if (*inspect) return inspect_command(labs, io);
  if (*device) return device_command(dopt);
  return exit_usage;
}

}  // namespace memlab::cli
