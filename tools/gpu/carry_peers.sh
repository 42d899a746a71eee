#!/usr/bin/env bash
# Fills .carry/ (git-ignored) with what tools/gpu/measure_transfer_gpus.sh needs on a GPU machine that
# reaches no package registry and no GitHub: run here, on a machine that has them, then send .carry/
# along with the tree (the device tool's `carry`).
#
#   tools/gpu/carry_peers.sh NCCL_TESTS NVBANDWIDTH
#     NCCL_TESTS   a checkout of github.com/NVIDIA/nccl-tests (a folder, or a git directory: its tag
#                  v2.19.6 is taken, the version the committed comparisons used), copied to .carry/nccl-tests
#     NVBANDWIDTH  a checkout of github.com/NVIDIA/nvbandwidth (folder or git directory: tag v0.8), copied to
#                  .carry/nvbandwidth and built here into .carry/bin/nvbandwidth, Boost's program_options and
#                  the C++ runtime linked statically (Debian: libboost-program-options-dev); the GPU machine
#                  builds the copied source instead where the binary does not run there
#   and, where this machine has Slurm (tools/gpu/local_slurm.py), the environments a real srun gives each
#   task for 2, 4 and 8 tasks under --mpi=none, pmi2 and pmix: .carry/srun_env/<mpi>_<tasks>/<task>.env,
#   which the GPU machine replays where it has no Slurm.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
C=$ROOT/.carry
mkdir -p "$C/bin"
[ $# -eq 2 ] || { sed -n '2,17p' "$0"; exit 2; }

# A source tree from a folder or a git directory (at TAG), into DEST.
take() {  # SRC TAG DEST
  rm -rf "$3" && mkdir -p "$3"
  if [ -d "$1/.git" ] || git --git-dir="$1" rev-parse --git-dir > /dev/null 2>&1; then
    local gd=$1
    [ -d "$1/.git" ] && gd=$1/.git
    git --git-dir="$gd" archive "$2" | tar -x -C "$3"
  else
    cp -r "$1"/. "$3"
  fi
}

take "$1" v2.19.6 "$C/nccl-tests"
echo "nccl-tests: $C/nccl-tests ($(du -sh "$C/nccl-tests" | cut -f1))"

take "$2" v0.8 "$C/nvbandwidth"
W=$(mktemp -d)
cp -r "$C/nvbandwidth"/. "$W"
# NVML: its header from the toolkit or PyPI's nvidia-nvml-dev; the library, where this machine has no driver,
# a stub made here with the soname and every function of the header (the driver's libnvidia-ml.so.1 is the
# one loaded on the GPU machine), as the toolkit's stubs/ folder has libcuda.so.
NVML_H=/usr/local/cuda/include/nvml.h
[ -e "$NVML_H" ] || NVML_H=$(python3 -c "import nvidia, glob, os; print(next(iter(g for p in nvidia.__path__ for g in glob.glob(os.path.join(p, '*', 'include', 'nvml.h')))))" 2>/dev/null || true)
[ -e "${NVML_H:-}" ] || { echo "no nvml.h: pip install nvidia-nvml-dev" >&2; exit 1; }
mkdir -p "$W/nvml_stub"
if ! ldconfig -p | grep -q "libnvidia-ml.so.1 "; then
  grep -oE '^(nvmlReturn_t|const) DECLDIR (char\* )?nvml[A-Za-z0-9_]+' "$NVML_H" |
    grep -oE 'nvml[A-Za-z0-9_]+$' | sort -u | sed 's/.*/int &(void) { return 999; }/' > "$W/nvml_stub/stub.c"
  gcc -shared -fPIC -Wl,-soname,libnvidia-ml.so.1 -o "$W/nvml_stub/libnvidia-ml.so" "$W/nvml_stub/stub.c"
fi
(cd "$W" && cmake -B build -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=80;90;100" \
  -DCMAKE_CXX_FLAGS="-I$(dirname "$NVML_H")" -DCMAKE_CUDA_FLAGS="-I$(dirname "$NVML_H")" \
  -DCMAKE_EXE_LINKER_FLAGS="-static-libstdc++ -static-libgcc -L$W/nvml_stub -L/usr/local/cuda/lib64/stubs" > /dev/null &&
  cmake --build build -j "$(nproc)" > /dev/null)
cp "$W/build/nvbandwidth" "$C/bin/nvbandwidth"
rm -rf "$W"
echo "nvbandwidth: $C/bin/nvbandwidth, needs: $(readelf -d "$C/bin/nvbandwidth" | awk '/NEEDED/{print $NF}' | tr -d '[]' | tr '\n' ' ')"
echo "  newest glibc symbol it needs: $(objdump -T "$C/bin/nvbandwidth" | grep -o 'GLIBC_[0-9.]*' | sort -V | tail -1)"

if python3 -c "import sys; sys.path.insert(0, '$ROOT/tools/gpu'); import local_slurm; sys.exit(1 if local_slurm.missing() else 0)"; then
  rm -rf "$C/srun_env"
  for tasks in 2 4 8; do
    python3 "$ROOT/tools/gpu/local_slurm.py" capture "$(mktemp -d)" "$C/srun_env" "$tasks" none pmi2 pmix
  done
else
  echo "no Slurm here: .carry/srun_env not made (the GPU machine then needs Slurm of its own for the srun runs)"
fi
du -sh "$C"
