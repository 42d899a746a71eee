// The layout lab's host-side model (model.cpp): launch policies and the 32-byte sectors each variant's
// warps touch. The lab itself (kernels, reference, table): layout.cu.
//
// The job: n points of three fields (x, y, z) of one element type; read field `f` of every point and
// write it densely: out[i] = field f of point i.
//   aos      points as an array of structures: point i's field f at element 3 i + f (a 3-element stride);
//   soa      a structure of arrays: field f of point i at element f n + i;
//   aos_vec  the array of structures, loaded as whole structures: a thread takes V = 16 / sizeof(T)
//            consecutive points (48 bytes: three 16-byte vectors), keeps field f of each, and stores
//            the V results as one 16-byte vector. Points past the last whole group of V go one by one.
// Both input layouts are one allocation of 3 n elements; `out` is n elements. All start 256-byte aligned.
#pragma once

#include <cstddef>
#include <cstdint>

#include "harness/lab.hpp"
#include "harness/result.hpp"
#include "harness/sectors.hpp"

namespace memlab::labs::layout {

// Where field f of point i lives in the input (a rung's traits, read by the model below).
enum class point_layout {
  aos,  // array of structures: element 3 i + f
  soa,  // structure of arrays: element f n + i
};
struct layout_rung {
  point_layout layout = point_layout::aos;
  // false: one element per access (16 bytes of points in flight per thread); true: whole structures,
  // V = 16 / sizeof(T) points per thread as three 16-byte loads and one 16-byte store (aos only).
  bool whole_structures = false;
};

inline constexpr int threads_per_cta = 256;
// aos and soa keep 16 bytes of independent element loads in flight per thread (4 f32), issued before
// the first store, as the stride lab's strided copies do (the reason is there: src/labs/stride/stride.hpp).
inline constexpr int bytes_per_thread = 16;
inline constexpr std::uint64_t warp_size = 32;

// Points per aos_vec thread: V = 16 / sizeof(T) (4 f32, 8 f16, 2 f64); 3 V elements = 48 bytes.
constexpr std::uint64_t vec_points(std::size_t elem_size) { return 16 / elem_size; }

launch_policy plan(const layout_rung& r, std::size_t elem_size, std::uint64_t n);

// 32-byte sectors the launch touches, counted two ways:
//   per_request   for each warp request (a warp instruction with an active lane), its distinct
//                 sectors, summed: what L1 asks for (ld / st: loads, stores; requests: how many);
//   per_warp      for each warp, the distinct sectors of all its requests together, summed over warps:
//                 what has to come from L2 or DRAM when L1 merges a warp's requests to the same sector.
// aos and soa: the two are equal (a warp's requests cover disjoint points). aos_vec: a thread's three
// 16-byte loads are 48 bytes apart across the warp, so each request touches 32 half-used sectors and
// the three together 48 whole ones: per_request is twice per_warp.
struct layout_sectors {
  std::uint64_t ld_requests = 0, st_requests = 0;
  std::uint64_t ld_per_request = 0, st_per_request = 0;
  std::uint64_t ld_per_warp = 0, st_per_warp = 0;
  friend bool operator==(const layout_sectors&, const layout_sectors&) = default;
};
layout_sectors sectors_touched(const layout_rung& r, std::size_t elem_size, std::uint64_t n, std::uint64_t field);

const lab& table();

}  // namespace memlab::labs::layout
