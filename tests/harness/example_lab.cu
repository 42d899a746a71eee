// The smallest possible lab, registered exactly as real labs are (memlab_lab_registry in
// tests/CMakeLists.txt, LABS example): proof that a lab, and an axis of its own, need no line in
// src/harness or src/cli. out[i] = in[i] + increment (u8, wrapping), the increment an axis.
#include <cstdint>

#include "harness/check.hpp"
#include "harness/error.hpp"
#include "harness/lab.hpp"
#include "harness/launch.cuh"

namespace memlab::labs::example {

// The CPU reference: output byte i is input byte i plus the increment, modulo 256.
std::uint8_t reference_byte(std::uint64_t seed, std::uint64_t increment, std::uint64_t i) {
  return static_cast<std::uint8_t>(random_byte(seed, i) + increment);
}

__global__ void add_kernel(std::uint8_t* out, const std::uint8_t* in, std::uint64_t n, unsigned increment) {
  const std::uint64_t i = global_thread();
  if (i < n) out[i] = static_cast<std::uint8_t>(in[i] + increment);
}

// The second rung: four bytes per thread through one 32-bit load and store (the byte-wise adds
// cannot carry into each other: each is done in its own byte), the last n % 4 bytes one by one.
__global__ void add_word_kernel(std::uint8_t* out, const std::uint8_t* in, std::uint64_t n, unsigned increment) {
  const std::uint64_t i = global_thread(), words = n / 4;
  if (i < words) {
    const std::uint32_t w = reinterpret_cast<const std::uint32_t*>(in)[i];
    std::uint32_t r = 0;
    for (int b = 0; b < 4; ++b) r |= ((((w >> (8 * b)) & 0xffu) + increment) & 0xffu) << (8 * b);
    reinterpret_cast<std::uint32_t*>(out)[i] = r;
  } else if (i == words) {
    for (std::uint64_t j = 4 * words; j < n; ++j) out[j] = static_cast<std::uint8_t>(in[j] + increment);
  }
}

namespace {

const axis increment_axis{
    .name = "increment", .meaning = "what is added to every byte", .unit = "byte values", .defaults = "1", .max = 255};

void launch_add(const case_ctx& c, cudaStream_t s) {
  if (c.p.n == 0) return;
  add_kernel<<<grid_of(c.plan.policy.grid, "example"), 256, 0, s>>>(
      c.ptr<std::uint8_t>(1), c.ptr<const std::uint8_t>(0), c.p.n, static_cast<unsigned>(c.p[increment_axis]));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

void launch_add_word(const case_ctx& c, cudaStream_t s) {
  if (c.p.n == 0) return;
  add_word_kernel<<<grid_of(c.plan.policy.grid, "example"), 256, 0, s>>>(
      c.ptr<std::uint8_t>(1), c.ptr<const std::uint8_t>(0), c.p.n, static_cast<unsigned>(c.p[increment_axis]));
  MEMLAB_CUDA_CHECK_LAUNCH();
}

std::optional<std::string> refusal(const variant&, const case_params& p, const device_info&) {
  if (p.n > (std::uint64_t{1} << 34)) return std::string("at most 2^34 bytes");
  return std::nullopt;
}

case_plan plan_case(const variant& v, const case_params& p, const device_info&) {
  const int width = v.traits_as<int>();                          // bytes per thread
  const std::uint64_t threads = width == 1 ? p.n : p.n / 4 + 1;  // add_word: a thread for the tail
  case_plan out;
  out.policy = {256, 1, width, 0, (threads + 255) / 256};
  out.bytes = 2 * p.n;
  out.working_set = 2 * p.n;
  out.buffers = {{"in", p.n, buffer_role::input}, {"out", p.n, buffer_role::output}};
  return out;
}

std::string verify(const case_ctx& c) {
  const std::uint64_t seed = c.seeds[0], inc = c.p[increment_axis];
  return check_bytes(c.buffers[1], 0, c.p.n, 1, [&](std::uint64_t i) { return reference_byte(seed, inc, i); });
}

}  // namespace

const lab& table() {
  static const lab example_lab{
      .name = "example",
      .teaches = "the smallest lab: one kernel, one axis of its own",
      .dtypes = {dtype::u8},
      .default_dtype = dtype::u8,
      .default_sizes = "4096",
      .size_meaning = "bytes",
      .axes = {increment_axis},
      .roof = roof_kind::dram,
      .variants =
          {
              {
                  .name = "add",
                  .teaches = "one byte per thread",
                  .launch = launch_add,
                  .kernels = {kernel_ref::of(&add_kernel)},
                  .traits = 1,
              },
              {
                  .name = "add_word",
                  .teaches = "four bytes per thread: one 32-bit load and store",
                  .launch = launch_add_word,
                  .kernels = {kernel_ref::of(&add_word_kernel)},
                  .traits = 4,
              },
          },
      .unsupported = refusal,
      .plan = plan_case,
      .setup = nullptr,
      .verify = verify,
  };
  return example_lab;
}

}  // namespace memlab::labs::example
