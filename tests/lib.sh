# Shared functions for tests/integration/*.sh; sourced, never run.
#
# Each integration script prints TAP on stdout:
#
#     . tests/lib.sh
#     expect_control "probe reads outside" -- "$PROBE" read "$f"
#     expect_probe "jail hides ~/.ssh" "errno ENOENT" -- "$STOCKADE" -- "$PROBE" read ~/.ssh/id_rsa
#     plan_done
#
# tests/run-tests.sh sets STOCKADE, BUILD, PROBE, SIMKERNEL, PTYRUN and
# NETPEER (absolute paths) and runs the script with bash from the
# repository root. STOCKADE_MUST_WORK=1 turns every skip into a failure.

: "${BUILD:=$PWD/build}"
: "${STOCKADE:=$BUILD/stockade}"
: "${PROBE:=$BUILD/tests/probe}"
: "${SIMKERNEL:=$BUILD/tests/simkernel}"
: "${PTYRUN:=$BUILD/tests/ptyrun}"
: "${NETPEER:=$BUILD/tests/netpeer}"
export BUILD STOCKADE PROBE SIMKERNEL PTYRUN NETPEER

_tap_count=0
_tap_failed=0

# ------------------------------------------------------------------- TAP

pass() {
	_tap_count=$((_tap_count + 1))
	echo "ok $_tap_count - $*"
}

fail() {
	_tap_count=$((_tap_count + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_count - $*"
}

# A skipped test is a test that did not run; where the suite must prove
# something (STOCKADE_MUST_WORK=1 in CI), that is a failure.
skip() {
	if [ "${STOCKADE_MUST_WORK:-0}" = 1 ]; then
		fail "$* (skipped, and STOCKADE_MUST_WORK=1)"
	else
		_tap_count=$((_tap_count + 1))
		echo "ok $_tap_count # SKIP $*"
	fi
}

# Skip the whole file: before any test ran, with exit status 77.
skip_all() {
	if [ "${STOCKADE_MUST_WORK:-0}" = 1 ]; then
		fail "$* (skipped, and STOCKADE_MUST_WORK=1)"
		plan_done
	fi
	echo "1..0 # SKIP $*"
	exit 77
}

# Every line of the message as a TAP comment.
diag() {
	printf '%s\n' "$*" | sed 's/^/# /'
}

# The plan, at the end; the script's exit status says whether all passed.
plan_done() {
	echo "1..$_tap_count"
	[ "$_tap_failed" -eq 0 ] && exit 0
	exit 1
}

# -------------------------------------------------------------- cleanup

# All temporary directories live under one root per script, so that a
# directory made inside $(...) (a subshell, whose variables are lost) is
# still removed at exit.
_lib_tmp_root=$(mktemp -d "${TMPDIR:-/tmp}/stockade-test.XXXXXX") || {
	echo "Bail out! cannot make a temporary directory"
	exit 1
}
_lib_at_exit=()

# at_exit CMD...: run CMD when the script exits (kill a listener, ...).
at_exit() {
	_lib_at_exit+=("$(printf '%q ' "$@")")
}

_lib_cleanup() {
	local status=$? cmd
	for cmd in "${_lib_at_exit[@]}"; do
		eval "$cmd" >/dev/null 2>&1 || true
	done
	# A test may have left read-only directories behind (that is what many
	# of them check); make them writable so that they can go.
	chmod -R u+w "$_lib_tmp_root" 2>/dev/null
	rm -rf "$_lib_tmp_root"
	return "$status"
}
trap _lib_cleanup EXIT

# A fresh private (0700) directory, removed at exit.
tmpdir_new() {
	mktemp -d "$_lib_tmp_root/t.XXXXXX"
}

# new_places: T, a fresh directory of the test file's own; HOME in it, made
# and empty; W, the workspace beside it.
new_places() {
	T=$(tmpdir_new)
	export HOME="$T/home"
	W="$T/ws"
	mkdir -p "$HOME" "$W"
}

# ------------------------------------------------------------------ ids

is_root() {
	[ "$(id -u)" -eq 0 ]
}

# Skip the rest of the file unless running as root. (Under
# STOCKADE_MUST_WORK=1 that is a failure: use is_root to branch instead in a
# file that also runs unprivileged.)
need_root() {
	is_root || skip_all "needs root${1:+: $1}"
}

# --------------------------------------------------------------- canaries

# A unique string to plant in a secret and look for in every output.
nonce_new() {
	local uuid
	uuid=$(cat /proc/sys/kernel/random/uuid 2>/dev/null) || uuid="$$-$RANDOM$RANDOM-$(date +%s%N)"
	echo "stockade-canary-${uuid//-/}"
}

# assert_absent NONCE DESC FILE...: passes if NONCE is in none of the files.
assert_absent() {
	local nonce=$1 desc=$2 file found=()
	shift 2
	for file in "$@"; do
		if [ ! -e "$file" ]; then
			diag "note: '$file' does not exist"
		elif grep -a -q -F -e "$nonce" -- "$file"; then
			found+=("$file")
		fi
	done
	if [ "${#found[@]}" -eq 0 ]; then
		pass "$desc"
	else
		fail "$desc"
		diag "canary '$nonce' found in: ${found[*]}"
		for file in "${found[@]}"; do
			diag "$(grep -a -n -F -e "$nonce" -- "$file" | head -n 5)"
		done
	fi
}

# ---------------------------------------------------------------- probes

# Seconds one probe command may take, whatever it is.
: "${PROBE_TIMEOUT:=60}"

# _with_timeout SECONDS CMD...: runs CMD (a program or a shell function,
# such as jail) and kills it after SECONDS; status 124 then, as timeout(1).
_with_timeout() {
	local seconds=$1 pid watchdog status
	shift
	"$@" &
	pid=$!
	(
		sleep "$seconds"
		kill -KILL "$pid"
		touch "$_lib_tmp_root/.timeout.$pid"
	) </dev/null >/dev/null 2>&1 &
	watchdog=$!
	wait "$pid"
	status=$?
	kill "$watchdog" 2>/dev/null
	wait "$watchdog" 2>/dev/null
	if [ -e "$_lib_tmp_root/.timeout.$pid" ]; then
		rm -f "$_lib_tmp_root/.timeout.$pid"
		return 124
	fi
	return "$status"
}

# _probe_status_for EXPECT: the exit status that goes with a result line.
_probe_status_for() {
	case $1 in
	ok) echo 0 ;;
	errno\ * | leaked\ *) echo 1 ;;
	esac
}

# expect_probe DESC EXPECT -- CMD...
#
# Runs CMD (stockade running the probe, or the probe alone as the control)
# and passes only if the probe said it started AND its result line is
# exactly "probe: EXPECT" AND the exit status agrees (0 for ok, 1 for errno
# and leaked). A refusal by a jail that never ran the probe cannot pass.
#
# EXPECT is one of:
#   ok | errno NAME | leaked N     the probe's own result line
#   exit N                         started, then ended with status N
#   signal NAME                    started, then killed by NAME (status 128+N)
#
# Under ptyrun, whose own status is 0, the status is read from its
# "ptyrun: exit N" / "ptyrun: signal NAME" line instead.
#
# The captured output is left in $PROBE_OUTPUT and the status in
# $PROBE_STATUS for further checks.
expect_probe() {
	local desc=$1 expect=$2 out status result want_status line sig
	shift 2
	if [ "${1:-}" != "--" ] || [ $# -lt 2 ]; then
		fail "$desc"
		diag "expect_probe: usage: expect_probe DESC EXPECT -- CMD..."
		return 1
	fi
	shift

	out=$(_with_timeout "$PROBE_TIMEOUT" "$@" 2>&1)
	status=$?
	# shellcheck disable=SC2034 # for the calling script
	PROBE_OUTPUT=$out
	PROBE_STATUS=$status

	# The status of the command under ptyrun.
	line=$(printf '%s\n' "$out" | grep -E '^ptyrun: (exit|signal) ' | tail -n 1)
	case $line in
	"ptyrun: exit "*) status=${line#ptyrun: exit } ;;
	"ptyrun: signal "*)
		sig=$(kill -l "${line#ptyrun: signal SIG}" 2>/dev/null) && status=$((128 + sig))
		;;
	esac

	# The last result line; "probe: started" is not one.
	result=$(printf '%s\n' "$out" | grep -E '^probe: ' | grep -v -E '^probe: started( |$)' | tail -n 1)
	result=${result#probe: }

	case $expect in
	"exit "*) want_status=${expect#exit } result=$expect ;;
	"signal "*)
		sig=$(kill -l "${expect#signal }" 2>/dev/null)
		sig=${sig:-0}
		want_status=$((128 + sig)) result=$expect
		;;
	*) want_status=$(_probe_status_for "$expect") ;;
	esac

	if ! printf '%s\n' "$out" | grep -q -E '^probe: started( |$)'; then
		fail "$desc"
		diag "the probe never started (status $status); expected: $expect"
	elif [ "$result" != "$expect" ]; then
		fail "$desc"
		diag "expected 'probe: $expect', got '${result:+probe: $result}' (status $status)"
	elif [ -n "$want_status" ] && [ "$status" != "$want_status" ]; then
		fail "$desc"
		diag "result '$expect' as expected, but status $status, not $want_status"
	else
		pass "$desc"
		return 0
	fi
	[ "$PROBE_STATUS" -eq 124 ] && diag "timed out after ${PROBE_TIMEOUT}s"
	diag "command: $*"
	if [ -n "$out" ]; then
		diag "$(printf '%s\n' "$out" | sed 's/^/  | /')"
	else
		diag "  (no output)"
	fi
	return 1
}

# expect_control DESC -- CMD...: the same, and the probe must succeed (the
# positive control: outside the jail, the thing works).
expect_control() {
	local desc=$1
	shift
	expect_probe "$desc" ok "$@"
}

# fails DESC PATTERN -- CMD...: stockade refused (exit 125, nothing run),
# and its stderr matches PATTERN (an extended regular expression).
fails() {
	local desc=$1 pattern=$2 out st
	shift 3
	out=$("$@" 2>&1 >/dev/null)
	st=$?
	if [ "$st" -eq 125 ] && printf '%s\n' "$out" | grep -q -E -- "$pattern"; then
		pass "$desc"
	else
		fail "$desc (status $st)"
		diag "$out"
	fi
}

# -------------------------------------------------------------- the jail

# The backend under test; run-tests.sh runs the integration suite once
# per backend this host has (STOCKADE_BACKENDS).
: "${TEST_BACKEND:=landlock}"
export TEST_BACKEND

# jail ARGS...: the stockade under test, on the backend under test. JAIL
# is the same as an array, for programs that run it (ptyrun, simkernel).
JAIL=("$STOCKADE" --backend "$TEST_BACKEND")
jail() {
	"${JAIL[@]}" "$@"
}

# What a hidden path answers: a namespace jail has nothing there at all,
# Landlock refuses it.
hidden_errno() {
	case $TEST_BACKEND in
	namespaces) echo ENOENT ;;
	*) echo EACCES ;;
	esac
}

# What a hidden path inside a granted tree answers: Landlock refuses it;
# the namespace jail covers it with something of mode 0.
covered_errno() {
	echo EACCES
}

# What a process outside the run answers to a signal or ptrace: the
# namespace jail does not even see it.
outside_pid_errno() {
	case $TEST_BACKEND in
	namespaces) echo ESRCH ;;
	*) echo EPERM ;;
	esac
}

# True for the namespace jail, whose home, /tmp and /dev/shm are fresh
# tmpfs: writes there succeed and vanish with the run.
fresh_places() {
	[ "$TEST_BACKEND" = namespaces ]
}

# gone MARKER: no process whose command line holds MARKER is alive.
gone() {
	local pid
	for pid in $(pgrep -f -- "$1"); do
		alive "$pid" && return 1
	done
	return 0
}

# What a write outside the grants answers.
readonly_errno() {
	case $TEST_BACKEND in
	namespaces) echo EROFS ;;
	*) echo EACCES ;;
	esac
}

# canary_home DIR NONCE: a home whose every credential (and a few secrets
# stockade does not list) holds NONCE.
canary_home() {
	local home=$1 nonce=$2 f
	for f in .ssh/id_rsa .aws/credentials .azure/accessTokens.json .gnupg/private-keys-v1.d/k.key \
		.netrc .docker/config.json .kube/config .npmrc .pypirc .git-credentials \
		.password-store/mail.gpg .config/gh/hosts.yml .config/gcloud/credentials.db \
		.cargo/credentials.toml .local/share/keyrings/login.keyring .bash_history \
		.config/unlisted/token; do
		mkdir -p "$home/$(dirname "$f")"
		echo "$nonce" >"$home/$f"
	done
	echo "# the user's bashrc" >"$home/.bashrc"
	echo "notes, not a secret" >"$home/notes.txt"
	chmod 700 "$home"
}

# alive PID: the process exists and is not a zombie waiting for a reaper.
alive() {
	local state
	state=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$state" ] && [ "$state" != Z ] && [ "$state" != X ]
}

# wait_until CMD...: whether CMD (a command or a function of the test's)
# succeeds within 30 s, asked every 50 ms. For what a jail or a helper
# says once it has started: a bound is a time, never a count of tries,
# since a loaded machine can take seconds to start a jail and a Python.
wait_until() {
	local end=$((SECONDS + 30))
	until "$@"; do
		[ $SECONDS -ge $end ] && return 1
		sleep 0.05
	done
}

# netpeer_start tcp|udp ADDR PORT, or netpeer_start unix|abstract NAME:
# starts a counting listener outside the jail and sets PEER_PORT and
# PEER_COUNT (the file with its count); it is stopped at exit.
netpeer_start() {
	local out
	out=$(tmpdir_new)
	PEER_COUNT="$out/count"
	case $1 in
	unix | abstract) "$NETPEER" "$1" "$2" "$PEER_COUNT" >"$out/stdout" 2>&1 & ;;
	*) "$NETPEER" "$1" "$2" "$3" "$PEER_COUNT" >"$out/stdout" 2>&1 & ;;
	esac
	at_exit kill "$!"
	wait_until grep -q '^ready' "$out/stdout" 2>/dev/null
	PEER_PORT=$(sed -n 's/^port //p' "$out/stdout")
	# Said, so that the checks that follow do not fail for a reason
	# they cannot name.
	grep -q '^ready' "$out/stdout" 2>/dev/null || diag "netpeer $* not ready after 30 s: $(cat "$out/stdout" 2>&1)"
}

# free_port: a port of 127.0.0.1 nobody holds now (a fixed one could be
# a client's, or in TIME_WAIT after one).
free_port() {
	"$PROBE" bind-tcp 127.0.0.1 0 2>/dev/null | sed -n 's/^bound //p'
}

# peer_count: how many reached the last listener netpeer_start started.
peer_count() {
	cat "$PEER_COUNT" 2>/dev/null || echo "?"
}
