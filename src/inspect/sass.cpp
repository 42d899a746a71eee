// Reading cuobjdump -sass text and PTX: split into kernels, classify memory instructions.
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

bool has_part(const std::vector<std::string_view>& parts, std::string_view p) {
  for (std::size_t i = 1; i < parts.size(); ++i)
    if (parts[i] == p) return true;
  return false;
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
    if (p == "U8" || p == "S8") w = 8;
    else if (p == "U16" || p == "S16") w = 16;
    else if (p == "32" || p == "U32" || p == "S32" || p == "F32") w = 32;
    else if (p == "64" || p == "U64" || p == "S64" || p == "F64") w = 64;
    else if (p == "128") w = 128;
    else if (p == "256") w = 256;
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
  if (base == "UBLKCP" || base == "UBLKRED" || base == "UTMALDG" || base == "UTMASTG" ||
      base == "UTMAREDG")
    return make(S::async_copy, D::copy, 0);
  // Everything else (LDC/ULDC constant-bank loads, LDGDEPBAR/DEPBAR, UTMAPF/UBLKPF prefetches,
  // SYNCS mbarrier ops, ALU, control flow) moves no data between memory and registers we count.
  return std::nullopt;
}

// ---- PTX --------------------------------------------------------------------------------------------

namespace {

int ptx_type_bits(std::string_view p) {
  if (p == "b8" || p == "u8" || p == "s8") return 8;
  if (p == "b16" || p == "u16" || p == "s16" || p == "f16" || p == "bf16") return 16;
  if (p == "b32" || p == "u32" || p == "s32" || p == "f32" || p == "f16x2" || p == "bf16x2" ||
      p == "tf32")
    return 32;
  if (p == "b64" || p == "u64" || p == "s64" || p == "f64") return 64;
  if (p == "b128") return 128;
  return 0;
}

// Width = vector count x element bits: ld.global.v4.u32 -> 128, ld.global.v2.f64 -> 128.
int ptx_width(const std::vector<std::string_view>& parts) {
  int vec = 1;
  int bits = 0;
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string_view p = parts[i];
    if (p == "v2") vec = 2;
    else if (p == "v4") vec = 4;
    else if (p == "v8") vec = 8;
    else if (int b = ptx_type_bits(p); b != 0) bits = b;
  }
  return vec * bits;
}

// State space of ld/st/atom/red; nullopt for spaces we do not count (param, const, tex).
std::optional<mem_space> ptx_space(const std::vector<std::string_view>& parts) {
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string_view p = parts[i];
    if (p == "global") return mem_space::global;
    if (p == "shared" || p.starts_with("shared::")) return mem_space::shared;
    if (p == "local") return mem_space::local;
    if (p == "param" || p == "const" || p.starts_with("param::")) return std::nullopt;
  }
  return mem_space::generic;
}

}  // namespace

// PTX opcodes as parse_ptx stores them. Non-bulk cp.async carries its cp-size (bytes), which PTX writes
// as an operand, after a space: "cp.async.cg.shared.global 16" -> async_copy, 128 bits. Without the
// size, .cg (16 bytes only) still gives 128 and .ca gives 0 (unknown).
std::optional<mem_op> classify_ptx(std::string_view opcode) {
  opcode = trim(opcode);
  if (opcode.empty()) return std::nullopt;
  std::string_view head = opcode;
  std::optional<int> cp_size;
  if (auto sp = opcode.find_first_of(" \t"); sp != std::string_view::npos) {
    head = opcode.substr(0, sp);
    cp_size = small_int(trim(opcode.substr(sp)));
  }
  const auto parts = split_dots(head);
  const std::string_view base = parts[0];
  auto make = [&](mem_space s, mem_dir d, int w) {
    return std::optional<mem_op>(mem_op{std::string(opcode), s, d, w});
  };
  if (base == "ld" || base == "ldu" || base == "st") {
    auto space = ptx_space(parts);
    if (!space) return std::nullopt;
    return make(*space, base == "st" ? mem_dir::store : mem_dir::load, ptx_width(parts));
  }
  if (base == "atom" || base == "red") {
    auto space = ptx_space(parts);
    if (!space) return std::nullopt;
    return make(*space, mem_dir::atomic, ptx_width(parts));
  }
  if (base == "ldmatrix" || base == "stmatrix") {
    // Same per-thread convention as LDSM: 32 bits per 8x8 b16 matrix.
    int n = has_part(parts, "x4") ? 4 : has_part(parts, "x2") ? 2 : 1;
    return make(mem_space::shared, base == "ldmatrix" ? mem_dir::load : mem_dir::store, 32 * n);
  }
  if (base == "cp" && parts.size() > 2) {
    const bool bulk = has_part(parts, "bulk");
    const bool control = has_part(parts, "commit_group") || has_part(parts, "wait_group") ||
                         has_part(parts, "wait_all") || has_part(parts, "prefetch") ||
                         parts[2] == "mbarrier";  // cp.async.mbarrier.arrive
    if (control) return std::nullopt;
    if (parts[1] == "reduce" && bulk) return make(mem_space::async_copy, mem_dir::copy, 0);
    if (parts[1] != "async") return std::nullopt;
    if (bulk) return make(mem_space::async_copy, mem_dir::copy, 0);
    if (parts[2] == "ca" || parts[2] == "cg") {
      int w = cp_size ? *cp_size * 8 : (parts[2] == "cg" ? 128 : 0);
      return make(mem_space::async_copy, mem_dir::copy, w);
    }
  }
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
  if (rest.starts_with("@")) {                            // predicate: @P0, @!PT, @!UP0
    auto sp = rest.find_first_of(" \t");
    if (rest.substr(0, sp) == "@!PT") return {};
    rest = sp == std::string_view::npos ? std::string_view{} : trim(rest.substr(sp));
  }
  auto sp = rest.find_first_of(" \t}");
  return rest.substr(0, sp);
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
      out.push_back(kernel_code{arch, mangled, demangle(mangled), {}});
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
        if (auto op = sass_opcode(*rest); !op.empty()) out.back().opcodes.emplace_back(op);
      }
    }
  }
  return out;
}

// ---- parse_ptx --------------------------------------------------------------------------------------

namespace {

// Drops // and /* */ comments; keeps newlines so that line-terminated directives (.loc) still end.
std::string strip_ptx_comments(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '"') {  // strings (.file names) may hold "//"
      auto e = s.find('"', i + 1);
      if (e == std::string_view::npos) e = s.size() - 1;
      out.append(s.substr(i, e - i + 1));
      i = e;
    } else if (s.substr(i, 2) == "//") {
      auto e = s.find('\n', i);
      if (e == std::string_view::npos) break;
      i = e - 1;
    } else if (s.substr(i, 2) == "/*") {
      auto e = s.find("*/", i + 2);
      if (e == std::string_view::npos) break;
      for (std::size_t k = i; k < e; ++k)
        if (s[k] == '\n') out.push_back('\n');
      i = e + 1;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

bool word_at(std::string_view s, std::size_t i, std::string_view w) {
  if (s.substr(i, w.size()) != w) return false;
  const bool before = i == 0 || is_space(s[i - 1]);
  const bool after = i + w.size() == s.size() || is_space(s[i + w.size()]);
  return before && after;
}

// Operand `index` (0-based) of "opcode a, b, c": splits on top-level commas.
std::string_view ptx_operand(std::string_view operands, std::size_t index) {
  int depth = 0;
  std::size_t start = 0, n = 0;
  for (std::size_t i = 0; i <= operands.size(); ++i) {
    const char c = i < operands.size() ? operands[i] : ',';
    if (c == '[' || c == '{' || c == '(') ++depth;
    else if (c == ']' || c == '}' || c == ')') --depth;
    else if (c == ',' && depth == 0) {
      if (n++ == index) return trim(operands.substr(start, i - start));
      start = i + 1;
    }
  }
  return {};
}

// One statement of a function body -> its opcode (or "" for directives).
std::string ptx_statement_opcode(std::string_view st) {
  st = trim(st);
  if (st.empty() || st.front() == '.') return {};  // .reg, .shared, .local, .pragma ...
  if (st.front() == '@') {                         // predicate guard: @%p1, @!%p2
    auto sp = st.find_first_of(" \t\n");
    if (sp == std::string_view::npos) return {};
    st = trim(st.substr(sp));
  }
  const auto sp = st.find_first_of(" \t\n");
  const std::string_view op = st.substr(0, sp);
  std::string out(op);
  // Non-bulk cp.async: the cp-size is the third operand; keep it so classify_ptx knows the width.
  if ((op.starts_with("cp.async.ca.") || op.starts_with("cp.async.cg.")) &&
      sp != std::string_view::npos) {
    const auto size = ptx_operand(st.substr(sp), 2);
    if (small_int(size)) out += " " + std::string(size);
  }
  return out;
}

// Parses the body starting just after its '{'; returns the position after the matching '}'.
std::size_t parse_ptx_body(std::string_view s, std::size_t i, std::vector<std::string>& opcodes) {
  int depth = 1;
  std::string cur;
  auto blank = [&] { return trim(cur).empty(); };
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '{' && blank()) {  // scope; braces inside a statement are vector operands
      ++depth;
    } else if (c == '}' && blank()) {
      if (--depth == 0) return i + 1;
    } else if (c == ';') {
      if (auto op = ptx_statement_opcode(cur); !op.empty()) opcodes.push_back(std::move(op));
      cur.clear();
    } else if (c == ':' && (i + 1 >= s.size() || s[i + 1] != ':') && (i == 0 || s[i - 1] != ':') &&
               !blank() && trim(cur).find_first_of(" \t\n") == std::string_view::npos) {
      cur.clear();  // label "$L__BB0_2:"; "::" belongs to qualifiers like L1::no_allocate
    } else if (c == '\n') {
      const auto t = trim(cur);
      if (t.starts_with(".loc") || t.starts_with(".file")) cur.clear();  // directives without ';'
      else cur.push_back(c);
    } else {
      cur.push_back(c);
    }
  }
  return s.size();
}

}  // namespace

std::vector<kernel_code> parse_ptx(std::string_view ptx_text) {
  const std::string s = strip_ptx_comments(ptx_text);
  std::vector<kernel_code> out;
  std::string arch;
  std::size_t i = 0;
  while (i < s.size()) {
    const auto t = s.find(".target", i);
    const auto e = s.find(".entry", i);
    const auto next = std::min(t, e);
    if (next == std::string::npos) break;
    if (next == t && word_at(s, t, ".target")) {
      // ".target sm_90a, debug" -> compute_90a: PTX is code for the virtual architecture.
      std::size_t a = t + 7;
      while (a < s.size() && is_space(s[a])) ++a;
      std::size_t b = a;
      while (b < s.size() && !is_space(s[b]) && s[b] != ',') ++b;
      std::string name = s.substr(a, b - a);
      if (name.starts_with("sm_")) name = "compute_" + name.substr(3);
      arch = name;
      i = b;
      continue;
    }
    if (next == e && word_at(s, e, ".entry")) {
      std::size_t a = e + 6;
      while (a < s.size() && is_space(s[a])) ++a;
      std::size_t b = a;
      while (b < s.size() && !is_space(s[b]) && s[b] != '(' && s[b] != '{' && s[b] != ';') ++b;
      std::string mangled = s.substr(a, b - a);
      // Skip the parameter list and performance directives up to the body; ';' = declaration only.
      int paren = 0;
      std::size_t k = b;
      for (; k < s.size(); ++k) {
        if (s[k] == '(') ++paren;
        else if (s[k] == ')') --paren;
        else if (paren == 0 && (s[k] == '{' || s[k] == ';')) break;
      }
      if (k >= s.size()) break;
      if (s[k] == ';') {
        i = k + 1;
        continue;
      }
      kernel_code kc{arch, mangled, demangle(mangled), {}};
      i = parse_ptx_body(s, k + 1, kc.opcodes);
      out.push_back(std::move(kc));
      continue;
    }
    i = next + 1;
  }
  return out;
}

// ---- demangle, histogram ----------------------------------------------------------------------------

std::string demangle(const std::string& mangled) {
  // Only real symbols: __cxa_demangle would also "demangle" type codes such as "f" -> "float".
  if (!mangled.starts_with("_Z")) return mangled;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> p(abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status),
                                           std::free);
  return status == 0 && p ? std::string(p.get()) : mangled;
}

std::vector<histogram_entry> memory_histogram(const kernel_code& k, bool is_ptx) {
  std::vector<histogram_entry> h;
  for (const auto& opcode : k.opcodes) {
    auto op = is_ptx ? classify_ptx(opcode) : classify_sass(opcode);
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
