// memlab/vector.cuh: the register type that one access of N bytes moves.
//
// A load or store through vector_t<N> compiles to one N-byte access (LDG.E.64 for 8, LDG.E.128
// for 16) when the address is N-byte aligned; the caller guarantees that alignment. vector_t<32>
// is only a register type: one 32-byte access needs arch/ld_st256.cuh (sm_100 and newer).
#pragma once

#include <vector_types.h>
#include <cstddef>
#include <cstdint>

namespace memlab {

namespace detail {
template <int Bytes>
struct vector_type;
template <>
struct vector_type<1> {
  using type = std::uint8_t;
};
template <>
struct vector_type<2> {
  using type = std::uint16_t;
};
template <>
struct vector_type<4> {
  using type = std::uint32_t;
};
template <>
struct vector_type<8> {
  using type = uint2;
};
template <>
struct vector_type<16> {
  using type = uint4;
};
struct alignas(32) words8 {
  unsigned w[8];
};
template <>
struct vector_type<32> {
  using type = words8;
};
}  // namespace detail

template <int Bytes>
using vector_t = typename detail::vector_type<Bytes>::type;

namespace detail {
template <int Bytes>
struct bits_type;
template <>
struct bits_type<1> {
  using type = std::uint8_t;
};
template <>
struct bits_type<2> {
  using type = std::uint16_t;
};
template <>
struct bits_type<4> {
  using type = std::uint32_t;
};
template <>
struct bits_type<8> {
  using type = std::uint64_t;
};
}  // namespace detail

// The bits of one element of Bytes bytes (1, 2, 4 or 8) as one unsigned integer: what an element is
// loaded as where only its bits matter, to be shifted and ORed into a vector with others.
template <int Bytes>
using bits_t = typename detail::bits_type<Bytes>::type;

}  // namespace memlab
