#!/usr/bin/env bash
# Runs the ONNX backend node tests on a GPU target through `tessel run MODEL --target T`
# (OpenCL runs on the CPU through PoCL), one line per test, then a summary:
#   PASS      outputs match the test's expected outputs
#   MISMATCH  they differ (exit status 3 of tessel run)
#   ERROR     the model cannot be compiled or run for the target (the message follows)
#   TIMEOUT   longer than --timeout seconds;  CRASH  killed by a signal (a bug, always)
#
#   scripts/gpu_conformance.sh [--target opencl] [--filter TEXT] [--jobs 2] [--timeout 120]
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
target=opencl
filter=""
jobs=2
timeout_s=120
while [[ $# -gt 0 ]]; do
  case "$1" in
    --target) target="$2"; shift 2 ;;
    --filter) filter="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --timeout) timeout_s="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu_conformance.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
data=/usr/share/libonnx-testdata/data/node
[[ -d $data ]] || { echo "gpu_conformance.sh: $data is missing (install libonnx-testdata)" >&2; exit 2; }
export tessel="$top/build/bin/tessel" data target timeout_s
one() {
  local t=$1 d=$data/$1 out rc
  [[ -d $d/test_data_set_0 ]] || { echo "$t NODATA"; return; }
  # A model without inputs (test_constant) takes no --inputs-dir.
  local inputs=()
  [[ -f $d/test_data_set_0/input_0.pb ]] && inputs=(--inputs-dir "$d/test_data_set_0")
  out=$(timeout "$timeout_s" "$tessel" run "$d/model.onnx" "${inputs[@]}" \
        --expect-dir "$d/test_data_set_0" --target "$target" 2>&1)
  rc=$?
  if grep -q "^result=match" <<<"$out"; then echo "$t PASS"
  elif [[ $rc -eq 3 ]]; then echo "$t MISMATCH"
  elif [[ $rc -eq 124 ]]; then echo "$t TIMEOUT"
  elif [[ $rc -gt 128 ]]; then echo "$t CRASH $rc"
  else echo "$t ERROR $(grep -m1 -o 'error: .*' <<<"$out" | cut -c1-220)"; fi
}
export -f one
results=$(ls "$data" | grep -- "$filter" | xargs -P "$jobs" -I{} bash -c 'one {}' | sort)
echo "$results"
echo "---- $(wc -l <<<"$results") tests on $target:"
awk '{print $2}' <<<"$results" | sort | uniq -c
! grep -q " CRASH" <<<"$results"
