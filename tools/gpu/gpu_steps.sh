# Sourced by the GPU verification scripts (tools/verify_*_gpu.sh): `step NAME COMMAND...` runs the command,
# its output in $dir/NAME.log, and appends the command and its exit status to $dir/steps.log. A failed step is
# recorded and the script goes on. The caller sets `dir` (and creates it) first.
step() {
  local name=$1
  shift
  echo "== $name: $*" >>"$dir/steps.log"
  "$@" >"$dir/$name.log" 2>&1
  echo "   exit $?" >>"$dir/steps.log"
}
