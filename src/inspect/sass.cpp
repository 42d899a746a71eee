// Reading cuobjdump -sass text: split into kernels, classify memory instructions.
// Everything here works on text only, so the tests run on captured output without a GPU.
#include "inspect/sass.hpp"

#include <cxxabi.h>

#include <cctype>
#include <cstdlib>
#include <memory>

namespace memlab::inspect {

std::string_view to_string(mem_space s) {
  switch (s) {
    case mem_space::global: return "global";
    case mem_space::shared: return "shared";
    case mem_space::local: return "local";
    case mem_space::generic: return "generic";
    case mem_space::async_copy: return "async_copy";
  }
  return "?";
}

std::string_view to_string(mem_dir d) {
  switch (d) {
    case mem_dir::load: return "load";
    case mem_dir::store: return "store";
    case mem_dir::atomic: return "atomic";
    case mem_dir::copy: return "copy";
  }
  return "?";
}

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// "LDG.E.128.CONSTANT" -> {"LDG", "E", "128", "CONSTANT"}. PTX "::" qualifiers stay inside a part.
std::vector<std::string_view> split_dots(std::string_view s) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '.') {
      parts.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return parts;
}

std::optional<int> small_int(std::string_view s) {
  if (s.empty() || s.size() > 4) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// ---- SASS -------------------------------------------------------------------------------------------

// Width from SASS modifiers. Only whole modifiers count, so LTC128B (an L2 sector-promotion hint) or
// ENL2 never read as widths. No size modifier means a 32-bit access.
int sass_width(const std::vector<std::string_view>& parts) {
  int w = 32;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string_view p = parts[i];
    if (p == "U8" || p == "S8")
      w = 8;
    else if (p == "U16" || p == "S16")
      w = 16;
    else if (p == "32" || p == "U32" || p == "S32" || p == "F32")
      w = 32;
    else if (p == "64" || p == "U64" || p == "S64" || p == "F64")
      w = 64;
    else if (p == "128")
      w = 128;
    else if (p == "256")
      w = 256;
  }
  return w;
}

// LDSM/STSM ("LDSM.16.M88.4", "LDSM.16.MT88.2"): the leading 16 is the element size, not the width.
// Each 8x8 matrix of b16 gives every thread of the warp one 32-bit register, so the per-thread width
// is 32 x (number of matrices: .1/.2/.4, none = 1) -- the same per-thread convention as LDS.128.
int matrix_width(const std::vector<std::string_view>& parts) {
  int n = 1;
  for (std::size_t i = 2; i < parts.size(); ++i) {
    if (parts[i - 1].starts_with("M")) {
      if (auto v = small_int(parts[i]); v && (*v == 1 || *v == 2 || *v == 4)) n = *v;
    }
  }
  return 32 * n;
}

}  // namespace

std::optional<mem_op> classify_sass(std::string_view opcode) {
  opcode = trim(opcode);
  if (opcode.empty()) return std::nullopt;
  const auto parts = split_dots(opcode);
  const std::string_view base = parts[0];  // exact base: LD vs LDC/LDS/LDG/LDL/LDSM/LDGSTS/LDGDEPBAR
  auto make = [&](mem_space s, mem_dir d, int w) {
    return std::optional<mem_op>(mem_op{std::string(opcode), s, d, w});
  };
  using S = mem_space;
  using D = mem_dir;
  if (base == "LDG") return make(S::global, D::load, sass_width(parts));
  if (base == "STG") return make(S::global, D::store, sass_width(parts));
  if (base == "LDS") return make(S::shared, D::load, sass_width(parts));
  if (base == "STS") return make(S::shared, D::store, sass_width(parts));
  if (base == "STAS") return make(S::shared, D::store, sass_width(parts));  // st.async, sm_90 DSMEM
  if (base == "LDSM") return make(S::shared, D::load, matrix_width(parts));
  if (base == "STSM") return make(S::shared, D::store, matrix_width(parts));
  if (base == "LDL") return make(S::local, D::load, sass_width(parts));
  if (base == "STL") return make(S::local, D::store, sass_width(parts));
  if (base == "LD") return make(S::generic, D::load, sass_width(parts));
  if (base == "ST") return make(S::generic, D::store, sass_width(parts));
  // ATOM/RED take generic addresses; the G/S forms name the space. REDUX is a warp reduction: no memory.
  if (base == "ATOM" || base == "RED") return make(S::generic, D::atomic, sass_width(parts));
  if (base == "ATOMG" || base == "REDG") return make(S::global, D::atomic, sass_width(parts));
  if (base == "ATOMS" || base == "REDAS") return make(S::shared, D::atomic, sass_width(parts));
  // cp.async: the width is per thread (4, 8 or 16 bytes).
  if (base == "LDGSTS") return make(S::async_copy, D::copy, sass_width(parts));
  // Bulk and tensor (TMA) copies: the size is in registers, not in the opcode.
  if (base == "UBLKCP" || base == "UBLKRED" || base == "UTMALDG" || base == "UTMASTG" || base == "UTMAREDG")
    return make(S::async_copy, D::copy, 0);
  // Everything else (LDC/ULDC constant-bank loads, LDGDEPBAR/DEPBAR, UTMAPF/UBLKPF prefetches,
  // SYNCS mbarrier ops, ALU, control flow) moves no data between memory and registers we count.
  return std::nullopt;
}

// ---- parse_sass -------------------------------------------------------------------------------------

namespace {

// "/*0080*/" at the start of an instruction line; the encoding comments ("/* 0x... */") never match
// because a space follows the "/*".
std::optional<std::string_view> after_address(std::string_view line) {
  if (!line.starts_with("/*")) return std::nullopt;
  std::size_t i = 2;
  while (i < line.size() && std::isxdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i == 2 || line.substr(i, 2) != "*/") return std::nullopt;
  return line.substr(i + 2);
}

// "  @!P0 LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;   /* 0x... */" -> "LDG.E.128.CONSTANT".
// "" for an instruction guarded by @!PT: "not true" never executes. ptxas emits such dummies (e.g.
// "@!PT LDS RZ, [RZ]" next to LDGSTS on sm_90); counting them would invent shared loads.
std::string_view sass_opcode(std::string_view rest) {
  if (auto c = rest.find("/*"); c != std::string_view::npos) rest = rest.substr(0, c);
  if (auto s = rest.find(';'); s != std::string_view::npos) rest = rest.substr(0, s);
  rest = trim(rest);
  if (rest.starts_with("{")) rest = trim(rest.substr(1));  // dual-issue braces of old archs
  if (rest.starts_with("@")) {                             // predicate: @P0, @!PT, @!UP0
    auto sp = rest.find_first_of(" \t");
    if (rest.substr(0, sp) == "@!PT") return {};
    rest = sp == std::string_view::npos ? std::string_view{} : trim(rest.substr(sp));
  }
  auto sp = rest.find_first_of(" \t}");
  return rest.substr(0, sp);
}

// The operands after `op` in the same instruction text: "R4, desc[UR4][R4.64]" ("" when none).
std::string sass_operands(std::string_view rest, std::string_view op) {
  if (auto c = rest.find("/*"); c != std::string_view::npos) rest = rest.substr(0, c);
  if (auto s = rest.find(';'); s != std::string_view::npos) rest = rest.substr(0, s);
  const auto at = rest.find(op);
  return at == std::string_view::npos ? std::string() : std::string(trim(rest.substr(at + op.size())));
}

// "@P0 LDG ...", "@!P1 ...", "@UP0 ...": executed by the threads whose predicate holds. "@PT" (always)
// is no guard; "@!PT" instructions never run and are not listed at all.
bool is_guarded(std::string_view rest) {
  rest = trim(rest);
  if (rest.starts_with("{")) rest = trim(rest.substr(1));
  if (!rest.starts_with("@")) return false;
  return rest.substr(0, rest.find_first_of(" \t")) != "@PT";
}

}  // namespace

std::vector<kernel_code> parse_sass(std::string_view text) {
  std::vector<kernel_code> out;
  std::string arch;
  bool in_function = false;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = trim(text.substr(pos, nl - pos));
    pos = nl + 1;
    if (line.starts_with("Function :") || line.starts_with("Function:")) {
      std::string mangled(trim(line.substr(line.find(':') + 1)));
      out.push_back(kernel_code{arch, mangled, demangle(mangled), {}, {}, {}});
      in_function = true;
    } else if (line.starts_with("code for ")) {
      arch = std::string(trim(line.substr(9)));
      in_function = false;
    } else if (line.starts_with("arch =")) {
      arch = std::string(trim(line.substr(6)));
      in_function = false;
    } else if (line.starts_with("Fatbin") || line.starts_with("..........")) {
      in_function = false;  // end of a function or of an ELF section; "Fatbin ptx code" has no SASS
    } else if (in_function) {
      if (auto rest = after_address(line)) {
        if (auto op = sass_opcode(*rest); !op.empty()) {
          out.back().opcodes.emplace_back(op);
          out.back().guarded.push_back(is_guarded(*rest));
          out.back().operands.emplace_back(sass_operands(*rest, op));
        }
      }
    }
  }
  return out;
}

std::string demangle(const std::string& mangled) {
  // Only real symbols: __cxa_demangle would also "demangle" type codes such as "f" -> "float".
  if (!mangled.starts_with("_Z")) return mangled;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> p(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  return status == 0 && p ? std::string(p.get()) : mangled;
}

std::string demangle_type(const char* type_name) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> p(abi::__cxa_demangle(type_name, nullptr, nullptr, &status), std::free);
  return status == 0 && p ? std::string(p.get()) : std::string(type_name);
}

std::vector<histogram_entry> memory_histogram(const kernel_code& k) {
  std::vector<histogram_entry> h;
  for (const auto& opcode : k.opcodes) {
    auto op = classify_sass(opcode);
    if (!op) continue;
    bool found = false;
    for (auto& e : h) {
      if (e.op.op == op->op) {
        ++e.count;
        found = true;
        break;
      }
    }
    if (!found) h.push_back(histogram_entry{std::move(*op), 1});
  }
  return h;
}

}  // namespace memlab::inspect
