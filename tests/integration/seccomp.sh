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

for call in io_uring_setup io_uring_enter io_uring_register; do
	outside "THREATS 38 control: $call" -- "$call"
	refused "THREATS 38: $call is refused" EPERM "$call" -- "$call"
done
for call in keyctl add_key request_key; do
	outside "THREATS 32 control: $call" -- "$call"
	refused "THREATS 32: $call is refused" EPERM "$call" -- "$call"
done
for call in bpf perf_event_open userfaultfd; do
	outside "THREATS 19 control: $call" -- "$call"
	refused "THREATS 19: $call is refused" EPERM "$call" -- "$call"
done
for ns in user mount net pid ipc uts cgroup time; do
	outside "THREATS 19 control: unshare($ns)" -- unshare "$ns"
	refused "THREATS 19: unshare of a $ns namespace is refused" EPERM unshare -- unshare "$ns"
done
expect_probe "unshare(CLONE_FILES) is allowed" ok -- jail --net off -C "$W" -- "$PROBE" unshare files
for ns in user mount net pid; do
	refused "THREATS 19: clone with a new $ns namespace is refused" EPERM clone -- clone "$ns"
done
expect_probe "a plain clone (fork) is allowed" ok -- jail --net off -C "$W" -- "$PROBE" clone none
expect_probe "THREATS 19: clone3 answers ENOSYS (callers fall back to clone)" "errno ENOSYS" -- jail --net off -C "$W" -- "$PROBE" clone3
refused "THREATS 19: setns is refused" EPERM setns -- setns
outside "THREATS 18 control: mount" -- mount
refused "THREATS 18: mount is refused" EPERM mount -- mount
refused "THREATS 18: umount2 is refused" EPERM umount2 -- umount2 /nonexistent
refused "THREATS 18: pivot_root is refused" EPERM pivot_root -- pivot_root
refused "THREATS 18: chroot is refused" EPERM chroot -- chroot /
for call in fsopen fspick fsconfig fsmount move_mount mount_setattr; do
	refused "THREATS 18: $call is refused" EPERM "$call" -- "$call"
done
refused "THREATS 18: open_tree is refused" EPERM open_tree -- open_tree /
if [ "$TEST_BACKEND" = landlock ]; then
	for call in shmget semget msgget; do
		outside "THREATS 33 control: $call" -- "$call"
		refused "THREATS 33: $call (the host's System V IPC) is refused" EPERM "$call" -- "$call"
	done
	refused "THREATS 33: mq_open (the host's message queues) is refused" EPERM mq_open -- mq_open
fi

# TIOCSTI and TIOCLINUX, compared on 32 bits (CVE-2019-10063); the
# terminal tests show the injection itself failing.
refused "THREATS 1: TIOCSTI is refused" EPERM "ioctl TIOCSTI" -- tiocsti
refused "THREATS 2: TIOCSTI with high bits set is refused" EPERM "ioctl TIOCSTI" -- tiocsti-high
refused "THREATS 2: TIOCLINUX is refused" EPERM "ioctl TIOCLINUX" -- tioclinux
refused "THREATS 62: TIOCSETD is refused" EPERM "ioctl TIOCSETD" -- tiocsetd 0 27

# Sockets the network mode does not give, and TCP Fast Open.
refused "THREATS 45: a packet socket is refused" EAFNOSUPPORT socket -- socket packet raw all
refused "THREATS 45: a vsock socket is refused" EAFNOSUPPORT socket -- socket vsock stream default
refused "THREATS 45: a netlink sock_diag socket is refused" EAFNOSUPPORT socket -- socket netlink raw sock_diag
refused "THREATS 45: an inet socket is refused with --net off" EAFNOSUPPORT socket -- socket inet stream tcp
refused "an inet datagram socket is refused with --net off" EAFNOSUPPORT socket -- socket inet dgram udp
if [ "$TEST_BACKEND" = namespaces ]; then
	expect_probe "an inet socket is allowed in the namespace jail with loopback (its network namespace decides)" ok -- \
		jail --net loopback -C "$W" -- "$PROBE" socket inet dgram udp
fi
expect_probe "a Unix socket is allowed" ok -- jail --net off -C "$W" -- "$PROBE" socket unix stream default
expect_probe "a netlink route socket is allowed" ok -- jail --net off -C "$W" -- "$PROBE" socket netlink raw route
expect_probe "an inet socket is allowed with --net on" ok -- jail --net on -C "$W" -- "$PROBE" socket inet stream tcp
rm -f "$T/report.json"
expect_probe "THREATS 43: sendto with MSG_FASTOPEN is refused" "errno EPERM" -- jail --net on -C "$W" --report "$T/report.json" -- "$PROBE" fastopen 127.0.0.1 9
grep -q '"what": "sendto"' "$T/report.json" && pass "the listener recorded sendto" || fail "the listener recorded sendto"
expect_probe "THREATS 43: sendmsg with MSG_FASTOPEN is refused" "errno EPERM" -- jail --net on -C "$W" -- "$PROBE" sendmsg-fastopen 127.0.0.1 9
expect_probe "THREATS 43: sendmmsg with MSG_FASTOPEN is refused" "errno EPERM" -- jail --net on -C "$W" -- "$PROBE" sendmmsg-fastopen 127.0.0.1 9

# A call the table does not know answers ENOSYS, and is recorded.
refused "THREATS 19: an unknown system call answers ENOSYS" ENOSYS "syscall 1000" -- syscall 1000

# Other architectures: i386 calls through int 0x80 kill the process; x32
# numbers never reach the kernel's table. A host whose kernel gives no
# 32-bit entry (int 0x80 faults outside too, as in some VMs) has no i386
# way in: there the command dies of the same fault before any filter, and
# the filter's own check of the architecture is test-seccomp's (its i386
# rows, run through the filter as the kernel would).
"$PROBE" int80-getpid >"$T/int80.out" 2>&1
int80=$?
if [ $int80 -eq 139 ] && grep -qx 'probe: started int80-getpid' "$T/int80.out" && ! grep -q '^int80 ' "$T/int80.out"; then
	pass "THREATS 36 control: outside, int 0x80 faults (SIGSEGV): this host's kernel has no i386 system call entry"
	expect_probe "THREATS 36: an i386 system call kills the command (here by the host's fault, before any filter)" "signal SIGSEGV" -- \
		jail --net off -C "$W" -- "$PROBE" int80-getpid
else
	expect_control "THREATS 36 control: outside, int 0x80 getpid works" -- "$PROBE" int80-getpid
	expect_probe "THREATS 36: an i386 system call kills the command" "signal SIGSYS" -- jail --net off -C "$W" -- "$PROBE" int80-getpid
fi
expect_probe "THREATS 37: an x32 system call is refused" "signal SIGSYS" -- jail --net off -C "$W" -- "$PROBE" x32-getpid

plan_done
