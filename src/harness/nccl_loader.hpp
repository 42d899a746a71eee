// NCCL, opened with dlopen on first use instead of linked, as cuBLAS is (cublas_loader.hpp): a binary that
// links libnccl.so.2 does not start at all on a machine without it (not even `memlab list`), and every
// process that links it pays its load. Only the transfer lab's collectives and a run of one process per
// GPU (harness/world.hpp) call NCCL; on a machine without it they are refused with the load's reason and
// everything else runs.
//
// nccl_api holds every function memlab calls, one member each, typed from its prototype in nccl.h: a
// changed signature fails the build, a missing symbol the load. The headers' major version picks the
// library (NCCL_MAJOR 2: libnccl.so.2), found the loader's usual way (LD_LIBRARY_PATH, the binary's
// RUNPATH, which holds the folder of the NCCL memlab was built against, the system's cache); the
// environment variable MEMLAB_NCCL_LIBRARY names another (a path, or a name for the loader to find).
// Built without NCCL's headers (cmake found none: MEMLAB_HAVE_NCCL 0), this header declares nothing but
// nccl_unavailable(), which always gives the reason.
#pragma once

#include <optional>
#include <string>

#if MEMLAB_HAVE_NCCL
#include <nccl.h>
#endif

namespace memlab {

#if MEMLAB_HAVE_NCCL

// The functions memlab calls: X(symbol) for each.
#define MEMLAB_NCCL_FUNCTIONS(X) \
  X(ncclGetVersion)              \
  X(ncclGetErrorString)          \
  X(ncclGetLastError)            \
  X(ncclGetUniqueId)             \
  X(ncclCommInitRankConfig)      \
  X(ncclCommSplit)               \
  X(ncclCommAbort)               \
  X(ncclCommGetAsyncError)       \
  X(ncclGroupStart)              \
  X(ncclGroupEnd)                \
  X(ncclAllReduce)               \
  X(ncclAllGather)               \
  X(ncclReduceScatter)           \
  X(ncclBroadcast)               \
  X(ncclSend)                    \
  X(ncclRecv)                    \
  X(ncclMemAlloc)                \
  X(ncclMemFree)

struct nccl_api {
#define MEMLAB_NCCL_MEMBER(symbol) decltype(&::symbol) symbol = nullptr;
  MEMLAB_NCCL_FUNCTIONS(MEMLAB_NCCL_MEMBER)
#undef MEMLAB_NCCL_MEMBER
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
  // NCCL's own all-to-all, from 2.28 (headers and library): nullptr where the library predates it.
  decltype(&::ncclAlltoAll) ncclAlltoAll = nullptr;
#endif
  int version = 0;  // ncclGetVersion: 22809 = 2.28.9
};

// "libnccl.so.2": the soname of the major version memlab is compiled against.
inline std::string nccl_soname() { return "libnccl.so." + std::to_string(NCCL_MAJOR); }

// Opens `library` (it stays loaded for the process) and resolves every function of nccl_api; throws
// std::runtime_error naming the library and dlerror()'s reason when it cannot be opened or lacks a function.
nccl_api load_nccl(const std::string& library);

// The process's NCCL, loaded on the first call (MEMLAB_NCCL_LIBRARY, else nccl_soname()); throws that
// load's error, on this and every later call, where it failed. The load is tried once.
const nccl_api& nccl();

// The communicator settings nccl-tests uses (its initComms), so that a collective is timed under the same
// configuration as the reference: NCCL's defaults, with nvlinkCentricSched on where the headers have it
// (NCCL 2.28 and later: nccl-tests sets it there). `blocking` 0: a non-blocking communicator, whose calls
// may return ncclInProgress (NCCL then runs a group on a thread of its own); 1: NCCL's default, every
// call returns once enqueued, as in nccl-tests.
ncclConfig_t nccl_tests_config(int blocking);

#endif  // MEMLAB_HAVE_NCCL

// Why this process cannot call NCCL (the load's error, or the build's lack of headers), nullopt where it
// can; loads it on the first call. For the refusals: a collective is skipped with this reason.
std::optional<std::string> nccl_unavailable();

// The version of the NCCL this process has loaded (22809 = 2.28.9), 0 where it has not loaded one:
// asks nothing of the loader, so a run that calls no collective reports 0 and never opens NCCL.
int nccl_loaded_version();

}  // namespace memlab
