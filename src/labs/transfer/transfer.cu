// The transfer lab: bytes that leave the GPU's own memory. Host <-> device over PCIe (pageable,
// pinned, registered and write-combined host memory; the copy engines against the SMs reading or
// writing mapped host memory), GPU <-> GPU peer copies and the latency of one small access to a
// peer, and NCCL's collectives: one process driving every GPU, or one process per GPU (a rank of a
// distributed run, harness/world.hpp), each timed cold and by nccl-tests' own method.
//
// Bytes are counted once per direction (a 1 GiB host-to-device copy moves 1 GiB; bidirectional moves
// 1 GiB each way, 2 GiB in all), as nvbandwidth counts them.
//
// This file is the lab's table: its axes, then its rungs, one record each, then the lab. A rung's route
// (its traits' `where`) names the file of the lab that plans, refuses, sets up, launches and checks it
// (routes.hpp: host.cpp, peer.cu, collectives.cpp); the lab's functions below pass each case to its route.
#include "harness/lab.hpp"
#include "labs/transfer/routes.hpp"

namespace memlab::labs::transfer {

// ---- axes ----------------------------------------------------------------------------------------------

const axis direction_axis{.name = "direction",
                          .meaning = "host <-> device: h2d, d2h, or bidir (both at once)",
                          .grammar = axis_grammar::words,
                          .defaults = "h2d,d2h,bidir",
                          .words = {"h2d", "d2h", "bidir"}};
const axis host_memory_axis{.name = "host_memory",
                            .meaning =
                                "the host buffer: pageable (malloc), pinned (cudaMallocHost), registered "
                                "(cudaHostRegister), write_combined (cudaHostAllocWriteCombined)",
                            .grammar = axis_grammar::words,
                            .defaults = "pageable,pinned",
                            .words = {"pageable", "pinned", "registered", "write_combined"}};
const axis peer_axis{.name = "peer",
                     .meaning = "peer rungs: the other GPU's ordinal (this one is --device); all: every other GPU",
                     .unit = "device ordinal",
                     .grammar = axis_grammar::counts,
                     .defaults = "1",
                     .min = 0,
                     .max = 63,
                     .other_gpus = true};
const axis gpus_axis{.name = "gpus",
                     .meaning =
                         "collectives: GPUs (ranks), one process driving all, from --device on (a run of one "
                         "process per GPU: its world size)",
                     .unit = "GPUs",
                     .defaults = "2",
                     .min = 1,
                     .max = 64};
const axis placement_axis{.name = "placement",
                          .meaning =
                              "collectives: the output in its own buffer (out_of_place) or over the input "
                              "(in_place), nccl-tests' two columns",
                          .grammar = axis_grammar::words,
                          .defaults = "out_of_place,in_place",
                          .words = {"out_of_place", "in_place"}};

namespace {

// ---- the lab's functions: each case to its route ---------------------------------------------------------

// The route of a rung, in `route`'s order.
const route_ops& route_of(const variant& v) {
#if MEMLAB_HAVE_NCCL
  static const route_ops* const routes[] = {&host_route, &peer_route, &collective_route};
#else
  static const route_ops* const routes[] = {&host_route, &peer_route, nullptr};
#endif
  return *routes[static_cast<std::size_t>(traits(v).where)];
}

std::optional<std::string> refusal(const variant& v, const case_params& p, const device_info& dev) {
  return route_of(v).refusal(v, p, dev);
}
case_plan plan_case(const variant& v, const case_params& p, const device_info& dev) {
  return route_of(v).plan(v, p, dev);
}
void setup(case_ctx& c) { route_of(*c.v).setup(c); }
std::string verify(const case_ctx& c) { return route_of(*c.v).verify(c); }
std::vector<measured_figure> observe(const case_ctx& c) {
  const route_ops& r = route_of(*c.v);
  return r.observe != nullptr ? r.observe(c) : std::vector<measured_figure>{};
}

// ---- the rungs --------------------------------------------------------------------------------------------

// Every axis a route does not read.
const std::vector<std::string_view> host_ignores{"peer", "gpus", "placement"};
const std::vector<std::string_view> peer_ignores{"direction", "host_memory", "gpus", "placement"};
const std::vector<std::string_view> collective_ignores{"direction", "host_memory", "peer"};

// The SM copy's kernel, labelled once, by the `sm` rung (`memlab inspect transfer`); the peer SM
// rungs launch the same kernel on a peer's pointers and list none, as memlab::copy's users do.
std::vector<kernel_ref> sm_kernels() { return {sm_copy_kernel_ref()}; }

// 16-byte vectors from the first byte: host pages and cudaMalloc both align far more than that.
const rung_needs vec16_needs{.alignment = 16, .min_cc = 0, .feature = "", .shape = ""};
const rung_needs no_needs{.alignment = 0, .min_cc = 0, .feature = "", .shape = ""};

std::vector<variant> rungs() {
  std::vector<variant> v{
      // host <-> device
      {.name = "ce",
       .teaches = "cudaMemcpyAsync: the copy engines' DMA; from pageable memory through the driver's pinned staging",
       .launch = host_route.launch,
       .kernels = {},
       .needs = no_needs,
       .ignores = host_ignores,
       .traits = rung_traits{.where = route::host, .how = engine::copy_engine}},
      {.name = "sm",
       .teaches = "a kernel of 16-byte loads and stores on mapped host memory (zero-copy): PCIe read requests "
                  "from the SMs (h2d), posted writes (d2h)",
       .launch = host_route.launch,
       .kernels = sm_kernels(),
       .needs = vec16_needs,
       .ignores = host_ignores,
       .traits = rung_traits{.where = route::host, .how = engine::sm}},
      {.name = "auto",
       .teaches = "memlab::copy on mapped host pointers: the library's widest safe path, unchanged",
       .launch = host_route.launch,
       .needs = no_needs,
       .ignores = host_ignores,
       .traits = rung_traits{.where = route::host, .how = engine::library}},
      // GPU <-> GPU
      {.name = "peer_ce",
       .teaches = "cudaMemcpyPeerAsync this GPU -> the peer: a copy engine over NVLink (PCIe without it)",
       .launch = peer_route.launch,
       .kernels = {},
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::copy_engine, .way = peer_way::push}},
      {.name = "peer_ce_bidir",
       .teaches = "cudaMemcpyPeerAsync both ways at once, each GPU's copy engine pushing",
       .launch = peer_route.launch,
       .kernels = {},
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::copy_engine, .way = peer_way::both}},
      {.name = "peer_sm_read",
       .teaches = "this GPU's SMs load the peer's memory (16-byte loads): reads wait for the reply",
       .launch = peer_route.launch,
       .needs = vec16_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::sm, .way = peer_way::pull}},
      {.name = "peer_sm_write",
       .teaches = "this GPU's SMs store into the peer's memory (16-byte stores): posted writes",
       .launch = peer_route.launch,
       .needs = vec16_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::sm, .way = peer_way::push}},
      {.name = "peer_sm_bidir",
       .teaches = "each GPU's SMs store into the other's memory, at once",
       .launch = peer_route.launch,
       .needs = vec16_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::sm, .way = peer_way::both}},
      {.name = "peer_auto",
       .teaches = "memlab::copy from this GPU's memory into the peer's (peer access on)",
       .launch = peer_route.launch,
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::library, .way = peer_way::push}},
      {.name = "peer_auto_bidir",
       .teaches = "memlab::copy both ways at once, each GPU pushing into the other's memory",
       .launch = peer_route.launch,
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits = rung_traits{.where = route::peer, .how = engine::library, .way = peer_way::both}},
      {.name = "peer_chase",
       .teaches = "one thread's dependent 8-byte loads over the peer's memory (size: the bytes chased): the "
                  "round trip of a read across the link",
       .launch = peer_route.launch,
       .kernels = chase_kernels(),
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits =
           rung_traits{.where = route::peer, .how = engine::sm, .way = peer_way::pull, .probe = peer_probe::chase}},
      {.name = "peer_pingpong",
       .teaches = "a flag stored into the other GPU's memory and answered, 1024 rounds (size unused): the one-way "
                  "latency of a store across the link",
       .launch = peer_route.launch,
       .kernels = pingpong_kernels(),
       .needs = no_needs,
       .ignores = peer_ignores,
       .traits =
           rung_traits{.where = route::peer, .how = engine::sm, .way = peer_way::both, .probe = peer_probe::ping_pong}},
  };
#if MEMLAB_HAVE_NCCL
  const auto nccl = [](std::string_view name, std::string_view teaches, collective op) {
    return variant{.name = name,
                   .teaches = teaches,
                   .launch = collective_route.launch,
                   .kernels = {},
                   .needs = no_needs,
                   .peer = true,
                   .ignores = collective_ignores,
                   .traits = rung_traits{.where = route::collective, .how = engine::nccl, .op = op},
                   .all_ranks = true,
                   .loop = collective_loop};
  };
  v.push_back(nccl("nccl_all_reduce", "ncclAllReduce (u8 sum): busbw = algbw x 2(n-1)/n", collective::all_reduce));
  v.push_back(nccl("nccl_all_gather", "ncclAllGather: busbw = algbw x (n-1)/n", collective::all_gather));
  v.push_back(
      nccl("nccl_reduce_scatter", "ncclReduceScatter (u8 sum): busbw = algbw x (n-1)/n", collective::reduce_scatter));
  v.push_back(nccl("nccl_broadcast", "ncclBroadcast from rank 0: busbw = algbw", collective::broadcast));
  v.push_back(nccl("nccl_all_to_all",
                   "ncclAlltoAll (NCCL 2.28+; before, ncclSend/ncclRecv with every rank in one group): busbw = "
                   "algbw x (n-1)/n",
                   collective::all_to_all));
  v.push_back(nccl("nccl_sendrecv",
                   "ncclSend to the next rank, ncclRecv from the previous, a ring (nccl-tests' "
                   "sendrecv_perf): busbw = algbw",
                   collective::send_recv));
#endif
  return v;
}

}  // namespace

// ---- the lab's table --------------------------------------------------------------------------------------------

const lab& table() {
  static const lab transfer_lab {
    .name = "transfer",
    .teaches =
        "beyond the GPU's memory: host <-> device (pageable, pinned, registered, write-combined; copy engine "
        "vs SM zero-copy), GPU <-> GPU peer copies and latency, NCCL collectives (algbw, busbw; cold and "
        "nccl-tests' method), one process or one per GPU",
    .dtypes = {dtype::u8}, .default_dtype = dtype::u8, .default_sizes = "256KiB,64MiB",
    .size_meaning = "bytes per direction (collectives: nccl-tests' size S; peer_chase: the bytes chased)",
    .axes = {direction_axis, host_memory_axis, peer_axis, gpus_axis, placement_axis}, .roof = roof_kind::pcie,
    .variants = rungs(),
    // NVLink multicast stays off: memlab never creates multicast objects, nor lets NCCL.
        .environment = {{"NCCL_NVLS_ENABLE", "0"}},
#if MEMLAB_HAVE_NCCL
    .built_without = "",
#else
    .built_without =
        "NCCL's headers (pip install nvidia-nccl-cu13, or apt-get install libnccl-dev, then re-run cmake): the "
        "nccl_* rungs are not built",
#endif
    .ranks_axis = "gpus", .unsupported = refusal, .plan = plan_case, .setup = setup, .verify = verify,
    .observe = observe,
  };
  return transfer_lab;
}

}  // namespace memlab::labs::transfer
