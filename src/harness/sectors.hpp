// The 32-byte sector: the unit in which L2 serves a global memory request (and DRAM fills L2). The labs' host
// models count the sectors an access pattern touches (their `hardware_bytes`, their sectors per request) with
// these, one definition for every lab. Byte addresses count from a 256-byte aligned allocation, so a sector
// boundary is a multiple of 32 of them. Host-only, header-only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

namespace memlab {

inline constexpr std::uint64_t sector_bytes = 32;

// Bytes [lo, hi) of one buffer; empty when hi <= lo.
struct byte_range {
  std::uint64_t lo = 0, hi = 0;
  [[nodiscard]] constexpr bool empty() const { return hi <= lo; }
};

// Distinct sectors of a range (0 when it is empty).
constexpr std::uint64_t sectors_of(byte_range r) {
  return r.empty() ? 0 : (r.hi - 1) / sector_bytes - r.lo / sector_bytes + 1;
}

// Distinct sectors of the union of two ranges: either may be empty, they may overlap or share a sector.
constexpr std::uint64_t sectors_of(byte_range a, byte_range b) {
  if (a.empty()) return sectors_of(b);
  if (b.empty()) return sectors_of(a);
  const std::uint64_t lo = std::max(a.lo / sector_bytes, b.lo / sector_bytes);
  const std::uint64_t hi = std::min((a.hi - 1) / sector_bytes, (b.hi - 1) / sector_bytes);
  return sectors_of(a) + sectors_of(b) - (hi >= lo ? hi - lo + 1 : 0);
}

// Distinct sectors of ranges given in increasing order, none overlapping the next (neighbours closer than a
// sector share one).
constexpr std::uint64_t sectors_of_sorted(std::span<const byte_range> rs) {
  std::uint64_t total = 0, last = 0;
  bool any = false;
  for (const byte_range& r : rs) {
    if (r.empty()) continue;
    const std::uint64_t first = r.lo / sector_bytes;
    total += sectors_of(r) - (any && first == last ? 1 : 0);
    last = (r.hi - 1) / sector_bytes;
    any = true;
  }
  return total;
}

// Sectors read and written, summed over a launch's warp requests (or over its CTAs, as a lab's model says).
struct sector_count {
  std::uint64_t read = 0, write = 0;
  friend bool operator==(const sector_count&, const sector_count&) = default;
};

}  // namespace memlab
