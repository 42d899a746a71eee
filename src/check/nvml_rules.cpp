#include "check/nvml_rules.hpp"

#include <fmt/format.h>

#include <bit>

namespace memlab::check::nvml_rules {

void read_clock_events(row& r, const nvml_readings&, const nvml_samples& s) {
  if (!s.why.empty()) {
    r.note = s.why;
    return;
  }
  const std::uint64_t seen = s.reasons & (clock_event::failing | clock_event::warning);
  r.value = static_cast<double>(std::popcount(seen));
  r.expected = 0;
  r.shown = clock_event_text(seen);
  r.note = fmt::format("{} samples; all reasons seen: {}", s.samples, clock_event_text(s.reasons));
}

verdict judge_clock_events(const row& r) {
  const std::uint64_t seen = clock_events_named(r.shown).value_or(0);
  if ((seen & clock_event::failing) != 0) return verdict::fail;
  if ((seen & clock_event::warning) != 0) return verdict::warn;
  return verdict::pass;
}

namespace {

void read_count(row& r, const std::optional<std::uint64_t>& count, const std::string& why) {
  if (!count) {
    r.note = why;
    return;
  }
  r.value = static_cast<double>(*count);
  r.expected = 0;
}

void read_link(row& r, int seen, int most, const nvml_samples& s, std::string_view prefix) {
  if (!s.why.empty() || seen == 0 || most == 0) {
    r.note = !s.why.empty() ? s.why : "NVML gave no PCIe link reading";
    return;
  }
  r.value = seen;
  r.expected = most;
  r.note = fmt::format("the most the link trains to: {}{}", prefix, most);
}

}  // namespace

void read_ecc_volatile(row& r, const nvml_readings& rd, const nvml_samples&) {
  read_count(r, rd.ecc_volatile, rd.ecc_why);
}
void read_ecc_aggregate(row& r, const nvml_readings& rd, const nvml_samples&) {
  read_count(r, rd.ecc_aggregate, rd.ecc_why);
}
// Since the driver loaded: a failing part now. Over the GPU's life: a history that may be handled already
// (rows remapped), worth a look.
verdict judge_ecc_volatile(const row& r) { return r.value > 0 ? verdict::fail : verdict::pass; }
verdict judge_ecc_aggregate(const row& r) { return r.value > 0 ? verdict::warn : verdict::pass; }

void read_pcie_gen(row& r, const nvml_readings& rd, const nvml_samples& s) { read_link(r, s.gen, rd.max_gen, s, "Gen"); }
void read_pcie_width(row& r, const nvml_readings& rd, const nvml_samples& s) {
  read_link(r, s.width, rd.max_width, s, "x");
}
verdict judge_pcie_link(const row& r) {
  return r.expected && r.value < *r.expected ? verdict::fail : verdict::pass;
}

}  // namespace memlab::check::nvml_rules
