// memlab/arch/config.cuh: the one place that maps __CUDA_ARCH__ to features.
// Kernels test these macros, never SM numbers.
#pragma once

#if defined(__CUDA_ARCH__)
#define MEMLAB_ARCH __CUDA_ARCH__
#else
#define MEMLAB_ARCH 0  // host pass
#endif

// cp.async (LDGSTS), 4/8/16 B, sm_80+ (PTX ISA 7.0).
#define MEMLAB_HAS_CP_ASYNC (MEMLAB_ARCH >= 800)
// cp.async.bulk and tensor maps (TMA), sm_90+ (PTX ISA 8.0).
#define MEMLAB_HAS_TMA (MEMLAB_ARCH >= 900)
// 32-byte global loads and stores (LDG.E.ENL2.256), sm_100+ (PTX ISA 8.8).
#define MEMLAB_HAS_LDST256 (MEMLAB_ARCH >= 1000)

namespace memlab::arch {
// Widest single global access, in bytes, on the device code is compiled for.
inline constexpr int max_vector_bytes = MEMLAB_HAS_LDST256 ? 32 : 16;
}  // namespace memlab::arch

// Functions usable from host and device code; plain inline functions when a host compiler reads them.
#if defined(__CUDACC__)
#define MEMLAB_HOST_DEVICE __host__ __device__
#else
#define MEMLAB_HOST_DEVICE
#endif
