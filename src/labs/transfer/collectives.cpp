// NCCL's collectives, by nccl-tests' calls (its *_perf tests: sizes, offsets, in place), timed cold and by
// nccl-tests' own method (the rungs' loop_launcher), and checked on every rank (routes.hpp). The ranks are
// every GPU this process drives, or this rank of a run of one process per GPU (ranks.hpp). NCCL is loaded
// on first use (harness/nccl_loader.hpp): where it cannot be, every collective is refused with the reason.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <thread>

#include "harness/error.hpp"
#include "harness/fill.hpp"
#include "harness/world.hpp"
#include "labs/transfer/ranks.hpp"
#include "labs/transfer/routes.hpp"

#if MEMLAB_HAVE_NCCL
namespace memlab::labs::transfer {

namespace {

// nccl-tests' method rotates its buffers (rank_pointers): at most this many regions, within this much.
inline constexpr std::uint64_t loop_rotation_regions = 20;
inline constexpr std::uint64_t loop_rotation_bytes = std::uint64_t{1} << 30;
// How many regions of `region` bytes (a collective's max(send, recv): nccl-tests' `shift`) the loop rotates
// through: as many as fit loop_rotation_bytes, at least one, at most its loop_rotation_regions iterations.
constexpr std::uint64_t loop_regions_of(std::uint64_t region) {
  return std::clamp<std::uint64_t>(loop_rotation_bytes / std::max<std::uint64_t>(region, 1), 1, loop_rotation_regions);
}
// From this size a launch of the host-launched loop takes a hundred microseconds or more: each is a point of
// progress for the waits of a run of one process per GPU (world::progress). Below, twenty launches take
// milliseconds, and the host's launch path is the figure: nothing is added to it.
inline constexpr std::uint64_t progress_point_bytes = std::uint64_t{16} << 20;

// What a collective case keeps. One process: rank r >= 1's devices, buffers and seeds (rank 0's are the
// case's own), each rank's stream forked from the case's. nccl-tests' method: each rank's own stream (one in
// a distributed run), and the buffers its loop rotates through, allocated as nccl-tests allocates them:
// nccl-tests moves every iteration's buffers `region` bytes on (its `shift`), over as many regions as its
// largest size holds; here up to 20 (its iterations) within 1 GiB a buffer, at least one.
struct collective_state {
  std::vector<int> devices;
  std::vector<device_buffer> rank_send, rank_recv;
  std::vector<std::uint64_t> rank_seed;
  std::vector<std::unique_ptr<side_stream>> sides;  // one per other rank
  std::vector<std::unique_ptr<cuda_stream>> loop_streams;
  std::vector<nccl_memory> loop_send, loop_recv;  // per rank (this rank alone in a distributed run)
  std::uint64_t loop_regions = 1, loop_region = 0;
};

collective_state& state_of(const case_ctx& c) { return state_as<collective_state>(c); }

int ranks_of(const case_params& p) { return static_cast<int>(p[gpus_axis]); }

// Rank `rank` of `ranks`: its collective on its stream, nccl-tests' calls for size S (transfer.hpp:
// buffers_of), out of place or in place. Returns NCCL's result.
ncclResult_t collective_call(const nccl_api& api, collective op, std::byte* send, std::byte* recv, std::uint64_t size,
                             int ranks, int rank, ncclComm_t comm, cudaStream_t s) {
  const std::size_t share = size / static_cast<std::uint64_t>(ranks);
  switch (op) {
    case collective::all_reduce: return api.ncclAllReduce(send, recv, size, ncclUint8, ncclSum, comm, s);
    case collective::all_gather: return api.ncclAllGather(send, recv, share, ncclUint8, comm, s);
    case collective::reduce_scatter: return api.ncclReduceScatter(send, recv, share, ncclUint8, ncclSum, comm, s);
    case collective::broadcast: return api.ncclBroadcast(send, recv, size, ncclUint8, 0, comm, s);
    case collective::all_to_all: {
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
      // As nccl-tests: NCCL's own all-to-all where the library has it (2.28 and later) ...
      if (api.ncclAlltoAll != nullptr) return api.ncclAlltoAll(send, recv, share, ncclUint8, comm, s);
#endif
      // ... else a send and a receive of S/n with every rank, in one group.
      if (const ncclResult_t r = api.ncclGroupStart(); r != ncclSuccess) return r;
      for (int k = 0; k < ranks; ++k) {
        (void)api.ncclSend(send + static_cast<std::size_t>(k) * share, share, ncclUint8, k, comm, s);
        (void)api.ncclRecv(recv + static_cast<std::size_t>(k) * share, share, ncclUint8, k, comm, s);
      }
      return api.ncclGroupEnd();
    }
    case collective::send_recv: {  // a ring, as nccl-tests' sendrecv_perf: to rank + 1, from rank - 1
      if (const ncclResult_t r = api.ncclGroupStart(); r != ncclSuccess) return r;
      (void)api.ncclSend(send, size, ncclUint8, (rank + 1) % ranks, comm, s);
      (void)api.ncclRecv(recv, size, ncclUint8, (rank + ranks - 1) % ranks, comm, s);
      return api.ncclGroupEnd();
    }
    case collective::none: break;
  }
  return ncclSuccess;
}

void check(const nccl_api& api, ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string(what) + " failed: " + api.ncclGetErrorString(r));
}

// Rank r's send and receive pointers (`local`: its index among this process's ranks): its own buffers out of
// place; in place, the one buffer at nccl-tests' offsets (transfer.hpp: collective_buffers). `iteration` >= 0:
// the loop's buffers, moved on by a region each iteration as nccl-tests moves them.
std::pair<std::byte*, std::byte*> rank_pointers(const case_ctx& c, int r, int local, int iteration = -1) {
  auto& st = state_of(c);
  const auto i = static_cast<std::size_t>(local);
  std::byte* send = local == 0 ? c.ptr(src_buffer) : st.rank_send[i - 1].data();
  std::byte* recv = in_place(c.p) ? nullptr : local == 0 ? c.ptr(dst_buffer) : st.rank_recv[i - 1].data();
  if (iteration >= 0) {
    const std::uint64_t shift = st.loop_region * (static_cast<std::uint64_t>(iteration) % st.loop_regions);
    send = st.loop_send[i].data() + shift;
    recv = in_place(c.p) ? nullptr : st.loop_recv[i].data() + shift;
  }
  if (!in_place(c.p)) return {send, recv};
  const collective_buffers b = buffers_of(traits(*c.v).op, c.p.n, ranks_of(c.p));
  const auto rank = static_cast<std::uint64_t>(r);
  return {send + b.send_step * rank, send + b.recv_step * rank};
}

// The case's collective, every rank at once: in one process, every rank's call inside one group (NCCL
// launches them together), each on a stream forked from `s`; in a distributed run, this rank's call on `s`.
void launch(const case_ctx& c, cudaStream_t s) {
  auto& st = state_of(c);
  const nccl_api& api = nccl();
  const collective op = traits(*c.v).op;
  const world& w = this_world();
  if (w.distributed()) {
    const auto [send, recv] = rank_pointers(c, w.rank(), 0);
    w.enqueued(
        collective_call(api, op, send, recv, c.p.n, w.size(), w.rank(), static_cast<ncclComm_t>(w.communicator()), s),
        "the collective");
    return;
  }
  const int ranks = static_cast<int>(st.devices.size());
  const auto& comms = communicators(st.devices);
  std::vector<cudaStream_t> on(static_cast<std::size_t>(ranks), s);
  for (int r = 1; r < ranks; ++r) on[static_cast<std::size_t>(r)] = st.sides[static_cast<std::size_t>(r - 1)]->begin(s);
  check(api, api.ncclGroupStart(), "ncclGroupStart");
  for (int r = 0; r < ranks; ++r) {
    const auto [send, recv] = rank_pointers(c, r, r);
    check(api,
          collective_call(api, op, send, recv, c.p.n, ranks, r, comms[static_cast<std::size_t>(r)],
                          on[static_cast<std::size_t>(r)]),
          "the collective");
  }
  check(api, api.ncclGroupEnd(), "ncclGroupEnd");
  for (int r = 1; r < ranks; ++r) st.sides[static_cast<std::size_t>(r - 1)]->end(s);
}

// nccl-tests' loop (the rung's loop_launcher): `launches` collectives back to back, each rank on its own
// stream with no join between launches (in one process, one group per launch over every rank, as
// nccl-tests -g N does); the wait polls every stream, as nccl-tests does.
std::vector<cudaStream_t> loop_streams(const case_ctx& c) {
  std::vector<cudaStream_t> out;
  for (const auto& s : state_of(c).loop_streams) out.push_back(s->get());
  return out;
}

void loop_enqueue(const case_ctx& c, int launches) {
  auto& st = state_of(c);
  const nccl_api& api = nccl();
  const collective op = traits(*c.v).op;
  const world& w = this_world();
  if (w.distributed()) {
    const cudaStream_t s = st.loop_streams.front()->get();
    const auto comm = static_cast<ncclComm_t>(w.communicator());
    const bool points = c.p.n >= progress_point_bytes;
    for (int i = 0; i < launches; ++i) {
      const auto [send, recv] = rank_pointers(c, w.rank(), 0, i);
      w.enqueued(collective_call(api, op, send, recv, c.p.n, w.size(), w.rank(), comm, s), "the collective");
      if (points) w.progress(s);
    }
    return;
  }
  const int ranks = static_cast<int>(st.devices.size());
  const auto& comms = communicators(st.devices);
  for (int i = 0; i < launches; ++i) {
    check(api, api.ncclGroupStart(), "ncclGroupStart");
    for (int r = 0; r < ranks; ++r) {
      const auto [send, recv] = rank_pointers(c, r, r, i);
      check(api,
            collective_call(api, op, send, recv, c.p.n, ranks, r, comms[static_cast<std::size_t>(r)],
                            st.loop_streams[static_cast<std::size_t>(r)]->get()),
            "the collective");
    }
    check(api, api.ncclGroupEnd(), "ncclGroupEnd");
  }
}

void loop_wait(const case_ctx& c) {
  auto& st = state_of(c);
  const world& w = this_world();
  if (w.distributed()) {
    w.wait(st.loop_streams.front()->get());  // also notices a rank that stopped
    return;
  }
  for (bool busy = true; busy;) {
    busy = false;
    for (const auto& stream : st.loop_streams) {
      const cudaError_t e = cudaStreamQuery(stream->get());
      if (e == cudaErrorNotReady) {
        busy = true;
      } else {
        MEMLAB_CUDA_CHECK(e);
      }
    }
    if (busy) std::this_thread::yield();
  }
}

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& t = traits(v);
  const int ranks = ranks_of(p);
  // A distributed run has a process per rank, each with its GPU: the machine's count is not the limit.
  if (!this_world().distributed() && ranks > dev.device_count) {
    return "--gpus " + std::to_string(ranks) + " needs " + std::to_string(ranks) + " GPUs; this machine shows " +
           std::to_string(dev.device_count);
  }
  if (p.n == 0) return std::string("a collective of 0 bytes moves nothing");
  if (in_place(p) && (t.op == collective::all_to_all || t.op == collective::send_recv)) {
    return std::string(v.name) +
           " has no in-place form in NCCL (a receive could overwrite what a send has not read yet); nccl-tests "
           "prints a column for it all the same";
  }
  if (auto why = collective_refusal(t.op, p.n, ranks)) return why;
  return nccl_unavailable();  // last: asking loads NCCL
}

case_plan plan(const variant& v, const case_params& p, const device_info& dev) {
  const rung_traits& t = traits(v);
  const std::uint64_t n = p.n;
  const int ranks = ranks_of(p);
  const collective_buffers b = buffers_of(t.op, n, ranks);
  case_plan out;
  // Between GPUs: NVLink where NVML found active links, else the PCIe link the bytes then cross.
  out.roof = dev.nvlink_gbps > 0 ? roof_kind::nvlink : roof_kind::pcie;
  out.bus_factor = bus_factor(t.op, ranks);
  // Ranks that reach each other through NCCL's network transport: NCCL's host side may wait on the GPU
  // while it enqueues (a run of sockets between processes hung there behind the blocking kernel), so these
  // collectives are timed without holding the stream (events around the launch, the host's launch cost
  // inside) and have no graph figure.
  out.host_waits = this_world().distributed() && this_world().over_network();
  // nccl-tests' rotation: its loop's own buffers, one region or more (setup).
  const std::uint64_t region = std::max(b.send, b.recv);
  out.transient_bytes = loop_regions_of(region) * region * (in_place(p) ? 1 : 2);
  // In place: one buffer, input and output at once (filled with random input; the check reads the
  // reduced or gathered part and the untouched rest).
  out.buffers = in_place(p) ? std::vector<buffer_spec>{{"data", b.in_place_bytes(), buffer_role::input},
                                                       {"none", 0, buffer_role::scratch}}
                            : std::vector<buffer_spec>{{"send", b.send, buffer_role::input},
                                                       {"recv", b.recv, buffer_role::output}};
  out.bytes = n;  // nccl-tests' S (algbw = S / t)
  out.working_set = out.bytes;
  return out;
}

// The other ranks' buffers and the loop's, filled here once: their seeds are fixed for the case (the
// harness refreshes only its own inputs at every reset).
void setup(case_ctx& c) {
  auto st = std::make_shared<collective_state>();
  const std::uint64_t n = c.p.n;
  const int ranks = ranks_of(c.p);
  const collective_buffers b = buffers_of(traits(*c.v).op, n, ranks);
  st->loop_region = std::max(b.send, b.recv);
  st->loop_regions = loop_regions_of(st->loop_region);
  const auto loop_buffers = [&] {
    const std::uint64_t bytes = st->loop_regions * st->loop_region;
    st->loop_send.emplace_back(bytes);
    st->loop_recv.emplace_back(in_place(c.p) ? 0 : bytes);
    fill_random(st->loop_send.back().data(), bytes, next_seed(), nullptr);
  };
  if (this_world().distributed()) {  // this rank's buffers are the case's own
    st->loop_streams.push_back(std::make_unique<cuda_stream>());
    loop_buffers();
    MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    c.state = std::move(st);
    return;
  }
  loop_buffers();
  for (int r = 0; r < ranks; ++r) st->devices.push_back((c.dev.ordinal + r) % std::max(c.dev.device_count, 1));
  {
    const current_device home(c.dev.ordinal);
    st->loop_streams.push_back(std::make_unique<cuda_stream>());
  }
  for (int r = 1; r < ranks; ++r) {
    const int d = st->devices[static_cast<std::size_t>(r)];
    {
      const current_device on(d);
      st->rank_seed.push_back(next_seed());
      if (in_place(c.p)) {
        st->rank_send.emplace_back(b.in_place_bytes());
        fill_random(st->rank_send.back().data(), b.in_place_bytes(), st->rank_seed.back(), nullptr);
      } else {
        st->rank_send.emplace_back(b.send);
        st->rank_recv.emplace_back(b.recv + guard_bytes);
        fill_random(st->rank_send.back().data(), b.send, st->rank_seed.back(), nullptr);
        MEMLAB_CUDA_CHECK(cudaMemset(st->rank_recv.back().data(), poison_byte, b.recv + guard_bytes));
      }
      st->loop_streams.push_back(std::make_unique<cuda_stream>());
      loop_buffers();
      MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
    }
    st->sides.push_back(std::make_unique<side_stream>(c.dev.ordinal, d));
  }
  (void)communicators(st->devices);  // formed now, outside every timed sample
  c.state = std::move(st);
}

// Every rank's output, on the GPU where it is: each byte the sum (mod 256) of the input bytes source_of()
// names, each rank k's input the random stream of its seed.
std::string verify(const case_ctx& c) {
  MEMLAB_CUDA_CHECK(cudaDeviceSynchronize());
  auto& st = state_of(c);
  const world& w = this_world();
  const collective op = traits(*c.v).op;
  const int ranks = ranks_of(c.p);
  const device_buffer& own = in_place(c.p) ? c.buffers[src_buffer] : c.buffers[dst_buffer];
  if (w.distributed()) {  // this rank's output; every rank's seed, from every rank
    const auto seeds = w.gather(c.seeds[src_buffer]);
    if (auto e = check_collective(own, op, c.p.n, ranks, w.rank(), in_place(c.p), seeds); !e.empty()) {
      return "rank " + std::to_string(w.rank()) + ": " + e;
    }
    return {};
  }
  std::vector<std::uint64_t> seeds{c.seeds[src_buffer]};
  seeds.insert(seeds.end(), st.rank_seed.begin(), st.rank_seed.end());
  for (int r = 0; r < ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    const device_buffer& out = r == 0 ? own : in_place(c.p) ? st.rank_send[i - 1] : st.rank_recv[i - 1];
    const current_device on(st.devices[i]);  // the check runs where the bytes are
    if (auto e = check_collective(out, op, c.p.n, ranks, r, in_place(c.p), seeds); !e.empty()) {
      return "rank " + std::to_string(r) + ": " + e;
    }
  }
  return {};
}

}  // namespace

const route_ops collective_route{.launch = launch, .refusal = refusal, .plan = plan, .setup = setup, .verify = verify};
const loop_launcher collective_loop{.streams = loop_streams, .enqueue = loop_enqueue, .wait = loop_wait};

}  // namespace memlab::labs::transfer
#endif
