// The transfer lab's host model: what each rung is (its traits), the bytes it moves in each
// direction, and nccl-tests' bus-bandwidth factors. No CUDA calls: the host tests replay all of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "harness/fill.hpp"
#include "harness/result.hpp"

namespace memlab::labs::transfer {

// What moves the bytes.
enum class engine {
  copy_engine,  // cudaMemcpyAsync / cudaMemcpyPeerAsync: the DMA engines, no SM
  sm,           // a kernel of ours: 16-byte loads and stores through mapped host or peer memory
  library,      // memlab::copy on the same pointers
  nccl,         // an NCCL collective
};

// Where the bytes go.
enum class route {
  host,        // host <-> this GPU over PCIe: the direction and host memory axes apply
  peer,        // this GPU <-> another (the peer axis): NVLink, else PCIe
  collective,  // NCCL across `gpus` GPUs, one process
};

// Peer rungs: which GPU's SMs (or copy engine) drive the copy, and which way the bytes go.
enum class peer_way {
  none,
  push,  // this GPU -> the peer: a copy engine copy, or this GPU's SMs storing into peer memory
  pull,  // the peer -> this GPU: this GPU's SMs loading peer memory
  both,  // both at once: each GPU pushes to the other
};

enum class collective { none, all_reduce, all_gather, reduce_scatter, broadcast, all_to_all, send_recv };

// What a peer rung measures: bandwidth (a copy of the size), or the latency of one small access.
enum class peer_probe {
  copy,       // n bytes copied, timed as a launch
  chase,      // dependent 8-byte loads over n bytes of the peer's memory: the round trip of a read
  ping_pong,  // a flag written into the other GPU's memory and answered: the one-way latency of a store
};

// A rung's description, read by the lab's model (variant::traits).
struct rung_traits {
  route where = route::host;
  engine how = engine::copy_engine;
  peer_way way = peer_way::none;
  collective op = collective::none;
  peer_probe probe = peer_probe::copy;
};

// The placement axis: nccl-tests' two columns, the output in its own buffer or over the input.
enum class placement : std::uint64_t { out_of_place, in_place };

// The host <-> device axes, as their word indices (the lab's axes declare the words in this order).
enum class direction : std::uint64_t { h2d, d2h, bidir };
enum class host_memory : std::uint64_t { pageable, pinned, registered, write_combined };

// Bytes counted once per direction: an h2d copy of n bytes moves n; bidir moves n each way.
std::vector<direction_figure> host_directions(direction d, std::uint64_t n);
// The same for peer copies between GPUs `self` and `peer` ("0->1").
std::vector<direction_figure> peer_directions(peer_way w, int self, int peer, std::uint64_t n);

// nccl-tests' busbw = algbw x factor (doc/PERFORMANCE.md): all-reduce 2(n-1)/n; all-gather,
// reduce-scatter, all-to-all (n-1)/n; broadcast and send/receive 1.
double bus_factor(collective op, int ranks);

// Each rank's buffers for nccl-tests' size S (the "size" column, bytes): all-reduce and broadcast
// send and receive S; all-gather sends S/n and receives S; reduce-scatter sends S and receives
// S/n; all-to-all sends and receives S, S/n to and from each rank; send/receive (a ring: rank r
// sends to r+1, receives from r-1) sends and receives S.
// In place (nccl-tests' getCollByteCount): one buffer of max(send, recv) bytes; rank r sends from
// it at r x send_step and receives into it at r x recv_step (all-gather sends its share from its
// place in the output; reduce-scatter receives into its place in the input).
struct collective_buffers {
  std::uint64_t send = 0, recv = 0;
  std::uint64_t send_step = 0, recv_step = 0;  // in place: the per-rank offsets into the one buffer
  [[nodiscard]] std::uint64_t in_place_bytes() const { return send > recv ? send : recv; }
};
MEMLAB_HOST_DEVICE inline collective_buffers buffers_of(collective op, std::uint64_t size, int ranks) {
  const std::uint64_t share = ranks > 0 ? size / static_cast<std::uint64_t>(ranks) : 0;
  switch (op) {
    case collective::all_gather: return {share, size, share, 0};
    case collective::reduce_scatter: return {size, share, 0, share};
    case collective::all_reduce:
    case collective::broadcast:
    case collective::all_to_all:
    case collective::send_recv: return {size, size, 0, 0};
    case collective::none: break;
  }
  return {};
}
// Why `op` cannot run size S on `ranks` ranks (S not a multiple of n where the data is split).
std::optional<std::string> collective_refusal(collective op, std::uint64_t size, int ranks);

// Rank r's output byte j in terms of the inputs: the ranks whose input bytes add up to it (a sum
// modulo 256: the collectives reduce u8 with ncclSum, exact in any order), and the input byte.
struct source_bytes {
  int first_rank = 0, ranks = 1;  // ranks [first_rank, first_rank + ranks) contribute
  std::uint64_t byte = 0;         // at this offset of each contributing rank's input
};
MEMLAB_HOST_DEVICE inline source_bytes source_of(collective op, std::uint64_t size, int ranks, int rank,
                                                 std::uint64_t j) {
  const std::uint64_t share = size / static_cast<std::uint64_t>(ranks);
  switch (op) {
    case collective::all_reduce: return {0, ranks, j};
    case collective::reduce_scatter: return {0, ranks, static_cast<std::uint64_t>(rank) * share + j};
    case collective::all_gather: return {static_cast<int>(j / share), 1, j % share};
    case collective::broadcast: return {0, 1, j};  // root 0
    case collective::all_to_all:
      return {static_cast<int>(j / share), 1, static_cast<std::uint64_t>(rank) * share + j % share};
    case collective::send_recv: return {(rank + ranks - 1) % ranks, 1, j};  // from the previous rank
    case collective::none: break;
  }
  return {};
}

}  // namespace memlab::labs::transfer
