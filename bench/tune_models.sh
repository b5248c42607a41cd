#!/usr/bin/env bash
# The tuner's figures on real models (issue 10): each model tuned with a time budget, then
#  - tuned against default latency, measured in turns by `tessel tune` itself at the end,
#  - the tuned model's output against PyTorch's (tessel run --tuning-records),
#  - convergence: the estimated model latency after --at minutes against the final one,
#  - the cost model's mean pairwise ranking accuracy over the rounds after the third,
# and, with --from-scratch, the same with the hand-written default schedules withheld from the
# search (the generated spaces alone; the result is compared with the defaults).
#
# usage: bench/tune_models.sh [--budget 20m] [--threads 2] [--models "resnet18 mobilenet_v2 transformer"]
#                             [--from-scratch] [--at 7] [--out DIR]
# Records, events and logs go to DIR (build/tune by default); an existing records file there
# is moved aside, so each run starts from nothing.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
budget=20m threads=2 models="resnet18 mobilenet_v2 transformer" scratch="" at=7 out="$top/build/tune"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --budget) budget=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --from-scratch) scratch=--from-scratch; shift ;;
    --at) at=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "tune_models.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
tessel="$top/build/bin/tessel"
python=/usr/bin/python3
[[ -x "$tessel" ]] || { echo "tune_models.sh: build Tessel first (./run or scripts/build.sh)" >&2; exit 2; }
"$python" -c "import torch, torchvision, onnx" 2>/dev/null ||
  { echo "tune_models.sh: needs python3-torch, python3-torchvision and python3-onnx for /usr/bin/python3" >&2; exit 2; }
export OPENBLAS_NUM_THREADS=1 TESSEL_NUM_THREADS=$threads
mkdir -p "$out"
field() { sed -n "s/^$1=//p" | tail -1; }

printf "%-13s %-8s %10s %10s %8s %10s %12s %9s %8s %8s\n" model mode default_ms tuned_ms ratio vs_torch within_7min accuracy trials errors
for model in $models; do
  dir="$top/build/models/$model"
  [[ -f "$dir/model.onnx" ]] || "$python" "$top/bench/torch_models.py" export "$model" "$dir" >&2
  mode=${scratch:+scratch}; mode=${mode:-seeded}
  records="$out/$model.$mode.jsonl" events="$out/$model.$mode.events"
  for file in "$records" "$records.model" "$events"; do [[ -e "$file" ]] && mv "$file" "$file.old"; done
  "$tessel" tune "$dir/model.onnx" --records "$records" --time-budget "$budget" --threads "$threads" \
    --events "$events" $scratch > "$out/$model.$mode.log" 2>&1 || { echo "tune_models.sh: tessel tune failed on $model (see $out/$model.$mode.log)" >&2; continue; }
  summary=$("$python" "$top/bench/tune_summary.py" "$events" --at-minutes "$at")
  # The tuned model's output against PyTorch's.
  rm -rf "$out/$model.out"
  vs_torch=failed
  if "$tessel" run "$dir/model.onnx" --input "input=$dir/input.npy" --output-dir "$out/$model.out" \
       --tuning-records "$records" > /dev/null 2>&1; then
    vs_torch=$("$python" "$top/bench/torch_models.py" compare "$out/$model.out/output.npy" "$dir/output.npy")
  fi
  default_ms=$(echo "$summary" | field default_ms) tuned_ms=$(echo "$summary" | field tuned_ms)
  ratio=$(awk -v d="$default_ms" -v t="$tuned_ms" 'BEGIN { if (d > 0) printf "%.3f", t / d; else print "nan" }')
  printf "%-13s %-8s %10s %10s %8s %10s %12s %9s %8s %8s\n" "$model" "$mode" "$default_ms" "$tuned_ms" "$ratio" \
    "$vs_torch" "$(echo "$summary" | field within_percent)%" "$(echo "$summary" | field pairwise_accuracy)" \
    "$(echo "$summary" | field trials)" "$(echo "$summary" | field errors)"
done
