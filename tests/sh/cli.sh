#!/usr/bin/env bash
# ibsim command-line behaviour: final line, step counts, scene files, CSV, plot, error exits.
# Usage: bash tests/sh/cli.sh <source_dir> <binary_dir>
set -euo pipefail

src=$(cd "${1:?usage: cli.sh <source_dir> <binary_dir>}" && pwd)
bin=$(cd "${2:?usage: cli.sh <source_dir> <binary_dir>}" && pwd)
ibsim="$bin/ibsim"

if grep -q '^IBDYN_TOOLS:BOOL=OFF' "$bin/CMakeCache.txt" 2>/dev/null; then
	echo "cli: skipped (IBDYN_TOOLS=OFF, no ibsim)"
	exit 0
fi
[ -x "$ibsim" ] || { echo "FAIL: $ibsim not built" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/ibsim-cli-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

num='[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?'
final_re="^ibsim: steps=[0-9]+ sim_time=$num wall_ms_per_step=$num energy_rel_drift=$num max_pos_error=$num max_vel_error=$num max_ang_error=$num\$"

fail() {
	echo "FAIL: $*" >&2
	for f in "$tmp/last.out" "$tmp/last.err"; do
		[ -s "$f" ] && { echo "--- $(basename "$f"):" >&2; tail -n 20 "$f" >&2; }
	done
	exit 1
}

# run ARGS...: runs ibsim, leaves stdout in $tmp/last.out, stderr in $tmp/last.err, status in $rc.
run() {
	rc=0
	"$ibsim" "$@" >"$tmp/last.out" 2>"$tmp/last.err" || rc=$?
}

expect_rc() { # expected description
	[ "$rc" -eq "$1" ] || fail "$2: exit status $rc, expected $1"
}

final_line_ok() { # description: the last stdout line is the final line
	local last
	last=$(tail -n 1 "$tmp/last.out")
	[[ "$last" =~ $final_re ]] || fail "$1: last line '$last' is not the final result line"
}

field() { # NAME: value of NAME=... in the final line
	tail -n 1 "$tmp/last.out" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

# ---- default scene --------------------------------------------------------------------------
run
expect_rc 0 "default run"
final_line_ok "default run"
[ "$(wc -l <"$tmp/last.out")" -gt 1 ] || fail "default run: no human summary before the final line"
[ "$(grep -c '^ibsim: steps=' "$tmp/last.out")" -eq 1 ] || fail "default run: final line not unique"
# bodies fall onto the floor: contacts only dissipate (restitution < 1, friction), energy never grows
e0=$(sed -n 's/^energy: *E(0) = \([^ ]*\) J, E(end) = \([^ ]*\) J.*/\1/p' "$tmp/last.out")
e1=$(sed -n 's/^energy: *E(0) = \([^ ]*\) J, E(end) = \([^ ]*\) J.*/\2/p' "$tmp/last.out")
awk -v a="$e0" -v b="$e1" 'BEGIN { exit !(a != "" && b + 0 < a + 0 && b + 0 > 0) }' ||
	fail "default run: energy E(0) = $e0 J, E(end) = $e1 J (contacts must dissipate, not add energy)"
[ "$(field max_pos_error)" = "0.000000e+00" ] || fail "default run: max_pos_error should be 0 without joints"
echo "ok: default run: $(tail -n 1 "$tmp/last.out")"

run --quiet
expect_rc 0 "--quiet"
[ "$(wc -l <"$tmp/last.out")" -eq 1 ] || fail "--quiet: expected exactly one stdout line"
[ ! -s "$tmp/last.err" ] || fail "--quiet: unexpected stderr output"
final_line_ok "--quiet"
echo "ok: --quiet prints only the final line"

run --steps 10
expect_rc 0 "--steps 10"
final_line_ok "--steps 10"
[ "$(field steps)" = "10" ] || fail "--steps 10 reported steps=$(field steps)"
echo "ok: --steps 10"

run --time 0.5 --dt 0.01 --quiet
expect_rc 0 "--time 0.5 --dt 0.01"
final_line_ok "--time 0.5 --dt 0.01"
[ "$(field steps)" = "50" ] || fail "--time 0.5 --dt 0.01 reported steps=$(field steps)"
awk -v t="$(field sim_time)" 'BEGIN { d = t - 0.5; exit !(d < 1e-12 && d > -1e-12) }' ||
	fail "--time 0.5 --dt 0.01: sim_time=$(field sim_time)"
run run --time=0.25 --dt=0.01 --quiet
expect_rc 0 "run --time=0.25 --dt=0.01"
[ "$(field steps)" = "25" ] || fail "run --time=0.25 --dt=0.01 reported steps=$(field steps)"
echo "ok: --time/--dt step counts (also the explicit 'run' command and --opt=value)"

# ---- scene file -----------------------------------------------------------------------------
scene="$src/scenes/default.xml"
if [ ! -f "$scene" ]; then
	scene="$tmp/scene.xml"
	cat >"$scene" <<'EOF'
<?xml version="1.0"?>
<ibdyn version="1">
  <world gravity="0 0 -9.81"/>
  <run timestep="0.01" duration="0.3"/>
  <body name="ground" type="static" position="0 0 -0.5">
    <box half_extents="5 5 0.5"/>
  </body>
  <body name="ball" type="dynamic" position="0 0 5" linear_velocity="1 0 0" angular_velocity="0 0 3">
    <sphere radius="0.5"/>
  </body>
</ibdyn>
EOF
fi
run "$scene" --steps 20
expect_rc 0 "scene file $scene"
final_line_ok "scene file $scene"
[ "$(field steps)" = "20" ] || fail "scene file: steps=$(field steps)"
echo "ok: scene file $scene"

# Every shipped scene loads and steps.
shopt -s nullglob
for f in "$src"/scenes/*.xml; do
	run "$f" --steps 5 --quiet
	expect_rc 0 "scene $f"
	final_line_ok "scene $f"
done
shopt -u nullglob
echo "ok: every scenes/*.xml runs 5 steps"

# ---- CSV --------------------------------------------------------------------------------------
csv="$tmp/out.csv"
run --steps 7 --csv "$csv" --quiet
expect_rc 0 "--csv"
final_line_ok "--csv"
[ -s "$csv" ] || fail "--csv did not write $csv"
header=$(head -n 1 "$csv")
expected_header="time"
for body in ground tumbler ball capsule disc dumbbell; do
	for c in pos_x pos_y pos_z q_w q_x q_y q_z v_x v_y v_z w_x w_y w_z; do expected_header+=",${body}_$c"; done
done
expected_header+=",energy,kinetic,potential,spring,p_x,p_y,p_z,L_x,L_y,L_z"
[ "$header" = "$expected_header" ] || fail "--csv header is
$header
expected
$expected_header"
rows=$(($(wc -l <"$csv") - 1))
[ "$rows" -eq 8 ] || fail "--csv: $rows data rows, expected 8 (7 steps + t = 0)"
# Every row: as many fields as the header, all numeric; time goes 0, 0.01, ... 0.07; the ball starts at x = -2.
awk -F, '
	NR == 1 { n = NF; for (i = 1; i <= NF; ++i) col[$i] = i; next }
	{
		if (NF != n) { printf "row %d has %d fields, header %d\n", NR, NF, n; exit 1 }
		for (i = 1; i <= NF; ++i) if ($i !~ /^-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?$/) { printf "row %d field %d not a number: %s\n", NR, i, $i; exit 1 }
		t = $(col["time"]); want = 0.01 * (NR - 2)
		if (t - want > 1e-12 || want - t > 1e-12) { printf "row %d: time %s, expected %g\n", NR, t, want; exit 1 }
		if (NR == 2 && $(col["ball_pos_x"]) != -2) { print "ball_pos_x at t = 0 is not -2"; exit 1 }
		e = $(col["energy"]) - ($(col["kinetic"]) + $(col["potential"]) + $(col["spring"]))
		if (e > 1e-6 || e < -1e-6) { printf "row %d: energy != kinetic + potential + spring\n", NR; exit 1 }
	}
' "$csv" >"$tmp/awk.out" || fail "--csv content: $(cat "$tmp/awk.out")"
echo "ok: --csv header ($(echo "$header" | tr ',' '\n' | wc -l) columns) and $rows rows"

run --steps 3 --csv "$tmp/no-such-dir/out.csv"
expect_rc 2 "--csv into a missing directory"
grep -q "no-such-dir/out.csv" "$tmp/last.err" || fail "--csv into a missing directory: no message naming the file"
echo "ok: --csv into a missing directory -> 2"

# ---- plot ---------------------------------------------------------------------------------------
png="$tmp/plot.png"
run --steps 50 --plot "$png" --quiet
expect_rc 0 "--plot"
final_line_ok "--plot"
[ -s "$png" ] || fail "--plot did not write a non-empty $png"
magic=$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')
[ "$magic" = "89504e470d0a1a0a" ] || fail "--plot: $png is not a PNG (magic $magic)"
# With --csv as well, the CSV is kept.
run --steps 5 --plot "$tmp/plot2.png" --csv "$tmp/plot2.csv" --quiet
expect_rc 0 "--plot with --csv"
if [ ! -s "$tmp/plot2.png" ] || [ "$(wc -l <"$tmp/plot2.csv")" -ne 7 ]; then fail "--plot with --csv: missing outputs"; fi
# No gnuplot in PATH: error, exit 1.
rc=0
PATH="$tmp/empty-path" "$ibsim" --steps 5 --plot "$tmp/plot3.png" >"$tmp/last.out" 2>"$tmp/last.err" || rc=$?
expect_rc 1 "--plot without gnuplot"
grep -q gnuplot "$tmp/last.err" || fail "--plot without gnuplot: no message mentioning gnuplot"
echo "ok: --plot writes a PNG ($(wc -c <"$png") bytes); missing gnuplot -> 1"

# ---- bad input ------------------------------------------------------------------------------
bad_args=(
	"--bogus"
	"-x"
	"--steps"
	"--steps abc"
	"--steps 1.5"
	"--steps 0"
	"--steps -3"
	"--steps 99999999999999999999"
	"--dt 0"
	"--dt -0.01"
	"--dt nan"
	"--dt inf"
	"--dt 1e999"
	"--dt 0.01x"
	"--time 0"
	"--time 1 --steps 10"
	"--quiet=1"
	"--quiet --quiet"
	"a.xml b.xml"
)
for a in "${bad_args[@]}"; do
	# shellcheck disable=SC2086  # split into arguments on purpose
	run $a
	expect_rc 2 "ibsim $a"
	[ -s "$tmp/last.err" ] || fail "ibsim $a: no error message on stderr"
	! grep -q '^ibsim: steps=' "$tmp/last.out" || fail "ibsim $a: ran a simulation"
done
run --bogus
grep -q "unknown option '--bogus'" "$tmp/last.err" || fail "--bogus: message does not name the option"
echo "ok: ${#bad_args[@]} bad command lines -> 2"

missing="$tmp/does-not-exist.xml"
run "$missing"
expect_rc 2 "missing scene file"
grep -q "does-not-exist.xml" "$tmp/last.err" || fail "missing scene file: message does not name the file"
echo "ok: missing scene file -> 2"

malformed="$tmp/malformed.xml"
cat >"$malformed" <<'EOF'
<?xml version="1.0"?>
<ibdyn version="1">
  <run timestep="0.01" duration="1" no_such_attribute="3"/>
</ibdyn>
EOF
run "$malformed"
expect_rc 2 "malformed scene"
grep -qF "$malformed:3:" "$tmp/last.err" || fail "malformed scene: stderr lacks '$malformed:3:'"
echo "ok: malformed scene -> 2 with '$(head -n 1 "$tmp/last.err")'"

# A state that overflows in the first step: IB_ERR_DIVERGED -> exit 1, error on stderr, and the
# final line is still printed for the 0 completed steps.
diverging="$tmp/diverging.xml"
cat >"$diverging" <<'EOF'
<?xml version="1.0"?>
<ibdyn version="1">
  <body name="spinner" type="dynamic" angular_velocity="1e150 2e150 3e150">
    <box half_extents="0.3 0.2 0.1"/>
  </body>
</ibdyn>
EOF
run "$diverging" --steps 5
expect_rc 1 "diverging scene"
final_line_ok "diverging scene"
[ "$(field steps)" = "0" ] || fail "diverging scene: steps=$(field steps), expected 0"
grep -qi "diverged" "$tmp/last.err" || fail "diverging scene: stderr does not report the divergence"
echo "ok: diverging scene -> 1 with the final line"

# ---- solver options ---------------------------------------------------------------------------
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; } # le A B: A <= B
lt() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 < b + 0) }'; }  # lt A B: A < B
max_pos_iterations() { sed -n 's/.*max iterations \([0-9]*\) (position).*/\1/p' "$tmp/last.out"; }

chain10="$src/scenes/chain10.xml"
run "$chain10" --steps 50 --solver iterative
expect_rc 0 "chain10 --solver iterative"
final_line_ok "chain10 --solver iterative"
grep -q "method iterative" "$tmp/last.out" || fail "--solver iterative: the summary does not show the method"
tight_err=$(field max_pos_error)
tight_iter=$(max_pos_iterations)
le "$tight_err" 1e-6 || fail "chain10 iterative at 1e-6: max_pos_error=$tight_err > 1e-6"
run "$chain10" --steps 50 --solver iterative --tol-pos 1e-3
expect_rc 0 "chain10 --tol-pos 1e-3"
final_line_ok "chain10 --tol-pos 1e-3"
grep -q "tolerances 0.001 m / 0.001 rad" "$tmp/last.out" || fail "--tol-pos: the summary does not show the tolerances"
loose_err=$(field max_pos_error)
loose_iter=$(max_pos_iterations)
le "$loose_err" 1e-3 || fail "--tol-pos 1e-3: max_pos_error=$loose_err > 1e-3"
lt "$tight_err" "$loose_err" || fail "--tol-pos 1e-3: error $loose_err not larger than $tight_err at 1e-6"
lt "$loose_iter" "$tight_iter" || fail "--tol-pos 1e-3: $loose_iter position sweeps, not fewer than $tight_iter"
run "$chain10" --steps 20 --solver lgs --tol-vel 1e-4 --max-iter 50 --quiet
expect_rc 0 "chain10 --solver lgs --tol-vel --max-iter"
final_line_ok "chain10 --solver lgs"
run "$chain10" --steps 20 --order 4
expect_rc 0 "chain10 --order 4"
final_line_ok "chain10 --order 4"
grep -q "order 4" "$tmp/last.out" || fail "--order 4: the summary does not show order 4"
run "$chain10" --steps 5 --order 3
expect_rc 2 "--order 3"
echo "ok: --solver/--tol-pos/--tol-vel/--max-iter/--order (iterative chain10: error $tight_err -> $loose_err, sweeps $tight_iter -> $loose_iter)"

bad_solver_args=(
	"--tol-pos 0" "--tol-pos -1e-3" "--tol-pos abc" "--tol-pos nan" "--tol-vel 0" "--tol-vel inf"
	"--max-iter 0" "--max-iter 1.5" "--max-iter -2" "--max-iter 99999999999" "--solver" "--solver gauss"
	"--solver ITERATIVE" "--kick-body root" "--kick-torque 1,2"
)
for a in "${bad_solver_args[@]}"; do
	# shellcheck disable=SC2086  # split into arguments on purpose
	run "$chain10" $a
	expect_rc 2 "ibsim chain10 $a"
	[ -s "$tmp/last.err" ] || fail "ibsim chain10 $a: no error message on stderr"
	! grep -q '^ibsim: steps=' "$tmp/last.out" || fail "ibsim chain10 $a: ran a simulation"
done
for t in "1 2" "1 2 3 4" "a b c" "1 2 nan" ""; do
	run "$chain10" --kick-torque "$t"
	expect_rc 2 "--kick-torque '$t'"
done
run "$chain10" --kick-torque "0 0 1" --steps 1
expect_rc 2 "--kick-torque on a scene without a body 'root'"
grep -q "no body named 'root'" "$tmp/last.err" || fail "--kick-torque without root: message"
run "$chain10" --kick-torque "0 0 1" --kick-body ground --steps 1
expect_rc 2 "--kick-body on a static body"
echo "ok: $((${#bad_solver_args[@]} + 7)) bad solver/kick options -> 2"

# ---- gen ----------------------------------------------------------------------------------------
run gen chain 5
expect_rc 0 "gen chain 5"
cp "$tmp/last.out" "$tmp/chain5.xml"
[ "$(grep -c '<body ' "$tmp/chain5.xml")" -eq 6 ] || fail "gen chain 5: expected 6 bodies (5 links and the static one)"
[ "$(grep -c '<joint type="ball"' "$tmp/chain5.xml")" -eq 5 ] || fail "gen chain 5: expected 5 ball joints"
grep -q '<run timestep="0.01" duration="10"/>' "$tmp/chain5.xml" || fail "gen chain 5: run settings"
grep -q 'position_tolerance="1e-06" angular_tolerance="1e-06" velocity_tolerance="1e-06"' "$tmp/chain5.xml" ||
	fail "gen chain 5: tolerances"
run "$tmp/chain5.xml" --steps 50
expect_rc 0 "run gen chain 5"
final_line_ok "run gen chain 5"
le "$(field max_pos_error)" 1e-6 || fail "gen chain 5: max_pos_error=$(field max_pos_error) > 1e-6"
awk -v v="$(field energy_rel_drift)" 'BEGIN { exit !(v + 0 > 0) }' || fail "gen chain 5: nothing moved"
echo "ok: gen chain 5 loads and runs: $(tail -n 1 "$tmp/last.out")"

run gen tree 5 -o "$tmp/f.xml"
expect_rc 0 "gen tree 5 -o f.xml"
[ ! -s "$tmp/last.out" ] || fail "gen tree 5 -o: unexpected stdout output"
[ "$(grep -c '<body ' "$tmp/f.xml")" -eq 32 ] || fail "gen tree 5: expected 31 tree bodies and the static one"
[ "$(grep -c '<body [^>]*type="dynamic"' "$tmp/f.xml")" -eq 31 ] || fail "gen tree 5: expected 31 dynamic bodies"
[ "$(grep -c '<joint ' "$tmp/f.xml")" -eq 31 ] || fail "gen tree 5: expected 31 joints"
grep -q '<body name="root" type="dynamic"' "$tmp/f.xml" || fail "gen tree 5: no body 'root'"
run "$tmp/f.xml" --steps 30 --kick-torque "6 8 0"
expect_rc 0 "run gen tree 5 --kick-torque"
final_line_ok "run gen tree 5"
le "$(field max_pos_error)" 1e-6 || fail "gen tree 5: max_pos_error=$(field max_pos_error) > 1e-6"
kicked=$(field energy_rel_drift)
run "$tmp/f.xml" --steps 30
unkicked=$(field energy_rel_drift)
lt "$unkicked" "$kicked" || fail "--kick-torque did not set the tree moving ($unkicked vs $kicked)"
echo "ok: gen tree 5 -o: 31 bodies, runs; --kick-torque sets it rotating"

for f in chain10 chain50 tree31 tree255; do
	case $f in chain*) args=(chain "${f#chain}") ;; tree31) args=(tree 5) ;; tree255) args=(tree 8) ;; esac
	run gen "${args[@]}"
	cmp -s "$tmp/last.out" "$src/scenes/$f.xml" || fail "scenes/$f.xml differs from 'ibsim gen ${args[*]}'"
done
run gen chain 100 --dt 0.016666666666666666
cmp -s "$tmp/last.out" "$src/scenes/chain100.xml" || fail "scenes/chain100.xml differs from 'ibsim gen chain 100 --dt 1/60'"
echo "ok: scenes/chain{10,50,100}.xml and tree{31,255}.xml are what gen writes"

bad_gen=("gen" "gen chain" "gen chain 0" "gen chain -1" "gen chain 1.5" "gen chain 100001" "gen tree 0" "gen tree 13"
	"gen rope 5" "gen chain 5 6" "gen chain 5 --dt 0" "gen chain 5 --duration -1" "gen chain 5 -o" "gen chain 5 --bogus"
	"gen chain 5 -o $tmp/a.xml --output $tmp/b.xml" "gen chain 5 -o $tmp/no-such-dir/c.xml")
for a in "${bad_gen[@]}"; do
	# shellcheck disable=SC2086
	run $a
	expect_rc 2 "ibsim $a"
	[ -s "$tmp/last.err" ] || fail "ibsim $a: no error message on stderr"
done
run gen --help
expect_rc 0 "gen --help"
grep -q '^usage: ibsim gen chain N' "$tmp/last.out" || fail "gen --help: no usage"
echo "ok: ${#bad_gen[@]} bad gen command lines -> 2; gen --help"

# ---- help and version -------------------------------------------------------------------------
for h in --help -h "run --help"; do
	# shellcheck disable=SC2086
	run $h
	expect_rc 0 "ibsim $h"
	grep -q '^usage: ibsim' "$tmp/last.out" || fail "ibsim $h: no usage text on stdout"
	grep -q -- '--steps' "$tmp/last.out" || fail "ibsim $h: usage does not list --steps"
done
run --version
expect_rc 0 "--version"
grep -Eq '^ibsim \(ibdyn [0-9]+\.[0-9]+\.[0-9]+\)$' "$tmp/last.out" || fail "--version output"
echo "ok: --help, -h, run --help, --version"

echo "cli: all checks passed"
