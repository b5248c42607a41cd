#!/usr/bin/env bash
# Installs the Debian packages built from this build (tessel, libtessel-runtime,
# libtessel-runtime-dev) on this machine, uses them as a user would from the installed paths
# only, and removes them again.
# Usage: test_packages.sh SOURCE_DIR BUILD_DIR
# Exit 77 (CTest: skipped) when it cannot install packages here: not root, no dpkg, or a
# Tessel package already installed that is not ours to remove.
set -euo pipefail
source_dir=$1 build_dir=$2

skip() { echo "SKIPPED: $*"; exit 77; }
[[ $(id -u) -eq 0 ]] || skip "installing packages needs root"
command -v dpkg >/dev/null && command -v cpack >/dev/null || skip "needs dpkg and cpack"
for package in tessel libtessel-runtime libtessel-runtime-dev; do
  if dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    skip "$package is already installed on this machine; remove it first (dpkg -r $package)"
  fi
done

work=$(mktemp -d)
installed=0
cleanup() {
  if [[ $installed -eq 1 ]]; then
    PATH=/usr/sbin:/usr/bin:/sbin:/bin dpkg --purge tessel libtessel-runtime-dev libtessel-runtime >/dev/null 2>&1 ||
      echo "WARNING: could not remove the Tessel packages; remove them with dpkg -r tessel libtessel-runtime-dev libtessel-runtime" >&2
  fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
step() { echo "== $*"; }

step "building the packages (cpack)"
cpack -G DEB --config "$build_dir/CPackConfig.cmake" -B "$work/packages" >"$work/cpack.log" 2>&1 ||
  { cat "$work/cpack.log"; fail "cpack failed"; }
debs=("$work"/packages/*.deb)
[[ ${#debs[@]} -eq 3 ]] || fail "expected 3 packages, got: ${debs[*]}"
for deb in "${debs[@]}"; do
  echo "$(basename "$deb"): Depends: $(dpkg-deb -f "$deb" Depends)"
done

runtime_deb=$(ls "$work"/packages/libtessel-runtime_*.deb)
# The deploy runtime must not drag in the compiler's dependencies.
runtime_depends=$(dpkg-deb -f "$runtime_deb" Depends)
for heavy in llvm qt6 libQt protobuf onnx graphviz xgboost; do
  [[ $runtime_depends != *$heavy* ]] || fail "libtessel-runtime depends on $heavy: $runtime_depends"
done
[[ $(dpkg-deb -f "$work"/packages/tessel_*.deb Depends) == *libtessel-runtime* ]] ||
  fail "tessel does not depend on libtessel-runtime"

step "installing"
installed=1
dpkg -i "${debs[@]}" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg -i failed"; }

# Everything below runs the installed programs by their installed paths, from a directory
# that is neither the source nor the build tree.
cd "$work"
# (dpkg itself needs the sbin directories, for ldconfig.)
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
for file in /usr/bin/tessel /usr/bin/tessel-studio /usr/bin/tessel-deploy-run \
            /usr/share/tessel/examples/tiny_resnet.tessel /usr/share/tessel/lessons/01-loop-order.json \
            /usr/share/applications/org.tessel.Studio.desktop \
            /usr/share/metainfo/org.tessel.Studio.metainfo.xml /usr/share/mime/packages/tessel.xml \
            /usr/share/icons/hicolor/scalable/apps/org.tessel.Studio.svg \
            /usr/share/man/man1/tessel.1.gz /usr/share/man/man1/tessel-studio.1.gz \
            /usr/share/man/man1/tessel-deploy-run.1.gz /usr/share/bash-completion/completions/tessel \
            /usr/include/tessel/runtime/tessel_runtime.h \
            /usr/share/doc/tessel/copyright /usr/share/doc/libtessel-runtime/copyright; do
  [[ -e $file ]] || fail "$file is not installed"
done
libdir=$(dirname "$(dpkg -L libtessel-runtime | grep 'libtessel_runtime\.so\.0$')")
[[ -f $libdir/cmake/TesselRuntime/TesselRuntimeConfig.cmake ]] || fail "the CMake package is not in $libdir/cmake"

step "tessel --help"
help=$(tessel --help)
[[ $help == *"project run"* ]] || fail "tessel --help: $help"
[[ $help == *"/usr/share/tessel/examples/tiny_resnet.tessel"* ]] ||
  fail "tessel --help does not point at the installed example: $help"

step "tessel lesson, from the installed lessons"
lessons=$(tessel lesson list)
[[ $lessons == *loop-order* && $lessons == *reductions* ]] || fail "tessel lesson list: $lessons"
tessel lesson show loop-order reorder --solution | sed -n '/a solution:/,/check it/p' | sed '1d;$d' | sed 's/^  //' >"$work/solution.sched"
tessel lesson check loop-order reorder --schedule "$work/solution.sched" >"$work/lesson.txt" ||
  { cat "$work/lesson.txt"; fail "the lesson's own solution does not pass"; }

step "tessel project run on the installed example"
tessel project run /usr/share/tessel/examples/tiny_resnet.tessel --repeat 3 --junit "$work/report.xml" >"$work/run.txt" ||
  { cat "$work/run.txt"; fail "tessel project run failed"; }
grep -q "^verify=match$" "$work/run.txt" || { cat "$work/run.txt"; fail "outputs do not match the reference"; }
grep -q 'failures="0"' "$work/report.xml" || fail "JUnit report: $(cat "$work/report.xml")"

step "tessel compile + tessel-deploy-run"
tessel compile /usr/share/tessel/examples/tiny_resnet.onnx -o "$work/module" >/dev/null
ldd /usr/bin/tessel-deploy-run >"$work/ldd.txt"
! grep -Eiq "llvm|qt6|protobuf|onnx" "$work/ldd.txt" || fail "tessel-deploy-run links the compiler's libraries: $(cat "$work/ldd.txt")"
input=$(grep -o '"inputs": *\[ *"[^"]*"' "$work/module/graph.json" | sed 's/.*"\([^"]*\)"$/\1/')
output=$(grep -o '"outputs": *\[ *"[^"]*"' "$work/module/graph.json" | sed 's/.*"\([^"]*\)"$/\1/')
[[ -n $input && -n $output ]] || fail "cannot read the module's input and output names"

step "tessel-studio --screenshot, offscreen"
QT_QPA_PLATFORM=offscreen HOME="$work/home" tessel-studio --screenshot "$work/studio.png" --size 1200x800 \
  /usr/share/tessel/examples/tiny_resnet.tessel >"$work/studio.txt" 2>&1 || { cat "$work/studio.txt"; fail "tessel-studio --screenshot failed"; }
[[ $(stat -c %s "$work/studio.png") -gt 10000 ]] || fail "the screenshot is (nearly) empty"

step "the deploy example built against the installed runtime (find_package(TesselRuntime))"
cp -r "$source_dir/examples/deploy" "$work/deploy-source"
cmake -S "$work/deploy-source" -B "$work/deploy-build" >"$work/deploy-cmake.txt" 2>&1 ||
  { cat "$work/deploy-cmake.txt"; fail "configuring the deploy example failed"; }
grep -q "Tessel runtime: .*/cmake/TesselRuntime" "$work/deploy-cmake.txt" ||
  fail "the deploy example did not use the installed CMake package: $(cat "$work/deploy-cmake.txt")"
cmake --build "$work/deploy-build" >"$work/deploy-build.txt" 2>&1 ||
  { cat "$work/deploy-build.txt"; fail "building the deploy example failed"; }
"$work/deploy-build/tessel-deploy-example" "$work/module" "$input" "$output" >"$work/deploy-run.txt" ||
  { cat "$work/deploy-run.txt"; fail "the deploy example failed to run the module"; }
cat "$work/deploy-run.txt"

step "desktop entry and metadata"
if command -v desktop-file-validate >/dev/null; then
  desktop-file-validate /usr/share/applications/org.tessel.Studio.desktop || fail "desktop-file-validate"
else
  echo "desktop-file-validate is not installed: the desktop entry was NOT validated"
fi
if command -v appstreamcli >/dev/null; then
  appstreamcli validate --no-net /usr/share/metainfo/org.tessel.Studio.metainfo.xml || fail "appstreamcli validate"
else
  echo "appstreamcli is not installed: the AppStream metadata was NOT validated"
fi

step "removing"
dpkg --purge tessel libtessel-runtime-dev libtessel-runtime >"$work/remove.log" 2>&1 || { cat "$work/remove.log"; fail "dpkg -r failed"; }
installed=0
for file in /usr/bin/tessel /usr/bin/tessel-deploy-run "$libdir/libtessel_runtime.so.0" /usr/share/tessel; do
  [[ ! -e $file ]] || fail "$file is left after removing the packages"
done
echo "PASS: the packages install, work from their installed paths and remove cleanly"
