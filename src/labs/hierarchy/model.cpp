// The hierarchy lab's host model: the chase chain (Sattolo's single cycle), the launch plans, and
// the figures made from what the kernels read back. No CUDA runtime calls.
#include <algorithm>
#include <cmath>
#include <cuda/cmath>
#include <limits>
#include <map>
#include <numeric>

#include "harness/fill.hpp"
#include "labs/hierarchy/hierarchy.hpp"

namespace memlab::labs::hierarchy {

namespace {

std::string_view name_of(load_path p) {
  switch (p) {
    case load_path::l1: return "l1";
    case load_path::l2: return "l2";
    case load_path::shared: return "shared";
  }
  return "";
}

std::string_view name_of(chase_order o) {
  switch (o) {
    case chase_order::random: return "random";
    case chase_order::sequential: return "sequential";
  }
  return "";
}

}  // namespace

std::vector<rung_fact> facts(const variant& v) {
  const auto& t = v.traits_as<rung_traits>();
  std::vector<rung_fact> out{{"kind", t.kind->name}};
  if (t.kind->walks) {
    out.push_back({"path", name_of(t.path)});
    out.push_back({"order", name_of(t.order)});
    out.push_back({"per_sm", t.per_sm});
  }
  if (t.kind->streams) {
    out.push_back({"path", name_of(t.path)});
    out.push_back({"arrays_read", std::int64_t{t.op.arrays_read()}});
    out.push_back({"arrays_written", std::int64_t{t.op.arrays_written()}});
    out.push_back({"flops_per_element", std::int64_t{t.op.flops}});
    out.push_back({"every_cta_reads_all", t.every_cta_reads_all});
  }
  return out;
}

std::vector<std::uint64_t> make_chain(std::uint64_t nodes, chase_order order, std::uint64_t seed) {
  std::vector<std::uint64_t> next(nodes);
  std::iota(next.begin(), next.end(), std::uint64_t{1});
  if (nodes == 0) return next;
  next.back() = 0;
  if (order == chase_order::sequential) return next;
  // Sattolo: swapping each slot only with a slot below it yields one cycle through all nodes
  // (every cyclic permutation equally likely), not any permutation (which would leave short loops).
  std::iota(next.begin(), next.end(), std::uint64_t{0});
  for (std::uint64_t i = nodes - 1; i > 0; --i) {
    const std::uint64_t j = mix64(seed ^ mix64(i)) % i;
    std::swap(next[i], next[j]);
  }
  return next;
}

bool is_single_cycle(std::span<const std::uint64_t> next) {
  if (next.empty()) return false;
  std::uint64_t p = 0, steps = 0;
  do {
    if (next[p] >= next.size()) return false;
    p = next[p];
    ++steps;
  } while (p != 0 && steps <= next.size());
  return p == 0 && steps == next.size();
}

std::uint64_t walk(std::span<const std::uint64_t> next, std::uint64_t start, std::uint64_t steps) {
  std::uint64_t p = start;
  for (std::uint64_t i = 0; i < steps; ++i) p = next[p];
  return p;
}

chase_plan plan_chase(std::uint64_t chain_bytes, std::uint64_t stride, std::uint64_t steps, bool per_sm, int sm_count) {
  chase_plan p;
  p.nodes = stride > 0 ? chain_bytes / stride : 0;
  p.warmup = std::min(p.nodes, warmup_cap);
  p.steps = steps;
  p.samples = static_cast<unsigned>(std::min<std::uint64_t>(max_samples, steps));
  p.walkers = per_sm ? static_cast<std::uint64_t>(std::max(sm_count, 1)) : 1;
  return p;
}

std::uint64_t walker_start(std::span<const std::uint64_t> next, const chase_plan& p, std::uint64_t w) {
  return walk(next, 0, w * p.nodes / std::max<std::uint64_t>(p.walkers, 1));
}

std::vector<std::uint64_t> walker_starts(std::span<const std::uint64_t> next, const chase_plan& p) {
  const std::uint64_t walkers = std::max<std::uint64_t>(p.walkers, 1);
  std::vector<std::uint64_t> out;
  std::uint64_t node = 0, at = 0;
  for (std::uint64_t w = 0; w < walkers; ++w) {
    const std::uint64_t target = w * p.nodes / walkers;
    node = walk(next, node, target - at);
    at = target;
    out.push_back(node);
  }
  return out;
}

std::uint64_t bytes_in_flight_per_sm(const rung_traits& t, int threads, int ilp, int ctas_per_sm) {
  return static_cast<std::uint64_t>(ctas_per_sm) * static_cast<std::uint64_t>(threads) *
         static_cast<std::uint64_t>(ilp) * 16 * static_cast<std::uint64_t>(std::max(t.op.arrays_read(), 1));
}

bool served_by_sm(const rung_traits& t, std::uint64_t array_bytes, int sm_count) {
  if (t.path == load_path::shared) return true;
  const std::uint64_t per_sm = array_bytes * static_cast<std::uint64_t>(t.op.arrays_read() + t.op.arrays_written()) /
                               static_cast<std::uint64_t>(std::max(sm_count, 1));
  return t.path == load_path::l1 && t.op.arrays_written() == 0 && per_sm <= l1_share_bytes;
}

bandwidth_plan plan_bandwidth(const rung_traits& t, std::uint64_t array_bytes, int sm_count, int ilp, int ctas_per_sm,
                              std::uint64_t passes_given) {
  bandwidth_plan p;
  p.ilp = ilp;
  p.vectors = array_bytes / 16;
  if (p.vectors == 0) return p;
  const std::uint64_t tile = static_cast<std::uint64_t>(p.threads) * static_cast<std::uint64_t>(std::max(ilp, 1));
  const auto sms = static_cast<std::uint64_t>(std::max(sm_count, 1));
  p.grid = std::min<std::uint64_t>(sms * static_cast<std::uint64_t>(std::max(ctas_per_sm, 1)),
                                   std::max<std::uint64_t>(1, p.vectors / tile));
  p.sms_busy = std::min(p.grid, sms);
  p.slice = t.every_cta_reads_all ? p.vectors : cuda::ceil_div(p.vectors, p.grid);
  const std::uint64_t readers = t.every_cta_reads_all ? p.grid : 1;
  const auto arrays = static_cast<std::uint64_t>(t.op.arrays_read() + t.op.arrays_written());
  const std::uint64_t per_pass = arrays * array_bytes * readers;
  const std::uint64_t target =
      served_by_sm(t, array_bytes, sm_count) ? sm_target_bytes * p.sms_busy : bandwidth_target_bytes;
  const std::uint64_t passes = passes_given > 0 ? passes_given : per_pass > 0 ? cuda::ceil_div(target, per_pass) : 1;
  p.passes = static_cast<unsigned>(std::clamp<std::uint64_t>(passes, 1, 1u << 20));
  p.bytes = per_pass * p.passes;
  p.flops = static_cast<std::uint64_t>(t.op.flops) * (array_bytes / 4) * readers * p.passes;
  return p;
}

std::uint64_t dot_vectors_per_thread(const rung_traits& t, const bandwidth_plan& p) {
  const auto threads = static_cast<std::uint64_t>(std::max(p.threads, 1));
  if (p.vectors == 0 || p.grid == 0) return 0;
  if (t.path == load_path::shared) return cuda::ceil_div(p.slice, threads);  // one contiguous slice per CTA
  // Whole tiles of threads x ilp vectors (every CTA all of them, or every grid-th one), then the
  // arrays' last, partial tile.
  const auto ilp = static_cast<std::uint64_t>(std::max(p.ilp, 1));
  const std::uint64_t whole = p.vectors / (threads * ilp), rest = p.vectors % (threads * ilp);
  const std::uint64_t tiles = t.every_cta_reads_all ? whole : cuda::ceil_div(whole, p.grid);
  return tiles * ilp + cuda::ceil_div(rest, threads);
}

double dot_tolerance(const rung_traits& t, const bandwidth_plan& p) {
  constexpr double u = 1.0 / (1 << 24);
  const double chain = 4.0 * p.passes * static_cast<double>(dot_vectors_per_thread(t, p));  // FFMAs, one thread
  const double reduction = (std::max(p.ilp, 1) - 1) + 5 + 8;      // accumulators, shuffles, warp sums
  const bool exact = 4.0 * chain < static_cast<double>(1 << 18);  // every product <= 4
  const double m = exact ? reduction : chain + reduction;
  return m * u >= 0.5 ? std::numeric_limits<double>::infinity() : m * u / (1 - m * u);
}

double quantile(std::vector<std::uint32_t> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  return v[std::clamp<std::size_t>(rank, 1, v.size()) - 1];
}

std::vector<measured_figure> walk_figures(std::uint64_t cycles, std::uint64_t ns, std::uint64_t steps,
                                          std::span<const std::uint32_t> samples) {
  std::vector<measured_figure> out;
  const double s = static_cast<double>(std::max<std::uint64_t>(steps, 1));
  out.push_back({"cycles_per_load", static_cast<double>(cycles) / s, "cycles"});
  out.push_back({"ns_per_load", static_cast<double>(ns) / s, "ns"});
  out.push_back({"sm_clock_mhz", ns > 0 ? 1e3 * static_cast<double>(cycles) / static_cast<double>(ns) : 0.0, "MHz"});
  if (samples.empty()) return out;
  const std::vector<std::uint32_t> v(samples.begin(), samples.end());
  out.push_back({"p10_cycles", quantile(v, 0.10), "cycles"});
  out.push_back({"p50_cycles", quantile(v, 0.50), "cycles"});
  out.push_back({"p90_cycles", quantile(v, 0.90), "cycles"});
  out.push_back({"p99_cycles", quantile(v, 0.99), "cycles"});
  std::map<std::uint32_t, std::uint64_t> buckets;
  for (std::uint32_t x : v) ++buckets[x / histogram_bucket_cycles];
  for (const auto& [b, count] : buckets) {
    const std::uint32_t lo = b * histogram_bucket_cycles;
    out.push_back({"hist_" + std::to_string(lo) + "_" + std::to_string(lo + histogram_bucket_cycles),
                   static_cast<double>(count), "loads", true});
  }
  return out;
}

}  // namespace memlab::labs::hierarchy
