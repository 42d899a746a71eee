// A lab is a family of kernel variants that solve one problem (a ladder, naive -> best).
// The runner, the CLI and the tests drive every lab through this interface only.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/dtype.hpp"
#include "harness/result.hpp"
#include "inspect/inspect.hpp"

namespace memlab {

struct variant_info {
  std::string_view name;     // by technique: scalar, vec16, ldgsts16 ... never "fast" or "v2"
  std::string_view teaches;  // one line: what this rung of the ladder adds
  // Fragments that all occur in the demangled name of this variant's kernel(s): how `memlab
  // inspect` finds its SASS. Empty when the variant launches no kernel of its own (cudaMemcpy).
  std::vector<std::string_view> kernel_name_contains;
  bool peer = false;         // a library it is compared with (cudaMemcpy, CUB, Thrust), not memlab's
};

// One rung of a lab's ladder: the lab's own id for the variant (its enum) and what users see.
template <class Id>
struct variant_entry {
  Id id;
  variant_info info;
};

// The variant_info column of a lab's ladder table, in ladder order: what lab::variants() returns.
template <class Id, std::size_t N>
std::array<variant_info, N> infos_of(const std::array<variant_entry<Id>, N>& entries) {
  std::array<variant_info, N> out{};
  for (std::size_t i = 0; i < N; ++i) out[i] = entries[i].info;
  return out;
}

// The id of the variant named `name` in a ladder table; nullopt when there is none.
template <class Id, std::size_t N>
std::optional<Id> id_by_name(const std::array<variant_entry<Id>, N>& entries, std::string_view name) {
  for (const auto& e : entries)
    if (e.info.name == name) return e.id;
  return std::nullopt;
}

// The axes a lab may sweep besides dtype and size. Each lab declares the ones it reads; the CLI
// (--src-offset, --stride, ...) and the runner iterate over every combination.
enum class axis { src_offset, dst_offset, stride, ctas, tile, table_bytes };
std::string_view to_string(axis a);  // the CLI flag without dashes: "src-offset"

// The parameters of one case. Offsets are in bytes and shift the pointers handed to the kernel away
// from the allocation's (256-byte aligned) start. An axis a lab does not read keeps its default.
struct case_params {
  dtype type = dtype::f32;
  std::uint64_t n = 0;            // elements (of the problem's main 1D extent)
  std::uint64_t src_offset = 0;   // bytes
  std::uint64_t dst_offset = 0;   // bytes
  std::uint64_t stride = 1;       // elements between the accesses of neighbouring threads
  std::uint64_t ctas = 0;         // CTAs to launch; 0: as many as the problem has
  std::uint64_t rows = 0;         // a 2D tile: rows x cols elements
  std::uint64_t cols = 0;
  std::uint64_t table_bytes = 0;  // the table a gather reads from
};

// Values for each axis; an empty list means "the lab's default" (or the case_params default).
struct axis_values {
  std::vector<std::uint64_t> src_offset, dst_offset, stride, ctas, table_bytes;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> tile;  // rows x cols
  [[nodiscard]] bool given(axis a) const;
};

// One prepared case: buffers allocated, ready to fill, run, verify and time.
class prepared_case {
 public:
  virtual ~prepared_case() = default;
  [[nodiscard]] virtual launch_policy policy() const = 0;
  // The fewest bytes the job must move through device memory, reads + writes. Declared once.
  [[nodiscard]] virtual std::uint64_t bytes() const = 0;
  // Bytes the kernel touches (to flag a working set that fits in L2).
  [[nodiscard]] virtual std::uint64_t working_set_bytes() const = 0;
  // Fresh random, never-zero input (new seed each call) and a poisoned output. Synchronous.
  virtual void reset() = 0;
  // Bytes the memory system really moves, when the access pattern makes it differ from bytes()
  // (e.g. 32-byte sectors touched by a strided warp); 0 when the same.
  [[nodiscard]] virtual std::uint64_t hardware_bytes() const { return 0; }
  // Enqueue one run of the variant on `stream`; checks the launch. Must not synchronize.
  virtual void launch(cudaStream_t stream) = 0;
  // Compare the output with the CPU reference. Empty string when equal, else what differs first.
  // Synchronous.
  [[nodiscard]] virtual std::string verify() = 0;
};

class lab {
 public:
  virtual ~lab() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  [[nodiscard]] virtual std::string_view teaches() const = 0;
  [[nodiscard]] virtual std::span<const variant_info> variants() const = 0;
  [[nodiscard]] virtual std::span<const dtype> dtypes() const = 0;
  [[nodiscard]] virtual dtype default_dtype() const = 0;
  // What `memlab run` measures when --sizes is not given (grammar of harness/sizes.hpp).
  [[nodiscard]] virtual std::string_view default_sizes() const = 0;
  // What --sizes counts for this lab, for `memlab list` (e.g. "elements copied").
  [[nodiscard]] virtual std::string_view size_meaning() const { return "elements"; }
  // The axes this lab reads, and the values it runs when the user gives none.
  [[nodiscard]] virtual std::span<const axis> axes() const { return {}; }
  [[nodiscard]] virtual axis_values default_axes() const { return {}; }
  // Why `variant` cannot run these params on this device; nullopt when it can.
  [[nodiscard]] virtual std::optional<std::string> unsupported(std::string_view variant, const case_params& p,
                                                               const device_info& dev) const = 0;
  // The case's parameters as results report them (shared names: dtype, n, src_offset, ...).
  [[nodiscard]] virtual std::vector<param> params(const case_params& p) const = 0;
  // Device memory a case needs, to refuse sizes that do not fit before allocating.
  [[nodiscard]] virtual std::uint64_t device_bytes(const case_params& p) const = 0;
  // Allocates on the current device, sized for `dev`. Throws memlab::cuda_error on CUDA failures.
  [[nodiscard]] virtual std::unique_ptr<prepared_case> prepare(std::string_view variant, const case_params& p,
                                                              const device_info& dev) const = 0;

  [[nodiscard]] const variant_info* find_variant(std::string_view v) const;
};

// Every lab built into this binary, in the order `memlab list` shows them.
std::span<const lab* const> all_labs();
const lab* find_lab(std::string_view name);
// Labs this binary was built without, each with why: "tile: not built, CuTe headers not found ...".
std::span<const std::string_view> missing_labs();

// How `memlab inspect` recognises each lab variant's kernels.
std::vector<inspect::kernel_label> kernel_labels();

}  // namespace memlab
