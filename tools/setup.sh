#!/usr/bin/env bash
# Installs what memlab's build and tests need and is missing; installs nothing that is present.
#   CUDA toolkit (nvcc, CCCL): must already be there; this script says so if it is not.
#   CMake >= 3.25, g++, make, Ninja (the ci preset builds with it), CLI11, nlohmann-json, fmt, GoogleTest;
#   Slurm, munge and PMIx (the tests start a one-node Slurm on localhost): Debian/Ubuntu packages (apt-get).
#   cuobjdump and the nvdisasm it runs (for memlab inspect and the SASS tests): the CUDA toolkit's,
#   else PyPI's nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm (pip).
#   CuTe's headers (for the tile lab): PyPI's nvidia-cutlass (pip; cmake finds cutlass_library).
#   NCCL (for the transfer lab's nccl_* rungs): PyPI's nvidia-nccl-cu13 (pip; cmake finds
#   nvidia/nccl in python3's site-packages), unless the system has it (Debian's libnccl-dev).
#   jsonschema (the tests validate results files against docs/results.schema.json): PyPI.
#   Prometheus, promtool, prometheus-node-exporter, Slurm (slurmctld, slurmd, scontrol) and munge: Debian's
#   packages (apt-get); memlab check's integration tests start them on localhost (no systemd needed).
#   Chromium (headless: the tests load memlab-report's and memlab-fleet's pages in it): Debian's package (apt-get).
#   memlab's Python tools (tools/python: memlab-peers, memlab-plot, memlab-compare) with their test
#   packages (numpy, matplotlib, tqdm, pytest): pip. PyTorch and Triton are not installed here:
#   memlab-peers needs them on the GPU machine.
set -euo pipefail

have_header() { [ -e "/usr/include/$1" ] || [ -e "/usr/local/include/$1" ]; }

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v g++ >/dev/null || missing+=(g++)
command -v make >/dev/null || missing+=(make)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v git >/dev/null || missing+=(git)
have_header CLI/CLI.hpp || missing+=(libcli11-dev)
have_header nlohmann/json.hpp || missing+=(nlohmann-json3-dev)
have_header fmt/format.h || missing+=(libfmt-dev)
have_header gtest/gtest.h || missing+=(libgtest-dev)
# A one-node Slurm on localhost, for the tests of memlab under srun (plain, pmi2, and pmix: Slurm's pmix
# plugin opens the unversioned libpmix.so that libpmix-dev provides).
command -v slurmctld >/dev/null || [ -x /usr/sbin/slurmctld ] || missing+=(slurm-wlm)
command -v munged >/dev/null || [ -x /usr/sbin/munged ] || missing+=(munge)
[ -e /usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so ] || [ -e /usr/lib/aarch64-linux-gnu/pmix2/lib/libpmix.so ] || missing+=(libpmix-dev)
command -v chromium >/dev/null || missing+=(chromium)  # memlab-report's pages are tested in headless Chromium
# memlab check's integrations and memlab-fleet's textfile, tested against the real servers.
have_program() { command -v "$1" >/dev/null || [ -x "/usr/sbin/$1" ] || [ -x "/sbin/$1" ]; }
have_program prometheus && have_program promtool || missing+=(prometheus)
have_program prometheus-node-exporter || missing+=(prometheus-node-exporter)
have_program slurmctld && have_program slurmd && have_program scontrol || missing+=(slurm-wlm)
have_program munged || missing+=(munge)

if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null; then sudo="sudo"; else
      echo "setup: need root to run: apt-get install -y ${missing[*]}" >&2
      exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc not found: install the CUDA toolkit (12.8 or newer) and put its bin/ on PATH" >&2
  exit 1
fi

# cuobjdump -sass runs nvdisasm, which must sit beside it or on PATH.
tool_found() {
  command -v "$1" >/dev/null && return 0
  [ -x "/usr/local/cuda/bin/$1" ] && return 0
  python3 - "$1" <<'PY' 2>/dev/null
import glob, os, sys
import nvidia
sys.exit(0 if any(glob.glob(os.path.join(p, "*", "bin", sys.argv[1])) for p in nvidia.__path__) else 1)
PY
}
wheels=()
tool_found cuobjdump || wheels+=(nvidia-cuda-cuobjdump)
tool_found nvdisasm || wheels+=(nvidia-cuda-nvdisasm)
python3 -c "import cutlass_library" 2>/dev/null || wheels+=(nvidia-cutlass)
python3 -c "import nvidia.nccl" 2>/dev/null || have_header nccl.h || wheels+=(nvidia-nccl-cu13)
python3 -c "import jsonschema" 2>/dev/null || wheels+=(jsonschema)
python3 -c "import memlab_tools, numpy, matplotlib, tqdm, pytest" 2>/dev/null || wheels+=("$(cd "$(dirname "$0")" && pwd)/python[test]")
if [ ${#wheels[@]} -gt 0 ]; then
  if command -v python3 >/dev/null && python3 -m pip --version >/dev/null 2>&1; then
    echo "setup: installing ${wheels[*]} (pip)"
    python3 -m pip install -q "${wheels[@]}" || echo "setup: pip could not install ${wheels[*]}: SASS and schema tests will fail under CI, skip elsewhere" >&2
  else
    echo "setup: no pip to install ${wheels[*]}: memlab inspect needs cuobjdump; SASS and schema tests fail under CI, skip elsewhere" >&2
  fi
fi
