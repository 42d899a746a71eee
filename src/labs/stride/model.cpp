// The stride lab's host-side model: which elements each variant touches, its launch policy, and
// the exact count of 32-byte sectors its warps touch (hardware bytes). Host-only; tested against
// a brute-force replay in tests/labs/stride/test_stride_plan.cpp.
#include <cuda/cmath>

#include <algorithm>

#include "labs/stride/stride.hpp"

namespace memlab::labs::stride {

access_strides strides_of(const stride_rung& r, std::uint64_t stride) {
  return {r.strided_src ? stride : 1, r.strided_dst ? stride : 1};
}

launch_policy plan(const stride_rung& r, std::size_t elem_size, std::uint64_t n, std::uint64_t src_offset) {
  if (r.vector_bytes == 16) {
    const std::uint64_t main = vec16_main_vectors(n * elem_size, src_offset % 16);
    // Threads 0..main: one per vector, and thread `main` copies the element-wise rest.
    return {.threads = threads_per_cta,
            .items_per_thread = 1,
            .vec_bytes = 16,
            .grid = n == 0 ? 0 : cuda::ceil_div(main + 1, threads_per_cta)};
  }
  const auto items = static_cast<int>(bytes_per_thread / static_cast<int>(elem_size));
  const std::uint64_t tile = std::uint64_t{threads_per_cta} * static_cast<std::uint64_t>(items);
  return {.threads = threads_per_cta,
          .items_per_thread = items,
          .vec_bytes = static_cast<int>(elem_size),
          .grid = cuda::ceil_div(n, tile)};
}

namespace {

// Distinct sectors of `count` element accesses of `width` bytes at first, first + step, ... (all
// element-aligned, so none straddles a sector). Steps of a sector or more put each access in its
// own sector; shorter steps leave no gap a whole sector fits in, so the span counts.
std::uint64_t sectors_of_sequence(std::uint64_t first, std::uint64_t step, std::uint64_t count, std::uint64_t width) {
  if (count == 0) return 0;
  if (step >= sector_bytes) return count;
  const std::uint64_t last = first + (count - 1) * step + width - 1;
  return last / sector_bytes - first / sector_bytes + 1;
}

}  // namespace

sector_count sectors_touched(const stride_rung& r, std::size_t elem_size, std::uint64_t n, std::uint64_t stride,
                             std::uint64_t src_offset) {
  sector_count c;
  const std::uint64_t es = elem_size;
  if (r.vector_bytes != 16) {
    const access_strides st = strides_of(r, stride);
    for (std::uint64_t first = 0; first < n; first += warp_size) {
      const std::uint64_t count = std::min(warp_size, n - first);
      c.read += sectors_of_sequence(src_offset + first * st.src * es, st.src * es, count, es);
      c.write += sectors_of_sequence(first * st.dst * es, st.dst * es, count, es);
    }
    return c;
  }
  // vec16: mirrors vec16_kernel's accesses, warp by warp (threads 0..main).
  const std::uint64_t bytes = n * es;
  if (n == 0) return c;
  const std::uint64_t m = src_offset % 16;
  const std::uint64_t main = vec16_main_vectors(bytes, m);
  const std::uint64_t aligned_base = src_offset - m;  // allocation byte of aligned source vector 0
  for (std::uint64_t w0 = 0; w0 <= main; w0 += warp_size) {
    const std::uint64_t w1 = w0 + warp_size;  // this warp's threads: [w0, w1)
    const bool has_tail = main >= w0 && main < w1 && main * 16 < bytes;
    const byte_range tail_src = has_tail ? byte_range{src_offset + main * 16, src_offset + bytes} : byte_range{};
    const byte_range tail_dst = has_tail ? byte_range{main * 16, bytes} : byte_range{};
    const std::uint64_t stored_end = std::min(w1, main);  // threads w0 .. stored_end - 1 store a vector
    const byte_range vec_dst = stored_end > w0 ? byte_range{w0 * 16, stored_end * 16} : byte_range{};
    byte_range vec_src;
    if (m == 0) {
      if (stored_end > w0) vec_src = {src_offset + w0 * 16, src_offset + stored_end * 16};
    } else {
      // Loaded: threads j < main, and thread main unless it is lane 0; plus lane 31's vector j + 1.
      std::uint64_t loaded_end = stored_end;
      if (main >= w0 && main < w1 && main % warp_size != 0) loaded_end = main + 1;
      if (w1 - 1 < main) loaded_end = w1 + 1;
      if (loaded_end > w0) vec_src = {aligned_base + w0 * 16, aligned_base + loaded_end * 16};
    }
    c.read += sectors_of(vec_src, tail_src);
    c.write += sectors_of(vec_dst, tail_dst);
  }
  return c;
}

}  // namespace memlab::labs::stride
