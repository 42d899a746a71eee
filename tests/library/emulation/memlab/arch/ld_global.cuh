// Emulation (tests/library/emulation): the 16-byte global load, checked for alignment and its buffer.
#pragma once
#include <cstring>
namespace memlab::arch {
inline uint4 ld_global_v4(const void* p) {
  emu::check(p, 16, 16, false);
  uint4 v;
  std::memcpy(&v, p, 16);
  return v;
}
inline unsigned long long ld_global_u64(const void* p) {
  emu::check(p, 8, 8, false);
  unsigned long long v;
  std::memcpy(&v, p, 8);
  return v;
}
}  // namespace memlab::arch
