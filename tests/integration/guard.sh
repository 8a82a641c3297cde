# The guard, second version: git keeps working in the jail, nothing a run
# plants in what git or another tool reads later runs outside, nothing is
# lost, and when the undo cannot do its work it says so in the exit
# status. Each planted setting makes a marker when it runs; the control
# plants the same outside the jail and shows that real git runs it, then
# the jailed run plants it and real git, run outside afterwards, must not.
. tests/lib.sh

new_places
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
QUAR="$HOME/.local/state/stockade/quarantine"
# A program a planted setting names: it leaves a marker.
EVIL="$T/evil.sh"
printf '#!/bin/sh\ntouch "%s/pwned-$1"\nexit 1\n' "$T" >"$EVIL"
chmod +x "$EVIL"

# Where the jailed side leaves its "started" markers.
M="$T/marks"
mkdir -p "$M"
in_jail() {
	jail -q --net off --write "$M" "$@"
}

# fresh_repo DIR: a repository with one commit.
fresh_repo() {
	mkdir -p "$1"
	git -C "$1" init -q
	echo hello >"$1/file.txt"
	git -C "$1" add file.txt
	git -C "$1" commit -q -m first
}

# pwned NAME: whether the marker of NAME was made.
pwned() {
	[ -e "$T/pwned-$1" ]
}

# run_git_outside DIR ARGS: real git, outside the jail, as the user would.
run_git_outside() {
	local dir=$1
	shift
	git -C "$dir" "$@" >/dev/null 2>&1
}

# check_vector NAME SETUP-OUTSIDE-COMMAND GIT-ARGS...: the control. The
# planting SETUP does outside must make the marker when git runs, or the
# test below would prove nothing.
control_vector() {
	local name=$1 dir=$2
	shift 2
	rm -f "$T/pwned-$name"
	run_git_outside "$dir" "$@"
	if pwned "$name"; then
		pass "THREATS 60 control: outside the jail, git runs what is planted for $name"
	else
		fail "THREATS 60 control: outside the jail, git runs what is planted for $name"
	fi
	rm -f "$T/pwned-$name"
}

# after_vector NAME DIR GIT-ARGS...: after the jailed run, real git there
# runs nothing planted.
after_vector() {
	local name=$1 dir=$2
	shift 2
	rm -f "$T/pwned-$name"
	run_git_outside "$dir" "$@"
	if pwned "$name"; then
		fail "THREATS 60: $name: what the run planted does not run at 'git $*' outside"
	else
		pass "THREATS 60: $name: what the run planted does not run at 'git $*' outside"
	fi
}

# started MARKFILE: the jailed side ran.
started() {
	[ -e "$1" ] && pass "$2: the jailed command ran" || fail "$2: the jailed command ran"
	rm -f "$1"
}

# ---------------------------------------------------------------- git works

W1="$W/work"
mkdir -p "$W1" "$T/src"
fresh_repo "$T/src"

out=$(in_jail --read "$T/src" -C "$W1" -- sh -c '
	git init -q fresh &&
	git clone -q "$0" clone &&
	git -C clone worktree add -q wt &&
	git -C clone remote add up /nowhere &&
	git -C clone branch -q -u origin/HEAD 2>/dev/null; git -C clone config user.email me@example.invalid &&
	touch "$1"' "$T/src" "$M/started-git" 2>&1)
st=$?
started "$M/started-git" "git init, clone, worktree add in the jail"
[ $st -eq 0 ] && pass "and stockade exits 0" || { fail "and stockade exits 0 (status $st)"; diag "$out"; }
[ -z "$out" ] && pass "with nothing undone to say" || { fail "with nothing undone to say"; diag "$out"; }
[ "$(git -C "$W1/clone" remote get-url origin 2>&1)" = "$T/src" ] && pass "a clone made in the jail keeps its origin" ||
	fail "a clone made in the jail keeps its origin"
[ "$(git -C "$W1/clone" remote get-url up 2>&1)" = /nowhere ] && pass "and the remote added in the jail" ||
	fail "and the remote added in the jail"
[ "$(git -C "$W1/clone" config user.email)" = me@example.invalid ] && pass "and the identity set in the jail" ||
	fail "and the identity set in the jail"
git -C "$W1/clone/wt" status --short >/dev/null 2>&1 && pass "the worktree added in the jail works outside" ||
	fail "the worktree added in the jail works outside"
git -C "$W1/fresh" status >/dev/null 2>&1 && [ -f "$W1/fresh/.git/hooks/pre-commit.sample" ] &&
	pass "git init in the jail: a repository as git makes it, samples and all" ||
	fail "git init in the jail: a repository as git makes it, samples and all"
[ ! -d "$QUAR" ] || [ -z "$(ls -A "$QUAR")" ] && pass "nothing of theirs went to the quarantine" ||
	{ fail "nothing of theirs went to the quarantine"; diag "$(ls -R "$QUAR")"; }

# A submodule added in the jail works outside.
mkdir -p "$T/subsrc"
fresh_repo "$T/subsrc"
out=$(in_jail --read "$T/subsrc" -C "$W1/clone" -- sh -c '
	git -c protocol.file.allow=always submodule add -q "$0" sub && git commit -q -m sub && touch "$1"' "$T/subsrc" "$M/started-sub" 2>&1)
started "$M/started-sub" "git submodule add in the jail"
git -C "$W1/clone" submodule status 2>/dev/null | grep -q ' sub' && git -C "$W1/clone/sub" status >/dev/null 2>&1 &&
	pass "the submodule added in the jail works outside" || { fail "the submodule added in the jail works outside"; diag "$out"; }

# In an existing repository: the landlock backend lets the write happen
# and keeps what is inert; the namespace jail keeps the config read-only.
fresh_repo "$W/existing"
out=$(in_jail -C "$W/existing" -- sh -c 'git remote add origin2 /there; git config user.name someone; touch "$0"' "$M/started-ex" 2>&1)
started "$M/started-ex" "git remote add in an existing repository"
if [ "$TEST_BACKEND" = landlock ]; then
	[ "$(git -C "$W/existing" remote get-url origin2 2>&1)" = /there ] &&
		[ "$(git -C "$W/existing" config user.name)" = someone ] &&
		pass "landlock: git remote add and git config user.name stay" || { fail "landlock: git remote add and git config user.name stay"; diag "$out"; }
else
	! git -C "$W/existing" remote get-url origin2 >/dev/null 2>&1 &&
		pass "namespaces: the existing .git/config stayed read-only during the run" ||
		fail "namespaces: the existing .git/config stayed read-only during the run"
	n=$(printf '%s\n' "$out" | grep -c "^stockade: refused: a rename over trust hand-off '.git/config'")
	[ "$n" = 1 ] && printf '%s\n' "$out" | grep -q '^hint: .*--backend landlock' &&
		pass "namespaces: the refused write is named in one stockade line, with how to allow it" ||
		{ fail "namespaces: the refused write is named in one stockade line, with how to allow it"; diag "$out"; }
fi

# Settings the user changes outside while a run goes on are not undone.
fresh_repo "$W/busy"
in_jail -C "$W/busy" -- sh -c 'touch "$0"; sleep 2' "$M/started-busy" &
jpid=$!
wait_until test -e "$M/started-busy"
git -C "$W/busy" remote add mine /mine
git -C "$W/busy" config branch.master.description "outside"
wait "$jpid"
started "$M/started-busy" "a run going on while the user adds a remote outside"
[ "$(git -C "$W/busy" remote get-url mine 2>&1)" = /mine ] && pass "the remote the user added outside during the run stays" ||
	fail "the remote the user added outside during the run stays"

# git from a subdirectory: the workspace a package of a repository.
fresh_repo "$W/mono"
mkdir -p "$W/mono/packages/a" "$W/mono/packages/b"
echo a >"$W/mono/packages/a/a.txt"
echo b >"$W/mono/packages/b/b.txt"
git -C "$W/mono" add -A
git -C "$W/mono" commit -q -m packages
echo more >>"$W/mono/packages/a/a.txt"
out=$(in_jail -C "$W/mono/packages/a" -- sh -c '
	git status --short >"$0/status" && git add a.txt && git commit -q -m "in the jail" && touch "$0/started-mono";
	echo x >>../b/b.txt; git config core.fsmonitor "$1 mono"' "$M" "$EVIL" 2>&1)
started "$M/started-mono" "git status, add and commit from a package of a repository"
grep -q 'a.txt' "$M/status" 2>/dev/null && pass "git in the jail finds the repository around the workspace" ||
	{ fail "git in the jail finds the repository around the workspace"; diag "$out"; }
[ "$(git -C "$W/mono" log -1 --format=%s)" = "in the jail" ] && pass "and the commit is there outside" ||
	fail "and the commit is there outside"
[ "$(cat "$W/mono/packages/b/b.txt")" = b ] && pass "the rest of the working tree stays read-only" ||
	fail "the rest of the working tree stays read-only"
after_vector mono "$W/mono" status

# -------------------------------------------------------- what runs later

# A hook in a repository's hooks.
fresh_repo "$W/hooked"
mkdir -p "$T/ctl"
cp -r "$W/hooked" "$T/ctl/hooked"
printf '#!/bin/sh\n"%s" hook\n' "$EVIL" >"$T/ctl/hooked/.git/hooks/post-checkout"
chmod +x "$T/ctl/hooked/.git/hooks/post-checkout"
control_vector hook "$T/ctl/hooked" checkout -q -b other
in_jail -C "$W/hooked" -- sh -c 'printf "#!/bin/sh\n\"%s\" hook\n" "$0" >.git/hooks/post-checkout; chmod +x .git/hooks/post-checkout; touch "$1"' "$EVIL" "$M/started-hook" >/dev/null 2>&1
started "$M/started-hook" "planting a hook"
after_vector hook "$W/hooked" checkout -q -b other

# A linked worktree's commondir, redirected to a git directory the run made.
fresh_repo "$W/cd"
git -C "$W/cd" worktree add -q wt
mkdir -p "$T/ctl"
rm -rf "$T/ctl/cd"
cp -r "$W/cd" "$T/ctl/cd"
# outside: the same redirect, to show git follows it
plant_commondir() {
	local repo=$1
	mkdir -p "$repo/evil/objects" "$repo/evil/refs"
	echo 'ref: refs/heads/master' >"$repo/evil/HEAD"
	printf '[core]\n\tfsmonitor = "%s commondir"\n' "$EVIL" >"$repo/evil/config"
	echo ../../../evil >"$repo/.git/worktrees/wt/commondir"
}
(
	plant_commondir "$T/ctl/cd"
	sed -i "s|$W/cd|$T/ctl/cd|g" "$T/ctl/cd/wt/.git" "$T/ctl/cd/.git/worktrees/wt/gitdir"
)
control_vector commondir "$T/ctl/cd/wt" status
in_jail -C "$W/cd" -- bash -c "$(declare -f plant_commondir); plant_commondir . 2>/dev/null; touch '$M/started-cd'" >/dev/null 2>&1
started "$M/started-cd" "redirecting a worktree's commondir"
after_vector commondir "$W/cd/wt" status

# A worktree's own config (extensions.worktreeConfig).
fresh_repo "$W/wtc"
git -C "$W/wtc" worktree add -q wt
in_jail -C "$W/wtc" -- sh -c "git config extensions.worktreeConfig true 2>/dev/null;
	printf '[core]\n\tfsmonitor = \"%s worktree-config\"\n' '$EVIL' >.git/worktrees/wt/config.worktree; touch '$M/started-wtc'" >/dev/null 2>&1
started "$M/started-wtc" "planting a worktree's config.worktree"
git -C "$W/wtc" config extensions.worktreeConfig true
after_vector worktree-config "$W/wtc/wt" status

# A submodule not yet initialised: git submodule update --init reuses a
# modules/NAME the run planted, and runs its hooks.
fresh_repo "$W/super"
git -C "$W/super" -c protocol.file.allow=always submodule add -q "$T/subsrc" sub
git -C "$W/super" commit -q -m sub
git -C "$W/super" submodule deinit -q -f sub
in_jail -C "$W/super" -- sh -c "mkdir -p .git/modules/sub/hooks &&
	printf '#!/bin/sh\n\"%s\" submodule\n' '$EVIL' >.git/modules/sub/hooks/post-checkout &&
	chmod +x .git/modules/sub/hooks/post-checkout &&
	printf '[core]\n\tfsmonitor = \"%s submodule\"\n' '$EVIL' >>.git/modules/sub/config; touch '$M/started-super'" >/dev/null 2>&1
started "$M/started-super" "planting in an uninitialised submodule's git directory"
rm -f "$T/pwned-submodule"
git -C "$W/super" -c protocol.file.allow=always submodule update -q --init >/dev/null 2>&1
git -C "$W/super/sub" status >/dev/null 2>&1
pwned submodule && fail "THREATS 26, 60: submodule: nothing planted runs at 'git submodule update --init' outside" ||
	pass "THREATS 26, 60: submodule: nothing planted runs at 'git submodule update --init' outside"

# A submodule whose hooks folder is relative (husky's core.hooksPath =
# .husky in the submodule): git runs them from the submodule's working
# tree, sub/.husky, named by the core.worktree git wrote into
# .git/modules/sub/config. A hook planted there runs at the next commit
# in the submodule outside.
plant_husky() {
	mkdir -p "$1/.husky" &&
		printf '#!/bin/sh\n"%s" submodule-husky\n' "$EVIL" >"$1/.husky/pre-commit" &&
		chmod +x "$1/.husky/pre-commit"
}
husky_super() {
	fresh_repo "$1"
	git -C "$1" -c protocol.file.allow=always submodule add -q "$T/subsrc" sub
	git -C "$1" commit -q -m sub
	git -C "$1/sub" config core.hooksPath .husky
}
husky_super "$T/ctl/husky"
plant_husky "$T/ctl/husky/sub"
control_vector submodule-husky "$T/ctl/husky/sub" commit -q --allow-empty -m x
husky_super "$W/husky"
in_jail -C "$W/husky" -- bash -c "$(declare -f plant_husky); EVIL='$EVIL'; plant_husky sub; touch '$M/started-husky'" >/dev/null 2>&1
started "$M/started-husky" "planting a hook in a submodule's relative hooksPath"
after_vector submodule-husky "$W/husky/sub" commit -q --allow-empty -m x

# A bare repository in the workspace (a local remote a test suite pushes
# to): git runs its hooks when something is pushed to it, outside too.
plant_bare() {
	printf '#!/bin/sh\n"%s" bare\n' "$EVIL" >"$1/hooks/pre-receive" && chmod +x "$1/hooks/pre-receive"
}
fresh_repo "$T/pusher"
git init -q --bare "$T/ctl/remote.git"
plant_bare "$T/ctl/remote.git"
control_vector bare "$T/pusher" push -q "$T/ctl/remote.git" HEAD:refs/heads/main
mkdir -p "$W/bare"
git init -q --bare "$W/bare/remote.git"
in_jail -C "$W/bare" -- bash -c "$(declare -f plant_bare); EVIL='$EVIL'; plant_bare remote.git 2>/dev/null; touch '$M/started-bare'" >/dev/null 2>&1
started "$M/started-bare" "planting a hook in a bare repository of the workspace"
git -C "$T/pusher" commit -q --allow-empty -m again
after_vector bare "$T/pusher" push -q "$W/bare/remote.git" HEAD:refs/heads/main
# one made in the jail, pushed to there, works outside as it is
out=$(in_jail --read "$T/pusher" -C "$W/bare" -- sh -c "git init -q --bare made.git && git -C '$T/pusher' push -q '$W/bare/made.git' HEAD:refs/heads/main && touch '$M/started-made'" 2>&1)
started "$M/started-made" "git init --bare and a push in the jail"
[ "$(git -C "$W/bare/made.git" rev-parse --is-bare-repository 2>/dev/null)" = true ] &&
	git -C "$W/bare/made.git" rev-parse -q --verify refs/heads/main >/dev/null &&
	pass "a bare repository made in the jail works outside, its push kept" ||
	{ fail "a bare repository made in the jail works outside, its push kept"; diag "$out"; }

# Mercurial's own config runs programs at its commands: .hg/hgrc's
# [hooks], at the top of the workspace and in a repository below it.
if command -v hg >/dev/null; then
	export HGUSER=t
	plant_hg() {
		printf '[hooks]\npre-commit = "%s" hg\n' "$EVIL" >>"$1/.hg/hgrc"
	}
	hg_repo() {
		mkdir -p "$1" && hg init "$1" && echo a >"$1/a" && hg -R "$1" add -q "$1/a" && hg -R "$1" commit -q -m a
	}
	# hg_commit DIR: a commit there, outside, as the user would.
	hg_commit() {
		echo more >>"$1/a" && hg -R "$1" commit -q -m more >/dev/null 2>&1
	}
	hg_repo "$T/ctl/hg"
	plant_hg "$T/ctl/hg"
	rm -f "$T/pwned-hg"
	hg_commit "$T/ctl/hg"
	pwned hg && pass "THREATS 60 control: outside the jail, hg runs what is planted in .hg/hgrc" ||
		fail "THREATS 60 control: outside the jail, hg runs what is planted in .hg/hgrc"
	# a file the user's own .hg/hgrc includes from the workspace
	hg_repo "$T/ctl/hginc"
	printf '%%include ../shared.rc\n' >>"$T/ctl/hginc/.hg/hgrc"
	printf '[ui]\n' >"$T/ctl/hginc/shared.rc"
	printf '[hooks]\npre-commit = "%s" hg\n' "$EVIL" >>"$T/ctl/hginc/shared.rc"
	rm -f "$T/pwned-hg"
	hg_commit "$T/ctl/hginc"
	pwned hg && pass "THREATS 60 control: outside the jail, hg runs what is planted in a file .hg/hgrc includes" ||
		fail "THREATS 60 control: outside the jail, hg runs what is planted in a file .hg/hgrc includes"
	hg_repo "$W/hginc"
	printf '%%include ../shared.rc\n' >>"$W/hginc/.hg/hgrc"
	printf '[ui]\n' >"$W/hginc/shared.rc"
	in_jail -C "$W/hginc" -- sh -c "printf '[hooks]\npre-commit = \"%s\" hg\n' '$EVIL' >>shared.rc 2>/dev/null; touch '$M/started-hginc'" >/dev/null 2>&1
	started "$M/started-hginc" "planting [hooks] in a file .hg/hgrc includes"
	rm -f "$T/pwned-hg"
	hg_commit "$W/hginc"
	pwned hg && fail "THREATS 60: hg include: what the run planted in a file .hg/hgrc includes does not run at 'hg commit' outside" ||
		pass "THREATS 60: hg include: what the run planted in a file .hg/hgrc includes does not run at 'hg commit' outside"
	for at in top below; do
		ws="$W/hg-$at"
		repo=$ws
		[ $at = below ] && repo=$ws/sub
		hg_repo "$repo"
		in_jail -C "$ws" -- bash -c "$(declare -f plant_hg); EVIL='$EVIL'; plant_hg '$repo' 2>/dev/null; touch '$M/started-hg'" >/dev/null 2>&1
		started "$M/started-hg" "planting [hooks] in .hg/hgrc ($at)"
		rm -f "$T/pwned-hg"
		hg_commit "$repo"
		pwned hg && fail "THREATS 60: hg ($at): what the run planted in .hg/hgrc does not run at 'hg commit' outside" ||
			pass "THREATS 60: hg ($at): what the run planted in .hg/hgrc does not run at 'hg commit' outside"
	done
	# hg reads .hg/hgrc-not-shared after .hg/hgrc; and a share's
	# source's hgrc, where .hg/sharedpath points (a run that makes one
	# sends hg to an hgrc of its own)
	plant_hgns() {
		printf '[hooks]\npre-commit = "%s" hg\n' "$EVIL" >"$1/.hg/hgrc-not-shared"
	}
	plant_share() {
		cp -r "$1/.hg" "$1/stuff" && printf '[hooks]\npre-commit = "%s" hg\n' "$EVIL" >"$1/stuff/hgrc" &&
			echo "$1/stuff" >"$1/.hg/sharedpath" && echo shared >>"$1/.hg/requires"
	}
	for way in hgns share; do
		hg_repo "$T/ctl/hg-$way"
		"plant_$way" "$T/ctl/hg-$way"
		rm -f "$T/pwned-hg"
		hg_commit "$T/ctl/hg-$way"
		pwned hg && pass "THREATS 60 control: outside the jail, hg runs what plant_$way planted" ||
			fail "THREATS 60 control: outside the jail, hg runs what plant_$way planted"
		hg_repo "$W/hg-$way"
		in_jail -C "$W/hg-$way" -- bash -c "$(declare -f "plant_$way"); EVIL='$EVIL'; plant_$way '$W/hg-$way' 2>/dev/null; touch '$M/started-hg-$way'" >/dev/null 2>&1
		started "$M/started-hg-$way" "plant_$way in the jail"
		rm -f "$T/pwned-hg"
		hg_commit "$W/hg-$way"
		pwned hg && fail "THREATS 60: hg: what plant_$way planted does not run at 'hg commit' outside" ||
			pass "THREATS 60: hg: what plant_$way planted does not run at 'hg commit' outside"
	done
	# a share made outside, its source in the workspace: hg works in it
	# after a run, and a commit there in the jail is kept
	hg_repo "$W/hg-src"
	hg --config extensions.share= share -q "$W/hg-src" "$W/hg-shared" >/dev/null 2>&1
	out=$(in_jail -C "$W" -- sh -c "cd hg-shared && echo b >b && hg add -q b && hg commit -q -m b && touch '$M/started-hg-shared'" 2>&1)
	started "$M/started-hg-shared" "hg commit in a share"
	[ "$(hg -R "$W/hg-shared" log -r . -T '{desc}' 2>/dev/null)" = b ] && hg_commit "$W/hg-shared" &&
		pass "hg: a share works in the jail and after, its commit kept" ||
		{ fail "hg: a share works in the jail and after, its commit kept"; diag "$out"; }
else
	skip "no hg here (Debian's mercurial)"
fi

# A file an include names inside the workspace.
fresh_repo "$W/inc"
printf '[user]\n\tname = from-include\n' >"$W/inc/shared.gitconfig"
git -C "$W/inc" config include.path ../shared.gitconfig
in_jail -C "$W/inc" -- sh -c "printf '[core]\n\tfsmonitor = \"%s include\"\n' '$EVIL' >>shared.gitconfig; touch '$M/started-inc'" >/dev/null 2>&1
started "$M/started-inc" "writing to a file an include names"
after_vector include "$W/inc" status
[ "$(git -C "$W/inc" config user.name)" = from-include ] && pass "the include's own inert settings stay" ||
	fail "the include's own inert settings stay"

# Attributes that name a driver, and the driver defined by the run.
fresh_repo "$W/attr"
in_jail -C "$W/attr" -- sh -c "mkdir -p .git/info && echo '* diff=evil' >.git/info/attributes &&
	git config diff.evil.textconv '$EVIL attributes'; echo changed >file.txt; touch '$M/started-attr'" >/dev/null 2>&1
started "$M/started-attr" "planting attributes and a diff driver"
after_vector attributes "$W/attr" diff

# A setting the run adds to .git/config that runs at the next status.
fresh_repo "$W/fsm"
in_jail -C "$W/fsm" -- sh -c "git config core.fsmonitor '$EVIL fsmonitor' 2>/dev/null ||
	printf '[core]\n\tfsmonitor = \"%s fsmonitor\"\n' '$EVIL' >>.git/config; touch '$M/started-fsm'" >/dev/null 2>&1
started "$M/started-fsm" "setting core.fsmonitor"
after_vector fsmonitor "$W/fsm" status

# .envrc and what it sources or puts on PATH.
W2="$W/envrc"
mkdir -p "$W2/bin"
printf 'source_env_if_exists .envrc.local\nPATH_add bin\ndotenv\n' >"$W2/.envrc"
echo 'export SAFE=1' >"$W2/.envrc.local"
in_jail -C "$W2" -- sh -c "echo 'touch $T/pwned-envrc' >>.envrc.local; printf '#!/bin/sh\n' >bin/ls; chmod +x bin/ls;
	echo 'LD_PRELOAD=/tmp/evil.so' >.env; touch '$M/started-envrc'" >/dev/null 2>&1
started "$M/started-envrc" "writing what an .envrc sources, loads and puts on PATH"
[ "$(cat "$W2/.envrc.local")" = 'export SAFE=1' ] && pass "THREATS 65: .envrc's source_env target has its content back" ||
	fail "THREATS 65: .envrc's source_env target has its content back"
[ ! -e "$W2/bin/ls" ] && pass "THREATS 65: a program planted in .envrc's PATH_add directory is gone" ||
	fail "THREATS 65: a program planted in .envrc's PATH_add directory is gone"
[ ! -e "$W2/.env" ] && pass "THREATS 65: the .env file dotenv loads is gone" || fail "THREATS 65: the .env file dotenv loads is gone"

# Agents' and editors' settings, and the other tools in the table.
W3="$W/tools"
mkdir -p "$W3"
in_jail -C "$W3" -- sh -c "mkdir -p .gemini .zed .devcontainer && echo '{\"mcpServers\":{}}' >.mcp.json &&
	echo '{}' >.gemini/settings.json && echo '{}' >.zed/settings.json && echo '[tasks]' >mise.toml &&
	echo '[tasks]' >.mise.toml && echo '{}' >.devcontainer/devcontainer.json && echo 'repos: []' >.pre-commit-config.yaml &&
	printf '[toolchain]\npath = \"tc\"\n' >rust-toolchain.toml && echo 'nodejs path:./tc' >.tool-versions &&
	touch '$M/started-tools'" >/dev/null 2>&1
started "$M/started-tools" "writing agent and tool settings"
for f in .mcp.json .gemini .zed mise.toml .mise.toml .devcontainer .pre-commit-config.yaml rust-toolchain.toml .tool-versions; do
	[ ! -e "$W3/$f" ] && pass "THREATS 65: $f made in the jail is set aside" || fail "THREATS 65: $f made in the jail is set aside"
done
# Other agents' project settings that start a program when the agent
# next starts in the workspace (a local MCP server, a plugin, a lint
# command, a hook), each made in the jail and set aside.
W4="$W/agents"
mkdir -p "$W4"
in_jail -C "$W4" -- sh -c "mkdir -p .codex .opencode/plugins .continue/mcpServers .roo .kilocode .kiro/hooks .qwen .amazonq &&
	printf '[mcp_servers.x]\ncommand = \"touch\"\n' >.codex/config.toml && echo '{\"mcp\":{}}' >opencode.json &&
	echo '{}' >opencode.jsonc && echo 'export const P = async () => ({})' >.opencode/plugins/p.js &&
	echo 'lint-cmd: touch' >.aider.conf.yml && echo 'name: x' >.continue/mcpServers/x.yaml && echo '{}' >.roo/mcp.json && echo '{}' >.kilocode/mcp.json &&
	echo '{}' >.kiro/hooks/x.kiro.hook && echo '{}' >.qwen/settings.json && echo '{}' >.amazonq/mcp.json &&
	echo '{}' >crush.json && echo '{}' >.crush.json && touch '$M/started-agents'" >/dev/null 2>&1
started "$M/started-agents" "writing other agents' project settings"
for f in .codex opencode.json opencode.jsonc .opencode .aider.conf.yml .continue .roo .kilocode .kiro .qwen .amazonq crush.json .crush.json; do
	[ ! -e "$W4/$f" ] && pass "THREATS 29: $f made in the jail is set aside" || fail "THREATS 29: $f made in the jail is set aside"
done

# ------------------------------------------------------ the undo fails closed

# The quarantine cannot be made: what the run planted is renamed beside
# itself, inert, and the exit status says the cleanup failed.
fresh_repo "$W/inert"
mkdir -p "$HOME/.local/state/stockade"
mv "$QUAR" "$T/quarantine.saved" 2>/dev/null
echo "in the way" >"$QUAR"
out=$(in_jail -C "$W/inert" -- sh -c "printf '#!/bin/sh\n\"%s\" inert\n' '$EVIL' >.git/hooks/pre-push; chmod +x .git/hooks/pre-push; touch '$M/started-inert'; exit 0" 2>&1)
st=$?
started "$M/started-inert" "planting a hook while the quarantine cannot be made"
rm -f "$QUAR"
[ -d "$T/quarantine.saved" ] && mv "$T/quarantine.saved" "$QUAR"
if [ "$TEST_BACKEND" = namespaces ]; then
	# .git/hooks exists, so it was read-only: nothing to undo
	[ $st -eq 0 ] && pass "THREATS 61: namespaces: the hook could not be written, status 0" || { fail "THREATS 61: namespaces: status 0 (got $st)"; diag "$out"; }
else
	[ $st -eq 122 ] && pass "THREATS 61: the exit status says the cleanup failed (122), not the command's 0" ||
		{ fail "THREATS 61: the exit status says the cleanup failed (122), not the command's 0 (got $st)"; diag "$out"; }
	[ ! -e "$W/inert/.git/hooks/pre-push" ] && ls "$W/inert/.git/hooks/" | grep -q '^pre-push\.stockade-' &&
		pass "the hook is renamed beside itself, where git does not run it" || fail "the hook is renamed beside itself"
	printf '%s\n' "$out" | grep -q "renamed beside itself" && pass "and stockade says so" || { fail "and stockade says so"; diag "$out"; }
fi

# A hand-off over the guard's 1 MiB a file is named as unguarded before
# the run; one the run removes cannot come back, and the exit status says
# the undo failed (122), not the command's 0.
mkdir -p "$W/bigidea/.idea"
head -c 2000000 /dev/zero | tr '\0' x >"$W/bigidea/.idea/workspace.xml"
out=$(in_jail -C "$W/bigidea" -- sh -c "rm -f .idea/workspace.xml; touch '$M/started-bigidea'; exit 0" 2>&1)
st=$?
started "$M/started-bigidea" "removing a hand-off over the guard's size cap"
if [ "$TEST_BACKEND" = namespaces ]; then
	# .idea/ exists, so it was read-only: nothing to undo
	[ $st -eq 0 ] && [ -s "$W/bigidea/.idea/workspace.xml" ] && pass "namespaces: the hand-off over the size cap could not be removed, status 0" ||
		{ fail "namespaces: the hand-off over the size cap could not be removed, status 0 (got $st)"; diag "$out"; }
else
	[ $st -eq 122 ] && pass "a hand-off over the size cap removed: the exit status says it cannot come back (122)" ||
		{ fail "a hand-off over the size cap removed: the exit status says it cannot come back (122) (got $st)"; diag "$out"; }
	printf '%s\n' "$out" | grep -q "^stockade: cannot undo a change to trust hand-off '.idea/workspace.xml': the guard holds no copy of its old content" &&
		pass "and stockade says it could not undo it, not that it did" || { fail "and stockade says it could not undo it, not that it did"; diag "$out"; }
fi

# A run whose stockade and keeper were both killed (the keeper stopped
# first, so that it cannot end the run) left a planted file, and the next
# run cannot set it aside (renames refused, as a restricted kernel would):
# it refuses to start, naming the one command that clears it; a run once
# renames work again undoes it first, then runs.
W8="$W/stuck"
mkdir -p "$W8"
in_jail -C "$W8" -- true	# the baseline and the index
"${JAIL[@]}" -q --net off --write "$M" -C "$W8" -- sh -c "echo '{}' >.mcp.json; touch '$M/started-stuck'; exec sleep 60" &
jpid=$!	# stockade itself
wait_until test -e "$M/started-stuck"
kpid=
for _ in $(seq 100); do kpid=$(pgrep -P "$jpid" -x stockade-keeper) && break; sleep 0.05; done
[ -n "$kpid" ] || diag "no keeper of stockade $jpid found to stop"
kill -STOP $kpid 2>/dev/null
kill -KILL "$jpid" 2>/dev/null
wait "$jpid" 2>/dev/null
kill -KILL $kpid 2>/dev/null
started "$M/started-stuck" "planting .mcp.json, then stockade killed"
norename=("$SIMKERNEL" --errno rename=EPERM --errno renameat=EPERM --errno renameat2=EPERM --)
out=$("${norename[@]}" "${JAIL[@]}" -q --net off -C "$W8" -- "$PROBE" write "$W8/x" 2>&1)
st=$?
if [ $st -eq 125 ] && ! printf '%s\n' "$out" | grep -q '^probe: started' && printf '%s\n' "$out" | grep -q "rm -rf -- '$W8/.mcp.json'"; then
	pass "the next run cannot undo it: refused (125), with the one command that clears it"
else
	fail "the next run cannot undo it: refused (125), with the one command that clears it (status $st)"
	diag "$out"
fi
for _ in $(seq 100); do pgrep -f "exec sleep 60" >/dev/null || break; sleep 0.1; done
out=$(in_jail -C "$W8" -- "$PROBE" write "$W8/x" 2>&1)
[ ! -e "$W8/.mcp.json" ] && printf '%s\n' "$out" | grep -q '^probe: started' &&
	pass "a run where renames work undoes it first, then runs" || { fail "a run where renames work undoes it first, then runs"; diag "$out"; }

# The run makes the workspace read-only, or a file in a hand-off
# unreadable: the undo still happens.
W4="$W/ro"
mkdir -p "$W4"
out=$(in_jail -C "$W4" -- sh -c "mkdir -p .claude && echo evil >.claude/settings.json && chmod 000 .claude/settings.json &&
	echo evil >.mcp.json && chmod 555 . && touch '$M/started-ro'" 2>&1)
st=$?
started "$M/started-ro" "making the workspace read-only and a planted file unreadable"
[ ! -e "$W4/.claude" ] && [ ! -e "$W4/.mcp.json" ] && pass "THREATS 61: both are set aside all the same" ||
	{ fail "THREATS 61: both are set aside all the same (status $st)"; diag "$out"; }
[ "$(stat -c %a "$W4")" = 555 ] && pass "and the workspace keeps the mode the run gave it" || fail "and the workspace keeps the mode the run gave it"
chmod 755 "$W4"

# Deeper than any walk: a tree of 300 levels in a hand-off, and a
# repository deeper than a path can name.
W5="$W/deep"
mkdir -p "$W5"
in_jail -C "$W5" -- bash -c "mkdir -p .claude && cd .claude && for i in \$(seq 300); do mkdir a && cd a; done && echo evil >x;
	cd '$W5' && d=deep; mkdir \$d && cd \$d && for i in \$(seq 400); do mkdir aaaaaaaaa && cd aaaaaaaaa; done &&
	git init -q . && printf '[core]\n\tfsmonitor = \"%s deep\"\n' '$EVIL' >>.git/config && touch '$M/started-deep'" >/dev/null 2>&1
started "$M/started-deep" "planting 300 levels deep, and a repository 400 levels deep"
[ ! -e "$W5/.claude" ] && pass "the deep tree in .claude is set aside whole" || fail "the deep tree in .claude is set aside whole"
found=$(find "$W5" -name .git 2>/dev/null | head -n 1)
if [ -z "$found" ]; then
	pass "a repository deeper than a path can name does not stay"
else
	fail "a repository deeper than a path can name does not stay"
	diag "$found"
fi

# A sparse file in a hand-off, with the state on another filesystem: the
# copy takes its data, not its holes.
W6="$W/sparse"
mkdir -p "$W6"
other=$(mktemp -d /dev/shm/stockade-test-state.XXXXXX)
at_exit rm -rf "$other"
if [ "$(stat -c %d "$other")" != "$(stat -c %d "$W6")" ]; then
	out=$(XDG_STATE_HOME="$other" in_jail -C "$W6" -- sh -c "mkdir -p .vscode && truncate -s 64G .vscode/huge && echo x >>.vscode/huge && touch '$M/started-sparse'" 2>&1)
	st=$?
	started "$M/started-sparse" "planting a 64 GiB sparse file with the state on another filesystem"
	[ ! -e "$W6/.vscode" ] && pass "THREATS 61: the sparse file is set aside" || { fail "THREATS 61: the sparse file is set aside (status $st)"; diag "$out"; }
	used=$(du -sk "$other" | cut -f1)
	[ "$used" -lt 10240 ] && pass "THREATS 61: the state filesystem took its data, not its holes (${used} KiB)" ||
		fail "THREATS 61: the state filesystem took its data, not its holes (${used} KiB)"
else
	fail "/dev/shm is another filesystem than the workspace"
fi

# No space where the old content goes back: the old content waits in the
# quarantine, nothing of the run's is in effect, and the status says so.
if is_root; then
	small="$T/small"
	mkdir -p "$small"
	if mount -t tmpfs -o size=256k tmpfs "$small"; then
		at_exit umount -l "$small"
		fresh_repo "$small/repo"
		printf '#!/bin/sh\necho mine\n' >"$small/repo/.git/hooks/post-merge"
		chmod +x "$small/repo/.git/hooks/post-merge"
		out=$(in_jail -C "$small/repo" -- sh -c "printf '#!/bin/sh\n\"%s\" nospace\n' '$EVIL' >.git/hooks/post-merge 2>/dev/null;
			rm -f .git/hooks/post-merge; dd if=/dev/zero of=fill bs=4k 2>/dev/null; touch '$M/started-nospace'" 2>&1)
		st=$?
		started "$M/started-nospace" "filling the workspace's filesystem"
		if [ "$TEST_BACKEND" = landlock ]; then
			[ $st -eq 122 ] && pass "THREATS 61: no space to put the hook back: status 122" || { fail "THREATS 61: no space to put the hook back: status 122 (got $st)"; diag "$out"; }
			printf '%s\n' "$out" | grep -q 'kept in the quarantine' && pass "and the old content is named in the quarantine" ||
				{ fail "and the old content is named in the quarantine"; diag "$out"; }
		else
			[ "$(cat "$small/repo/.git/hooks/post-merge")" = "$(printf '#!/bin/sh\necho mine')" ] &&
				pass "THREATS 61: namespaces: the hook stayed read-only" || fail "THREATS 61: namespaces: the hook stayed read-only"
		fi
	else
		fail "a small tmpfs can be mounted as root"
	fi
fi

# ---------------------------------------------------------- the state dir

# Pointed into the workspace through a symlink: refused before anything runs.
W7="$W/statelink"
mkdir -p "$W7/state"
ln -s "$W7/state" "$T/statelink"
out=$(XDG_STATE_HOME="$T/statelink" in_jail -C "$W7" -- "$PROBE" write "$W7/x" 2>&1)
st=$?
if [ $st -eq 125 ] && ! printf '%s\n' "$out" | grep -q '^probe: started' && printf '%s\n' "$out" | grep -q "state directory"; then
	pass "THREATS 63: a state directory reached into the workspace through a symlink: refused (125), said"
else
	fail "THREATS 63: a state directory reached into the workspace through a symlink: refused (125), said (status $st)"
	diag "$out"
fi
ln -s "$W7" "$T/wslink"
out=$(XDG_STATE_HOME="$T/outside-state" in_jail -C "$W7" -- "$PROBE" write "$W7/x" 2>&1)
printf '%s\n' "$out" | grep -q '^probe: started' && pass "control: a state directory outside it runs" ||
	{ fail "control: a state directory outside it runs"; diag "$out"; }

# Not this run's state alone: with XDG_STATE_HOME elsewhere, a run that
# could write the default one (~/.local/state/stockade) would plant trust
# records that a later stockade, with no XDG_STATE_HOME, takes as yours.
mkdir -p "$HOME/.local/state/stockade/trust" "$T/other-state"
echo mine >"$HOME/.local/state/stockade/trust/record"
out=$(XDG_STATE_HOME="$T/other-state" in_jail -C "$W7" --write "$HOME/.local" -- "$PROBE" write "$HOME/.local/state/stockade/trust/record" 2>&1)
st=$?
if [ $st -eq 125 ] && ! printf '%s\n' "$out" | grep -q '^probe: started' &&
	printf '%s\n' "$out" | grep -q "state directory '$HOME/.local/state/stockade' could be made or changed from the jail: the run may write '$HOME/.local'"; then
	pass "THREATS 63: another state directory set, a write of the default one's folder is refused (125), named"
else
	fail "THREATS 63: another state directory set, a write of the default one's folder is refused (125), named (status $st)"
	diag "$out"
fi
[ "$(cat "$HOME/.local/state/stockade/trust/record")" = mine ] && pass "the default state directory's records are untouched" ||
	fail "the default state directory's records are untouched"
fails "a write inside stockade's state is refused, named" "it is stockade's own state" -- \
	in_jail -C "$W7" --write "$HOME/.local/state/stockade/trust" -- true
fails "a read inside stockade's state is refused, named" "it is stockade's own state" -- \
	in_jail -C "$W7" --read "$HOME/.local/state/stockade/trust" -- true
# A read of the whole home holds the state directory: it stays hidden.
expect_control "control: outside, a trust record reads" -- "$PROBE" read "$HOME/.local/state/stockade/trust/record"
expect_probe "a read of the home does not show stockade's state (its trust records)" "errno EACCES" -- \
	in_jail -q -C "$W7" --read "$HOME" -- "$PROBE" read "$HOME/.local/state/stockade/trust/record"
out=$("$STOCKADE" why -C "$W7" "$HOME/.local/state/stockade/trust" 2>&1)
printf '%s\n' "$out" | grep -q "allow: none: stockade's own state" && ! printf '%s\n' "$out" | grep -q -- "--read" &&
	pass "why offers no option that would be refused for stockade's state" ||
	{ fail "why offers no option that would be refused for stockade's state"; diag "$out"; }

# ------------------------------------- a repository named with a tab

# A name may hold any byte but / and NUL: a repository the run makes
# under such a name is one more the guard keeps, and its baseline reads
# back (it was written, then refused as damaged: the next run's plants
# stayed, and every run after it was refused).
W8="$W/tabbed"
fresh_repo "$W8"
tab=$(printf 'evil\tx')
in_jail -C "$W8" -- git -C "$W8" init -q "$tab" >/dev/null 2>&1
out=$(in_jail -C "$W8" -- sh -c 'echo "echo pwned" >.envrc; printf "#!/bin/sh\ntouch $0\n" >"$1/.git/hooks/post-checkout"' \
	"$T/pwned-tabbed" "$tab" 2>&1)
st=$?
[ ! -e "$W8/.envrc" ] && [ ! -e "$W8/$tab/.git/hooks/post-checkout" ] && [ $st -ne 122 ] &&
	pass "THREATS 29: beside a repository named with a tab, a run's plants are undone" ||
	{ fail "THREATS 29: beside a repository named with a tab, a run's plants are undone (status $st)"; diag "$out"; }
out=$(in_jail -C "$W8" -- "$PROBE" write "$W8/x" 2>&1)
printf '%s\n' "$out" | grep -q '^probe: ok' && pass "and the next run goes on" ||
	{ fail "and the next run goes on"; diag "$out"; }


# ------------------------------------------------- where the user's git looks

# core.worktree set by a run in the repository's own config, or in a
# nested repository's: the user's git status lists the tree it names,
# git add -A commits it, git restore writes the run's files there. Only
# git's own, in a submodule's git directory, stays.
mkdir -p "$T/private"
echo secret >"$T/private/secret.txt"
fresh_repo "$T/ctl/wtree"
git -C "$T/ctl/wtree" config core.worktree "$T/private"
git -C "$T/ctl/wtree" status --short 2>/dev/null | grep -q secret.txt &&
	pass "THREATS 79 control: outside, git status lists the tree core.worktree names" ||
	fail "THREATS 79 control: outside, git status lists the tree core.worktree names"
fresh_repo "$W/wtree"
out=$(in_jail -C "$W/wtree" -- sh -c 'git config core.worktree "$0" 2>/dev/null; git init -q nested &&
	git -C nested config core.worktree "$0" && touch "$1"' "$T/private" "$M/started-wtree" 2>&1)
started "$M/started-wtree" "setting core.worktree"
for repo in "$W/wtree" "$W/wtree/nested"; do
	name=${repo#"$W/"}
	[ -z "$(git -C "$repo" config core.worktree)" ] && ! git -C "$repo" status --short 2>/dev/null | grep -q secret.txt &&
		pass "THREATS 79: $name: the core.worktree the run set is undone, git status outside lists no other tree" ||
		{ fail "THREATS 79: $name: the core.worktree the run set is undone, git status outside lists no other tree"; diag "$out"; }
done
printf '%s\n' "$out" | grep -q "^stockade: kept the inert settings of git config 'nested/.git/config' and undid the rest (core.worktree)" &&
	pass "THREATS 79: the undone core.worktree is said" || { fail "THREATS 79: the undone core.worktree is said"; diag "$out"; }
# git's own for a submodule (added in the jail above) stays
wt=$(git -C "$W1/clone/.git/modules/sub" config core.worktree)
[ -n "$wt" ] && [ "$(cd "$W1/clone/.git/modules/sub" && cd "$wt" && pwd -P)" = "$(cd "$W1/clone/sub" && pwd -P)" ] &&
	pass "THREATS 79: a submodule's core.worktree, written by git submodule add in the jail, stays" ||
	fail "THREATS 79: a submodule's core.worktree, written by git submodule add in the jail, stays (got '$wt')"
# a submodule's git directory naming a tree outside the repository: undone
out=$(in_jail -C "$W1/clone" -- sh -c 'git config -f .git/modules/sub/config core.worktree "$0"; touch "$1"' "$T/private" "$M/started-wtsub" 2>&1)
started "$M/started-wtsub" "pointing a submodule's core.worktree outside"
# (dropped: an inert setting's value is the run's, and this one is not;
# git finds the submodule's tree from its .git file all the same)
[ "$(git -C "$W1/clone/.git/modules/sub" config core.worktree)" != "$T/private" ] &&
	git -C "$W1/clone/sub" status --short >"$T/substatus" 2>&1 && ! grep -q secret.txt "$T/substatus" &&
	pass "THREATS 79: a submodule's core.worktree pointed outside the repository is undone, git status there works" ||
	{ fail "THREATS 79: a submodule's core.worktree pointed outside the repository is undone, git status there works"; diag "$out"; }

# ---------------------------------------------- a rebase stopped midway

# git rebase --continue runs the exec lines of .git/rebase-merge's todo
# list. A run may leave a rebase of its own stopped (a conflict): that
# stays; one whose todo list holds an exec line is set aside.
# two_commits DIR: a repository with two commits, for a rebase -i of one.
two_commits() {
	fresh_repo "$1"
	echo two >>"$1/file.txt"
	git -C "$1" commit -q -a -m second
}
# stop_rebase DIR: an interactive rebase of the last commit, stopped at a
# break before it (as git rebase -i leaves it for --continue).
stop_rebase() {
	git -C "$1" -c sequence.editor="sed -i '1i break'" rebase -q -i HEAD~1 >/dev/null 2>&1
}
two_commits "$T/ctl/rebase"
stop_rebase "$T/ctl/rebase"
echo "exec \"$EVIL\" rebase" >>"$T/ctl/rebase/.git/rebase-merge/git-rebase-todo"
control_vector rebase "$T/ctl/rebase" rebase --continue
# planted by the run, in a repository with no rebase under way
two_commits "$W/rebase"
out=$(in_jail -C "$W/rebase" -- bash -c "$(declare -f stop_rebase); stop_rebase . &&
	echo 'exec \"$EVIL\" rebase' >>.git/rebase-merge/git-rebase-todo && touch '$M/started-rebase'" 2>&1)
started "$M/started-rebase" "a rebase stopped in the jail, an exec line added to its todo"
after_vector rebase "$W/rebase" rebase --continue
[ ! -e "$W/rebase/.git/rebase-merge" ] && printf '%s\n' "$out" | grep -q "trust hand-off '.git/rebase-merge'" &&
	pass "THREATS 80: the rebase state with an exec line is set aside, and said" ||
	{ fail "THREATS 80: the rebase state with an exec line is set aside, and said"; diag "$out"; }
# the user's own rebase under way, an exec line added by the run: the
# todo list comes back as it was, and the rebase goes on outside
two_commits "$W/rebase2"
stop_rebase "$W/rebase2"
todo=$(cat "$W/rebase2/.git/rebase-merge/git-rebase-todo")
out=$(in_jail -C "$W/rebase2" -- sh -c 'echo "x \"$0\" rebase" >>.git/rebase-merge/git-rebase-todo; touch "$1"' "$EVIL" "$M/started-rebase2" 2>&1)
started "$M/started-rebase2" "an exec line added to the user's own rebase"
[ "$(cat "$W/rebase2/.git/rebase-merge/git-rebase-todo" 2>&1)" = "$todo" ] &&
	pass "THREATS 80: the user's rebase under way gets its todo list back" ||
	{ fail "THREATS 80: the user's rebase under way gets its todo list back"; diag "$out"; }
after_vector rebase "$W/rebase2" rebase --continue
[ "$(git -C "$W/rebase2" log -1 --format=%s)" = second ] && [ ! -e "$W/rebase2/.git/rebase-merge" ] &&
	pass "THREATS 80: and git rebase --continue finishes it outside" ||
	fail "THREATS 80: and git rebase --continue finishes it outside"
# cherry-pick's sequencer: an exec line there is set aside too
two_commits "$W/seq"
out=$(in_jail -C "$W/seq" -- sh -c 'mkdir -p .git/sequencer && git rev-parse HEAD >.git/sequencer/head &&
	printf "pick %s x\nexec \"%s\" seq\n" "$(git rev-parse HEAD)" "$0" >.git/sequencer/todo; touch "$1"' "$EVIL" "$M/started-seq" 2>&1)
started "$M/started-seq" "a sequencer todo list with an exec line"
[ ! -e "$W/seq/.git/sequencer" ] && pass "THREATS 80: a cherry-pick's sequencer/ with an exec line is set aside" ||
	{ fail "THREATS 80: a cherry-pick's sequencer/ with an exec line is set aside"; diag "$out"; }
# a rebase the run stopped on a conflict, no exec: kept, and finished outside
two_commits "$W/conflict"
git -C "$W/conflict" checkout -q -b side HEAD~1
echo other >>"$W/conflict/file.txt"
git -C "$W/conflict" commit -q -a -m side
out=$(in_jail -C "$W/conflict" -- sh -c 'git rebase -q master >/dev/null 2>&1; test -d .git/rebase-merge && touch "$0"' "$M/started-conflict" 2>&1)
started "$M/started-conflict" "a rebase in the jail stopped on a conflict"
[ -d "$W/conflict/.git/rebase-merge" ] && [ -z "$out" ] &&
	pass "THREATS 80: a rebase the run stopped on a conflict stays, nothing said" ||
	{ fail "THREATS 80: a rebase the run stopped on a conflict stays, nothing said"; diag "$out"; }
echo resolved >"$W/conflict/file.txt"
git -C "$W/conflict" add file.txt
GIT_EDITOR=true git -C "$W/conflict" rebase --continue >/dev/null 2>&1 && [ "$(git -C "$W/conflict" log -1 --format=%s)" = side ] &&
	pass "THREATS 80: the conflict resolved outside, git rebase --continue finishes it" ||
	fail "THREATS 80: the conflict resolved outside, git rebase --continue finishes it"

# ------------------------------------------- a hand-off by another name

# A hard link to a hand-off is a second name the run can write it by:
# the namespace jail binds the hand-off's path read-only, not the inode,
# and the guard's snapshot stands for the path. A hand-off with another
# name gets a file of its own when a run begins; one the run links is
# undone when it ends.
plant_fsmonitor() {
	printf '[core]\n\tfsmonitor = "%s %s"\n' "$EVIL" "$2" >>"$1"
}
fresh_repo "$T/ctl/alias"
ln "$T/ctl/alias/.git/config" "$T/ctl/alias/notes.txt"
plant_fsmonitor "$T/ctl/alias/notes.txt" alias
control_vector alias "$T/ctl/alias" status
# linked before the run (by an earlier run, or anyone): written through
# while the run goes on, read by git outside meanwhile
fresh_repo "$W/alias"
ln "$W/alias/.git/config" "$W/alias/notes.txt"
rm -f "$T/pwned-alias"
# (not quiet: the note is what is looked for)
jail --net off --write "$M" -C "$W/alias" -- bash -c "$(declare -f plant_fsmonitor); EVIL='$EVIL'; plant_fsmonitor notes.txt alias 2>/dev/null;
	touch '$M/started-alias'; sleep 2" >"$T/alias.out" 2>&1 &
jpid=$!
wait_until test -e "$M/started-alias"
run_git_outside "$W/alias" status
wait "$jpid"
out=$(cat "$T/alias.out")
started "$M/started-alias" "writing .git/config through a hard link made before the run"
pwned alias && fail "THREATS 81: what the run wrote through a hard link to .git/config does not run at 'git status' outside, during the run" ||
	pass "THREATS 81: what the run wrote through a hard link to .git/config does not run at 'git status' outside, during the run"
[ "$(stat -c %h "$W/alias/.git/config")" = 1 ] && ! grep -q fsmonitor "$W/alias/.git/config" &&
	printf '%s\n' "$out" | grep -q "^stockade: gave trust hand-off '.git/config' a file of its own: it had another name" &&
	pass "THREATS 81: the hand-off got a file of its own at the run's start, and it is said" ||
	{ fail "THREATS 81: the hand-off got a file of its own at the run's start, and it is said"; diag "$out"; }
# linked by the run: undone at its end (the namespace jail refuses the
# link itself, across its read-only bind)
fresh_repo "$W/alias2"
mkdir -p "$W/alias2/.git/hooks"
printf '#!/bin/sh\nexit 0\n' >"$W/alias2/.git/hooks/pre-commit"
chmod +x "$W/alias2/.git/hooks/pre-commit"
out=$(in_jail -C "$W/alias2" -- sh -c 'ln .git/config notes.txt 2>/dev/null; ln .git/hooks/pre-commit hook.txt 2>/dev/null; touch "$0"' "$M/started-alias2" 2>&1)
started "$M/started-alias2" "hard links to .git/config and a hook made in the jail"
[ "$(stat -c %h "$W/alias2/.git/config")" = 1 ] && [ "$(stat -c %h "$W/alias2/.git/hooks/pre-commit")" = 1 ] &&
	pass "THREATS 81: after the run, .git/config and the hook have no other name" ||
	{ fail "THREATS 81: after the run, .git/config and the hook have no other name"; diag "$out"; }
if [ "$TEST_BACKEND" = landlock ]; then
	printf '%s\n' "$out" | grep -q "trust hand-off '.git/config' (changed)" &&
		printf '%s\n' "$out" | grep -q "trust hand-off '.git/hooks/pre-commit' (changed)" &&
		pass "THREATS 81: landlock: a hand-off that gained a link is undone as changed, and said" ||
		{ fail "THREATS 81: landlock: a hand-off that gained a link is undone as changed, and said"; diag "$out"; }
fi
[ "$(git -C "$W/alias2" config core.bare)" = false ] && git -C "$W/alias2" status >/dev/null 2>&1 &&
	pass "THREATS 81: and the repository works as before" || fail "THREATS 81: and the repository works as before"
# A folder of the workspace the user cannot read (a database's data
# directory of another user's) is no hand-off: it is named as a folder
# the guard cannot look into. As root, for another user's run: a folder
# of the user's own the guard opens up, and root reads every folder.
if is_root && id stockade-ci >/dev/null 2>&1; then
	W9=$(mktemp -d /tmp/stockade-test-unreadable.XXXXXX)
	mkdir -p "$W9/data/pgdata"
	chown stockade-ci "$W9" "$W9/data"
	chmod 700 "$W9/data/pgdata"
	out=$(su stockade-ci -s /bin/sh -c "cd '$W9' && '$STOCKADE' -v --backend '$TEST_BACKEND' --net off -- true" 2>&1)
	printf '%s\n' "$out" | grep -q "folder 'data/pgdata' is unreadable: the guard cannot look inside it" &&
		! printf '%s\n' "$out" | grep -q "trust hand-off 'data/pgdata'" &&
		pass "an unreadable folder is named as one the guard cannot look into, not as a hand-off" ||
		{ fail "an unreadable folder is named as one the guard cannot look into, not as a hand-off"; diag "$out"; }
	rm -rf "$W9"
fi

# ---------------------------------------------------------- the quarantine

list=$("$STOCKADE" quarantine 2>&1)
id=$(printf '%s\n' "$list" | awk '/\/tools\/\.mcp\.json$/ { print $1; exit }')
[ -n "$id" ] && pass "stockade quarantine lists the .mcp.json set aside, with its id" ||
	{ fail "stockade quarantine lists the .mcp.json set aside, with its id"; diag "$list"; }
if [ -n "$id" ]; then
	out=$("$STOCKADE" quarantine restore "$id" 2>&1)
	st=$?
	[ $st -eq 0 ] && grep -q "mcpServers" "$W3/.mcp.json" &&
		pass "stockade quarantine restore puts it back" || { fail "stockade quarantine restore puts it back (status $st)"; diag "$out"; }
	out=$("$STOCKADE" quarantine restore "$id" 2>&1)
	[ $? -eq 125 ] && pass "restoring it again: no such item, 125" || { fail "restoring it again: no such item, 125"; diag "$out"; }
fi

plan_done
