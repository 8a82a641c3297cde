# Every refusal of the seccomp filter, proven inside the jail: the probe
# reports the filter's errno, and stockade's listener recorded the call in
# the report (so the refusal came from the filter, not from something the
# kernel would have said anyway). Each case runs outside first.
. tests/lib.sh

new_places

# refused DESC ERRNO SYSCALL -- PROBE-ARGS...: inside, the probe gets ERRNO
# and the report lists SYSCALL among the denials.
refused() {
	local desc=$1 errno=$2 call=$3
	shift 4
	rm -f "$T/report.json"
	expect_probe "$desc" "errno $errno" -- jail --net off -C "$W" --report "$T/report.json" -- "$PROBE" "$@"
	if python3 - "$T/report.json" "$call" "$errno" <<'PY'; then
import json, sys
r = json.load(open(sys.argv[1]))
assert any(d["kind"] == "syscall" and d["what"] == sys.argv[2] and d["errno"] == sys.argv[3]
           for d in r["denials"]), r["denials"]
PY
		pass "the listener recorded $call ($errno)"
	else
		fail "the listener recorded $call ($errno)"
		diag "$(cat "$T/report.json" 2>/dev/null)"
	fi
}

# outside CALL -- PROBE-ARGS: the control; whatever the kernel says, it is
# not the filter (the probe passes harmless arguments).
outside() {
	local desc=$1
	shift 2
	"$PROBE" "$@" >"$T/outside" 2>&1
	if grep -q '^probe: started' "$T/outside" && grep -q -E '^probe: (ok|errno )' "$T/outside"; then
		pass "outside: $desc reaches the kernel ($(grep -E '^probe: (ok|errno)' "$T/outside" | tail -1))"
	else
		fail "outside: $desc reaches the kernel"
		diag "$(cat "$T/outside")"
	fi
}

for call in io_uring_setup io_uring_enter io_uring_register keyctl add_key request_key bpf perf_event_open userfaultfd; do
	outside "$call" -- "$call"
	refused "$call is refused" EPERM "$call" -- "$call"
done
for ns in user mount net pid ipc uts cgroup time; do
	outside "unshare($ns)" -- unshare "$ns"
	refused "unshare of a $ns namespace is refused" EPERM unshare -- unshare "$ns"
done
expect_probe "unshare(CLONE_FILES) is allowed" ok -- jail --net off -C "$W" -- "$PROBE" unshare files
for ns in user mount net pid; do
	refused "clone with a new $ns namespace is refused" EPERM clone -- clone "$ns"
done
expect_probe "a plain clone (fork) is allowed" ok -- jail --net off -C "$W" -- "$PROBE" clone none
expect_probe "clone3 answers ENOSYS (callers fall back to clone)" "errno ENOSYS" -- jail --net off -C "$W" -- "$PROBE" clone3
refused "setns is refused" EPERM setns -- setns
outside "mount" -- mount
refused "mount is refused" EPERM mount -- mount
refused "umount2 is refused" EPERM umount2 -- umount2 /nonexistent
refused "pivot_root is refused" EPERM pivot_root -- pivot_root
refused "chroot is refused" EPERM chroot -- chroot /
for call in fsopen fspick fsconfig fsmount move_mount mount_setattr; do
	refused "$call is refused" EPERM "$call" -- "$call"
done
refused "open_tree is refused" EPERM open_tree -- open_tree /
if [ "$TEST_BACKEND" = landlock ]; then
	for call in shmget semget msgget; do
		outside "$call" -- "$call"
		refused "$call (the host's System V IPC) is refused" EPERM "$call" -- "$call"
	done
	refused "mq_open (the host's message queues) is refused" EPERM mq_open -- mq_open
fi

# TIOCSTI and TIOCLINUX, compared on 32 bits (CVE-2019-10063); the
# terminal tests show the injection itself failing.
refused "TIOCSTI is refused" EPERM "ioctl TIOCSTI" -- tiocsti
refused "TIOCSTI with high bits set is refused" EPERM "ioctl TIOCSTI" -- tiocsti-high
refused "TIOCLINUX is refused" EPERM "ioctl TIOCLINUX" -- tioclinux
refused "TIOCSETD is refused" EPERM "ioctl TIOCSETD" -- tiocsetd 0 27

# Sockets the network mode does not give, and TCP Fast Open.
refused "a packet socket is refused" EAFNOSUPPORT socket -- socket packet raw all
refused "a vsock socket is refused" EAFNOSUPPORT socket -- socket vsock stream default
refused "a netlink sock_diag socket is refused" EAFNOSUPPORT socket -- socket netlink raw sock_diag
if [ "$TEST_BACKEND" = landlock ]; then
	refused "an inet socket is refused with --net off" EAFNOSUPPORT socket -- socket inet stream tcp
else
	expect_probe "an inet socket is allowed in the namespace jail (its network namespace decides)" ok -- \
		jail --net off -C "$W" -- "$PROBE" socket inet dgram udp
fi
expect_probe "a Unix socket is allowed" ok -- jail --net off -C "$W" -- "$PROBE" socket unix stream default
expect_probe "a netlink route socket is allowed" ok -- jail --net off -C "$W" -- "$PROBE" socket netlink raw route
expect_probe "an inet socket is allowed with --net on" ok -- jail --net on -C "$W" -- "$PROBE" socket inet stream tcp
rm -f "$T/report.json"
expect_probe "sendto with MSG_FASTOPEN is refused" "errno EPERM" -- jail --net on -C "$W" --report "$T/report.json" -- "$PROBE" fastopen 127.0.0.1 9
grep -q '"what": "sendto"' "$T/report.json" && pass "the listener recorded sendto" || fail "the listener recorded sendto"
expect_probe "sendmsg with MSG_FASTOPEN is refused" "errno EPERM" -- jail --net on -C "$W" -- "$PROBE" sendmsg-fastopen 127.0.0.1 9
expect_probe "sendmmsg with MSG_FASTOPEN is refused" "errno EPERM" -- jail --net on -C "$W" -- "$PROBE" sendmmsg-fastopen 127.0.0.1 9

# A call the table does not know answers ENOSYS, and is recorded.
refused "an unknown system call answers ENOSYS" ENOSYS "syscall 1000" -- syscall 1000

# Other architectures: i386 calls through int 0x80 kill the process; x32
# numbers never reach the kernel's table.
expect_control "outside: int 0x80 getpid works" -- "$PROBE" int80-getpid
expect_probe "an i386 system call kills the command" "signal SIGSYS" -- jail --net off -C "$W" -- "$PROBE" int80-getpid
expect_probe "an x32 system call is refused" "signal SIGSYS" -- jail --net off -C "$W" -- "$PROBE" x32-getpid

plan_done
