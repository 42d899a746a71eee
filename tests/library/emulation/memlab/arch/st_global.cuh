// Emulation (tests/library/emulation): the 16-byte global store, checked for alignment and its buffer.
#pragma once
#include <cstring>
namespace memlab::arch {
inline void st_global_v4(void* p, const uint4& v) {
  emu::check(p, 16, 16, true);
  std::memcpy(p, &v, 16);
}
}  // namespace memlab::arch
