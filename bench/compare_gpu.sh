#!/usr/bin/env bash
# GPU modules against PyTorch on a GPU machine (see bench/compare_gpu.py for what is measured).
#
#   Here (the compiler):  bench/compare_gpu.sh --prepare DIR [--arch sm_90]
#       compiles the benchmark operators to DIR/*.tgpu and copies tessel-deploy-run and
#       libtessel_runtime beside them; carry DIR to the GPU machine.
#   There (runtime only): bench/compare_gpu.sh DIR [--rounds N] [--repeat N]
#       checks and times every module in DIR against PyTorch, alternating.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

if [[ "${1:-}" == "--prepare" ]]; then
  dir=${2:?usage: compare_gpu.sh --prepare DIR [--arch sm_90]}
  arch=sm_90
  [[ "${3:-}" == "--arch" ]] && arch=${4:?}
  tessel=$here/build/bin/tessel
  mkdir -p "$dir/bin" "$dir/lib"
  cp -L "$here/build/bin/tessel-deploy-run" "$dir/bin/"
  cp -a "$here"/build/lib/libtessel_runtime.so* "$dir/lib/"
  for shape in "4096 4096 4096" "1024 1024 1024" "2048 2048 2048"; do
    read -r m n k <<<"$shape"
    "$tessel" lower matmul --m "$m" --n "$n" --k "$k" --target "cuda -arch=$arch" --emit module \
      --output "$dir/matmul_${m}x${n}x${k}.tgpu"
  done
  "$tessel" lower dense --m 4096 --n 4096 --k 4096 --target "cuda -arch=$arch" --emit module \
    --output "$dir/dense_4096x4096x4096.tgpu"
  # ResNet-18's convolutions at batch 1 (and two at batch 16): n c h w k r stride pad.
  for shape in "1 3 224 224 64 7 2 3" "1 64 56 56 64 3 1 1" "1 64 56 56 128 3 2 1" "1 128 28 28 128 3 1 1" \
               "1 128 28 28 256 3 2 1" "1 256 14 14 256 3 1 1" "1 256 14 14 512 3 2 1" "1 512 7 7 512 3 1 1" \
               "1 64 56 56 128 1 2 0" "16 64 56 56 64 3 1 1" "16 256 14 14 256 3 1 1"; do
    read -r n c h w k r st pad <<<"$shape"
    "$tessel" lower conv2d --n "$n" --c "$c" --h "$h" --w "$w" --k "$k" --r "$r" --s "$r" --stride "$st" --pad "$pad" \
      --target "cuda -arch=$arch" --emit module --output "$dir/conv2d_n${n}c${c}h${h}k${k}r${r}st${st}.tgpu"
  done
  # OpenCL C for the same matmul, run by the GPU's own OpenCL driver where it has one.
  "$tessel" lower matmul --m 4096 --n 4096 --k 4096 --target opencl --emit module \
    --output "$dir/matmul_4096_opencl.tgpu"
  # The same matmul as PTX, compiled by the driver on the machine it runs on.
  "$tessel" lower matmul --m 4096 --n 4096 --k 4096 --target "cuda -arch=$arch" --emit module --ptx \
    --output "$dir/matmul_4096_ptx.tgpu"
  exit 0
fi

dir=${1:?usage: compare_gpu.sh DIR [--rounds N] [--repeat N]}
shift
export LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.max.sm --format=csv,noheader
python=python3
[[ -x /usr/bin/python3 ]] && /usr/bin/python3 -c "import torch" 2>/dev/null && python=/usr/bin/python3
exec "$python" "$here/bench/compare_gpu.py" --runner "$dir/bin/tessel-deploy-run" "$@" "$dir"/*.tgpu
