// The stride lab: a copy whose neighbouring threads touch elements `stride` apart (coalescing),
// and a 16-byte vector copy from any element offset of the source (alignment).
#include <algorithm>
#include <array>
#include <cstdio>
#include <thread>
#include <vector>

#include "harness/buffer.hpp"
#include "harness/fill.hpp"
#include "labs/stride/stride.hpp"
#include "memlab/error.cuh"

namespace memlab::labs::stride {

access_strides strides_of(variant_id v, std::uint64_t stride) {
  switch (v) {
    case variant_id::strided: return {stride, 1};
    case variant_id::strided_write: return {1, stride};
    case variant_id::strided_rw: return {stride, stride};
    case variant_id::vec16: return {1, 1};
  }
  return {};
}

launch_policy plan(variant_id v, std::size_t elem_size, std::uint64_t n, std::uint64_t src_offset) {
  auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; };
  if (v == variant_id::vec16) {
    const std::uint64_t main = vec16_main_vectors(n * elem_size, src_offset % 16);
    // Threads 0..main: one per vector, and thread `main` copies the element-wise rest.
    return {threads_per_cta, 1, 16, 0, n == 0 ? 0 : ceil_div(main + 1, threads_per_cta)};
  }
  const auto items = static_cast<int>(bytes_per_thread / static_cast<int>(elem_size));
  const std::uint64_t tile = std::uint64_t{threads_per_cta} * static_cast<std::uint64_t>(items);
  return {threads_per_cta, items, static_cast<int>(elem_size), 0, ceil_div(n, tile)};
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

struct byte_range {
  std::uint64_t lo = 0, hi = 0;  // [lo, hi)
};

// Distinct sectors of the union of two byte ranges (either may be empty).
std::uint64_t sectors_of_ranges(byte_range a, byte_range b) {
  auto len = [](std::uint64_t s0, std::uint64_t s1) { return s1 >= s0 ? s1 - s0 + 1 : 0; };
  const bool ea = a.hi <= a.lo, eb = b.hi <= b.lo;
  if (ea && eb) return 0;
  const std::uint64_t a0 = a.lo / sector_bytes, a1 = ea ? 0 : (a.hi - 1) / sector_bytes;
  const std::uint64_t b0 = b.lo / sector_bytes, b1 = eb ? 0 : (b.hi - 1) / sector_bytes;
  if (ea) return len(b0, b1);
  if (eb) return len(a0, a1);
  const std::uint64_t overlap = len(std::max(a0, b0), std::min(a1, b1));
  return len(a0, a1) + len(b0, b1) - overlap;
}

}  // namespace

sector_count sectors_touched(variant_id v, std::size_t elem_size, std::uint64_t n, std::uint64_t stride,
                             std::uint64_t src_offset) {
  sector_count c;
  const std::uint64_t es = elem_size;
  if (v != variant_id::vec16) {
    const access_strides st = strides_of(v, stride);
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
    c.read += sectors_of_ranges(vec_src, tail_src);
    c.write += sectors_of_ranges(vec_dst, tail_dst);
  }
  return c;
}

namespace {

// In variant_id order (stride_case indexes it by id).
const std::array<variant_entry<variant_id>, 4> entries{{
    {variant_id::strided,
     {"strided", "thread e reads src[e x stride], writes dst[e]: a warp's loads span 32 x stride elements",
      {"memlab::labs::stride::strided_kernel<"}, false}},
    {variant_id::strided_write,
     {"strided_write", "thread e reads src[e], writes dst[e x stride]: coalesced loads, scattered partial-sector stores",
      {"memlab::labs::stride::strided_write_kernel<"}, false}},
    {variant_id::strided_rw,
     {"strided_rw", "thread e copies element e x stride: both sides scattered",
      {"memlab::labs::stride::strided_rw_kernel<"}, false}},
    {variant_id::vec16,
     {"vec16", "stride 1, 16-byte loads and stores from any element offset: a misaligned source is read aligned "
               "and realigned through a warp shuffle (+1 vector per warp)",
      {"memlab::labs::stride::vec16_kernel<"}, false}},
}};

const auto infos = infos_of(entries);


// The source to its exact last element (so compute-sanitizer flags any read past it); the
// destination, gaps included, with a poisoned guard after it.
std::uint64_t src_bytes(variant_id v, const case_params& p) {
  return p.src_offset + extent(p.n, strides_of(v, p.stride).src) * size_of(p.type);
}
std::uint64_t dst_bytes(variant_id v, const case_params& p) {
  return extent(p.n, strides_of(v, p.stride).dst) * size_of(p.type) + guard_bytes;
}

std::string hex_byte(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", v);
  return buf;
}

// Compares the destination allocation with the CPU reference, byte for byte: destination element
// e x dst_stride (e < n) holds source element e x src_stride, i.e. the random stream at
// src_offset + e x src_stride x elem; every other byte (the gaps between scattered stores, the
// guard) is still poison. Staged through pinned memory; each chunk checked by several threads.
std::string check_strided(const std::byte* alloc, std::size_t alloc_bytes, std::uint64_t n, std::size_t es,
                          access_strides st, std::uint64_t src_offset, std::uint64_t seed) {
  constexpr std::size_t chunk_bytes = std::size_t{64} << 20;
  pinned_buffer staging(std::min(chunk_bytes, std::max<std::size_t>(alloc_bytes, 1)));
  auto expected = [&](std::uint64_t pos) -> std::uint8_t {
    const std::uint64_t e = pos / es;
    if (e % st.dst != 0 || e / st.dst >= n) return poison_byte;
    return random_byte(seed, src_offset + (e / st.dst) * st.src * es + pos % es);
  };
  const unsigned workers = std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  for (std::size_t base = 0; base < alloc_bytes; base += chunk_bytes) {
    const std::size_t len = std::min(chunk_bytes, alloc_bytes - base);
    MEMLAB_CUDA_CHECK(cudaMemcpy(staging.data(), alloc + base, len, cudaMemcpyDeviceToHost));
    const auto* got = reinterpret_cast<const std::uint8_t*>(staging.data());
    // Small chunks in one thread; large ones split in `parts` shares, each stopping at its first miss.
    const unsigned parts = len < (std::size_t{1} << 20) ? 1u : workers;
    std::vector<std::size_t> first(parts, len);
    auto scan = [&](unsigned w) {
      const std::size_t per = (len + parts - 1) / parts;
      const std::size_t end = std::min(len, (w + 1) * per);
      for (std::size_t j = w * per; j < end; ++j) {
        if (got[j] != expected(base + j)) {
          first[w] = j;
          return;
        }
      }
    };
    if (parts == 1) {
      scan(0);
    } else {
      std::vector<std::thread> pool;
      for (unsigned w = 0; w < parts; ++w) pool.emplace_back(scan, w);
      for (auto& t : pool) t.join();
    }
    const std::size_t bad = *std::min_element(first.begin(), first.end());
    if (bad == len) continue;
    const std::uint64_t pos = base + bad;
    const unsigned want = expected(pos), have = got[bad];
    const std::uint64_t e = pos / es;
    const std::uint64_t payload_end = extent(n, st.dst) * es;
    if (pos >= payload_end) {
      return "out-of-bounds store: byte " + std::to_string(pos - payload_end) + " after the output (" +
             hex_byte(have) + ")";
    }
    if (want == poison_byte) {
      return "stray store into the gap at destination element " + std::to_string(e) + " (" + hex_byte(have) +
             "; only every " + std::to_string(st.dst) + "th element is written)";
    }
    const std::uint64_t i = e / st.dst;
    if (have == poison_byte) {
      return "element " + std::to_string(i) + " never written (byte " + std::to_string(pos % es) + " still poison)";
    }
    return "element " + std::to_string(i) + " byte " + std::to_string(pos % es) + ": got " + hex_byte(have) +
           ", expected " + hex_byte(want) + " (source element " + std::to_string(i * st.src) + ")";
  }
  return "";
}

class stride_case final : public prepared_case {
 public:
  stride_case(variant_id v, const case_params& p)
      : v_(v),
        p_(p),
        elem_(size_of(p.type)),
        strides_(strides_of(v, p.stride)),
        src_(src_bytes(v, p)),
        dst_(dst_bytes(v, p)),
        policy_(plan(v, elem_, p.n, p.src_offset)),
        sectors_(sectors_touched(v, elem_, p.n, p.stride, p.src_offset)) {}

  [[nodiscard]] launch_policy policy() const override { return policy_; }
  // Useful bytes: n elements read, n written, whatever the stride.
  [[nodiscard]] std::uint64_t bytes() const override { return 2 * p_.n * elem_; }
  [[nodiscard]] std::uint64_t hardware_bytes() const override {
    return (sectors_.read + sectors_.write) * sector_bytes;
  }
  // What the caches must hold: every sector touched, not just the useful bytes.
  [[nodiscard]] std::uint64_t working_set_bytes() const override { return hardware_bytes(); }

  void reset() override {
    seed_ = next_seed();
    fill_random(src_.data(), src_.size(), seed_, nullptr);
    if (dst_.size() > 0) MEMLAB_CUDA_CHECK(cudaMemset(dst_.data(), poison_byte, dst_.size()));
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void launch(cudaStream_t s) override {
    launch_kernel(v_, p_.type, dst_.data(), src_.data() + p_.src_offset, p_.n, p_.stride, policy_, s);
  }

  [[nodiscard]] std::string verify() override {
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    return check_strided(dst_.data(), dst_.size(), p_.n, elem_, strides_, p_.src_offset, seed_);
  }

 private:
  variant_id v_;
  case_params p_;
  std::size_t elem_;
  access_strides strides_;
  device_buffer src_, dst_;
  launch_policy policy_;
  sector_count sectors_;
  std::uint64_t seed_ = 0;
};

constexpr std::array<axis, 2> stride_axes{axis::stride, axis::src_offset};

class stride_lab_impl final : public lab {
 public:
  [[nodiscard]] std::string_view name() const override { return "stride"; }
  [[nodiscard]] std::string_view teaches() const override {
    return "coalescing: useful vs sector bandwidth as neighbouring threads' addresses move apart, and the cost "
           "of a misaligned start";
  }
  [[nodiscard]] std::span<const variant_info> variants() const override { return infos; }
  [[nodiscard]] std::span<const dtype> dtypes() const override { return all_dtypes(); }
  [[nodiscard]] dtype default_dtype() const override { return dtype::f32; }
  // 2^26 f32 is 256 MiB of useful reads (5x the H100's L2); at stride 32 the source spans 8 GiB.
  [[nodiscard]] std::string_view default_sizes() const override { return "2^24,2^26"; }
  [[nodiscard]] std::string_view size_meaning() const override { return "elements copied (useful)"; }
  [[nodiscard]] std::span<const axis> axes() const override { return stride_axes; }
  [[nodiscard]] axis_values default_axes() const override {
    axis_values a;
    a.stride = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
    a.src_offset = {0};
    return a;
  }

  [[nodiscard]] std::optional<std::string> unsupported(std::string_view variant, const case_params& p,
                                                       const device_info& /*dev*/) const override {
    const auto v = variant_by_name(variant);
    if (!v) return "unknown variant '" + std::string(variant) + "'";
    const std::uint64_t es = size_of(p.type);
    if (p.stride == 0) return std::string("a stride of 0 elements is not a strided access (use 1..)");
    if (p.src_offset % es != 0) {
      return "--src-offset is in bytes and must be a multiple of the " + std::to_string(es) + "-byte " +
             std::string(to_string(p.type)) + " element (got " + std::to_string(p.src_offset) + " B)";
    }
    if (*v == variant_id::vec16 && p.stride != 1) {
      return "vec16 copies a dense source (stride 1): one 16-byte vector holds neighbouring elements (got stride " +
             std::to_string(p.stride) + ")";
    }
    // Byte counts (offset + the span of n accesses stride apart) must stay far from 64-bit overflow.
    constexpr std::uint64_t limit = std::uint64_t{1} << 62;
    if (p.src_offset > limit || (p.n > 1 && (p.n - 1) > (limit / es) / p.stride)) {
      return "n = " + std::to_string(p.n) + " at stride " + std::to_string(p.stride) + " spans more than 2^62 bytes";
    }
    return std::nullopt;
  }

  [[nodiscard]] std::vector<param> params(const case_params& p) const override {
    return {{"dtype", std::string(to_string(p.type))},
            {"n", static_cast<std::int64_t>(p.n)},
            {"stride", static_cast<std::int64_t>(p.stride)},
            {"src_offset", static_cast<std::int64_t>(p.src_offset)}};
  }

  [[nodiscard]] std::uint64_t device_bytes(const case_params& p) const override {
    const auto v = variant_by_name("strided_rw");  // the largest footprint of any variant
    return src_bytes(*v, p) + dst_bytes(*v, p);
  }

  [[nodiscard]] std::unique_ptr<prepared_case> prepare(std::string_view variant, const case_params& p,
                                                       const device_info& /*dev*/) const override {
    const auto v = variant_by_name(variant);
    if (!v) throw std::invalid_argument("stride: unknown variant '" + std::string(variant) + "'");
    if (auto why = unsupported(variant, p, device_info{})) throw std::invalid_argument("stride: " + *why);
    return std::make_unique<stride_case>(*v, p);
  }
};

}  // namespace

std::optional<variant_id> variant_by_name(std::string_view name) { return id_by_name(entries, name); }

const lab& stride_lab() {
  static const stride_lab_impl instance;
  return instance;
}

}  // namespace memlab::labs::stride
