# No system call of the run acts on a process outside it: the calls that
# take a pid, a process group or a user (limits, priority, scheduler,
# affinity, I/O priority, pidfds) work on the run's own processes and are
# refused for any other, stockade itself included; and the guard still
# undoes a planted hand-off when stockade's own limits were lowered.
. tests/lib.sh

new_places
in_jail() {
	jail -q --net off -C "$W" "$@"
}

# A process of the user's outside the run, and what to read of it.
sleep 300 &
outside=$!
at_exit kill "$outside"
nofile() { awk '/^Max open files/ { print $4 }' "/proc/$1/limits"; }
nice_of() { awk '{ print $19 }' "/proc/$1/stat"; }
nofile_before=$(nofile "$outside")
nice_before=$(nice_of "$outside")

for call in prlimit setpriority affinity ioprio scheduler pidfd; do
	expect_probe "THREATS 67: $call on a process outside the run is refused" "errno ESRCH" -- \
		in_jail -- "$PROBE" on-process "$call" "$outside"
	# stockade itself: the shell's $$ is stockade's pid once it execs.
	expect_probe "THREATS 68: $call on stockade itself is refused" "errno ESRCH" -- \
		sh -c 'exec "$@" on-process "$0" "$$"' "$call" "${JAIL[@]}" -q --net off -C "$W" -- "$PROBE"
	expect_probe "$call on the command's own pid works" ok -- in_jail -- "$PROBE" on-process "$call" self
	expect_probe "$call on a child of the command works" ok -- in_jail -- "$PROBE" on-process "$call" child
done
[ "$(nofile "$outside")" = "$nofile_before" ] && pass "THREATS 67: the outside process's RLIMIT_NOFILE is unchanged" ||
	fail "THREATS 67: the outside process's RLIMIT_NOFILE is unchanged (now $(nofile "$outside"), was $nofile_before)"
[ "$(nice_of "$outside")" = "$nice_before" ] && pass "THREATS 67: the outside process's niceness is unchanged" ||
	fail "THREATS 67: the outside process's niceness is unchanged"
# The command's parent: stockade on the landlock backend, the jail's own
# init (a process of the run) in the namespace jail.
if [ "$TEST_BACKEND" = landlock ]; then
	expect_probe "THREATS 68: prlimit on the command's parent (stockade) is refused" "errno ESRCH" -- \
		in_jail -- "$PROBE" on-process prlimit parent
fi
# The process group and the user: the command's own group is the run's;
# the outside process's is not; every process of the user is not told
# apart from the run's on the landlock backend.
pgrp=$(ps -o pgid= "$outside" | tr -d ' ')
expect_probe "setpriority on the command's own process group works" ok -- \
	in_jail -- "$PROBE" on-process setpriority-pgrp 0
expect_probe "THREATS 67: setpriority on the outside process's group is refused" \
	"errno $([ "$TEST_BACKEND" = namespaces ] && echo ESRCH || echo EPERM)" -- \
	in_jail -- "$PROBE" on-process setpriority-pgrp "$pgrp"
if [ "$TEST_BACKEND" = namespaces ]; then
	expect_probe "THREATS 67: setpriority on every process of the user reaches only the jail's" ok -- \
		in_jail -- "$PROBE" on-process setpriority-user 0
else
	expect_probe "THREATS 67: setpriority on every process of the user is refused" "errno EPERM" -- \
		in_jail -- "$PROBE" on-process setpriority-user 0
fi
[ "$(nice_of "$outside")" = "$nice_before" ] && pass "and the outside process's niceness is still unchanged" ||
	fail "and the outside process's niceness is still unchanged"
# The refusal is in the report.
if [ "$TEST_BACKEND" = landlock ]; then
	in_jail --report "$T/report.json" -- "$PROBE" on-process prlimit "$outside" >/dev/null 2>&1
	grep -q "\"prlimit64 on pid $outside\"" "$T/report.json" && pass "the report names the refused call and its target" ||
		{ fail "the report names the refused call and its target"; diag "$(cat "$T/report.json")"; }
fi

# The controls: outside the jail, the same probe works on the same process.
for call in prlimit setpriority affinity ioprio scheduler pidfd; do
	expect_control "THREATS 67 control: outside, $call on another process of the user works" -- "$PROBE" on-process "$call" "$outside"
done
[ "$(nofile "$outside")" = 64 ] && pass "THREATS 67 control: outside, the other process's RLIMIT_NOFILE did change" ||
	fail "outside: the other process's RLIMIT_NOFILE did change"
expect_control "outside: setpriority on the user's every process works" -- "$PROBE" on-process setpriority-user 0

# stockade's own limits lowered during the run (as a run could before
# stockade refused it): the guard raises them back before it undoes, and
# where it cannot, the exit status says so (122). The run plants a new
# hand-off, which the guard sets aside on either backend.
export GIT_CONFIG_NOSYSTEM=1
git -C "$W" init -q
mkdir -p "$T/marks"
# (It ends once the test has set the limit: the file "limited".)
plant='mkdir -p .vscode && echo "{\"tasks\": []}" >.vscode/tasks.json && touch "$0" && i=0 && while [ ! -e "$0.limited" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done'
for lim in 8: 8:8; do
	rm -f "$T/marks/planted" "$T/marks/planted.limited"
	"${JAIL[@]}" -q --net off -C "$W" --write "$T/marks" -- sh -c "$plant" "$T/marks/planted" >"$T/low.out" 2>&1 &
	jpid=$!
	wait_until test -e "$T/marks/planted"
	[ -e "$T/marks/planted" ] && pass "THREATS 68: RLIMIT_NOFILE $lim: the run planted a hand-off" || fail "THREATS 68: RLIMIT_NOFILE $lim: the run planted a hand-off"
	prlimit --pid "$jpid" --nofile="$lim"
	touch "$T/marks/planted.limited"
	wait "$jpid"
	st=$?
	if [ -e "$W/.vscode/tasks.json" ]; then
		fail "THREATS 68: RLIMIT_NOFILE $lim: the planted hand-off is gone"
		diag "$(cat "$T/low.out")"
	else
		pass "THREATS 68: RLIMIT_NOFILE $lim: the planted hand-off is gone"
	fi
	if [ "$lim" = 8: ]; then
		[ $st -eq 0 ] && pass "a lowered soft limit is raised back: the guard undoes all, the command's status stands" ||
			{ fail "a lowered soft limit is raised back (status $st)"; diag "$(cat "$T/low.out")"; }
	else
		[ $st -eq 122 ] && pass "THREATS 68: a lowered hard limit fails closed: 122" || fail "THREATS 68: a lowered hard limit fails closed: 122 (got $st)"
		grep -q "RLIMIT_NOFILE was lowered" "$T/low.out" && pass "and says which limit" || fail "and says which limit"
	fi
	rm -rf "$W/.vscode" "$W"/.vscode.stockade-*
done

plan_done
