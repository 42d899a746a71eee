// The labs built into an executable. Defined by a source file CMake generates for that executable
// from its list of labs (cmake/memlab_labs.cmake: memlab_lab_registry), in the list's order; this
// header and the harness name no lab.
#pragma once

#include <span>

#include "harness/lab.hpp"

namespace memlab {

// Every lab built in, in the order `memlab list` shows them.
std::span<const lab* const> all_labs();
// Labs of the list this executable was built without, each with why.
std::span<const missing_lab> missing_labs();

}  // namespace memlab
