#include "harness/sizes.hpp"

#include <fmt/format.h>

#include <bit>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace memlab {
namespace {

// Every value must fit the int64 that result params hold.
constexpr std::uint64_t value_limit = std::uint64_t{1} << 63;  // exclusive

constexpr std::string_view sizes_accepted =
    "accepted: N or 2^k (k <= 62), optionally followed by K|M|G (elements, x1024) or B|KiB|MiB|GiB "
    "(bytes); ranges lo..hi with an optional step :*factor (default *2) or :+increment; "
    "items separated by commas";
constexpr std::string_view counts_accepted =
    "accepted: N or 2^k (k <= 62), no unit; ranges lo..hi counting up by 1, or with a step :+increment "
    "or :*factor; items separated by commas";

// What went wrong and where; each public parser words the message for its own grammar.
struct parse_failure {
  std::string item, why;
};

[[noreturn]] void fail(std::string_view item, std::string_view why) {
  throw parse_failure{std::string(item), std::string(why)};
}

std::invalid_argument usage(std::string_view prefix, std::string_view noun, const parse_failure& f,
                            std::string_view accepted) {
  return std::invalid_argument(fmt::format("{}invalid {} \"{}\": {}; {}", prefix, noun, f.item, f.why, accepted));
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

constexpr size_suffix suffixes[] = {
    {"", 1, false}, {"K", 1ull << 10, false},  {"M", 1ull << 20, false},  {"G", 1ull << 30, false},
    {"B", 1, true}, {"KiB", 1ull << 10, true}, {"MiB", 1ull << 20, true}, {"GiB", 1ull << 30, true},
};

// One value as written, with enough of its spelling to write the values of a range alike.
struct parsed_value {
  std::uint64_t value = 0;
  bool bytes = false;
  bool pow2_form = false;   // written as 2^k
  std::string_view suffix;  // as written
  std::uint64_t unit = 1;   // what the suffix multiplies by
  std::string_view text;    // the whole value as written
};

// Leading decimal digits of s, consumed; throws (naming `item`) on none or on overflow.
std::uint64_t take_number(std::string_view& s, std::string_view item) {
  if (s.empty() || !is_digit(s.front())) {
    if (!s.empty() && s.front() == '-') fail(item, "negative numbers are not allowed");
    fail(item, "expected a number");
  }
  std::uint64_t n = 0;
  while (!s.empty() && is_digit(s.front())) {
    const auto d = static_cast<std::uint64_t>(s.front() - '0');
    if (n > (std::numeric_limits<std::uint64_t>::max() - d) / 10)
      fail(item, "number too large (the limit is 2^63 - 1)");
    n = n * 10 + d;
    s.remove_prefix(1);
  }
  return n;
}

parsed_value parse_value(std::string_view text, std::string_view item) {
  parsed_value v;
  v.text = trim(text);
  std::string_view s = v.text;
  if (s.empty()) fail(item, "empty value");
  if (s.front() == '-') fail(item, "negative numbers are not allowed");
  std::uint64_t base = 0;
  if (s.starts_with("2^")) {
    s.remove_prefix(2);
    v.pow2_form = true;
    if (!s.empty() && s.front() == '-') fail(item, "negative exponents are not allowed");
    const std::uint64_t k = take_number(s, item);
    if (k > max_exponent) fail(item, "exponent too large (2^k takes k <= 62)");
    base = std::uint64_t{1} << k;
  } else {
    base = take_number(s, item);
  }
  if (!s.empty() && s.front() == '.') fail(item, "fractions are not allowed");
  const size_suffix* found = nullptr;
  for (const auto& sfx : suffixes) {
    if (sfx.name == s) found = &sfx;
  }
  if (found == nullptr) fail(item, fmt::format("unknown suffix \"{}\"", s));
  v.suffix = found->name;
  v.unit = found->unit;
  v.bytes = found->bytes;
  if (base > (value_limit - 1) / v.unit) fail(item, "value too large (the limit is 2^63 - 1)");
  v.value = base * v.unit;
  return v;
}

// How a value generated inside a range is written: in the unit and form of the range's start.
std::string text_for(std::uint64_t value, const parsed_value& lo, const parsed_value& hi) {
  if (value == lo.value) return std::string(lo.text);
  if (value == hi.value) return std::string(hi.text);
  if (value % lo.unit == 0) {
    const std::uint64_t q = value / lo.unit;
    if (lo.pow2_form && std::has_single_bit(q)) {
      return fmt::format("2^{}{}", std::countr_zero(q), lo.suffix);
    }
    return fmt::format("{}{}", q, lo.suffix);
  }
  return fmt::format("{}{}", value, lo.bytes ? "B" : "");
}

void parse_range(std::string_view item, std::size_t dots, std::vector<size_spec>& out, bool default_geometric) {
  std::string_view rest = item.substr(dots + 2);
  std::string_view step_text;
  const auto colon = rest.find(':');
  if (colon != std::string_view::npos) {
    step_text = trim(rest.substr(colon + 1));
    rest = rest.substr(0, colon);
  }
  const parsed_value lo = parse_value(item.substr(0, dots), item);
  const parsed_value hi = parse_value(rest, item);
  if (lo.bytes != hi.bytes) fail(item, "both ends of a range must be element counts, or both byte counts");
  if (lo.value > hi.value) fail(item, "the start of the range is greater than its end");

  bool geometric = default_geometric;
  std::uint64_t step = default_geometric ? 2 : 1;
  if (colon != std::string_view::npos) {
    if (step_text.starts_with('*')) {
      geometric = true;
      std::string_view s = trim(step_text.substr(1));
      step = take_number(s, item);
      if (!s.empty()) fail(item, "a geometric step is a plain number, as in :*4");
      if (step < 2) fail(item, "a geometric step must be at least *2");
    } else if (step_text.starts_with('+')) {
      geometric = false;
      const parsed_value inc = parse_value(step_text.substr(1), item);
      // A bare increment counts in the range's own unit; a suffixed one must be of the same kind.
      if (!inc.suffix.empty() && inc.bytes != lo.bytes) {
        fail(item, "the step must count the same thing (elements or bytes) as the range");
      }
      step = inc.value;
      if (step == 0) fail(item, "the step must not be zero");
    } else {
      fail(item, "a step is :*factor or :+increment");
    }
  }
  if (geometric && lo.value == 0) fail(item, "a geometric range cannot start at 0");

  const std::size_t first = out.size();
  for (std::uint64_t v = lo.value;;) {
    if (out.size() - first == max_range_items) {
      fail(item, fmt::format("the range has more than {} values", max_range_items));
    }
    out.push_back({v, lo.bytes, text_for(v, lo, hi)});
    // Compare before stepping so the next value cannot overflow.
    if (geometric) {
      if (v > hi.value / step) break;
      v *= step;
    } else {
      if (hi.value - v < step) break;
      v += step;
    }
  }
}

std::vector<size_spec> parse_list(std::string_view text, bool default_geometric) {
  std::vector<size_spec> out;
  if (trim(text).empty()) fail(text, "the list is empty");
  std::size_t pos = 0;
  while (true) {
    const auto comma = text.find(',', pos);
    const std::string_view raw =
        text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    const std::string_view item = trim(raw);
    if (item.empty()) {
      fail(text, "empty item (two commas in a row, or a comma at an end)");
    }
    const auto dots = item.find("..");
    if (dots != std::string_view::npos) {
      parse_range(item, dots, out, default_geometric);
    } else {
      if (item.find(':') != std::string_view::npos) fail(item, "a step needs a range, as in lo..hi:*4");
      const parsed_value v = parse_value(item, item);
      out.push_back({v.value, v.bytes, std::string(v.text)});
    }
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

}  // namespace

std::span<const size_suffix> size_suffixes() { return suffixes; }

std::vector<size_spec> parse_sizes(std::string_view text) {
  try {
    return parse_list(text, true);
  } catch (const parse_failure& f) {
    throw usage("", "size", f, sizes_accepted);
  }
}

std::vector<std::uint64_t> parse_counts(std::string_view text, std::string_view what) {
  std::vector<std::uint64_t> out;
  try {
    for (const auto& s : parse_list(text, false)) {
      if (s.bytes) fail(s.text, "a byte suffix; this is a plain count");
      out.push_back(s.value);
    }
  } catch (const parse_failure& f) {
    throw usage(std::string(what) + ": ", "value", f, counts_accepted);
  }
  return out;
}

std::vector<std::uint64_t> parse_byte_counts(std::string_view text, std::string_view what) {
  std::vector<std::uint64_t> out;
  try {
    for (const auto& s : parse_list(text, true)) out.push_back(s.value);  // a bare number counts bytes
  } catch (const parse_failure& f) {
    throw usage(std::string(what) + ": ", "size", f, sizes_accepted);
  }
  return out;
}

std::vector<std::vector<std::uint64_t>> parse_shapes(std::string_view text, std::string_view what, std::size_t rank) {
  std::vector<std::vector<std::uint64_t>> out;
  const std::string accepted =
      fmt::format("accepted: shapes of {} extents joined by 'x' (N or 2^k each), as in {}; shapes separated by commas",
                  rank, rank == 3 ? "64x64x64" : "128x256");
  try {
    if (trim(text).empty()) fail(text, "the list is empty");
    std::size_t pos = 0;
    while (true) {
      const auto comma = text.find(',', pos);
      const std::string_view item =
          trim(text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
      if (item.empty()) fail(text, "empty item (two commas in a row, or a comma at an end)");
      std::vector<std::uint64_t> shape;
      std::size_t start = 0;
      while (true) {
        const auto x = item.find('x', start);
        const std::string_view extent =
            item.substr(start, x == std::string_view::npos ? std::string_view::npos : x - start);
        if (extent.find("..") != std::string_view::npos) fail(item, "a shape takes single extents, not ranges");
        const parsed_value v = parse_value(extent, item);
        if (!v.suffix.empty()) fail(item, "an extent is a plain number");
        shape.push_back(v.value);
        if (x == std::string_view::npos) break;
        start = x + 1;
      }
      if (shape.size() != rank) fail(item, fmt::format("expected {} extents, got {}", rank, shape.size()));
      out.push_back(std::move(shape));
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
  } catch (const parse_failure& f) {
    throw usage(std::string(what) + ": ", "shape", f, accepted);
  }
  return out;
}

std::uint64_t elements_of(const size_spec& s, std::size_t elem_size) {
  if (!s.bytes) return s.value;
  if (elem_size == 0) throw std::invalid_argument("elements_of: element size is 0");
  if (s.value % elem_size != 0) {
    throw std::invalid_argument(fmt::format("size \"{}\" ({} bytes) is not a multiple of the element size ({} bytes)",
                                            s.text, s.value, elem_size));
  }
  return s.value / elem_size;
}

}  // namespace memlab
