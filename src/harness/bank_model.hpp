// Shared memory's 32 banks of 4 bytes: how many wavefronts (passes through the banks) one warp-wide
// request takes, simulated lane by lane. Labs compare their own closed-form predictions with it
// (the smem lab) or report it per variant (transposes). Host-only; no lab named.
//
// The model (CUDA C++ Programming Guide, "Shared Memory", compute capability 5.x and later):
//   - a request of `width` bytes per lane (4, 8 or 16) is served in lane groups of 128 / width
//     lanes (all 32 for 4 bytes, half-warps for 8, quarter-warps for 16): the banks deliver 128
//     bytes per wavefront;
//   - within a group each access covers width / 4 consecutive 4-byte words; a bank serves one word
//     per wavefront, and lanes reading the same word share it (broadcast);
//   - a group takes as many wavefronts as its busiest bank has distinct words; the request, the
//     sum over its groups. The fewest possible: width / 4.
#pragma once

#include <array>
#include <cstdint>
#include <optional>

namespace memlab {

inline constexpr int shared_banks = 32;
inline constexpr int bank_bytes = 4;

// Byte addresses of one warp's accesses; nullopt for an inactive lane.
using warp_addresses = std::array<std::optional<std::uint32_t>, 32>;

struct bank_request {
  int wavefronts = 0;  // passes through the banks this request takes
  int ideal = 0;       // the fewest a request of this width can take: width / 4 (0 if no lane is active)
  // wavefronts / ideal: 1 is conflict-free; 32 is every lane of a 4-byte request in one bank.
  [[nodiscard]] double conflict_degree() const { return ideal > 0 ? static_cast<double>(wavefronts) / ideal : 0.0; }
};

// Throws std::invalid_argument for a width other than 4, 8, 16 or an address not aligned to it.
bank_request shared_request(const warp_addresses& lanes, int width);

}  // namespace memlab
