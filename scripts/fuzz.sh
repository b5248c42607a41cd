#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/) into build-fuzz/ with clang and ASan/UBSan and runs
# each over its corpus for a while; prints what each did and exits non-zero on any crash.
#
#   scripts/fuzz.sh [--minutes N] [--only NAME] [--smoke] [--jobs N] [--no-build]
#
# Each harness runs N minutes (default 30) or 10 million executions, whichever ends first,
# one after another. --smoke runs each for 30 seconds. New inputs that reach new code are
# added to a work copy of the corpus (build-fuzz/work/corpus/NAME); crashes, leaks and timeouts
# land in build-fuzz/work/crashes/NAME/ with the fuzzer's log beside them. A crash once fixed
# belongs in fuzz/regressions/NAME/, where the normal build's replay tests run it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

seconds=$((30 * 60))
only=""
jobs=2
build_first=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) seconds=$(awk -v m="$2" 'BEGIN { printf "%d", m * 60 }'); shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --smoke) seconds=30; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    --no-build) build_first=0; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "fuzz.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

clang_cc=$(command -v clang || true)
clang_cxx=$(command -v clang++ || true)
if [[ -z "$clang_cc" || -z "$clang_cxx" ]]; then
  echo "fuzz.sh: clang is needed (apt-get install clang libclang-rt-dev)" >&2
  exit 1
fi

build=build-fuzz
# -O1 without NDEBUG: quicker to build than -O3 on two cores, and assertions stay on.
if [[ ! -f $build/CMakeCache.txt ]]; then
  CC=$clang_cc CXX=$clang_cxx cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DTESSEL_FUZZ=ON -DTESSEL_BUILD_TESTS=OFF >/dev/null
fi

names=()
for source in fuzz/fuzz_*.cpp; do
  name=$(basename "$source" .cpp)
  name=${name#fuzz_}
  [[ -z "$only" || "$only" == "$name" ]] && names+=("$name")
done
if [[ ${#names[@]} -eq 0 ]]; then
  echo "fuzz.sh: no harness called '$only' (fuzz/fuzz_NAME.cpp)" >&2
  exit 2
fi

targets=()
for name in "${names[@]}"; do targets+=("fuzz_$name"); done
# Only the harnesses and what they link: the Qt views and tests stay unbuilt.
if [[ $build_first -eq 1 ]]; then
  nice -n 10 cmake --build $build --parallel "$jobs" --target "${targets[@]}"
fi

work=$build/work
mkdir -p $work
summary=()
failed=0
for name in "${names[@]}"; do
  corpus=$work/corpus/$name
  crashes=$work/crashes/$name
  mkdir -p "$corpus" "$crashes"
  # The seeds and past crashes start the work corpus; what it learns stays there between runs.
  [[ -d fuzz/corpus/$name ]] && cp -n fuzz/corpus/$name/* "$corpus"/ 2>/dev/null || true
  [[ -d fuzz/regressions/$name ]] && cp -n fuzz/regressions/$name/* "$corpus"/ 2>/dev/null || true
  dictionary=()
  if [[ -f fuzz/$name.dict ]]; then dictionary=(-dict=fuzz/$name.dict); fi
  # The ONNX importer runs libonnx's version converter in a forked child, which inherits
  # libFuzzer's malloc hook: a garbage size libonnx reads there would be filed as an oom- of
  # the parent's input, though only the child dies (and the import reports it). The RSS limit
  # (checked on the parent, where Tessel's own code runs) stays.
  malloc_limit=()
  if [[ $name == onnx_model ]]; then malloc_limit=(-malloc_limit_mb=1048576); fi
  log=$crashes/fuzz.log
  echo "== fuzz_$name: up to ${seconds}s or 10M runs (log: $log)"
  start=$(date +%s)
  status=0
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/fuzz/fuzz_$name" "$corpus" "${dictionary[@]}" -max_total_time="$seconds" -runs=10000000 \
    -rss_limit_mb=2048 "${malloc_limit[@]}" -timeout=25 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$crashes/" >"$log" 2>&1 || status=$?
  elapsed=$(( $(date +%s) - start ))
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{print $2}' | tail -1)
  [[ -z "$runs" ]] && runs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#')
  found=$(find "$crashes" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  files=$(find "$corpus" -type f | wc -l)
  if [[ $status -ne 0 || $found -gt 0 ]]; then
    failed=1
    echo "   fuzz_$name found a problem (exit $status):"
    grep -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error:|fuzz check failed|==[0-9]+==ERROR' "$log" | head -3 | sed 's/^/     /'
  fi
  summary+=("$(printf '%-16s %12s %8ss %8s %8s' "$name" "${runs:-?}" "$elapsed" "$files" "$found")")
done

echo
printf '%-16s %12s %9s %8s %8s\n' harness executions time corpus crashes
for line in "${summary[@]}"; do echo "$line"; done
if [[ $failed -ne 0 ]]; then
  echo "fuzz.sh: problems found; inputs are in $work/crashes/ (fix, then copy each to fuzz/regressions/NAME/)" >&2
  exit 1
fi
