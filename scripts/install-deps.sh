#!/usr/bin/env bash
# Installs the Debian packages Tessel needs, only those missing. Idempotent.
# As root it runs apt-get itself; otherwise it prints the exact command to run.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config
  llvm-dev zlib1g-dev libzstd-dev          # LLVM code generation (Debian default LLVM 14)
  qt6-base-dev qt6-svg-dev                  # Tessel Studio (Qt 6 Widgets, SVG export) and Qt Test
  libqcustomplot-dev libqcustomplot2.1-qt6  # the Studio's plots (QCustomPlot built for Qt 6)
  libgraphviz-dev                           # graph layout (dot through libgvc)
  fonts-dejavu-core                         # readable text in headless screenshots
  nlohmann-json3-dev                        # JSON for schedule traces, records and project files
  libopenblas0-pthread                      # bench/compare_blas.sh: the peer we compare against
  libonnx-dev libprotobuf-dev protobuf-compiler  # the ONNX frontend (model files are protobuf)
  libonnx-testdata                          # the ONNX backend node tests: the conformance suite
  libxgboost-dev                            # the tuner's cost model (XGBoost C API)
  python3-torch python3-torchvision python3-onnx python3-numpy  # bench/model_zoo.py: PyTorch is the peer
  python3-sklearn                           # bench/digits_int8.sh: the handwritten digits (load_digits)
  desktop-file-utils appstream              # the package test validates the desktop entry and metainfo
  python3-yaml                              # the Studio test validates the CI jobs it exports
  pocl-opencl-icd ocl-icd-opencl-dev opencl-c-headers  # the OpenCL target, run on the CPU through PoCL
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

echo "Tessel: installing missing Debian packages: ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo apt-get update -qq
    sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
    exit 0
  fi
  echo "Tessel: not root. Run this, then try again:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
