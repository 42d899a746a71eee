// NCCL, loaded on first use (harness/nccl_loader.hpp), seen from outside: the memlab binary and the test
// binaries name neither NCCL nor cuBLAS among the libraries they need (what `ldd` lists), `memlab list` and a
// one-GPU lab's run start and plan with NCCL made unloadable (MEMLAB_NCCL_LIBRARY naming a library that does
// not exist) without ever trying to open it (the loader's own trace, LD_DEBUG=files), and a collective is
// refused with the loader's reason. Also: srun's pmi2 environment reaches the GPU check (exit 3 here, with no
// GPU), not a usage error. No GPU needed; on a GPU machine the same cases run for real.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "cli_run.hpp"
#include "harness/registry.hpp"

namespace {

using memlab::test::memlab;
using memlab::test::no_gpu;

// A library that does not exist: NCCL made unloadable.
const std::string unloadable = "MEMLAB_NCCL_LIBRARY=libmemlab_no_such_nccl.so.2";

bool built(std::string_view lab) {
  return std::any_of(memlab::all_labs().begin(), memlab::all_labs().end(),
                     [&](const memlab::lab* l) { return l->name == lab; });
}

// The shared libraries an ELF file needs (its DT_NEEDED entries, what `ldd` starts from), by readelf.
std::string needed(const std::string& file) {
  const std::string cmd = "readelf -d '" + file + "' 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  std::array<char, 4096> buf{};
  std::size_t got = 0;
  while ((got = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), got);
  pclose(p);
  std::string lines;
  std::size_t at = 0;
  while ((at = out.find("(NEEDED)", at)) != std::string::npos) {
    const auto end = out.find('\n', at);
    lines += out.substr(at, end - at) + "\n";
    at = end;
  }
  return lines;
}

TEST(nccl_on_first_use, no_binary_links_nccl_or_cublas) {
  char self[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  for (const std::string& file : {std::string(MEMLAB_BINARY), std::string(self)}) {
    const std::string libs = needed(file);
    ASSERT_NE(libs.find("libc.so"), std::string::npos) << file << ": readelf gave no NEEDED entries:\n" << libs;
    EXPECT_EQ(libs.find("libnccl"), std::string::npos) << file << "\n" << libs;
    EXPECT_EQ(libs.find("libcublas"), std::string::npos) << file << "\n" << libs;
  }
}

TEST(nccl_on_first_use, list_and_a_one_gpu_lab_never_open_nccl) {
  // LD_DEBUG=files: the dynamic loader says every library it opens or tries to; NCCL's name must not appear.
  const auto list = memlab("list", unloadable + " LD_DEBUG=files " + no_gpu);
  EXPECT_EQ(list.code, 0) << list.output;
  EXPECT_EQ(list.output.find("no_such_nccl"), std::string::npos) << list.output;
  EXPECT_EQ(list.output.find("libnccl"), std::string::npos);
  if (built("transfer")) {
    EXPECT_NE(list.output.find("nccl_all_reduce"), std::string::npos);
  }
  // A one-GPU lab, and the transfer lab's own one-GPU rungs, planned and (where this machine has a GPU) run:
  // NCCL never asked for.
  for (const auto& [lab, args] :
       {std::pair{"copy", "run copy --variant vec16"}, {"transfer", "run transfer --variant ce"}}) {
    if (!built(lab)) continue;
    const auto run =
        memlab(std::string(args) + " --sizes 4KiB --max-time 0.01 --quiet", unloadable + " LD_DEBUG=files");
    EXPECT_TRUE(run.code == 0 || run.code == 3) << args << "\n" << run.output;  // 3: this machine has no GPU
    EXPECT_EQ(run.output.find("no_such_nccl"), std::string::npos) << args << "\n" << run.output;
    EXPECT_EQ(run.output.find("libnccl"), std::string::npos) << args;
  }
}

TEST(nccl_on_first_use, a_collective_is_refused_with_the_loaders_reason) {
  if (!built("transfer")) GTEST_SKIP() << "the transfer lab is not built (MEMLAB_ONLY_LABS)";
  // One GPU, one rank: where the machine has a GPU the case reaches its refusal, and nothing else runs (exit 4,
  // nothing measured); without a GPU the run stops before (exit 3).
  const auto o =
      memlab("run transfer --variant nccl_all_reduce --gpus 1 --placement out_of_place --sizes 4KiB", unloadable);
  if (o.code == 3) {
    EXPECT_NE(o.output.find("no usable CUDA device"), std::string::npos) << o.output;
    return;
  }
  EXPECT_EQ(o.code, 4) << o.output;
  EXPECT_NE(o.output.find("NCCL is not available: cannot load libmemlab_no_such_nccl.so.2"), std::string::npos)
      << o.output;
}

TEST(nccl_on_first_use, a_run_of_one_process_per_gpu_without_nccl_names_the_reason) {
  if (!built("transfer")) GTEST_SKIP() << "the transfer lab is not built (MEMLAB_ONLY_LABS)";
  // Forming the world needs NCCL: where the machine has a GPU, the rank stops with the loader's reason (exit
  // 3, the machine lacks it); without a GPU, the GPU check comes first (exit 3 too).
  const auto two =
      memlab("run transfer --variant nccl_all_reduce --rank-timeout 5", unloadable + " RANK=0 WORLD_SIZE=2");
  EXPECT_EQ(two.code, 3) << two.output;
  if (two.output.find("no CUDA device on this rank") == std::string::npos) {
    EXPECT_NE(two.output.find("needs NCCL: cannot load libmemlab_no_such_nccl.so.2"), std::string::npos) << two.output;
  }
}

TEST(nccl_on_first_use, srun_with_pmi2_reaches_the_gpu_check) {
  if (!built("transfer")) GTEST_SKIP() << "the transfer lab is not built (MEMLAB_ONLY_LABS)";
  // What `srun -n 2 --mpi=pmi2` gives its task 1: PMI_RANK but no MPI_LOCALRANKID. Read as a Slurm step.
  const std::string env =
      "SLURM_PROCID=1 SLURM_STEP_NUM_TASKS=2 SLURM_LOCALID=1 SLURM_NODEID=0 SLURM_STEP_TASKS_PER_NODE=2 "
      "SLURM_JOB_ID=9 PMI_RANK=1 PMI_SIZE=2 PMI_FD=7";
  const auto o = memlab("run transfer --variant nccl_all_reduce", no_gpu + " " + env);
  EXPECT_EQ(o.code, 3) << o.output;
  EXPECT_NE(o.output.find("rank 1 of 2 (slurm (pmi2), local rank 1 of 2): no CUDA device on this rank"),
            std::string::npos)
      << o.output;
}

}  // namespace
