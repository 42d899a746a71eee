// The tile lab's test cases: a column-major stack of `tiles` rows x cols tiles.
#pragma once

#include <cstdint>

#include "harness/lab.hpp"
#include "labs/tile/tile.hpp"

namespace memlab::test {

inline case_params tile_case(dtype t, std::uint64_t rows, std::uint64_t cols, std::uint64_t tiles,
                             std::uint64_t ctas = 0, std::uint64_t src_offset = 0) {
  return labs::tile::table().make_case(t, rows * cols * tiles,
                                       {{"tile", axis_value{{rows, cols, 0}, 2}},
                                        {"ctas", axis_value{{ctas, 0, 0}, 1}},
                                        {"src_offset", axis_value{{src_offset, 0, 0}, 1}}});
}

}  // namespace memlab::test
