// memlab/realign.cuh: 16 bytes at any byte offset out of two aligned 16-byte vectors, in registers.
#pragma once

#include <vector_types.h>

namespace memlab {

// The 16 bytes starting 4 x Words + shift_bits / 8 bytes into the 32-byte pair (lo, hi), for Words
// in 0..3 and shift_bits in {0, 8, 16, 24}. Little-endian: byte i of the pair is byte i % 4 of word
// i / 4, and __funnelshift_r(a, b, s) is the low word of (b:a) >> s (s = 0 gives a). Words is a
// template argument so the word selection is static; only hi's words 0..Words are read.
template <int Words>
__device__ __forceinline__ uint4 funnel16(const uint4& lo, const uint4& hi, unsigned shift_bits) {
  static_assert(Words >= 0 && Words <= 3, "a 16-byte offset is the next vector, not a shift");
  const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  return make_uint4(
      __funnelshift_r(w[Words + 0], w[Words + 1], shift_bits), __funnelshift_r(w[Words + 1], w[Words + 2], shift_bits),
      __funnelshift_r(w[Words + 2], w[Words + 3], shift_bits), __funnelshift_r(w[Words + 3], w[Words + 4], shift_bits));
}

// The 16 bytes starting `offset` bytes (0..15, known only at run time) into the 32-byte pair (lo, hi).
// The word selection takes two levels of selects (by 8 bytes, then by 4), the byte shift a funnel
// shift: ~15 instructions, no local memory. offset 0 gives lo.
__device__ __forceinline__ uint4 funnel16_any(const uint4& lo, const uint4& hi, unsigned offset) {
  const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const bool by8 = (offset & 8) != 0, by4 = (offset & 4) != 0;
  unsigned a[6], b[5];
#pragma unroll
  for (int i = 0; i < 6; ++i) a[i] = by8 ? w[i + 2] : w[i];
#pragma unroll
  for (int i = 0; i < 5; ++i) b[i] = by4 ? a[i + 1] : a[i];
  const unsigned shift_bits = 8 * (offset & 3);
  return make_uint4(__funnelshift_r(b[0], b[1], shift_bits), __funnelshift_r(b[1], b[2], shift_bits),
                    __funnelshift_r(b[2], b[3], shift_bits), __funnelshift_r(b[3], b[4], shift_bits));
}

}  // namespace memlab
