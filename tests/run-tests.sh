#!/bin/bash
# Run stockade's tests: every unit test binary $BUILD/tests/test-*, then
# every tests/integration/*.sh, each printing TAP. `make check` runs this.
#
# Environment:
#   BUILD              the build directory (default: build)
#   STOCKADE           the stockade binary (default: $BUILD/stockade)
#   TESTS="a b"        run only these files, by basename (shell patterns
#                      allowed; the .sh suffix may be left out)
#   STOCKADE_MUST_WORK=1   every skip counts as a failure
#   TEST_TIMEOUT       seconds one file may take (default 900)
#
# The last line is "N passed, N failed"; the status is 1 if anything failed.
# Each file's whole output is kept in $BUILD/tests/logs/NAME.log.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$here")

# Paths given relative to where we were started (make's directory is the
# repository root, but a person may run this from anywhere).
abs() {
	case $1 in
	/*) echo "$1" ;;
	*) echo "$PWD/$1" ;;
	esac
}
BUILD=$(abs "${BUILD:-build}")
STOCKADE=$(abs "${STOCKADE:-$BUILD/stockade}")
PROBE=$BUILD/tests/probe
SIMKERNEL=$BUILD/tests/simkernel
PTYRUN=$BUILD/tests/ptyrun
NETPEER=$BUILD/tests/netpeer
export BUILD STOCKADE PROBE SIMKERNEL PTYRUN NETPEER
must_work=${STOCKADE_MUST_WORK:-0}
cd "$root" || exit 1

logs=$BUILD/tests/logs
mkdir -p "$logs" || exit 1

selected() {
	local base=$1 want
	[ -z "${TESTS:-}" ] && return 0
	for want in $TESTS; do
		# shellcheck disable=SC2254 # patterns are the point
		case $base in
		$want | $want.sh) return 0 ;;
		esac
	done
	return 1
}

files=()
for f in "$BUILD"/tests/test-*; do
	{ [ -f "$f" ] && [ -x "$f" ]; } || continue
	case $f in *.d | *.o) continue ;; esac
	selected "$(basename "$f")" && files+=("$f")
done
for f in "$root"/tests/integration/*.sh; do
	[ -f "$f" ] || continue
	selected "$(basename "$f")" && files+=("$f")
done

total_pass=0 total_fail=0 total_skip=0

# run_one FILE: run it, parse its TAP, print the not-ok lines with their
# diagnostics and one summary line, and add to the totals.
run_one() {
	local file=$1 backend=${2:-} name log status line
	local pass=0 fail=0 skip=0 todo=0 ran=0 plan='' skip_all='' showing=0 bailed=0
	local -a problems=()

	name=$(basename "$file")
	log=$logs/$name${backend:+.$backend}.log
	[ -n "$backend" ] && name="$name [$backend]"
	echo "== $name"

	local -a cmd=("$file")
	case $file in *.sh) cmd=(bash "$file") ;; esac
	if command -v timeout >/dev/null; then
		cmd=(timeout -k 10 "${TEST_TIMEOUT:-900}" "${cmd[@]}")
	fi
	# stdin from /dev/null: no test may wait on, or inject into, the
	# terminal this runs on.
	TEST_BACKEND=${backend:-${TEST_BACKEND:-}} "${cmd[@]}" </dev/null >"$log" 2>&1
	status=$?

	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%$'\r'}
		if [[ $line =~ ^not\ ok([[:space:]]|$) ]]; then
			ran=$((ran + 1))
			if [[ $line =~ \#[[:space:]]*[Tt][Oo][Dd][Oo] ]]; then
				todo=$((todo + 1))
				showing=0
			else
				fail=$((fail + 1))
				echo "  $line"
				showing=1
			fi
		elif [[ $line =~ ^ok([[:space:]]|$) ]]; then
			ran=$((ran + 1))
			showing=0
			if [[ $line =~ \#[[:space:]]*[Ss][Kk][Ii][Pp] ]]; then
				if [ "$must_work" = 1 ]; then
					fail=$((fail + 1))
					echo "  $line"
					echo "  # (a skip counts as a failure: STOCKADE_MUST_WORK=1)"
				else
					skip=$((skip + 1))
				fi
			else
				pass=$((pass + 1))
			fi
		elif [[ $line =~ ^1\.\.0([[:space:]]|$) ]]; then
			plan=0
			showing=0
			if [[ $line =~ \#[[:space:]]*[Ss][Kk][Ii][Pp][[:space:]]*(.*)$ ]]; then
				skip_all=${BASH_REMATCH[1]:-no reason given}
			fi
		elif [[ $line =~ ^1\.\.([0-9]+) ]]; then
			plan=${BASH_REMATCH[1]}
			showing=0
		elif [[ $line =~ ^Bail\ out! ]]; then
			bailed=1
			echo "  $line"
			showing=0
		elif [[ $line == \#* ]]; then
			[ "$showing" = 1 ] && echo "  $line"
		else
			showing=0
		fi
	done <"$log"

	# A whole file skipped: exit status 77, or a "1..0 # SKIP" plan.
	if [ "$status" -eq 77 ] || { [ "$plan" = 0 ] && [ "$ran" -eq 0 ]; }; then
		if [ "$fail" -gt 0 ]; then
			problems+=("exit status 77 after failures")
		elif [ "$must_work" = 1 ]; then
			fail=$((fail + 1))
			echo "  skipped: ${skip_all:-exit status 77} (a skip counts as a failure: STOCKADE_MUST_WORK=1)"
		else
			skip=$((skip + 1))
			echo "  skipped: ${skip_all:-exit status 77}"
		fi
	else
		if [ "$status" -eq 124 ] && [[ ${cmd[0]} == timeout ]]; then
			problems+=("timed out after ${TEST_TIMEOUT:-900}s")
		elif [ "$status" -ne 0 ] && [ "$fail" -eq 0 ]; then
			problems+=("exit status $status without a failed test")
		fi
		if [ -z "$plan" ]; then
			problems+=("no plan (1..N): the file did not finish")
		elif [ "$plan" != "$ran" ]; then
			problems+=("planned $plan tests, ran $ran")
		fi
		[ "$bailed" = 1 ] && problems+=("bailed out")
	fi
	if [ "${#problems[@]}" -gt 0 ]; then
		fail=$((fail + 1))
		for line in "${problems[@]}"; do
			echo "  not ok - $name: $line"
		done
		echo "  # last lines of $log:"
		tail -n 15 "$log" | sed 's/^/  #   /'
	fi

	local summary="$pass passed, $fail failed"
	[ "$skip" -gt 0 ] && summary+=", $skip skipped"
	[ "$todo" -gt 0 ] && summary+=", $todo todo"
	echo "-- $name: $summary"

	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
}

if [ -n "${TESTS:-}" ] && [ "${#files[@]}" -eq 0 ]; then
	echo "no test file matches TESTS='$TESTS'"
	total_fail=1
fi
# The integration suite runs once per backend: every test of the landlock
# backend must hold for the namespace jail too.
: "${STOCKADE_BACKENDS:=namespaces landlock}"
for f in "${files[@]}"; do
	case $f in
	*/integration/*.sh)
		# A file may name the backends it is about: "# backends: a b".
		only=$(sed -n 's/^# backends: //p' "$f" | head -n 1)
		for b in $STOCKADE_BACKENDS; do
			[ -z "$only" ] || [[ " $only " == *" $b "* ]] || continue
			run_one "$f" "$b"
		done
		;;
	*) run_one "$f" ;;
	esac
done

echo
[ "$total_skip" -gt 0 ] && echo "$total_skip skipped"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
