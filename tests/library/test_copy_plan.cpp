// memlab::plan_copy, the host half of memlab::copy: for every pair of misalignments and many sizes,
// the plan covers every byte exactly once, keeps every body access aligned to its width (16 bytes;
// 32 on sm_100 where both pointers allow) and inside the caller's buffers, and sizes the grid to
// the body. Pure host code: no GPU, no CUDA runtime.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "memlab/copy_plan.hpp"

namespace memlab {
namespace {

constexpr copy_device h100{132, 2048, 9};
constexpr copy_device b200{148, 2048, 10};

// Checks one plan against the contract in copy_plan.hpp; returns the first broken rule.
std::string check(std::uintptr_t dst, std::uintptr_t src, std::size_t bytes, const copy_plan& p) {
  if (bytes == 0) return p.path == copy_path::none && p.grid == 0 ? "" : "an empty copy launches nothing";
  const auto vb = static_cast<std::size_t>(p.vec_bytes);
  if (p.path != copy_path::bytes && p.head + vb * p.vectors + p.tail != bytes) return "head + body + tail != bytes";
  if (p.grid == 0 || p.threads != 256) return "no launch";
  if (p.path == copy_path::bytes) {
    if (p.vectors != 0 || p.tail != 0 || p.head != bytes) return "a bytes plan is all head";
    return p.grid == (bytes + 255) / 256 ? "" : "bytes grid";
  }
  if (p.head >= 32 || p.tail >= 32) return "head or tail of 32 bytes or more";
  if (p.path == copy_path::aligned32) {
    if (vb != 32) return "aligned32 body width";
    if ((dst + p.head) % 32 != 0 || (src + p.head) % 32 != 0) return "32-byte body not 32-byte aligned";
    if (p.shift != 0) return "aligned32 shift";
    const std::size_t per_cta = 256 * std::size_t(p.vectors_per_thread);
    if (p.grid * per_cta < p.vectors || (p.grid - 1) * per_cta >= p.vectors) return "grid does not fit the body";
    return "";
  }
  if (vb != 16) return "body width";
  if ((dst + p.head) % 16 != 0) return "body stores not 16-byte aligned";
  const auto shift = static_cast<std::size_t>(p.shift);
  if (shift != (src - dst) % 16) return "shift";
  if (p.path == copy_path::aligned16) {
    if (shift != 0 || (src + p.head) % 16 != 0) return "aligned body loads not 16-byte aligned";
  } else {
    if (p.path != copy_path::realign16 || shift == 0) return "path";
    // Source vectors 0..vectors, from src + head - shift, 16-byte aligned and inside [src, src + bytes).
    if ((src + p.head - shift) % 16 != 0) return "realigned loads not 16-byte aligned";
    if (p.head < shift) return "first source vector starts before src";
    if (p.head - shift + 16 * (p.vectors + 1) > bytes) return "last source vector ends after src + bytes";
  }
  const std::size_t per_cta = (p.path == copy_path::realign16 ? 8 * 31 : 256) * std::size_t(p.vectors_per_thread);
  if (p.grid * per_cta < p.vectors || (p.grid - 1) * per_cta >= p.vectors) return "grid does not fit the body";
  return "";
}

TEST(copy_plan, every_misalignment_pair_and_small_size_is_covered_exactly) {
  const std::uintptr_t base = 0x7f0000000000;  // a 256-byte aligned allocation, as cudaMalloc gives
  int realigned = 0, aligned = 0, bytes_only = 0;
  for (std::uintptr_t d = 0; d < 16; ++d) {
    for (std::uintptr_t s = 0; s < 16; ++s) {
      for (std::size_t n = 0; n <= 300; ++n) {
        const std::uintptr_t dst = base + d, src = base + (1 << 20) + s;
        const copy_plan p = plan_copy(dst, src, n, h100);
        ASSERT_EQ(check(dst, src, n, p), "") << "dst+" << d << " src+" << s << " bytes " << n;
        realigned += p.path == copy_path::realign16;
        aligned += p.path == copy_path::aligned16;
        bytes_only += p.path == copy_path::bytes;
      }
    }
  }
  EXPECT_GT(realigned, 0);
  EXPECT_GT(aligned, 0);
  EXPECT_GT(bytes_only, 0);
}

TEST(copy_plan, shared_misalignment_takes_the_plain_16_byte_path) {
  for (std::uintptr_t m = 0; m < 16; ++m) {
    const copy_plan p = plan_copy(0x10000 + m, 0x90000 + m, 4096, h100);
    EXPECT_EQ(p.path, copy_path::aligned16) << m;
    EXPECT_EQ(p.head, (16 - m) % 16);
    EXPECT_EQ(p.shift, 0);
  }
}

TEST(copy_plan, mutual_misalignment_keeps_16_byte_accesses) {
  // The case: dst aligned, src 2 bytes off.
  const copy_plan p = plan_copy(0x10000, 0x90002, std::size_t{1} << 29, h100);
  EXPECT_EQ(p.path, copy_path::realign16);
  EXPECT_EQ(p.vec_bytes, 16);
  EXPECT_EQ(p.shift, 2);
  EXPECT_EQ(p.head, 16u);  // dst is aligned, but the first source vector must not start before src
  EXPECT_EQ(check(0x10000, 0x90002, std::size_t{1} << 29, p), "");
}

TEST(copy_plan, large_and_odd_sizes_hold_the_contract) {
  for (std::size_t n : {std::size_t{4095}, std::size_t{4097}, std::size_t{100001}, (std::size_t{1} << 24) + 7,
                        (std::size_t{1} << 32) + 3, std::size_t{1} << 40}) {
    for (std::uintptr_t d : {0, 1, 8, 15}) {
      for (std::uintptr_t s : {0, 2, 7, 15}) {
        const std::uintptr_t dst = 0x7f0000000000 + d, src = 0x7e0000000000 + s;
        EXPECT_EQ(check(dst, src, n, plan_copy(dst, src, n, h100)), "") << n << " " << d << " " << s;
      }
    }
  }
}

TEST(copy_plan, small_copies_get_small_grids_and_one_vector_per_thread) {
  // 8 KiB: 512 vectors, two CTAs; nothing about it should depend on the device.
  const copy_plan p = plan_copy(0x10000, 0x90000, 8192, h100);
  EXPECT_EQ(p.vectors_per_thread, 1);
  EXPECT_EQ(p.grid, 2u);
  // Too small for one body vector: one CTA of the byte kernel.
  EXPECT_EQ(plan_copy(0x10000, 0x90000, 12, h100).path, copy_path::bytes);
  EXPECT_EQ(plan_copy(0x10000, 0x90000, 12, h100).grid, 1u);
}

TEST(copy_plan, vectors_per_thread_keep_32_kib_in_flight_per_sm_on_large_copies) {
  const std::size_t big = std::size_t{4} << 30;  // 2^31 f16 elements
  // 2048 threads x 16 B = 32 KiB per SM already: one vector per thread (H100, H200).
  EXPECT_EQ(plan_copy(0x10000, 0x90000, big, h100).vectors_per_thread, 1);
  // Fewer resident threads per SM need more vectors each: 1536 (sm_86/89) and 1024 (sm_75) -> 2.
  EXPECT_EQ(plan_copy(0x10000, 0x90000, big, copy_device{84, 1536}).vectors_per_thread, 2);
  EXPECT_EQ(plan_copy(0x10000, 0x90000, big, copy_device{40, 1024}).vectors_per_thread, 2);
  EXPECT_EQ(plan_copy(0x10000, 0x90002, big, copy_device{40, 512}).vectors_per_thread, 4);
  // Below one full wave every load is in flight at once anyway: one vector per thread.
  EXPECT_EQ(plan_copy(0x10000, 0x90000, 40 * 1024 * 16 - 16, copy_device{40, 1024}).vectors_per_thread, 1);
  for (const copy_device dev : {copy_device{84, 1536}, copy_device{40, 512}}) {
    EXPECT_EQ(check(0x10000, 0x90002, big, plan_copy(0x10000, 0x90002, big, dev)), "");
  }
}

// More than one wave of one-vector threads and at most four: one wave of 2 or 4 vectors a thread (H100: 132 SMs x 2048
// threads x 16 B = 4.125 MiB a wave).
TEST(copy_plan, copies_of_two_to_four_waves_run_as_one) {
  const std::size_t wave = std::size_t{132} * 2048 * 16;
  const auto u = [](std::size_t bytes, copy_device dev = h100) {
    return plan_copy(0x10000, 0x90000, bytes, dev).vectors_per_thread;
  };
  EXPECT_EQ(u(wave), 1) << "one wave exactly";
  EXPECT_EQ(u(wave + 16), 2);
  EXPECT_EQ(u(std::size_t{8} << 20), 2) << "2^22 f16: 1.9 waves";
  EXPECT_EQ(u(2 * wave), 2);
  EXPECT_EQ(u(2 * wave + 16), 4);
  EXPECT_EQ(u(std::size_t{16} << 20), 4) << "2^23 f16: 3.9 waves";
  EXPECT_EQ(u(4 * wave), 4);
  EXPECT_EQ(u(4 * wave + 16), 1) << "past four waves: section 2's one vector";
  EXPECT_EQ(u(std::size_t{32} << 20), 1) << "2^24 f16: 7.8 waves";
  // The grid is one wave: at most 132 x 8 CTAs of 256 threads.
  for (const std::size_t bytes : {wave + 16, std::size_t{8} << 20, std::size_t{16} << 20, 4 * wave}) {
    EXPECT_LE(plan_copy(0x10000, 0x90000, bytes, h100).grid, 132u * 8) << bytes;
    EXPECT_EQ(check(0x10000, 0x90000, bytes, plan_copy(0x10000, 0x90000, bytes, h100)), "") << bytes;
  }
  // Realigned copies too; and GPUs that need more vectors for bytes in flight keep the larger count.
  EXPECT_EQ(plan_copy(0x10000, 0x90002, std::size_t{16} << 20, h100).vectors_per_thread, 4);
  EXPECT_EQ(u(3 * 84 * 1536 * 16, copy_device{84, 1536}), 4);
  EXPECT_EQ(u(std::size_t{4} << 30, copy_device{84, 1536}), 2);
  // Between two GPUs no one-wave rule (over NVLink one wave of 4 vectors a thread was 1.4% slower at 16 MiB).
  const copy_device peer{132, 2048, 9, true};
  EXPECT_EQ(u(std::size_t{8} << 20, peer), 1);
  EXPECT_EQ(u(std::size_t{16} << 20, peer), 1);
  EXPECT_EQ(u(std::size_t{16} << 20, copy_device{84, 1536, 8, true}), 2) << "bytes in flight still count";
}

// sm_100 and newer: a 32-byte body wherever src and dst share their misalignment modulo 32; the
// 16-byte paths everywhere else, exactly as before. Every 32 x 32 misalignment pair, many sizes.
TEST(copy_plan, sm_100_takes_32_byte_accesses_where_both_pointers_allow) {
  const std::uintptr_t base = 0x7f0000000000;
  int wide = 0, narrow = 0;
  for (std::uintptr_t d = 0; d < 32; ++d) {
    for (std::uintptr_t s = 0; s < 32; ++s) {
      for (std::size_t n :
           {std::size_t{0}, std::size_t{1}, std::size_t{31}, std::size_t{32}, std::size_t{63}, std::size_t{64},
            std::size_t{95}, std::size_t{100}, std::size_t{4097}, (std::size_t{1} << 24) + 7}) {
        const std::uintptr_t dst = base + d, src = base + (1 << 20) + s;
        const copy_plan p = plan_copy(dst, src, n, b200);
        ASSERT_EQ(check(dst, src, n, p), "") << "dst+" << d << " src+" << s << " bytes " << n;
        if (p.path == copy_path::aligned32) {
          ++wide;
          EXPECT_EQ((s - d) % 32, 0u);
        } else if (p.path == copy_path::aligned16 || p.path == copy_path::realign16) {
          ++narrow;
          // Anything but the 32-byte body is the plan an sm_90 device gets.
          const copy_plan h = plan_copy(dst, src, n, h100);
          EXPECT_EQ(p.path, h.path);
          EXPECT_EQ(p.head, h.head);
          EXPECT_EQ(p.vectors, h.vectors);
        }
      }
    }
  }
  EXPECT_GT(wide, 0);
  EXPECT_GT(narrow, 0);
  const copy_plan p = plan_copy(base, base + (1 << 20), std::size_t{1} << 30, b200);
  EXPECT_EQ(p.path, copy_path::aligned32);
  EXPECT_EQ(p.vec_bytes, 32);
  EXPECT_EQ(p.vectors, (std::size_t{1} << 30) / 32);
  EXPECT_EQ(p.vectors_per_thread, 1) << "2048 threads x 32 B: 64 KiB in flight per SM already";
  EXPECT_EQ(to_string(p.path), std::string("aligned32"));
}

TEST(copy_plan, sm_80_and_sm_90_never_take_the_32_byte_body) {
  for (const int major : {0, 8, 9}) {
    for (std::uintptr_t m = 0; m < 32; m += 4) {
      const copy_plan p = plan_copy(0x10000 + m, 0x90000 + m, std::size_t{1} << 20, copy_device{132, 2048, major});
      EXPECT_NE(p.path, copy_path::aligned32) << major;
      EXPECT_EQ(p.vec_bytes, 16) << major;
    }
  }
}

TEST(copy_plan, unknown_device_facts_still_plan_correctly) {
  const copy_plan p = plan_copy(0x10001, 0x90003, 100000, copy_device{0, 0});
  EXPECT_EQ(check(0x10001, 0x90003, 100000, p), "");
}

}  // namespace
}  // namespace memlab
