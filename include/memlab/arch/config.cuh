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
// 32-byte global loads and stores (LDG.E.ENL2.256), sm_100+ (PTX ISA 8.8): arch/ld_st256.cuh.
#define MEMLAB_HAS_LDST256 (MEMLAB_ARCH >= 1000)
// The Tensor Memory Accelerator: bulk and tensor copies, mbarrier transaction counts (UBLKCP,
// UTMALDG, UTMASTG), sm_90+ (PTX ISA 8.0): arch/tma.cuh.
#define MEMLAB_HAS_TMA (MEMLAB_ARCH >= 900)

// A kernel defined in a header, marked as CUB marks its own (CCCL_DETAIL_KERNEL_ATTRIBUTES): hidden
// visibility, so that two shared libraries built with memlab each keep their own kernel rather than
// one binding to the other's. Header kernels are templates (one definition per program, as CUB's).
#define MEMLAB_KERNEL __global__ __attribute__((visibility("hidden")))

// Functions usable from host and device code; plain inline functions when a host compiler reads them.
#if defined(__CUDACC__)
#define MEMLAB_HOST_DEVICE __host__ __device__
#else
#define MEMLAB_HOST_DEVICE
#endif
