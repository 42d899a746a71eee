// memlab inspect: which memory instructions each lab variant really compiled to.
#pragma once

#include <iosfwd>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "inspect/sass.hpp"

namespace memlab::inspect {

// How a lab variant's kernels are recognised: by their mangled names (exact), or, for a library's
// kernels memlab cannot name, by a type of ours that occurs in the demangled name.
struct kernel_label {
  std::string lab, variant;
  std::vector<std::string> mangled;
  std::vector<std::string> instantiated_with;
};

struct labeled_kernel {
  std::string lab, variant, dtype;  // dtype "" when the name carries none of u8/f16/bf16/f32/f64
  kernel_code code;
  std::vector<histogram_entry> histogram;
};

struct inspect_report {
  std::string binary;
  std::string tool;                // the cuobjdump that read it
  std::vector<std::string> archs;  // every SASS arch found in the binary
  std::vector<labeled_kernel> kernels;
};

// The first dtype name among the template arguments of a demangled kernel name:
// unsigned char -> u8, __half -> f16, __nv_bfloat16 -> bf16, float -> f32, double -> f64.
std::string dtype_from_name(std::string_view demangled);

// $MEMLAB_CUOBJDUMP, then cuobjdump on PATH, then the one found at configure time, then
// $CUDA_HOME/bin; "" when none is executable (MEMLAB_CUOBJDUMP=none: as if none were installed).
std::string find_cuobjdump();
// Path of the running executable (/proc/self/exe).
std::string self_executable();

// Reads the binary's SASS for `arch` ("" = the newest arch present), keeps kernels that match a
// label (and `lab` when non-empty; all_kernels keeps unmatched ones too, with empty lab/variant).
// Throws std::invalid_argument for a bad input (not a readable file, not an executable with CUDA
// code, an arch it lacks) and std::runtime_error when the tools fail (no cuobjdump, no nvdisasm).
inspect_report inspect_binary(const std::string& binary, std::span<const kernel_label> labels, std::string_view lab,
                              std::string_view arch, bool all_kernels);

// Every SASS arch of `binary` ("sm_90" -> its report, as inspect_binary gives it for that arch, no
// lab filter; labelled kernels only unless `all_kernels`), read once: one cuobjdump per arch, run side
// by side. `only` ("sm_90"): that arch alone (every report's `archs` still lists all the binary
// carries); throws std::invalid_argument when the binary has no SASS for it. `labs` (names): only the
// cubins that hold those labs' kernels are disassembled (every cubin when empty, or when a lab's kernels
// cannot be found by name; others' kernels in a cubin read are kept). What the SASS tests read.
std::map<std::string, inspect_report> inspect_every_arch(const std::string& binary,
                                                         std::span<const kernel_label> labels,
                                                         std::string_view only = {}, bool all_kernels = false,
                                                         std::span<const std::string> labs = {});

// Is `binary` a regular, readable ELF file? "" when it is, else why not.
std::string check_binary(const std::string& binary);

void write_inspect_table(std::ostream& os, const inspect_report& r);
void write_inspect_json(std::ostream& os, const inspect_report& r);

}  // namespace memlab::inspect
