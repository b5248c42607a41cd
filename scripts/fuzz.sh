#!/usr/bin/env bash
# Builds the libFuzzer harnesses (fuzz/) into build-fuzz/ with clang and ASan/UBSan and runs
# each over its corpus for a while; prints what each did and exits non-zero on any crash.
#
#   scripts/fuzz.sh [--minutes N] [--only NAME[,NAME...]] [--smoke] [--jobs N] [--parallel N] [--no-build]
#
# Each harness runs N minutes (default 30) or 10 million executions, whichever ends first,
# one after another, or --parallel N of them at a time (one core each; the default 1 keeps a
# core free). --jobs is the build's parallelism. --smoke runs each for 30 seconds.
# New inputs that reach new code are added to a work copy of the corpus
# (build-fuzz/work/corpus/NAME); crashes, leaks and timeouts land in build-fuzz/work/crashes/NAME/ with the fuzzer's log beside them. A crash once fixed
# belongs in fuzz/regressions/NAME/, where the normal build's replay tests run it.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

seconds=$((30 * 60))
only=""
jobs=2
parallel=1
build_first=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --minutes) seconds=$(awk -v m="$2" 'BEGIN { printf "%d", m * 60 }'); shift 2 ;;
    --only) only="$only${only:+,}$2"; shift 2 ;;
    --smoke) seconds=30; shift ;;
    --jobs) jobs="$2"; shift 2 ;;
    --parallel) parallel="$2"; shift 2 ;;
    --no-build) build_first=0; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
if [[ -z "$only" ]]; then
  for source in fuzz/fuzz_*.cpp; do
    name=$(basename "$source" .cpp)
    names+=("${name#fuzz_}")
  done
else
  # In the order given: with --parallel, put the slow harnesses first.
  IFS=, read -r -a names <<<"$only"
  for name in "${names[@]}"; do
    if [[ ! -f fuzz/fuzz_$name.cpp ]]; then
      echo "fuzz.sh: no harness called '$name' (fuzz/fuzz_NAME.cpp)" >&2
      exit 2
    fi
  done
fi
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
# Each harness writes its summary row to $results/NAME and, when it found a problem, its
# report to $results/NAME.problem, so that harnesses running side by side never interleave.
results=$work/results
rm -rf "$results"
mkdir -p "$results"

fuzz_one() {
  local name=$1
  local corpus=$work/corpus/$name
  local crashes=$work/crashes/$name
  mkdir -p "$corpus" "$crashes"
  # The seeds and past crashes start the work corpus; what it learns stays there between runs.
  [[ -d fuzz/corpus/$name ]] && cp -n fuzz/corpus/$name/* "$corpus"/ 2>/dev/null || true
  [[ -d fuzz/regressions/$name ]] && cp -n fuzz/regressions/$name/* "$corpus"/ 2>/dev/null || true
  local dictionary=()
  if [[ -f fuzz/$name.dict ]]; then dictionary=(-dict=fuzz/$name.dict); fi
  # The ONNX importer runs libonnx's version converter in a forked child, which inherits
  # libFuzzer's malloc hook: a garbage size libonnx reads there would be filed as an oom- of
  # the parent's input, though only the child dies (and the import reports it). The RSS limit
  # (checked on the parent, where Tessel's own code runs) stays.
  local malloc_limit=()
  if [[ $name == onnx_model ]]; then malloc_limit=(-malloc_limit_mb=1048576); fi
  local log=$crashes/fuzz.log
  echo "== fuzz_$name: up to ${seconds}s or 10M runs (log: $log)"
  local start status=0
  start=$(date +%s)
  ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/fuzz/fuzz_$name" "$corpus" "${dictionary[@]}" -max_total_time="$seconds" -runs=10000000 \
    -rss_limit_mb=2048 "${malloc_limit[@]}" -timeout=25 -max_len=65536 -print_final_stats=1 \
    -artifact_prefix="$crashes/" >"$log" 2>&1 || status=$?
  local elapsed=$(( $(date +%s) - start ))
  local runs
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | awk '{print $2}' | tail -1 || true)
  [[ -z "$runs" ]] && runs=$(grep -o '^#[0-9]*' "$log" | tail -1 | tr -d '#' || true)
  local found files
  found=$(find "$crashes" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
  files=$(find "$corpus" -type f | wc -l)
  if [[ $status -ne 0 || $found -gt 0 ]]; then
    {
      echo "   fuzz_$name found a problem (exit $status):"
      grep -E 'ERROR: (AddressSanitizer|libFuzzer|LeakSanitizer)|runtime error:|fuzz check failed|==[0-9]+==ERROR' "$log" | head -3 | sed 's/^/     /' || true
    } >"$results/$name.problem"
    cat "$results/$name.problem"
  fi
  printf '%-16s %12s %8ss %8s %8s\n' "$name" "${runs:-?}" "$elapsed" "$files" "$found" >"$results/$name"
  echo "== fuzz_$name: done after ${elapsed}s"
}

running=0
for name in "${names[@]}"; do
  if [[ $running -ge $parallel ]]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$name" &
  running=$((running + 1))
done
wait

echo
printf '%-16s %12s %9s %8s %8s\n' harness executions time corpus crashes
failed=0
for name in "${names[@]}"; do
  cat "$results/$name" 2>/dev/null || printf '%-16s %12s\n' "$name" "(no result)"
  [[ -f $results/$name.problem || ! -f $results/$name ]] && failed=1
done
if [[ $failed -ne 0 ]]; then
  echo "fuzz.sh: problems found; inputs are in $work/crashes/ (fix, then copy each to fuzz/regressions/NAME/)" >&2
  exit 1
fi
