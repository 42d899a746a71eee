#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "harness/buffer.hpp"
#include "harness/fill.hpp"
#include "memlab/error.cuh"

namespace memlab {

std::uint64_t next_seed() {
  static std::atomic<std::uint64_t> counter{0};
  const auto now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return mix64(now ^ mix64(counter.fetch_add(1)));
}

namespace {

// Position (within `bytes`) of the first byte that differs from its expectation, or `bytes`.
template <class Expected>
std::size_t first_mismatch(const std::uint8_t* got, std::size_t bytes, Expected expected) {
  const unsigned workers = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  if (bytes < (1u << 20) || workers == 1) {
    for (std::size_t j = 0; j < bytes; ++j)
      if (got[j] != expected(j)) return j;
    return bytes;
  }
  std::vector<std::size_t> first(workers, bytes);
  std::vector<std::thread> pool;
  const std::size_t chunk = (bytes + workers - 1) / workers;
  for (unsigned w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      const std::size_t end = std::min(bytes, (w + 1) * chunk);
      for (std::size_t j = w * chunk; j < end; ++j) {
        if (got[j] != expected(j)) {
          first[w] = j;
          return;
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  return *std::min_element(first.begin(), first.end());
}

std::string hex_byte(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", v);
  return buf;
}

}  // namespace

std::string check_against_stream(const std::byte* alloc, std::size_t alloc_bytes, std::size_t payload_offset,
                                 std::size_t payload_bytes, std::uint64_t seed, std::uint64_t stream_offset,
                                 std::size_t elem_size) {
  // Staged through pinned memory in chunks: bounded host memory, full PCIe speed.
  constexpr std::size_t chunk_bytes = std::size_t{64} << 20;
  pinned_buffer staging(std::min(chunk_bytes, std::max<std::size_t>(alloc_bytes, 1)));
  const std::size_t payload_end = payload_offset + payload_bytes;
  for (std::size_t base = 0; base < alloc_bytes; base += chunk_bytes) {
    const std::size_t len = std::min(chunk_bytes, alloc_bytes - base);
    MEMLAB_CUDA_CHECK(cudaMemcpy(staging.data(), alloc + base, len, cudaMemcpyDeviceToHost));
    const auto* got = reinterpret_cast<const std::uint8_t*>(staging.data());
    auto expected = [&](std::size_t j) {
      const std::size_t pos = base + j;
      if (pos < payload_offset || pos >= payload_end) return poison_byte;
      return random_byte(seed, stream_offset + (pos - payload_offset));
    };
    const std::size_t bad = first_mismatch(got, len, expected);
    if (bad == len) continue;
    const std::size_t pos = base + bad;
    const unsigned want = expected(bad), have = got[bad];
    if (pos < payload_offset) {
      return "out-of-bounds store: byte " + std::to_string(payload_offset - pos) +
             " before the output was written (" + hex_byte(have) + ")";
    }
    if (pos >= payload_end) {
      return "out-of-bounds store: byte " + std::to_string(pos - payload_end) + " past the end of the output was written (" +
             hex_byte(have) + ")";
    }
    const std::size_t off = pos - payload_offset;
    return "element " + std::to_string(off / elem_size) + " (byte " + std::to_string(off % elem_size) + " of it) is " +
           hex_byte(have) + ", expected " + hex_byte(want) + (have == poison_byte ? ": never written" : "");
  }
  return {};
}

}  // namespace memlab
