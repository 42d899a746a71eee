#!/usr/bin/env bash
# The Python tools' tests (tools/python/tests), run by ctest (one ctest per test file). Without their packages (numpy,
# matplotlib, tqdm, pytest; tools/setup.sh installs them with the tools): exit 77 (ctest: skipped),
# except under CI, where that is a failure.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# Whether they are installed, not imported: importing them here cost ~0.4 s of CPU per ctest (13 of them), and
# pytest imports them again anyway (an installed but broken package then fails the test instead of skipping it).
if ! python3 -c "import importlib.util as u, sys; sys.exit(any(u.find_spec(m) is None for m in ('numpy', 'matplotlib', 'tqdm', 'pytest')))" 2>/dev/null; then
  echo "the Python tools' test packages are missing (pip install './tools/python[test]')"
  [ -n "${CI:-}" ] && exit 1 || exit 77
fi
# Arguments: test files of tools/python/tests to run (default: all of them), and pytest options
# (those starting with '-', and the word after -k).
files=()
while [ $# -gt 0 ]; do
  case $1 in
    -k) files+=("$1" "$2"); shift 2 ;;
    -*) files+=("$1"); shift ;;
    *) files+=("$here/tools/python/tests/$1"); shift ;;
  esac
done
[ ${#files[@]} -eq 0 ] || ! printf '%s\n' "${files[@]}" | grep -q "^$here" && files+=("$here/tools/python/tests")
exec python3 -m pytest -q -p no:cacheprovider "${files[@]}"
