// The transfer lab's host model (transfer.hpp).
#include "labs/transfer/transfer.hpp"

namespace memlab::labs::transfer {

std::vector<direction_figure> host_directions(direction d, std::uint64_t n) {
  switch (d) {
    case direction::h2d: return {{"h2d", n, 0}};
    case direction::d2h: return {{"d2h", n, 0}};
    case direction::bidir: return {{"h2d", n, 0}, {"d2h", n, 0}};
  }
  return {};
}

std::vector<direction_figure> peer_directions(peer_way w, int self, int peer, std::uint64_t n) {
  const std::string to_peer = std::to_string(self) + "->" + std::to_string(peer);
  const std::string from_peer = std::to_string(peer) + "->" + std::to_string(self);
  switch (w) {
    case peer_way::push: return {{to_peer, n, 0}};
    case peer_way::pull: return {{from_peer, n, 0}};
    case peer_way::both: return {{to_peer, n, 0}, {from_peer, n, 0}};
    case peer_way::none: break;
  }
  return {};
}

double bus_factor(collective op, int ranks) {
  const double n = ranks, spread = ranks > 0 ? (n - 1) / n : 0;
  switch (op) {
    case collective::all_reduce: return 2 * spread;
    case collective::all_gather:
    case collective::reduce_scatter:
    case collective::all_to_all: return spread;
    case collective::broadcast:
    case collective::send_recv: return 1;
    case collective::none: break;
  }
  return 0;
}

std::optional<std::string> collective_refusal(collective op, std::uint64_t size, int ranks) {
  const bool split = op == collective::all_gather || op == collective::reduce_scatter || op == collective::all_to_all;
  if (split && size % static_cast<std::uint64_t>(ranks) != 0) {
    return "the size (" + std::to_string(size) + " B) must be a multiple of the " + std::to_string(ranks) +
           " ranks: each rank's share is size / ranks bytes";
  }
  return std::nullopt;
}

}  // namespace memlab::labs::transfer
