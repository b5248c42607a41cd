#!/usr/bin/env bash
# Tessel's default matmul schedule against OpenBLAS on this machine: same process, same
# thread count, alternating 0.2 s blocks (see bench/CompareBlas.cpp). Prints both
# throughputs, the ratio and Tessel's fraction of the machine's FMA peak.
#
# usage: bench/compare_blas.sh [--size N] [--threads T] [--rounds R] [--schedule FILE]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
harness="$top/build/bin/tessel-compare-blas"
[[ -x "$harness" ]] || { echo "compare_blas.sh: build Tessel first (./run or scripts/build.sh)" >&2; exit 2; }
for arg in "$@"; do [[ "$arg" == -h || "$arg" == --help ]] && { sed -n '2,6p' "$0"; exec "$harness" --help; }; done

# OpenBLAS 0.3.21 does not recognise every newer CPU and then falls back to its SSE3
# ("Prescott") kernels, which would make the comparison meaningless. Unless the caller
# sets OPENBLAS_CORETYPE, use whichever of its x86-64 kernels is fastest here.
if [[ -z "${OPENBLAS_CORETYPE:-}" ]]; then
  probe_args=()  # the caller's options without --rounds: each candidate gets two rounds
  args=("$@")
  for ((i = 0; i < ${#args[@]}; i++)); do
    if [[ "${args[$i]}" == --rounds ]]; then i=$((i + 1)); elif [[ "${args[$i]}" != --rounds=* ]]; then probe_args+=("${args[$i]}"); fi
  done
  best_core="" best_rate=0
  for core in "" Cooperlake SkylakeX Haswell Zen; do
    # A kernel this CPU cannot run (AVX-512 ones on an AVX2 machine) dies of SIGILL: skip it.
    rate=$(OPENBLAS_CORETYPE=$core "$harness" --rounds 2 "${probe_args[@]}" 2>/dev/null | sed -n 's/^openblas_gflops=//p' || true)
    if awk -v r="${rate:-0}" -v b="$best_rate" 'BEGIN {exit !(r > b)}'; then best_core=$core best_rate=$rate; fi
  done
  export OPENBLAS_CORETYPE=$best_core
fi
exec "$harness" "$@"
