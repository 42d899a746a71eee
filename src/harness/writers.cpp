#include "harness/writers.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <ostream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "harness/sizes.hpp"

namespace memlab {
namespace {

using ordered_json = nlohmann::ordered_json;

// ---- text helpers ----------------------------------------------------------------------------------

std::string strf(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string strf(const char* fmt, ...) {
  char buf[256];
  va_list args;
  va_start(args, fmt);
  const int n = std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return n < 0 ? std::string() : std::string(buf, std::min(static_cast<std::size_t>(n), sizeof buf - 1));
}

// Shortest text that reads back as the same double: CSV is for machines, so no rounding.
std::string exact(double v) {
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

// Terminal columns a UTF-8 string takes (one per code point; "µs" is two, not three bytes wide).
std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

// At most `max` code points, "..." marking a cut; newlines flattened so a row stays one line.
std::string shorten(std::string_view s, std::size_t max) {
  std::string flat(s);
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  std::replace(flat.begin(), flat.end(), '\r', ' ');
  if (display_width(flat) <= max) return flat;
  std::size_t points = 0, i = 0;
  for (; i < flat.size(); ++i) {
    if ((static_cast<unsigned char>(flat[i]) & 0xC0) != 0x80 && points++ == max - 3) break;
  }
  return flat.substr(0, i) + "...";
}

// A duration for people: microseconds below 1 ms, seconds from 1000 ms.
std::string human_ms(double ms) {
  if (ms < 1.0) return strf("%.2f µs", ms * 1e3);
  if (ms < 1000.0) return strf("%.3f ms", ms);
  return strf("%.3f s", ms * 1e-3);
}

std::string cc_string(const device_info& d) { return std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor); }

std::string device_text(const device_info& d) {
  return d.name + " (device " + std::to_string(d.ordinal) + ", cc " + cc_string(d) + ", " +
         std::to_string(d.sm_count) + " SMs, L2 " + format_bytes(d.l2_bytes) + ")";
}

std::string ceiling_text(const device_info& d) {
  return d.measured_peak_gbps > 0 ? strf("%.1f GB/s (cudaMemcpy D2D)", d.measured_peak_gbps) : "not measured";
}

std::string status_text(const result& r) {
  const char* tag = r.status == result_status::skipped ? "SKIP" : r.status == result_status::failed ? "FAIL" : "ok";
  if (r.status == result_status::ok || r.note.empty()) return tag;
  return std::string(tag) + ": " + shorten(r.note, 40);
}

// Param names in the order they are first seen across results: the columns the rows share.
std::vector<std::string> param_names(const run_report& rep) {
  std::vector<std::string> names;
  for (const auto& r : rep.results) {
    for (const auto& p : r.params) {
      if (std::find(names.begin(), names.end(), p.name) == names.end()) names.push_back(p.name);
    }
  }
  return names;
}

// ---- the human columns: shared by the terminal table and Markdown ---------------------------------

struct text_table {
  std::vector<std::string> headers;
  std::vector<bool> right;  // right-aligned (numbers)
  std::vector<std::vector<std::string>> rows;
};

text_table human_table(const run_report& rep) {
  text_table t;
  const auto col = [&t](std::string name, bool right) {
    t.headers.push_back(std::move(name));
    t.right.push_back(right);
  };
  const auto names = param_names(rep);
  col("lab", false);
  col("variant", false);
  for (const auto& n : names) {
    // Numbers right, words left: a column is numeric when every value it holds is an integer.
    bool numeric = true;
    for (const auto& r : rep.results) {
      const param_value* v = r.find(n);
      if (v != nullptr && !std::holds_alternative<std::int64_t>(*v)) numeric = false;
    }
    col(n, numeric);
  }
  col("bytes", true);
  col("policy", false);
  for (const char* c : {"cold median", "cold min", "batch median", "GB/s", "%peak", "%ceiling"}) col(c, true);
  // Only labs whose access pattern wastes bandwidth declare hardware bytes: show them when any does.
  const bool hardware = std::any_of(rep.results.begin(), rep.results.end(),
                                    [](const result& r) { return r.hardware_bytes > 0; });
  if (hardware) col("HW GB/s", true);
  col("L2", false);
  col("status", false);

  for (const auto& r : rep.results) {
    std::vector<std::string> row{r.lab, r.variant};
    for (const auto& n : names) {
      const param_value* v = r.find(n);
      if (v == nullptr) {
        row.emplace_back();
      } else if (const auto* i = std::get_if<std::int64_t>(v); i != nullptr && n == "n" && *i >= 0) {
        row.push_back(format_count(static_cast<std::uint64_t>(*i)));
      } else {
        row.push_back(to_string(*v));
      }
    }
    // A case that never ran (skipped, or failed before timing) has no timings: print "-", not 0.
    const bool cold = r.cold.samples > 0, batch = r.batch.samples > 0;
    row.push_back(format_bytes(r.bytes));
    row.push_back(to_string(r.policy));
    row.push_back(cold ? human_ms(r.cold.median_ms) : "-");
    row.push_back(cold ? human_ms(r.cold.min_ms) : "-");
    row.push_back(batch ? human_ms(r.batch.median_ms) : "-");
    row.push_back(cold ? strf("%.1f", r.gbps) : "-");
    row.push_back(cold && rep.device.peak_gbps > 0 ? strf("%.1f", r.pct_peak) : "-");
    row.push_back(cold && rep.device.measured_peak_gbps > 0 ? strf("%.1f", r.pct_measured) : "-");
    if (hardware) row.push_back(cold && r.hardware_bytes > 0 ? strf("%.1f", r.hardware_gbps) : "-");
    row.push_back(r.l2_resident ? "yes" : "");
    row.push_back(status_text(r));
    t.rows.push_back(std::move(row));
  }
  return t;
}

void write_table(std::ostream& os, const run_report& rep) {
  const auto& d = rep.device;
  os << "device " << device_text(d) << " | theoretical peak " << strf("%.1f GB/s", d.peak_gbps)
     << " | measured ceiling " << ceiling_text(d) << " | bytes = reads + writes\n";
  if (rep.results.empty()) {
    os << "(no results)\n";
    return;
  }
  const text_table t = human_table(rep);
  std::vector<std::size_t> width(t.headers.size());
  for (std::size_t c = 0; c < width.size(); ++c) {
    width[c] = display_width(t.headers[c]);
    for (const auto& row : t.rows) width[c] = std::max(width[c], display_width(row[c]));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t c = 0; c < cells.size(); ++c) {
      const std::string pad(width[c] - display_width(cells[c]), ' ');
      if (c > 0) out += "  ";
      out += t.right[c] ? pad + cells[c] : cells[c] + pad;
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();  // the last column is left-aligned
    os << out << '\n';
  };
  line(t.headers);
  std::vector<std::string> rule;
  for (std::size_t w : width) rule.emplace_back(w, '-');
  line(rule);
  for (const auto& row : t.rows) line(row);
}

std::string md_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

void write_markdown(std::ostream& os, const run_report& rep) {
  const auto& d = rep.device;
  // A command holding a backtick needs a longer fence to stay one code span.
  const std::string fence = rep.command.find('`') == std::string::npos ? "`" : "``";
  os << "## memlab results\n\n"
     << "- device: " << md_cell(device_text(d)) << "\n"
     << "- theoretical peak: " << strf("%.1f GB/s", d.peak_gbps) << " (2 x memory clock x bus width / 8)\n"
     << "- measured ceiling: " << ceiling_text(d) << "\n"
     << "- command: " << fence << (fence.size() > 1 ? " " : "") << rep.command << (fence.size() > 1 ? " " : "")
     << fence << "\n"
     << "- memlab " << rep.memlab_version << ", git " << rep.git_sha << ", created " << rep.created << "\n"
     << "- bytes = reads + writes; GB/s and % from the cold (L2 flushed) median\n\n";
  const text_table t = human_table(rep);
  const auto line = [&os](const std::vector<std::string>& cells) {
    os << '|';
    for (const auto& c : cells) os << ' ' << md_cell(c) << " |";
    os << '\n';
  };
  line(t.headers);
  os << '|';
  for (bool r : t.right) os << (r ? " ---: |" : " --- |");
  os << '\n';
  for (const auto& row : t.rows) line(row);
}

// ---- CSV (RFC 4180) --------------------------------------------------------------------------------

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

void write_csv(std::ostream& os, const run_report& rep) {
  const auto names = param_names(rep);
  const auto row = [&os](const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) os << (i ? "," : "") << csv_field(fields[i]);
    os << '\n';
  };
  std::vector<std::string> header{"lab", "variant"};
  header.insert(header.end(), names.begin(), names.end());
  for (const char* h : {"bytes", "flops", "policy", "cold_median_ms", "cold_min_ms", "cold_p25_ms", "cold_p75_ms",
                        "cold_samples", "cold_rel_spread", "batch_median_ms", "batch_min_ms", "batch_samples",
                        "batch_rel_spread", "gbps", "batch_gbps", "pct_peak", "pct_measured", "l2_resident",
                        "verified", "status", "note", "hardware_bytes", "hardware_gbps"}) {
    header.emplace_back(h);
  }
  row(header);
  for (const auto& r : rep.results) {
    std::vector<std::string> f{r.lab, r.variant};
    for (const auto& n : names) {
      const param_value* v = r.find(n);
      f.push_back(v ? to_string(*v) : "");
    }
    const auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
    for (std::string s :
         {std::to_string(r.bytes), std::to_string(r.flops), to_string(r.policy), exact(r.cold.median_ms),
          exact(r.cold.min_ms), exact(r.cold.p25_ms), exact(r.cold.p75_ms), std::to_string(r.cold.samples),
          exact(r.cold.rel_spread), exact(r.batch.median_ms), exact(r.batch.min_ms), std::to_string(r.batch.samples),
          exact(r.batch.rel_spread), exact(r.gbps), exact(r.batch_gbps), exact(r.pct_peak), exact(r.pct_measured),
          flag(r.l2_resident), flag(r.verified), std::string(to_string(r.status)), r.note,
          std::to_string(r.hardware_bytes), exact(r.hardware_gbps)}) {
      f.push_back(std::move(s));
    }
    row(f);
  }
}

// ---- JSON: memlab.results/1 ------------------------------------------------------------------------
// The DESIGN.md keys come first in each object; the extensions (device ordinal, global_mem_bytes,
// measured_peak_gbps; top-level command; per result mean_ms, batch_gbps, pct_measured, status, note,
// hardware_bytes, hardware_gbps)
// follow. Readers treat the extensions as optional so files without them still load.

template <class J>
J summary_json(const summary& s) {
  J j;
  j["median_ms"] = s.median_ms;
  j["min_ms"] = s.min_ms;
  j["max_ms"] = s.max_ms;
  j["p25_ms"] = s.p25_ms;
  j["p75_ms"] = s.p75_ms;
  j["samples"] = static_cast<std::uint64_t>(s.samples);
  j["rel_spread"] = s.rel_spread;
  j["mean_ms"] = s.mean_ms;
  return j;
}

template <class J>
J build_json(const run_report& rep) {
  J j;
  j["schema"] = std::string(results_schema);
  j["memlab_version"] = rep.memlab_version;
  j["git_sha"] = rep.git_sha;
  j["created"] = rep.created;
  j["command"] = rep.command;
  const auto& d = rep.device;
  J dev;
  dev["name"] = d.name;
  dev["cc"] = cc_string(d);
  dev["sm_count"] = d.sm_count;
  dev["l2_bytes"] = d.l2_bytes;
  dev["mem_clock_khz"] = d.mem_clock_khz;
  dev["bus_width_bits"] = d.bus_width_bits;
  dev["peak_gbps"] = d.peak_gbps;
  dev["ordinal"] = d.ordinal;
  dev["global_mem_bytes"] = d.global_mem_bytes;
  dev["measured_peak_gbps"] = d.measured_peak_gbps;
  j["device"] = std::move(dev);
  J results = J::array();
  for (const auto& r : rep.results) {
    J o;
    o["lab"] = r.lab;
    o["variant"] = r.variant;
    J params = J::object();
    for (const auto& p : r.params) {
      if (const auto* i = std::get_if<std::int64_t>(&p.value)) {
        params[p.name] = *i;
      } else {
        params[p.name] = std::get<std::string>(p.value);
      }
    }
    o["params"] = std::move(params);
    J pol;
    pol["threads"] = r.policy.threads;
    pol["items_per_thread"] = r.policy.items_per_thread;
    pol["vec_bytes"] = r.policy.vec_bytes;
    pol["stages"] = r.policy.stages;
    pol["grid"] = r.policy.grid;
    o["policy"] = std::move(pol);
    o["bytes"] = r.bytes;
    o["flops"] = r.flops;
    o["cold"] = summary_json<J>(r.cold);
    o["batch"] = summary_json<J>(r.batch);
    o["gbps"] = r.gbps;
    o["pct_peak"] = r.pct_peak;
    o["l2_resident"] = r.l2_resident;
    o["verified"] = r.verified;
    o["batch_gbps"] = r.batch_gbps;
    o["pct_measured"] = r.pct_measured;
    o["status"] = std::string(to_string(r.status));
    o["note"] = r.note;
    o["hardware_bytes"] = r.hardware_bytes;
    o["hardware_gbps"] = r.hardware_gbps;
    results.push_back(std::move(o));
  }
  j["results"] = std::move(results);
  return j;
}

[[noreturn]] void bad(const std::string& path, std::string_view what) {
  throw std::invalid_argument("invalid " + std::string(results_schema) + " JSON: " + (path.empty() ? "(root)" : path) +
                              ": " + std::string(what));
}

// A JSON value and where it sits ("results[3].cold.median_ms"), to name it in errors.
template <class J>
class reader {
 public:
  reader(const J& j, std::string path) : j_(j), path_(std::move(path)) {}

  const J& json() const { return j_; }
  const std::string& path() const { return path_; }

  [[nodiscard]] bool has(const char* key) const { return object().json().contains(key); }
  reader at(const char* key) const {
    const J& obj = object().json();
    const auto it = obj.find(key);
    if (it == obj.end()) bad(join(key), "missing");
    return reader(*it, join(key));
  }
  reader object() const {
    if (!j_.is_object()) bad(path_, "expected an object");
    return *this;
  }
  reader array() const {
    if (!j_.is_array()) bad(path_, "expected an array");
    return *this;
  }
  double number() const {
    if (!j_.is_number()) bad(path_, "expected a number");
    return j_.template get<double>();
  }
  std::uint64_t u64() const {
    if (j_.is_number_unsigned()) return j_.template get<std::uint64_t>();
    if (!j_.is_number_integer() || j_.template get<std::int64_t>() < 0) bad(path_, "expected a non-negative integer");
    return static_cast<std::uint64_t>(j_.template get<std::int64_t>());
  }
  std::int64_t i64() const {
    if (!j_.is_number_integer()) bad(path_, "expected an integer");
    if (j_.is_number_unsigned() &&
        j_.template get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      bad(path_, "integer out of range");
    }
    return j_.template get<std::int64_t>();
  }
  int i32() const {
    const std::int64_t v = i64();
    if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) bad(path_, "integer out of range");
    return static_cast<int>(v);
  }
  bool boolean() const {
    if (!j_.is_boolean()) bad(path_, "expected true or false");
    return j_.template get<bool>();
  }
  std::string string() const {
    if (!j_.is_string()) bad(path_, "expected a string");
    return j_.template get<std::string>();
  }

 private:
  std::string join(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }
  const J& j_;
  std::string path_;
};

template <class J>
summary read_summary(const reader<J>& s) {
  summary out;
  out.median_ms = s.at("median_ms").number();
  out.min_ms = s.at("min_ms").number();
  out.max_ms = s.at("max_ms").number();
  out.p25_ms = s.at("p25_ms").number();
  out.p75_ms = s.at("p75_ms").number();
  out.samples = static_cast<std::size_t>(s.at("samples").u64());
  out.rel_spread = s.at("rel_spread").number();
  if (s.has("mean_ms")) out.mean_ms = s.at("mean_ms").number();
  return out;
}

template <class J>
void read_cc(const reader<J>& cc, device_info& d) {
  const std::string s = cc.string();
  int major = 0, minor = 0;
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, major);
  bool ok = ec == std::errc() && p != s.data() && p < end && *p == '.';
  if (ok) {
    const char* q = p + 1;
    auto [p2, ec2] = std::from_chars(q, end, minor);
    ok = ec2 == std::errc() && p2 != q && p2 == end;
  }
  if (!ok) bad(cc.path(), "expected a compute capability such as \"9.0\"");
  d.cc_major = major;
  d.cc_minor = minor;
}

template <class J>
run_report read_report(const J& root_json) {
  const reader<J> root(root_json, "");
  root.object();
  run_report rep;
  const std::string schema = root.at("schema").string();
  if (schema != results_schema) {
    bad("schema", "expected \"" + std::string(results_schema) + "\", got \"" + schema + "\"");
  }
  rep.memlab_version = root.at("memlab_version").string();
  rep.git_sha = root.at("git_sha").string();
  rep.created = root.at("created").string();
  if (root.has("command")) rep.command = root.at("command").string();

  const reader<J> dj = root.at("device").object();
  device_info& d = rep.device;
  d.name = dj.at("name").string();
  read_cc(dj.at("cc"), d);
  d.sm_count = dj.at("sm_count").i32();
  d.l2_bytes = dj.at("l2_bytes").u64();
  d.mem_clock_khz = dj.at("mem_clock_khz").i32();
  d.bus_width_bits = dj.at("bus_width_bits").i32();
  d.peak_gbps = dj.at("peak_gbps").number();
  if (dj.has("ordinal")) d.ordinal = dj.at("ordinal").i32();
  if (dj.has("global_mem_bytes")) d.global_mem_bytes = dj.at("global_mem_bytes").u64();
  if (dj.has("measured_peak_gbps")) d.measured_peak_gbps = dj.at("measured_peak_gbps").number();

  const reader<J> rs = root.at("results").array();
  for (std::size_t i = 0; i < rs.json().size(); ++i) {
    const reader<J> rj(rs.json()[i], "results[" + std::to_string(i) + "]");
    rj.object();
    result r;
    r.lab = rj.at("lab").string();
    r.variant = rj.at("variant").string();
    const reader<J> ps = rj.at("params").object();
    for (auto it = ps.json().begin(); it != ps.json().end(); ++it) {
      const reader<J> pv(*it, ps.path() + "." + it.key());
      if (it->is_string()) {
        r.params.push_back({it.key(), pv.string()});
      } else if (it->is_number_integer()) {
        r.params.push_back({it.key(), pv.i64()});
      } else {
        bad(pv.path(), "expected an integer or a string");
      }
    }
    const reader<J> pol = rj.at("policy").object();
    r.policy.threads = pol.at("threads").i32();
    r.policy.items_per_thread = pol.at("items_per_thread").i32();
    r.policy.vec_bytes = pol.at("vec_bytes").i32();
    r.policy.stages = pol.at("stages").i32();
    r.policy.grid = pol.at("grid").u64();
    r.bytes = rj.at("bytes").u64();
    r.flops = rj.at("flops").u64();
    r.cold = read_summary(rj.at("cold").object());
    r.batch = read_summary(rj.at("batch").object());
    r.gbps = rj.at("gbps").number();
    r.pct_peak = rj.at("pct_peak").number();
    r.l2_resident = rj.at("l2_resident").boolean();
    r.verified = rj.at("verified").boolean();
    if (rj.has("batch_gbps")) r.batch_gbps = rj.at("batch_gbps").number();
    if (rj.has("pct_measured")) r.pct_measured = rj.at("pct_measured").number();
    if (rj.has("status")) {
      const reader<J> st = rj.at("status");
      const std::string s = st.string();
      if (s == "ok") {
        r.status = result_status::ok;
      } else if (s == "skipped") {
        r.status = result_status::skipped;
      } else if (s == "failed") {
        r.status = result_status::failed;
      } else {
        bad(st.path(), "expected \"ok\", \"skipped\" or \"failed\", got \"" + s + "\"");
      }
    }
    if (rj.has("note")) r.note = rj.at("note").string();
    if (rj.has("hardware_bytes")) r.hardware_bytes = rj.at("hardware_bytes").u64();
    if (rj.has("hardware_gbps")) r.hardware_gbps = rj.at("hardware_gbps").number();
    rep.results.push_back(std::move(r));
  }
  return rep;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::optional<output_format> parse_format(std::string_view name) {
  if (name == "table") return output_format::table;
  if (name == "csv") return output_format::csv;
  if (name == "json") return output_format::json;
  if (name == "md" || name == "markdown") return output_format::markdown;
  return std::nullopt;
}

std::optional<output_format> format_from_path(std::string_view path) {
  const auto slash = path.find_last_of('/');
  const std::string_view file = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const auto dot = file.find_last_of('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string ext = lower(file.substr(dot + 1));
  if (ext == "csv") return output_format::csv;
  if (ext == "json") return output_format::json;
  if (ext == "md") return output_format::markdown;
  if (ext == "txt") return output_format::table;
  return std::nullopt;
}

std::string_view to_string(output_format f) {
  switch (f) {
    case output_format::table: return "table";
    case output_format::csv: return "csv";
    case output_format::json: return "json";
    case output_format::markdown: return "markdown";
  }
  return "?";
}

void write_report(std::ostream& os, const run_report& report, output_format f) {
  switch (f) {
    case output_format::table: write_table(os, report); return;
    case output_format::csv: write_csv(os, report); return;
    case output_format::markdown: write_markdown(os, report); return;
    case output_format::json:
      // Ordered so the file reads in schema order; invalid UTF-8 in a name or note is replaced, not fatal.
      os << build_json<ordered_json>(report).dump(2, ' ', false, ordered_json::error_handler_t::replace) << '\n';
      return;
  }
}

nlohmann::json to_json(const run_report& report) { return build_json<nlohmann::json>(report); }

run_report report_from_json(const nlohmann::json& j) { return read_report(j); }

}  // namespace memlab
