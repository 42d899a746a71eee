// Which kernel a __global__ function's address is: the mangled name the CUDA runtime registers
// for it, known without a GPU.
//
// nvcc's host code registers every kernel of a translation unit at static initialisation, with
// __cudaRegisterFunction(handle, host_stub_address, device_name, ...). memlab's executables link
// with `-Wl,--wrap=__cudaRegisterFunction` (CMake: memlab_gpu's interface), so each registration
// passes through here first and is recorded, then goes on to the runtime unchanged. This needs no
// driver (cudaFuncGetName does, and fails on a machine without a GPU, where `memlab inspect` and
// the SASS tests must still label every kernel). If a toolkit ever registers kernels another way,
// nothing is recorded, and the test that every variant's kernels are found in the SASS fails.
#pragma once

#include <string>

namespace memlab {

// The mangled device name registered for `host_stub` (`&kernel<T>` as a host pointer); "" when
// none was registered under that address.
std::string kernel_symbol(const void* host_stub);

}  // namespace memlab
