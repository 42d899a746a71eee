// The copy lab: 1D copy of n elements, from one element per thread to several 16-byte vectors in
// flight, next to cudaMemcpy, CUB and Thrust.
#include <algorithm>
#include <array>

#include "harness/buffer.hpp"
#include "harness/fill.hpp"
#include "labs/copy/copy.hpp"
#include "memlab/error.cuh"

namespace memlab::labs::copy {

int required_alignment(variant_id v) {
  switch (v) {
    case variant_id::vec8: return 8;
    case variant_id::vec16:
    case variant_id::vec16_unroll: return 16;
    default: return 0;
  }
}

launch_policy plan(variant_id v, std::size_t elem_size, std::uint64_t n, int sm_count) {
  auto ceil_div = [](std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; };
  const std::uint64_t bytes = n * elem_size;
  switch (v) {
    case variant_id::scalar:
      return {threads_per_cta, 1, static_cast<int>(elem_size), 0, ceil_div(n, threads_per_cta)};
    case variant_id::vec8:
    case variant_id::vec16: {
      const std::uint64_t vb = v == variant_id::vec8 ? 8 : 16;
      const std::uint64_t vectors = bytes / vb;
      const std::uint64_t tail_thread = vectors * vb != bytes ? 1 : 0;  // the thread that copies the tail
      return {threads_per_cta, 1, static_cast<int>(vb), 0, ceil_div(vectors + tail_thread, threads_per_cta)};
    }
    case variant_id::vec16_unroll: {
      const std::uint64_t vectors = bytes / 16;
      const std::uint64_t cta_bytes = std::uint64_t{threads_per_cta} * unroll_vectors * 16;  // in flight per CTA
      const std::uint64_t resident = std::max<std::uint64_t>(1, bytes_in_flight_per_sm / cta_bytes) *
                                     static_cast<std::uint64_t>(std::max(sm_count, 1));
      std::uint64_t grid = std::min(ceil_div(vectors, std::uint64_t{threads_per_cta} * unroll_vectors), resident);
      if (grid == 0 && n > 0) grid = 1;  // a tail and no whole vector
      return {threads_per_cta, unroll_vectors, 16, 0, grid};
    }
    default:
      return {};  // peers choose their own launch configuration
  }
}

namespace {

// The ladder, then the peers, in variant_id order (copy_case indexes it by id).
// kernel_name_contains: fragments of the demangled kernel names.
const std::array<variant_entry<variant_id>, 8> entries{{
    {variant_id::scalar,
     {"scalar", "one element per thread: 1- and 2-byte types waste most of each memory instruction",
      {"memlab::labs::copy::scalar_kernel<"}, false}},
    {variant_id::vec8,
     {"vec8", "one 8-byte vector per thread (64-bit loads and stores)", {"memlab::labs::copy::vec8_kernel<"}, false}},
    {variant_id::vec16,
     {"vec16", "one 16-byte vector per thread (128-bit loads and stores), tail element-wise",
      {"memlab::labs::copy::vec16_kernel<"}, false}},
    {variant_id::vec16_unroll,
     {"vec16_unroll", "4 x 16-byte vectors in flight per thread, grid-stride, grid sized by bytes in flight per SM",
      {"memlab::labs::copy::vec16_unroll_kernel<"}, false}},
    {variant_id::library,
     {"auto",
      "memlab::copy: 16-byte loads and stores at any alignment (byte-wise head and tail, funnel-shift realignment "
      "when src and dst are misaligned to each other), one short-lived grid",
      {"memlab::detail::copy_"}, false}},
    {variant_id::memcpy, {"memcpy", "cudaMemcpyAsync device to device", {}, true}},
    {variant_id::cub,
     {"cub", "cub::DeviceTransform::Transform with an identity functor",
      {"cub::", "transform_kernel", "memlab::labs::copy::identity_op"}, true}},
    // CCCL 3.0 forwards thrust::copy of trivially copyable, contiguous data to cudaMemcpyAsync
    // (thrust/system/cuda/detail/internal/copy_device_to_device.h): no kernel of its own.
    {variant_id::thrust, {"thrust", "thrust::copy on raw device pointers (CCCL forwards it to cudaMemcpyAsync)", {}, true}},
}};

const auto infos = infos_of(entries);


// The two allocations of a case: the source to its exact end (so compute-sanitizer flags any read
// past it), the destination with a poisoned guard after it.
std::uint64_t src_bytes(const case_params& p) { return p.src_offset + p.n * size_of(p.type); }
std::uint64_t dst_bytes(const case_params& p) { return p.dst_offset + p.n * size_of(p.type) + guard_bytes; }

class copy_case final : public prepared_case {
 public:
  copy_case(variant_id v, const case_params& p, const device_info& dev)
      : v_(v),
        peer_(entries[static_cast<std::size_t>(v)].info.peer),
        p_(p),
        elem_(size_of(p.type)),
        payload_(p.n * elem_),
        src_(src_bytes(p)),
        dst_(dst_bytes(p)),
        policy_(v == variant_id::library
                    ? plan_library(dst_.data() + p.dst_offset, src_.data() + p.src_offset, payload_)
                    : plan(v, elem_, p.n, dev.sm_count)) {}

  [[nodiscard]] launch_policy policy() const override { return policy_; }
  [[nodiscard]] std::uint64_t bytes() const override { return 2 * payload_; }  // read n, write n
  [[nodiscard]] std::uint64_t working_set_bytes() const override { return 2 * payload_; }

  void reset() override {
    seed_ = next_seed();
    fill_random(src_.data(), src_.size(), seed_, nullptr);
    if (dst_.size() > 0) MEMLAB_CUDA_CHECK(cudaMemset(dst_.data(), poison_byte, dst_.size()));
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  }

  void launch(cudaStream_t s) override {
    void* dst = dst_.data() + p_.dst_offset;
    const void* src = src_.data() + p_.src_offset;
    if (v_ == variant_id::library) {
      launch_library(p_.type, dst, src, p_.n, s);
    } else if (peer_) {
      launch_peer(v_, p_.type, dst, src, p_.n, s);
    } else {
      launch_kernel(v_, p_.type, dst, src, p_.n, policy_, s);
    }
  }

  [[nodiscard]] std::string verify() override {
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    // The CPU reference of a copy: output byte j is input byte src_offset + j of the random stream.
    return check_against_stream(dst_.data(), dst_.size(), p_.dst_offset, payload_, seed_, p_.src_offset, elem_);
  }

 private:
  variant_id v_;
  bool peer_;
  case_params p_;
  std::size_t elem_;
  std::uint64_t payload_;
  device_buffer src_, dst_;
  launch_policy policy_;
  std::uint64_t seed_ = 0;
};

constexpr std::array<axis, 2> copy_axes{axis::src_offset, axis::dst_offset};

class copy_lab_impl final : public lab {
 public:
  [[nodiscard]] std::string_view name() const override { return "copy"; }
  [[nodiscard]] std::string_view teaches() const override {
    return "scalar vs vectorized global copies: access width, bytes in flight, and the library peers";
  }
  [[nodiscard]] std::span<const variant_info> variants() const override { return infos; }
  [[nodiscard]] std::span<const dtype> dtypes() const override { return all_dtypes(); }
  [[nodiscard]] dtype default_dtype() const override { return dtype::f32; }
  [[nodiscard]] std::string_view default_sizes() const override { return "2^16..2^28:*4"; }
  [[nodiscard]] std::string_view size_meaning() const override { return "elements copied"; }
  [[nodiscard]] std::span<const axis> axes() const override { return copy_axes; }

  [[nodiscard]] std::optional<std::string> unsupported(std::string_view variant, const case_params& p,
                                                       const device_info& /*dev*/) const override {
    const auto v = variant_by_name(variant);
    if (!v) return "unknown variant '" + std::string(variant) + "'";
    const std::size_t es = size_of(p.type);
    if (p.src_offset % es != 0 || p.dst_offset % es != 0) {
      return "offsets must be multiples of the " + std::to_string(es) + "-byte " + std::string(to_string(p.type)) +
             " element (src +" + std::to_string(p.src_offset) + " B, dst +" + std::to_string(p.dst_offset) + " B)";
    }
    const int align = required_alignment(*v);
    if (align > 0 && (p.src_offset % static_cast<std::uint64_t>(align) != 0 ||
                      p.dst_offset % static_cast<std::uint64_t>(align) != 0)) {
      return std::string(variant) + " needs src and dst " + std::to_string(align) + "-byte aligned (src +" +
             std::to_string(p.src_offset) + " B, dst +" + std::to_string(p.dst_offset) + " B)";
    }
    return std::nullopt;
  }

  [[nodiscard]] std::vector<param> params(const case_params& p) const override {
    return {{"dtype", std::string(to_string(p.type))},
            {"n", static_cast<std::int64_t>(p.n)},
            {"src_offset", static_cast<std::int64_t>(p.src_offset)},
            {"dst_offset", static_cast<std::int64_t>(p.dst_offset)}};
  }

  [[nodiscard]] std::uint64_t device_bytes(const case_params& p) const override {
    return src_bytes(p) + dst_bytes(p);
  }

  [[nodiscard]] std::unique_ptr<prepared_case> prepare(std::string_view variant, const case_params& p,
                                                       const device_info& dev) const override {
    const auto v = variant_by_name(variant);
    if (!v) throw std::invalid_argument("copy: unknown variant '" + std::string(variant) + "'");
    return std::make_unique<copy_case>(*v, p, dev);
  }
};

}  // namespace

std::optional<variant_id> variant_by_name(std::string_view name) { return id_by_name(entries, name); }

const lab& copy_lab() {
  static const copy_lab_impl instance;
  return instance;
}

}  // namespace memlab::labs::copy
