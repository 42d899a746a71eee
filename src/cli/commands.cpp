#include "cli/commands.hpp"

#include <unistd.h>

#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "harness/device.hpp"
#include "harness/writers.hpp"
#include "inspect/inspect.hpp"
#include "memlab/error.cuh"

namespace memlab::cli {

const char* const no_gpu_hint =
    "Without a GPU these still work: `memlab list` (labs and variants), `memlab inspect` (the SASS each\n"
    "variant compiled to), and `make test` (host and SASS tests; GPU tests report SKIPPED).";

namespace {

int usage_error(const std::string& what) {
  std::cerr << "memlab: " << what << "\nRun with --help for more information.\n";
  return exit_usage;
}

int no_device(const no_device_error& e) {
  std::cerr << "memlab: " << e.what() << "\n" << no_gpu_hint << "\n";
  return exit_no_device;
}

// Whether `path` can be written, without creating it: the file if it exists, else its folder.
bool writable(const std::string& path) {
  if (access(path.c_str(), F_OK) == 0) return access(path.c_str(), W_OK) == 0;
  const auto slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  return access(dir.c_str(), W_OK) == 0;
}

std::string join_dtypes() {
  std::string out;
  for (dtype t : all_dtypes()) out += (out.empty() ? "" : ", ") + std::string(to_string(t));
  return out;
}

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

// "128x256,64x64" -> {{128, 256}, {64, 64}}.
std::vector<std::pair<std::uint64_t, std::uint64_t>> parse_tiles(const std::string& text) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    const std::size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    const auto x = item.find('x');
    if (x == std::string::npos) throw std::invalid_argument("--tile: \"" + item + "\" is not ROWSxCOLS, as in 128x256");
    const auto rows = parse_counts(item.substr(0, x), "--tile rows");
    const auto cols = parse_counts(item.substr(x + 1), "--tile cols");
    if (rows.size() != 1 || cols.size() != 1 || rows[0] == 0 || cols[0] == 0) {
      throw std::invalid_argument("--tile: \"" + item + "\" is not ROWSxCOLS with both above 0, as in 128x256");
    }
    out.emplace_back(rows[0], cols[0]);
    pos = comma + 1;
  }
  return out;
}

// The axis flags, parsed into the request. Throws std::invalid_argument on a malformed list.
void parse_axes(const run_options& o, axis_values& a) {
  if (!o.src_offset.empty()) a.src_offset = parse_counts(o.src_offset, "--src-offset");
  if (!o.dst_offset.empty()) a.dst_offset = parse_counts(o.dst_offset, "--dst-offset");
  if (!o.stride.empty()) a.stride = parse_counts(o.stride, "--stride");
  if (!o.ctas.empty()) a.ctas = parse_counts(o.ctas, "--ctas");
  if (!o.tile.empty()) a.tile = parse_tiles(o.tile);
  if (!o.table_bytes.empty()) a.table_bytes = parse_byte_counts(o.table_bytes, "--table-bytes");
  for (auto s : a.stride)
    if (s == 0) throw std::invalid_argument("--stride: a stride of 0 elements is not a strided access (use 1..)");
  for (auto b : a.table_bytes)
    if (b == 0) throw std::invalid_argument("--table-bytes: a table of 0 bytes has nothing to gather from");
}

std::string axes_text(const lab& l) {
  std::string out;
  for (axis a : l.axes()) out += (out.empty() ? "" : ", ") + ("--" + std::string(to_string(a)));
  return out;
}

}  // namespace

int list_command(const list_options& o) {
  std::vector<const lab*> chosen;
  for (const auto& name : o.labs) {
    const lab* l = find_lab(name);
    if (l == nullptr) {
      for (std::string_view why : missing_labs())
        if (why.starts_with(name + ":")) return usage_error("lab " + std::string(why));
      return usage_error("unknown lab '" + name + "' (see `memlab list`)");
    }
    chosen.push_back(l);
  }
  if (chosen.empty()) chosen.assign(all_labs().begin(), all_labs().end());

  if (o.format == "json") {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const lab* l : chosen) {
      nlohmann::ordered_json lj;
      lj["lab"] = l->name();
      lj["teaches"] = l->teaches();
      for (dtype t : l->dtypes()) lj["dtypes"].push_back(to_string(t));
      lj["default_dtype"] = to_string(l->default_dtype());
      lj["default_sizes"] = l->default_sizes();
      lj["sizes_count"] = l->size_meaning();
      lj["axes"] = nlohmann::ordered_json::array();
      for (axis a : l->axes()) lj["axes"].push_back(to_string(a));
      for (const auto& v : l->variants())
        lj["variants"].push_back({{"name", v.name}, {"teaches", v.teaches}, {"peer", v.peer}});
      j.push_back(lj);
    }
    std::cout << j.dump(2) << "\n";
    return exit_ok;  // missing labs: only in the table, so the JSON stays a list of labs
  }
  for (const lab* l : chosen) {
    std::cout << l->name() << ": " << l->teaches() << "\n  dtypes:";
    for (dtype t : l->dtypes()) std::cout << " " << to_string(t);
    std::cout << " (default " << to_string(l->default_dtype()) << "); --sizes counts " << l->size_meaning()
              << ", default " << l->default_sizes() << "\n";
    if (!l->axes().empty()) std::cout << "  axes: " << axes_text(*l) << "\n";
    std::size_t width = 0;
    for (const auto& v : l->variants()) width = std::max(width, v.name.size());
    for (const auto& v : l->variants()) {
      std::cout << "  " << std::left << std::setw(static_cast<int>(width) + 2) << v.name << (v.peer ? "[peer] " : "")
                << v.teaches << "\n";
    }
  }
  if (o.labs.empty()) {
    for (std::string_view why : missing_labs()) std::cout << why << "\n";
  }
  return exit_ok;
}

int run_command(run_options o) {
  // Everything the user typed is checked before the GPU is touched: usage errors exit 2 anywhere.
  for (const auto& name : o.dtype_names) {
    const auto t = parse_dtype(name);
    if (!t) return usage_error("unknown dtype '" + name + "' (dtypes: " + join_dtypes() + ")");
    o.request.dtypes.push_back(*t);
  }
  const auto stdout_format = parse_format(o.format);
  if (!stdout_format) return usage_error("unknown --format '" + o.format + "' (table, csv, json, md)");
  std::vector<std::pair<std::string, output_format>> files;
  for (const auto& path : o.outs) {
    const auto f = format_from_path(path);
    if (!f) return usage_error("--out " + path + ": cannot tell the format from the extension (.json, .csv, .md, .txt)");
    // Find out now, not after an hour of sweeping, that the file cannot be written.
    if (!writable(path)) return usage_error("--out " + path + ": cannot open for writing");
    files.emplace_back(path, *f);
  }
  std::vector<planned_case> cases;
  try {
    parse_axes(o, o.request.axes);
    cases = plan_cases(o.request);
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  }
  if (cases.empty()) return usage_error("nothing to run: no lab has the variants asked for");

  run_report report;
  try {
    report = run_cases(o.request, cases, std::cerr);
  } catch (const no_device_error& e) {
    return no_device(e);
  } catch (const cuda_error& e) {
    std::cerr << "memlab: a CUDA error stopped the run: " << e.what() << "\n";
    return exit_failed;
  }

  write_report(std::cout, report, *stdout_format);
  for (const auto& [path, f] : files) {
    std::ofstream out(path);
    if (out) write_report(out, report, f);
    if (!out) {
      std::cerr << "memlab: could not write " << path << "\n";
      return exit_failed;
    }
    std::cerr << "wrote " << path << "\n";
  }
  std::size_t failed = 0, skipped = 0;
  for (const auto& r : report.results) {
    failed += r.status == result_status::failed;
    skipped += r.status == result_status::skipped;
  }
  if (skipped > 0) std::cerr << skipped << " case(s) skipped: see the status column\n";
  if (failed > 0) {
    std::cerr << "memlab: " << failed << " case(s) FAILED verification\n";
    return exit_failed;
  }
  return exit_ok;
}

int inspect_command(const inspect_options& o) {
  if (!o.lab.empty() && find_lab(o.lab) == nullptr) return usage_error("unknown lab '" + o.lab + "' (see `memlab list`)");
  if (o.format != "table" && o.format != "json") return usage_error("unknown --format '" + o.format + "' (table, json)");
  const std::string binary = o.binary.empty() ? inspect::self_executable() : o.binary;
  if (!std::ifstream(binary)) return usage_error("cannot read binary '" + binary + "'");
  const auto labels = kernel_labels();
  try {
    const auto report = inspect::inspect_binary(binary, labels, o.lab, o.arch, o.all_kernels);
    if (o.format == "json") {
      inspect::write_inspect_json(std::cout, report);
    } else {
      inspect::write_inspect_table(std::cout, report);
    }
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  } catch (const std::runtime_error& e) {
    std::cerr << "memlab inspect: " << e.what() << "\n";
    return exit_failed;
  }
  return exit_ok;
}

int device_command(const device_options& o) {
  if (o.format != "table" && o.format != "json") return usage_error("unknown --format '" + o.format + "' (table, json)");
  device_info d;
  try {
    d = open_device(o.device);
    if (o.ceiling) {
      cuda_stream stream;
      l2_flusher flusher(d.l2_bytes);
      d.measured_peak_gbps = measure_copy_ceiling_gbps(d, stream.get(), flusher, 0.5);
    }
  } catch (const no_device_error& e) {
    return no_device(e);
  } catch (const cuda_error& e) {
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
            << "  SMs                 " << d.sm_count << "\n"
            << "  L2                  " << fixed(static_cast<double>(d.l2_bytes) / (1 << 20), 1) << " MiB\n"
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
