#include "cli/commands.hpp"

#include <fstream>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/labels.hpp"
#include "harness/device.hpp"
#include "harness/error.hpp"
#include "harness/gpu_runner.hpp"
#include "harness/kernel_symbols.hpp"
#include "harness/launcher.hpp"
#include "harness/sizes.hpp"
#include "harness/table.hpp"
#include "harness/text.hpp"
#include "harness/timing.hpp"
#include "harness/world.hpp"
#include "harness/writers.hpp"
#include "inspect/inspect.hpp"
#include "inspect/sass.hpp"

namespace memlab::cli {

const char* const no_gpu_hint =
    "Without a GPU these still work: `memlab list` (labs and variants), `memlab inspect` (the SASS each\n"
    "variant compiled to), and `make test` (host and SASS tests; GPU tests report SKIPPED).";

namespace {

int usage_error(std::string_view command, const std::string& what) {
  std::cerr << fmt::format("memlab {}: {} (see memlab {} --help)\n", command, what, command);
  return exit_usage;
}

int no_device(const no_device_error& e) {
  std::cerr << fmt::format("memlab: {}\n{}\n", e.what(), no_gpu_hint);
  return exit_no_device;
}

// Fewer GPUs than the run asks for, on a machine that has some: one line, exit 3.
int too_few_gpus(const std::string& what) {
  std::cerr << fmt::format("memlab: {}\n", what);
  return exit_no_device;
}

const lab* find(const lab_set& labs, std::string_view name) {
  for (const lab* l : labs.built)
    if (l->name == name) return l;
  return nullptr;
}

std::string unknown_lab(const lab_set& labs, const std::string& name) {
  for (const auto& m : labs.missing)
    if (m.name == name) return fmt::format("lab {} is not built: {}", name, m.why);
  std::vector<std::string_view> names;
  for (const lab* l : labs.built) names.push_back(l->name);
  return fmt::format("unknown lab '{}' (labs: {})", name, join(names));
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

std::vector<std::string_view> dtype_names_of(const lab& l) {
  std::vector<std::string_view> out;
  for (dtype t : l.dtypes) out.push_back(to_string(t));
  return out;
}

// What a rung needs, in words: "16-byte aligned pointers; sm_90+ (TMA); rows of whole vectors".
std::string needs_text(const rung_needs& n) {
  std::vector<std::string> parts;
  if (n.alignment > 0) parts.push_back(fmt::format("{}-byte aligned pointers", n.alignment));
  if (n.min_cc > 0) {
    parts.push_back(n.feature.empty() ? fmt::format("sm_{}+", n.min_cc)
                                      : fmt::format("sm_{}+ ({})", n.min_cc, n.feature));
  }
  if (!n.shape.empty()) parts.emplace_back(n.shape);
  return fmt::format("{}", fmt::join(parts, "; "));
}

// A lab's ladder, a row per rung in table order: what `memlab list --format md` prints.
text_table ladder_table(const lab& l) {
  text_table t;
  for (const char* h : {"rung", "what it teaches", "needs", "peer"}) t.column(h, false);
  for (const auto& v : l.variants) {
    t.rows.push_back({fmt::format("`{}`", v.name), std::string(v.teaches), needs_text(v.needs), v.peer ? "peer" : ""});
  }
  return t;
}

// The names of the kernels a rung launches: each kernel's function, demangled, without its template
// arguments (one per kernel family, in order); a library's kernels memlab cannot name by symbol, by
// the type of ours they are instantiated with.
std::vector<std::string> kernel_names(const variant& v) {
  std::vector<std::string> out;
  const auto add = [&](std::string name) {
    if (!name.empty() && std::find(out.begin(), out.end(), name) == out.end()) out.push_back(std::move(name));
  };
  for (const auto& k : v.kernels) {
    if (k.symbol != nullptr) {
      const std::string mangled = kernel_symbol(k.symbol);
      std::string name = inspect::demangle(mangled);
      // The function's qualified name: up to its template arguments or its parameter list.
      if (name.starts_with("void ")) name.erase(0, 5);  // a template's demangled name starts with its return type
      add(name.substr(0, name.find_first_of("<(")));
    }
    if (k.instantiated_with != nullptr)
      add(fmt::format("kernels instantiated with {}", inspect::demangle_type(k.instantiated_with->name())));
  }
  return out;
}

// The result field a roof's rule judges: "gbps", "batch_gbps" or "gflops".
std::string_view judged_field(const roof_rule& r) {
  if (r.judged == &result::gflops) return "gflops";
  if (r.judged == &result::batch_gbps) return "batch_gbps";
  return "gbps";
}

// What `memlab list --format json` prints: every table the tools downstream read (tools/python takes its
// labs, rungs, roofs, units and grammar from it; docs/results-schema.md, "The tables", describes it).
nlohmann::ordered_json labs_json(const std::vector<const lab*>& chosen) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schema"] = "memlab.labs/1";
  for (const roof_rule& r : roof_rules()) {
    ordered_json rj{
        {"name", r.name}, {"label", r.label}, {"unit", r.unit}, {"judges", judged_field(r)}, {"derived", r.derived}};
    for (const cc_figure& f : r.per_sm_clock) {  // "*": every device
      const bool any = f.cc_major == 0 && f.cc_minor == 0;
      rj["per_sm_clock"][any ? std::string("*") : fmt::format("{}.{}", f.cc_major, f.cc_minor)] = f.value;
    }
    j["roofs"].push_back(std::move(rj));
  }

  for (dtype t : all_dtypes()) j["dtypes"].push_back({{"name", to_string(t)}, {"bytes", size_of(t)}});
  ordered_json suffixes = ordered_json::array();
  for (const auto& sfx : size_suffixes())
    suffixes.push_back({{"suffix", sfx.name}, {"multiplies_by", sfx.unit}, {"bytes", sfx.bytes}});
  j["sizes"] = {{"suffixes", suffixes},
                {"max_exponent", max_exponent},
                {"max_range_items", max_range_items},
                {"max_cases", max_cases}};
  const measure_options m;
  j["timing"] = {{"target_rel_spread", m.target_rel_spread},
                 {"min_samples", m.min_samples},
                 {"max_samples", m.max_samples},
                 {"floor_samples", measure_options::floor_samples},
                 {"throttle_threshold", m.throttle_threshold},
                 {"batch_target_ms", m.batch_target_ms},
                 {"max_queued_launches", m.max_queued_launches},
                 {"default_max_time_s", run_request{}.max_time_s}};
  for (const result_field& f : result_fields())
    if (!f.unit.empty()) j["units"][std::string(f.name)] = f.unit;
  j["labs"] = ordered_json::array();
  for (const lab* l : chosen) {
    ordered_json lj;
    lj["name"] = l->name;
    lj["teaches"] = l->teaches;
    lj["roof"] = to_string(l->roof);
    for (dtype t : l->dtypes) lj["dtypes"].push_back(to_string(t));
    lj["default_dtype"] = to_string(l->default_dtype);
    lj["default_sizes"] = l->default_sizes;
    lj["size_meaning"] = l->size_meaning;
    if (!l->built_without.empty()) lj["built_without"] = l->built_without;
    lj["params"] = info_of(*l).params;
    lj["axes"] = ordered_json::array();
    for (const auto& a : l->axes) {
      ordered_json aj{{"name", a.name},
                      {"flag", a.flag()},
                      {"meaning", a.meaning},
                      {"unit", a.unit},
                      {"grammar", grammar_name(a.grammar)},
                      {"defaults", a.defaults}};
      if (a.grammar == axis_grammar::words) {
        aj["words"] = a.words;
      } else {
        aj["min"] = a.min;
        aj["max"] = a.max;
        if (a.multiple_of > 1) aj["multiple_of"] = a.multiple_of;
        if (!a.choices.empty()) aj["choices"] = a.choices;
      }
      if (a.grammar == axis_grammar::shape) {
        for (std::size_t i = 0; i < a.rank(); ++i) aj["extents"].push_back(a.extents[i]);
      }
      if (!a.formerly.empty()) aj["formerly"] = a.formerly;
      lj["axes"].push_back(std::move(aj));
    }
    lj["variants"] = ordered_json::array();
    for (const auto& v : l->variants) {
      ordered_json vj{{"name", v.name},           {"teaches", v.teaches},
                      {"peer", v.peer},           {"alignment", v.needs.alignment},
                      {"min_cc", v.needs.min_cc}, {"feature", v.needs.feature},
                      {"shape", v.needs.shape}};
      if (v.roof) vj["roof"] = to_string(*v.roof);
      if (!v.ignores.empty()) vj["ignores"] = v.ignores;
      for (dtype t : v.dtypes) vj["dtypes"].push_back(to_string(t));
      if (!v.formerly.empty()) vj["formerly"] = v.formerly;
      if (l->facts != nullptr) {
        ordered_json facts = ordered_json::object();
        for (const rung_fact& f : l->facts(v))
          std::visit([&](const auto& value) { facts[std::string(f.name)] = value; }, f.value);
        vj["facts"] = std::move(facts);
      }
      vj["kernels"] = kernel_names(v);
      lj["variants"].push_back(std::move(vj));
    }
    j["labs"].push_back(std::move(lj));
  }
  return j;
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
    std::cout << labs_json(chosen).dump(2) << "\n";
    return exit_ok;  // missing labs: only in the table, so the JSON holds what this binary runs
  }
  if (o.format == "md") {
    // Each lab's ladder as the Markdown table its docs page carries (tools/docs/update_ladders.py copies
    // it there); a heading per lab when several are listed.
    for (const lab* l : chosen) {
      if (chosen.size() > 1) std::cout << fmt::format("### {}: {}\n\n", l->name, l->teaches);
      write_markdown(std::cout, ladder_table(*l));
      if (chosen.size() > 1) std::cout << "\n";
    }
    return exit_ok;
  }
  for (const lab* l : chosen) {
    std::cout << fmt::format("{}: {}\n  roof: {}; dtypes: {} (default {}); --sizes counts {}, default {}\n", l->name,
                             l->teaches, to_string(l->roof), fmt::join(dtype_names_of(*l), " "),
                             to_string(l->default_dtype), l->size_meaning, l->default_sizes);
    if (!l->built_without.empty()) std::cout << fmt::format("  built without: {}\n", l->built_without);
    for (const auto& a : l->axes) {
      const std::string unit = a.unit.empty() ? "" : fmt::format("{}; ", a.unit);
      std::cout << fmt::format("  {}: {} ({}{} {}; default {})\n", a.flag(), a.meaning, unit, grammar_name(a.grammar),
                               accepted_values(a), a.defaults);
    }
    std::size_t width = 0;
    for (const auto& v : l->variants) width = std::max(width, display_width(v.name) + 2);
    for (const auto& v : l->variants) {
      const std::string rung = fmt::format("  {}", v.name);
      std::cout << fmt::format("{}{}{}{}\n", rung, std::string(width - display_width(rung) + 2, ' '),
                               v.peer ? "[peer] " : "", v.teaches);
    }
  }
  if (o.labs.empty()) {
    for (const auto& m : labs.missing) std::cout << fmt::format("{}: not built: {}\n", m.name, m.why);
  }
  return exit_ok;
}

namespace {

// GPUs the machine shows, without failing: 0 when there are none or no driver.
int visible_gpus() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

}  // namespace

int run_command(const lab_set& labs, run_options o, case_runner* runner) {
  // Everything the user typed is checked before the GPU is touched (usage errors exit 2 anywhere), and then
  // what the machine lacks (exit 3): plan_run says which, or gives the cases.
  run_host host;
  try {  // who started this process: one process, or a rank of a distributed job (torchrun, srun, mpirun)
    host.launch = detect_launch([](const char* name) { return std::getenv(name); });
  } catch (const std::invalid_argument& e) {
    return usage_error("run", fmt::format("the launcher's environment: {}", e.what()));
  }
  host.gpus = runner != nullptr ? 0 : visible_gpus();  // a count only; a fake runner (tests) plans on the host
  host.asked = runner == nullptr;
  const run_plan plan = plan_run(std::move(o.request), labs.built, labs.missing, host);
  switch (plan.refused) {
    case refusal_kind::none: break;
    case refusal_kind::usage: return usage_error("run", plan.why);
    case refusal_kind::too_few_gpus: return too_few_gpus(plan.why);
    case refusal_kind::no_device: return no_device(no_device_error(plan.why));
  }
  const launch_env& env = host.launch;
  if (env.distributed()) {
    try {
      set_world(std::make_unique<world>(env, plan.request.devices.front(), plan.request.rank_timeout_s));
    } catch (const world_usage_error& e) {
      return usage_error("run", e.what());
    } catch (const world_error& e) {
      std::cerr << fmt::format("memlab: {}\n", e.what());
      return world::nccl_version() == 0 ? exit_no_device : exit_failed;
    } catch (const cuda_error& e) {
      std::cerr << fmt::format("memlab: rank {}: {}\n", env.rank, e.what());
      return exit_failed;
    }
    if (env.rank == 0 && plan.request.progress) {
      std::cerr << fmt::format("{} ranks met at {} ({}), NCCL {}\n", env.size, env.root, env.root_from,
                               world::nccl_version());
    }
  }
  // Rank 0 writes the results; the other ranks measure with it and say nothing unless they fail.
  const auto files = env.distributed() && env.rank != 0 ? decltype(o.outs){} : o.outs;

  stdout_sink out(std::cout, o.format);
  std::vector<std::unique_ptr<file_sink>> file_sinks;
  std::vector<results_sink*> sinks;
  if (!env.distributed() || env.rank == 0) sinks.push_back(&out);
  for (const auto& [path, f] : files) {
    file_sinks.push_back(std::make_unique<file_sink>(path, f));
    sinks.push_back(file_sinks.back().get());
  }
  gpu_runner gpu;
  case_runner& r = runner != nullptr ? *runner : gpu;
  install_stop_handlers();
  run_report report;
  try {
    report = run_cases(plan.request, plan.cases, r, sinks, std::cerr);
  } catch (const no_device_error& e) {
    return no_device(e);
  } catch (const write_error& e) {
    std::cerr << fmt::format("memlab: {}\n", e.what());
    return exit_failed;
  } catch (const cuda_error& e) {
    std::cerr << fmt::format("memlab: a CUDA error stopped the run (the results measured before it are written): {}\n",
                             e.what());
    return exit_failed;
  } catch (const world_error& e) {
    std::cerr << fmt::format("memlab: {}{}\n", e.what(),
                             env.rank == 0 ? " (the results measured before it are written)" : "");
    return exit_failed;
  } catch (const std::exception& e) {
    std::cerr << fmt::format("memlab: {}an error stopped the run (the results measured before it are written): {}\n",
                             env.distributed() ? fmt::format("rank {}: ", env.rank) : "", e.what());
    return exit_failed;
  }
  for (const auto& [path, f] : files) std::cerr << fmt::format("wrote {}\n", path);
  std::size_t failed = 0, skipped = 0, ok = 0;
  for (const auto& res : report.results) {
    failed += res.status == result_status::failed;
    skipped += res.status == result_status::skipped;
    ok += res.status == result_status::ok;
  }
  if (report.ended != "complete") {
    std::cerr << fmt::format("memlab: run {}; what was measured is written\n", report.ended);
    return exit_interrupted;
  }
  if (skipped > 0) std::cerr << fmt::format("{} case(s) skipped: see the status column\n", skipped);
  if (failed > 0) {
    std::cerr << fmt::format("memlab: {} case(s) FAILED verification\n", failed);
    return exit_failed;
  }
  if (ok == 0) {
    std::cerr << fmt::format("memlab: nothing was measured: every case was skipped (exit {})\n", exit_nothing_run);
    return exit_nothing_run;
  }
  return exit_ok;
}

int inspect_command(const lab_set& labs, const inspect_options& o) {
  if (!o.lab.empty() && find(labs, o.lab) == nullptr) return usage_error("inspect", unknown_lab(labs, o.lab));
  const std::string binary = o.binary.empty() ? inspect::self_executable() : o.binary;
  if (const std::string why = inspect::check_binary(binary); !why.empty()) {
    return usage_error("inspect", fmt::format("{}{}", o.binary.empty() ? "" : "--binary: ", why));
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
    std::cerr << fmt::format("memlab inspect: {}\n", e.what());
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
    std::cerr << fmt::format("memlab: {}\n", e.what());
    return exit_failed;
  }
  if (o.format == "json") {
    run_report r;
    r.device = d;
    std::cout << to_json(r)["device"].dump(2) << "\n";
    return exit_ok;
  }
  std::cout << fmt::format(
      "device {}: {}\n"
      "  compute capability  {}.{}\n"
      "  SMs                 {}, default SM clock {:.0f} MHz\n"
      "  L2                  {}\n"
      "  memory              {:.1f} GiB, {}-bit bus, {:.0f} MHz clock\n"
      "  theoretical peak    {:.1f} GB/s (2 x clock x bus width / 8)\n",
      d.ordinal, d.name, d.cc_major, d.cc_minor, d.sm_count, d.sm_default_clock_khz / 1e3, format_bytes(d.l2_bytes),
      static_cast<double>(d.global_mem_bytes) / (1ull << 30), d.bus_width_bits, d.mem_clock_khz / 1e3, d.peak_gbps);
  if (o.ceiling) {
    std::cout << fmt::format(
        "  measured ceiling    {:.1f} GB/s ({:.1f}% of peak; cudaMemcpy D2D, L2 flushed, bytes read + written)\n",
        d.measured_peak_gbps, 100 * d.measured_peak_gbps / d.peak_gbps);
  }
  return exit_ok;
}

}  // namespace memlab::cli
