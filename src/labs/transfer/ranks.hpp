// The ranks a collective runs on (routes.hpp): every GPU of this process, each with its communicator, or
// this rank of a run of one process per GPU, whose communicator is the world's (harness/world.hpp). Both
// are configured as nccl-tests configures its own (harness/nccl_loader.hpp: nccl_tests_config), and their
// buffers allocated as nccl-tests allocates them.
#pragma once

#include <vector>

#include "harness/buffer.hpp"
#include "harness/nccl_loader.hpp"

#if MEMLAB_HAVE_NCCL
namespace memlab::labs::transfer {

// One communicator per GPU of `devices` (rank r on devices[r]) for the process's life: forming them costs
// a second or more, a case milliseconds. Never destroyed (the process ends with them). Throws
// std::runtime_error with NCCL's error.
const std::vector<ncclComm_t>& communicators(const std::vector<int>& devices);

// Device memory as nccl-tests allocates its buffers (ncclMemAlloc, NCCL >= 2.19: cuMem memory NCCL can
// register when a CUDA graph captures a collective, so a captured loop over it may move its bytes without
// NCCL's own staging buffers, as nccl-tests -G does; memory from cudaMalloc is not registered there). On
// the current device. A failed allocation is cudaErrorMemoryAllocation, as a device_buffer's.
cudaError_t nccl_alloc(void** p, std::size_t bytes);
cudaError_t nccl_free(void* p);
using nccl_memory = cuda_memory<&nccl_alloc, &nccl_free>;

}  // namespace memlab::labs::transfer
#endif
