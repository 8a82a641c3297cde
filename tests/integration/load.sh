# Load: 16 concurrent runs in one workspace, each planting trust hand-offs
# (a git setting that runs a program, a hook, an editor's settings file),
# 512 runs a backend (1,024 in all, bounded by TEST_TIMEOUT). Afterwards,
# outside: every plant undone or in the quarantine, the repository as it
# was, nothing planted runs at the next git command, and no run refused
# for a reason other than its own.
. tests/lib.sh

new_places
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
EVIL="$T/evil.sh"
printf '#!/bin/sh\ntouch "%s/pwned-$1"\nexit 1\n' "$T" >"$EVIL"
chmod +x "$EVIL"
git -C "$W" init -q
echo hello >"$W/file.txt"
git -C "$W" add file.txt
git -C "$W" commit -q -m first
git -C "$W" remote add origin https://example.invalid/repo.git
cfg_before=$(cat "$W/.git/config")
hooks_before=$(ls "$W/.git/hooks" | sort)

# control: the same plant outside makes git run it
ctl="$T/ctl"
git init -q "$ctl"
git -C "$ctl" config core.fsmonitor "$EVIL control"
git -C "$ctl" status >/dev/null 2>&1
[ -e "$T/pwned-control" ] && pass "control: a planted core.fsmonitor runs at git status outside" ||
	fail "control: a planted core.fsmonitor runs at git status outside"
rm -f "$T/pwned-control"

WORKERS=16 RUNS=32
worker() {
	local n=$1 i st bad=0
	for i in $(seq "$RUNS"); do
		jail -q --net off -C "$W" -- sh -c '
			git config core.fsmonitor "$1 fsmonitor" 2>/dev/null
			printf "#!/bin/sh\n%s hook\n" "$1" >.git/hooks/post-checkout 2>/dev/null &&
				chmod +x .git/hooks/post-checkout
			mkdir -p .vscode && printf "{\"task\": \"%s\"}\n" "$2" >".vscode/tasks-$2.json"
			echo "$2" >>"run-$2.log"
			exit 0' sh "$EVIL" "$n-$i" >/dev/null 2>"$T/err-$n-$i"
		st=$?
		[ $st -eq 0 ] || { bad=$((bad + 1)); echo "$n-$i $st" >>"$T/bad"; }
	done
	return 0
}
start=$(date +%s)
for n in $(seq "$WORKERS"); do worker "$n" & done
wait
took=$(($(date +%s) - start))
diag "$((WORKERS * RUNS)) runs, $WORKERS at a time, in ${took} s"

if [ ! -s "$T/bad" ]; then
	pass "all $((WORKERS * RUNS)) concurrent runs ended with their command's 0"
else
	fail "all concurrent runs ended with their command's 0 ($(wc -l <"$T/bad") did not)"
	diag "$(head -5 "$T/bad")"
	first=$(head -1 "$T/bad" | cut -d' ' -f1)
	diag "$(cat "$T/err-$first")"
fi
n_logs=$(ls "$W"/run-*.log 2>/dev/null | wc -l)
[ "$n_logs" -eq $((WORKERS * RUNS)) ] && pass "every run ran its command (its own file kept in the workspace)" ||
	fail "every run ran its command ($n_logs of $((WORKERS * RUNS)))"
[ "$(cat "$W/.git/config")" = "$cfg_before" ] && pass "the git config is as it was before the runs" ||
	{ fail "the git config is as it was before the runs"; diag "$(diff <(echo "$cfg_before") "$W/.git/config")"; }
[ "$(ls "$W/.git/hooks" | sort)" = "$hooks_before" ] && pass "no hook is left" ||
	{ fail "no hook is left"; diag "$(ls "$W/.git/hooks")"; }
[ -z "$(ls "$W/.vscode" 2>/dev/null)" ] && pass "no editor task is left" || { fail "no editor task is left"; diag "$(ls "$W/.vscode" | head)"; }
git -C "$W" status >/dev/null 2>&1
git -C "$W" checkout -q -b after 2>/dev/null
[ ! -e "$T/pwned-fsmonitor" ] && [ ! -e "$T/pwned-hook" ] && pass "nothing planted runs at git status and checkout outside" ||
	fail "nothing planted runs at git status and checkout outside"
[ "$(git -C "$W" remote get-url origin)" = https://example.invalid/repo.git ] && pass "the user's remote is kept" ||
	fail "the user's remote is kept"
# the baseline intact: a run that changes nothing finds nothing to undo
out=$(jail --net off -C "$W" -- true 2>&1)
st=$?
if [ $st -eq 0 ] && ! printf '%s' "$out" | grep -q "undid\|cannot"; then
	pass "the baseline is intact: the next run finds nothing to undo"
else
	fail "the baseline is intact (status $st)"
	diag "$out"
fi
plan_done
