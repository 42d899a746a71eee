#include "cli/commands.hpp"

#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/labels.hpp"
#include "harness/device.hpp"
#include "harness/error.hpp"
#include "harness/gpu_runner.hpp"
#include "harness/text.hpp"
#include "harness/timing.hpp"
#include "harness/writers.hpp"
#include "inspect/inspect.hpp"

namespace memlab::cli {

const char* const no_gpu_hint =
    "Without a GPU these still work: `memlab list` (labs and variants), `memlab inspect` (the SASS each\n"
    "variant compiled to), and `make test` (host and SASS tests; GPU tests report SKIPPED).";

namespace {

int usage_error(std::string_view command, const std::string& what) {
  std::cerr << "memlab " << command << ": " << what << " (see memlab " << command << " --help)\n";
  return exit_usage;
}

int no_device(const no_device_error& e) {
  std::cerr << "memlab: " << e.what() << "\n" << no_gpu_hint << "\n";
  return exit_no_device;
}

const lab* find(const lab_set& labs, std::string_view name) {
  for (const lab* l : labs.built)
    if (l->name == name) return l;
  return nullptr;
}

std::string unknown_lab(const lab_set& labs, const std::string& name) {
  for (const auto& m : labs.missing)
    if (m.name == name) return "lab " + name + " is not built: " + std::string(m.why);
  std::vector<std::string_view> names;
  for (const lab* l : labs.built) names.push_back(l->name);
  return "unknown lab '" + name + "' (labs: " + join(names) + ")";
}

std::string_view grammar_name(axis_grammar g) {
  switch (g) {
    case axis_grammar::counts: return "counts";
    case axis_grammar::bytes: return "bytes";
    case axis_grammar::shape: return "shape";
    case axis_grammar::words: return "words";
  }
  return "?";
}

}  // namespace

int list_command(const lab_set& labs, const list_options& o) {
  std::vector<const lab*> chosen;
  for (const auto& name : o.labs) {
    const lab* l = find(labs, name);
    if (l == nullptr) return usage_error("list", unknown_lab(labs, name));
    chosen.push_back(l);
  }
  if (chosen.empty()) chosen.assign(labs.built.begin(), labs.built.end());

  if (o.format == "json") {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const lab* l : chosen) {
      nlohmann::ordered_json lj;
      lj["lab"] = l->name;
      lj["teaches"] = l->teaches;
      for (dtype t : l->dtypes) lj["dtypes"].push_back(to_string(t));
      lj["default_dtype"] = to_string(l->default_dtype);
      lj["default_sizes"] = l->default_sizes;
      lj["sizes_count"] = l->size_meaning;
      lj["roof"] = to_string(l->roof);
      if (!l->built_without.empty()) lj["built_without"] = l->built_without;
      lj["axes"] = nlohmann::ordered_json::array();
      for (const auto& a : l->axes) {
        lj["axes"].push_back({{"name", a.name},
                              {"flag", a.flag()},
                              {"meaning", a.meaning},
                              {"grammar", grammar_name(a.grammar)},
                              {"defaults", a.defaults},
                              {"min", a.min},
                              {"max", a.max}});
      }
      for (const auto& v : l->variants) {
        lj["variants"].push_back({{"name", v.name},
                                  {"teaches", v.teaches},
                                  {"peer", v.peer},
                                  {"alignment", v.needs.alignment},
                                  {"min_cc", v.needs.min_cc},
                                  {"feature", v.needs.feature},
                                  {"shape", v.needs.shape}});
      }
      j.push_back(lj);
    }
    std::cout << j.dump(2) << "\n";
    return exit_ok;  // missing labs: only in the table, so the JSON stays a list of labs
  }
  for (const lab* l : chosen) {
    std::cout << l->name << ": " << l->teaches << "\n  roof: " << to_string(l->roof) << "; dtypes:";
    for (dtype t : l->dtypes) std::cout << " " << to_string(t);
    std::cout << " (default " << to_string(l->default_dtype) << "); --sizes counts " << l->size_meaning << ", default "
              << l->default_sizes << "\n";
    if (!l->built_without.empty()) std::cout << "  built without: " << l->built_without << "\n";
    for (const auto& a : l->axes) {
      std::string range = std::to_string(a.min) + ".." + std::to_string(a.max);
      if (a.grammar == axis_grammar::words) {
        range.clear();
        for (auto w : a.words) range += (range.empty() ? "" : ",") + std::string(w);
      }
      std::cout << "  " << a.flag() << ": " << a.meaning << " (" << grammar_name(a.grammar) << " " << range
                << "; default " << a.defaults << ")\n";
    }
    text_table t;
    t.column("", false);
    t.column("", false);
    for (const auto& v : l->variants) t.rows.push_back({"  " + std::string(v.name), (v.peer ? "[peer] " : "") + std::string(v.teaches)});
    std::size_t width = 0;
    for (const auto& row : t.rows) width = std::max(width, display_width(row[0]));
    for (const auto& row : t.rows) std::cout << row[0] << std::string(width - display_width(row[0]) + 2, ' ') << row[1] << "\n";
  }
  if (o.labs.empty()) {
    for (const auto& m : labs.missing) std::cout << m.name << ": not built: " << m.why << "\n";
  }
  return exit_ok;
}

int run_command(const lab_set& labs, run_options o, case_runner* runner) {
  // Everything the user typed is checked before the GPU is touched: usage errors exit 2 anywhere.
  for (const auto& name : o.dtype_names) o.request.dtypes.push_back(*parse_dtype(name));  // validated by the parser
  for (const auto& [name, text] : o.axis_text) o.request.axes.emplace_back(name, text);
  const output_format stdout_format = *parse_format(o.format);
  std::vector<std::pair<std::string, output_format>> files;
  for (const auto& path : o.outs) files.emplace_back(path, *format_from_path(path));
  std::vector<planned_case> cases;
  try {
    cases = plan_cases(o.request, labs.built, labs.missing);
  } catch (const std::invalid_argument& e) {
    return usage_error("run", e.what());
  }
  if (cases.empty()) return usage_error("run", "nothing to run: no chosen lab has the variants asked for");

  stdout_sink out(std::cout, stdout_format);
  std::vector<std::unique_ptr<file_sink>> file_sinks;
  std::vector<results_sink*> sinks{&out};
  for (const auto& [path, f] : files) {
    file_sinks.push_back(std::make_unique<file_sink>(path, f));
    sinks.push_back(file_sinks.back().get());
  }
  gpu_runner gpu;
  case_runner& r = runner != nullptr ? *runner : gpu;
  install_stop_handlers();
  run_report report;
  try {
    report = run_cases(o.request, cases, r, sinks, std::cerr);
  } catch (const no_device_error& e) {
    return no_device(e);
  } catch (const write_error& e) {
    std::cerr << "memlab: " << e.what() << "\n";
    return exit_failed;
  } catch (const cuda_error& e) {
    std::cerr << "memlab: a CUDA error stopped the run (the results measured before it are written): " << e.what()
              << "\n";
    return exit_failed;
  } catch (const std::exception& e) {
    std::cerr << "memlab: an error stopped the run (the results measured before it are written): " << e.what() << "\n";
    return exit_failed;
  }
  for (const auto& [path, f] : files) std::cerr << "wrote " << path << "\n";
  std::size_t failed = 0, skipped = 0, ok = 0;
  for (const auto& res : report.results) {
    failed += res.status == result_status::failed;
    skipped += res.status == result_status::skipped;
    ok += res.status == result_status::ok;
  }
  if (report.ended != "complete") {
    std::cerr << "memlab: run " << report.ended << "; what was measured is written\n";
    return exit_interrupted;
  }
  if (skipped > 0) std::cerr << skipped << " case(s) skipped: see the status column\n";
  if (failed > 0) {
    std::cerr << "memlab: " << failed << " case(s) FAILED verification\n";
    return exit_failed;
  }
  if (ok == 0) {
    std::cerr << "memlab: nothing was measured: every case was skipped (exit " << exit_nothing_run << ")\n";
    return exit_nothing_run;
  }
  return exit_ok;
}

int inspect_command(const lab_set& labs, const inspect_options& o) {
  if (!o.lab.empty() && find(labs, o.lab) == nullptr) return usage_error("inspect", unknown_lab(labs, o.lab));
  const std::string binary = o.binary.empty() ? inspect::self_executable() : o.binary;
  if (const std::string why = inspect::check_binary(binary); !why.empty()) {
    return usage_error("inspect", (o.binary.empty() ? "" : "--binary: ") + why);
  }
  const auto labels = kernel_labels(labs.built);
  try {
    const auto report = inspect::inspect_binary(binary, labels, o.lab, o.arch, o.all_kernels);
    if (o.format == "json") {
      inspect::write_inspect_json(std::cout, report);
    } else {
      inspect::write_inspect_table(std::cout, report);
    }
  } catch (const std::invalid_argument& e) {
    return usage_error("inspect", e.what());
  } catch (const std::runtime_error& e) {
    std::cerr << "memlab inspect: " << e.what() << "\n";
    return exit_failed;
  }
  return exit_ok;
}

int device_command(const device_options& o) {
  device_info d;
  try {
    d = open_device(o.device);
    if (o.ceiling) {
      cuda_stream stream;
      l2_flusher flusher(d.l2_bytes);
      timer t(stream.get(), flusher, d.sm_count, d.sm_default_clock_khz);
      d.measured_peak_gbps = measure_copy_ceiling_gbps(d, t, 0.5);
    }
  } catch (const no_device_error& e) {
    return no_device(e);
  } catch (const std::exception& e) {
    std::cerr << "memlab: " << e.what() << "\n";
    return exit_failed;
  }
  if (o.format == "json") {
    run_report r;
    r.device = d;
    std::cout << to_json(r)["device"].dump(2) << "\n";
    return exit_ok;
  }
  const auto gib = [](std::uint64_t b) { return fixed(static_cast<double>(b) / (1ull << 30), 1) + " GiB"; };
  std::cout << "device " << d.ordinal << ": " << d.name << "\n"
            << "  compute capability  " << d.cc_major << "." << d.cc_minor << "\n"
            << "  SMs                 " << d.sm_count << ", default SM clock " << fixed(d.sm_default_clock_khz / 1e3, 0)
            << " MHz\n"
            << "  L2                  " << format_bytes(d.l2_bytes) << "\n"
            << "  memory              " << gib(d.global_mem_bytes) << ", " << d.bus_width_bits << "-bit bus, "
            << fixed(d.mem_clock_khz / 1e3, 0) << " MHz clock\n"
            << "  theoretical peak    " << fixed(d.peak_gbps, 1) << " GB/s (2 x clock x bus width / 8)\n";
  if (o.ceiling) {
    std::cout << "  measured ceiling    " << fixed(d.measured_peak_gbps, 1) << " GB/s ("
              << fixed(100 * d.measured_peak_gbps / d.peak_gbps, 1)
              << "% of peak; cudaMemcpy D2D, L2 flushed, bytes read + written)\n";
  }
  return exit_ok;
}

}  // namespace memlab::cli
