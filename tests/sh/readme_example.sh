#!/usr/bin/env bash
# The C example in README.md (the ```c block after the line "<!-- example: readme -->") must
# compile warning-free against the built static library, run, and print the height of the box that
# fell onto the ground and came to rest: 0.55 m (ground top 0.5 m + half thickness 0.05 m) to within
# the contact tolerance (1e-4 m) plus the contact position tolerance (1e-6 m).
# Usage: bash tests/sh/readme_example.sh <source_dir> <binary_dir>
set -euo pipefail

src=$(cd "${1:?usage: readme_example.sh <source_dir> <binary_dir>}" && pwd)
bin=$(cd "${2:?usage: readme_example.sh <source_dir> <binary_dir>}" && pwd)
readme="$src/README.md"

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ibdyn-readme-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

[ -f "$readme" ] || fail "$readme not found"
[ -f "$bin/libibdyn.a" ] || fail "$bin/libibdyn.a not found (build first)"

# The marker line, optional blank lines, then a ```c fence; the block ends at the next ``` line.
awk '
	state == 0 && /^<!-- example: readme -->[[:space:]]*$/ { state = 1; next }
	state == 1 && /^[[:space:]]*$/ { next }
	state == 1 && /^```c[[:space:]]*$/ { state = 2; next }
	state == 1 { exit 3 }
	state == 2 && /^```[[:space:]]*$/ { state = 3; exit 0 }
	state == 2 { print }
	END { if (state != 3) exit 3 }
' "$readme" >"$tmp/example.c" || fail "no complete \`\`\`c block right after '<!-- example: readme -->' in README.md"
lines=$(wc -l <"$tmp/example.c")
[ "$lines" -ge 10 ] || fail "README example has only $lines lines"

cache="$bin/CMakeCache.txt"
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$cache" 2>/dev/null | head -n 1)
[ -n "$cc" ] || cc=cc
san_flags=()
if grep -q '^IBDYN_SANITIZE:BOOL=ON' "$cache" 2>/dev/null; then
	san_flags=("-fsanitize=address,undefined" -fno-sanitize-recover=all -fno-omit-frame-pointer)
fi

"$cc" -std=c17 -Wall -Wextra -Wpedantic -Werror "${san_flags[@]}" -I"$src/include" -o "$tmp/example" "$tmp/example.c" \
	"$bin/libibdyn.a" -lcholmod -lqhull_r -lm 2>"$tmp/cc.err" || { cat "$tmp/cc.err" >&2; fail "the README example does not compile"; }
"$tmp/example" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/out" "$tmp/err" >&2; fail "the README example failed"; }
cat "$tmp/out"

# Expected line: "mass=... time=T height=Z x=... y=... spin=..."
awk -v z0=2 -v g=9.81 '
	{
		for (i = 1; i <= NF; ++i) {
			split($i, kv, "=")
			val[kv[1]] = kv[2]
			have[kv[1]] = 1
		}
	}
	END {
		if (NR != 1 || !have["time"] || !have["height"] || !have["x"] || !have["y"] || !have["spin"]) {
			print "unexpected output format" > "/dev/stderr"; exit 1
		}
		t = val["time"] + 0; z = val["height"] + 0
		if (t < 0.999 || t > 1.001) { printf "time %.17g, expected 1 s\n", t > "/dev/stderr"; exit 1 }
		expected = 0.55
		err = z - expected; if (err < 0) err = -err
		if (err > 1.01e-4) { printf "height %.17g, expected %.17g (error %.3g)\n", z, expected, err > "/dev/stderr"; exit 1 }
		# The impulse pushes along +x, the force along +y; friction has stopped the spin about +z.
		sp = val["spin"] + 0; if (sp < 0) sp = -sp
		if (!(val["x"] + 0 > 0.1) || !(val["y"] + 0 > 0.0) || !(sp < 1e-3)) {
			print "impulse or force had no visible effect, or the box still spins" > "/dev/stderr"; exit 1
		}
		printf "readme example: height %.12f m, resting height %.12f m, error %.2g m\n", z, expected, err
	}
' "$tmp/out" || fail "the README example printed wrong numbers"
