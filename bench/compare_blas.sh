#!/usr/bin/env bash
# Tessel's default matmul schedule against OpenBLAS (through numpy) on this machine, same
# run, same thread count. Prints both throughputs and the ratio; rounds alternate between
# the two so that a noisy neighbour hurts both alike, and each figure is a median.
#
# usage: bench/compare_blas.sh [--size N] [--threads T] [--rounds R]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
size=1024 threads=2 rounds=5
while [[ $# -gt 0 ]]; do
  case "$1" in
    --size) size=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "compare_blas.sh: unknown option $1" >&2; exit 2 ;;
  esac
done
tessel="$top/build/bin/tessel"
[[ -x "$tessel" ]] || { echo "compare_blas.sh: build Tessel first (./run or scripts/build.sh)" >&2; exit 2; }
python=/usr/bin/python3  # Debian's numpy, linked to OpenBLAS by libopenblas0-pthread
"$python" -c 'import numpy' 2>/dev/null || { echo "compare_blas.sh: /usr/bin/python3 has no numpy (apt-get install python3-numpy)" >&2; exit 2; }

# OpenBLAS 0.3.21 does not recognise every newer CPU and then falls back to its SSE3
# ("Prescott") kernels, which would make the comparison meaningless. Unless the caller
# sets OPENBLAS_CORETYPE, use whichever of its x86-64 kernels is fastest here.
blas_gflops() {
  OPENBLAS_NUM_THREADS=$threads OMP_NUM_THREADS=$threads "$python" - "$size" "${1:-1.0}" <<'PY'
import sys, time, statistics
import numpy as np
n = int(sys.argv[1])
seconds = float(sys.argv[2])
rng = np.random.default_rng(42)
a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
c = np.empty((n, n), dtype=np.float32)
np.matmul(a, b, out=c)  # warm-up
# The same statistic as `tessel bench`: the median rate over blocks of at least 0.2 s.
def block_rate():
    start = time.perf_counter()
    calls = 0
    while True:
        np.matmul(a, b, out=c)
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= 0.2:
            return 2.0 * n * n * n * calls / elapsed
rates = []
deadline = time.perf_counter() + seconds
while time.perf_counter() < deadline or len(rates) < 5:
    rates.append(block_rate())
print(f"{statistics.median(rates) * 1e-9:.2f}")
PY
}

if [[ -z "${OPENBLAS_CORETYPE:-}" ]]; then
  best_core="" best_rate=0
  for core in "" Cooperlake SkylakeX Haswell Zen; do
    rate=$(OPENBLAS_CORETYPE=$core blas_gflops 0.3)
    if awk -v r="$rate" -v b="$best_rate" 'BEGIN {exit !(r > b)}'; then best_core=$core best_rate=$rate; fi
  done
  export OPENBLAS_CORETYPE=$best_core
fi
detected=$(OPENBLAS_VERBOSE=2 OPENBLAS_NUM_THREADS=1 "$python" -c 'import numpy' 2>&1 | sed -n 's/^Core: //p' | head -1)

tessel_gflops=() blas_gflops_list=() fractions=() peak=""
for ((round = 1; round <= rounds; round++)); do
  out=$("$tessel" bench matmul --m "$size" --n "$size" --k "$size" --threads "$threads" --seconds 2)
  tessel_gflops+=("$(sed -n 's/^gflops=//p' <<<"$out")")
  peak=$(sed -n 's/^peak_gflops=//p' <<<"$out")
  fractions+=("$(sed -n 's/^fraction_of_peak=//p' <<<"$out")")
  blas_gflops_list+=("$(blas_gflops 2.0)")
done

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
t=$(median "${tessel_gflops[@]}")
b=$(median "${blas_gflops_list[@]}")
echo "matmul ${size}x${size}x${size} float32, ${threads} threads, median of ${rounds} alternating rounds"
echo "tessel_gflops=$t   (rounds: ${tessel_gflops[*]})"
echo "openblas_gflops=$b   (rounds: ${blas_gflops_list[*]}; OpenBLAS kernel: ${detected:-unknown})"
echo "tessel_fraction_of_peak=$(median "${fractions[@]}")   (per round, paired with the FMA probe: ${fractions[*]})"
round_ratios=()
for ((i = 0; i < rounds; i++)); do
  round_ratios+=("$(awk -v t="${tessel_gflops[$i]}" -v b="${blas_gflops_list[$i]}" 'BEGIN {printf "%.3f", t / b}')")
done
# Each round is a side-by-side pair, so the median of the per-round ratios is the figure
# least moved by the machine changing speed between rounds.
echo "ratio_tessel_over_openblas=$(median "${round_ratios[@]}")   (per round: ${round_ratios[*]})"
