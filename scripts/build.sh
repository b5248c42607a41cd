#!/usr/bin/env bash
# Configures and builds Tessel (Release) into build/; binaries land in build/bin/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
generator=()
if command -v ninja >/dev/null 2>&1 && [[ ! -f build/CMakeCache.txt || -f build/build.ninja ]]; then
  generator=(-G Ninja)
fi
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
jobs=$(nproc 2>/dev/null || echo 2)
cmake --build build --parallel "$jobs"
