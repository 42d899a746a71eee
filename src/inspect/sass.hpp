// Reading the machine code of kernels: cuobjdump -sass text, split per kernel, with every
// global/shared/local memory instruction classified by space, direction and width.
// Pure host code: no GPU, no CUDA runtime.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace memlab::inspect {

enum class mem_space { global, shared, local, generic, async_copy };  // async_copy: LDGSTS, UBLKCP, UTMA*
enum class mem_dir { load, store, atomic, copy };
std::string_view to_string(mem_space s);
std::string_view to_string(mem_dir d);

struct mem_op {
  std::string op;  // the opcode with its modifiers as printed, predicate stripped: "LDG.E.128.CONSTANT"
  mem_space space;
  mem_dir dir;
  int width_bits;  // 8, 16, 32, 64, 128, 256; 0 when the width is not encoded (UBLKCP, UTMALDG)
};

// Classifies one opcode token ("LDG.E.U16", "STS.128", "LDGSTS.E.BYPASS.128", ...). nullopt for
// instructions that do not access memory.
std::optional<mem_op> classify_sass(std::string_view opcode);

struct kernel_code {
  std::string arch;                   // "sm_90"
  std::string mangled;                // symbol as in the binary
  std::string name;                   // demangled
  std::vector<std::string> opcodes;   // every instruction, in order, predicate and operands stripped
  std::vector<bool> guarded;          // per opcode: under a predicate (@P0, @!P1, @UP0: some threads skip it)
  std::vector<std::string> operands;  // per opcode: its operands as printed, "R4, desc[UR4][R4.64]"
};

std::vector<kernel_code> parse_sass(std::string_view cuobjdump_sass_text);
std::string demangle(const std::string& mangled);
// A type's name as C++ spells it, from typeid(T).name(): "memlab::labs::copy::identity_op".
std::string demangle_type(const char* type_name);

struct histogram_entry {
  mem_op op;
  int count = 0;
};
// Memory instructions of one kernel, counted per distinct opcode, in order of first appearance.
std::vector<histogram_entry> memory_histogram(const kernel_code& k);

}  // namespace memlab::inspect
