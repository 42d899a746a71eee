// Outputs checked on the GPU. A collective's outputs, or a peer copy's, run to gigabytes: the host would
// take seconds a case to replay them. The same reference runs here on the GPU, over the whole allocation
// (the poisoned guard after an output too), and finds the first byte that differs; the host then writes
// the message. The reference: a transfer's destination byte j is its source byte j, every source the
// random stream of a seed from its first byte; a collective's output byte is the sum (mod 256) of the
// input bytes source_of() names (transfer.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>

#include "harness/check.hpp"
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "harness/launch.cuh"
#include "labs/transfer/routes.hpp"

namespace memlab::labs::transfer {

inline constexpr std::uint64_t no_mismatch = ~std::uint64_t{0};

// What byte `pos` of an allocation must hold.
struct expected_bytes {
  // a copy: the random stream of seeds[0] for [0, payload), poison after
  // a collective: rank `rank`'s output (source_of over the ranks' seeds), at [recv_from, recv_to)
  //   of its allocation; out of place the rest is the poisoned guard, in place it is rank's input
  bool collective_output = false;
  collective op = collective::none;
  std::uint64_t n = 0, payload = 0, recv_from = 0, recv_to = 0, send_step = 0;
  int ranks = 1, rank = 0;
  bool in_place = false;
  std::uint64_t seeds[max_checked_ranks] = {};

  MEMLAB_HOST_DEVICE std::uint8_t operator()(std::uint64_t pos) const {
    if (!collective_output) return pos < payload ? random_byte(seeds[0], pos) : poison_byte;
    if (pos < recv_from || pos >= recv_to) return in_place ? random_byte(seeds[rank], pos) : poison_byte;
    const source_bytes from = source_of(op, n, ranks, rank, pos - recv_from);
    unsigned sum = 0;
    for (int k = from.first_rank; k < from.first_rank + from.ranks; ++k) {
      sum += random_byte(seeds[k], (in_place ? send_step * static_cast<std::uint64_t>(k) : 0) + from.byte);
    }
    return static_cast<std::uint8_t>(sum);  // u8 sums wrap: exact in any order
  }
};

__global__ void check_bytes_kernel(const std::uint8_t* __restrict__ out, std::uint64_t bytes, expected_bytes e,
                                   unsigned long long* first_bad) {
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x;
  for (std::uint64_t pos = global_thread(); pos < bytes; pos += stride) {
    if (out[pos] != e(pos)) {
      atomicMin(first_bad, static_cast<unsigned long long>(pos));
      return;
    }
  }
}

namespace {

// "" when every byte of `out` is what `e` says, else the first that differs, as check_bytes words it.
std::string check_on_gpu(const device_buffer& out, const expected_bytes& e, std::uint64_t payload_end) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  if (out.size() == 0) return {};
  device_buffer first(sizeof(unsigned long long));
  MEMLAB_CUDA_CHECK(cudaMemset(first.data(), 0xff, sizeof(unsigned long long)));
  int device = 0, sms = 0;
  MEMLAB_CUDA_CHECK(cudaGetDevice(&device));
  MEMLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const auto grid = static_cast<unsigned>(std::clamp<std::uint64_t>((out.size() + 255) / 256, 1, 8ull * sms));
  check_bytes_kernel<<<grid, 256>>>(reinterpret_cast<const std::uint8_t*>(out.data()), out.size(), e,
                                    reinterpret_cast<unsigned long long*>(first.data()));
  MEMLAB_CUDA_CHECK_LAUNCH();
  unsigned long long bad = 0;
  MEMLAB_CUDA_CHECK(cudaMemcpy(&bad, first.data(), sizeof bad, cudaMemcpyDeviceToHost));
  if (bad == no_mismatch) return {};
  std::uint8_t have = 0;
  MEMLAB_CUDA_CHECK(cudaMemcpy(&have, out.data() + bad, 1, cudaMemcpyDeviceToHost));
  const unsigned got = have, want = e(bad);
  if (bad >= payload_end) {
    return "out-of-bounds store: byte " + std::to_string(bad - payload_end) +
           " past the end of the output was written (" + hex_byte(got) + ")";
  }
  return "byte " + std::to_string(bad) + " is " + hex_byte(got) + ", expected " + hex_byte(want) +
         (got == poison_byte ? ": never written" : "");
}

}  // namespace

std::string check_copy(const device_buffer& out, std::uint64_t n, std::uint64_t seed) {
  expected_bytes e;
  e.payload = n;
  e.seeds[0] = seed;
  return check_on_gpu(out, e, n);
}

std::string check_collective(const device_buffer& out, collective op, std::uint64_t n, int ranks, int rank,
                             bool in_place, const std::vector<std::uint64_t>& seeds) {
  if (ranks > max_checked_ranks) throw std::logic_error("transfer: more ranks than the check holds");
  const collective_buffers b = buffers_of(op, n, ranks);
  expected_bytes e;
  e.collective_output = true;
  e.op = op;
  e.n = n;
  e.ranks = ranks;
  e.rank = rank;
  e.in_place = in_place;
  e.send_step = b.send_step;
  e.recv_from = e.in_place ? b.recv_step * static_cast<std::uint64_t>(rank) : 0;
  e.recv_to = e.recv_from + b.recv;
  for (std::size_t k = 0; k < seeds.size(); ++k) e.seeds[k] = seeds[k];
  return check_on_gpu(out, e, e.in_place ? out.size() : b.recv);
}

}  // namespace memlab::labs::transfer
