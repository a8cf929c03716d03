#!/usr/bin/env bash
# Install the build into a temporary prefix and use it from outside the source tree:
#   1. the CMake way: tests/install_consumer with find_package(ibdyn) (shared and static targets);
#   2. the pkg-config way: cc consumer.c $(pkg-config --cflags --libs ibdyn), run with LD_LIBRARY_PATH;
#   3. static: consumer.c against libibdyn.a with pkg-config --static's private libraries.
# In a sanitized build (IBDYN_SANITIZE=ON) the consumers are compiled with the same sanitizers.
# Usage: bash tests/sh/install.sh <source_dir> <binary_dir>
set -euo pipefail

src=$(cd "${1:?usage: install.sh <source_dir> <binary_dir>}" && pwd)
bin=$(cd "${2:?usage: install.sh <source_dir> <binary_dir>}" && pwd)
cache="$bin/CMakeCache.txt"
[ -f "$cache" ] || { echo "FAIL: $cache not found (not a configured build dir)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ibdyn-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

cache_value() { # name -> value from CMakeCache.txt ("" if absent)
	sed -n "s/^$1:[A-Z]*=//p" "$cache" | head -n 1
}

cc=$(cache_value CMAKE_C_COMPILER)
[ -n "$cc" ] || cc=cc
san_flags=()
if [ "$(cache_value IBDYN_SANITIZE)" = "ON" ]; then
	san_flags=("-fsanitize=address,undefined" -fno-omit-frame-pointer)
	echo "install: sanitized build: consumers are built with ${san_flags[*]}"
fi
libdir_rel=$(cache_value CMAKE_INSTALL_LIBDIR)
[ -n "$libdir_rel" ] || fail "CMAKE_INSTALL_LIBDIR not in $cache"

echo "== cmake --install $bin --prefix $prefix"
cmake --install "$bin" --prefix "$prefix" >"$tmp/install.log" || { cat "$tmp/install.log" >&2; fail "cmake --install failed"; }

# Where the files went: the .pc must sit in <prefix>/<CMAKE_INSTALL_LIBDIR>/pkgconfig (GNUInstallDirs).
pc=$(find "$prefix" -name ibdyn.pc -print | head -n 1)
[ -n "$pc" ] || fail "ibdyn.pc was not installed"
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
[ "$libdir" = "$prefix/$libdir_rel" ] || fail "ibdyn.pc installed in $pcdir, expected $prefix/$libdir_rel/pkgconfig"
for f in "$prefix/include/ibdyn/ibdyn.h" "$libdir/libibdyn.a" "$libdir/cmake/ibdyn/ibdynConfig.cmake" \
	"$libdir/cmake/ibdyn/ibdynConfigVersion.cmake" "$libdir/cmake/ibdyn/ibdynTargets.cmake"; do
	[ -f "$f" ] || fail "not installed: $f"
done
ls "$libdir"/libibdyn.so* >/dev/null 2>&1 || fail "no libibdyn.so* in $libdir"

check_output() { # file: the consumer's stdout must report the fall
	grep -Eq '^consumer: ibdyn [0-9]+\.[0-9]+\.[0-9]+, sphere fell from 10 m to 5\.09' "$1" ||
		{ cat "$1" >&2; fail "unexpected consumer output in $1"; }
}

# ---- 1. CMake package -----------------------------------------------------------------------
echo "== find_package(ibdyn) consumer"
cflags="${san_flags[*]:-}"
cmake -S "$src/tests/install_consumer" -B "$tmp/consumer-build" -DCMAKE_PREFIX_PATH="$prefix" \
	-DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$cflags" \
	-DCMAKE_EXE_LINKER_FLAGS="$cflags" >"$tmp/consumer-configure.log" 2>&1 ||
	{ cat "$tmp/consumer-configure.log" >&2; fail "configuring tests/install_consumer failed"; }
grep -q "ibdyn_DIR:PATH=$libdir/cmake/ibdyn" "$tmp/consumer-build/CMakeCache.txt" ||
	fail "find_package(ibdyn) did not pick the package in $libdir/cmake/ibdyn"
cmake --build "$tmp/consumer-build" >"$tmp/consumer-build.log" 2>&1 ||
	{ cat "$tmp/consumer-build.log" >&2; fail "building tests/install_consumer failed"; }
# The shared consumer finds libibdyn.so through the build tree RPATH CMake sets for imported targets.
"$tmp/consumer-build/consumer_shared" >"$tmp/cmake-shared.out" || fail "consumer_shared (CMake) failed"
check_output "$tmp/cmake-shared.out"
"$tmp/consumer-build/consumer_static" >"$tmp/cmake-static.out" || fail "consumer_static (CMake) failed"
check_output "$tmp/cmake-static.out"
cat "$tmp/cmake-shared.out"

# ---- 2. pkg-config, shared ------------------------------------------------------------------
echo "== pkg-config consumer (shared)"
export PKG_CONFIG_PATH="$pcdir"
pc_cflags=$(pkg-config --cflags ibdyn) || fail "pkg-config --cflags ibdyn failed"
pc_libs=$(pkg-config --libs ibdyn) || fail "pkg-config --libs ibdyn failed"
# has_dir_flag FLAG DIR WORDS...: one of WORDS is FLAG<d> with d the same directory as DIR
# (pkg-config may report un-normalised paths such as .../lib/pkgconfig/../../include).
has_dir_flag() {
	local flag=$1 want
	want=$(cd "$2" && pwd -P)
	shift 2
	for w in "$@"; do
		case "$w" in
		"$flag"*) [ -d "${w#"$flag"}" ] && [ "$(cd "${w#"$flag"}" && pwd -P)" = "$want" ] && return 0 ;;
		esac
	done
	return 1
}
# shellcheck disable=SC2086
has_dir_flag -I "$prefix/include" $pc_cflags ||
	fail "pkg-config --cflags gives '$pc_cflags', which does not point into the install prefix $prefix" \
		"(ibdyn.pc must be relocatable, e.g. prefix from \${pcfiledir}, to support cmake --install --prefix)"
# shellcheck disable=SC2086
has_dir_flag -L "$libdir" $pc_libs || fail "pkg-config --libs gives '$pc_libs', which does not point to $libdir"
# shellcheck disable=SC2086  # word splitting of the pkg-config flags is intended
"$cc" -std=c17 -Wall -Wextra -Werror "${san_flags[@]}" -o "$tmp/pc-shared" "$src/tests/install_consumer/consumer.c" \
	$pc_cflags $pc_libs -lm || fail "compiling consumer.c with pkg-config flags failed"
readelf -d "$tmp/pc-shared" | grep -q 'NEEDED.*libibdyn\.so' || fail "pc-shared does not link libibdyn.so"
LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$tmp/pc-shared" >"$tmp/pc-shared.out" ||
	fail "pkg-config shared consumer failed"
check_output "$tmp/pc-shared.out"
cat "$tmp/pc-shared.out"

# ---- 3. pkg-config, static ------------------------------------------------------------------
echo "== pkg-config consumer (static, $libdir/libibdyn.a)"
pc_static=$(pkg-config --static --libs-only-l ibdyn) || fail "pkg-config --static ibdyn failed"
private_libs=()
for l in $pc_static; do [ "$l" = "-libdyn" ] || private_libs+=("$l"); done
# shellcheck disable=SC2086
"$cc" -std=c17 -Wall -Wextra -Werror "${san_flags[@]}" -o "$tmp/pc-static" "$src/tests/install_consumer/consumer.c" \
	$pc_cflags "$libdir/libibdyn.a" "${private_libs[@]}" -lm || fail "static link against libibdyn.a failed"
if readelf -d "$tmp/pc-static" | grep -q 'NEEDED.*libibdyn'; then fail "pc-static still needs libibdyn.so"; fi
env -u LD_LIBRARY_PATH "$tmp/pc-static" >"$tmp/pc-static.out" || fail "static consumer failed"
check_output "$tmp/pc-static.out"

echo "install: OK (CMake package, pkg-config shared, pkg-config static)"
