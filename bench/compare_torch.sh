#!/usr/bin/env bash
# Tessel against PyTorch (oneDNN) on ResNet-18, MobileNetV2, SqueezeNet 1.1 and a transformer
# encoder: batch 1, 2 threads each, default schedules (no tuning). One line per model:
#   model  torch_ms  tessel_ms  ratio (torch/tessel, > 1: Tessel faster)  max_abs_error  compile_s
# This machine's speed drifts, so Tessel and PyTorch are timed alternately for several rounds
# and each side reports the median of its rounds (each round is itself a median of --runs).
# On a machine shared with other work the medians mostly measure how much CPU time the
# process got; the fastest run of each side (torch_min_ms, tessel_min_ms, min_ratio) is
# then the steadier comparison of the code itself, so it is printed too.
#
# Usage: bench/compare_torch.sh [--build DIR] [--rounds R] [--runs N] [--threads T] [--models "resnet18 ..."]
# (--threads: both sides' thread count, 2 unless given; 1 compares single-core code when the
# machine is too busy for two threads to run together.)
# Needs build/bin/tessel (cmake --build DIR --target tessel). Models, inputs and PyTorch's
# outputs are written to DIR/models (not to git).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
rounds=3
runs=20
models="resnet18 mobilenet_v2 squeezenet1_1 transformer"
threads=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "compare_torch.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

python=/usr/bin/python3
tessel="$build/bin/tessel"
helpers="$root/bench/torch_models.py"
if [[ ! -x "$tessel" ]]; then
  echo "compare_torch.sh: $tessel is missing: cmake --build $build --target tessel" >&2
  exit 2
fi

# PyTorch, torchvision and onnx from Debian (as scripts/install-deps.sh installs packages).
if ! "$python" -c 'import torch, torchvision, onnx' 2>/dev/null; then
  packages=(python3-torch python3-torchvision python3-onnx)
  echo "compare_torch.sh: installing ${packages[*]}" >&2
  if [[ $(id -u) -eq 0 ]]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${packages[@]}"
  else
    echo "compare_torch.sh: not root. Run: sudo apt-get install -y ${packages[*]}" >&2
    exit 2
  fi
fi

# Both sides get the same threads; BLAS stays single-threaded so it cannot add threads of its own.
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads TESSEL_NUM_THREADS=$threads

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/^$1=//p" | tail -1; }

header() { printf "%-14s %10s %10s %8s %14s %10s %12s %13s %9s\n" "$@"; }
header model torch_ms tessel_ms ratio max_abs_error compile_s torch_min_ms tessel_min_ms min_ratio
for model in $models; do
  dir="$build/models/$model"
  if [[ ! -f "$dir/model.onnx" ]]; then
    "$python" "$helpers" export "$model" "$dir" >&2
  fi
  # Correctness and compile time: Tessel's output against PyTorch's.
  rm -rf "$dir/tessel_out"
  if ! run_log=$("$tessel" run "$dir/model.onnx" --input "input=$dir/input.npy" --output-dir "$dir/tessel_out" 2>&1); then
    echo "compare_torch.sh: tessel run failed on $model:" >&2
    echo "$run_log" | tail -5 >&2
    header "$model" - - - failed - - - -
    continue
  fi
  compile_s=$(echo "$run_log" | field compile_seconds)
  error=$("$python" "$helpers" compare "$dir/tessel_out/output.npy" "$dir/output.npy")

  torch_times=() torch_mins=() tessel_times=() tessel_mins=()
  for ((round = 0; round < rounds; ++round)); do
    read -r torch_median torch_min < <("$python" "$helpers" time "$model" "$dir" --threads "$threads" --runs "$runs")
    torch_times+=("$torch_median") torch_mins+=("$torch_min")
    bench_log=$("$tessel" bench "$dir/model.onnx" --threads "$threads" --repeat "$runs")
    tessel_times+=("$(echo "$bench_log" | field latency_ms)") tessel_mins+=("$(echo "$bench_log" | field min_ms)")
  done
  torch_ms=$(printf "%s\n" "${torch_times[@]}" | median)
  tessel_ms=$(printf "%s\n" "${tessel_times[@]}" | median)
  torch_min=$(printf "%s\n" "${torch_mins[@]}" | sort -g | head -1)
  tessel_min=$(printf "%s\n" "${tessel_mins[@]}" | sort -g | head -1)
  ratio() { awk -v t="$1" -v s="$2" 'BEGIN { if (s > 0) printf "%.2f", t / s; else print "nan" }'; }
  printf "%-14s %10.2f %10.2f %8s %14s %10s %12.2f %13.2f %9s\n" "$model" "$torch_ms" "$tessel_ms" \
    "$(ratio "$torch_ms" "$tessel_ms")" "$error" "$compile_s" "$torch_min" "$tessel_min" "$(ratio "$torch_min" "$tessel_min")"
done
