# A session's guard (stockade.1, TRUST HAND-OFFS, the guard in a
# session): what a command of the session plants in the trust hand-offs
# is undone before its status comes back; what a process it left running
# plants between commands is undone within a bound measured here (the
# probe makes the hand-off and looks every 100 us until it is gone). The
# hand-offs: a hook in the workspace's own .git/hooks (the landlock
# backend: the namespace jail binds that directory read-only), a new
# .envrc, and a hook of a repository made in the session (git init). The
# control: the same plant outside any jail stays.
# backends: namespaces landlock
. tests/lib.sh

command -v git >/dev/null || skip_all "needs git"
new_places
# the sessions' sockets: a private runtime directory of the test's own
export XDG_RUNTIME_DIR="$T/run"
mkdir -m 700 "$XDG_RUNTIME_DIR"
git -C "$W" init -q
git -C "$W" config user.email t@example.com
# the jail reaches the workspace, not the build tree
cp "$PROBE" "$W/probe"
# A bound for a plant between commands: measured at 2 to 25 ms on a
# loaded two-core machine; ten times that, for ASan and a busier one.
: "${BETWEEN_BOUND_MS:=250}"

session() {
	"$STOCKADE" session "$@"
}
in_session() {
	(cd "$W" && "$STOCKADE" session exec "$ID" -- "$@")
}

ID=$(session start --backend "$TEST_BACKEND" -C "$W" 2>"$T/start.err")
if [ -z "$ID" ]; then
	fail "a session starts"
	diag "$(cat "$T/start.err")"
	plan_done
fi
at_exit "$STOCKADE" session stop "$ID"
pass "a session starts ($ID)"

# absent PATH: nothing at PATH in the workspace
absent() {
	[ ! -e "$W/$1" ] && [ ! -L "$W/$1" ]
}

# --------------------------------------------------------- from a command

# shellcheck disable=SC2016 # the jail's shell expands it
plant='printf "#!/bin/sh\necho planted\n" >"$1" && chmod +x "$1"'
if [ "$TEST_BACKEND" = landlock ]; then
	in_session sh -c "$plant" sh .git/hooks/pre-commit 2>"$T/exec1.err"
	st=$?
	if [ "$st" -eq 0 ] && absent .git/hooks/pre-commit; then
		pass "a hook a command planted in .git/hooks is gone before its status comes back"
	else
		fail "a hook a command planted in .git/hooks is gone before its status comes back (status $st)"
		diag "$(cat "$T/exec1.err")"
	fi
	if grep -q "undid a change to trust hand-off '.git/hooks/pre-commit' (created)" "$T/exec1.err"; then
		pass "and the command's caller is told"
	else
		fail "and the command's caller is told"
		diag "$(cat "$T/exec1.err")"
	fi
fi
in_session sh -c 'echo "export EVIL=1" >.envrc' 2>"$T/exec2.err"
st=$?
if [ "$st" -eq 0 ] && absent .envrc; then
	pass "a new .envrc a command made is gone before its status comes back"
else
	fail "a new .envrc a command made is gone before its status comes back (status $st)"
	diag "$(cat "$T/exec2.err")"
fi
in_session sh -c "git init -q sub/deep && $plant" sh sub/deep/.git/hooks/post-checkout 2>"$T/exec3.err"
st=$?
if [ "$st" -eq 0 ] && [ -d "$W/sub/deep/.git/hooks" ] && absent sub/deep/.git/hooks/post-checkout; then
	pass "a hook of a repository a command made (git init) is gone before its status comes back, the repository stays"
else
	fail "a hook of a repository a command made (git init) is gone before its status comes back (status $st)"
	diag "$(cat "$T/exec3.err")"
fi
out=$(in_session sh -c 'git -C sub/deep status --short >/dev/null && echo usable' 2>&1)
if [ "$out" = usable ]; then
	pass "that repository works in the next command"
else
	fail "that repository works in the next command"
	diag "$out"
fi

# ------------------------------------------------ between commands

# between PATH [SETUP]: a process the command leaves running makes PATH
# 0.3 s after the command returned (after SETUP, a shell command); its
# probe says how long the hand-off stayed.
n=0
between() {
	local path=$1 setup=${2:-true} out us
	n=$((n + 1))
	out="$W/between.$n"
	in_session sh -c "($setup && sleep 0.3 && exec ./probe plant-until-gone '$path' 10) >'between.$n' 2>&1 &"
	for _ in $(seq 150); do
		grep -q '^probe: \(ok\|errno\)' "$out" 2>/dev/null && break
		sleep 0.1
	done
	us=$(sed -n 's/^gone after \([0-9]*\) us$/\1/p' "$out" 2>/dev/null)
	if [ -z "$us" ]; then
		fail "$path, planted between commands, is undone"
		diag "$(cat "$out" 2>/dev/null)"
		diag "$(tail -n 5 "$XDG_RUNTIME_DIR/stockade/sessions/$ID.log" 2>/dev/null)"
		return
	fi
	if [ "$us" -le $((BETWEEN_BOUND_MS * 1000)) ] && absent "$path"; then
		pass "$path, planted between commands, is undone within $BETWEEN_BOUND_MS ms ($((us / 1000)).$(((us % 1000) / 100)) ms)"
	else
		fail "$path, planted between commands, is undone within $BETWEEN_BOUND_MS ms (after $us us)"
	fi
	echo "$us" >>"$T/between.us"
}
[ "$TEST_BACKEND" = landlock ] && between .git/hooks/pre-commit
between .envrc
between sub/other/.git/hooks/pre-push "git init -q sub/other"
# the same again: the guard's baseline is the session's, kept
between .envrc
[ "$TEST_BACKEND" = landlock ] && between .git/hooks/pre-commit
if [ -s "$T/between.us" ]; then
	diag "between commands, a plant stayed $(sort -n "$T/between.us" | tr '\n' ' ')us"
fi
if grep -q "undid a change to trust hand-off '.envrc' (created)" "$XDG_RUNTIME_DIR/stockade/sessions/$ID.log"; then
	pass "what was undone between commands is in the session's log"
else
	fail "what was undone between commands is in the session's log"
fi

# the next command's status: nothing failed; what was undone since the
# last command's end is said on its stderr, as a run says it, once
last=.envrc
[ "$TEST_BACKEND" = landlock ] && last=.git/hooks/pre-commit
in_session true 2>"$T/next.err"
st=$?
if [ "$st" -eq 0 ]; then
	pass "the next command's status is its own"
else
	fail "the next command's status is its own (got $st)"
fi
if [ "$(grep -c "undid a change to trust hand-off '$last' (created)" "$T/next.err")" = 1 ]; then
	pass "what was undone between commands is said on the next exec's stderr"
else
	fail "what was undone between commands is said on the next exec's stderr"
	diag "$(cat "$T/next.err")"
fi
in_session true 2>"$T/next2.err"
if [ ! -s "$T/next2.err" ]; then
	pass "and only once: the exec after it says nothing"
else
	fail "and only once: the exec after it says nothing"
	diag "$(cat "$T/next2.err")"
fi

# ------------------------------------------------------------ controls

W2=$(tmpdir_new)
git -C "$W2" init -q
(cd "$W2" && "$PROBE" plant-until-gone .git/hooks/pre-commit 1 >"$T/control.out" 2>&1)
if grep -q '^probe: errno ETIMEDOUT' "$T/control.out" && [ -x "$W2/.git/hooks/pre-commit" ]; then
	pass "control: the same plant outside any jail stays"
else
	fail "control: the same plant outside any jail stays"
	diag "$(cat "$T/control.out")"
fi
echo "export MINE=1" >"$W2/.envrc"
if [ -f "$W2/.envrc" ]; then
	pass "control: an .envrc made outside any jail stays"
else
	fail "control: an .envrc made outside any jail stays"
fi

# a plant between commands that no exec follows: session stop says it
in_session sh -c "(sleep 0.3 && exec ./probe plant-until-gone .envrc 10) >between.stop 2>&1 &"
for _ in $(seq 150); do
	grep -q '^probe: \(ok\|errno\)' "$W/between.stop" 2>/dev/null && break
	sleep 0.1
done
session stop "$ID" >"$T/stop.out" 2>"$T/stop.err"
st=$?
if absent .envrc && absent sub/other/.git/hooks/pre-push; then
	pass "the session stopped, nothing planted is left"
else
	fail "the session stopped, nothing planted is left"
fi
if [ "$st" -eq 0 ] && [ "$(grep -c "undid a change to trust hand-off '.envrc' (created)" "$T/stop.err")" = 1 ]; then
	pass "what was undone after the last exec is said on session stop's stderr, once"
else
	fail "what was undone after the last exec is said on session stop's stderr, once (status $st)"
	diag "$(cat "$T/stop.err")"
fi
if [ ! -e "$XDG_RUNTIME_DIR/stockade/sessions/$ID.log" ]; then
	pass "the session's log goes with it: every line of it was said"
else
	fail "the session's log goes with it: every line of it was said"
fi
plan_done
