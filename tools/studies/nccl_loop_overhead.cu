// Experiment for docs/notes/nccl_timing.md: where a back-to-back all-reduce of memlab's "batch" figure
// loses time against nccl-tests' figure on the same GPUs, one process driving N of them.
// Five loops of K all-reduces (u8 sum, out of place), each timed on the same communicators:
//   A  nccl-tests: per iteration one group over the GPUs, each on its own stream, no events; host
//      clock from before the first enqueue to the end of a polling wait on every stream.
//   B  A, plus memlab's fork and join around every iteration (GPU 0's stream records an event the
//      others wait on; each other stream records one GPU 0's stream waits on): host clock.
//   C  B enqueued behind a blocking kernel on GPU 0's stream and timed by events on it (memlab's
//      batch, as the lab times it).
//   D  A enqueued behind blocking kernels on every stream and timed by events on GPU 0's stream.
//   E  B captured once in a CUDA graph, replayed (memlab's graph figure).
// Prints us per all-reduce for each size (median of 7 repetitions). Standalone:
//   nvcc -O3 -arch=sm_90 -o nccl_loop_overhead nccl_loop_overhead.cu -lnccl && ./nccl_loop_overhead 2
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "check.cuh"

#define NCCL_OK(x)                                                                               \
  do {                                                                                           \
    ncclResult_t r_ = (x);                                                                       \
    if (r_ != ncclSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_));   \
      std::exit(1);                                                                              \
    }                                                                                            \
  } while (0)

__global__ void block_kernel(volatile int* flag) {
  while (*flag == 0) {
  }
}

struct gpus {
  int n;
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
  std::vector<void*> send, recv;
  std::vector<cudaEvent_t> fork, join;
  volatile int* flag = nullptr;  // pinned, mapped: the blocking kernels spin on it
};

double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void poll_all(const gpus& g) {
  for (bool busy = true; busy;) {
    busy = false;
    for (auto s : g.streams) {
      const cudaError_t state = cudaStreamQuery(s);
      if (state == cudaErrorNotReady) {
        busy = true;
      } else {
        CHECK(state);
      }
    }
    if (busy) std::this_thread::yield();
  }
}

// One all-reduce on every GPU, one group; with `joins`, memlab's fork and join around it.
void iteration(const gpus& g, size_t bytes, bool joins) {
  if (joins) {
    CHECK(cudaSetDevice(0));
    CHECK(cudaEventRecord(g.fork[0], g.streams[0]));
    for (int i = 1; i < g.n; ++i) CHECK(cudaStreamWaitEvent(g.streams[i], g.fork[0], 0));
  }
  NCCL_OK(ncclGroupStart());
  for (int i = 0; i < g.n; ++i) {
    NCCL_OK(ncclAllReduce(g.send[i], g.recv[i], bytes, ncclUint8, ncclSum, g.comms[i], g.streams[i]));
  }
  NCCL_OK(ncclGroupEnd());
  if (joins) {
    for (int i = 1; i < g.n; ++i) {
      CHECK(cudaSetDevice(i));
      CHECK(cudaEventRecord(g.join[i], g.streams[i]));
      CHECK(cudaStreamWaitEvent(g.streams[0], g.join[i], 0));
    }
    CHECK(cudaSetDevice(0));
  }
}

double host_loop(const gpus& g, size_t bytes, int k, bool joins) {
  iteration(g, bytes, joins);
  poll_all(g);
  const double t0 = now_us();
  for (int i = 0; i < k; ++i) iteration(g, bytes, joins);
  poll_all(g);
  return (now_us() - t0) / k;
}

double held_loop(const gpus& g, size_t bytes, int k, bool joins, bool hold_all) {
  cudaEvent_t a, b;
  CHECK(cudaSetDevice(0));
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  *g.flag = 0;
  for (int i = 0; i < (hold_all ? g.n : 1); ++i) {
    CHECK(cudaSetDevice(i));
    block_kernel<<<1, 1, 0, g.streams[i]>>>(g.flag);
  }
  CHECK(cudaSetDevice(0));
  CHECK(cudaEventRecord(a, g.streams[0]));
  for (int i = 0; i < k; ++i) iteration(g, bytes, joins);
  CHECK(cudaSetDevice(0));
  CHECK(cudaEventRecord(b, g.streams[0]));
  *g.flag = 1;
  poll_all(g);
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, a, b));
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  return 1e3 * ms / k;
}

double graph_loop(const gpus& g, size_t bytes, int k) {
  CHECK(cudaSetDevice(0));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(g.streams[0], cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < k; ++i) iteration(g, bytes, true);
  CHECK(cudaStreamEndCapture(g.streams[0], &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, g.streams[0]));
  poll_all(g);
  const double t0 = now_us();
  CHECK(cudaGraphLaunch(exec, g.streams[0]));
  poll_all(g);
  const double us = (now_us() - t0) / k;
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return us;
}

int main(int argc, char** argv) {
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  gpus g;
  g.n = argc > 1 ? std::atoi(argv[1]) : 2;
  const size_t max_bytes = size_t{64} << 20;
  std::vector<int> devs(g.n);
  for (int i = 0; i < g.n; ++i) devs[i] = i;
  g.comms.resize(g.n);
  NCCL_OK(ncclCommInitAll(g.comms.data(), g.n, devs.data()));
  g.streams.resize(g.n), g.send.resize(g.n), g.recv.resize(g.n), g.fork.resize(g.n), g.join.resize(g.n);
  for (int i = 0; i < g.n; ++i) {
    CHECK(cudaSetDevice(i));
    CHECK(cudaStreamCreateWithFlags(&g.streams[i], cudaStreamNonBlocking));
    CHECK(cudaMalloc(&g.send[i], max_bytes));
    CHECK(cudaMalloc(&g.recv[i], max_bytes));
    CHECK(cudaMemset(g.send[i], 1, max_bytes));
    CHECK(cudaEventCreateWithFlags(&g.fork[i], cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&g.join[i], cudaEventDisableTiming));
  }
  CHECK(cudaSetDevice(0));
  int* flag = nullptr;
  CHECK(cudaHostAlloc(&flag, sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  g.flag = flag;
  std::printf("%d GPUs, all-reduce u8 sum, out of place: us per all-reduce, median of 7 repetitions\n", g.n);
  std::printf("%10s %10s %10s %10s %10s %10s\n", "bytes", "A nccl", "B +joins", "C batch", "D held", "E graph");
  for (size_t bytes : {size_t{8} << 10, size_t{1} << 20, size_t{8} << 20, size_t{64} << 20}) {
    const int k = bytes >= (size_t{64} << 20) ? 20 : 100;
    std::vector<double> r[5];
    for (int rep = 0; rep < 7; ++rep) {
      r[0].push_back(host_loop(g, bytes, k, false));
      r[1].push_back(host_loop(g, bytes, k, true));
      r[2].push_back(held_loop(g, bytes, k, true, false));
      r[3].push_back(held_loop(g, bytes, k, false, true));
      r[4].push_back(graph_loop(g, bytes, k));
    }
    std::printf("%10zu", bytes);
    for (auto& v : r) {
      std::sort(v.begin(), v.end());
      std::printf(" %10.2f", v[v.size() / 2]);
    }
    std::printf("\n");
  }
  return 0;
}
