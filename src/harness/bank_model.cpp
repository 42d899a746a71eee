#include "harness/bank_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace memlab {

bank_request shared_request(const warp_addresses& lanes, int width) {
  if (width != 4 && width != 8 && width != 16) {
    throw std::invalid_argument(fmt::format("shared_request: a lane accesses 4, 8 or 16 bytes, not {}", width));
  }
  const int group = 128 / width;  // lanes whose accesses one wavefront can serve together
  bank_request r;
  bool any = false;
  for (int g0 = 0; g0 < 32; g0 += group) {
    std::array<std::set<std::uint32_t>, shared_banks> words;  // distinct 4-byte words per bank
    for (int l = g0; l < g0 + group; ++l) {
      if (!lanes[static_cast<std::size_t>(l)]) continue;
      const std::uint32_t a = *lanes[static_cast<std::size_t>(l)];
      if (a % static_cast<std::uint32_t>(width) != 0) {
        throw std::invalid_argument(
            fmt::format("shared_request: lane {} address {} is not {}-byte aligned", l, a, width));
      }
      any = true;
      for (int k = 0; k < width / bank_bytes; ++k) {
        const std::uint32_t word = a / bank_bytes + static_cast<std::uint32_t>(k);
        words[word % shared_banks].insert(word);
      }
    }
    std::size_t busiest = 0;
    for (const auto& w : words) busiest = std::max(busiest, w.size());
    r.wavefronts += static_cast<int>(busiest);
  }
  r.ideal = any ? width / bank_bytes : 0;
  return r;
}

}  // namespace memlab
