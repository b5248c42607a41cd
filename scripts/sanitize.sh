#!/usr/bin/env bash
# Builds the whole tree with AddressSanitizer and UndefinedBehaviorSanitizer (into
# build-asan/) and runs every CTest suite there, the Studio's offscreen. Any sanitizer
# report fails the test it happens in (halt_on_error, and UBSan aborts).
# Usage: scripts/sanitize.sh [--jobs N] [--tests REGEX] [--no-build] [-- extra ctest args]
# clang at -O1 with assertions on (as scripts/fuzz.sh builds), g++ when clang is missing or
# too old for _Float16 (Debian 12's clang 14):
# about an hour to build on two cores, and the tests take 2-4x their normal time.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
jobs=$(nproc 2>/dev/null || echo 2)
tests=""
build_first=1
extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --jobs) jobs=$2; shift 2 ;;
    --tests) tests=$2; shift 2 ;;
    --no-build) build_first=0; shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "sanitize.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

"$top/scripts/install-deps.sh"
if [[ $build_first -eq 1 ]]; then
  flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  compilers=()
  # clang before 15 has no _Float16 on x86, which the float16 codegen tests use: g++ then.
  if command -v clang++ >/dev/null && echo '_Float16 h = 1;' | clang++ -x c++ -fsyntax-only - 2>/dev/null; then
    compilers=(-DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++)
    flags="$flags -gline-tables-only"
  else
    flags="$flags -g1"
  fi
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  # -O1 without NDEBUG: a third of -O2's build time on two cores, and assertions stay on.
  cmake -S . -B build-asan "${generator[@]}" "${compilers[@]}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS_RELEASE=-O1 \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_MODULE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  nice -n 5 cmake --build build-asan --parallel "$jobs"
fi

# JIT-compiled kernels and exported kernels.so are not instrumented; the code that feeds them
# is. Leaks are reported at exit of each test process. LLVM and Qt keep some allocations
# for the whole process (caches, singletons): those are the suppressions in
# scripts/sanitize.supp, each with its reason.
# allocator_may_return_null: tests ask for impossible workspaces on purpose and check the error
# that follows (ASan would stop at the request instead).
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0:allocator_may_return_null=1"
export LSAN_OPTIONS="suppressions=$top/scripts/sanitize.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export QT_QPA_PLATFORM=offscreen
# Qt Test stops a test function after 300 s; instrumented, the ONNX suite's one function takes longer.
export QTEST_FUNCTION_TIMEOUT=3000000
# ASan's stack frames are several times larger: the deep-recursion tests (a 200,000-operation
# chain, destroyed node by node) get a stack to match the 8 MB the normal build runs them in.
ulimit -s 65536 2>/dev/null || true
# packaging.install_packages is left out: it installs the .debs of this build, and packages of
# an instrumented build (whose runtime needs the ASan runtime loaded first) are not what users
# install; ./test runs it on the real ones.
args=(--test-dir build-asan --output-on-failure -j "$jobs" --timeout 3000 -E '^packaging\.install_packages$')
[[ -n $tests ]] && args+=(-R "$tests")
ctest "${args[@]}" "${extra[@]}"
