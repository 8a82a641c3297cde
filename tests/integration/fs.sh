# The filesystem: what the jail hides, what it lets the command read and
# write, and what it leaves untouched. Each case runs the probe outside
# the jail first (it must work there) and then inside.
. tests/lib.sh

T=$(tmpdir_new)
NONCE=$(nonce_new)
export HOME="$T/home"
canary_home "$HOME" "$NONCE"
W="$HOME/proj"
mkdir -p "$W"
OUT="$T/outputs"
: >"$OUT"
HIDDEN=$(hidden_errno)
RO=$(readonly_errno)

# Every output of the jail is kept to look for the canary in the end.
in_jail() {
	jail --net off -C "$W" "$@"
}
record() {
	printf '%s\n' "$PROBE_OUTPUT" >>"$OUT"
}

# Credentials, by their listed paths: hidden with no grant, and hidden
# even when the user grants the whole home.
for f in .ssh/id_rsa .aws/credentials .azure/accessTokens.json .gnupg/private-keys-v1.d/k.key \
	.netrc .docker/config.json .kube/config .npmrc .pypirc .git-credentials \
	.password-store/mail.gpg .config/gh/hosts.yml .config/gcloud/credentials.db \
	.cargo/credentials.toml .local/share/keyrings/login.keyring; do
	expect_control "THREATS 11 control: outside, ~/$f is readable" -- "$PROBE" read "$HOME/$f"
	expect_probe "THREATS 11: ~/$f is hidden" "errno $HIDDEN" -- in_jail -- "$PROBE" read "$HOME/$f"
	record
	expect_probe "THREATS 11: ~/$f is hidden under --read ~" "errno $(covered_errno)" -- in_jail --read "$HOME" -- "$PROBE" read "$HOME/$f"
	record
done

# What stockade does not list is still out of reach: the home is not granted.
expect_probe "THREATS 12: ~/.bash_history is out of reach" "errno $HIDDEN" -- in_jail -- "$PROBE" read "$HOME/.bash_history"
record
expect_probe "THREATS 12: ~/.config/unlisted/token is out of reach" "errno $HIDDEN" -- in_jail -- "$PROBE" read "$HOME/.config/unlisted/token"
record
expect_probe "a granted home file is readable" ok -- in_jail --read "$HOME" -- "$PROBE" read "$HOME/notes.txt"
# An explicit --read of a credential's own path is the user's choice: it
# stands, and stockade says so; a wider grant (--read ~) leaves it hidden.
expect_probe "an explicit --read ~/.ssh lets the command read it" ok -- \
	in_jail --read "$HOME/.ssh" -- "$PROBE" read "$HOME/.ssh/id_rsa"
# (said once while it stays the same, as every such note: -v says it every run)
out=$(in_jail -q --read "$HOME/.ssh" -- true 2>&1; in_jail -v --read "$HOME/.ssh" -- true 2>&1)
case $out in *"'$HOME/.ssh' is a credential stockade hides: the command may read it, as --read on the command line asks"*)
	pass "and says that it lifts a credential's hide, naming the option" ;;
*) fail "and says that it lifts a credential's hide"; diag "$out" ;; esac
# A rule whose own name is a symlink to the credential (planted, or
# flipped there by an earlier run) did not name it: refused, not lifted.
ln -s "$HOME/.ssh" "$T/ssh-link"
expect_control "THREATS 20 control: outside, the link reads the key" -- "$PROBE" read "$T/ssh-link/id_rsa"
fails "THREATS 20: a --read of a symlink to ~/.ssh does not lift its hide: refused (125)" "cannot be honoured" -- \
	in_jail --read "$T/ssh-link" -- "$PROBE" read "$T/ssh-link/id_rsa"
rm -f "$T/ssh-link"
expect_probe "--read ~/.ssh leaves another credential hidden" "errno $HIDDEN" -- \
	in_jail --read "$HOME/.ssh" -- "$PROBE" read "$HOME/.aws/credentials"

# A credential that is a symlink (stow): its target is hidden too.
mkdir -p "$HOME/dotfiles"
echo "$NONCE" >"$HOME/dotfiles/kube-config"
rm -f "$HOME/.kube/config"
ln -s ../dotfiles/kube-config "$HOME/.kube/config"
expect_control "THREATS 14 control: outside, the stowed credential is readable by its real path" -- "$PROBE" read "$HOME/dotfiles/kube-config"
expect_probe "THREATS 14: the target of a credential symlink is hidden under --read ~" "errno $(covered_errno)" -- \
	in_jail --read "$HOME" -- "$PROBE" read "$HOME/dotfiles/kube-config"
record

# A symlink planted in the workspace reaches nothing the jail hides.
ln -s "$HOME/.ssh/id_rsa" "$W/key-link"
expect_control "THREATS 13 control: outside, the workspace link reads the key" -- "$PROBE" read "$W/key-link"
expect_probe "THREATS 13: a workspace symlink to ~/.ssh/id_rsa is refused" "errno $HIDDEN" -- in_jail -- "$PROBE" read "$W/key-link"
record
expect_probe "THREATS 13: a path through /proc/self/root to the key is refused" "errno $HIDDEN" -- \
	in_jail -- "$PROBE" read "/proc/self/root$HOME/.ssh/id_rsa"
record

# A hard link to a hidden file cannot be made into the workspace.
expect_probe "THREATS 15: hard-linking ~/.ssh/id_rsa into the workspace is refused" "errno $([ "$TEST_BACKEND" = namespaces ] && echo ENOENT || echo EXDEV)" -- \
	in_jail -- "$PROBE" link "$HOME/.ssh/id_rsa" "$W/hard"
[ ! -e "$W/hard" ] && pass "THREATS 15: no hard link was made" || fail "THREATS 15: no hard link was made"

# Writes: the workspace and the private tmp, nothing else.
expect_probe "the workspace is writable" ok -- in_jail -- "$PROBE" write "$W/out.txt"
[ -f "$W/out.txt" ] && pass "the workspace file exists afterwards" || fail "the workspace file exists afterwards"
expect_probe "the private TMPDIR is writable" ok -- in_jail --read "$PROBE" -- sh -c 'exec "$0" write "$TMPDIR/scratch"' "$PROBE"
expect_probe "HOME is a fresh, writable directory" ok -- in_jail --read "$PROBE" -- sh -c 'exec "$0" write "$HOME/.fresh"' "$PROBE"
[ ! -e "$HOME/.fresh" ] && pass "the fresh home is not the real home" || fail "the fresh home is not the real home"
sum_before=$(sha256sum "$HOME/.bashrc")
for target in "$HOME/.bashrc" "$HOME/.profile" "$HOME/.config/autostart.desktop" "$HOME/.ssh/authorized_keys"; do
	if fresh_places; then
		# The home is a fresh tmpfs at the same path: the write lands
		# there, or finds no directory, and vanishes with the run.
		in_jail -- "$PROBE" write "$target" >"$T/write.out" 2>&1
		grep -q '^probe: started' "$T/write.out" && pass "THREATS 17: writing $target stays in the jail's fresh home" ||
			fail "THREATS 17: writing $target stays in the jail's fresh home"
	else
		expect_probe "THREATS 17: writing $target is refused" "errno $HIDDEN" -- in_jail -- "$PROBE" write "$target"
	fi
done
[ ! -e "$HOME/.ssh/authorized_keys" ] && pass "THREATS 17: no authorized_keys was planted" || fail "THREATS 17: no authorized_keys was planted"
[ "$(sha256sum "$HOME/.bashrc")" = "$sum_before" ] && pass "THREATS 17: ~/.bashrc is unchanged" || fail "THREATS 17: ~/.bashrc is unchanged"
[ ! -e "$HOME/.profile" ] && pass "no ~/.profile was planted" || fail "no ~/.profile was planted"
real_tmp="/tmp/stockade-test-$NONCE"
if fresh_places; then
	expect_probe "/tmp is the jail's own" ok -- in_jail -- "$PROBE" write "$real_tmp"
else
	expect_probe "the real /tmp is out of reach" "errno $HIDDEN" -- in_jail -- "$PROBE" write "$real_tmp"
fi
[ ! -e "$real_tmp" ] && pass "nothing appeared in the real /tmp" || fail "nothing appeared in the real /tmp"
expect_probe "/var/tmp is out of reach" "errno $HIDDEN" -- in_jail -- "$PROBE" ls /var/tmp
shm="/dev/shm/stockade-test-$NONCE"
echo "$NONCE" >"$shm"
at_exit rm -f "$shm"
expect_control "THREATS 24 control: outside, another program's /dev/shm file is readable" -- "$PROBE" read "$shm"
expect_probe "THREATS 24: /dev/shm of other programs is out of reach" "errno $HIDDEN" -- in_jail -- "$PROBE" read "$shm"
record
expect_probe "the system is read-only" "errno $RO" -- in_jail -- "$PROBE" write /etc/stockade-test
expect_probe "the system is readable" ok -- in_jail -- "$PROBE" read /etc/hostname
expect_probe "/dev/null is writable" ok -- in_jail -- "$PROBE" write /dev/null

# A file the command may read, it may not truncate by any means.
echo "keep me" >"$HOME/ro.txt"
cp "$HOME/ro.txt" "$T/ro-control.txt"
expect_control "THREATS 16 control: outside, truncate(2) works" -- "$PROBE" truncate "$T/ro-control.txt"
expect_probe "THREATS 16: truncate(2) on a read-only grant is refused" "errno $RO" -- in_jail --read "$HOME/ro.txt" -- "$PROBE" truncate "$HOME/ro.txt"
expect_probe "THREATS 16: open(O_RDONLY|O_TRUNC) on a read-only grant is refused" "errno $RO" -- in_jail --read "$HOME/ro.txt" -- "$PROBE" open-trunc "$HOME/ro.txt"
[ "$(cat "$HOME/ro.txt")" = "keep me" ] && pass "THREATS 16: the read-only file kept its content" || fail "THREATS 16: the read-only file kept its content"

# A file's mode, extended attributes (a POSIX ACL among them) and times,
# which Landlock has no right for: changed only where the run may write.
# Before, the landlock backend let a run chmod 644 ~/.ssh/id_rsa (every
# user of the host reads it), chmod 666 ~/.bashrc, set an ACL, or as root
# chmod u+s a program root owns; and a root run on either backend chmod
# the host's /dev/null.
echo "attrs" >"$T/attr-control.txt"
chmod 600 "$HOME/.ssh/id_rsa"
modes_before=$(stat -c %a "$HOME/ro.txt" "$HOME/.ssh/id_rsa" "$HOME/notes.txt" /dev/null)
times_before=$(stat -c %Y "$HOME/ro.txt" "$HOME/notes.txt")
for how in chmod fchmod opath-chmod setxattr fsetxattr acl utimes; do
	expect_control "$how control: outside, it changes a file of the user's" -- "$PROBE" attr "$how" "$T/attr-control.txt" 4777
	expect_probe "$how of a read-only grant is refused" "errno $RO" -- \
		in_jail --read "$HOME/ro.txt" -- "$PROBE" attr "$how" "$HOME/ro.txt" 0777
	expect_probe "$how in the workspace works" ok -- in_jail -- "$PROBE" attr "$how" "$W/out.txt" 0755
done
# A setuid bit, even in the workspace: the file would run as the user (a
# root run's: as root) for every user of the host once the run is over.
# Before, a root run on either backend left a setuid-root program there.
for how in chmod fchmod opath-chmod; do
	expect_probe "$how u+s in the workspace is refused" "errno EPERM" -- in_jail -- "$PROBE" attr "$how" "$W/out.txt" 4755
done
[ ! -u "$W/out.txt" ] && pass "the workspace file has no setuid bit" || fail "the workspace file has no setuid bit"
# A setgid bit on a file is the same: the file would run with the user's
# group for every user of the host. Before, both backends let it be set.
# On a directory it only gives new entries the directory's group, and
# stays (git init --shared=group); the namespace jail's filter cannot
# tell the two apart and has the listener carry it out on a directory.
for how in chmod fchmod opath-chmod; do
	expect_probe "$how g+s of a file in the workspace is refused" "errno EPERM" -- \
		in_jail -- "$PROBE" attr "$how" "$W/out.txt" 2755
	case $PROBE_OUTPUT in
	*"refused: "*"$W/out.txt (EPERM)"*) pass "$how g+s: the refusal is named" ;;
	*) fail "$how g+s: the refusal is named"; diag "$PROBE_OUTPUT" ;;
	esac
done
[ ! -g "$W/out.txt" ] && pass "the workspace file has no setgid bit" || fail "the workspace file has no setgid bit"
mkdir -p "$W/shared"
for how in chmod opath-chmod; do
	chmod 0755 "$W/shared"
	expect_probe "$how g+s of a directory in the workspace works" ok -- in_jail -- "$PROBE" attr "$how" "$W/shared" 2775
	[ "$(stat -c %a "$W/shared")" = 2775 ] && pass "$how g+s: the directory has it" || fail "$how g+s: the directory has it"
done
chmod 0755 "$W/shared"
expect_probe "a relative chmod g+s of a directory above the working directory works" ok -- \
	jail --net off -C "$W/shared" -- "$PROBE" attr chmod ../shared 2770
[ "$(stat -c %a "$W/shared")" = 2770 ] && pass "the relative chmod g+s reached the directory" ||
	fail "the relative chmod g+s reached the directory"
expect_probe "git init --shared=group works" ok -- in_jail -- "$PROBE" exec /bin/sh -c \
	'git init -q --shared=group "$1" && [ -g "$1/.git/objects" ] && echo "probe: ok"' sh "$W/grouprepo"
expect_probe "and so does a plain chmod" ok -- in_jail -- "$PROBE" attr chmod "$W/out.txt" 0644
for how in chmod opath-chmod acl; do
	expect_probe "$how of ~/.ssh/id_rsa is refused" "errno $HIDDEN" -- in_jail -- "$PROBE" attr "$how" "$HOME/.ssh/id_rsa" 0644
	expect_probe "$how of a file of the home not granted is refused" "errno $HIDDEN" -- \
		in_jail -- "$PROBE" attr "$how" "$HOME/notes.txt" 0666
done
expect_probe "utimes of a file of the home not granted is refused" "errno $HIDDEN" -- \
	in_jail -- "$PROBE" attr utimes "$HOME/notes.txt" 0
# Another process's descriptor by its /proc name (or a link the run makes
# to it): the supervisor does not follow it for the command; an unlinked
# file held there was changed before.
echo held >"$T/held"
sleep 60 3<"$T/held" &
holder=$!
at_exit kill "$holder"
rm -f "$T/held"
expect_control "control: outside, chmod through another process's /proc/PID/fd works" -- \
	"$PROBE" attr chmod "/proc/$holder/fd/3" 0600
held_mode=$(stat -L -c %a "/proc/$holder/fd/3")
expect_probe "chmod through another process's /proc/PID/fd is refused" \
	"errno $([ "$TEST_BACKEND" = namespaces ] && echo ENOENT || echo ELOOP)" -- \
	in_jail -- "$PROBE" attr chmod "/proc/$holder/fd/3" 0666
[ "$(stat -L -c %a "/proc/$holder/fd/3")" = "$held_mode" ] && pass "the other process's file kept its mode" ||
	fail "the other process's file kept its mode"
kill "$holder" 2>/dev/null
# /dev/null's own mode, asked again: the user is not its owner (EPERM
# outside), root is.
expect_probe "chmod of the host's /dev/null is refused" "errno $RO" -- \
	in_jail -- "$PROBE" attr chmod /dev/null "$(stat -c %a /dev/null)"
[ "$(stat -c %a "$HOME/ro.txt" "$HOME/.ssh/id_rsa" "$HOME/notes.txt" /dev/null)" = "$modes_before" ] &&
	pass "the modes outside the grants are unchanged" || fail "the modes outside the grants are unchanged"
[ "$(stat -c %Y "$HOME/ro.txt" "$HOME/notes.txt")" = "$times_before" ] &&
	pass "the times outside the grants are unchanged" || fail "the times outside the grants are unchanged"

# A file's flags by ioctl (chattr's FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR),
# which the owner may set through a descriptor open for reading and
# Landlock does not govern. Before, the landlock backend let a run set
# them on a file it may only read (chattr +i on a read-only grant).
echo flags >"$T/flags-control.txt"
for how in set xattr; do
	expect_control "fsflags $how control: outside, it sets a flag of the user's file" -- \
		"$PROBE" fsflags "$how" "$T/flags-control.txt"
	expect_probe "fsflags $how of a read-only grant is refused" "errno $RO" -- \
		in_jail --read "$HOME/ro.txt" -- "$PROBE" fsflags "$how" "$HOME/ro.txt"
	expect_probe "fsflags $how in the workspace works" ok -- in_jail -- "$PROBE" fsflags "$how" "$W/out.txt"
done
if [ "$TEST_BACKEND" = landlock ]; then
	expect_probe "fsflags set of a read-only grant is named" "errno EACCES" -- \
		in_jail --read "$HOME/ro.txt" -- "$PROBE" fsflags set "$HOME/ro.txt"
	case $PROBE_OUTPUT in
	*"refused: ioctl FS_IOC_SETFLAGS $HOME/ro.txt (EACCES)"*) pass "the flags refusal names the request and file" ;;
	*) fail "the flags refusal names the request and file"; diag "$PROBE_OUTPUT" ;;
	esac
fi
# fs-verity and an encryption policy (on an empty directory), the same
# class: the owner's through a descriptor open for reading. Where the
# run may write, the kernel answers as it does outside (this filesystem
# may lack the feature); on a read-only grant the landlock backend's
# supervisor refuses first.
mkdir -p "$T/enc-control" "$W/enc" "$HOME/enc-ro"
for how in verity encrypt; do
	target=$([ "$how" = verity ] && echo "$T/flags-control.txt" || echo "$T/enc-control")
	outside=$("$PROBE" fsflags "$how" "$target" 2>&1 | grep -E '^probe: (ok|errno)' | tail -n 1)
	outside=${outside#probe: }
	[ -n "$outside" ] && pass "fsflags $how control: outside, the kernel answers ($outside)" ||
		fail "fsflags $how control: outside, the kernel answers"
	expect_probe "fsflags $how in the workspace is the kernel's" "$outside" -- \
		in_jail -- "$PROBE" fsflags "$how" "$([ "$how" = verity ] && echo "$W/out.txt" || echo "$W/enc")"
	if [ "$TEST_BACKEND" = landlock ]; then
		expect_probe "fsflags $how of a read-only grant is refused" "errno EACCES" -- \
			in_jail --read "$HOME/ro.txt" --read "$HOME/enc-ro" -- \
			"$PROBE" fsflags "$how" "$([ "$how" = verity ] && echo "$HOME/ro.txt" || echo "$HOME/enc-ro")"
	fi
done
for how in get fsget; do
	expect_probe "fsflags $how of a read-only grant works" ok -- \
		in_jail --read "$HOME/ro.txt" -- "$PROBE" fsflags "$how" "$HOME/ro.txt"
done
lsattr -d "$HOME/ro.txt" | grep -q -- '^[^ ]*d' && fail "the read-only file has no new flag" ||
	pass "the read-only file has no new flag"
chattr -d "$W/out.txt" "$T/flags-control.txt" 2>/dev/null

# inotify, which Landlock does not mediate: a watch on a directory the
# run may not read would tell the names made and opened there. Before,
# the landlock backend let a run watch ~/.ssh.
expect_control "inotify control: outside, ~/.ssh can be watched" -- "$PROBE" inotify "$HOME/.ssh"
expect_probe "inotify on ~/.ssh is refused" "errno $HIDDEN" -- in_jail -- "$PROBE" inotify "$HOME/.ssh"
if [ "$TEST_BACKEND" = landlock ]; then
	case $PROBE_OUTPUT in
	*"refused: inotify_add_watch $HOME/.ssh (EACCES)"*) pass "the watch refusal is named" ;;
	*) fail "the watch refusal is named"; diag "$PROBE_OUTPUT" ;;
	esac
fi
expect_probe "inotify on a home file not granted is refused" "errno $HIDDEN" -- \
	in_jail -- "$PROBE" inotify "$HOME/notes.txt"
mkdir -p "$W/hidden-dir"
expect_control "inotify control: outside, a directory of the workspace can be watched" -- "$PROBE" inotify "$W/hidden-dir"
expect_probe "inotify on a --hide directory in the workspace is refused" "errno $(covered_errno)" -- \
	in_jail --hide "$W/hidden-dir" -- "$PROBE" inotify "$W/hidden-dir"
expect_probe "inotify in the workspace works" ok -- in_jail -- "$PROBE" inotify "$W" watched-new
case $PROBE_OUTPUT in
*"probe: event watched-new"*) pass "the workspace watch sees its event" ;;
*) fail "the workspace watch sees its event"; diag "$PROBE_OUTPUT" ;;
esac
expect_probe "inotify on a read-only grant works" ok -- in_jail --read "$HOME/ro.txt" -- "$PROBE" inotify "$HOME/ro.txt"
expect_probe "inotify on the system works" ok -- in_jail -- "$PROBE" inotify /etc
expect_probe "tail -f in the workspace works" ok -- in_jail -- "$PROBE" exec /bin/sh -c \
	'timeout -s INT 1 tail -f "$1"; [ $? = 124 ] && echo "probe: ok"' sh "$W/out.txt"
case $PROBE_OUTPUT in
*"inotify cannot be used"*|*"refused"*) fail "tail -f watched without a complaint"; diag "$PROBE_OUTPUT" ;;
*) pass "tail -f watched without a complaint" ;;
esac

# No device nodes, for root either; fifos and sockets are fine.
expect_probe "THREATS 23: mknod of a character device is refused" "errno EACCES" -- \
	in_jail -- "$PROBE" mknod-char "$W/null2"
expect_probe "a fifo in the workspace is fine" ok -- in_jail -- "$PROBE" mkfifo "$W/fifo"

# Other processes' secrets in /proc stay closed.
sleep 60 &
outside=$!
at_exit kill "$outside"
expect_control "THREATS 35 control: outside, another process's environ is readable" -- "$PROBE" read-environ "$outside"
expect_probe "THREATS 35: another process's environ is refused" "errno $([ "$TEST_BACKEND" = namespaces ] && echo ENOENT || echo EACCES)" -- \
	in_jail -- "$PROBE" read-environ "$outside"
expect_probe "its own environ is readable" ok -- in_jail -- "$PROBE" read /proc/self/environ

# For root: the system's secrets.
if is_root; then
	expect_control "outside: root reads /etc/shadow" -- "$PROBE" read /etc/shadow
	expect_probe "root in the jail cannot read /etc/shadow" "errno $(covered_errno)" -- in_jail -- "$PROBE" read /etc/shadow
	record
fi

# PATH's tools. A tool installed as a symlink under the home (pipx, uv
# tool: ~/.local/bin/x -> a venv's bin/x) works when a script calls it,
# not only as the command itself; a PATH directory inside the workspace
# (a venv's bin, direnv's PATH_add bin) stays writable.
venv="$HOME/.local/share/pipx/venvs/mytool"
if /usr/bin/python3 -m venv --without-pip "$venv" 2>/dev/null; then
	printf '#!%s\nprint("mytool ran")\n' "$venv/bin/python" >"$venv/bin/mytool"
	chmod +x "$venv/bin/mytool"
	mkdir -p "$HOME/.local/bin"
	ln -sf "$venv/bin/mytool" "$HOME/.local/bin/mytool"
	tp="$HOME/.local/bin:$PATH"
	out=$(PATH=$tp sh -c mytool 2>&1)
	[ "$out" = "mytool ran" ] && pass "control: a script calls the symlinked tool outside" || { fail "control: the symlinked tool outside"; diag "$out"; }
	out=$(PATH=$tp in_jail -- sh -c mytool 2>/dev/null)
	[ "$out" = "mytool ran" ] && pass "a script in the jail calls a pipx-style symlinked tool" ||
		{ fail "a script in the jail calls a pipx-style symlinked tool"; diag "$out"; }
	out=$(PATH=$tp in_jail -- sh -c "cat '$HOME/.ssh/id_rsa'" 2>&1)
	[ "$out" != "$(cat "$HOME/.ssh/id_rsa" 2>/dev/null)" ] || [ ! -e "$HOME/.ssh/id_rsa" ] &&
		pass "the tool's tree brings no credential with it" || fail "the tool's tree brings no credential with it"
else
	fail "python3 -m venv works here (needed by the symlinked tool test)"
fi
mkdir -p "$W/.venv/bin"
out=$(PATH="$W/.venv/bin:$PATH" in_jail -- sh -c "touch '$W/.venv/bin/new-script' && echo wrote" 2>/dev/null)
[ "$out" = wrote ] && pass "a PATH directory in the workspace stays writable" ||
	{ fail "a PATH directory in the workspace stays writable"; diag "$out"; }

mapfile -t written < <(find "$W" -type f)
assert_absent "$NONCE" "THREATS 11, 12, 13, 14: the canary appears in no output of the jail, nor in what it wrote" "$OUT" "${written[@]}"
plan_done
