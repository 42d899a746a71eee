#include "check/reference.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "check/suite.hpp"

#ifndef MEMLAB_REFERENCES_DIR
#define MEMLAB_REFERENCES_DIR "references"
#endif

namespace memlab::check {

using nlohmann::json;
using nlohmann::ordered_json;

// Memory sizes within 3% are one model: the driver's total moves a little between versions and
// settings; an 80 GB and a 94 GB part differ by far more.
constexpr double memory_tolerance = 0.03;

std::string model_mismatch(const model_keys& ref, const model_keys& gpu) {
  std::vector<std::string> why;
  if (ref.name != gpu.name) why.push_back("name");
  if (std::abs(ref.memory_gib - gpu.memory_gib) > memory_tolerance * ref.memory_gib) why.push_back("memory");
  if (ref.sm_count != gpu.sm_count) why.push_back("SM count");
  if (why.empty()) return "";
  return fmt::format("the reference is for {} ({:.1f} GiB, {} SMs), this GPU is {} ({:.1f} GiB, {} SMs): {} differ",
                     ref.name, ref.memory_gib, ref.sm_count, gpu.name, gpu.memory_gib, gpu.sm_count,
                     fmt::join(why, ", "));
}

std::string model_slug(std::string_view name) {
  std::string out;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '-') {
      out += '-';
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

const reference_figure* node_section::find(std::string_view metric) const {
  for (const auto& f : metrics)
    if (f.metric == metric) return &f;
  return nullptr;
}

const reference_figure* reference::find(std::string_view metric) const {
  for (const auto& f : per_gpu)
    if (f.metric == metric) return &f;
  return nullptr;
}

const node_section* reference::node_for(int n, std::string_view link) const {
  for (const auto& s : node)
    if (s.gpus == n && s.link == link) return &s;
  return nullptr;
}

reference_figure make_figure(std::string metric, std::string unit, bool higher_is_better, std::vector<double> values,
                             const floor_rule& rule) {
  reference_figure f;
  f.metric = std::move(metric);
  f.unit = std::move(unit);
  f.higher_is_better = higher_is_better;
  f.median = median_of(values);
  f.spread = relative_spread(values);
  if (!values.empty()) {
    f.min = *std::min_element(values.begin(), values.end());
    f.max = *std::max_element(values.begin(), values.end());
  }
  f.values = std::move(values);
  f.at = floors_of(f.median, f.spread, higher_is_better, rule);
  return f;
}

namespace {

// Rounded for the file: figures to 4 significant digits, spreads to 5 decimals.
double sig(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::abs(v)))));
  return std::round(v * scale) / scale;
}

ordered_json figure_json(const reference_figure& f) {
  ordered_json values = ordered_json::array();
  for (double v : f.values) values.push_back(sig(v, 5));
  return ordered_json{{"unit", f.unit},
                      {"higher_is_better", f.higher_is_better},
                      {"median", sig(f.median, 5)},
                      {"spread", std::round(f.spread * 1e5) / 1e5},
                      {"min", sig(f.min, 5)},
                      {"max", sig(f.max, 5)},
                      {"warn_at", sig(f.at.warn_at, 5)},
                      {"fail_at", sig(f.at.fail_at, 5)},
                      {"values", values}};
}

ordered_json figures_json(const std::vector<reference_figure>& figures) {
  ordered_json out = ordered_json::object();
  for (const auto& f : figures) out[f.metric] = figure_json(f);
  return out;
}

// Reading: each check names the file and where in it.
class reader {
 public:
  explicit reader(std::string path) : path_(std::move(path)) {}
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw reference_error(fmt::format("{}: {}{}", path_, where.empty() ? "" : where + ": ", what));
  }
  const json& at(const json& j, const std::string& where, const char* key) const {
    if (!j.is_object()) fail(where, "not an object");
    const auto it = j.find(key);
    if (it == j.end()) fail(where, fmt::format("no \"{}\"", key));
    return *it;
  }
  double number(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (!v.is_number()) fail(where, fmt::format("\"{}\" is not a number", key));
    return v.get<double>();
  }
  int integer(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (!v.is_number_integer()) fail(where, fmt::format("\"{}\" is not a whole number", key));
    return v.get<int>();
  }
  std::string text(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (!v.is_string() || v.get<std::string>().empty())
      fail(where, fmt::format("\"{}\" is not a non-empty string", key));
    return v.get<std::string>();
  }
  bool flag(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (!v.is_boolean()) fail(where, fmt::format("\"{}\" is not true or false", key));
    return v.get<bool>();
  }

  std::vector<reference_figure> figures(const json& j, const std::string& where, bool for_node) const {
    if (!j.is_object()) fail(where, "not an object of metrics");
    std::vector<reference_figure> out;
    for (const auto& [name, f] : j.items()) {
      const std::string w = where + "." + name;
      const metric* m = find_metric(name);
      if (m == nullptr) fail(w, "no such metric in this memlab's suite");
      if ((m->where != scope::gpu) != for_node || !m->has_reference())
        fail(w, fmt::format("a {} metric{} has no place here", to_string(m->where),
                            m->has_reference() ? "" : " judged without a reference"));
      reference_figure r;
      r.metric = name;
      r.unit = text(f, w, "unit");
      r.higher_is_better = flag(f, w, "higher_is_better");
      if (r.higher_is_better != m->higher_is_better)
        fail(w, fmt::format("higher_is_better is {} for this metric", m->higher_is_better));
      r.median = number(f, w, "median");
      r.spread = number(f, w, "spread");
      r.min = number(f, w, "min");
      r.max = number(f, w, "max");
      r.at.warn_at = number(f, w, "warn_at");
      r.at.fail_at = number(f, w, "fail_at");
      if (!(r.median > 0) || r.spread < 0) fail(w, "the median must be above 0 and the spread at least 0");
      const bool ordered = r.higher_is_better ? r.at.fail_at <= r.at.warn_at : r.at.fail_at >= r.at.warn_at;
      if (!ordered) fail(w, "fail_at must lie beyond warn_at");
      const json& values = at(f, w, "values");
      if (!values.is_array()) fail(w, "\"values\" is not an array");
      for (const auto& v : values) {
        if (!v.is_number()) fail(w, "\"values\" holds something other than numbers");
        r.values.push_back(v.get<double>());
      }
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  std::string path_;
};

}  // namespace

std::string reference_json(const reference& r) {
  ordered_json j;
  j["schema"] = reference_schema;
  j["model"] = {{"name", r.model.name}, {"memory_gib", sig(r.model.memory_gib, 4)}, {"sm_count", r.model.sm_count}};
  j["made"] = {{"machine", r.machine},
               {"date", r.date},
               {"memlab_version", r.memlab_version},
               {"git_sha", r.git_sha},
               {"driver_version", r.driver_version},
               {"runs", r.runs},
               {"gpus", r.gpus}};
  j["rule"] = {{"text", rule_text(r.rule)},
               {"fail_margin", r.rule.fail_margin},
               {"fail_spread_factor", r.rule.fail_spread_factor},
               {"warn_margin", r.rule.warn_margin},
               {"warn_spread_factor", r.rule.warn_spread_factor},
               {"sibling_margin", r.rule.sibling_margin},
               {"sibling_spread_factor", r.rule.sibling_spread_factor}};
  j["per_gpu"] = figures_json(r.per_gpu);
  j["node"] = ordered_json::array();
  for (const auto& s : r.node) {
    j["node"].push_back({{"gpus", s.gpus}, {"link", s.link}, {"metrics", figures_json(s.metrics)}});
  }
  // Each figure's values on one line: a file a reader scrolls through by metric, not by number.
  std::string text = j.dump(2);
  const std::string key = "\"values\": [";
  for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + key.size())) {
    const std::size_t open = at + key.size(), close = text.find(']', open);
    std::string inner = text.substr(open, close - open), flat;
    bool space = false;
    for (char c : inner) {
      if (c == '\n' || c == ' ') {
        space = !flat.empty();
        continue;
      }
      if (space && c != ',') flat += ' ';
      space = false;
      flat += c;
    }
    text.replace(open, close - open, flat);
  }
  return text + "\n";
}

reference read_reference(const std::string& path) {
  const reader rd(path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw reference_error(fmt::format("{}: a folder, not a file", path));
  std::ifstream in(path);
  if (!in) throw reference_error(fmt::format("{}: cannot be read (no such file, or not readable)", path));
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw reference_error(fmt::format("{}: not JSON ({})", path, what));
  }
  if (!j.is_object()) rd.fail("", "not a JSON object");
  // Not j.value("schema", ""): it throws nlohmann's type_error for a schema that is not a string.
  if (const auto it = j.find("schema"); it == j.end() || !it->is_string() || *it != reference_schema)
    rd.fail("schema", fmt::format("not \"{}\"", reference_schema));
  reference r;
  r.path = path;
  const json& model = rd.at(j, "", "model");
  r.model.name = rd.text(model, "model", "name");
  r.model.memory_gib = rd.number(model, "model", "memory_gib");
  r.model.sm_count = rd.integer(model, "model", "sm_count");
  const json& made = rd.at(j, "", "made");
  r.machine = rd.text(made, "made", "machine");
  r.date = rd.text(made, "made", "date");
  r.memlab_version = rd.text(made, "made", "memlab_version");
  r.git_sha = rd.text(made, "made", "git_sha");
  r.driver_version = rd.integer(made, "made", "driver_version");
  r.runs = rd.integer(made, "made", "runs");
  r.gpus = rd.integer(made, "made", "gpus");
  const json& rule = rd.at(j, "", "rule");
  r.rule.fail_margin = rd.number(rule, "rule", "fail_margin");
  r.rule.fail_spread_factor = rd.number(rule, "rule", "fail_spread_factor");
  r.rule.warn_margin = rd.number(rule, "rule", "warn_margin");
  r.rule.warn_spread_factor = rd.number(rule, "rule", "warn_spread_factor");
  r.rule.sibling_margin = rd.number(rule, "rule", "sibling_margin");
  r.rule.sibling_spread_factor = rd.number(rule, "rule", "sibling_spread_factor");
  r.per_gpu = rd.figures(rd.at(j, "", "per_gpu"), "per_gpu", false);
  const json& node = rd.at(j, "", "node");
  if (!node.is_array()) rd.fail("node", "not an array");
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string w = fmt::format("node[{}]", i);
    node_section s;
    s.gpus = rd.integer(node[i], w, "gpus");
    s.link = rd.text(node[i], w, "link");
    if (s.gpus < 2) rd.fail(w, "a node section is for 2 GPUs or more");
    if (r.node_for(s.gpus, s.link) != nullptr)
      rd.fail(w, fmt::format("a second section for {} GPUs, {}", s.gpus, s.link));
    const json& metrics = rd.at(node[i], w, "metrics");
    for (auto& f : rd.figures(metrics, w + ".metrics", true)) s.metrics.push_back(std::move(f));
    r.node.push_back(std::move(s));
  }
  return r;
}

std::string reference_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("MEMLAB_REFERENCES"); env != nullptr && *env != '\0') return env;
  // An installed memlab (cmake --install): PREFIX/bin/memlab reads PREFIX/share/memlab/references.
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto installed = exe.parent_path().parent_path() / "share" / "memlab" / "references";
    if (std::filesystem::is_directory(installed, ec)) return installed.string();
  }
  return MEMLAB_REFERENCES_DIR;
}

std::optional<reference> find_reference(const std::string& dir, const model_keys& gpu) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return std::nullopt;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    reference r = read_reference(f);
    if (!model_mismatch(r.model, gpu).empty()) continue;
    // The source tree's references by their place in it: no path of the machine memlab was built on in
    // what the check prints or writes.
    if (fs::path(dir).lexically_normal() == fs::path(MEMLAB_REFERENCES_DIR).lexically_normal())
      r.path = (fs::path("references") / fs::path(f).filename()).string();
    return r;
  }
  return std::nullopt;
}

}  // namespace memlab::check
