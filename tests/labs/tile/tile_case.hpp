// The tile lab's test cases: a column-major stack of `tiles` rows x cols tiles.
#pragma once

#include <cstdint>

#include "harness/lab.hpp"

namespace memlab::test {

inline case_params tile_case(dtype t, std::uint64_t rows, std::uint64_t cols, std::uint64_t tiles,
                             std::uint64_t ctas = 0, std::uint64_t src_offset = 0) {
  case_params p;
  p.type = t;
  p.rows = rows;
  p.cols = cols;
  p.n = rows * cols * tiles;
  p.ctas = ctas;
  p.src_offset = src_offset;
  return p;
}

}  // namespace memlab::test
