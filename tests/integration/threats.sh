# Rows of ../shared/THREATS.md (listed in tests/threats-coverage.txt) that
# have no natural home among the mechanisms' own tests. Each names its row;
# each tries the attack outside first (it works there, or the same probe
# succeeds) and then in the jail, where the probe must say it started and
# then fail as the row expects.
. tests/lib.sh

new_places
NONCE=$(nonce_new)
canary_home "$HOME" "$NONCE"
HIDDEN=$(hidden_errno)
RO=$(readonly_errno)
OUT="$T/outputs"
: >"$OUT"
in_jail() {
	jail -q --net off -C "$W" "$@"
}
record() {
	printf '%s\n' "$PROBE_OUTPUT" >>"$OUT"
}
# man_says TEXT: stockade.1, its lines joined, holds TEXT.
man_says() {
	tr '\n' ' ' <stockade.1 | sed 's/\\-/-/g; s/\\f[BIRP]//g' | grep -q -F -- "$1"
}
# A process of the user's outside the run.
sleep 300 &
outside=$!
at_exit kill "$outside"

# ---- THREATS 8: the launcher overwritten through /proc/PID/exe. On the
# landlock backend stockade is the command's parent; in the namespace jail
# its pid is not in the jail's /proc, and /proc/1 is the jail's own init.
expect_control "THREATS 8 control: outside, another process's /proc/PID/exe opens" -- "$PROBE" read "/proc/$outside/exe"
sum=$(sha256sum <"$STOCKADE")
expect_probe "THREATS 8: writing stockade through /proc/\$PPID/exe is refused" \
	"errno $([ "$TEST_BACKEND" = namespaces ] && echo ENOENT || echo EACCES)" -- \
	sh -c 'exec "$@" write "/proc/$$/exe"' sh "${JAIL[@]}" -q --net off -C "$W" -- "$PROBE"
expect_probe "THREATS 8: writing the jail's /proc/1/exe is refused" "errno EACCES" -- in_jail -- "$PROBE" write /proc/1/exe
[ "$(sha256sum <"$STOCKADE")" = "$sum" ] && pass "THREATS 8: stockade's binary is unchanged" || fail "THREATS 8: stockade's binary is unchanged"

# ---- THREATS 9: stockade itself in a writable grant: refused before
# anything runs. The control: the same run without that grant runs.
expect_probe "THREATS 9 control: without the grant the command runs" ok -- in_jail -- "$PROBE" write "$W/ran9"
fails "THREATS 9: a --write of stockade's own folder is refused (125)" "stockade itself .* would be writable from the jail" -- \
	in_jail --write "$(dirname "$STOCKADE")" -- "$PROBE" write "$W/never9"
cp "$STOCKADE" "$W/stockade-copy"
fails "THREATS 9: a stockade run from inside the workspace is refused (125)" "stockade itself .* would be writable from the jail" -- \
	"$W/stockade-copy" --backend "$TEST_BACKEND" -q --net off -C "$W" -- "$PROBE" write "$W/never9"
rm -f "$W/stockade-copy"
[ ! -e "$W/never9" ] && pass "THREATS 9: the refused runs ran nothing" || fail "THREATS 9: the refused runs ran nothing"

# ---- THREATS 10: a setuid binary gains nothing (no_new_privs). Root can
# make one owned by another user; anyone sees no_new_privs set.
expect_probe "THREATS 10: no_new_privs is set in the jail" ok -- in_jail -- "$PROBE" caps
printf '%s\n' "$PROBE_OUTPUT" | grep -q '^NoNewPrivs:[[:space:]]*1$' && pass "THREATS 10: NoNewPrivs: 1" || fail "THREATS 10: NoNewPrivs: 1"
"$PROBE" caps | grep -q '^NoNewPrivs:[[:space:]]*0$' && pass "THREATS 10 control: outside, NoNewPrivs: 0" || fail "THREATS 10 control: outside, NoNewPrivs: 0"
if is_root; then
	mkdir -p "$T/suid"
	chmod 755 "$T" "$T/suid"
	cp "$PROBE" "$T/suid/probe"
	chown 65534:65534 "$T/suid/probe"
	chmod 4755 "$T/suid/probe"
	expect_control "THREATS 10 control: outside, the setuid probe runs as its owner" -- "$T/suid/probe" id
	case $PROBE_OUTPUT in *" euid=65534 "*) pass "THREATS 10 control: euid 65534 outside" ;; *) fail "THREATS 10 control: euid 65534 outside"; diag "$PROBE_OUTPUT" ;; esac
	expect_probe "THREATS 10: the setuid probe runs in the jail" ok -- in_jail --read "$T/suid" -- "$T/suid/probe" id
	case $PROBE_OUTPUT in *" euid=0 "*) pass "THREATS 10: its euid stays the caller's (0)" ;; *) fail "THREATS 10: its euid stays the caller's"; diag "$PROBE_OUTPUT" ;; esac
fi

# ---- THREATS 15: a hard link made before the run cannot be hidden by
# path; a documented limit.
ln "$HOME/.ssh/id_rsa" "$W/prelinked"
expect_probe "THREATS 15 (documented limit): a hard link to a secret made before the run is readable by its other name" ok -- \
	in_jail -- "$PROBE" read "$W/prelinked"
man_says "A hard link to a secret made before the run is reachable through its other name" &&
	pass "THREATS 15: stockade.1 documents it" || fail "THREATS 15: stockade.1 documents it"
rm -f "$W/prelinked"
mkdir -p "$W/.git/hooks"
expect_control "THREATS 15 control: outside, a file links into .git/hooks" -- "$PROBE" link "$W/ran9" "$T/linked-control"
echo 'touch pwned' >"$W/hook-src"
in_jail -- "$PROBE" link "$W/hook-src" "$W/.git/hooks/pre-commit" >"$T/link15.out" 2>&1
grep -q '^probe: started' "$T/link15.out" && [ ! -e "$W/.git/hooks/pre-commit" ] &&
	pass "THREATS 15: a file linked into .git/hooks does not stay ($(grep -E '^probe: (ok|errno)' "$T/link15.out"))" ||
	{ fail "THREATS 15: a file linked into .git/hooks does not stay"; diag "$(cat "$T/link15.out")"; }
rm -rf "$W/.git" "$W"/.git.stockade-* "$W/hook-src"

# ---- THREATS 20: the setup race, on the backend under test: a directory
# granted to the run flips to a symlink to ~/.ssh while jails start.
mkdir -p "$T/flip"
echo "not a secret" >"$T/flip/file"
(
	while :; do
		mv "$T/flip" "$T/flip.dir" 2>/dev/null && ln -s "$HOME/.ssh" "$T/flip" 2>/dev/null
		rm -f "$T/flip" 2>/dev/null && mv "$T/flip.dir" "$T/flip" 2>/dev/null
	done
) &
flipper=$!
at_exit kill "$flipper"
runs=0 shown=0 refused=0
# 20 s of races, or on a slow machine as long as 100 jails take (at most
# 180 s).
end=$((SECONDS + 20)) hard=$((SECONDS + 180))
while [ $runs -lt 300 ] && { [ $SECONDS -lt $end ] || { [ $runs -lt 100 ] && [ $SECONDS -lt $hard ]; }; }; do
	out=$(in_jail --read "$T/flip" -- sh -c "cat '$T/flip/id_rsa' '$T/flip/file' 2>/dev/null" 2>&1)
	case $out in *"$NONCE"*) shown=$((shown + 1)) ;; esac
	case $out in *"stockade: "*) refused=$((refused + 1)) ;; esac
	runs=$((runs + 1))
done
kill "$flipper" 2>/dev/null
wait "$flipper" 2>/dev/null
[ -d "$T/flip.dir" ] && { rm -f "$T/flip"; mv "$T/flip.dir" "$T/flip"; }
[ "$shown" -eq 0 ] && pass "THREATS 20: the flip race never showed ~/.ssh ($runs jails, $refused refused to start)" ||
	fail "THREATS 20: the flip race never showed ~/.ssh ($shown of $runs jails showed it)"
[ "$runs" -ge 100 ] && pass "THREATS 20: the race ran at least 100 jails" || fail "THREATS 20: the race ran at least 100 jails (ran $runs)"
ln -s "$HOME/.ssh" "$T/flipped"
expect_control "THREATS 20 control: outside, the flipped path reads the key" -- "$PROBE" read "$T/flipped/id_rsa"
rm -f "$T/flipped"

# ---- THREATS 21: a host mount made under a granted tree after the run
# started. The namespace jail's mounts are private: it does not appear.
# The landlock backend's grant covers it (documented). Mounting needs root.
if is_root; then
	mkdir -p "$W/later"
	mkdir -p "$T/marks21"
	in_jail --write "$T/marks21" -- sh -c 'touch "$0/started"; sleep 2; ls "$1"' "$T/marks21" "$W/later" >"$T/later.out" 2>&1 &
	jpid=$!
	wait_until test -e "$T/marks21/started"
	mount -t tmpfs tmpfs "$W/later" && at_exit umount -l "$W/later"
	echo "$NONCE" >"$W/later/new-mount-file"
	wait "$jpid"
	[ -e "$T/marks21/started" ] && pass "THREATS 21: the run started before the mount" || fail "THREATS 21: the run started before the mount"
	expect_control "THREATS 21 control: outside, the new mount's file is there" -- "$PROBE" read "$W/later/new-mount-file"
	if [ "$TEST_BACKEND" = namespaces ]; then
		grep -q new-mount-file "$T/later.out" && fail "THREATS 21: a mount made after the start does not appear in the jail" ||
			pass "THREATS 21: a mount made after the start does not appear in the jail"
	else
		grep -q new-mount-file "$T/later.out" && pass "THREATS 21 (documented): on the landlock backend it appears under the grant" ||
			{ fail "THREATS 21 (documented): on the landlock backend it appears under the grant"; diag "$(cat "$T/later.out")"; }
	fi
	umount -l "$W/later"
	rmdir "$W/later"
fi
man_says "A file system mounted later under a granted path" && pass "THREATS 21: stockade.1 documents a later mount" ||
	fail "THREATS 21: stockade.1 documents a later mount"

# ---- THREATS 22: the metadata of a hidden file.
expect_control "THREATS 22 control: outside, stat of ~/.ssh/id_rsa" -- "$PROBE" stat "$HOME/.ssh/id_rsa"
if [ "$TEST_BACKEND" = namespaces ]; then
	expect_probe "THREATS 22: stat of a hidden file finds nothing" "errno ENOENT" -- in_jail -- "$PROBE" stat "$HOME/.ssh/id_rsa"
else
	expect_probe "THREATS 22 (documented limit): stat of a hidden file succeeds on the landlock backend" ok -- \
		in_jail -- "$PROBE" stat "$HOME/.ssh/id_rsa"
	expect_probe "THREATS 22: its content is still refused" "errno EACCES" -- in_jail -- "$PROBE" read "$HOME/.ssh/id_rsa"
	record
fi
man_says "The metadata of a hidden file (stat, readlink) and the names under a hidden directory can be read" &&
	pass "THREATS 22: stockade.1 documents the metadata of hidden files" || fail "THREATS 22: stockade.1 documents the metadata"

# ---- THREATS 23: every right of a read-only tree is handled: no fifo,
# socket, removal or rename there, no exec of what is hidden.
mkdir -p "$T/rotree/d"
echo keep >"$T/rotree/f"
cp "$PROBE" "$HOME/.ssh/tool"
expect_control "THREATS 23 control: outside, a fifo is made in the tree" -- "$PROBE" mkfifo "$T/rotree/fifo-control"
rm -f "$T/rotree/fifo-control"
expect_control "THREATS 23 control: outside, the hidden program runs" -- "$PROBE" exec "$HOME/.ssh/tool" cwd
for op in "mkfifo $T/rotree/fifo" "mksock $T/rotree/sock" "unlink $T/rotree/f" "rmdir $T/rotree/d" "rename $T/rotree/f $T/rotree/g" "mknod-char $T/rotree/null"; do
	# shellcheck disable=SC2086 # the words are the probe's arguments
	expect_probe "THREATS 23: ${op%% *} in a read-only tree is refused" "errno $RO" -- in_jail --read "$T/rotree" -- "$PROBE" $op
done
[ -f "$T/rotree/f" ] && [ -d "$T/rotree/d" ] && [ ! -e "$T/rotree/g" ] && pass "THREATS 23: the tree is unchanged" || fail "THREATS 23: the tree is unchanged"
expect_probe "THREATS 23: a hidden program cannot be run" "errno $HIDDEN" -- in_jail -- "$PROBE" exec "$HOME/.ssh/tool" cwd
rm -f "$HOME/.ssh/tool"

# ---- THREATS 24: devices of the host.
for dev in /dev/kvm /dev/fuse /dev/kmsg /dev/vsock /dev/vda /dev/tty0 /dev/loop0 /dev/input /dev/dri /dev/snd /dev/mqueue; do
	[ -e "$dev" ] || continue
	expect_control "THREATS 24 control: outside, $dev is there" -- "$PROBE" stat "$dev"
	if [ -d "$dev" ]; then
		expect_probe "THREATS 24: $dev is out of reach" "errno $HIDDEN" -- in_jail -- "$PROBE" ls "$dev"
	else
		expect_probe "THREATS 24: $dev is out of reach" "errno $HIDDEN" -- in_jail -- "$PROBE" read "$dev"
	fi
done
for dev in /dev/null /dev/zero /dev/urandom; do
	expect_probe "THREATS 24: $dev is there" ok -- in_jail -- "$PROBE" stat "$dev"
done

# ---- THREATS 27: no .git at the start: the run makes one with a hook;
# and a hooksPath naming an in-tree folder that does not exist yet.
W27="$T/fresh27"
mkdir -p "$W27"
export GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid
plant_hook() { # DIR: the hook leaves DIR/pwned when it runs
	printf '#!/bin/sh\ntouch "%s/pwned"\n' "$1" >"$2"
	chmod +x "$2"
}
git -C "$T" init -q ctl27
plant_hook "$T/ctl27" "$T/ctl27/.git/hooks/pre-commit"
git -C "$T/ctl27" commit -q --allow-empty -m x
[ -e "$T/ctl27/pwned" ] && pass "THREATS 27 control: outside, a hook in a fresh repository runs at commit" ||
	fail "THREATS 27 control: outside, a hook in a fresh repository runs at commit"
jail -q --net off -C "$W27" -- sh -c "git init -q . && printf '#!/bin/sh\ntouch \"%s/pwned\"\n' '$W27' >.git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && touch started" >"$T/init27.out" 2>&1
[ -e "$W27/started" ] && pass "THREATS 27: the jailed run made a repository with a hook" ||
	{ fail "THREATS 27: the jailed run made a repository with a hook"; diag "$(cat "$T/init27.out")"; }
git -C "$W27" commit -q --allow-empty -m x >/dev/null 2>&1
[ ! -e "$W27/pwned" ] && pass "THREATS 27: a hook of a repository made in the run does not run outside" ||
	fail "THREATS 27: a hook of a repository made in the run does not run outside"
W27b="$T/hookspath27"
git -C "$T" init -q hookspath27
git -C "$W27b" config core.hooksPath .husky/_
git -C "$W27b" commit -q --allow-empty -m x
cp -r "$W27b" "$T/ctl27b"
mkdir -p "$T/ctl27b/.husky/_"
plant_hook "$T/ctl27b" "$T/ctl27b/.husky/_/pre-commit"
git -C "$T/ctl27b" commit -q --allow-empty -m y
[ -e "$T/ctl27b/pwned" ] && pass "THREATS 27 control: outside, a hook in the absent hooksPath folder runs" ||
	fail "THREATS 27 control: outside, a hook in the absent hooksPath folder runs"
jail -q --net off -C "$W27b" -- sh -c "mkdir -p .husky/_ && printf '#!/bin/sh\ntouch \"%s/pwned\"\n' '$W27b' >.husky/_/pre-commit && chmod +x .husky/_/pre-commit; touch started" >/dev/null 2>&1
[ -e "$W27b/started" ] && pass "THREATS 27: the jailed run planted in the hooksPath folder" || fail "THREATS 27: the jailed run planted in the hooksPath folder"
git -C "$W27b" commit -q --allow-empty -m z >/dev/null 2>&1
[ ! -e "$W27b/pwned" ] && pass "THREATS 27: the hook planted in the absent hooksPath folder does not run outside" ||
	fail "THREATS 27: the hook planted in the absent hooksPath folder does not run outside"

# ---- THREATS 30: the supervisor (stockade itself, on the landlock
# backend the command's parent) cannot be traced or read.
expect_control "THREATS 30 control: outside, a process of the user is traced" -- "$PROBE" ptrace "$outside"
for op in ptrace read-mem; do
	expect_probe "THREATS 30: $op of stockade itself is refused" \
		"errno $([ "$TEST_BACKEND" = namespaces ] && { [ $op = ptrace ] && echo ESRCH || echo ENOENT; } || { [ $op = ptrace ] && echo EPERM || echo EACCES; })" -- \
		sh -c 'exec "$@" "$$"' sh "${JAIL[@]}" -q --net off -C "$W" -- "$PROBE" "$op"
done

# ---- THREATS 31: kill(-1, SIGKILL) and a signal to stockade. The run's
# own processes may be signalled; the outside canary survives.
expect_probe "THREATS 31: kill(-1, SIGKILL) in the jail reaches at most the run's own" \
	"$([ "$TEST_BACKEND" = namespaces ] && echo "errno ESRCH" || echo ok)" -- in_jail -- "$PROBE" kill -1 KILL
kill -0 "$outside" && pass "THREATS 31: the outside canary survives kill(-1)" || fail "THREATS 31: the outside canary survives kill(-1)"
expect_probe "THREATS 31: stockade itself cannot be killed from the jail" "errno $(outside_pid_errno)" -- \
	sh -c 'exec "$@" "$$" KILL' sh "${JAIL[@]}" -q --net off -C "$W" -- "$PROBE" kill
expect_control "THREATS 31 control: outside, the canary can be signalled" -- "$PROBE" kill "$outside" 0

# ---- THREATS 32: the kernel keyrings: nothing of the user's keys.
if command -v keyctl >/dev/null; then
	keyctl add user stockade-test "$NONCE" @u >/dev/null 2>&1
fi
expect_control "THREATS 32 control: outside, the user keyring is read" -- "$PROBE" keyring-read user
for ring in session user; do
	expect_probe "THREATS 32: the $ring keyring is refused" "errno EPERM" -- in_jail -- "$PROBE" keyring-read "$ring"
	record
done

# ---- THREATS 33: the host's System V shared memory.
shm=$(python3 - "$NONCE" <<'PY'
import ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
sid = libc.shmget(0, 4096, 0o1600)
p = libc.shmat(sid, None, 0)
ctypes.memmove(p, sys.argv[1].encode(), len(sys.argv[1]))
print(sid)
PY
)
at_exit ipcrm -m "$shm"
expect_control "THREATS 33 control: outside, the user's segment is attached" -- "$PROBE" shmat "$shm"
case $PROBE_OUTPUT in *"$NONCE"*) pass "THREATS 33 control: and holds the canary" ;; *) fail "THREATS 33 control: and holds the canary" ;; esac
expect_probe "THREATS 33: the host's segment is out of reach" \
	"errno $([ "$TEST_BACKEND" = namespaces ] && echo EINVAL || echo EPERM)" -- in_jail -- "$PROBE" shmat "$shm"
record

# ---- THREATS 34: dropping supplementary groups.
if is_root; then
	expect_control "THREATS 34 control: outside, root calls setgroups" -- "$PROBE" setgroups
fi
expect_probe "THREATS 34: setgroups in the jail is refused" "errno EPERM" -- in_jail -- "$PROBE" setgroups

# ---- THREATS 35: /proc and /sys of the host.
expect_control "THREATS 35 control: outside, /proc/sys/kernel/hostname reads" -- "$PROBE" read /proc/sys/kernel/hostname
expect_probe "THREATS 35: a write to /proc/sys is refused" "errno EACCES" -- in_jail -- "$PROBE" write /proc/sys/kernel/hostname
expect_probe "THREATS 35: /proc/sysrq-trigger is not there" "errno ENOENT" -- in_jail -- "$PROBE" write /proc/sysrq-trigger
expect_probe "THREATS 35: /proc/kcore is not there" "errno ENOENT" -- in_jail -- "$PROBE" read /proc/kcore
expect_control "THREATS 35 control: outside, /sys/kernel/mm/transparent_hugepage/enabled reads" -- "$PROBE" read /sys/kernel/mm/transparent_hugepage/enabled
expect_probe "THREATS 35: a write under /sys is refused" "errno $RO" -- in_jail -- "$PROBE" write /sys/kernel/mm/transparent_hugepage/enabled
expect_control "THREATS 35 control: outside, another process's cmdline reads" -- "$PROBE" read "/proc/$outside/cmdline"
if [ "$TEST_BACKEND" = namespaces ]; then
	expect_probe "THREATS 35: another process's cmdline is not in the jail's /proc" "errno ENOENT" -- in_jail -- "$PROBE" read "/proc/$outside/cmdline"
else
	expect_probe "THREATS 35 (documented limit): another process's cmdline reads on the landlock backend" ok -- \
		in_jail -- "$PROBE" read "/proc/$outside/cmdline"
	man_says "of your other processes are readable (Landlock cannot tell the run's own" &&
		pass "THREATS 35: stockade.1 documents it" || fail "THREATS 35: stockade.1 documents it"
fi

# ---- THREATS 44: stream protocols beyond TCP. SCTP is refused on both
# backends; MPTCP on the landlock backend (in the namespace jail it
# reaches only the jail's own loopback, like TCP). With the network off
# (in_jail's) there is no inet socket at all; the namespace jail's
# loopback gives inet sockets, and the kernel refuses SCTP there.
expect_control "THREATS 44 control: outside, an MPTCP socket is made" -- "$PROBE" socket inet stream mptcp
for proto in sctp mptcp; do
	[ $proto = mptcp ] && [ "$TEST_BACKEND" = namespaces ] && continue
	for fam in inet inet6; do
		expect_probe "THREATS 44: a $fam $proto socket is refused" "errno EAFNOSUPPORT" -- \
			in_jail -- "$PROBE" socket "$fam" stream "$proto"
		[ "$TEST_BACKEND" = namespaces ] &&
			expect_probe "THREATS 44: a $fam $proto socket is refused with the network loopback" "errno EPROTONOSUPPORT" -- \
				jail -q --net loopback -C "$W" -- "$PROBE" socket "$fam" stream "$proto"
	done
done
expect_probe "THREATS 45: an AF_ALG socket is refused" "errno EAFNOSUPPORT" -- in_jail -- "$PROBE" socket alg seqpacket default

# ---- THREATS 51: a socket of the host's /tmp replaced.
agent_dir=$(mktemp -d /tmp/ssh-stockade-test.XXXXXX)
at_exit rm -rf "$agent_dir"
netpeer_start unix "$agent_dir/agent.1"
ino=$(stat -c %i "$agent_dir/agent.1")
expect_control "THREATS 51 control: outside, the agent socket answers" -- "$PROBE" connect-unix "$agent_dir/agent.1"
expect_probe "THREATS 51: the agent socket cannot be removed from the jail" "errno $HIDDEN" -- in_jail -- "$PROBE" unlink "$agent_dir/agent.1"
expect_probe "THREATS 51: nor a socket made in its place" "errno $HIDDEN" -- in_jail -- "$PROBE" mksock "$agent_dir/agent.2"
[ "$(stat -c %i "$agent_dir/agent.1")" = "$ino" ] && [ ! -e "$agent_dir/agent.2" ] &&
	pass "THREATS 51: the original socket's inode is unchanged" || fail "THREATS 51: the original socket's inode is unchanged"

# ---- THREATS 52: the environment of the jail's pid 1 (the namespace
# jail's init) and of stockade.
export STOCKADE_TEST_TOKEN="$NONCE" GITHUB_TOKEN="$NONCE"
expect_probe "THREATS 52: /proc/1/environ is closed" "errno EACCES" -- in_jail -- "$PROBE" read /proc/1/environ
record
expect_probe "THREATS 52: the command's own environment" ok -- in_jail -- "$PROBE" environ
printf '%s\n' "$PROBE_OUTPUT" | grep -v '^STOCKADE_TEST_TOKEN=' >>"$OUT"
unset STOCKADE_TEST_TOKEN GITHUB_TOKEN

# ---- THREATS 69: the host's cgroup tree. The namespace jail's is its own
# cgroup namespace's, the landlock backend's the run's own groups alone
# (limits.sh); on both, nothing in it can be changed.
own=$(sed -n 's/^0:://p' /proc/self/cgroup)
expect_probe "THREATS 69: no cgroup can be made in the jail" "errno $RO" -- in_jail -- "$PROBE" mkdir "/sys/fs/cgroup/stockade-test-$$"
expect_probe "THREATS 69: no process moved between cgroups" "errno $RO" -- in_jail -- "$PROBE" write /sys/fs/cgroup/cgroup.procs
[ ! -e "/sys/fs/cgroup/stockade-test-$$" ] && pass "THREATS 69: nothing was made in the host's tree" || fail "THREATS 69: nothing was made in the host's tree"
if [ "$TEST_BACKEND" = namespaces ]; then
	expect_probe "THREATS 69: the jail's own cgroup is its namespace's root" ok -- in_jail -- "$PROBE" read /proc/self/cgroup
	case $PROBE_OUTPUT in *"0::/"$'\n'*) pass "THREATS 69: 0::/" ;; *) fail "THREATS 69: 0::/"; diag "$PROBE_OUTPUT (outside: $own)" ;; esac
else
	man_says "the command reads only its own group in each hierarchy" &&
		pass "THREATS 69 (documented): stockade.1 says the landlock backend shows the run's own cgroup alone (limits.sh tests it)" ||
		fail "THREATS 69 (documented): stockade.1 says the landlock backend shows the run's own cgroup alone (limits.sh tests it)"
fi

mapfile -t written < <(find "$W" -type f 2>/dev/null)
assert_absent "$NONCE" "the canary appears in no output of the jail, nor in what it wrote" "$OUT" "${written[@]}"
plan_done
