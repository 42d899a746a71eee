// The harness's checks of a case's output against its CPU reference:
//   check_bytes  byte for byte, for copies (every lab that moves data without arithmetic);
//   check_elements_from  byte for byte, for an output of whole input elements in another order;
//   check_close  |got - ref| <= tol + |ref| x eps, for arithmetic (NaN never passes).
// Both return "" when the output agrees, else one line on the first difference.
#pragma once

#include <cuda/cmath>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "harness/text.hpp"

namespace memlab {

// The first i in [0, n) where bad(i), or n; large ranges split over host threads.
template <class Pred>
std::uint64_t first_where(std::uint64_t n, Pred&& bad) {
  const unsigned workers = n < (1u << 20) ? 1u : std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  std::vector<std::uint64_t> first(workers, n);
  auto scan = [&](unsigned w) {
    const std::uint64_t per = cuda::ceil_div(n, workers);
    const std::uint64_t end = std::min(n, (w + 1) * per);
    for (std::uint64_t i = w * per; i < end; ++i) {
      if (bad(i)) {
        first[w] = i;
        return;
      }
    }
  };
  if (workers == 1) {
    scan(0);
  } else {
    std::vector<std::thread> pool;
    for (unsigned w = 0; w < workers; ++w) pool.emplace_back(scan, w);
    for (auto& t : pool) t.join();
  }
  return *std::min_element(first.begin(), first.end());
}

namespace detail {
inline std::string no_context(std::uint64_t /*element*/) { return {}; }

}  // namespace detail

// Compares an output allocation with what it must hold, byte for byte, on the host:
//   [0, payload_offset)            poison (nothing may be stored before the output);
//   [payload_offset, + payload)    expected(j) for payload byte j, which may itself be poison_byte
//                                  where the kernel must leave a gap (a strided store);
//   the rest (the guard)           poison.
// Messages count elements of `elem_size` bytes; `context(element)` may add what the element
// should have come from ("(source element 12)"). Staged through pinned memory, 64 MiB at a time.
template <class Expected, class Context = std::string (*)(std::uint64_t)>
std::string check_bytes(const device_buffer& out, std::uint64_t payload_offset, std::uint64_t payload_bytes,
                        std::size_t elem_size, Expected&& expected, Context&& context = detail::no_context) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  constexpr std::size_t chunk_bytes = std::size_t{64} << 20;
  const std::size_t total = out.size();
  const std::uint64_t payload_end = payload_offset + payload_bytes;
  pinned_buffer staging(std::min(chunk_bytes, std::max<std::size_t>(total, 1)));
  const auto want = [&](std::uint64_t pos) -> std::uint8_t {
    return pos < payload_offset || pos >= payload_end ? poison_byte : expected(pos - payload_offset);
  };
  for (std::size_t base = 0; base < total; base += chunk_bytes) {
    const std::size_t len = std::min(chunk_bytes, total - base);
    MEMLAB_CUDA_CHECK(cudaMemcpy(staging.data(), out.data() + base, len, cudaMemcpyDeviceToHost));
    const auto* got = reinterpret_cast<const std::uint8_t*>(staging.data());
    const std::uint64_t bad = first_where(len, [&](std::uint64_t j) { return got[j] != want(base + j); });
    if (bad == len) continue;
    const std::uint64_t pos = base + bad;
    const unsigned have = got[bad], should = want(pos);
    if (pos < payload_offset) {
      return "out-of-bounds store: byte " + std::to_string(payload_offset - pos) + " before the output was written (" +
             hex_byte(have) + ")";
    }
    if (pos >= payload_end) {
      return "out-of-bounds store: byte " + std::to_string(pos - payload_end) +
             " past the end of the output was written (" + hex_byte(have) + ")";
    }
    const std::uint64_t off = pos - payload_offset, e = off / elem_size;
    const std::string where = "element " + std::to_string(e) + " (byte " + std::to_string(off % elem_size) + " of it)";
    const std::string more = context(e);
    if (should == poison_byte) {
      return "stray store: " + where + " is " + hex_byte(have) + " where nothing may be written" +
             (more.empty() ? "" : " " + more);
    }
    return where + " is " + hex_byte(have) + ", expected " + hex_byte(should) +
           (have == poison_byte ? ": never written" : "") + (more.empty() ? "" : " " + more);
  }
  return {};
}

// The poisoned guard after an output's first `payload_bytes` bytes: "" while untouched, else the first
// byte a stray store wrote. For labs that compare the payload their own way (within a tolerance, bit
// for bit as values); check_bytes and check_elements_from check the guard themselves.
inline std::string check_guard(const device_buffer& out, std::uint64_t payload_bytes,
                               std::string_view what = "the output") {
  std::vector<std::uint8_t> guard(out.size() - payload_bytes);
  if (guard.empty()) return {};
  MEMLAB_CUDA_CHECK(cudaMemcpy(guard.data(), out.data() + payload_bytes, guard.size(), cudaMemcpyDeviceToHost));
  for (std::size_t k = 0; k < guard.size(); ++k) {
    if (guard[k] != poison_byte) {
      return "out-of-bounds store: byte " + std::to_string(k) + " past the end of " + std::string(what) +
             " was written (" + hex_byte(guard[k]) + ")";
    }
  }
  return {};
}

// An output of `elements` elements of `elem_size` bytes (a power of two) where element e must be
// input element source(e) of the input filled from `seed` (fill.hpp): a transpose, one field of
// each structure. `source` is called for every byte, from several host threads at once.
template <class Source>
std::string check_elements_from(const device_buffer& out, std::uint64_t elements, std::size_t elem_size,
                                std::uint64_t seed, Source&& source) {
  const int shift = std::countr_zero(elem_size);  // pos / elem_size without a division per byte
  return check_bytes(
      out, 0, elements * elem_size, elem_size,
      [&](std::uint64_t pos) { return random_byte(seed, source(pos >> shift) * elem_size + (pos & (elem_size - 1))); },
      [&](std::uint64_t e) { return "(input element " + std::to_string(source(e)) + ")"; });
}

// got[i] against ref[i] for i < n: |got - ref| <= tol + |ref| x eps, and NaN or infinity in `got`
// never passes. `tol` and `eps` come from the lab's error analysis (say how in the lab).
template <class T, class Context = std::string (*)(std::uint64_t)>
std::string check_close(const T* got, const double* ref, std::uint64_t n, double tol, double eps,
                        Context&& context = detail::no_context) {
  const auto bad = first_where(n, [&](std::uint64_t i) {
    const double g = static_cast<double>(got[i]);
    return !std::isfinite(g) || !(std::fabs(g - ref[i]) <= tol + std::fabs(ref[i]) * eps);
  });
  if (bad == n) return {};
  const double g = static_cast<double>(got[bad]);
  const std::string more = context(bad);
  return "element " + std::to_string(bad) + " is " + fixed_g(g) + ", expected " + fixed_g(ref[bad]) + " within " +
         fixed_g(tol + std::fabs(ref[bad]) * eps) + " (|error| " + fixed_g(std::fabs(g - ref[bad])) + ")" +
         (more.empty() ? "" : " " + more);
}

}  // namespace memlab
