# A linked worktree as the workspace (`git worktree add ../feature`, how
# agents run tasks side by side): git works in the jail with what the
# worktree needs of the main repository, whose working tree stays
# read-only and whose git directory's hand-offs are guarded as the
# workspace's own are. Each case has its control: git outside, and the
# same run with the worktree's link broken, where git in the jail fails
# as it did before stockade reached the main repository
# ("fatal: not a git repository: .../main/.git/worktrees/feature").
. tests/lib.sh

new_places
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
QUAR="$HOME/.local/state/stockade/quarantine"
EVIL="$T/evil.sh"
printf '#!/bin/sh\ntouch "%s/pwned-$1"\nexit 1\n' "$T" >"$EVIL"
chmod +x "$EVIL"
M="$T/marks"
mkdir -p "$M"

# repo_with_worktree MAIN WORKTREE: a repository with one commit and a
# linked worktree of it on branch feature.
repo_with_worktree() {
	mkdir -p "$1"
	git -C "$1" init -q
	echo hello >"$1/file.txt"
	git -C "$1" add file.txt
	git -C "$1" commit -q -m first
	git -C "$1" worktree add -q -b feature "$2"
}

# wt_jail WORKTREE ARGS...: the jail, with that worktree as the workspace.
wt_jail() {
	local ws=$1
	shift
	(cd "$ws" && jail -q --net off --write "$M" -C "$ws" "$@")
}

# home_jail HOME WORKTREE ARGS...: the same, with another home.
home_jail() {
	local h=$1
	shift
	HOME=$h wt_jail "$@"
}

R="$T/repos"
MAIN="$R/main"
WT="$R/feature"
repo_with_worktree "$MAIN" "$WT"
# a local remote, the main repository's origin
git init -q --bare "$R/remote.git"
git -C "$MAIN" push -q "$R/remote.git" HEAD:refs/heads/upstream
git -C "$MAIN" remote add origin "$R/remote.git"

# ---------------------------------------------------------------- git works

git -C "$WT" status --short >/dev/null 2>&1 && pass "control: outside, git works in the linked worktree" ||
	fail "control: outside, git works in the linked worktree"

echo change >"$WT/new.txt"
out=$(wt_jail "$WT" --read "$R/remote.git" -- sh -c '
	set -e
	git status --short >"$0/status"
	git add new.txt
	git commit -q -m "in the jail"
	git branch side
	git branch topic
	git branch -q -d topic
	git fetch -q origin
	git log --oneline -1 origin/upstream >/dev/null
	touch "$0/started-git"' "$M" 2>&1)
st=$?
[ -e "$M/started-git" ] && [ $st -eq 0 ] &&
	pass "git status, add, commit, branch, branch -d and fetch from a local remote work in the worktree" ||
	{ fail "git status, add, commit, branch, branch -d and fetch from a local remote work in the worktree (status $st)"; diag "$out"; }
grep -q 'new.txt' "$M/status" 2>/dev/null && pass "git status in the jail sees the worktree's change" ||
	fail "git status in the jail sees the worktree's change"
[ "$(git -C "$MAIN" log -1 --format=%s feature 2>/dev/null)" = "in the jail" ] &&
	pass "the commit is in the main repository outside" || fail "the commit is in the main repository outside"
git -C "$MAIN" rev-parse -q --verify refs/heads/side >/dev/null && ! git -C "$MAIN" rev-parse -q --verify refs/heads/topic >/dev/null &&
	pass "the branch made is there, the branch deleted is gone" || fail "the branch made is there, the branch deleted is gone"
git -C "$MAIN" rev-parse -q --verify refs/remotes/origin/upstream >/dev/null &&
	pass "the fetched remote-tracking branch is there" || fail "the fetched remote-tracking branch is there"
git -C "$WT" status --short >/dev/null 2>&1 && [ -z "$(git -C "$WT" status --short)" ] &&
	pass "and git outside finds the worktree as the jail left it" || fail "and git outside finds the worktree as the jail left it"
[ ! -d "$QUAR" ] || [ -z "$(ls -A "$QUAR")" ] && pass "nothing of git's own work went to the quarantine" ||
	{ fail "nothing of git's own work went to the quarantine"; diag "$(ls -R "$QUAR")"; }

# The main working tree: readable, never written.
expect_probe "the main working tree is readable" ok -- wt_jail "$WT" -- "$PROBE" read "$MAIN/file.txt"
expect_probe "the main working tree is read-only" "errno $(readonly_errno)" -- wt_jail "$WT" -- "$PROBE" write "$MAIN/file.txt"
[ "$(cat "$MAIN/file.txt")" = hello ] && pass "and the main working tree's file is as it was" ||
	fail "and the main working tree's file is as it was"

# ----------------------------------------------------- what runs later

# A hook planted in the main repository's hooks: the namespace jail keeps
# the hooks read-only during the run; the landlock backend lets the write
# happen, and the guard undoes it after the run, sets it aside and names it.
printf '#!/bin/sh\n"%s" hook\n' "$EVIL" >"$T/hook"
out=$(wt_jail "$WT" -- sh -c 'printf "#!/bin/sh\n\"%s\" hook\n" "$1" >"$2" && chmod +x "$2" && touch "$0/planted-hook";
	touch "$0/started-hook"' "$M" "$EVIL" "$MAIN/.git/hooks/pre-commit" 2>&1)
[ -e "$M/started-hook" ] && pass "planting a hook in the main repository: the jailed command ran" ||
	fail "planting a hook in the main repository: the jailed command ran"
if [ "$TEST_BACKEND" = landlock ]; then
	[ -e "$M/planted-hook" ] && pass "landlock: the hook was written during the run" ||
		{ fail "landlock: the hook was written during the run"; diag "$out"; }
else
	[ ! -e "$M/planted-hook" ] && pass "namespaces: the main repository's hooks are read-only during the run" ||
		fail "namespaces: the main repository's hooks are read-only during the run"
fi
[ ! -e "$MAIN/.git/hooks/pre-commit" ] && pass "no hook is left in the main repository's git directory" ||
	fail "no hook is left in the main repository's git directory"
if [ "$TEST_BACKEND" = landlock ]; then
	printf '%s\n' "$out" | grep -q "undid a change to trust hand-off '$MAIN/.git/hooks/pre-commit' (created)" &&
		pass "landlock: the planted hook is undone and named" || { fail "landlock: the planted hook is undone and named"; diag "$out"; }
	grep -r -q -F "$EVIL" "$QUAR" 2>/dev/null && pass "landlock: and set aside in the quarantine" ||
		fail "landlock: and set aside in the quarantine"
fi
rm -f "$T/pwned-hook"
(cd "$MAIN" && echo more >>file.txt && git commit -q -a -m outside >/dev/null 2>&1)
[ ! -e "$T/pwned-hook" ] && pass "git commit outside, in the main repository, runs nothing the run planted" ||
	fail "git commit outside, in the main repository, runs nothing the run planted"
cp "$T/hook" "$MAIN/.git/hooks/pre-commit" && chmod +x "$MAIN/.git/hooks/pre-commit"
(cd "$MAIN" && echo more >>file.txt && git commit -q -a -m outside >/dev/null 2>&1)
[ -e "$T/pwned-hook" ] && pass "control: outside, git runs a hook planted there" || fail "control: outside, git runs a hook planted there"
rm -f "$MAIN/.git/hooks/pre-commit" "$T/pwned-hook"

# A setting planted in the main repository's config.
out=$(wt_jail "$WT" -- sh -c 'git config core.fsmonitor "$1 config" 2>/dev/null; touch "$0/started-config"' "$M" "$EVIL" 2>&1)
[ -e "$M/started-config" ] && pass "planting core.fsmonitor in the main repository's config: the jailed command ran" ||
	fail "planting core.fsmonitor in the main repository's config: the jailed command ran"
[ -z "$(git -C "$MAIN" config core.fsmonitor)" ] && pass "the setting is not in the main repository's config" ||
	fail "the setting is not in the main repository's config"
if [ "$TEST_BACKEND" = landlock ]; then
	printf '%s\n' "$out" | grep -q "$MAIN/.git/config" && pass "landlock: the dropped setting is named" ||
		{ fail "landlock: the dropped setting is named"; diag "$out"; }
else
	printf '%s\n' "$out" | grep -q "^stockade: refused: a rename over trust hand-off '$MAIN/.git/config'" &&
		pass "namespaces: the refused write is named" || { fail "namespaces: the refused write is named"; diag "$out"; }
fi
rm -f "$T/pwned-config"
git -C "$MAIN" status >/dev/null 2>&1
git -C "$WT" status >/dev/null 2>&1
[ ! -e "$T/pwned-config" ] && pass "git status outside runs nothing the run set" || fail "git status outside runs nothing the run set"

# The worktree's own git directory keeps its link: the run cannot point
# it elsewhere for the next run.
wt_jail "$WT" -- sh -c 'echo "gitdir: /nowhere" >.git; echo /nowhere >"$1/commondir"; touch "$0/started-link"' \
	"$M" "$MAIN/.git/worktrees/feature" >/dev/null 2>&1
[ -e "$M/started-link" ] && pass "rewriting the worktree's links: the jailed command ran" ||
	fail "rewriting the worktree's links: the jailed command ran"
git -C "$WT" status >/dev/null 2>&1 && pass "the worktree's .git and commondir are as they were after the run" ||
	fail "the worktree's .git and commondir are as they were after the run"

# A worktree inside the main working tree (.worktrees/NAME, which the
# main repository ignores): the worktree writable, the rest read-only.
repo_with_worktree "$R/inner" "$R/inner/.worktrees/topic"
echo .worktrees/ >>"$R/inner/.git/info/exclude"
out=$(wt_jail "$R/inner/.worktrees/topic" -- sh -c 'echo t >t.txt && git add t.txt && git commit -q -m inner && touch "$0/started-inner"' "$M" 2>&1)
[ -e "$M/started-inner" ] && [ "$(git -C "$R/inner" log -1 --format=%s feature)" = inner ] &&
	pass "a worktree inside the main working tree: git add and commit work" ||
	{ fail "a worktree inside the main working tree: git add and commit work"; diag "$out"; }
expect_probe "and the main working tree around it stays read-only" "errno $(readonly_errno)" -- \
	wt_jail "$R/inner/.worktrees/topic" -- "$PROBE" write "$R/inner/file.txt"

# ------------------------------------------------ a link the main repository does not make

# A .git file that names a worktree's git directory which does not name
# this workspace back (copied, or written by whoever wrote the
# repository): nothing of the main repository is granted, and git fails
# there as it did before (the control of the cases above).
mkdir -p "$T/forged"
cp "$WT/.git" "$T/forged/.git"
out=$(wt_jail "$T/forged" -- git status 2>&1)
printf '%s\n' "$out" | grep -q "not a git repository" &&
	pass "control: a .git file the main repository does not name back grants nothing (git fails)" ||
	{ fail "control: a .git file the main repository does not name back grants nothing (git fails)"; diag "$out"; }
expect_probe "and the main repository's git directory stays out of its reach" "errno $(hidden_errno)" -- \
	wt_jail "$T/forged" -- "$PROBE" write "$MAIN/.git/objects/planted"

# --------------------------------------------------- the main repository in the home

# A main repository in the home: its working tree and git directory, and
# nothing else of the home.
H2="$T/home2"
mkdir -p "$H2/.ssh"
echo not-a-key >"$H2/.ssh/id_ed25519"
echo notes >"$H2/notes.txt"
repo_with_worktree "$H2/src/main" "$H2/wt/feature"
expect_probe "main repository in the home: the rest of the home stays hidden" "errno $(hidden_errno)" -- \
	home_jail "$H2" "$H2/wt/feature" -- "$PROBE" read "$H2/notes.txt"
out=$(HOME="$H2" wt_jail "$H2/wt/feature" -- sh -c 'echo x >x.txt && git add x.txt && git commit -q -m home && git status --short && touch "$0/started-home"' "$M" 2>&1)
[ -e "$M/started-home" ] && [ "$(git -C "$H2/src/main" log -1 --format=%s feature)" = home ] &&
	pass "main repository in the home: git add and commit work" || { fail "main repository in the home: git add and commit work"; diag "$out"; }

# The home itself the main repository (dotfiles): its git directory
# alone, never the home's files.
H3="$T/home3"
mkdir -p "$H3"
echo notes >"$H3/notes.txt"
git -C "$H3" init -q
git -C "$H3" add notes.txt
git -C "$H3" commit -q -m dotfiles
git -C "$H3" worktree add -q -b feature "$T/dotwt"
expect_probe "the home as the main repository: its files stay hidden" "errno $(hidden_errno)" -- \
	home_jail "$H3" "$T/dotwt" -- "$PROBE" read "$H3/notes.txt"
out=$(HOME="$H3" wt_jail "$T/dotwt" -- sh -c 'echo y >>notes.txt && git commit -q -a -m dot && touch "$0/started-dot"' "$M" 2>&1)
[ -e "$M/started-dot" ] && [ "$(git -C "$H3" log -1 --format=%s feature)" = dot ] &&
	pass "the home as the main repository: git commit works" || { fail "the home as the main repository: git commit works"; diag "$out"; }

plan_done
