// The lab table's host-side helpers: axis grammar and ranges, case parameters, plans.
#include "harness/lab.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

#include "harness/fill.hpp"
#include "harness/sizes.hpp"

namespace memlab {

std::size_t axis::rank() const {
  if (grammar != axis_grammar::shape) return 1;
  std::size_t r = 0;
  while (r < extents.size() && !extents[r].empty()) ++r;
  return r;
}

std::string axis::flag() const { return flag_of(name); }

std::string flag_of(std::string_view axis_name) {
  std::string f = fmt::format("--{}", axis_name);
  std::replace(f.begin(), f.end(), '_', '-');
  return f;
}

std::vector<axis_value> parse_axis(const axis& a, std::string_view text) {
  const std::string flag = a.flag();
  std::vector<axis_value> out;
  switch (a.grammar) {
    case axis_grammar::counts:
      if (a.other_gpus && text == "all") {  // every ordinal; the planner keeps the machine's others
        for (auto v = a.min; v <= a.max; ++v) out.push_back({{v, 0, 0}, 1});
        break;
      }
      for (auto v : parse_counts(text, flag)) out.push_back({{v, 0, 0}, 1});
      break;
    case axis_grammar::bytes:
      for (auto v : parse_byte_counts(text, flag)) out.push_back({{v, 0, 0}, 1});
      break;
    case axis_grammar::shape:
      for (const auto& s : parse_shapes(text, flag, a.rank())) {
        axis_value v;
        v.rank = s.size();
        std::copy(s.begin(), s.end(), v.v.begin());
        out.push_back(v);
      }
      break;
    case axis_grammar::words: {
      std::string accepted;
      for (auto w : a.words) accepted += (accepted.empty() ? "" : ", ") + std::string(w);
      std::size_t from = 0;
      while (from <= text.size()) {
        const std::size_t comma = std::min(text.find(',', from), text.size());
        const std::string_view word = text.substr(from, comma - from);
        if (word == "all") {
          for (std::size_t i = 0; i < a.words.size(); ++i) out.push_back({{i, 0, 0}, 1});
        } else {
          const auto it = std::find(a.words.begin(), a.words.end(), word);
          if (it == a.words.end()) {
            throw std::invalid_argument(flag + ": '" + std::string(word) + "' is not one of " + accepted + ", all (" +
                                        std::string(a.meaning) + ")");
          }
          out.push_back({{static_cast<std::uint64_t>(it - a.words.begin()), 0, 0}, 1});
        }
        from = comma + 1;
      }
      return out;
    }
  }
  check_axis_values(a, out);
  return out;
}

void check_axis_values(const axis& a, std::span<const axis_value> values) {
  for (const auto& v : values) {
    for (std::size_t i = 0; i < v.rank; ++i) {
      const bool chosen = a.choices.empty() || std::find(a.choices.begin(), a.choices.end(), v[i]) != a.choices.end();
      const bool multiple = a.multiple_of <= 1 || v[i] % a.multiple_of == 0;
      if (v[i] < a.min || v[i] > a.max || !chosen || !multiple) {
        const std::string what = a.grammar == axis_grammar::shape ? fmt::format("extent {} of {}", v[i], to_string(v))
                                                                  : fmt::format("{}", v[i]);
        const std::string_view where = a.choices.empty() && multiple ? "outside" : "not";
        throw std::invalid_argument(
            fmt::format("{}: {} is {} {} ({})", a.flag(), what, where, accepted_values(a), a.meaning));
      }
    }
  }
}

std::string accepted_values(const axis& a) {
  if (a.grammar == axis_grammar::words) return fmt::format("{}", fmt::join(a.words, ", "));
  if (!a.choices.empty()) return fmt::format("one of {}", fmt::join(a.choices, ", "));
  const std::string range = fmt::format("{}..{}", a.min, a.max);
  return a.multiple_of > 1 ? fmt::format("{}, multiples of {}", range, a.multiple_of) : range;
}

const std::vector<axis_value>& default_values(const axis& a) {
  // Keyed by what the declaration says, not by its address: a test's axis on the stack may reuse
  // the address of an earlier one. Entries are never erased, so references stay valid.
  using key = std::tuple<std::string, std::string, int, std::uint64_t, std::uint64_t, std::size_t>;
  static std::mutex m;
  static std::map<key, std::vector<axis_value>> parsed;
  const key k{std::string(a.name), std::string(a.defaults), static_cast<int>(a.grammar), a.min, a.max, a.rank()};
  const std::lock_guard lock(m);
  auto it = parsed.find(k);
  if (it == parsed.end()) it = parsed.emplace(k, parse_axis(a, a.defaults)).first;
  return it->second;
}

std::string to_string(const axis_value& v) {
  return fmt::format("{}", fmt::join(v.v.begin(), v.v.begin() + static_cast<std::ptrdiff_t>(v.rank), "x"));
}

// ---- case_params ------------------------------------------------------------------------------------

const axis_value& case_params::shape(const axis& a) const {
  for (const auto& [name, value] : axes)
    if (name == a.name) return value;
  throw std::logic_error(fmt::format("case has no value for axis {}", a.name));
}

std::uint64_t case_params::operator[](const axis& a) const { return shape(a)[0]; }

case_params& case_params::set(const axis& a, axis_value v) {
  for (auto& [name, value] : axes) {
    if (name == a.name) {
      value = v;
      return *this;
    }
  }
  axes.emplace_back(a.name, v);
  return *this;
}

std::uint64_t case_plan::device_bytes() const {
  std::uint64_t total = transient_bytes;
  for (const auto& b : buffers) total += b.bytes + (b.role == buffer_role::output ? guard_bytes : 0);
  return total;
}

// ---- variant ------------------------------------------------------------------------------------------

bool variant::moves(dtype t) const {
  return dtypes.empty() || std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end();
}

std::vector<dtype> rung_dtypes(std::span<const variant> rungs) {
  std::vector<dtype> out;
  for (dtype t : all_dtypes())
    if (std::any_of(rungs.begin(), rungs.end(), [&](const variant& v) { return v.moves(t); })) out.push_back(t);
  return out;
}

// ---- lab ----------------------------------------------------------------------------------------------

std::optional<std::string> lab::why_not(const variant& v, const case_params& p, const device_info& dev) const {
  if (!v.moves(p.type)) {
    std::vector<std::string_view> types;
    for (dtype t : v.dtypes) types.push_back(to_string(t));
    return fmt::format("{} moves {} only, not {}", v.name, fmt::join(types, ", "), to_string(p.type));
  }
  const int cc = dev.cc_major * 10 + dev.cc_minor;  // 0: no device known (planning on the host)
  if (v.needs.min_cc > 0 && cc > 0 && cc < v.needs.min_cc) {
    return fmt::format("{} needs {}sm_{} or newer; this device is sm_{}", v.name,
                       v.needs.feature.empty() ? "" : fmt::format("{}, ", v.needs.feature), v.needs.min_cc, cc);
  }
  return unsupported != nullptr ? unsupported(v, p, dev) : std::nullopt;
}

const variant* lab::find_variant(std::string_view v) const {
  for (const auto& x : variants)
    if (x.name == v) return &x;
  return nullptr;
}

const axis* lab::find_axis(std::string_view a) const {
  for (const auto& x : axes)
    if (x.name == a) return &x;
  return nullptr;
}

case_params lab::make_case(dtype t, std::uint64_t n,
                           std::initializer_list<std::pair<std::string_view, axis_value>> values) const {
  case_params p;
  p.type = t;
  p.n = n;
  for (const auto& a : axes) p.set(a, default_values(a).front());
  for (const auto& [axis_name, value] : values) {
    const axis* a = find_axis(axis_name);
    if (a == nullptr) throw std::invalid_argument(fmt::format("lab {} has no axis {}", name, axis_name));
    p.set(*a, value);
  }
  return p;
}

std::vector<param> lab::params(const case_params& p, const variant* v) const {
  std::vector<param> out{{"dtype", std::string(to_string(p.type))}, {"n", static_cast<std::int64_t>(p.n)}};
  for (const auto& a : axes) {
    const bool ignored = v != nullptr && std::find(v->ignores.begin(), v->ignores.end(), a.name) != v->ignores.end();
    const axis_value& x = p.shape(a);
    const auto value = [&](std::size_t i) -> param_value {
      if (ignored) return std::monostate{};
      if (a.grammar == axis_grammar::words) {
        return x[i] < a.words.size() ? std::string(a.words[x[i]]) : std::to_string(x[i]);
      }
      return static_cast<std::int64_t>(x[i]);
    };
    if (a.grammar == axis_grammar::shape) {
      for (std::size_t i = 0; i < a.rank(); ++i) out.push_back({std::string(a.extents[i]), value(i)});
    } else {
      out.push_back({std::string(a.name), value(0)});
    }
  }
  return out;
}

std::string lab::table_problem() const {
  for (const auto& a : axes) {
    if (a.grammar != axis_grammar::words && a.unit.empty()) return fmt::format("axis {} declares no unit", a.name);
    if (a.grammar == axis_grammar::bytes && a.unit != "bytes")
      return fmt::format("axis {} reads byte counts but its unit is {}", a.name, a.unit);
    if (a.grammar == axis_grammar::words && !a.choices.empty())
      return fmt::format("axis {} is words: its choices are its words", a.name);
    try {
      (void)parse_axis(a, a.defaults);
    } catch (const std::invalid_argument& e) {
      return fmt::format("axis {}: its defaults are refused: {}", a.name, e.what());
    }
  }
  for (const auto& v : variants) {
    for (std::string_view ignored : v.ignores) {
      if (find_axis(ignored) == nullptr)
        return fmt::format("rung {} ignores {}, which is not an axis of lab {}", v.name, ignored, name);
    }
  }
  return "";
}

}  // namespace memlab
