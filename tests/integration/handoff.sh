# Trust hand-offs: files in the workspace that make something run later,
# outside the jail. The command cannot leave a change in them: the
# namespace jail binds those that exist read-only, and the guard undoes
# the rest once every process of the run is gone, moving the new content
# to the quarantine, losing nothing and naming each change.
. tests/lib.sh

new_places
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
git -C "$W" init -q
echo hello >"$W/file.txt"
git -C "$W" add file.txt
git -C "$W" commit -q -m first
config_sum=$(sha256sum <"$W/.git/config")
QUAR="$HOME/.local/state/stockade/quarantine"

in_jail() {
	jail --net off -C "$W" "$@"
}

# The command works as it would: git commit in the jail.
echo more >>"$W/file.txt"
out=$(in_jail --report "$T/commit.json" -- git commit -q -a -m second 2>&1)
st=$?
[ $st -eq 0 ] && pass "git commit works in the jail" || { fail "git commit works in the jail (status $st)"; diag "$out"; }
[ "$(git -C "$W" log --format=%s -1)" = second ] && pass "and the commit is there afterwards" || fail "and the commit is there afterwards"
echo "new file" >"$W/created.txt"
expect_probe "new files can be made in the workspace root" ok -- in_jail -- "$PROBE" write "$W/another.txt"

# A hook planted in .git/hooks does not survive the run.
hook_expect="ok"
[ "$TEST_BACKEND" = namespaces ] && hook_expect="errno EROFS"
expect_probe "THREATS 25: writing .git/hooks/pre-commit" "$hook_expect" -- in_jail --report "$T/hook.json" -- "$PROBE" write "$W/.git/hooks/pre-commit"
[ ! -e "$W/.git/hooks/pre-commit" ] && pass "THREATS 25: no pre-commit hook is left" || fail "THREATS 25: no pre-commit hook is left"
if [ "$TEST_BACKEND" = landlock ]; then
	case $PROBE_OUTPUT in *"undid a change to trust hand-off '.git/hooks/pre-commit' (created)"*) pass "the change is named on stderr" ;;
	*) fail "the change is named on stderr"; diag "$PROBE_OUTPUT" ;; esac
	q=$(find "$QUAR" -path '*/.git/hooks/pre-commit' -type f 2>/dev/null | head -n 1)
	[ -n "$q" ] && [ "$(cat "$q")" = probe ] && pass "the hook is in the quarantine, content intact" ||
		fail "the hook is in the quarantine, content intact"
	grep -q '"kind": "handoff", "what": ".git/hooks/pre-commit"' "$T/hook.json" && pass "the report names it" ||
		{ fail "the report names it"; diag "$(cat "$T/hook.json")"; }
fi

# .git/config: fsmonitor, hooksPath, sshCommand all live there.
cfg_expect="ok"
[ "$TEST_BACKEND" = namespaces ] && cfg_expect="errno EROFS"
expect_probe "THREATS 25: changing .git/config" "$cfg_expect" -- in_jail -- "$PROBE" append "$W/.git/config"
[ "$(sha256sum <"$W/.git/config")" = "$config_sum" ] && pass "THREATS 25: .git/config is as it was" || fail "THREATS 25: .git/config is as it was"
out=$(in_jail -- git config core.fsmonitor 'touch /tmp/pwned' 2>&1)
[ "$(git -C "$W" config --get core.fsmonitor)" = "" ] && pass "THREATS 25: git config core.fsmonitor does not stick" ||
	{ fail "THREATS 25: git config core.fsmonitor does not stick"; diag "$out"; }

# Agent and editor settings, existing or not, and a planted symlink.
mkdir -p "$T/outside"
echo "outside" >"$T/outside/file"
out=$(in_jail -- sh -c "mkdir -p .claude && echo '{\"hooks\":1}' >.claude/settings.json && ln -s '$T/outside' .vscode && echo 'eval evil' >.envrc" 2>&1)
for f in .claude/settings.json .vscode .envrc; do
	[ ! -e "$W/$f" ] && [ ! -L "$W/$f" ] && pass "THREATS 29: $f made in the jail is gone" || fail "THREATS 29: $f made in the jail is gone"
done
[ "$(cat "$T/outside/file")" = outside ] && pass "the symlink's target outside is untouched" || fail "the symlink's target outside is untouched"
find "$QUAR" -path '*/.claude/settings.json' | grep -q . && pass ".claude/settings.json is in the quarantine" ||
	fail ".claude/settings.json is in the quarantine"

# A nested repository made during the run: its hooks do not survive.
out=$(in_jail -- sh -c 'git init -q sub && echo "#!/bin/sh" >sub/.git/hooks/pre-commit && chmod +x sub/.git/hooks/pre-commit' 2>&1)
[ ! -e "$W/sub/.git/hooks/pre-commit" ] && pass "THREATS 27: a nested repository's new hook is gone" || { fail "THREATS 27: a nested repository's new hook is gone"; diag "$out"; }
[ -d "$W/sub/.git" ] && pass "the nested repository itself stays" || fail "the nested repository itself stays"

# An existing file changed gets its content back.
echo "export SAFE=1" >"$W/.envrc"
envrc_sum=$(sha256sum <"$W/.envrc")
envrc_expect=ok
[ "$TEST_BACKEND" = namespaces ] && envrc_expect="errno EROFS"
expect_probe "THREATS 29: changing an existing .envrc" "$envrc_expect" -- in_jail -- "$PROBE" write "$W/.envrc"
[ "$(sha256sum <"$W/.envrc")" = "$envrc_sum" ] && pass "THREATS 29: .envrc has its content back" || fail "THREATS 29: .envrc has its content back"

# mv .git away and make a new one with a hook (threat 28).
out=$(in_jail -- sh -c 'mv .git .git.bak; mkdir -p .git/hooks && echo evil >.git/hooks/post-checkout' 2>&1)
[ ! -e "$W/.git/hooks/post-checkout" ] && pass "THREATS 28: a hook in a replaced .git is gone" || { fail "THREATS 28: a hook in a replaced .git is gone"; diag "$out"; }
[ -d "$W/.git.bak" ] || [ -f "$W/.git/HEAD" ] && pass "nothing of the repository is lost" || fail "nothing of the repository is lost"

# The guard's own state damaged: a run that began and never ended (its
# mark is set), and its baseline torn. stockade refuses (125), and says
# which file is damaged, not "Bad message" about the workspace.
manifest=$(find "$HOME/.local/state/stockade/guard" -name manifest 2>/dev/null | head -n 1)
lock="$(dirname "${manifest:-/nonexistent/x}")/lock"
if [ -f "$manifest" ] && [ -f "$lock" ]; then
	cp "$manifest" "$T/manifest.good"
	cp "$lock" "$T/lock.good"
	printf 1 | dd of="$lock" bs=1 count=1 conv=notrunc status=none
	truncate -s 40 "$manifest"
	out=$(in_jail -- "$PROBE" write "$W/after-damage" 2>&1)
	st=$?
	if [ $st -eq 125 ] && ! printf '%s\n' "$out" | grep -q '^probe: started' &&
		printf '%s\n' "$out" | grep -q "the guard's baseline '$manifest' is damaged" &&
		printf '%s\n' "$out" | grep -q '^hint: '; then
		pass "a damaged baseline: refused (125), the damaged file named, with a hint"
	else
		fail "a damaged baseline: refused (125), the damaged file named, with a hint (status $st)"
		diag "$out"
	fi
	cp "$T/manifest.good" "$manifest"
	cp "$T/lock.good" "$lock"
else
	fail "the guard's state of this workspace is there to damage"
fi

plan_done
