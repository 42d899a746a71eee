// Emulation (tests/library/emulation): the 16-byte global store, checked for alignment and its buffer.
#pragma once
#include <cstring>
namespace memlab::arch {
inline void st_global_v4(void* p, const uint4& v) {
  emu::check(p, 16, 16, true);
  std::memcpy(p, &v, 16);
}
inline void st_global_u64(void* p, unsigned long long v) {
  emu::check(p, 8, 8, true);
  std::memcpy(p, &v, 8);
}
}  // namespace memlab::arch
