// memlab inspect: run cuobjdump -sass on a binary, label the kernels by lab/variant/dtype, and print
// which memory instructions each one compiled to.
#include "inspect/inspect.hpp"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <ostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <tuple>

#include <nlohmann/json.hpp>

#include "harness/table.hpp"
#include "harness/text.hpp"

#ifndef MEMLAB_DEFAULT_CUOBJDUMP
#define MEMLAB_DEFAULT_CUOBJDUMP ""
#endif

namespace memlab::inspect {

namespace {

bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

constexpr std::array<std::string_view, 5> dtype_order{"u8", "f16", "bf16", "f32", "f64"};

std::size_t dtype_rank(std::string_view d) {
  for (std::size_t i = 0; i < dtype_order.size(); ++i)
    if (dtype_order[i] == d) return i;
  return dtype_order.size();  // no dtype: last
}

}  // namespace

std::string dtype_from_name(std::string_view s) {
  // Only the template argument list of the kernel: parameters (float*) of a non-template kernel and
  // the return type say nothing about which instantiation this is.
  const auto lt = s.find('<');
  if (lt == std::string_view::npos) return "";
  std::size_t end = s.size();
  int depth = 0;
  for (std::size_t i = lt; i < s.size(); ++i) {
    if (s[i] == '<')
      ++depth;
    else if (s[i] == '>' && --depth == 0) {
      end = i;
      break;
    }
  }
  // Whole identifier tokens only: float2, __half2, my_double are other types.
  struct token {
    std::string_view text;
    std::size_t begin, end;
  };
  std::vector<token> toks;
  for (std::size_t i = lt + 1; i < end;) {
    if (!is_ident_char(s[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < end && is_ident_char(s[j])) ++j;
    toks.push_back({s.substr(i, j - i), i, j});
    i = j;
  }
  auto follows = [&](std::size_t k, std::string_view prev) {  // "unsigned char", "long double"
    if (k == 0 || toks[k - 1].text != prev) return false;
    for (std::size_t i = toks[k - 1].end; i < toks[k].begin; ++i)
      if (s[i] != ' ') return false;
    return true;
  };
  for (std::size_t k = 0; k < toks.size(); ++k) {
    const auto t = toks[k].text;
    if (t == "char" && follows(k, "unsigned")) return "u8";
    if (t == "__half") return "f16";
    if (t == "__nv_bfloat16") return "bf16";
    if (t == "float") return "f32";
    if (t == "double" && !follows(k, "long")) return "f64";
  }
  return "";
}

namespace {

bool is_executable_file(const std::string& p) {
  struct stat st {};
  return !p.empty() && ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

std::string find_cuobjdump() {
  const std::string over = env("MEMLAB_CUOBJDUMP");
  if (over == "none") return "";
  if (is_executable_file(over)) return over;
  const std::string path = env("PATH");
  for (std::size_t start = 0; start <= path.size();) {
    auto colon = path.find(':', start);
    if (colon == std::string::npos) colon = path.size();
    std::string dir = path.substr(start, colon - start);
    if (dir.empty()) dir = ".";  // POSIX: an empty PATH entry is the current directory
    if (const std::string p = dir + "/cuobjdump"; is_executable_file(p)) return p;
    start = colon + 1;
  }
  if (const std::string d = MEMLAB_DEFAULT_CUOBJDUMP; is_executable_file(d)) return d;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const std::string h = env(var); !h.empty() && is_executable_file(h + "/bin/cuobjdump"))
      return h + "/bin/cuobjdump";
  }
  if (is_executable_file("/usr/local/cuda/bin/cuobjdump")) return "/usr/local/cuda/bin/cuobjdump";
  return "";
}

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

namespace {

// POSIX shell single quotes: nothing inside is special except the quote itself.
std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string first_lines(const std::string& s, int n) {
  std::string out;
  std::istringstream in(s);
  std::string line;
  while (n-- > 0 && std::getline(in, line)) {
    if (!out.empty()) out += "\n  ";
    out += line;
  }
  return out;
}

// Runs `tool <args> binary` (in directory `dir` where one is given), stdout captured through popen, stderr through a
// temp file so that a diagnostic cannot interleave with the listing and can be quoted in the error.
std::string run_cuobjdump(const std::string& tool, const std::string& args, const std::string& binary,
                          const std::string& dir = {}) {
  std::string tmpl = (std::filesystem::temp_directory_path() / "memlab_cuobjdump_XXXXXX").string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file: " + std::string(std::strerror(errno)));
  ::close(fd);
  // "./" keeps a relative path that starts with '-' from reading as an option.
  const std::string arg = binary.starts_with("-") ? "./" + binary : binary;
  const std::string cmd = (dir.empty() ? std::string() : "cd " + shell_quote(dir) + " && ") + shell_quote(tool) + " " +
                          args + " " + shell_quote(arg) + " 2>" + shell_quote(tmpl);
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) {
    std::filesystem::remove(tmpl);
    throw std::runtime_error("cannot run '" + tool + "': " + std::strerror(errno));
  }
  std::string out;
  std::array<char, 1 << 16> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;) out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  const std::string err = read_file(tmpl);
  std::error_code ec;
  std::filesystem::remove(tmpl, ec);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::string msg = "'" + tool + " " + args + " " + binary + "' failed";
    msg += WIFEXITED(status) ? " (exit status " + std::to_string(WEXITSTATUS(status)) + ")" : " (killed)";
    if (!err.empty()) msg += ":\n  " + first_lines(err, 5);
    if (err.find("nvdisasm") != std::string::npos)
      msg +=
          "\n  cuobjdump -sass needs nvdisasm: `pip install nvidia-cuda-nvdisasm` (next to cuobjdump), "
          "or set NVDISASM_PATH";
    throw std::runtime_error(msg);
  }
  return out;
}

// "sm_90a" -> (90, "a"): newest = largest number; a suffixed target sorts after the plain one.
std::pair<int, std::string> arch_key(std::string_view a) {
  const auto us = a.find('_');
  if (us != std::string_view::npos) a = a.substr(us + 1);
  int n = 0;
  std::size_t i = 0;
  for (; i < a.size() && std::isdigit(static_cast<unsigned char>(a[i])); ++i) n = n * 10 + (a[i] - '0');
  return {n, std::string(a.substr(i))};
}

bool matches(const kernel_label& l, const kernel_code& k) {
  return std::find(l.mangled.begin(), l.mangled.end(), k.mangled) != l.mangled.end() ||
         std::any_of(l.instantiated_with.begin(), l.instantiated_with.end(),
                     [&](const std::string& t) { return k.name.find(t) != std::string::npos; });
}

}  // namespace

std::string check_binary(const std::string& binary) {
  struct stat st {};
  if (::stat(binary.c_str(), &st) != 0) return "cannot read '" + binary + "': " + std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "'" + binary + "' is not a file";
  std::ifstream f(binary, std::ios::binary);
  char magic[4] = {};
  if (!f.read(magic, 4)) return "cannot read '" + binary + "'";
  if (std::string_view(magic, 4) !=
      "\x7f"
      "ELF")
    return "'" + binary + "' is not an executable or library (not ELF)";
  return {};
}

namespace {

// What `cuobjdump -lelf` lists for `binary` ("ELF file 2: copy.sm_90.cubin", a line a cubin), which costs no
// disassembly; empty where the listing fails (a binary without device code makes it exit 255).
std::string elf_listing(const std::string& tool, const std::string& binary) {
  try {
    return run_cuobjdump(tool, "-lelf", binary);
  } catch (const std::runtime_error&) {
    return {};
  }
}

// The names of the listing's cubins ("copy.sm_90.cubin"), in its order.
std::vector<std::string> cubins_of(const std::string& listing) {
  std::vector<std::string> names;
  std::istringstream in(listing);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(": ");
    if (colon == std::string::npos || !line.ends_with(".cubin")) continue;
    names.push_back(line.substr(colon + 2));
  }
  return names;
}

// The SASS archs of the listing's cubins' names ("copy.sm_90.cubin"); oldest first. Empty when no name says: then a
// full dump tells.
std::vector<std::string> listed_archs(const std::string& listing) {
  std::vector<std::string> archs;
  for (const auto& name : cubins_of(listing)) {
    const std::string_view stem = std::string_view(name).substr(0, name.size() - 6);  // less ".cubin"
    const auto dot = stem.rfind('.');
    if (dot == std::string_view::npos || !stem.substr(dot + 1).starts_with("sm_")) continue;
    std::string a(stem.substr(dot + 1));
    if (std::find(archs.begin(), archs.end(), a) == archs.end()) archs.push_back(std::move(a));
  }
  std::sort(archs.begin(), archs.end(),
            [](const std::string& a, const std::string& b) { return arch_key(a) < arch_key(b); });
  return archs;
}

// The SASS of one arch of `binary`. A binary built from several .cu files holds a cubin per file and arch, and
// cuobjdump disassembles one file on one core: the arch's cubins are extracted (cuobjdump -xelf, no disassembly) and
// disassembled a cubin a process, as many side by side as the machine has cores (memlab's sm_90 on two cores:
// 8.6 s in one process). One cuobjdump of the whole arch where there is one cubin, or the extraction fails.
// The byte strings that mark a cubin as holding one of `lab`'s kernels: each label's mangled names, and for a type
// the kernels are instantiated with ("memlab::labs::copy::identity_op") its mangled form inside theirs
// ("6memlab4labs4copy11identity_op"). Empty when any label of the lab cannot be found that way (a template type):
// then every cubin is read.
std::vector<std::string> lab_marks(std::span<const kernel_label> labels, std::string_view lab) {
  std::vector<std::string> marks;
  for (const auto& l : labels) {
    if (l.lab != lab) continue;
    marks.insert(marks.end(), l.mangled.begin(), l.mangled.end());
    for (const auto& t : l.instantiated_with) {
      if (t.find_first_of("<> ,()*&") != std::string::npos) return {};
      std::string mangled;
      for (std::size_t at = 0; at <= t.size();) {
        const std::size_t end = std::min(t.find("::", at), t.size());
        mangled += std::to_string(end - at) + t.substr(at, end - at);
        at = end + 2;
      }
      marks.push_back(std::move(mangled));
    }
  }
  return marks;
}

// The cubins of `dir` whose bytes hold one of `marks` (a kernel's name is in its symbol strings); every cubin when
// `marks` is empty or none holds one.
std::vector<std::string> cubins_marked(const std::string& dir, const std::vector<std::string>& cubins,
                                       const std::vector<std::string>& marks) {
  if (marks.empty()) return cubins;
  std::vector<std::string> kept;
  for (const auto& c : cubins) {
    std::ifstream f(std::filesystem::path(dir) / c, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (std::any_of(marks.begin(), marks.end(),
                    [&](const std::string& m) { return !m.empty() && bytes.find(m) != std::string::npos; }))
      kept.push_back(c);
  }
  return kept.empty() ? cubins : kept;
}

std::vector<kernel_code> sass_of_arch(const std::string& tool, const std::string& binary, const std::string& arch,
                                      const std::string& listing, const std::vector<std::string>& marks = {}) {
  std::vector<std::string> cubins;
  for (const auto& c : cubins_of(listing))
    if (c.ends_with("." + arch + ".cubin")) cubins.push_back(c);
  const auto whole = [&] { return parse_sass(run_cuobjdump(tool, "-sass -arch " + shell_quote(arch), binary)); };
  if (cubins.size() < 2) return whole();
  std::string dir = (std::filesystem::temp_directory_path() / "memlab_cubins_XXXXXX").string();
  if (::mkdtemp(dir.data()) == nullptr) return whole();
  struct remove_dir {
    std::string path;
    ~remove_dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  } cleanup{dir};
  std::string names;
  for (const auto& c : cubins) names += (names.empty() ? "" : ",") + c;
  try {
    run_cuobjdump(tool, "-xelf " + shell_quote(names), std::filesystem::absolute(binary).string(), dir);
  } catch (const std::runtime_error&) {
    return whole();
  }
  for (const auto& c : cubins)
    if (!std::filesystem::exists(std::filesystem::path(dir) / c)) return whole();
  // One lab asked for: only the cubins that hold its kernels are disassembled (memlab inspect copy reads copy's
  // cubin, not the transpose lab's, ten times its size).
  cubins = cubins_marked(dir, cubins, marks);
  std::vector<std::string> sass(cubins.size());
  std::vector<std::string> errors(cubins.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i; (i = next++) < cubins.size();) {
      try {
        sass[i] = run_cuobjdump(tool, "-sass", (std::filesystem::path(dir) / cubins[i]).string());
      } catch (const std::runtime_error& e) {
        errors[i] = e.what();
      }
    }
  };
  const auto jobs = std::max<std::size_t>(1, std::min<std::size_t>(std::thread::hardware_concurrency(), cubins.size()));
  std::vector<std::thread> pool;
  for (std::size_t j = 1; j < jobs; ++j) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (!e.empty()) throw std::runtime_error(e);
  std::vector<kernel_code> code;
  for (const auto& text : sass) {
    std::vector<kernel_code> part = parse_sass(text);
    std::move(part.begin(), part.end(), std::back_inserter(code));
  }
  return code;
}

// The arch of `archs` that `arch` names: exact name first; else the same number and suffix ("90",
// "sm_90" and "compute_90" for PTX); else the same number ("sm_90" finds sm_90a: same SM, arch-specific
// features on top). "" asks for the newest.
std::string choose_arch(const std::vector<std::string>& archs, std::string_view arch, const std::string& binary) {
  if (arch.empty()) return archs.back();
  for (const auto& a : archs)
    if (a == arch) return a;
  for (const auto& a : archs)
    if (arch_key(a) == arch_key(arch)) return a;
  for (const auto& a : archs)
    if (arch_key(a).first == arch_key(arch).first) return a;
  throw std::invalid_argument("--arch: " + std::string(arch) + " is not in '" + binary +
                              "' (available: " + join(archs) + ")");
}

// The kernels of `code` built for `chosen`, labelled, in ladder order (see inspect_binary).
std::vector<labeled_kernel> label_kernels(std::vector<kernel_code>& code, std::span<const kernel_label> labels,
                                          std::string_view lab, const std::string& chosen, bool all_kernels) {
  // Ladder order: labs and variants rank by their first appearance in `labels`; unlabeled last.
  auto rank_of = [&](const std::string& l, const std::string& v) {
    std::size_t lab_rank = labels.size(), variant_rank = labels.size();
    for (std::size_t i = 0; i < labels.size(); ++i) {
      if (labels[i].lab == l && lab_rank == labels.size()) lab_rank = i;
      if (labels[i].lab == l && labels[i].variant == v) {
        variant_rank = i;
        break;
      }
    }
    return std::pair{lab_rank, variant_rank};
  };

  std::vector<labeled_kernel> out;
  std::set<std::string> seen;  // a kernel compiled into several translation units appears once
  for (auto& k : code) {
    if (k.arch != chosen || !seen.insert(k.mangled).second) continue;
    const kernel_label* hit = nullptr;
    bool other_lab = false;
    for (const auto& l : labels) {
      if (!matches(l, k)) continue;
      if (!lab.empty() && l.lab != lab) {
        other_lab = true;
        continue;
      }
      hit = &l;
      break;
    }
    if (!hit && (other_lab || !all_kernels)) continue;
    labeled_kernel lk;
    if (hit) {
      lk.lab = hit->lab;
      lk.variant = hit->variant;
    }
    lk.dtype = dtype_from_name(k.name);
    lk.histogram = memory_histogram(k);
    lk.code = std::move(k);
    out.push_back(std::move(lk));
  }
  auto key = [&](const labeled_kernel& k) {
    const auto [lab_rank, variant_rank] = rank_of(k.lab, k.variant);
    return std::tuple(lab_rank, std::string_view(k.lab), variant_rank, std::string_view(k.variant), dtype_rank(k.dtype),
                      std::string_view(k.code.name));
  };
  std::stable_sort(out.begin(), out.end(),
                   [&](const labeled_kernel& a, const labeled_kernel& b) { return key(a) < key(b); });
  return out;
}

std::string checked_tool(const std::string& binary) {
  if (const std::string why = check_binary(binary); !why.empty()) throw std::invalid_argument(why);
  const std::string tool = find_cuobjdump();
  if (tool.empty()) {
    throw std::runtime_error(
        "cuobjdump not found: install it with `pip install nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm` "
        "(tools/setup.sh does), or set MEMLAB_CUOBJDUMP to its path");
  }
  return tool;
}

std::vector<std::string> archs_of(const std::vector<kernel_code>& code) {
  std::vector<std::string> archs;
  for (const auto& k : code)
    if (std::find(archs.begin(), archs.end(), k.arch) == archs.end()) archs.push_back(k.arch);
  std::sort(archs.begin(), archs.end(),
            [](const std::string& a, const std::string& b) { return arch_key(a) < arch_key(b); });
  return archs;
}

}  // namespace

inspect_report inspect_binary(const std::string& binary, std::span<const kernel_label> labels, std::string_view lab,
                              std::string_view arch, bool all_kernels) {
  const std::string tool = checked_tool(binary);
  inspect_report r;
  r.binary = binary;
  r.tool = tool + " -sass";
  // Only the chosen arch is disassembled when the cubins' names list the archs (a third of the time
  // for three); else the whole binary.
  const std::string listing = elf_listing(tool, binary);
  r.archs = listed_archs(listing);
  std::vector<kernel_code> code;
  std::string chosen;
  if (!r.archs.empty()) {
    chosen = choose_arch(r.archs, arch, binary);
    code = sass_of_arch(tool, binary, chosen, listing,
                        lab.empty() || all_kernels ? std::vector<std::string>{} : lab_marks(labels, lab));
  }
  if (code.empty()) {
    code = parse_sass(run_cuobjdump(tool, "-sass", binary));
    if (code.empty())
      throw std::invalid_argument("'" + binary + "' holds no CUDA kernels (cuobjdump -sass found none)");
    r.archs = archs_of(code);
    chosen = choose_arch(r.archs, arch, binary);
  }
  r.kernels = label_kernels(code, labels, lab, chosen, all_kernels);
  return r;
}

std::map<std::string, inspect_report> inspect_every_arch(const std::string& binary,
                                                         std::span<const kernel_label> labels, std::string_view only,
                                                         bool all_kernels, std::span<const std::string> labs) {
  // The cubins of `labs` alone, by their kernels' names; every cubin when a lab's kernels have no name to look for.
  std::vector<std::string> marks;
  for (const auto& lab : labs) {
    if (std::none_of(labels.begin(), labels.end(), [&](const kernel_label& l) { return l.lab == lab; })) continue;
    std::vector<std::string> m = lab_marks(labels, lab);
    if (m.empty()) {
      marks.clear();
      break;
    }
    std::move(m.begin(), m.end(), std::back_inserter(marks));
  }
  const std::string tool = checked_tool(binary);
  const std::string listing = elf_listing(tool, binary);
  const std::vector<std::string> listed = listed_archs(listing);
  if (!only.empty() && std::find(listed.begin(), listed.end(), only) == listed.end())
    throw std::invalid_argument("'" + binary + "' carries no SASS for " + std::string(only));
  // An arch after another: each is disassembled on every core already (sass_of_arch).
  std::map<std::string, std::vector<kernel_code>> code;  // by arch
  const auto add = [&code](std::vector<kernel_code> part) {
    for (auto& k : part) code[k.arch].push_back(std::move(k));
  };
  for (const auto& a : listed)
    if (only.empty() || a == only) add(sass_of_arch(tool, binary, a, listing, marks));
  if (code.empty() && only.empty()) add(parse_sass(run_cuobjdump(tool, "-sass", binary)));  // no arch in the names
  if (code.empty()) throw std::invalid_argument("'" + binary + "' holds no CUDA kernels (cuobjdump -sass found none)");
  std::vector<std::string> archs = listed;
  for (const auto& [a, kernels] : code)
    if (std::find(archs.begin(), archs.end(), a) == archs.end()) archs.push_back(a);
  std::sort(archs.begin(), archs.end(),
            [](const std::string& a, const std::string& b) { return arch_key(a) < arch_key(b); });
  std::map<std::string, inspect_report> out;
  for (auto& [a, kernels] : code) {
    inspect_report& r = out[a];
    r.binary = binary;
    r.tool = tool + " -sass";
    r.archs = archs;
    r.kernels = label_kernels(kernels, labels, "", a, all_kernels);
  }
  return out;
}

// ---- writers ----------------------------------------------------------------------------------------

namespace {

enum column { col_gload, col_gstore, col_shared, col_local, col_other, n_mem_columns };

column column_of(const mem_op& op) {
  if (op.space == mem_space::global && op.dir == mem_dir::load) return col_gload;
  if (op.space == mem_space::global && op.dir == mem_dir::store) return col_gstore;
  if (op.space == mem_space::shared || op.space == mem_space::async_copy) return col_shared;
  if (op.space == mem_space::local) return col_local;
  return col_other;  // generic loads/stores, global and generic atomics
}

}  // namespace

void write_inspect_table(std::ostream& os, const inspect_report& r) {
  os << r.binary << "  (" << r.tool << "; archs: " << join(r.archs, " ") << ")\n";
  if (r.kernels.empty()) {
    os << "(no kernels matched)\n";
    return;
  }
  text_table t;
  for (const char* h : {"lab", "variant", "dtype", "arch", "global loads", "global stores", "shared/async",
                        "local (spills)", "other", "kernel"})
    t.column(h, false);
  for (const auto& k : r.kernels) {
    std::array<std::string, n_mem_columns> cell;
    for (const auto& e : k.histogram) {
      auto& c = cell[column_of(e.op)];
      if (!c.empty()) c += ' ';
      c += e.op.op + "×" + std::to_string(e.count);
    }
    std::vector<std::string> row{k.lab, k.variant, k.dtype, k.code.arch};
    for (auto& c : cell) row.push_back(std::move(c));
    row.push_back(k.code.name);
    for (auto& c : row)
      if (c.empty()) c = "-";
    t.rows.push_back(std::move(row));
  }
  // The "other" column only when some kernel needs it.
  const bool any_other = std::any_of(t.rows.begin(), t.rows.end(), [](const auto& row) { return row[8] != "-"; });
  if (!any_other) {
    t.headers.erase(t.headers.begin() + 8);
    t.right.erase(t.right.begin() + 8);
    for (auto& row : t.rows) row.erase(row.begin() + 8);
  }
  write_aligned(os, t);
}

void write_inspect_json(std::ostream& os, const inspect_report& r) {
  nlohmann::ordered_json j;  // keys in schema order, not sorted
  j["schema"] = "memlab.inspect/1";
  j["binary"] = r.binary;
  j["tool"] = r.tool;
  j["archs"] = r.archs;
  j["kernels"] = nlohmann::ordered_json::array();
  for (const auto& k : r.kernels) {
    nlohmann::ordered_json mem = nlohmann::ordered_json::array();
    for (const auto& e : k.histogram)
      mem.push_back({{"op", e.op.op},
                     {"space", to_string(e.op.space)},
                     {"dir", to_string(e.op.dir)},
                     {"width_bits", e.op.width_bits},
                     {"count", e.count}});
    j["kernels"].push_back({{"lab", k.lab},
                            {"variant", k.variant},
                            {"dtype", k.dtype},
                            {"arch", k.code.arch},
                            {"name", k.code.name},
                            {"mangled", k.code.mangled},
                            {"memory", std::move(mem)}});
  }
  os << j.dump(2) << "\n";
}

}  // namespace memlab::inspect
