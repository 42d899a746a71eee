// A lab is a table: a family of kernel variants that solve one problem (a ladder, naive -> best),
// declared as data at the end of the lab's main file (src/labs/<lab>/<lab>.cu), with the few
// functions only the lab can know (its launch plan, its refusals, its CPU reference).
//
// The harness owns what every lab does alike: it turns the axes into a sweep and into CLI flags,
// allocates the buffers a case plans, fills inputs with fresh random data and poisons outputs,
// accounts device memory before allocating, checks outputs byte for byte (check.hpp), times, and
// derives every rate and percentage from what the case declared. Nothing in src/harness/ or
// src/cli/ names a lab, a variant or a lab's own axis.
#pragma once

#include <any>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <typeinfo>
#include <variant>
#include <vector>

#include "harness/buffer.hpp"
#include "harness/dtype.hpp"
#include "harness/result.hpp"

namespace memlab {

// ---- axes ------------------------------------------------------------------------------------------

// How an axis's values are written (harness/sizes.hpp has the grammars).
enum class axis_grammar {
  counts,  // plain numbers: 4; 0,2,8; 0..15 (counts up by 1); 1..32:*2
  bytes,   // byte counts: 4MiB, 2^20; ranges double by default: 8MiB..1GiB
  shape,   // extents joined by 'x': 128x256, 64x64x64; a list of them
  words,   // names from the axis's `words`, joined by ',': h2d,bidir; "all" for every one. The value is
           // the word's index; results report the word
};

// One swept dimension of a lab besides dtype and size. Declared by the lab, with designated
// initializers; the runner sweeps the product of its axes, the CLI turns each into --name
// (underscores become dashes) whose values are parsed and checked here, typed, before any GPU work,
// `memlab list` shows them, and every result reports each value as a param of the same name.
// Labs that declare an axis of one name share its flag: they must read its values alike (grammar,
// unit, rank, words; axis_flags() checks), each with its own meaning and range.
struct axis {
  std::string_view name;     // snake_case, as results report it: "block_rows" (flag --block-rows)
  std::string_view meaning;  // one line, for --help and `memlab list`
  // What one value counts, plural: "bytes", "elements", "accesses", "CTAs", ...; "" for words (a name).
  std::string_view unit;
  axis_grammar grammar = axis_grammar::counts;
  std::string_view defaults;  // what runs when the user gives none, in the grammar above: "0", "1..32"
  std::uint64_t min = 0;      // accepted range of every value (of every extent, for shapes)
  std::uint64_t max = std::uint64_t{1} << 40;
  std::uint64_t multiple_of = 1;         // every value (every extent) a multiple of this
  std::vector<std::uint64_t> choices{};  // the only values accepted, when the lab runs only these (1, 2, 4, 8)
  // Shape axes: the param name of each extent, in order ("rows", "cols"); its count is the rank.
  std::array<std::string_view, 3> extents{};
  // Words axes: the accepted names, in order (min and max are not used).
  std::vector<std::string_view> words{};
  // Counts that are GPU ordinals other than the case's own (a peer): "all" means every GPU, and the
  // planner drops the case's own GPU and any the machine does not have.
  bool other_gpus = false;
  // Its earlier names, as results files written before a rename report the param (`memlab list` shows
  // them, so the tools read an old file by today's name).
  std::vector<std::string_view> formerly{};

  [[nodiscard]] std::size_t rank() const;  // 1 for counts and bytes
  [[nodiscard]] std::string flag() const;  // "--src-offset"
};
// The flag of an axis named `axis_name`: "block_rows" -> "--block-rows".
std::string flag_of(std::string_view axis_name);

// One value of an axis: a number, or a shape of rank() extents.
struct axis_value {
  std::array<std::uint64_t, 3> v{};
  std::size_t rank = 1;
  [[nodiscard]] std::uint64_t operator[](std::size_t i) const { return v.at(i); }
  friend bool operator==(const axis_value&, const axis_value&) = default;
};

// Parses `text` in the axis's grammar and checks every value (check_axis_values). Throws
// std::invalid_argument naming the flag and the accepted grammar; an empty text is an error.
std::vector<axis_value> parse_axis(const axis& a, std::string_view text);
// Checks values parsed elsewhere (by a flag several labs share) against the axis's range, choices and
// multiple: one line naming the flag, as parse_axis gives.
void check_axis_values(const axis& a, std::span<const axis_value> values);
// What the axis accepts, in words: "1..32", "one of 1, 2, 4, 8", "8..4294967296, multiples of 8",
// "h2d, d2h, bidir".
std::string accepted_values(const axis& a);
// The axis's default values, parsed once per declaration and kept (what a run sweeps when the user
// gives none, and what make_case starts from). Throws as parse_axis for a bad declaration.
const std::vector<axis_value>& default_values(const axis& a);
// "128x256" for a shape, "4" for a number.
std::string to_string(const axis_value& v);

// ---- a case ----------------------------------------------------------------------------------------

// The parameters of one case: dtype, size, and one value of each of the lab's axes.
struct case_params {
  dtype type = dtype::f32;
  std::uint64_t n = 0;                                        // what the lab's sizes count (elements, lookups, ...)
  std::vector<std::pair<std::string_view, axis_value>> axes;  // the lab's axes, in declared order

  // The value of a number axis / of a shape axis; throws std::logic_error when the case has none.
  [[nodiscard]] std::uint64_t operator[](const axis& a) const;
  [[nodiscard]] const axis_value& shape(const axis& a) const;
  // Sets (or adds) the value of axis `a`.
  case_params& set(const axis& a, axis_value v);
  case_params& set(const axis& a, std::uint64_t v) { return set(a, axis_value{{v, 0, 0}, 1}); }
};

// A buffer a case needs. Inputs are filled with a fresh random stream at every reset (never zero,
// harness/fill.hpp); outputs are poisoned and get guard_bytes more, poisoned too, so that a stray
// store past the end is caught; scratch is the lab's own, filled by its setup.
enum class buffer_role { input, output, scratch };
struct buffer_spec {
  std::string_view name;
  std::uint64_t bytes = 0;
  buffer_role role = buffer_role::input;
};

// What a case will do, decided on the host before anything is allocated.
struct case_plan {
  launch_policy policy;
  // The fewest bytes the job must move through the memory level of the lab's roof, reads +
  // writes. Declared once; every GB/s and % is derived from it.
  std::uint64_t bytes = 0;
  // What the hardware really moves when the access pattern wastes some (sectors, halos); 0 = same.
  std::uint64_t hardware_bytes = 0;
  std::uint64_t flops = 0;
  // Bytes the kernel touches: the case is flagged L2-resident when they fit in the L2.
  std::uint64_t working_set = 0;
  std::vector<buffer_spec> buffers;
  // What the lab's host model predicts for the case, reported with its result as is (e.g. the bank
  // model's wavefronts per shared request, sectors per global request). Empty: nothing to report.
  std::vector<model_figure> model;
  // The roof of this case when it is not the lab's (a lab spanning levels: shared memory for an
  // L1-resident working set, L2, DRAM; a lab of links: PCIe for one rung, NVLink for another).
  // nullopt: the lab's roof.
  std::optional<roof_kind> roof;
  // Device memory the lab's setup allocates for a while beyond the buffers (sort scratch, ...).
  std::uint64_t transient_bytes = 0;
  // Transfers: the bytes moved in each direction, counted once per direction (`bytes` is their sum).
  std::vector<direction_figure> directions;
  // Collectives: nccl-tests' bus-bandwidth correction (busbw = algbw x factor); 0: none.
  double bus_factor = 0;
  // A link roof narrower than the device's (two GPUs joined by fewer NVLinks than the GPU has): its
  // rate per direction, GB/s. 0: the device's.
  double link_gbps = 0;
  // The launch may wait on the host for the GPU (a cudaMemcpyAsync from pageable memory): timed
  // without the blocking kernel (a held stream would never let it return), no graph figure.
  bool host_waits = false;

  // Everything the case allocates: buffers, output guards, transient. What is checked against
  // free device memory before the first allocation.
  [[nodiscard]] std::uint64_t device_bytes() const;
};

struct lab;
struct variant;

// A prepared case as the lab's functions see it.
struct case_ctx {
  const lab* l = nullptr;
  const variant* v = nullptr;
  case_params p;
  device_info dev;
  case_plan plan;
  std::vector<device_buffer> buffers;  // plan.buffers, allocated in order
  std::vector<std::uint64_t> seeds;    // per buffer: the random stream an input holds now (0 otherwise)
  std::any state;                      // whatever the lab's setup keeps for launch and verify

  // Buffer i, `byte_offset` bytes in, as T*.
  template <class T = std::byte>
  [[nodiscard]] T* ptr(std::size_t i, std::uint64_t byte_offset = 0) const {
    return reinterpret_cast<T*>(buffers.at(i).data() + byte_offset);
  }
};

// ---- variants --------------------------------------------------------------------------------------

// A kernel a variant launches, by symbol: the address of a __global__ function (what
// `&kernel<T>` gives on the host), which `memlab inspect` maps to its SASS through the name the
// CUDA runtime registers for it (harness/kernel_symbols.hpp). For a library's kernels that memlab
// cannot name (CUB's), `instantiated_with`: every kernel whose name mentions that type, one of ours.
struct kernel_ref {
  const void* symbol = nullptr;
  const std::type_info* instantiated_with = nullptr;

  template <class Kernel>
  static kernel_ref of(Kernel* k) {
    return {reinterpret_cast<const void*>(k), nullptr};
  }
  template <class T>
  static kernel_ref with_type() {
    return {nullptr, &typeid(T)};
  }
};

// For `Rung` with `template <class T> static auto kernel() { return &some_kernel<T>; }`: the
// kernel of each of `Ts`, in order.
template <class Rung, class... Ts>
std::vector<kernel_ref> kernels_of() {
  return {kernel_ref::of(Rung::template kernel<Ts>())...};
}

using launch_fn = void (*)(const case_ctx&, cudaStream_t);
// A rung's loop the way nccl-tests times it (harness timer::loop): `enqueue` puts `launches` launches
// back to back on the streams `streams` names (every GPU this process drives on its own stream, no
// joins between launches) and returns without waiting; `wait` returns once all of them are done.
struct loop_launcher {
  std::vector<cudaStream_t> (*streams)(const case_ctx&) = nullptr;
  void (*enqueue)(const case_ctx&, int launches) = nullptr;
  void (*wait)(const case_ctx&) = nullptr;
};

// What a rung needs to run a case. The harness refuses a case whose device lacks `min_cc` before
// the lab's own refusal is asked; `alignment` and `shape` are the lab's to check (it knows which
// pointers and extents they concern), and `memlab list` shows all of it.
struct rung_needs {
  int alignment = 0;           // bytes of alignment its pointers need (0: any element-aligned pointer)
  int min_cc = 0;              // the lowest compute capability, major x 10 + minor (90: Hopper); 0: any
  std::string_view feature{};  // what that architecture gives it, for the refusal: "TMA", "256-bit loads"
  std::string_view shape{};    // its shape rule in words ("rows of whole 16-byte vectors"); "": none
};

// One rung of a lab's ladder: one record, written with designated initializers, read top to
// bottom. What only the lab knows about a rung (its access width, its tile, the kernel family it
// belongs to) is its `traits`: a value of the lab's own type, which the lab's model code reads
// instead of switching on the rung's identity.
struct variant {
  std::string_view name{};            // by technique: scalar, vec16, ldgsts_cg16 ... never "fast" or "v2"
  std::string_view teaches{};         // one line: what this rung adds
  launch_fn launch = nullptr;         // enqueues one run on the stream; checks the launch; never synchronizes
  std::vector<kernel_ref> kernels{};  // what it launches (empty: no kernel of its own, e.g. cudaMemcpy)
  rung_needs needs{};
  bool peer = false;  // a library it is compared with (cudaMemcpy, CUB, ...), not one of memlab's
  // The roof this rung is bound by when it is not the lab's (cuBLAS's TF32 GEMM: tensor cores, in a lab
  // under the FP32 roof); a case's plan may still name its own.
  std::optional<roof_kind> roof{};
  // The lab's axes this rung does not read (by axis name): it runs at their first value only, and its
  // results report each of their params as not applicable (JSON null: a collective has no host
  // memory kind).
  std::vector<std::string_view> ignores{};
  std::any traits{};  // the lab's description of the rung (a struct of the lab's), see traits_as
  // Runs across every rank of a distributed run at once (a collective); a rung without it runs in one
  // process only, and a distributed run refuses it.
  bool all_ranks = false;
  // Also timed by nccl-tests' method (timer::loop) with this launcher; none: not.
  std::optional<loop_launcher> loop{};
  // Its earlier names, as results files written before a rename report the rung (`memlab list` shows
  // them, so the tools draw an old file under today's name).
  std::vector<std::string_view> formerly{};
  // The element types it moves (its kernels' types, or what the library it calls moves); empty: every type of
  // the lab's. The planner runs a rung at its own types only.
  std::vector<dtype> dtypes{};

  [[nodiscard]] bool moves(dtype t) const;

  // The rung's traits as the lab's type `T`; throws std::bad_any_cast when the table gave another.
  template <class T>
  [[nodiscard]] const T& traits_as() const {
    return std::any_cast<const T&>(traits);
  }
};

// One fact of a rung's traits, as `memlab list --format json` shows it (the rung's "facts"): what the
// tools downstream pick rungs by (the hierarchy lab's chases by load path and walk, its streams by the
// arrays they read and write), so that none of them names a rung.
struct rung_fact {
  std::string_view name;
  std::variant<bool, std::int64_t, std::string_view> value;
};

// The element types a ladder moves, from its rungs: the union of their own (every dtype where a rung lists
// none), in all_dtypes() order. For a lab whose rungs move different types (the transpose lab: its tiles f16,
// f32 and f64, memlab::transpose every element size).
std::vector<dtype> rung_dtypes(std::span<const variant> rungs);

// ---- the lab ---------------------------------------------------------------------------------------

struct lab {
  std::string_view name;
  std::string_view teaches;
  std::vector<dtype> dtypes;  // every type a rung of it moves (rung_dtypes where the rungs differ)
  dtype default_dtype = dtype::f32;
  std::string_view default_sizes;  // --sizes grammar (harness/sizes.hpp)
  std::string_view size_meaning;   // what a size counts: "elements copied"
  std::vector<axis> axes;
  roof_kind roof = roof_kind::dram;
  std::vector<variant> variants;
  // Environment variables the lab needs set before the device is opened (name, value), each set
  // only when the user has not set it; the run records each and who set it.
  std::vector<std::pair<std::string_view, std::string_view>> environment{};
  // What the binary was built without that some rungs need (an optional dependency), shown by
  // `memlab list`; "" when nothing is missing.
  std::string_view built_without{};
  // The axis that counts a case's ranks (GPUs), if any: a distributed run sets it to its world size.
  std::string_view ranks_axis{};

  // Why `v` cannot run `p` on `dev` (shapes, alignment, device features); nullopt when it can.
  // No GPU work: also called to plan a run and by host tests.
  std::optional<std::string> (*unsupported)(const variant& v, const case_params& p, const device_info& dev) = nullptr;
  // What a supported case moves, computes and allocates. No GPU work.
  case_plan (*plan)(const variant& v, const case_params& p, const device_info& dev) = nullptr;
  // Optional: runs once after the buffers are allocated (fills scratch, may refine the plan's bytes).
  void (*setup)(case_ctx& c) = nullptr;
  // Compares the outputs with the CPU reference after one launch on fresh inputs. "" when they
  // agree, else what differs first. Synchronous.
  std::string (*verify)(const case_ctx& c) = nullptr;
  // Optional: after timing, what the lab's kernels measured themselves during their last launch
  // (cycles and ns per dependent load, ...), reported with the result as read. Synchronous.
  std::vector<measured_figure> (*observe)(const case_ctx& c) = nullptr;
  // Optional: the facts of `v`'s traits that tools downstream read (`memlab list --format json`). No GPU work.
  std::vector<rung_fact> (*facts)(const variant& v) = nullptr;

  // Why `v` cannot run `p` on `dev`: first what the rung's needs say of the device (when one is
  // known: a default device_info plans on the host), then the lab's own refusal. nullopt when it can. No GPU work. What the runner, `memlab list` and tests ask.
  [[nodiscard]] std::optional<std::string> why_not(const variant& v, const case_params& p,
                                                   const device_info& dev) const;

  [[nodiscard]] const variant* find_variant(std::string_view name) const;
  [[nodiscard]] const axis* find_axis(std::string_view name) const;
  // A case of this lab: every axis at the first of its default values, then `values` over them
  // (by axis name; an unknown name throws std::invalid_argument). For tests and tools.
  [[nodiscard]] case_params make_case(dtype t, std::uint64_t n,
                                      std::initializer_list<std::pair<std::string_view, axis_value>> values = {}) const;
  // The params a result reports: dtype, n, then each axis (a shape as its extents), in order; with a
  // rung, the params of the axes it ignores are not applicable (param_value's monostate).
  [[nodiscard]] std::vector<param> params(const case_params& p, const variant* v = nullptr) const;
  // Why the table is not well formed ("" when it is): a rung ignoring an axis the lab does not declare,
  // an axis without a unit or whose defaults its own grammar refuses. Tests ask it of every lab.
  [[nodiscard]] std::string table_problem() const;
};

// A lab this binary was built without, and why.
struct missing_lab {
  std::string_view name;
  std::string_view why;
};

// Allocates the buffers of `plan` on the current device (throws cuda_error; cudaErrorMemoryAllocation
// when they do not fit) and runs the lab's setup. The inputs are not filled yet: call reset().
case_ctx prepare_case(const lab& l, const variant& v, const case_params& p, const device_info& dev,
                      const case_plan& plan);
// Fresh random inputs (a new seed for each), poisoned outputs (guards included). Synchronous.
void reset(case_ctx& c);

}  // namespace memlab
