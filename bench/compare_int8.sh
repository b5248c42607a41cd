#!/usr/bin/env bash
# Tessel int8 against Tessel FP32 and PyTorch int8 (eager post-training static quantization on
# its onednn engine) on torchvision's quantizable ResNet-18, ResNet-50 and MobileNetV2: random
# weights, calibrated on the same 8 random images, batch 1, the same threads on each side.
# Tessel's int8 model is `tessel quantize --per-channel` of the FP32 export. `bert` (a
# BERT-base-sized encoder of 2 layers over 128 tokens, see bench/torch_int8.py) has its dense
# layers quantized dynamically on both sides: `tessel quantize --dynamic --per-channel` and
# PyTorch's quantize_dynamic. One line per model:
#   model  fp32_ms  int8_ms  int8_speedup (fp32/int8)  torch_int8_ms  vs_torch (torch/tessel int8,
#   > 1: Tessel faster)  output_sqnr_db (Tessel int8 against FP32, from the quantize report)
# The three are timed alternately for several rounds; each side reports the median of its rounds.
#
# Usage: bench/compare_int8.sh [--build DIR] [--rounds R] [--runs N] [--threads T] [--models "resnet18 ..."]
# Needs build/bin/tessel. Models and calibration data go to DIR/int8 (not to git).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
rounds=3
runs=20
models="resnet18 resnet50 mobilenet_v2 bert"
threads=2
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --models) models="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "compare_int8.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

python=/usr/bin/python3
tessel="$build/bin/tessel"
helpers="$root/bench/torch_int8.py"
if [[ ! -x "$tessel" ]]; then
  echo "compare_int8.sh: $tessel is missing: cmake --build $build --target tessel" >&2
  exit 2
fi
if ! "$python" -c 'import torch, torchvision, onnx' 2>/dev/null; then
  echo "compare_int8.sh: needs Debian's python3-torch, python3-torchvision and python3-onnx (scripts/install-deps.sh)" >&2
  exit 2
fi
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=$threads MKL_NUM_THREADS=$threads TESSEL_NUM_THREADS=$threads

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/^$1=//p" | tail -1; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "nan" }'; }

printf "%-14s %9s %9s %13s %14s %9s %15s\n" model fp32_ms int8_ms int8_speedup torch_int8_ms vs_torch output_sqnr_db
for model in $models; do
  dir="$build/int8/$model"
  if [[ ! -f "$dir/model.onnx" ]]; then
    "$python" "$helpers" export "$model" "$dir" 2>/dev/null >&2
  fi
  # The dynamic model's calibration inputs only serve its report (the output's SQNR).
  dynamic=()
  [[ "$model" == bert ]] && dynamic=(--dynamic --samples 4)
  "$tessel" quantize "$dir/model.onnx" --calibration "$dir/calibration.npy" -o "$dir/model.int8.onnx" \
    --per-channel "${dynamic[@]}" --report "$dir/report.json" >/dev/null 2>"$dir/quantize.log"
  sqnr=$("$python" -c 'import json, sys; print("%.1f" % json.load(open(sys.argv[1]))["outputs"][0]["sqnr_db"])' "$dir/report.json")
  fp32=() int8=() torch=()
  for ((round = 0; round < rounds; ++round)); do
    fp32+=("$("$tessel" bench "$dir/model.onnx" --threads "$threads" --repeat "$runs" | field latency_ms)")
    int8+=("$("$tessel" bench "$dir/model.int8.onnx" --threads "$threads" --repeat "$runs" | field latency_ms)")
    read -r torch_median _ < <("$python" "$helpers" time "$model" "$dir" --threads "$threads" --runs "$runs" 2>/dev/null)
    torch+=("$torch_median")
  done
  fp32_ms=$(printf "%s\n" "${fp32[@]}" | median)
  int8_ms=$(printf "%s\n" "${int8[@]}" | median)
  torch_ms=$(printf "%s\n" "${torch[@]}" | median)
  printf "%-14s %9.2f %9.2f %13s %14.2f %9s %15s\n" "$model" "$fp32_ms" "$int8_ms" "$(ratio "$fp32_ms" "$int8_ms")" \
    "$torch_ms" "$(ratio "$torch_ms" "$int8_ms")" "$sqnr"
done
