#include "harness/runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <ostream>
#include <stdexcept>

#include "harness/buffer.hpp"
#include "harness/device.hpp"
#include "harness/timing.hpp"
#include "memlab/error.cuh"
#include "memlab_git_sha.hpp"

namespace memlab {
namespace {

std::string join_names(auto&& range) {
  std::string out;
  for (const auto& x : range) {
    if (!out.empty()) out += ", ";
    out += std::string(x);
  }
  return out;
}

std::string utc_now_iso8601() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string format_gbps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Keeps the first of each repeated name: `run copy copy` or `--dtype f16,f16` runs each case once.
template <class T>
std::vector<T> unique_in_order(const std::vector<T>& in) {
  std::vector<T> out;
  for (const auto& x : in)
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

// The parameters beyond dtype and n, for progress lines: " src_offset=2 stride=4".
std::string axis_text(const std::vector<param>& params) {
  std::string out;
  for (const auto& p : params) {
    if (p.name == "dtype" || p.name == "n") continue;
    out += " " + p.name + "=" + to_string(p.value);
  }
  return out;
}

// Every combination of the axes lab `l` reads: the user's values where given, else the lab's.
std::vector<case_params> axis_points(const lab& l, const axis_values& user) {
  const axis_values def = l.default_axes();
  auto reads = [&](axis a) { return std::find(l.axes().begin(), l.axes().end(), a) != l.axes().end(); };
  auto pick = [&](axis a, const std::vector<std::uint64_t>& u, const std::vector<std::uint64_t>& d,
                  std::uint64_t fallback) {
    if (!reads(a)) return std::vector<std::uint64_t>{fallback};
    if (!u.empty()) return u;
    return d.empty() ? std::vector<std::uint64_t>{fallback} : d;
  };
  const case_params base;
  const auto src = pick(axis::src_offset, user.src_offset, def.src_offset, base.src_offset);
  const auto dst = pick(axis::dst_offset, user.dst_offset, def.dst_offset, base.dst_offset);
  const auto stride = pick(axis::stride, user.stride, def.stride, base.stride);
  const auto ctas = pick(axis::ctas, user.ctas, def.ctas, base.ctas);
  const auto table = pick(axis::table_bytes, user.table_bytes, def.table_bytes, base.table_bytes);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> tiles{{base.rows, base.cols}};
  if (reads(axis::tile)) {
    if (!user.tile.empty()) {
      tiles = user.tile;
    } else if (!def.tile.empty()) {
      tiles = def.tile;
    }
  }
  std::vector<case_params> out;
  for (const auto& [rows, cols] : tiles)
    for (auto tb : table)
      for (auto c : ctas)
        for (auto st : stride)
          for (auto so : src)
            for (auto d : dst) {
              case_params p;
              p.src_offset = so;
              p.dst_offset = d;
              p.stride = st;
              p.ctas = c;
              p.rows = rows;
              p.cols = cols;
              p.table_bytes = tb;
              out.push_back(p);
            }
  return out;
}

}  // namespace

std::vector<planned_case> plan_cases(const run_request& request) {
  run_request req = request;
  req.labs = unique_in_order(req.labs);
  req.variants = unique_in_order(req.variants);
  req.dtypes = unique_in_order(req.dtypes);
  std::vector<const lab*> chosen;
  if (req.labs.empty()) {
    chosen.assign(all_labs().begin(), all_labs().end());
  } else {
    for (const auto& name : req.labs) {
      const lab* l = find_lab(name);
      if (l == nullptr) {
        for (std::string_view why : missing_labs()) {
          if (why.starts_with(name + ":")) throw std::invalid_argument("lab " + std::string(why));
        }
        std::vector<std::string_view> names;
        for (const lab* x : all_labs()) names.push_back(x->name());
        throw std::invalid_argument("unknown lab '" + name + "' (labs: " + join_names(names) + ")");
      }
      chosen.push_back(l);
    }
  }
  // A variant named with --variant must exist in at least one chosen lab.
  for (const auto& v : req.variants) {
    const bool known = std::any_of(chosen.begin(), chosen.end(), [&](const lab* l) { return l->find_variant(v) != nullptr; });
    if (!known) {
      std::vector<std::string_view> names;
      for (const lab* l : chosen)
        for (const auto& info : l->variants()) names.push_back(info.name);
      throw std::invalid_argument("unknown variant '" + v + "' (variants: " + join_names(names) + ")");
    }
  }
  // An axis given on the command line must be read by at least one chosen lab.
  for (axis a : {axis::src_offset, axis::dst_offset, axis::stride, axis::ctas, axis::tile, axis::table_bytes}) {
    if (!req.axes.given(a)) continue;
    const bool read = std::any_of(chosen.begin(), chosen.end(), [&](const lab* l) {
      return std::find(l->axes().begin(), l->axes().end(), a) != l->axes().end();
    });
    if (!read) {
      std::vector<std::string_view> names;
      for (const lab* l : chosen) names.push_back(l->name());
      throw std::invalid_argument("--" + std::string(to_string(a)) + " is not an axis of lab " + join_names(names) +
                                  " (see `memlab list` for each lab's axes)");
    }
  }
  const std::vector<size_spec> user_sizes = req.sizes.empty() ? std::vector<size_spec>{} : parse_sizes(req.sizes);

  std::vector<planned_case> out;
  for (const lab* l : chosen) {
    std::vector<dtype> types = req.dtypes.empty() ? std::vector<dtype>{l->default_dtype()} : req.dtypes;
    for (dtype t : types) {
      if (std::find(l->dtypes().begin(), l->dtypes().end(), t) == l->dtypes().end()) {
        std::vector<std::string_view> names;
        for (dtype x : l->dtypes()) names.push_back(to_string(x));
        throw std::invalid_argument("lab " + std::string(l->name()) + " does not support dtype " +
                                    std::string(to_string(t)) + " (it supports " + join_names(names) + ")");
      }
    }
    const std::vector<size_spec> sizes = user_sizes.empty() ? parse_sizes(l->default_sizes()) : user_sizes;
    const std::vector<case_params> points = axis_points(*l, req.axes);
    for (dtype t : types) {
      for (const auto& s : sizes) {
        const std::uint64_t n = elements_of(s, size_of(t));
        // Byte counts (reads + writes, offsets, guards) must stay far from 64-bit overflow.
        if (n > (std::uint64_t{1} << 62) / size_of(t)) {
          throw std::invalid_argument("size " + s.text + " is too large: " + std::string(to_string(t)) +
                                      " elements beyond 2^62 bytes");
        }
        for (case_params p : points) {
          p.type = t;
          p.n = n;
          for (const auto& v : l->variants()) {
            if (!req.variants.empty() &&
                std::find(req.variants.begin(), req.variants.end(), v.name) == req.variants.end())
              continue;
            out.push_back({l, &v, p, s.text});
          }
        }
      }
    }
  }
  return out;
}

run_report run_cases(const run_request& req, const std::vector<planned_case>& cases, std::ostream& progress) {
  run_report report;
  report.memlab_version = MEMLAB_VERSION;
  report.git_sha = MEMLAB_GIT_SHA;
  report.created = utc_now_iso8601();
  report.command = req.command;
  report.device = open_device(req.device);
  device_info& dev = report.device;
  cuda_stream stream;
  l2_flusher flusher(dev.l2_bytes);
  if (req.measure_ceiling) dev.measured_peak_gbps = measure_copy_ceiling_gbps(dev, stream.get(), flusher, 0.5);
  if (req.progress) {
    progress << "device " << dev.ordinal << ": " << dev.name << ", sm_" << dev.cc_major << dev.cc_minor << ", "
             << dev.sm_count << " SMs, theoretical " << format_gbps(dev.peak_gbps) << " GB/s";
    if (dev.measured_peak_gbps > 0) progress << ", cudaMemcpy ceiling " << format_gbps(dev.measured_peak_gbps) << " GB/s";
    progress << " (bytes = read + written)\n";
  }

  measure_options opt;
  opt.max_time_s = req.max_time_s / 2;  // half for cold, half for batch

  std::size_t index = 0;
  for (const auto& c : cases) {
    ++index;
    result r;
    r.lab = std::string(c.l->name());
    r.variant = std::string(c.v->name);
    r.params = c.l->params(c.p);
    const std::string label = "[" + std::to_string(index) + "/" + std::to_string(cases.size()) + "] " + r.lab + " " +
                              r.variant + " " + std::string(to_string(c.p.type)) + " " + c.size_text +
                              axis_text(r.params);
    auto skip = [&](std::string why) {
      r.status = result_status::skipped;
      r.note = std::move(why);
      if (req.progress) progress << label << " ... skipped: " << r.note << "\n";
      report.results.push_back(r);
    };

    if (auto why = c.l->unsupported(c.v->name, c.p, dev)) {
      skip(*why);
      continue;
    }
    std::size_t free_bytes = 0, total_bytes = 0;
    MEMLAB_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    const std::uint64_t need = c.l->device_bytes(c.p);
    if (need > free_bytes) {
      skip("needs " + format_bytes(need) + " of device memory, " + format_bytes(free_bytes) + " free");
      continue;
    }
    std::unique_ptr<prepared_case> pc;
    try {
      pc = c.l->prepare(c.v->name, c.p, dev);
    } catch (const cuda_error& e) {
      if (e.code() != cudaErrorMemoryAllocation) throw;
      (void)cudaGetLastError();
      skip("allocation failed: " + format_bytes(need) + " of device memory");
      continue;
    }
    r.policy = pc->policy();
    r.bytes = pc->bytes();
    r.hardware_bytes = pc->hardware_bytes();

    // Correct first: one run on fresh random input into a poisoned output, compared with the CPU.
    pc->reset();
    pc->launch(stream.get());
    stream.synchronize();
    if (req.verify) {
      const std::string diff = pc->verify();
      if (!diff.empty()) {
        r.status = result_status::failed;
        r.note = "verification failed: " + diff;
        if (req.progress) progress << label << " ... FAILED: " << r.note << "\n";
        report.results.push_back(r);
        continue;
      }
      r.verified = true;
    }

    const launch_fn launch = [&](cudaStream_t s) { pc->launch(s); };
    r.cold = measure_cold(launch, stream.get(), flusher, opt);
    r.batch = measure_batch(launch, stream.get(), opt, r.cold.median_ms);
    derive(r, dev, pc->working_set_bytes());
    if (req.progress) {
      progress << label << " ... " << format_gbps(r.gbps) << " GB/s (" << format_gbps(r.pct_peak) << "% of peak)"
               << (r.verified ? "" : ", not verified") << "\n";
    }
    report.results.push_back(std::move(r));
  }
  return report;
}

}  // namespace memlab
