// The hierarchy lab's host side: what its two parts share (the record of what a kind of rung does,
// its traits, the stream operations as data), the chase chain, the launch plans and the figures read
// back from the kernels. Plain C++ (no CUDA runtime calls): the host tests replay all of it without a
// GPU. The kernels live in chase.cu (latency: the chases, the register chain, the loaded chase; the
// lab's table at its end) and stream.cu (bandwidth: BabelStream's operations, the shared-memory dot).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "harness/lab.hpp"
#include "harness/result.hpp"

namespace memlab::labs::hierarchy {

// What the lab does with the cases of one kind of rung (a chase, the register chain, the loaded chase,
// a stream): one record each, in the part that owns the kind; the lab's functions call the rung's.
struct rung_kind {
  std::string_view name{};  // "chase", "stream", ...: the rung's kind among its facts (memlab list --format json)
  bool walks = false;       // its cases walk a chain: the traits' path, order and per_sm describe them
  bool streams = false;     // its cases stream arrays: the traits' path, op and every_cta_reads_all describe them
  std::optional<std::string> (*refusal)(const variant& v, const case_params& p, const device_info& dev) = nullptr;
  case_plan (*plan)(const variant& v, const case_params& p, const device_info& dev) = nullptr;
  void (*setup)(case_ctx& c) = nullptr;
  std::string (*verify)(const case_ctx& c) = nullptr;
  std::vector<measured_figure> (*observe)(const case_ctx& c) = nullptr;  // nullptr: nothing measured in-kernel
};

enum class load_path {
  l1,      // ld.global (.ca, the default): L1 and L2
  l2,      // ld.global.cg: L2 only
  shared,  // shared memory
};
enum class chase_order {
  random,      // a random cyclic permutation of the nodes (Sattolo): no prefetcher, no locality
  sequential,  // node i -> i + 1: the classic stride chase (one node per `stride` bytes)
};

// A stream's arrays, BabelStream's a, b and c; `none` (the value a place of a stream_op left out of its
// initializer takes) fills an unused place.
enum class stream_array : std::uint8_t { none, a, b, c };
// The buffer of an array: a, b, c are a case's first three.
constexpr std::size_t buffer_of(stream_array x) { return static_cast<std::size_t>(x) - 1; }
// One of BabelStream's operations as data: the arrays an element reads (in the operation's order) and
// the one it writes, and its FLOPs per element. The bytes, the FLOPs, the buffers a case fills and
// checks, and the launch's pointers all follow from it (stream.cu holds the table of them, each row
// with its element operation).
struct stream_op {
  std::array<stream_array, 2> reads{stream_array::none, stream_array::none};
  stream_array writes = stream_array::none;  // none: a reduction (s += ..., the dot)
  int flops = 0;

  [[nodiscard]] constexpr int arrays_read() const {
    return (reads[0] != stream_array::none ? 1 : 0) + (reads[1] != stream_array::none ? 1 : 0);
  }
  [[nodiscard]] constexpr int arrays_written() const { return writes != stream_array::none ? 1 : 0; }
  [[nodiscard]] constexpr bool reduces() const { return writes == stream_array::none; }
};
// An element of a stream: the value written, from the elements read (0 where the op reads fewer) and
// the scalar s; for a reduction, the running sum after this element, from the sum so far in place of s.
using stream_element_fn = float (*)(float x, float y, float s);

// A rung's traits (variant::traits): what the lab's model code reads.
struct rung_traits {
  const rung_kind* kind = nullptr;  // what the lab does with the rung's cases
  load_path path = load_path::l1;
  chase_order order = chase_order::random;  // chases: the walk's order
  bool per_sm = false;                      // chases: one walker per SM (one CTA each), a latency per SM
  stream_op op{};                           // streams: the operation
  stream_element_fn element = nullptr;      // streams: the operation's element, the host's copy (verify)
  bool every_cta_reads_all = false;         // streams: every CTA reads the whole arrays (data many SMs request)
};

// What `memlab list --format json` shows of a rung's traits (the lab's `facts`): its kind's name, then what
// applies to that kind: a walk's load path, order and per_sm; a stream's load path, arrays read and written,
// FLOPs per element and every_cta_reads_all. The Python tools pick the rungs of each picture by these.
std::vector<rung_fact> facts(const variant& v);

// ---- the chain ----------------------------------------------------------------------------------------

// next[i]: the node after node i. random: one cycle through all nodes (Sattolo's algorithm, so the
// walk from any node visits every node before it returns); sequential: i -> i + 1 mod nodes.
std::vector<std::uint64_t> make_chain(std::uint64_t nodes, chase_order order, std::uint64_t seed);
// True when `next` is one cycle through every node.
bool is_single_cycle(std::span<const std::uint64_t> next);
// The node reached from `start` after `steps` steps.
std::uint64_t walk(std::span<const std::uint64_t> next, std::uint64_t start, std::uint64_t steps);

// ---- plans ----------------------------------------------------------------------------------------------

inline constexpr std::uint64_t warmup_cap = 4096;      // dependent loads before the timed walk, at most
inline constexpr unsigned max_samples = 512;           // loads timed one by one (the histogram)
inline constexpr unsigned register_chain_unroll = 64;  // FFMAs per loop iteration

// A walk: `warmup` loads (the whole cycle when it is short enough: an L1-sized chain is then
// resident), `steps` timed loads, `samples` loads timed one by one.
struct chase_plan {
  std::uint64_t nodes = 0;
  std::uint64_t warmup = 0;
  std::uint64_t steps = 0;
  unsigned samples = 0;
  std::uint64_t walkers = 1;  // CTAs walking (per_sm: one per SM, each from its own start)
};
chase_plan plan_chase(std::uint64_t chain_bytes, std::uint64_t stride, std::uint64_t steps, bool per_sm, int sm_count);
// Walker w's first node: evenly spaced along the cycle (walkers never chase each other's lines).
std::uint64_t walker_start(std::span<const std::uint64_t> next, const chase_plan& p, std::uint64_t w);
// Every walker's first node, in one walk around the cycle (O(nodes), not O(nodes x walkers)).
std::vector<std::uint64_t> walker_starts(std::span<const std::uint64_t> next, const chase_plan& p);

// The ILPs the stream kernels are built for (--ilp): each a kernel of its own.
inline constexpr std::array<int, 4> stream_ilps{1, 2, 4, 8};
// Every SM streams: `grid` CTAs of `threads`, each `ilp` 16-byte vectors per array in flight per
// thread; `passes` over the data so that one launch moves at least its target (below). A small array
// gets fewer CTAs, each at least one full tile (threads x ilp vectors), rather than CTAs with idle
// threads: `sms_busy` says how many SMs then work.
inline constexpr int stream_threads = 256;  // threads per CTA of every stream kernel
struct bandwidth_plan {
  std::uint64_t grid = 0;
  int threads = stream_threads;
  int ilp = 4;
  std::uint64_t vectors = 0;  // 16-byte vectors per array
  std::uint64_t slice = 0;    // vectors per CTA (its own part; every_cta_reads_all: all of them)
  unsigned passes = 1;
  std::uint64_t bytes = 0;  // reads + writes of one launch, all passes
  std::uint64_t flops = 0;
  std::uint64_t sms_busy = 0;
};
// What one launch moves at least: 1 GiB from the L2 or DRAM; from an SM's own L1 or shared memory
// 48 MiB per busy SM (6 GiB, ~200 us on an H100), so that the launch gap, the staging copy and the
// first pass from the L2 (2.5-3 us together on the H100) cost ~1.5% of it, not 7% of a 1 GiB launch
// (docs/notes/hierarchy_l1_bandwidth.md).
inline constexpr std::uint64_t bandwidth_target_bytes = std::uint64_t{1} << 30;
inline constexpr std::uint64_t sm_target_bytes = std::uint64_t{48} << 20;
// A read-only share of at most this many bytes per SM stays in the SM's L1 across passes.
inline constexpr std::uint64_t l1_share_bytes = std::uint64_t{128} << 10;
// True when every busy SM reads its share from its own L1 or shared memory, pass after pass (the
// case's roof is then shared memory's): a shared-memory stream (smem_dot) always, an L1-path read-only
// stream whose arrays take at most l1_share_bytes per SM. Writes go to the L2.
bool served_by_sm(const rung_traits& t, std::uint64_t array_bytes, int sm_count);
// `passes` 0: as many as reach the launch's target (at most 2^20).
bandwidth_plan plan_bandwidth(const rung_traits& t, std::uint64_t array_bytes, int sm_count, int ilp, int ctas_per_sm,
                              std::uint64_t passes = 0);
// Bytes in flight per SM of a plan: CTAs per SM x threads x ilp x 16 B x arrays read (Little's law).
std::uint64_t bytes_in_flight_per_sm(const rung_traits& t, int threads, int ilp, int ctas_per_sm);

// The dot's check. The data are multiples of 1/8 in [1/8, 2], so every product is a multiple of 1/64
// in [1/64, 4], exact in f32, and a float sum of them is exact while it stays under 2^18 (a multiple
// of 1/64 below 2^18 has at most 24 significant bits). The most vectors one thread reads per pass
// (4 products each, into one of its accumulators):
std::uint64_t dot_vectors_per_thread(const rung_traits& t, const bandwidth_plan& p);
// How far a CTA's float partial may be from the exact sum, relative to it: gamma_m = m u / (1 - m u),
// u = 2^-24, m = the most roundings a product goes through (Higham's bound for sums of positive
// terms). A thread's accumulators are exact while 4 x 4 x passes x vectors per thread < 2^18 (then
// m counts only the reduction: ilp - 1 accumulator adds, 5 shuffles, 8 warp sums); past that every
// FFMA of the chain counts too. Infinity when m u >= 1/2 (nothing left to check).
double dot_tolerance(const rung_traits& t, const bandwidth_plan& p);

// ---- the two parts ------------------------------------------------------------------------------------

// The stream rungs, in the lab's order, and the axes only they read (stream.cu); the lab's table
// (chase.cu) lists them after the chases'.
std::vector<variant> stream_rungs();
std::vector<axis> stream_axes();
// Fills x[0, n) with the streams' data (small multiples of 1/8: sums, products and FMAs exact in f32), as
// stream.cu's setup does; the loaded chase streams such an array. Asynchronous, on the default stream.
void fill_stream_array(float* x, std::uint64_t n, std::uint64_t seed);

// ---- figures ------------------------------------------------------------------------------------------

inline constexpr unsigned histogram_bucket_cycles = 16;
// The figures of one walk: cycles and ns per load, the SM clock over the walk, the sampled
// latencies' percentiles and their histogram (buckets of histogram_bucket_cycles, non-empty ones,
// `detail`).
std::vector<measured_figure> walk_figures(std::uint64_t cycles, std::uint64_t ns, std::uint64_t steps,
                                          std::span<const std::uint32_t> samples);
// The q-quantile (0..1) of `v` (nearest rank); 0 when empty.
double quantile(std::vector<std::uint32_t> v, double q);

}  // namespace memlab::labs::hierarchy
