// Emulation (tests/library/emulation): the 32-byte accesses, never run here (sm_100 only).
#pragma once
#include "memlab/vector.cuh"
namespace memlab::arch {
template <int Bytes = 32>
inline vector_t<32> ld_global_256(const void*) {
  std::abort();
}
template <int Bytes = 32>
inline void st_global_256(void*, const vector_t<32>&) {
  std::abort();
}
}  // namespace memlab::arch
