# stockade itself killed while the command runs (an agent's timeout, a CI
# cancel, the OOM killer): its keeper ends the run whole. Every process
# of the run goes, what it planted in the trust hand-offs is undone, its
# places and the supervisor's /tmp names are removed, and the report says
# how the run ended, within the bound stockade.1 states (KEEPER_BOUND_MS).
. tests/lib.sh

new_places
M="$T/marks"
mkdir -p "$M"
# The run directories go under a TMPDIR of the test's own, so that what
# the run left is told apart from other runs on this machine.
export TMPDIR="$T/tmpbase"
mkdir -p "$TMPDIR"
BASE="$TMPDIR/stockade-$(id -u)"
KEEPER_BOUND_MS=2000
NONCE=$(nonce_new)
MARK="probe-$NONCE"
EVIL="$T/evil"
printf '#!/bin/sh\ntouch "%s/hook-ran-$1"\n' "$M" >"$EVIL"
chmod 755 "$EVIL"

workspace() {
	rm -rf "$W"
	mkdir -p "$W"
	git -C "$W" init -q
	git -C "$W" config user.email t@example.invalid
	git -C "$W" config user.name t
	echo hello >"$W/file.txt"
	git -C "$W" add file.txt
	git -C "$W" commit -q -m first
	ln -s "$PROBE" "$W/$MARK"
}

# What the command does before it is killed: plants a hook where it may
# (the landlock backend; the namespace jail binds .git/hooks read-only),
# an .envrc and a .vscode task on both, makes a name in /tmp (the
# landlock backend's supervisor makes it in the host's), leaves an orphan
# in a session of its own and a child, then waits.
PLANT='
	printf "#!/bin/sh\ntouch \"%s/hook-ran-\$1\"\n" "$1" >.git/hooks/pre-commit 2>/dev/null &&
		chmod +x .git/hooks/pre-commit && echo hook >"$1/planted-hook"
	echo "echo pwned" >.envrc
	mkdir -p .vscode && echo "{\"tasks\": []}" >.vscode/tasks.json
	mktemp /tmp/keeper-test.XXXXXX >"$1/tmpname"
	echo "$HOME" >"$1/home"
	"$2" orphan "$1/orphan.pid" 300
	touch "$1/started"
	exec "$2" spawn-wait 300
'

# run_and_kill HOW: starts a run in the background, waits until the
# command says it started, kills stockade (HOW: pid, its process group as
# coreutils timeout does, or timeout itself), and sets KILLED_MS to the
# time until everything the keeper owes was done (or the bound passed).
run_and_kill() {
	local how=$1 jpid t0 t1
	rm -f "$M"/*
	workspace
	case $how in
	pid)
		"${JAIL[@]}" -q --write "$M" --read "$(dirname "$PROBE")" --report "$T/report.json" -C "$W" -- sh -c "$PLANT" "$EVIL" "$M" "$W/$MARK" \
			>"$T/run.out" 2>"$T/run.err" &
		jpid=$!
		;;
	group)
		# stockade leading a process group of its own, as a job does
		setsid "${JAIL[@]}" -q --write "$M" --read "$(dirname "$PROBE")" --report "$T/report.json" -C "$W" -- sh -c "$PLANT" "$EVIL" "$M" "$W/$MARK" \
			>"$T/run.out" 2>"$T/run.err" &
		jpid=$!
		;;
	esac
	wait_until test -e "$M/started"
	[ -e "$M/started" ] && pass "$TEST_BACKEND, killed by $how: the jailed command ran" ||
		{ fail "$TEST_BACKEND, killed by $how: the jailed command ran"; diag "$(cat "$T/run.err")"; }
	# What the keeper must undo is there before the kill: the attack
	# was made.
	[ -e "$W/.envrc" ] && [ -e "$W/.vscode/tasks.json" ] && [ "$(pgrep -f -- "$MARK" | wc -l)" -ge 3 ] &&
		pass "THREATS 76 control: before the kill, the plants are there and the run's three processes live" ||
		fail "THREATS 76 control: before the kill, the plants are there and the run's three processes live"
	RUN_HOME=$(cat "$M/home" 2>/dev/null)
	TMPNAME=$(cat "$M/tmpname" 2>/dev/null)
	t0=$(date +%s%N)
	case $how in
	pid) kill -KILL "$jpid" ;;
	group) kill -KILL -- "-$jpid" ;;
	esac
	wait "$jpid" 2>/dev/null
	while :; do
		t1=$(date +%s%N)
		KILLED_MS=$(((t1 - t0) / 1000000))
		[ "$KILLED_MS" -gt "$KEEPER_BOUND_MS" ] && break
		gone "$MARK" && [ ! -e "$W/.envrc" ] && [ ! -e "$W/.vscode/tasks.json" ] &&
			[ ! -e "$W/.git/hooks/pre-commit" ] && ! ls "$BASE" 2>/dev/null | grep -q '^run-' &&
			{ [ -z "$TMPNAME" ] || [ "$TEST_BACKEND" = namespaces ] || [ ! -e "$TMPNAME" ]; } &&
			grep -q '"by": "keeper"' "$T/report.json" 2>/dev/null && break
		sleep 0.01
	done
}

check_whole() {
	local how=$1 what="$TEST_BACKEND, stockade killed by $how"
	if gone "$MARK"; then
		pass "THREATS 76: $what: no process of the run is left (the command, its child, its orphan)"
	else
		fail "THREATS 76: $what: no process of the run is left"
		diag "$(ps -o pid,ppid,pgid,sid,args -p "$(pgrep -d, -f -- "$MARK")")"
		pkill -KILL -f -- "$MARK"
	fi
	[ ! -e "$W/.envrc" ] && [ ! -e "$W/.vscode/tasks.json" ] &&
		pass "THREATS 76: $what: the planted .envrc and .vscode/tasks.json are set aside" ||
		fail "THREATS 76: $what: the planted .envrc and .vscode/tasks.json are set aside"
	# The namespace jail binds .git/hooks read-only: there is no hook
	# to undo.
	if [ "$TEST_BACKEND" = landlock ] || [ -e "$M/planted-hook" ]; then
		[ -e "$M/planted-hook" ] && [ ! -e "$W/.git/hooks/pre-commit" ] &&
			pass "THREATS 76: $what: the planted hook is set aside" ||
			fail "THREATS 76: $what: the hook was planted, and is set aside"
	fi
	# git commit outside runs no hook of the run's.
	git -C "$W" commit -q --allow-empty -m after >/dev/null 2>&1
	[ ! -e "$M/hook-ran-" ] && pass "THREATS 76: $what: a git commit outside runs nothing the run planted" ||
		fail "THREATS 76: $what: a git commit outside runs nothing the run planted"
	if ls "$BASE" 2>/dev/null | grep -q '^run-'; then
		fail "THREATS 76: $what: the run's places are removed"
		diag "$(ls -la "$BASE")"
	else
		pass "THREATS 76: $what: the run's places are removed ($([ "$TEST_BACKEND" = landlock ] && echo "home $RUN_HOME" || echo "the root's mount point"))"
	fi
	if [ "$TEST_BACKEND" = landlock ]; then
		[ -n "$TMPNAME" ] && [ ! -e "$TMPNAME" ] &&
			pass "THREATS 76: $what: the name the supervisor made in /tmp is removed" ||
			fail "THREATS 76: $what: the name the supervisor made in /tmp ('$TMPNAME') is removed"
	fi
	if python3 - "$T/report.json" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
assert r["stockade"]["ended"]["by"] == "keeper", r["stockade"]["ended"]
assert "stockade died" in r["stockade"]["ended"]["why"]
assert r["exit"] == {"signal": "SIGKILL"}, r["exit"]
assert r["supervisor"]["served_whole_run"] is False
assert any("undid a change to trust hand-off '.envrc'" in s for s in r["stockade"]["said"]), r["stockade"]["said"]
PY
		pass "$what: the report says the keeper ended the run, and what it undid"
	else
		fail "$what: the report says the keeper ended the run"
		diag "$(cat "$T/report.json" 2>&1)"
	fi
	grep -q "stockade died during the run: its keeper ends it" "$T/run.err" &&
		pass "$what: stderr says the keeper ended the run" ||
		{ fail "$what: stderr says the keeper ended the run"; diag "$(cat "$T/run.err")"; }
	[ "$KILLED_MS" -le "$KEEPER_BOUND_MS" ] &&
		pass "$what: all of it within the bound stockade.1 states ($KILLED_MS ms <= $KEEPER_BOUND_MS ms)" ||
		fail "$what: all of it within the bound stockade.1 states ($KILLED_MS ms > $KEEPER_BOUND_MS ms)"
	diag "killed by $how: the keeper's end took $KILLED_MS ms"
}

# Control: outside any jail, a planted hook runs at the next commit.
workspace
cp "$EVIL" "$W/.git/hooks/pre-commit"
git -C "$W" commit -q --allow-empty -m control >/dev/null 2>&1
[ -e "$M/hook-ran-" ] && pass "THREATS 76 control: outside, a planted pre-commit hook runs at git commit" ||
	fail "THREATS 76 control: outside, a planted pre-commit hook runs at git commit"
rm -f "$M/hook-ran-"

for how in pid group; do
	run_and_kill "$how"
	check_whole "$how"
done

# Killed at any moment of its start-up (before the command runs, or as
# it starts): the same; no keeper, and no command's process waiting for a
# go that will not come, is left. 24 runs, killed from 0 to 40 ms after
# they began (their places in a base of their own: one killed before
# its keeper began leaves its run directory to the next run's sweep).
workspace
mkdir -p "$T/startup-base"
for i in $(seq 24); do
	TMPDIR="$T/startup-base" "${JAIL[@]}" -q -C "$W" -- "$W/$MARK" spawn-wait 300 >/dev/null 2>&1 &
	jpid=$!
	sleep "0.0$((i % 4))$((RANDOM % 10))"
	kill -KILL "$jpid" 2>/dev/null
	wait "$jpid" 2>/dev/null
done
gone_in=-1
for t in $(seq 0 50 "$KEEPER_BOUND_MS"); do
	pgrep -f "$MARK" >/dev/null || { gone_in=$t; break; }
	sleep 0.05
done
[ "$gone_in" -ge 0 ] && pass "THREATS 76: killed during its start-up, 24 times: no keeper and no process of those runs is left (within ${gone_in} ms)" ||
	{ fail "THREATS 76: killed during its start-up: no keeper and no process of those runs is left"; diag "$(pgrep -af "$MARK")"; pkill -KILL -f "$MARK"; }
# What they left in that base goes with the next run there, of either
# backend; the run's own goes with it.
left=$(ls "$T/startup-base/stockade-$(id -u)" 2>/dev/null | grep -c '^run-')
TMPDIR="$T/startup-base" "${JAIL[@]}" -q -C "$W" -- true >/dev/null 2>&1
after=$(ls "$T/startup-base/stockade-$(id -u)" 2>/dev/null | grep -c '^run-')
[ "$after" -eq 0 ] && pass "THREATS 76: the next run removes what runs killed during their start-up left in the base ($left there before it)" ||
	{ fail "THREATS 76: the next run removes what runs killed during their start-up left ($left before, $after after)"; diag "$(ls -la "$T/startup-base/stockade-$(id -u)")"; }

# The keeper is no process of the run: the command cannot signal it, nor
# lower its limits (it would then fail to end the run).
if [ "$TEST_BACKEND" = landlock ]; then
	workspace
	expect_probe "THREATS 76: the keeper (the command's parent) cannot be signalled from the jail" "errno EPERM" -- \
		jail -q --read "$(dirname "$PROBE")" -C "$W" -- sh -c 'exec "$0" kill "$PPID" KILL' "$PROBE"
	expect_probe "THREATS 68, 76: prlimit on the keeper is refused" "errno ESRCH" -- \
		jail -q -C "$W" -- "$PROBE" on-process prlimit parent
fi

# A normal run leaves no keeper behind, and nothing in the base.
workspace
jail -q -C "$W" -- "$W/$MARK" cwd >/dev/null 2>&1
sleep 0.1
! pgrep -x stockade-keeper -P $$ >/dev/null && ! ls "$BASE" 2>/dev/null | grep -q '^run-' &&
	pass "$TEST_BACKEND: a run that ends as usual leaves no keeper and no place" ||
	fail "$TEST_BACKEND: a run that ends as usual leaves no keeper and no place"
plan_done
