#!/usr/bin/env bash
# The Python tools' tests (tools/python/tests), run by ctest. Without their packages (numpy,
# matplotlib, tqdm, pytest; tools/setup.sh installs them with the tools): exit 77 (ctest: skipped),
# except under CI, where that is a failure.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if ! python3 -c "import numpy, matplotlib, tqdm, pytest" 2>/dev/null; then
  echo "the Python tools' test packages are missing (pip install './tools/python[test]')"
  [ -n "${CI:-}" ] && exit 1 || exit 77
fi
exec python3 -m pytest -q -p no:cacheprovider "$here/tools/python/tests"
