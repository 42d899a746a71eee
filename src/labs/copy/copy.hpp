// The copy lab's host-side view of its variants: policies and launchers.
// Kernels live in kernels.cu (memlab's ladder) and peers.cu (cudaMemcpy, CUB, Thrust).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "harness/dtype.hpp"
#include "harness/lab.hpp"
#include "harness/result.hpp"

namespace memlab::labs::copy {

// `library` is memlab::copy (include/memlab/copy.cuh); its variant name is "auto".
enum class variant_id { scalar, vec8, vec16, vec16_unroll, library, memcpy, cub, thrust };

inline constexpr int threads_per_cta = 256;
// vec16_unroll keeps this many 16-byte vectors in flight per thread before its first store.
inline constexpr int unroll_vectors = 4;
// Bytes of loads in flight per SM that vec16_unroll's grid is sized by: 4 CTAs of 256 threads x
// 64 B. H100 SXM (132 SMs), measured (docs/notes/copy.md): a persistent 16-byte copy saturates at
// 16-32 KiB per SM (Little's law at ~0.8 us predicts ~20 KB); 64 KiB is on the plateau with margin.
inline constexpr int bytes_in_flight_per_sm = 64 * 1024;

std::optional<variant_id> variant_by_name(std::string_view name);

// Alignment in bytes that both pointers need for `v` (0 when any element-aligned pointer works).
int required_alignment(variant_id v);

launch_policy plan(variant_id v, std::size_t elem_size, std::uint64_t n, int sm_count);
// memlab::copy's own plan for these pointers on the current device, as a launch policy.
launch_policy plan_library(const void* dst, const void* src, std::uint64_t bytes);

// Enqueues the copy of n elements of type t. Checks the launch; never synchronizes.
void launch_kernel(variant_id v, dtype t, void* dst, const void* src, std::uint64_t n, const launch_policy& p,
                   cudaStream_t s);
// memlab::copy of n elements of type t (the typed entry point). Throws memlab::cuda_error on failure.
void launch_library(dtype t, void* dst, const void* src, std::uint64_t n, cudaStream_t s);
void launch_peer(variant_id v, dtype t, void* dst, const void* src, std::uint64_t n, cudaStream_t s);

const lab& copy_lab();

}  // namespace memlab::labs::copy
