#!/usr/bin/env bash
# Install the Debian packages ibdyn needs, only those that are missing.
# Usage: tools/setup.sh [build|test|bench]   (each profile includes the previous one)
set -euo pipefail
profile=${1:-build}
# libopenblas0-serial: an optimised single-threaded BLAS behind CHOLMOD (it takes over the
# libblas.so.3 alternative); the supernodal factorisations of the sparse soft solver are BLAS-3 bound
# and ~4x faster than with the reference BLAS (docs/soft.md, "Benchmark")
pkgs=(cmake make gcc pkg-config libxml2-dev gnuplot-nox libsuitesparse-dev libqhull-dev libopenblas0-serial)
case "$profile" in
  build) ;;
  test) pkgs+=(libcmocka-dev libccd-dev) ;;
  bench) pkgs+=(libcmocka-dev libccd-dev g++ libode-dev libbullet-dev libmujoco-dev) ;;
  *) echo "setup.sh: unknown profile '$profile' (build|test|bench)" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup: installing missing Debian packages: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
