// The check file: memlab.check/2 written (docs/check.schema.json), memlab.check/1 and /2 read back for
// --replay. docs/check.md, "The check file", says what a reader may rely on from one version to the next.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <type_traits>

#include "check/check.hpp"
#include "memlab_git_sha.hpp"

namespace memlab::check {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

std::map<verdict, int> counts_of(const measurement& m) {
  std::map<verdict, int> c;
  for (const row& r : m.rows) ++c[r.v];
  return c;
}

// A row field's value: null for none.
ordered_json json_of(const row_value& v) {
  return std::visit(
      [](const auto& x) -> ordered_json {
        if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::monostate>) {
          return nullptr;
        } else {
          return x;
        }
      },
      v);
}
template <class T>
ordered_json opt(const std::optional<T>& v) {
  return v ? ordered_json(*v) : ordered_json(nullptr);
}
ordered_json text_or_null(std::string_view s) { return s.empty() ? ordered_json(nullptr) : ordered_json(s); }

}  // namespace

std::string check_json(const measurement& m, const check_header& h, std::span<const row_field> fields) {
  ordered_json j;
  j["schema"] = check_schema;
  j["memlab_version"] = MEMLAB_VERSION;
  j["git_sha"] = MEMLAB_GIT_SHA;
  j["created"] = h.created;
  j["started"] = m.started;
  j["command"] = h.command;
  j["machine"] = h.machine;
  j["seconds"] = m.seconds;
  j["interrupted"] = !m.interrupted_by.empty();
  j["interrupted_by"] = text_or_null(m.interrupted_by);
  if (h.replay) {
    const auto& s = *h.replay;
    j["replay"] = {{"path", s.path},       {"schema", s.schema},     {"created", s.created},
                   {"command", s.command}, {"memlab_version", s.memlab_version}, {"git_sha", s.git_sha}};
  } else {
    j["replay"] = nullptr;
  }
  j["link"] = m.link;
  j["busy"] = m.busy();
  const auto act = action_of(m);
  j["action"] = act ? ordered_json(to_string(*act)) : ordered_json(nullptr);
  j["gpus"] = ordered_json::array();
  for (const auto& g : m.gpus) {
    ordered_json procs = ordered_json::array();
    for (const auto& p : g.processes)
      procs.push_back({{"pid", p.pid}, {"name", p.name}, {"used_mib", opt(p.used_mib)}, {"seen", p.seen}});
    j["gpus"].push_back({{"ordinal", g.ordinal},
                         {"name", g.model.name},
                         {"memory_gib", g.model.memory_gib},
                         {"sm_count", g.model.sm_count},
                         {"link", g.model.link},
                         {"bus_id", g.bus_id},
                         {"driver_version", g.driver_version},
                         {"uuid", g.uuid},
                         {"serial", g.serial},
                         {"driver", g.driver},
                         {"runtime_version", g.runtime_version},
                         {"busy", g.busy()},
                         {"processes", procs}});
  }
  if (h.ref != nullptr) {
    j["reference"] = {{"path", h.ref->path}, {"model", h.ref->model.name}, {"machine", h.ref->machine},
                      {"date", h.ref->date}, {"runs", h.ref->runs},        {"rule", rule_text(h.ref->rule)}};
  } else {
    j["reference"] = nullptr;
  }
  j["reference_note"] = h.reference_note;
  j["rows"] = ordered_json::array();
  for (const row& r : m.rows) {
    ordered_json rj = ordered_json::object();
    for (const row_field& f : fields)
      if (f.json) rj[std::string(f.name)] = json_of(f.get(m, r));
    j["rows"].push_back(std::move(rj));
  }
  ordered_json counts = ordered_json::object();
  for (const auto& [v, n] : counts_of(m)) counts[std::string(to_string(v))] = n;
  j["counts"] = counts;
  j["exit_status"] = h.exit_status;
  return j.dump(2) + "\n";
}

// ---- reading ------------------------------------------------------------------------------------------

namespace {

// Reading: each check names the file and where in it.
class reader {
 public:
  explicit reader(std::string path) : path_(std::move(path)) {}
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw check_file_error(fmt::format("{}: {}{}", path_, where.empty() ? "" : where + ": ", what));
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
  // A number or null (NaN).
  double number_or_nan(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (v.is_null()) return NAN;
    if (!v.is_number()) fail(where, fmt::format("\"{}\" is not a number or null", key));
    return v.get<double>();
  }
  std::optional<double> optional_number(const json& j, const std::string& where, const char* key) const {
    const double v = number_or_nan(j, where, key);
    return std::isnan(v) ? std::nullopt : std::optional<double>(v);
  }
  int integer(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (!v.is_number_integer()) fail(where, fmt::format("\"{}\" is not a whole number", key));
    return v.get<int>();
  }
  // A whole number or null (-1).
  int ordinal_or_none(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (v.is_null()) return -1;
    if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 1023)
      fail(where, fmt::format("\"{}\" is not a device ordinal or null", key));
    return v.get<int>();
  }
  std::string text(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (!v.is_string()) fail(where, fmt::format("\"{}\" is not a string", key));
    return v.get<std::string>();
  }
  std::string text_or_empty(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (v.is_null()) return "";
    if (!v.is_string()) fail(where, fmt::format("\"{}\" is not a string or null", key));
    return v.get<std::string>();
  }
  bool flag(const json& j, const std::string& where, const char* key) const {
    const json& v = at(j, where, key);
    if (!v.is_boolean()) fail(where, fmt::format("\"{}\" is not true or false", key));
    return v.get<bool>();
  }

 private:
  std::string path_;
};

// A v1 row that failed without a figure: why, from the words memlab check /1 wrote.
std::string_view failure_of_v1(std::string_view note) {
  if (note.starts_with("verification failed")) return fault_code::data_corruption;
  if (note.starts_with("a CUDA error stopped the check")) {
    return note.find("cudaErrorMemoryAllocation") != std::string_view::npos ? fault_code::out_of_memory
                                                                            : fault_code::cuda_error;
  }
  return fault_code::case_error;
}

std::string start_of(const std::string& created, double seconds) {
  std::tm tm{};
  if (strptime(created.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm) == nullptr) return created;
  const std::time_t end = timegm(&tm);
  const std::time_t start = end - static_cast<std::time_t>(std::lround(seconds));
  std::tm out{};
  gmtime_r(&start, &out);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &out);
  return buf;
}

}  // namespace

check_file read_check_file(const std::string& path) {
  const reader rd(path);
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw check_file_error(fmt::format("{}: a folder, not a file", path));
  std::ifstream in(path);
  if (!in) throw check_file_error(fmt::format("{}: cannot be read (no such file, or not readable)", path));
  json j;
  try {
    j = json::parse(in);
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    throw check_file_error(fmt::format("{}: not JSON, or cut short ({})", path, what));
  }
  if (!j.is_object()) rd.fail("", "not a JSON object");
  const auto sit = j.find("schema");
  if (sit == j.end() || !sit->is_string()) rd.fail("schema", "missing: not a memlab check file");
  const std::string schema = *sit;
  const auto known = std::find(std::begin(check_schemas_read), std::end(check_schemas_read), schema);
  if (known == std::end(check_schemas_read)) {
    rd.fail("schema", fmt::format("\"{}\": this memlab reads {}", schema, fmt::join(check_schemas_read, ", ")));
  }
  const bool v1 = schema == "memlab.check/1";

  check_file f;
  f.source.path = path;
  f.source.schema = schema;
  f.source.created = rd.text(j, "", "created");
  f.source.command = rd.text(j, "", "command");
  f.source.memlab_version = rd.text(j, "", "memlab_version");
  f.source.git_sha = rd.text(j, "", "git_sha");
  f.machine = rd.text(j, "", "machine");
  measurement& m = f.m;
  m.seconds = rd.number(j, "", "seconds");
  m.link = rd.text(j, "", "link");
  m.started = v1 ? start_of(f.source.created, m.seconds) : rd.text(j, "", "started");
  if (!v1) m.interrupted_by = rd.text_or_empty(j, "", "interrupted_by");

  const json& gpus = rd.at(j, "", "gpus");
  if (!gpus.is_array() || gpus.empty()) rd.fail("gpus", "not a list of the GPUs checked");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string w = fmt::format("gpus[{}]", i);
    const json& g = gpus[i];
    gpu_facts x;
    x.ordinal = rd.ordinal_or_none(g, w, "ordinal");
    if (x.ordinal < 0) rd.fail(w, "\"ordinal\" is null");
    x.model.name = rd.text(g, w, "name");
    x.model.memory_gib = rd.number(g, w, "memory_gib");
    x.model.sm_count = rd.integer(g, w, "sm_count");
    x.model.link = rd.text(g, w, "link");
    x.bus_id = rd.text(g, w, "bus_id");
    x.driver_version = rd.integer(g, w, "driver_version");
    for (const auto& other : m.gpus)
      if (other.ordinal == x.ordinal) rd.fail(w, fmt::format("GPU {} twice", x.ordinal));
    if (!v1) {
      x.uuid = rd.text(g, w, "uuid");
      x.serial = rd.text(g, w, "serial");
      x.driver = rd.text(g, w, "driver");
      x.runtime_version = rd.integer(g, w, "runtime_version");
      const json& procs = rd.at(g, w, "processes");
      if (!procs.is_array()) rd.fail(w, "\"processes\" is not a list");
      for (std::size_t k = 0; k < procs.size(); ++k) {
        const std::string pw = fmt::format("{}.processes[{}]", w, k);
        gpu_process p;
        p.pid = rd.integer(procs[k], pw, "pid");
        p.name = rd.text(procs[k], pw, "name");
        p.used_mib = rd.optional_number(procs[k], pw, "used_mib");
        p.seen = rd.text(procs[k], pw, "seen");
        x.processes.push_back(std::move(p));
      }
    }
    m.gpus.push_back(std::move(x));
  }
  const auto checked = [&](int ordinal) {
    return std::any_of(m.gpus.begin(), m.gpus.end(), [&](const gpu_facts& g) { return g.ordinal == ordinal; });
  };

  const json& rows = rd.at(j, "", "rows");
  if (!rows.is_array()) rd.fail("rows", "not a list");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string w = fmt::format("rows[{}]", i);
    const json& rj = rows[i];
    const std::string name = rd.text(rj, w, "metric");
    const metric* x = find_metric(name);
    if (x == nullptr) rd.fail(w, fmt::format("metric \"{}\" is not in this memlab's suite", name));
    if (rd.text(rj, w, "scope") != to_string(x->where))
      rd.fail(w, fmt::format("metric {} is a {} metric", name, to_string(x->where)));
    row r{.m = x};
    r.gpu = rd.ordinal_or_none(rj, w, "gpu");
    r.peer = rd.ordinal_or_none(rj, w, "peer");
    if ((r.gpu >= 0 && !checked(r.gpu)) || (r.peer >= 0 && !checked(r.peer)))
      rd.fail(w, "a GPU that is not among the GPUs checked");
    if (x->where == scope::gpu && r.gpu < 0) rd.fail(w, "a GPU's metric without its GPU");
    r.value = rd.number_or_nan(rj, w, "value");
    const std::string shown = rd.text(rj, w, "shown");
    r.seconds = rd.number(rj, w, "seconds");
    const std::optional<verdict> was = verdict_named(rd.text(rj, w, "verdict"));
    if (!was) rd.fail(w, fmt::format("\"verdict\" is not one of memlab's"));
    if (x->from_nvml()) {
      r.expected = rd.optional_number(rj, w, "reference");
      // The clock events are shown in words: the rule reads them back.
      if (x->nvml.words) r.shown = r.measured() ? shown : "";
      if (x->nvml.words && r.measured() && !clock_events_named(shown))
        rd.fail(w, fmt::format("clock events \"{}\" are not NVML's reasons", shown));
    }
    if (v1) {
      // /1 kept one note: the judge's words on a measured lab row, else what was read or why nothing was.
      const std::string note = rd.text(rj, w, "note");
      r.note = x->from_lab() && r.measured() ? "" : note;
      if (*was == verdict::fail && !r.measured() && x->from_lab()) r.failed = failure_of_v1(note);
    } else {
      r.note = rd.text(rj, w, "measured_note");
      const std::string failed = rd.text_or_empty(rj, w, "failed");
      if (!failed.empty()) {
        const fault* code = find_fault(failed);
        if (code == nullptr) rd.fail(w, fmt::format("\"failed\": no fault code \"{}\"", failed));
        r.failed = code->code;
      }
      r.interrupted = *was == verdict::interrupted;
    }
    m.rows.push_back(std::move(r));
  }
  if (m.rows.empty()) rd.fail("rows", "no rows");
  return f;
}

// ---- where it is written --------------------------------------------------------------------------------

std::string expand_path(std::string_view path, std::string_view short_host) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      out += path[i];
      continue;
    }
    const char next = i + 1 < path.size() ? path[i + 1] : '\0';
    if (next == 'N') {
      out += short_host;
    } else if (next == '%') {
      out += '%';
    } else {
      throw std::invalid_argument(
          fmt::format("{}: {} is not a pattern memlab check expands (%N: this host's short name; %%: a percent sign)",
                      path, next == '\0' ? std::string("a % at the end") : fmt::format("%{}", next)));
    }
    ++i;
  }
  return out;
}

std::string short_host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  const std::string_view name(buf);
  return std::string(name.substr(0, name.find('.')));
}

}  // namespace memlab::check
