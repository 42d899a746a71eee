// The gather lab: out[i] = table[idx[i]], the same indices in random or sorted order, tables from
// L2-resident to several times L2.
#include <algorithm>
#include <array>
#include <cstdio>
#include <thread>
#include <vector>

#include "harness/buffer.hpp"
#include "harness/fill.hpp"
#include "harness/sizes.hpp"
#include "labs/gather/gather.hpp"
#include "memlab/error.cuh"

namespace memlab::labs::gather {

std::uint64_t index_seed(std::uint64_t n, std::uint64_t table_elements) {
  return mix64(0x6761746865720000ull ^ mix64(n) ^ mix64(~table_elements));  // "gather"
}

launch_policy plan(std::uint64_t n, std::size_t elem_size) {
  const std::uint64_t tile = std::uint64_t{threads_per_cta} * lookups_per_thread;
  return {threads_per_cta, lookups_per_thread, static_cast<int>(elem_size), 0, (n + tile - 1) / tile};
}

namespace {

const std::array<variant_entry<variant_id>, 2> entries{{
    {variant_id::random,
     {"random", "idx uniform over the table: each lane of a warp reads its own 32-byte sector",
      {"memlab::labs::gather::gather_kernel<", "random_order"}, false}},
    {variant_id::sorted,
     {"sorted", "the same indices ascending: a warp's lookups share sectors and the table streams once",
      {"memlab::labs::gather::gather_kernel<", "sorted_order"}, false}},
}};

const auto infos = infos_of(entries);

constexpr std::array<dtype, 2> gather_dtypes{dtype::f32, dtype::f64};


std::uint64_t table_elements(const case_params& p) { return p.table_bytes / size_of(p.type); }
std::uint64_t out_bytes(const case_params& p) { return p.n * size_of(p.type) + guard_bytes; }

std::string hex_byte(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", v);
  return buf;
}

// The first i in [0, n) where bad(i), or n; split over host threads for large n.
template <class Pred>
std::uint64_t first_where(std::uint64_t n, Pred bad) {
  const unsigned workers = n < (1u << 20) ? 1u : std::clamp(std::thread::hardware_concurrency(), 1u, 16u);
  std::vector<std::uint64_t> first(workers, n);
  auto scan = [&](unsigned w) {
    const std::uint64_t per = (n + workers - 1) / workers;
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

class gather_case final : public prepared_case {
 public:
  gather_case(variant_id v, const case_params& p)
      : v_(v),
        p_(p),
        elem_(size_of(p.type)),
        elements_(table_elements(p)),
        index_seed_(index_seed(p.n, elements_)),
        table_(p.table_bytes),
        out_(out_bytes(p)),
        policy_(plan(p.n, size_of(p.type))) {
    // Both orders come from the same random draw; the sorted copy also gives the distinct count.
    device_buffer random(p.n * sizeof(std::uint32_t)), sorted(p.n * sizeof(std::uint32_t));
    auto* r = reinterpret_cast<std::uint32_t*>(random.data());
    auto* s = reinterpret_cast<std::uint32_t*>(sorted.data());
    generate_random(r, p.n, index_seed_, elements_, nullptr);
    sort_indices(s, r, p.n, elements_);
    stats_ = count_touched(s, v == variant_id::random ? r : s, p.n, elem_);
    idx_ = std::move(v == variant_id::random ? random : sorted);
  }

  [[nodiscard]] launch_policy policy() const override { return policy_; }
  // The table elements the lookups need (each distinct index once), the indices, the output.
  [[nodiscard]] std::uint64_t bytes() const override {
    return stats_.distinct_elements * elem_ + p_.n * sizeof(std::uint32_t) + p_.n * elem_;
  }
  // Table sectors requested per warp access (summed), plus the indices and the output.
  [[nodiscard]] std::uint64_t hardware_bytes() const override {
    return stats_.warp_sectors * sector_bytes + p_.n * sizeof(std::uint32_t) + p_.n * elem_;
  }
  [[nodiscard]] std::uint64_t working_set_bytes() const override {
    return p_.table_bytes + p_.n * sizeof(std::uint32_t) + p_.n * elem_;
  }

  void reset() override {
    seed_ = next_seed();
    fill_random(table_.data(), table_.size(), seed_, nullptr);
    MEMLAB_CUDA_CHECK(cudaMemset(out_.data(), poison_byte, out_.size()));
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void launch(cudaStream_t s) override {
    launch_kernel(v_, p_.type, out_.data(), table_.data(), reinterpret_cast<const std::uint32_t*>(idx_.data()), p_.n,
                  policy_, s);
  }

  [[nodiscard]] std::string verify() override {
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    const std::uint64_t n = p_.n;
    std::vector<std::uint32_t> idx(n);
    std::vector<std::uint8_t> out(out_.size());
    if (n > 0) MEMLAB_CUDA_CHECK(cudaMemcpy(idx.data(), idx_.data(), idx_.size(), cudaMemcpyDeviceToHost));
    MEMLAB_CUDA_CHECK(cudaMemcpy(out.data(), out_.data(), out_.size(), cudaMemcpyDeviceToHost));

    // The indices first: the order the variant claims, over exactly the multiset of the draw.
    if (v_ == variant_id::random) {
      const auto bad = first_where(n, [&](std::uint64_t i) { return idx[i] != random_index(index_seed_, i, elements_); });
      if (bad < n) return "idx[" + std::to_string(bad) + "] = " + std::to_string(idx[bad]) + " is not the random draw";
    } else {
      const auto bad = first_where(n, [&](std::uint64_t i) { return i > 0 && idx[i] < idx[i - 1]; });
      if (bad < n) return "idx is not ascending at " + std::to_string(bad);
      // Same multiset as the draw: equal sums of a hash of each value (order-independent).
      std::uint64_t got = 0, want = 0;
      for (std::uint64_t i = 0; i < n; ++i) {
        got += mix64(idx[i]);
        want += mix64(random_index(index_seed_, i, elements_));
      }
      if (got != want) return "sorted idx is not the same multiset as the random draw";
    }
    const auto outside = first_where(n, [&](std::uint64_t i) { return idx[i] >= elements_; });
    if (outside < n) return "idx[" + std::to_string(outside) + "] = " + std::to_string(idx[outside]) + " is outside the table";

    // The CPU reference: byte b of out[i] is byte idx[i] x elem + b of the table's random stream.
    const std::uint64_t payload = n * elem_;
    auto expected = [&](std::uint64_t pos) -> std::uint8_t {
      if (pos >= payload) return poison_byte;
      return random_byte(seed_, std::uint64_t{idx[pos / elem_]} * elem_ + pos % elem_);
    };
    const auto bad = first_where(out.size(), [&](std::uint64_t pos) { return out[pos] != expected(pos); });
    if (bad == out.size()) return "";
    const unsigned have = out[bad], want = expected(bad);
    if (bad >= payload) return "out-of-bounds store: byte " + std::to_string(bad - payload) + " after the output (" + hex_byte(have) + ")";
    const std::uint64_t i = bad / elem_;
    if (have == poison_byte) return "out[" + std::to_string(i) + "] never written (byte " + std::to_string(bad % elem_) + " still poison)";
    return "out[" + std::to_string(i) + "] byte " + std::to_string(bad % elem_) + ": got " + hex_byte(have) + ", expected " +
           hex_byte(want) + " (table[" + std::to_string(idx[i]) + "])";
  }

 private:
  variant_id v_;
  case_params p_;
  std::size_t elem_;
  std::uint64_t elements_;
  std::uint64_t index_seed_;
  device_buffer table_, out_, idx_;
  launch_policy policy_;
  index_stats stats_;
  std::uint64_t seed_ = 0;
};

constexpr std::array<axis, 1> gather_axes{axis::table_bytes};

class gather_lab_impl final : public lab {
 public:
  [[nodiscard]] std::string_view name() const override { return "gather"; }
  [[nodiscard]] std::string_view teaches() const override {
    return "access order: the same lookups in random or sorted order, tables from L2-resident to several x L2";
  }
  [[nodiscard]] std::span<const variant_info> variants() const override { return infos; }
  [[nodiscard]] std::span<const dtype> dtypes() const override { return gather_dtypes; }
  [[nodiscard]] dtype default_dtype() const override { return dtype::f32; }
  [[nodiscard]] std::string_view default_sizes() const override { return "2^24,2^26"; }
  [[nodiscard]] std::string_view size_meaning() const override { return "lookups (elements gathered)"; }
  [[nodiscard]] std::span<const axis> axes() const override { return gather_axes; }
  // Fixed sizes, not relative to the device's L2 (default_axes() does not see the device): chosen
  // around the H100's 50 MiB L2, 200 MiB = 4 x L2 (the acceptance point).
  [[nodiscard]] axis_values default_axes() const override {
    axis_values a;
    a.table_bytes = {8ull << 20, 32ull << 20, 128ull << 20, 200ull << 20, 512ull << 20, 2048ull << 20};
    return a;
  }

  [[nodiscard]] std::optional<std::string> unsupported(std::string_view variant, const case_params& p,
                                                       const device_info& /*dev*/) const override {
    if (!variant_by_name(variant)) return "unknown variant '" + std::string(variant) + "'";
    if (std::find(gather_dtypes.begin(), gather_dtypes.end(), p.type) == gather_dtypes.end()) {
      return "gather is built for f32 and f64 (got " + std::string(to_string(p.type)) + ")";
    }
    const std::uint64_t es = size_of(p.type);
    if (p.n > max_lookups) {
      return "at most 2^31 lookups (the sorted order is made by a merge sort with 32-bit counts, and the check holds idx and out on the host; got " +
             std::to_string(p.n) + ")";
    }
    if (p.table_bytes == 0) return std::string("a table of 0 bytes has nothing to gather from (--table-bytes)");
    if (p.table_bytes % es != 0) {
      return "--table-bytes " + std::to_string(p.table_bytes) + " is not a whole number of " + std::to_string(es) +
             "-byte " + std::string(to_string(p.type)) + " elements";
    }
    if (p.table_bytes / es > max_table_elements) {
      return "a table of " + std::to_string(p.table_bytes / es) + " elements needs indices wider than u32 (at most 2^32 elements, " +
             format_bytes(max_table_elements * es) + ")";
    }
    return std::nullopt;
  }

  [[nodiscard]] std::vector<param> params(const case_params& p) const override {
    return {{"dtype", std::string(to_string(p.type))},
            {"n", static_cast<std::int64_t>(p.n)},
            {"table_bytes", static_cast<std::int64_t>(p.table_bytes)}};
  }

  // While a case is prepared: the table, the output, both orders of the indices and the merge
  // sort's scratch (about one more copy of the keys).
  [[nodiscard]] std::uint64_t device_bytes(const case_params& p) const override {
    return p.table_bytes + out_bytes(p) + 3 * p.n * sizeof(std::uint32_t) + (std::uint64_t{1} << 20);
  }

  [[nodiscard]] std::unique_ptr<prepared_case> prepare(std::string_view variant, const case_params& p,
                                                       const device_info& /*dev*/) const override {
    const auto v = variant_by_name(variant);
    if (!v) throw std::invalid_argument("gather: unknown variant '" + std::string(variant) + "'");
    if (auto why = unsupported(variant, p, device_info{})) throw std::invalid_argument("gather: " + *why);
    return std::make_unique<gather_case>(*v, p);
  }
};

}  // namespace

std::optional<variant_id> variant_by_name(std::string_view name) { return id_by_name(entries, name); }

const lab& gather_lab() {
  static const gather_lab_impl instance;
  return instance;
}

}  // namespace memlab::labs::gather
