#!/bin/bash
# Five real test suites, each run plainly and in stockade (the landlock
# backend and the namespace jail), interleaved, with their pass, fail and
# skip counts and wall-clock times side by side. The status is 1 when a
# jail's counts differ from the plain run's.
#
# Never run by `make check` or .ci/run: it needs the suites' sources at
# their release tags (tools/suites/prepare.sh fetches and builds them, which
# needs GitHub; CI reaches only the package registries).
#
#   tools/suites/run.sh [-s SUITE]... [-m MODE]... [-r ROUNDS] ROOT [-- STOCKADE_OPTION...]
#
# ROOT holds tornado/ express/ ws/ curl/ curl-build/ libuv/ libuv-build/ as
# prepare.sh leaves them. SUITE: tornado express ws curl libuv (default:
# all). MODE: plain landlock namespaces (default: all three, in that order,
# for each suite before the next). Options after -- go to every jailed run
# (e.g. `-- --write /tmp` to see what is left when /tmp is writable).
#
# Environment: STOCKADE (default: build/stockade of this tree), CURL_TESTS
# (default "1 to 400"), CURL_JOBS (runtests.pl -j, default 2), LOGS (where
# each run's output goes, default ROOT/logs).
#
# Run it as an unprivileged user: as root the plain run has capabilities
# the jail never gives (tornado and libuv count tests "running as root").
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tree=$(cd "$here/../.." && pwd)
STOCKADE=${STOCKADE:-$tree/build/stockade}
CURL_TESTS=${CURL_TESTS:-1 to 400}
CURL_JOBS=${CURL_JOBS:-2}

suites=() modes=() rounds=1
while getopts s:m:r: opt; do
	case $opt in
	s) suites+=("$OPTARG") ;;
	m) modes+=("$OPTARG") ;;
	r) rounds=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-s SUITE]... [-m MODE]... [-r ROUNDS] ROOT [-- STOCKADE_OPTION...]" >&2; exit 2; }
ROOT=$(cd "$1" && pwd) || exit 2
shift
[ "${1:-}" = -- ] && shift
extra=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(tornado express ws curl libuv)
[ ${#modes[@]} -gt 0 ] || modes=(plain landlock namespaces)
LOGS=${LOGS:-$ROOT/logs}
mkdir -p "$LOGS" || exit 2
[ -x "$STOCKADE" ] || { echo "$0: no stockade at '$STOCKADE' (make -j2 first)" >&2; exit 2; }

# Each suite: its workspace, what else it reads, and its command (run in
# the workspace).
suite_setup() {
	reads=()
	case $1 in
	tornado)
		ws=$ROOT/tornado
		cmd=(python3 -m tornado.test.runtests) ;;
	express)
		ws=$ROOT/express
		cmd=(node_modules/.bin/mocha --require test/support/env --reporter dot --check-leaks test/ test/acceptance/) ;;
	ws)
		ws=$ROOT/ws
		# The glob as npm's shell would expand it.
		cmd=(sh -c 'exec node_modules/.bin/mocha --throw-deprecation --reporter dot test/*.test.js') ;;
	curl)
		ws=$ROOT/curl-build
		reads=(--read "$ROOT/curl")
		# shellcheck disable=SC2086 # CURL_TESTS is words on purpose
		cmd=(sh -c "cd tests && exec perl '$ROOT/curl/tests/runtests.pl' -a -j$CURL_JOBS $CURL_TESTS") ;;
	libuv)
		# ctest runs it from the source tree (test/fixtures).
		ws=$ROOT/libuv
		reads=(--read "$ROOT/libuv-build")
		cmd=("$ROOT/libuv-build/uv_run_tests_a") ;;
	*)
		echo "$0: unknown suite '$1'" >&2
		exit 2 ;;
	esac
}

# pass fail skip, from a suite's output.
counts() {
	local suite=$1 log=$2
	case $suite in
	tornado)
		# "Ran N tests", then "OK (skipped=S)" or
		# "FAILED (failures=F, errors=E, skipped=S)".
		awk '/^Ran [0-9]+ test/ { n = $2 }
		     /^(OK|FAILED)/ {
			f = e = s = 0
			if (match($0, /failures=[0-9]+/)) f = substr($0, RSTART + 9, RLENGTH - 9)
			if (match($0, /errors=[0-9]+/)) e = substr($0, RSTART + 7, RLENGTH - 7)
			if (match($0, /skipped=[0-9]+/)) s = substr($0, RSTART + 8, RLENGTH - 8)
		     }
		     END { if (n == "") print "- - -"; else print n - f - e - s, f + e, s }' "$log" ;;
	express | ws)
		awk '/^ *[0-9]+ passing/ { p = $1 } /^ *[0-9]+ failing/ { f = $1 } /^ *[0-9]+ pending/ { s = $1 }
		     END { if (p == "") print "- - -"; else print p + 0, f + 0, s + 0 }' "$log" ;;
	curl)
		# "TESTDONE: X tests out of Y reported OK", "TESTINFO: N tests were skipped".
		awk '/^TESTDONE: [0-9]+ tests out of/ { ok = $2; all = $6 }
		     /^TESTINFO: [0-9]+ tests were skipped/ { s = $2 }
		     END { if (ok == "") print "- - -"; else print ok, all - ok, s + 0 }' "$log" ;;
	libuv)
		awk '/^ok .*# SKIP/ { s++; next } /^ok / { p++ } /^not ok / { f++ }
		     END { if (p + f + s == 0) print "- - -"; else print p + 0, f + 0, s + 0 }' "$log" ;;
	esac
}

now() { date +%s.%N; }

status=0
printf '%-8s %-11s %6s %6s %6s %9s %7s\n' suite mode pass fail skip seconds ratio
for suite in "${suites[@]}"; do
	suite_setup "$suite"
	[ -d "$ws" ] || { echo "$0: no '$ws' (tools/suites/prepare.sh $ROOT)" >&2; exit 2; }
	declare -A total=() result=()
	for ((round = 1; round <= rounds; round++)); do
		for mode in "${modes[@]}"; do
			log=$LOGS/$suite-$mode-$round.log
			case $mode in
			plain) run=() ;;
			landlock | namespaces)
				run=("$STOCKADE" --backend "$mode" --report "$LOGS/$suite-$mode-$round.json"
					-C "$ws" "${reads[@]}" "${extra[@]}" --) ;;
			*) echo "$0: unknown mode '$mode'" >&2; exit 2 ;;
			esac
			start=$(now)
			(cd "$ws" && exec "${run[@]}" "${cmd[@]}") </dev/null >"$log" 2>&1
			end=$(now)
			total[$mode]=$(echo "${total[$mode]:-0} + $end - $start" | bc)
			result[$mode,$round]=$(counts "$suite" "$log")
		done
	done
	for mode in "${modes[@]}"; do
		secs=$(echo "scale=1; ${total[$mode]} / $rounds" | bc)
		ratio=-
		[ -n "${total[plain]:-}" ] && ratio=$(printf "%.2f" "$(echo "${total[$mode]} / ${total[plain]}" | bc -l)")
		for ((round = 1; round <= rounds; round++)); do
			read -r p f s <<<"${result[$mode,$round]}"
			mark=
			if [ "$mode" != plain ] && [ -n "${result[plain,$round]:-}" ] &&
				[ "${result[$mode,$round]}" != "${result[plain,$round]}" ]; then
				mark="  differs from plain"
				status=1
			fi
			[ "$p" = - ] && { mark="  no counts: see $LOGS/$suite-$mode-$round.log"; status=1; }
			printf '%-8s %-11s %6s %6s %6s %9s %7s%s\n' "$suite" "$mode" "$p" "$f" "$s" "$secs" "$ratio" "$mark"
		done
	done
	unset total result
done
exit $status
