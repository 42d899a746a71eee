#!/usr/bin/env bash
# The Python package's tests (python/tests), run by ctest against the libmemlab just built:
#   run_memlab_python_tests.sh <path of libmemlab.so>
# On a machine without a GPU or PyTorch the GPU tests skip with the reason; the CPU ones (import,
# argument checks on fake arrays, the C ABI's messages and paths, the no-GPU error) run. Without pytest:
# exit 77 (ctest: skipped), except under CI, where that is a failure.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if ! python3 -c "import pytest" 2>/dev/null; then
  echo "pytest is missing (pip install pytest)"
  [ -n "${CI:-}" ] && exit 1 || exit 77
fi
export MEMLAB_LIBRARY="$1"
export PYTHONPATH="$here/python${PYTHONPATH:+:$PYTHONPATH}"
exec python3 -m pytest -q -p no:cacheprovider -rs "$here/python/tests"
