#!/usr/bin/env bash
# Tessel int8 accuracy on real data: a small CNN (bench/models/digits_cnn.onnx, trained by
# bench/digits_train.py with PyTorch on scikit-learn's load_digits, 80/20 stratified split) is
# quantized by `tessel quantize` with the whole train split as calibration, and both models are
# run by `tessel run` on the test split (360 images, one batch); accuracy is computed against its
# labels. `tessel quantize` makes int8 the two convolutions and the final Gemm (whose logits,
# the model's output, the int8 kernel dequantizes to float).
# One line per configuration:
#   method  per_channel  fp32_acc  int8_acc (% of test images)  delta_points (int8 - fp32)
#   output_sqnr_db (int8 logits against FP32 on the first 16 train images: the quantize report)
# Exits 1 when the default configuration (minmax, per-tensor: quantize's defaults) is more than
# 0.5 points from FP32 (one test image is 0.28 points), 2 on any error, 77 when the Python
# packages are missing.
#
# Usage: bench/digits_int8.sh [--build DIR] [--retrain] [--smoke]
#   --retrain  train the model again into DIR/digits/digits_cnn.onnx and use it (to update the
#              committed one, copy it to bench/models/); otherwise the committed model is used
#   --smoke    the default configuration only (a few seconds; for CI)
# Needs DIR/bin/tessel (DIR: build) and Debian's python3-numpy and python3-sklearn (with --retrain
# python3-torch and python3-onnx too). Data splits, models and reports go to DIR/digits (not git).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build"
retrain=0
smoke=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    --retrain) retrain=1; shift ;;
    --smoke) smoke=1; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "digits_int8.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

python=/usr/bin/python3
tessel="$build/bin/tessel"
helpers="$root/bench/digits_train.py"
work="$build/digits"
model="$root/bench/models/digits_cnn.onnx"
if [[ ! -x "$tessel" ]]; then
  echo "digits_int8.sh: $tessel is missing: cmake --build $build --target tessel" >&2
  exit 2
fi
needs='import numpy, sklearn'
packages="python3-numpy and python3-sklearn"
if [[ $retrain -eq 1 ]]; then
  needs="$needs, torch, onnx"
  packages="python3-numpy, python3-sklearn, python3-torch and python3-onnx"
fi
if ! "$python" -c "$needs" 2>/dev/null; then
  echo "digits_int8.sh: needs Debian's $packages for $python (scripts/install-deps.sh)" >&2
  exit 77  # CTest reports the smoke test as skipped, as it does the model zoo's
fi
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

mkdir -p "$work"
if [[ $retrain -eq 1 ]]; then
  model="$work/digits_cnn.onnx"
  "$python" "$helpers" train "$work" -o "$model" --quiet >&2
else
  "$python" "$helpers" data "$work"
fi
if [[ ! -f "$model" ]]; then
  echo "digits_int8.sh: $model is missing (run with --retrain)" >&2
  exit 2
fi
samples() { "$python" -c 'import numpy, sys; print(numpy.load(sys.argv[1], mmap_mode="r").shape[0])' "$1"; }
train_count=$(samples "$work/train.npy")
test_count=$(samples "$work/test.npy")
shape="image:$test_count,1,8,8"

# Runs MODEL on the test split and prints its accuracy; the logits go to DIR/logits.npy.
accuracy() {
  local onnx="$1" dir="$2"
  if ! "$tessel" run "$onnx" --input "image=$work/test.npy" --input-shape "$shape" --output-dir "$dir" \
      >"$dir.log" 2>&1; then
    echo "digits_int8.sh: tessel run $onnx failed:" >&2
    cat "$dir.log" >&2
    exit 2
  fi
  "$python" "$helpers" accuracy "$dir/logits.npy" "$work/test_labels.npy"
}

fp32_acc=$(accuracy "$model" "$work/fp32")
configurations="minmax:0 minmax:1 percentile:0 percentile:1 entropy:0 entropy:1"
[[ $smoke -eq 1 ]] && configurations="minmax:0"

status=0
printf "%-10s %11s %8s %8s %12s %14s\n" method per_channel fp32_acc int8_acc delta_points output_sqnr_db
for configuration in $configurations; do
  method=${configuration%:*}
  per_channel=${configuration#*:}
  name="$method-$([[ $per_channel -eq 1 ]] && echo per_channel || echo per_tensor)"
  flags=(--method "$method")
  [[ $per_channel -eq 1 ]] && flags+=(--per-channel)
  if ! "$tessel" quantize "$model" --calibration "$work/train.npy" --samples "$train_count" \
      --input-shape image:1,1,8,8 "${flags[@]}" -o "$work/$name.int8.onnx" --report "$work/$name.json" \
      >"$work/$name.quantize.log" 2>&1; then
    echo "digits_int8.sh: tessel quantize ($name) failed:" >&2
    cat "$work/$name.quantize.log" >&2
    exit 2
  fi
  sqnr=$("$python" -c 'import json, sys; print("%.1f" % json.load(open(sys.argv[1]))["outputs"][0]["sqnr_db"])' \
    "$work/$name.json")
  int8_acc=$(accuracy "$work/$name.int8.onnx" "$work/$name")
  delta=$(awk -v a="$int8_acc" -v b="$fp32_acc" 'BEGIN { printf "%+.2f", a - b }')
  marker=""
  if [[ "$name" == minmax-per_tensor ]]; then
    marker="  (default)"
    if awk -v d="$delta" 'BEGIN { exit !(d > 0.5 || d < -0.5) }'; then
      marker="  (default: more than 0.5 points from FP32)"
      status=1
    fi
  fi
  printf "%-10s %11s %8s %8s %12s %14s%s\n" "$method" "$([[ $per_channel -eq 1 ]] && echo yes || echo no)" \
    "$fp32_acc" "$int8_acc" "$delta" "$sqnr" "$marker"
done
exit $status
