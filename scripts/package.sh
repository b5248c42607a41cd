#!/usr/bin/env bash
# Builds Tessel's Debian packages from the normal build (build/):
#   tessel, libtessel-runtime, libtessel-runtime-dev   -> build/packages/*.deb
# Usage: scripts/package.sh [--lintian] [--no-build]
#   --lintian   also check the packages with lintian (installed through apt-get when missing)
#   --no-build  package what build/ already holds
# Install them with: sudo apt install ./build/packages/*.deb   (apt resolves their dependencies)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

lintian=0 build=1
for argument in "$@"; do
  case $argument in
    --lintian) lintian=1 ;;
    --no-build) build=0 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "package.sh: unknown option $argument (see --help)" >&2; exit 2 ;;
  esac
done

if [[ $build -eq 1 ]]; then
  "$top/scripts/install-deps.sh"
  "$top/scripts/build.sh"
fi
[[ -f build/CPackConfig.cmake ]] || { echo "package.sh: build/ is not configured; run scripts/build.sh" >&2; exit 2; }

output=build/packages
rm -rf "$output"
mkdir -p "$output"
# dpkg-shlibdeps (from dpkg-dev, part of build-essential) writes the library dependencies.
cpack -G DEB --config build/CPackConfig.cmake -B "$output" >"$output/cpack.log" 2>&1 || {
  cat "$output/cpack.log" >&2
  echo "package.sh: cpack failed (log above: $output/cpack.log)" >&2
  exit 1
}
rm -rf "$output/_CPack_Packages"
echo "Packages in $output:"
for deb in "$output"/*.deb; do
  printf '  %-48s %s\n' "$(basename "$deb")" "$(dpkg-deb -f "$deb" Depends | cut -c1-100)"
done

if [[ $lintian -eq 1 ]]; then
  if ! command -v lintian >/dev/null 2>&1; then
    if [[ $(id -u) -eq 0 ]]; then
      apt-get install -y -qq lintian >/dev/null
    else
      echo "package.sh: lintian is not installed: sudo apt-get install lintian" >&2
      exit 1
    fi
  fi
  # The warnings we know of and accept are explained in packaging/lintian-notes.md.
  lintian --tag-display-limit 0 "$output"/*.deb || true
fi
