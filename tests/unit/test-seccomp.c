/* seccomp: the table, and the BPF program each variant runs, executed here
 * by a small classic-BPF interpreter over struct seccomp_data.
 *
 * The interpreter knows exactly the instructions libseccomp 2.5 emits for
 * these filters (ld [k], jeq/jgt/jge #k, ja, and #k, ret #k) and fails the
 * test on any other, on an out-of-range load or jump, and on running off
 * the end. Expectations are a data table (call, arguments, variants →
 * action), as in libseccomp's own tests; a second, generated check runs
 * random arguments against a reference reading of the table (the first
 * matching row wins; no row: the listener). The precompiled filters must
 * be byte for byte what libseccomp compiles now. */
#include "seccomp/seccomp.h"

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sched.h>
#include <seccomp.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include "lib/util.h"
#include "tests/tap.h"

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#endif

/* A test that cannot pass until a part not written yet exists: TAP TODO,
 * counted by run-tests.sh as todo, not as a failure. */
static void todo(int cond, const char *why, const char *what)
{
	tap_count++;
	printf("%sok %d - %s # TODO %s\n", cond ? "" : "not ", tap_count, what, why);
}

/* ---- the interpreter ---- */

struct run {
	uint32_t ret;
	const char *error;	/* why the program is invalid, or NULL */
	unsigned steps;
};

static struct run bpf_run(const struct sock_fprog *prog, const struct seccomp_data *data)
{
	struct run out = { 0 };
	uint32_t a = 0;
	unsigned pc = 0;
	for (;;) {
		if (pc >= prog->len) {
			out.error = "ran off the end of the program";
			return out;
		}
		const struct sock_filter *in = &prog->filter[pc];
		out.steps++;
		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (in->k % 4 || in->k + 4 > sizeof(*data)) {
				out.error = "load outside struct seccomp_data";
				return out;
			}
			memcpy(&a, (const char *)data + in->k, 4);
			pc++;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += 1 + (a == in->k ? in->jt : in->jf);
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += 1 + (a > in->k ? in->jt : in->jf);
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += 1 + (a >= in->k ? in->jt : in->jf);
			break;
		case BPF_JMP | BPF_JA:
			pc += 1 + in->k;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= in->k;
			pc++;
			break;
		case BPF_RET | BPF_K:
			out.ret = in->k;
			return out;
		default:
			out.error = "an instruction the interpreter does not know";
			return out;
		}
	}
}

/* Every instruction of the program is one the interpreter knows, and
 * every jump lands inside it. */
static const char *bpf_check(const struct sock_fprog *prog, unsigned *ret_codes)
{
	*ret_codes = 0;
	for (unsigned pc = 0; pc < prog->len; pc++) {
		const struct sock_filter *in = &prog->filter[pc];
		switch (in->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			*ret_codes |= 1 << 0;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
		case BPF_JMP | BPF_JGT | BPF_K:
		case BPF_JMP | BPF_JGE | BPF_K:
			*ret_codes |= 1 << 1;
			if (pc + 1 + in->jt >= prog->len || pc + 1 + in->jf >= prog->len)
				return "a conditional jump past the end";
			break;
		case BPF_JMP | BPF_JA:
			*ret_codes |= 1 << 2;
			if (pc + 1 + in->k >= prog->len)
				return "a jump past the end";
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			*ret_codes |= 1 << 3;
			break;
		case BPF_RET | BPF_K:
			*ret_codes |= 1 << 4;
			break;
		default: {
			static char buf[64];
			snprintf(buf, sizeof(buf), "unknown opcode %#x at %u", in->code, pc);
			return buf;
		}
		}
	}
	if (!prog->len || prog->filter[prog->len - 1].code != (BPF_RET | BPF_K))
		return "the program does not end with ret";
	return NULL;
}

/* The interpreter itself, on programs written by hand. */
static void test_interpreter(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 5, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1]) + 4),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xf0),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x20, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	struct sock_fprog prog = { .len = ARRAY_SIZE(insns), .filter = insns };
	unsigned codes;
	ok(bpf_check(&prog, &codes) == NULL, "interpreter: a hand-written program checks");
	struct seccomp_data d = { .nr = 5, .args = { 0, 0x2f00000000ULL } };
	struct run r = bpf_run(&prog, &d);
	ok(!r.error && r.ret == SECCOMP_RET_KILL_PROCESS && r.steps == 6,
	   "interpreter: nr 5, high word of arg1 0x2f: and, jge taken, kill in 6 steps");
	d.args[1] = 0x1f00000000ULL;
	r = bpf_run(&prog, &d);
	ok(!r.error && r.ret == SECCOMP_RET_ALLOW, "interpreter: high word 0x1f: allow");
	d.nr = 6;
	r = bpf_run(&prog, &d);
	ok(!r.error && r.ret == SECCOMP_RET_ALLOW && r.steps == 3, "interpreter: nr 6 jumps straight to allow");

	insns[3] = (struct sock_filter)BPF_STMT(BPF_LDX | BPF_W | BPF_MEM, 0);
	d.nr = 5;
	r = bpf_run(&prog, &d);
	ok(r.error != NULL, "interpreter: an instruction it does not know fails the run");
	ok(bpf_check(&prog, &codes) != NULL, "interpreter: and fails the check");
	insns[3] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, sizeof(struct seccomp_data));
	r = bpf_run(&prog, &d);
	ok(r.error != NULL, "interpreter: a load past struct seccomp_data fails the run");
	insns[3] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 9, 9);
	ok(bpf_check(&prog, &codes) != NULL, "interpreter: a jump past the end fails the check");
}

/* ---- variants ---- */

enum {
	LL_OFF, LL_LO, LL_ON,
	NS_OFF, NS_LO, NS_ON,
	LL2_OFF, LL2_LO, LL2_ON,
	N_VARIANTS,
};

#define V(x) (1u << (x))
#define V_ALL ((1u << N_VARIANTS) - 1)
#define V_LL2 (V(LL2_OFF) | V(LL2_LO) | V(LL2_ON))
#define V_LL (V(LL_OFF) | V(LL_LO) | V(LL_ON) | V_LL2)
#define V_NS (V(NS_OFF) | V(NS_LO) | V(NS_ON))
#define V_STRONG (V_ALL & ~V_LL2)
#define V_LO (V(LL_LO) | V(NS_LO) | V(LL2_LO))
#define V_ON (V(LL_ON) | V(NS_ON) | V(LL2_ON))
#define V_LL_LO (V(LL_LO) | V(LL2_LO))
#define V_LL_OFF (V(LL_OFF) | V(LL2_OFF))
/* where a send with an address goes to the supervisor */
#define V_LL_SENDS (V_LL_LO | V_LL_OFF)

static const struct variant {
	const char *name;
	enum backend backend;
	enum net_mode net;
	int abi;
} variants[N_VARIANTS] = {
	[LL_OFF] = { "landlock/off", BACKEND_LANDLOCK, NET_OFF, 6 },
	[LL_LO] = { "landlock/loopback", BACKEND_LANDLOCK, NET_LOOPBACK, 6 },
	[LL_ON] = { "landlock/on", BACKEND_LANDLOCK, NET_ON, 6 },
	[NS_OFF] = { "namespaces/off", BACKEND_NAMESPACES, NET_OFF, 6 },
	[NS_LO] = { "namespaces/loopback", BACKEND_NAMESPACES, NET_LOOPBACK, 6 },
	[NS_ON] = { "namespaces/on", BACKEND_NAMESPACES, NET_ON, 6 },
	[LL2_OFF] = { "landlock-abi2/off", BACKEND_LANDLOCK, NET_OFF, 2 },
	[LL2_LO] = { "landlock-abi2/loopback", BACKEND_LANDLOCK, NET_LOOPBACK, 2 },
	[LL2_ON] = { "landlock-abi2/on", BACKEND_LANDLOCK, NET_ON, 2 },
};

static struct seccomp_plan plans[N_VARIANTS];
static struct sock_fprog progs[N_VARIANTS];

/* ---- expectations ---- */

enum act { ALLOW, NOTIFY, ERRNO, KILL };

struct expect {
	const char *what;
	long nr;
	uint64_t args[6];
	unsigned when;		/* variants this row is about */
	enum act act;
	int err;		/* ERRNO: the errno; NOTIFY: the listener's answer, -1: any */
	uint32_t arch;		/* 0: native */
	const char *todo;	/* a part not written yet */
	bool unnamed;		/* NOTIFY: no row of the table is about it */
};

#define ARGS(...) { __VA_ARGS__ }
#define ALLOWED(w, n, v, a) { .what = (w), .nr = (n), .args = a, .when = (v), .act = ALLOW }
#define NOTIFIED(w, n, v, e, a) { .what = (w), .nr = (n), .args = a, .when = (v), .act = NOTIFY, .err = (e) }
#define NOTIFIED_UNNAMED(w, n, v, a)                                            \
	{ .what = (w), .nr = (n), .args = a, .when = (v), .act = NOTIFY, .err = ENOSYS, .unnamed = true }
#define NOTIFIED_TODO(w, n, v, t, a)                                           \
	{ .what = (w), .nr = (n), .args = a, .when = (v), .act = NOTIFY, .err = -1, .todo = (t) }
#define ERRNOED(w, n, v, e, a) { .what = (w), .nr = (n), .args = a, .when = (v), .act = ERRNO, .err = (e) }
#define KILLED(w, n, v, arch_, a) { .what = (w), .nr = (n), .args = a, .when = (v), .act = KILL, .arch = (arch_) }

#define TIOCSTI_ 0x5412ULL
#define TIOCLINUX_ 0x541CULL
#define TIOCGWINSZ_ 0x5413ULL
#define TCGETS_ 0x5401ULL
#define PTHREAD_CLONE_FLAGS                                                    \
	(CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | \
	 CLONE_SETTLS | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID)
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x80
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#define HIGH(x) ((uint64_t)(x) << 32)
#define SUPERVISOR_TODO "the connect supervisor (DESIGN: 'hands every connect and bind to the supervisor') is not written yet"

#if defined(NATIVE_ARCH)
static const struct expect expectations[] = {
	ALLOWED("read", __NR_read, V_ALL, ARGS(0)),
	ALLOWED("write", __NR_write, V_ALL, ARGS(1)),
	ALLOWED("ioctl TCGETS", __NR_ioctl, V_ALL, ARGS(0, TCGETS_)),
	ALLOWED("ioctl TCGETS with high bits", __NR_ioctl, V_ALL, ARGS(0, TCGETS_ | HIGH(1))),
	ALLOWED("ioctl TIOCGWINSZ", __NR_ioctl, V_ALL, ARGS(0, TIOCGWINSZ_)),
	NOTIFIED("ioctl 0x15412 (not TIOCSTI, but a terminal request not listed)", __NR_ioctl, V_ALL, EPERM, ARGS(0, 0x15412)),
	NOTIFIED("ioctl TIOCSETD", __NR_ioctl, V_ALL, EPERM, ARGS(0, 0x5423)),
	NOTIFIED("ioctl TIOCSETD | 0x1 << 32", __NR_ioctl, V_ALL, EPERM, ARGS(0, 0x5423 | HIGH(1))),
	NOTIFIED("ioctl TIOCCONS", __NR_ioctl, V_ALL, EPERM, ARGS(0, 0x541D)),
	NOTIFIED("ioctl TIOCSSERIAL", __NR_ioctl, V_ALL, EPERM, ARGS(0, 0x541F)),
	NOTIFIED("ioctl TIOCVHANGUP (not listed)", __NR_ioctl, V_ALL, EPERM, ARGS(0, 0x5437)),
	NOTIFIED("ioctl TIOCMSET (not listed)", __NR_ioctl, V_ALL, EPERM, ARGS(0, 0x5418)),
	ALLOWED("ioctl TCSETSW", __NR_ioctl, V_ALL, ARGS(0, 0x5403)),
	ALLOWED("ioctl TIOCSPGRP", __NR_ioctl, V_ALL, ARGS(0, 0x5410)),
	ALLOWED("ioctl TIOCSCTTY", __NR_ioctl, V_ALL, ARGS(0, 0x540E)),
	ALLOWED("ioctl TIOCSWINSZ", __NR_ioctl, V_ALL, ARGS(0, 0x5414)),
	ALLOWED("ioctl TIOCGPTN", __NR_ioctl, V_ALL, ARGS(0, 0x80045430)),
	ALLOWED("ioctl TIOCSPTLCK", __NR_ioctl, V_ALL, ARGS(0, 0x40045431)),
	ALLOWED("ioctl TCGETS2", __NR_ioctl, V_ALL, ARGS(0, 0x802C542A)),
	ALLOWED("ioctl FIONREAD", __NR_ioctl, V_ALL, ARGS(0, 0x541B)),
	ALLOWED("ioctl FIONBIO", __NR_ioctl, V_ALL, ARGS(0, 0x5421)),
	ALLOWED("ioctl FIOCLEX", __NR_ioctl, V_ALL, ARGS(0, 0x5451)),
	ALLOWED("ioctl FICLONE (not a terminal request)", __NR_ioctl, V_ALL, ARGS(0, 0x40049409)),
	ALLOWED("ioctl FS_IOC_GETFLAGS", __NR_ioctl, V_ALL, ARGS(0, 0x80086601)),
	ALLOWED("ioctl FS_IOC_FSGETXATTR", __NR_ioctl, V_ALL, ARGS(0, 0x801c581f)),
	ALLOWED("ioctl FS_IOC_FIEMAP", __NR_ioctl, V_ALL, ARGS(0, 0xc020660b)),
	/* A file's flags: the owner sets them through a descriptor open for
	 * reading, which Landlock does not govern: the supervisor. */
	ALLOWED("ioctl FS_IOC_SETFLAGS", __NR_ioctl, V_NS, ARGS(0, 0x40086602)),
	NOTIFIED_TODO("ioctl FS_IOC_SETFLAGS (landlock: to the supervisor)", __NR_ioctl, V_LL, SUPERVISOR_TODO,
		      ARGS(0, 0x40086602)),
	NOTIFIED_TODO("ioctl FS_IOC_SETFLAGS | 0x1 << 32 (landlock: to the supervisor)", __NR_ioctl, V_LL,
		      SUPERVISOR_TODO, ARGS(0, 0x40086602 | HIGH(1))),
	NOTIFIED_TODO("ioctl FS_IOC_FSSETXATTR (landlock: to the supervisor)", __NR_ioctl, V_LL, SUPERVISOR_TODO,
		      ARGS(0, 0x401c5820)),
	NOTIFIED_TODO("ioctl FS_IOC_ENABLE_VERITY (landlock: to the supervisor)", __NR_ioctl, V_LL, SUPERVISOR_TODO,
		      ARGS(0, 0x40806685)),
	NOTIFIED_TODO("ioctl FS_IOC_SETVERSION (landlock: to the supervisor)", __NR_ioctl, V_LL, SUPERVISOR_TODO,
		      ARGS(0, 0x40087602)),
	ALLOWED("ioctl SIOCGIFCONF", __NR_ioctl, V_ALL, ARGS(0, 0x8912)),
	ALLOWED("ioctl BLKGETSIZE64", __NR_ioctl, V_ALL, ARGS(0, 0x80081272)),
	NOTIFIED("ioctl TIOCSTI", __NR_ioctl, V_ALL, EPERM, ARGS(0, TIOCSTI_)),
	NOTIFIED("ioctl TIOCSTI | 0x123 << 32", __NR_ioctl, V_ALL, EPERM, ARGS(0, TIOCSTI_ | HIGH(0x123))),
	NOTIFIED("ioctl TIOCSTI | 0xffffffff << 32", __NR_ioctl, V_ALL, EPERM, ARGS(0, TIOCSTI_ | HIGH(0xffffffff))),
	NOTIFIED("ioctl TIOCLINUX", __NR_ioctl, V_ALL, EPERM, ARGS(0, TIOCLINUX_)),

	ALLOWED("clone SIGCHLD", __NR_clone, V_ALL, ARGS(17)),
	ALLOWED("clone with pthread flags", __NR_clone, V_ALL, ARGS(PTHREAD_CLONE_FLAGS)),
	NOTIFIED("clone CLONE_NEWUSER|SIGCHLD", __NR_clone, V_ALL, EPERM, ARGS(CLONE_NEWUSER | 17)),
	NOTIFIED("clone CLONE_NEWNET", __NR_clone, V_ALL, EPERM, ARGS(CLONE_NEWNET)),
	NOTIFIED("clone CLONE_NEWNS", __NR_clone, V_ALL, EPERM, ARGS(CLONE_NEWNS)),
	NOTIFIED("clone CLONE_NEWCGROUP", __NR_clone, V_ALL, EPERM, ARGS(CLONE_NEWCGROUP)),
	ERRNOED("clone3", __NR_clone3, V_ALL, ENOSYS, ARGS(0)),
	NOTIFIED("unshare CLONE_NEWNS", __NR_unshare, V_ALL, EPERM, ARGS(CLONE_NEWNS)),
	NOTIFIED("unshare CLONE_NEWUSER", __NR_unshare, V_ALL, EPERM, ARGS(CLONE_NEWUSER)),
	NOTIFIED("unshare CLONE_NEWTIME", __NR_unshare, V_ALL, EPERM, ARGS(CLONE_NEWTIME)),
	ALLOWED("unshare CLONE_FILES", __NR_unshare, V_ALL, ARGS(CLONE_FILES)),
	ALLOWED("unshare CLONE_FS|CLONE_SYSVSEM", __NR_unshare, V_ALL, ARGS(CLONE_FS | CLONE_SYSVSEM)),
	NOTIFIED("setns", __NR_setns, V_ALL, EPERM, ARGS(3, 0)),

	ALLOWED("socket AF_UNIX stream", __NR_socket, V_ALL, ARGS(AF_UNIX, SOCK_STREAM, 0)),
	ALLOWED("socket AF_UNIX stream|cloexec", __NR_socket, V_ALL, ARGS(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)),
	ALLOWED("socket AF_UNIX (high bits set) stream", __NR_socket, V_ALL, ARGS(AF_UNIX | HIGH(1), SOCK_STREAM, 0)),
	ALLOWED("socketpair AF_UNIX dgram", __NR_socketpair, V_ALL, ARGS(AF_UNIX, SOCK_DGRAM, 0)),
	NOTIFIED("socketpair AF_INET", __NR_socketpair, V_ALL, EAFNOSUPPORT, ARGS(AF_INET, SOCK_STREAM, 0)),
	/* DESIGN, network modes: "In every network mode of the landlock
	 * backend, datagram Unix sockets are refused at socket()". */
	NOTIFIED("socket AF_UNIX dgram (landlock: refused at socket())", __NR_socket, V_LL, -1, ARGS(AF_UNIX, SOCK_DGRAM, 0)),
	ALLOWED("socket AF_UNIX dgram", __NR_socket, V_NS, ARGS(AF_UNIX, SOCK_DGRAM, 0)),
	ALLOWED("socket AF_INET stream", __NR_socket, V_ON | V_LO, ARGS(AF_INET, SOCK_STREAM, 0)),
	NOTIFIED("socket AF_INET stream", __NR_socket, V_LL_OFF, EAFNOSUPPORT, ARGS(AF_INET, SOCK_STREAM, 0)),
	/* In the namespace jail the network namespace is the network policy;
	 * with the network off there is no inet socket, as on the landlock
	 * backend (a refusal named, not a connect lost on a loopback that is
	 * down). */
	ALLOWED("socket AF_INET stream (namespaces: the netns decides)", __NR_socket, V(NS_LO) | V(NS_ON), ARGS(AF_INET, SOCK_STREAM, 0)),
	ALLOWED("socket AF_INET6 dgram (namespaces: the netns decides)", __NR_socket, V(NS_LO) | V(NS_ON), ARGS(AF_INET6, SOCK_DGRAM, 0)),
	NOTIFIED("socket AF_INET stream (namespaces, off)", __NR_socket, V(NS_OFF), EAFNOSUPPORT, ARGS(AF_INET, SOCK_STREAM, 0)),
	NOTIFIED("socket AF_INET6 dgram (namespaces, off)", __NR_socket, V(NS_OFF), EAFNOSUPPORT, ARGS(AF_INET6, SOCK_DGRAM, 0)),
	ALLOWED("socket AF_INET stream|nonblock|cloexec, IPPROTO_TCP", __NR_socket, V_ON | V_LO,
		ARGS(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP)),
	NOTIFIED("socket AF_INET (high bits set) stream", __NR_socket, V_LL_OFF, EAFNOSUPPORT, ARGS(AF_INET | HIGH(1), SOCK_STREAM, 0)),
	ALLOWED("socket AF_INET6 stream", __NR_socket, V_ON | V_LO, ARGS(AF_INET6, SOCK_STREAM, 0)),
	ALLOWED("socket AF_INET6 stream, IPPROTO_TCP", __NR_socket, V_ON | V_LO, ARGS(AF_INET6, SOCK_STREAM, IPPROTO_TCP)),
	NOTIFIED("socket AF_INET6 stream", __NR_socket, V_LL_OFF, EAFNOSUPPORT, ARGS(AF_INET6, SOCK_STREAM, 0)),
	ALLOWED("socket AF_INET dgram", __NR_socket, V_ON, ARGS(AF_INET, SOCK_DGRAM, 0)),
	ALLOWED("socket AF_INET dgram (landlock loopback: UDP, its sends supervised)", __NR_socket, V_LL_LO, ARGS(AF_INET, SOCK_DGRAM, 0)),
	ALLOWED("socket AF_INET dgram udp", __NR_socket, V_LL_LO, ARGS(AF_INET, SOCK_DGRAM, IPPROTO_UDP)),
	NOTIFIED("socket AF_INET dgram udplite", __NR_socket, V_LL_LO, EPROTONOSUPPORT, ARGS(AF_INET, SOCK_DGRAM, IPPROTO_UDPLITE)),
	NOTIFIED("socket AF_INET raw", __NR_socket, V_LL_LO, EPROTONOSUPPORT, ARGS(AF_INET, SOCK_RAW, IPPROTO_UDP)),
	/* DESIGN, network modes: namespaces loopback is the jail's own lo,
	 * "UDP on it works". */
	ALLOWED("socket AF_INET dgram (namespaces loopback: UDP works)", __NR_socket, V(NS_LO), ARGS(AF_INET, SOCK_DGRAM, 0)),
	NOTIFIED("socket AF_INET dgram", __NR_socket, V_LL_OFF, EAFNOSUPPORT, ARGS(AF_INET, SOCK_DGRAM, 0)),
	ALLOWED("socket AF_INET6 dgram", __NR_socket, V_LL_LO, ARGS(AF_INET6, SOCK_DGRAM, 0)),
	NOTIFIED("socket AF_INET stream IPPROTO_MPTCP", __NR_socket, V_LL_LO, EPROTONOSUPPORT, ARGS(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)),
	NOTIFIED("socket AF_INET stream IPPROTO_SCTP", __NR_socket, V_LL_LO, EPROTONOSUPPORT, ARGS(AF_INET, SOCK_STREAM, IPPROTO_SCTP)),
	NOTIFIED("socket AF_INET raw ICMP", __NR_socket, V_LL_LO, EPROTONOSUPPORT, ARGS(AF_INET, SOCK_RAW, IPPROTO_ICMP)),
	ALLOWED("socket AF_INET raw ICMP", __NR_socket, V_ON, ARGS(AF_INET, SOCK_RAW, IPPROTO_ICMP)),
	ALLOWED("socket AF_NETLINK route", __NR_socket, V_ALL, ARGS(AF_NETLINK, SOCK_RAW, 0)),
	NOTIFIED("socket AF_NETLINK sock_diag", __NR_socket, V_ALL, EAFNOSUPPORT, ARGS(AF_NETLINK, SOCK_RAW, 4)),
	NOTIFIED("socket AF_PACKET", __NR_socket, V_ALL, EAFNOSUPPORT, ARGS(AF_PACKET, SOCK_RAW, 0x0300)),
	NOTIFIED("socket AF_VSOCK", __NR_socket, V_ALL, EAFNOSUPPORT, ARGS(40, SOCK_STREAM, 0)),
	NOTIFIED_TODO("connect (landlock: to the supervisor)", __NR_connect, V_LL, SUPERVISOR_TODO, ARGS(3, 0, 16)),
	NOTIFIED_TODO("bind (landlock loopback: to the supervisor)", __NR_bind, V_LL_LO, SUPERVISOR_TODO, ARGS(3, 0, 16)),
	ALLOWED("connect", __NR_connect, V_NS, ARGS(3, 0, 16)),
	NOTIFIED("sendto MSG_FASTOPEN", __NR_sendto, V_ALL, EPERM, ARGS(3, 0, 1, MSG_FASTOPEN)),
	ALLOWED("sendto MSG_DONTWAIT", __NR_sendto, V_ALL, ARGS(3, 0, 1, MSG_DONTWAIT)),
	ALLOWED("sendto 0", __NR_sendto, V_ALL, ARGS(3, 0, 1, 0)),
	/* THREATS 39: an address behind a pointer is the supervisor's, and
	 * the pointer is tested whole (a low half of 0 is no NULL). */
	ALLOWED("sendto with an address", __NR_sendto, V_ALL & ~V_LL_SENDS, ARGS(3, 0, 1, 0, 0x7ffd0000, 16)),
	NOTIFIED_TODO("sendto with an address (landlock loopback: to the supervisor)", __NR_sendto, V_LL_SENDS, SUPERVISOR_TODO,
		      ARGS(3, 0, 1, 0, 0x7ffd0000, 16)),
	NOTIFIED_TODO("sendto with the address 0x100000000", __NR_sendto, V_LL_SENDS, SUPERVISOR_TODO,
		      ARGS(3, 0, 1, 0, HIGH(1), 16)),
	NOTIFIED("sendmsg MSG_FASTOPEN", __NR_sendmsg, V_ALL, EPERM, ARGS(3, 0, MSG_FASTOPEN)),
	ALLOWED("sendmsg MSG_NOSIGNAL", __NR_sendmsg, V_ALL & ~V_LL_SENDS, ARGS(3, 0, MSG_NOSIGNAL)),
	NOTIFIED_TODO("sendmsg (landlock loopback: to the supervisor)", __NR_sendmsg, V_LL_SENDS, SUPERVISOR_TODO, ARGS(3, 0, MSG_NOSIGNAL)),
	ALLOWED("setsockopt SOL_SOCKET", __NR_setsockopt, V_ALL, ARGS(3, SOL_SOCKET, SO_REUSEADDR)),
	ALLOWED("setsockopt IPPROTO_TCP", __NR_setsockopt, V_ALL, ARGS(3, IPPROTO_TCP, 1)),
	ALLOWED("setsockopt IPPROTO_IP", __NR_setsockopt, V_ALL & ~V_LL_LO, ARGS(3, IPPROTO_IP, IP_OPTIONS)),
	NOTIFIED_TODO("setsockopt IPPROTO_IP (landlock loopback: source routes refused)", __NR_setsockopt, V_LL_LO,
		      SUPERVISOR_TODO, ARGS(3, IPPROTO_IP, IP_OPTIONS)),
	NOTIFIED_TODO("setsockopt IPPROTO_IPV6 (landlock loopback: routing headers refused)", __NR_setsockopt, V_LL_LO,
		      SUPERVISOR_TODO, ARGS(3, IPPROTO_IPV6, 57)),
	NOTIFIED("sendmmsg MSG_FASTOPEN", __NR_sendmmsg, V_ALL, EPERM, ARGS(3, 0, 1, MSG_FASTOPEN)),
	ALLOWED("sendmmsg 0", __NR_sendmmsg, V_ALL & ~V_LL_SENDS, ARGS(3, 0, 1, 0)),
	NOTIFIED_TODO("sendmmsg (landlock loopback and off: to the supervisor)", __NR_sendmmsg, V_LL_SENDS, SUPERVISOR_TODO, ARGS(3, 0, 1, 0)),

	ALLOWED("shmget", __NR_shmget, V_NS, ARGS(0, 4096, 01600)),
	NOTIFIED("shmget", __NR_shmget, V_LL, EPERM, ARGS(0, 4096, 01600)),
	NOTIFIED("msgget", __NR_msgget, V_LL, EPERM, ARGS(0, 01600)),
	ALLOWED("mq_open", __NR_mq_open, V_NS, ARGS(0, O_RDWR)),
	NOTIFIED("mq_open", __NR_mq_open, V_LL, EPERM, ARGS(0, O_RDWR)),
	NOTIFIED_UNNAMED("mq_timedsend (not in the landlock table)", __NR_mq_timedsend, V_LL, ARGS(3)),
	NOTIFIED("io_uring_setup", __NR_io_uring_setup, V_ALL, EPERM, ARGS(8, 0)),
	NOTIFIED("io_uring_enter", __NR_io_uring_enter, V_ALL, EPERM, ARGS(3)),
	NOTIFIED("keyctl", __NR_keyctl, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("add_key", __NR_add_key, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("bpf", __NR_bpf, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("perf_event_open", __NR_perf_event_open, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("userfaultfd", __NR_userfaultfd, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("mount", __NR_mount, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("umount2", __NR_umount2, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("open_tree", __NR_open_tree, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("move_mount", __NR_move_mount, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("fsopen", __NR_fsopen, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("pivot_root", __NR_pivot_root, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("chroot", __NR_chroot, V_ALL, EPERM, ARGS(0)),
	NOTIFIED("open_tree_attr (467, by number)", 467, V_ALL, EPERM, ARGS(0)),
	ALLOWED("setxattrat (463, by number)", 463, V_NS, ARGS(0)),
	/* Landlock has no right for a file's mode, owner, attributes or
	 * times: the supervisor changes them where the run may write. */
	NOTIFIED_TODO("setxattrat (463, by number; landlock: to the supervisor)", 463, V_LL, SUPERVISOR_TODO, ARGS(0)),
	NOTIFIED_TODO("chmod (landlock: to the supervisor)", __NR_chmod, V_LL, SUPERVISOR_TODO, ARGS(0, 0755)),
	NOTIFIED_TODO("fchmod (landlock: to the supervisor)", __NR_fchmod, V_LL, SUPERVISOR_TODO, ARGS(3, 0755)),
	NOTIFIED_TODO("setxattr (landlock: to the supervisor)", __NR_setxattr, V_LL, SUPERVISOR_TODO, ARGS(0)),
	NOTIFIED_TODO("utimensat (landlock: to the supervisor)", __NR_utimensat, V_LL, SUPERVISOR_TODO, ARGS(0)),
	ALLOWED("chmod", __NR_chmod, V_NS, ARGS(0, 0755)),
	/* A setuid bit: refused; a setgid bit alone: the listener carries it
	 * out on a directory (the filter cannot see which). */
	NOTIFIED("chmod 04755", __NR_chmod, V_NS, EPERM, ARGS(0, 04755)),
	NOTIFIED("chmod 06755", __NR_chmod, V_NS, EPERM, ARGS(0, 06755)),
	NOTIFIED_TODO("chmod 02775 (namespaces: to the listener)", __NR_chmod, V_NS, SUPERVISOR_TODO, ARGS(0, 02775)),
	NOTIFIED_TODO("fchmodat 02775 (namespaces: to the listener)", __NR_fchmodat, V_NS, SUPERVISOR_TODO,
		      ARGS(0, 0, 02775)),
	ALLOWED("inotify_add_watch", __NR_inotify_add_watch, V_NS, ARGS(3, 0, 2)),
	NOTIFIED_TODO("inotify_add_watch (landlock: to the supervisor)", __NR_inotify_add_watch, V_LL, SUPERVISOR_TODO,
		      ARGS(3, 0, 2)),
	ALLOWED("utimensat", __NR_utimensat, V_NS, ARGS(0)),
	ALLOWED("mseal (462, by number)", 462, V_ALL, ARGS(0)),
	NOTIFIED_UNNAMED("unknown number 1000", 1000, V_ALL, ARGS(0)),
	NOTIFIED_UNNAMED("unknown number 468", 468, V_ALL, ARGS(0)),
	ALLOWED("ptrace (Landlock scopes it)", __NR_ptrace, V_ALL, ARGS(0)),
	ALLOWED("kill", __NR_kill, V_ALL, ARGS(1, 0)),
	ALLOWED("mknodat (Landlock refuses devices)", __NR_mknodat, V_ALL, ARGS(0)),
	ALLOWED("execve", __NR_execve, V_ALL, ARGS(0)),
	ALLOWED("memfd_create", __NR_memfd_create, V_ALL, ARGS(0)),

	KILLED("read, wrong architecture (i386)", __NR_read, V_ALL, AUDIT_ARCH_I386, ARGS(0)),
	KILLED("getpid, wrong architecture (i386 getpid = 20)", 20, V_ALL, AUDIT_ARCH_I386, ARGS(0)),
#if defined(__x86_64__)
	KILLED("read through x32 (nr | 0x40000000)", __NR_read | 0x40000000, V_ALL, NATIVE_ARCH, ARGS(0)),
	NOTIFIED("open O_RDONLY|O_TRUNC at abi 2", __NR_open, V_LL2, EPERM, ARGS(0, O_RDONLY | O_TRUNC)),
	ALLOWED("open O_RDONLY|O_TRUNC at abi >= 3", __NR_open, V_STRONG, ARGS(0, O_RDONLY | O_TRUNC)),
	ALLOWED("open O_WRONLY|O_TRUNC", __NR_open, V_ALL, ARGS(0, O_WRONLY | O_TRUNC)),
	ALLOWED("open O_RDONLY", __NR_open, V_ALL, ARGS(0, O_RDONLY)),
#endif
	NOTIFIED("openat O_RDONLY|O_TRUNC at abi 2", __NR_openat, V_LL2, EPERM, ARGS((uint64_t)AT_FDCWD, 0, O_RDONLY | O_TRUNC)),
	NOTIFIED("openat O_RDONLY|O_TRUNC|O_CREAT at abi 2", __NR_openat, V_LL2, EPERM, ARGS((uint64_t)AT_FDCWD, 0, O_RDONLY | O_TRUNC | O_CREAT)),
	NOTIFIED("openat O_ACCMODE|O_TRUNC at abi 2", __NR_openat, V_LL2, EPERM, ARGS((uint64_t)AT_FDCWD, 0, O_ACCMODE | O_TRUNC)),
	ALLOWED("openat O_RDONLY|O_TRUNC at abi >= 3", __NR_openat, V_STRONG, ARGS((uint64_t)AT_FDCWD, 0, O_RDONLY | O_TRUNC)),
	ALLOWED("openat O_WRONLY|O_TRUNC", __NR_openat, V_ALL, ARGS((uint64_t)AT_FDCWD, 0, O_WRONLY | O_TRUNC)),
	ALLOWED("openat O_RDWR|O_TRUNC|O_CREAT", __NR_openat, V_ALL, ARGS((uint64_t)AT_FDCWD, 0, O_RDWR | O_TRUNC | O_CREAT)),
	ALLOWED("openat O_RDONLY", __NR_openat, V_ALL, ARGS((uint64_t)AT_FDCWD, 0, O_RDONLY)),
	ALLOWED("openat O_RDONLY|O_CLOEXEC|O_DIRECTORY", __NR_openat, V_ALL, ARGS((uint64_t)AT_FDCWD, 0, O_RDONLY | O_CLOEXEC | O_DIRECTORY)),
	NOTIFIED("openat2 at abi 2 (flags unreadable)", __NR_openat2, V_LL2, ENOSYS, ARGS(0)),
	ALLOWED("openat2 at abi >= 3", __NR_openat2, V_STRONG, ARGS(0)),
	NOTIFIED("truncate at abi 2", __NR_truncate, V_LL2, EPERM, ARGS(0, 0)),
	ALLOWED("truncate at abi >= 3", __NR_truncate, V_STRONG, ARGS(0, 0)),
	ALLOWED("ftruncate", __NR_ftruncate, V_ALL, ARGS(3, 0)),
};
#endif

static uint32_t act_ret(enum act a, int err)
{
	switch (a) {
	case ALLOW:
		return SECCOMP_RET_ALLOW;
	case NOTIFY:
		return SECCOMP_RET_USER_NOTIF;
	case ERRNO:
		return SECCOMP_RET_ERRNO | (uint32_t)err;
	case KILL:
		break;
	}
	return SECCOMP_RET_KILL_PROCESS;
}

static const char *ret_name(uint32_t ret)
{
	static char buf[64];
	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
		return "ALLOW";
	case SECCOMP_RET_USER_NOTIF:
		return "USER_NOTIF";
	case SECCOMP_RET_KILL_PROCESS:
		return "KILL_PROCESS";
	case SECCOMP_RET_KILL_THREAD:
		return "KILL_THREAD";
	case SECCOMP_RET_ERRNO:
		snprintf(buf, sizeof(buf), "ERRNO(%s)", strerrorname_np((int)(ret & SECCOMP_RET_DATA)));
		return buf;
	}
	snprintf(buf, sizeof(buf), "%#x", ret);
	return buf;
}

static struct seccomp_data make_data(long nr, const uint64_t args[6], uint32_t arch)
{
	struct seccomp_data d = { .nr = (int)nr, .arch = arch };
	memcpy(d.args, args, sizeof(d.args));
	return d;
}

static bool run_prog(int v, long nr, const uint64_t args[6], uint32_t arch, uint32_t *ret)
{
	struct seccomp_data d = make_data(nr, args, arch);
	struct run r = bpf_run(&progs[v], &d);
	if (r.error) {
		diag("%s: nr %ld: %s", variants[v].name, nr, r.error);
		return false;
	}
	*ret = r.ret;
	return true;
}

static void test_expectations(void)
{
#if defined(NATIVE_ARCH)
	for (size_t i = 0; i < ARRAY_SIZE(expectations); i++) {
		const struct expect *e = &expectations[i];
		for (int v = 0; v < N_VARIANTS; v++) {
			if (!(e->when & V(v)))
				continue;
			uint32_t got = 0;
			bool ran = run_prog(v, e->nr, e->args, e->arch ? e->arch : NATIVE_ARCH, &got);
			uint32_t want = act_ret(e->act, e->err);
			bool pass = ran && got == want;
			_cleanup_free_ char *what = xasprintf("%s: %s -> %s", variants[v].name, e->what,
							       e->act == ERRNO ? ret_name(want) :
							       e->act == ALLOW ? "ALLOW" : e->act == NOTIFY ? "USER_NOTIF" : "KILL_PROCESS");
			if (e->todo) {
				todo(pass, e->todo, what);
				continue;
			}
			if (!ok(pass, "%s", what))
				diag("  got %s", ran ? ret_name(got) : "(invalid program)");
			/* What the listener answers to a call handed to it. */
			if (e->act == NOTIFY && got == SECCOMP_RET_USER_NOTIF) {
				const struct sc_rule *rule = NULL;
				int err = seccomp_answer(&plans[v], (int)e->nr, e->args, &rule);
				if (e->err == -1) {
					ok(err > 0 && err != ENOSYS, "%s: %s: the listener refuses with a table errno (%s)",
					   variants[v].name, e->what, err > 0 ? strerrorname_np(err) : "?");
				} else {
					if (!ok(err == e->err, "%s: %s: the listener answers %s", variants[v].name, e->what,
						strerrorname_np(e->err)))
						diag("  got %s", err > 0 ? strerrorname_np(err) : "?");
					ok(e->unnamed ? rule == NULL : rule != NULL && rule->err == e->err,
					   "%s: %s: %s", variants[v].name, e->what,
					   e->unnamed ? "no row named" : "the refusing row is named");
				}
			}
		}
	}
#else
	ok(1, "# SKIP no expectations for this architecture");
#endif
}

/* A nested run's filter, loaded without a listener (a parent's holds
 * one): nothing goes to a listener; what the table allows stays allowed,
 * every refusal stays a refusal (in the filter), and only the calls the
 * supervisor carries out (connect, bind, listen) or merely watches
 * (renames over hand-offs, shm opens) are left to the layers outside. */
static bool left_outside(long nr)
{
	return nr == __NR_connect || nr == __NR_bind || nr == __NR_listen || nr == __NR_openat ||
#ifdef __NR_rename
	       nr == __NR_rename ||
#endif
	       nr == __NR_renameat || nr == __NR_renameat2;
}

static void test_no_listener(void)
{
#if defined(NATIVE_ARCH)
	for (int v = 0; v < N_VARIANTS; v++) {
		struct seccomp_plan plan;
		struct sock_fprog prog, fresh;
		seccomp_plan(variants[v].backend, variants[v].net, variants[v].abi, &plan);
		seccomp_plan_without_listener(&plan);
		if (!is_int(seccomp_build(&plan, &prog), 0, "%s without a listener: built", variants[v].name))
			continue;
		if (is_int(seccomp_compile(&plan, &fresh), 0, "%s without a listener: compiles", variants[v].name)) {
			seccomp_patch_ids(&fresh, plan.uid, plan.gid);
			ok(fresh.len == prog.len && memcmp(fresh.filter, prog.filter, prog.len * sizeof(*prog.filter)) == 0,
			   "%s without a listener: the precompiled filter is a fresh compile's", variants[v].name);
			seccomp_bpf_free(&fresh);
		}
		bool notify = false;
		for (unsigned i = 0; i < prog.len; i++)
			notify |= BPF_CLASS(prog.filter[i].code) == BPF_RET &&
				  (prog.filter[i].k & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_USER_NOTIF;
		ok(!notify, "%s without a listener: no instruction returns USER_NOTIF", variants[v].name);
		size_t wrong = 0;
		for (size_t i = 0; i < ARRAY_SIZE(expectations); i++) {
			const struct expect *e = &expectations[i];
			if (!(e->when & V(v)) || e->todo || e->act == KILL)
				continue;
			struct seccomp_data d = make_data(e->nr, e->args, e->arch ? e->arch : NATIVE_ARCH);
			struct run r = bpf_run(&prog, &d);
			uint32_t act = r.ret & SECCOMP_RET_ACTION_FULL;
			bool good = !r.error && (e->act == ALLOW	   ? r.ret == SECCOMP_RET_ALLOW
						 : e->act == ERRNO ? r.ret == act_ret(ERRNO, e->err)
						 : act == SECCOMP_RET_ERRNO || (act == SECCOMP_RET_ALLOW && left_outside(e->nr)));
			if (!good) {
				wrong++;
				diag("  %s without a listener: %s -> %s", variants[v].name, e->what, ret_name(r.ret));
			}
		}
		ok(wrong == 0, "%s without a listener: every allowed call allowed, every refusal refused in the filter",
		   variants[v].name);
		uint64_t none[6] = { 0 };
		struct seccomp_data d = make_data(__NR_setns, none, NATIVE_ARCH);
		ok(bpf_run(&prog, &d).ret == (SECCOMP_RET_ERRNO | EPERM), "%s without a listener: setns: its own EPERM",
		   variants[v].name);
		d = make_data(1000, none, NATIVE_ARCH);
		ok(bpf_run(&prog, &d).ret == (SECCOMP_RET_ERRNO | ENOSYS), "%s without a listener: an unknown call: ENOSYS",
		   variants[v].name);
		seccomp_bpf_free(&prog);
		seccomp_plan_free(&plan);
	}
#else
	ok(1, "# SKIP no expectations for this architecture");
#endif
}

/* The namespace jail maps only the caller's ids: changing to them (or
 * leaving one unchanged, -1) is allowed, any other id goes to the
 * listener and is answered EPERM. The landlock backend leaves setuid and
 * its kin to the kernel, and sends chown and its kin to the supervisor
 * (Landlock has no right for an owner). */
static void test_ids(void)
{
#if defined(NATIVE_ARCH)
	for (int v = 0; v < N_VARIANTS; v++) {
		const struct seccomp_plan *plan = &plans[v];
		bool ns = variants[v].backend == BACKEND_NAMESPACES;
		uint64_t uid = (uint32_t)plan->uid, gid = (uint32_t)plan->gid, other = uid + 4242;
		static const struct {
			const char *what;
			long nr;
			int id_arg;	/* which argument carries the uid */
		} calls[] = {
			{ "chown", __NR_chown, 1 }, { "fchown", __NR_fchown, 1 }, { "lchown", __NR_lchown, 1 },
			{ "fchownat", __NR_fchownat, 2 }, { "setuid", __NR_setuid, 0 },
			{ "setreuid", __NR_setreuid, 0 }, { "setresuid", __NR_setresuid, 0 },
		};
		for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
			bool setid = calls[i].id_arg == 0;
			uint64_t own[6] = { 0 }, foreign[6] = { 0 };
			if (setid) {
				/* setuid(uid), setreuid(uid, -1), setresuid(uid, -1, -1) */
				own[0] = uid, own[1] = own[2] = 0xffffffff;
				foreign[0] = other, foreign[1] = foreign[2] = 0xffffffff;
			} else {
				own[calls[i].id_arg] = uid, own[calls[i].id_arg + 1] = gid;
				foreign[calls[i].id_arg] = other, foreign[calls[i].id_arg + 1] = 0xffffffff;
			}
			uint32_t got;
			if (!ns && !setid) {
				ok(run_prog(v, calls[i].nr, own, NATIVE_ARCH, &got) && got == SECCOMP_RET_USER_NOTIF,
				   "%s: %s: USER_NOTIF (the supervisor)", variants[v].name, calls[i].what);
				continue;
			}
			ok(run_prog(v, calls[i].nr, own, NATIVE_ARCH, &got) && got == SECCOMP_RET_ALLOW,
			   "%s: %s to the caller's own id: ALLOW", variants[v].name, calls[i].what);
			bool ran = run_prog(v, calls[i].nr, foreign, NATIVE_ARCH, &got);
			if (ns) {
				ok(ran && got == SECCOMP_RET_USER_NOTIF, "%s: %s to an unmapped id: USER_NOTIF",
				   variants[v].name, calls[i].what);
				is_int(seccomp_answer(plan, (int)calls[i].nr, foreign, NULL), EPERM,
				       "%s: %s to an unmapped id: answered EPERM", variants[v].name, calls[i].what);
			} else {
				ok(ran && got == SECCOMP_RET_ALLOW, "%s: %s to another id: ALLOW (the kernel decides)",
				   variants[v].name, calls[i].what);
			}
		}
	}
#endif
}

/* seccomp_answer for nr -1 (what a filter sees for syscall(-1)): no row
 * is about it, whatever rows have no number on this architecture. */
static void test_answer_unknown(void)
{
	for (int v = 0; v < N_VARIANTS; v++) {
		const uint64_t args[6] = { 0 };
		const struct sc_rule *rule = (const struct sc_rule *)1;
		int err = seccomp_answer(&plans[v], -1, args, &rule);
		if (!ok(err == ENOSYS && rule == NULL, "%s: seccomp_answer(nr -1) is ENOSYS, naming no row",
			variants[v].name))
			diag("  got %s from row '%s'", strerrorname_np(err),
			     rule && rule != (const struct sc_rule *)1 ? rule->name : "?");
		if (v == LL_OFF && err != ENOSYS)
			break;	/* one diagnosis is enough */
	}
}

/* The variant of the same backend and ABI with another network mode,
 * or of the other backend with the same mode. */
static int variant_with(int v, enum backend backend, enum net_mode net)
{
	for (int w = 0; w < N_VARIANTS; w++)
		if (variants[w].backend == backend && variants[w].net == net &&
		    (variants[w].abi == variants[v].abi || backend != variants[v].backend))
			return w;
	return -1;
}

static uint32_t reference(const struct seccomp_plan *plan, int nr, const uint64_t args[6], int *ret_err);

/* Every fix a refused socket names is an option that gives it: --net on
 * where the network is on already, or for a family no mode gives (raw
 * packets, netlink's audit), would be refused again. */
static void test_socket_fixes(void)
{
	static const uint64_t sockets[][3] = {
		{ AF_INET, SOCK_STREAM, 0 },	 { AF_INET, SOCK_DGRAM, 0 },	  { AF_INET, SOCK_RAW, IPPROTO_ICMP },
		{ AF_INET6, SOCK_STREAM, 0 },	 { AF_INET6, SOCK_DGRAM, 0 },	  { AF_INET, SOCK_STREAM, 132 /* SCTP */ },
		{ AF_UNIX, SOCK_STREAM, 0 },	 { AF_UNIX, SOCK_DGRAM, 0 },	  { AF_UNIX, SOCK_SEQPACKET, 0 },
		{ AF_PACKET, SOCK_RAW, 0 },	 { AF_NETLINK, SOCK_RAW, 9 /* audit */ },
		{ AF_NETLINK, SOCK_RAW, 0 },	 { AF_BLUETOOTH, SOCK_RAW, 0 },
	};
	unsigned bad = 0;
	for (int v = 0; v < N_VARIANTS; v++)
		for (size_t i = 0; i < ARRAY_SIZE(sockets); i++) {
			const uint64_t args[6] = { sockets[i][0], sockets[i][1], sockets[i][2] };
			int err;
			if (reference(&plans[v], SYS_socket, args, &err) == SECCOMP_RET_ALLOW || err < 0)
				continue;
			const struct sc_rule *rule = NULL;
			(void)seccomp_answer(&plans[v], SYS_socket, args, &rule);
			const char *fix = seccomp_fix(rule, variants[v].net, SYS_socket, args);
			int w = !fix			       ? -1
				: strstr(fix, "--net loopback") ? variant_with(v, variants[v].backend, NET_LOOPBACK)
				: strstr(fix, "--net on")       ? variant_with(v, variants[v].backend, NET_ON)
				: strstr(fix, "--backend namespaces") ? variant_with(v, BACKEND_NAMESPACES, variants[v].net)
								       : -2;
			if (w == -1 || (w >= 0 && reference(&plans[w], SYS_socket, args, &err) == SECCOMP_RET_ALLOW))
				continue;
			if (bad++ < 5)
				diag("%s: socket(%llu, %llu, %llu): the fix '%s' does not give it", variants[v].name,
				     (unsigned long long)args[0], (unsigned long long)args[1], (unsigned long long)args[2],
				     fix);
		}
	ok(bad == 0, "every fix a refused socket names gives it (%u do not)", bad);
	const uint64_t fastopen[6] = { 3, 0, 0, MSG_FASTOPEN };
	unsigned named = 0, refused = 0;
	for (int v = 0; v < N_VARIANTS; v++) {
		const struct sc_rule *rule = NULL;
		if (seccomp_answer(&plans[v], SYS_sendto, fastopen, &rule) == EPERM && rule) {
			refused++;
			named += seccomp_fix(rule, variants[v].net, SYS_sendto, fastopen) != NULL;
		}
	}
	ok(refused == N_VARIANTS && named == 0, "TCP Fast Open, refused in every mode (%u of %d), names no fix (%u do)",
	   refused, N_VARIANTS, named);
}

/* ---- the reference reading of the table, against random arguments ---- */

/* A row's value as the loaded filter compares it: the caller's ids stand
 * in for SC_OWN_UID and SC_OWN_GID (seccomp_patch_ids). */
static uint64_t row_value(const struct seccomp_plan *plan, const struct sc_arg *a)
{
	if (a->value == SC_OWN_UID)
		return (uint32_t)plan->uid;
	if (a->value == SC_OWN_GID)
		return (uint32_t)plan->gid;
	return a->value;
}

static bool row_matches(const struct seccomp_plan *plan, const struct sc_rule *r, const uint64_t args[6])
{
	for (unsigned i = 0; i < r->n_args; i++)
		if ((args[sc_arg_index(&r->args[i])] & sc_arg_mask(&r->args[i])) != row_value(plan, &r->args[i]))
			return false;
	return true;
}

/* The first row of the plan for nr that matches decides; none: the
 * listener, answering ENOSYS. */
static uint32_t reference(const struct seccomp_plan *plan, int nr, const uint64_t args[6], int *ret_err)
{
	*ret_err = ENOSYS;
	for (size_t i = 0; i < plan->n_rules; i++) {
		const struct sc_rule *r = plan->rules[i];
		if (plan->nrs[i] != nr || !row_matches(plan, r, args))
			continue;
		if (r->action == SC_ALLOW)
			return SECCOMP_RET_ALLOW;
		/* The supervisor's calls reach the listener and are decided
		 * there, not by seccomp_answer: -1 marks them. */
		*ret_err = r->action == SC_SUPERVISE ? -1 : r->err;
		if (r->action == SC_ERRNO)
			return SECCOMP_RET_ERRNO | (uint32_t)r->err;
		return SECCOMP_RET_USER_NOTIF;
	}
	return SECCOMP_RET_USER_NOTIF;
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ULL;

static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* An argument worth trying for nr: a value some row tests for (with noise
 * outside its mask half the time), zero, or random bits. */
static uint64_t pick_arg(const struct seccomp_plan *plan, int nr, unsigned arg)
{
	uint64_t cands[32];
	size_t n = 0;
	for (size_t i = 0; i < plan->n_rules && n < ARRAY_SIZE(cands); i++) {
		const struct sc_rule *r = plan->rules[i];
		if (plan->nrs[i] != nr)
			continue;
		for (unsigned a = 0; a < r->n_args && n < ARRAY_SIZE(cands); a++)
			if (sc_arg_index(&r->args[a]) == arg) {
				uint64_t v = row_value(plan, &r->args[a]);
				if (rnd() & 1)
					v |= rnd() & ~sc_arg_mask(&r->args[a]);
				cands[n++] = v;
			}
	}
	switch (rnd() % 8) {
	case 0:
		return 0;
	case 1:
		return rnd();
	case 2:
		return rnd() & 0xffffffff;
	case 3:
		return HIGH(rnd()) | (n ? cands[rnd() % n] : 0);
	default:
		return n ? cands[rnd() % n] : rnd() % 64;
	}
}

static void test_reference(void)
{
#if defined(NATIVE_ARCH)
	for (int v = 0; v < N_VARIANTS; v++) {
		const struct seccomp_plan *plan = &plans[v];
		unsigned tried = 0, bad = 0, bad_answer = 0;
		for (size_t i = 0; i < plan->n_rules; i++) {
			int nr = plan->nrs[i];
			if (nr < 0)
				continue;
			bool first = true;
			for (size_t j = 0; j < i && first; j++)
				first = plan->nrs[j] != nr;
			if (!first)
				continue;
			for (int k = 0; k < 300; k++) {
				uint64_t args[6];
				for (unsigned a = 0; a < 6; a++)
					args[a] = pick_arg(plan, nr, a);
				int want_err;
				uint32_t want = reference(plan, nr, args, &want_err);
				uint32_t got;
				tried++;
				if (!run_prog(v, nr, args, NATIVE_ARCH, &got) || got != want) {
					if (bad++ < 5)
						diag("%s: %s(%#llx, %#llx, %#llx, %#llx): got %s, want %s", variants[v].name,
						     plan->rules[i]->name, (unsigned long long)args[0],
						     (unsigned long long)args[1], (unsigned long long)args[2],
						     (unsigned long long)args[3], ret_name(got), ret_name(want));
					continue;
				}
				if (got == SECCOMP_RET_USER_NOTIF && want_err != -1 &&
				    seccomp_answer(plan, nr, args, NULL) != want_err)
					bad_answer++;
			}
		}
		/* Numbers no row of this plan names: the listener, ENOSYS. */
		for (int nr = 0; nr < 1100; nr++) {
			bool named = false;
			for (size_t i = 0; i < plan->n_rules && !named; i++)
				named = plan->nrs[i] == nr;
			if (named)
				continue;
			uint64_t args[6] = { rnd(), rnd(), rnd(), rnd(), rnd(), rnd() };
			uint32_t got;
			tried++;
			if (!run_prog(v, nr, args, NATIVE_ARCH, &got) || got != SECCOMP_RET_USER_NOTIF) {
				if (bad++ < 5)
					diag("%s: unnamed nr %d: got %s", variants[v].name, nr, ret_name(got));
			} else if (seccomp_answer(plan, nr, args, NULL) != ENOSYS) {
				bad_answer++;
			}
		}
		is_int(bad, 0, "%s: the filter agrees with the table on %u random calls", variants[v].name, tried);
		is_int(bad_answer, 0, "%s: the listener's answers agree with the table", variants[v].name);
	}
#endif
}

/* ---- the table and the programs ---- */

static void test_table(void)
{
	size_t n;
	const struct sc_rule *t = seccomp_table(&n);
	ok(n > 100, "the table has %zu rows", n);
	size_t unknown = 0, mismatched = 0, here = 0, unterminated = 0, unexplained = 0;
	_cleanup_free_ char *absent = xstrdup("");
	for (size_t i = 0; i < n; i++) {
		int libnr = seccomp_syscall_resolve_name(t[i].name);
		if (libnr == __NR_SCMP_ERROR && t[i].nr < 0) {
			diag("row %zu: '%s' is not a system call libseccomp knows, and has no number", i, t[i].name);
			unknown++;
		}
		if (t[i].nr >= 0 && libnr >= 0 && libnr != t[i].nr) {
			diag("row %zu: '%s' is %d here, the table says %d", i, t[i].name, libnr, t[i].nr);
			mismatched++;
		}
		int nr = seccomp_rule_nr(&t[i]);
		if (nr >= 0) {
			here++;
		} else {
			char *s = xasprintf("%s%s%s", absent, *absent ? " " : "", t[i].name);
			free(absent);
			absent = s;
		}
		ok(t[i].action == SC_ALLOW || t[i].action == SC_SUPERVISE || t[i].err > 0,
		   "row %zu (%s): a refusal names its errno", i, t[i].name);
		if (strnlen(t[i].name, sizeof(t[i].name)) == sizeof(t[i].name))
			unterminated++;
		if ((t[i].action == SC_REFUSE || t[i].action == SC_SUPERVISE) && !seccomp_why(&t[i]))
			unexplained++;
	}
	is_int(unterminated, 0, "every row's name fits its %zu bytes with its NUL", sizeof(t[0].name));
	is_int(unexplained, 0, "every refusing or supervised row says why");
	is_str(seccomp_why(&(struct sc_rule){ .why = WHY_MOUNT_TABLE }), "the mount table", "seccomp_why reads the words");
	ok(seccomp_why(&(struct sc_rule){ .why = 200 }) == NULL, "an out-of-range reason reads as none");
	is_str(seccomp_syscall_name(__NR_getppid), "getppid", "a name from the generated text");
	is_str(seccomp_syscall_name(1000), "syscall 1000", "a number with no name");
	is_int(unknown, 0, "every row's name resolves (on some architecture) or has a number");
	is_int(mismatched, 0, "every numbered row agrees with libseccomp where it knows the call");
	diag("%zu rows are calls of this architecture; not here: %s", here, absent);

	/* The plan's numbers (generated at build time) are what libseccomp
	 * says now. */
	for (int v = 0; v < N_VARIANTS; v++) {
		size_t stale = 0;
		for (size_t i = 0; i < plans[v].n_rules; i++)
			if (plans[v].nrs[i] != seccomp_rule_nr(plans[v].rules[i]))
				stale++;
		is_int(stale, 0, "%s: the plan's numbers are libseccomp's", variants[v].name);
	}

	/* Namespaces do not depend on the Landlock ABI. */
	struct seccomp_plan ns2;
	seccomp_plan(BACKEND_NAMESPACES, NET_LOOPBACK, 2, &ns2);
	ok(!ns2.weak_landlock && ns2.n_rules == plans[NS_LO].n_rules,
	   "namespaces at abi 2: the same plan as at abi 6");
	seccomp_plan_free(&ns2);
	ok(plans[LL2_LO].weak_landlock && !plans[LL_LO].weak_landlock, "landlock below abi 3 is the weak variant");
}

static void test_programs(void)
{
	for (int v = 0; v < N_VARIANTS; v++) {
		unsigned codes;
		const char *err = bpf_check(&progs[v], &codes);
		if (!ok(err == NULL, "%s: %u instructions, all known to the interpreter", variants[v].name,
			progs[v].len))
			diag("  %s", err);
		ok(progs[v].len <= BPF_MAXINSNS, "%s: within BPF_MAXINSNS", variants[v].name);

		struct sock_fprog fresh;
		int r = seccomp_compile(&plans[v], &fresh);
		if (!is_int(r, 0, "%s: seccomp_compile succeeds", variants[v].name))
			continue;
		seccomp_patch_ids(&fresh, plans[v].uid, plans[v].gid);
		bool same = fresh.len == progs[v].len &&
			    memcmp(fresh.filter, progs[v].filter, fresh.len * sizeof(struct sock_filter)) == 0;
		if (!ok(same, "%s: the precompiled filter is byte-identical to a fresh compile (ids patched into both)", variants[v].name))
			diag("  precompiled %u instructions, fresh %u", progs[v].len, fresh.len);
		seccomp_bpf_free(&fresh);
	}

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	seccomp_plan_print(f, &plans[LL2_LO]);
	fclose(f);
	ok(text && strstr(text, "  ioctl            refuse EPERM if (arg1 & 0xffffffff) == 0x5412  "
				"(TIOCSTI pushes input into the terminal)\n"),
	   "explain prints the TIOCSTI row with its mask, errno and reason");
	ok(text && strstr(text, "  clone3           errno ENOSYS"), "explain prints clone3 as errno ENOSYS");
	free(text);
}

/* supervise_files: the instructions put before the compiled filter send
 * every open, creation, removal and rename to the listener, and leave
 * every other call, and every call of another architecture, to it. */
static void test_supervise_files(void)
{
	struct seccomp_plan plan;
	struct sock_fprog prog;
	seccomp_plan(BACKEND_LANDLOCK, NET_LOOPBACK, 6, &plan);
	plan.supervise_files = true;
	if (!is_int(seccomp_build(&plan, &prog), 0, "supervise_files: the filter builds")) {
		seccomp_plan_free(&plan);
		return;
	}
	ok(prog.len > progs[LL_LO].len && prog.len - progs[LL_LO].len < 40,
	   "supervise_files: a few instructions before the compiled filter (%u more)", prog.len - progs[LL_LO].len);
	ok(memcmp(prog.filter + (prog.len - progs[LL_LO].len), progs[LL_LO].filter,
		  progs[LL_LO].len * sizeof(struct sock_filter)) == 0,
	   "supervise_files: the compiled filter follows them unchanged");
	static const int calls[] = { __NR_openat, __NR_mkdirat, __NR_unlinkat, __NR_renameat2, __NR_linkat,
				     __NR_symlinkat, __NR_mknodat, __NR_truncate, __NR_openat2 };
	for (size_t i = 0; i < ARRAY_SIZE(calls); i++) {
		struct seccomp_data d = { .nr = calls[i], .arch = NATIVE_ARCH };
		struct run r = bpf_run(&prog, &d);
		ok(!r.error && r.ret == SECCOMP_RET_USER_NOTIF, "supervise_files: call %d goes to the listener", calls[i]);
	}
	struct seccomp_data d = { .nr = __NR_read, .arch = NATIVE_ARCH };
	struct run r = bpf_run(&prog, &d);
	ok(!r.error && r.ret == SECCOMP_RET_ALLOW, "supervise_files: read is allowed as before");
	d = (struct seccomp_data){ .nr = __NR_openat, .arch = AUDIT_ARCH_I386 };
	r = bpf_run(&prog, &d);
	struct run before = bpf_run(&progs[LL_LO], &d);
	ok(!r.error && r.ret == before.ret, "supervise_files: another architecture's call gets what it got before");
	seccomp_bpf_free(&prog);
	seccomp_plan_free(&plan);
}

/* name_opens: the opens alone go to the listener first, on both
 * backends; the listener lets each go on to the kernel, which is what
 * the compiled filter would have done: with Landlock ABI 3 it allows
 * every open, whatever its flags, or sends it to the listener itself. */
static void test_name_opens(void)
{
	static const int opens[] = { __NR_open, __NR_creat, __NR_openat, __NR_openat2 };
	static const uint64_t flags[] = { O_RDONLY, O_WRONLY | O_CREAT | O_TRUNC, O_RDWR | O_CREAT | O_EXCL, O_PATH,
					  O_TRUNC, O_RDWR | O_TMPFILE | O_EXCL, O_RDONLY | O_DIRECTORY | O_NOFOLLOW };
	for (int v = 0; v < N_VARIANTS; v++) {
		if (variants[v].abi < 3)
			continue;
		bool lets = true;
		for (size_t i = 0; i < ARRAY_SIZE(opens); i++)
			for (size_t j = 0; j < ARRAY_SIZE(flags); j++) {
				int at = opens[i] == __NR_openat || opens[i] == __NR_openat2;
				struct seccomp_data d = { .nr = opens[i], .arch = NATIVE_ARCH };
				d.args[at ? 2 : 1] = flags[j];
				struct run r = bpf_run(&progs[v], &d);
				lets = lets && !r.error && (r.ret == SECCOMP_RET_ALLOW || r.ret == SECCOMP_RET_USER_NOTIF);
			}
		ok(lets, "name_opens: %s: the compiled filter lets every open go on, whatever its flags, or sends it to "
			 "the listener", variants[v].name);
		struct seccomp_plan plan;
		struct sock_fprog prog;
		seccomp_plan(variants[v].backend, variants[v].net, variants[v].abi, &plan);
		plan.name_opens = true;
		if (!is_int(seccomp_build(&plan, &prog), 0, "name_opens: %s: the filter builds", variants[v].name)) {
			seccomp_plan_free(&plan);
			continue;
		}
		ok(memcmp(prog.filter + (prog.len - progs[v].len), progs[v].filter, progs[v].len * sizeof(struct sock_filter)) == 0,
		   "name_opens: %s: the compiled filter follows unchanged", variants[v].name);
		bool all = true;
		for (size_t i = 0; i < ARRAY_SIZE(opens); i++) {
			struct seccomp_data d = { .nr = opens[i], .arch = NATIVE_ARCH };
			struct run r = bpf_run(&prog, &d);
			all = all && !r.error && r.ret == SECCOMP_RET_USER_NOTIF;
		}
		ok(all, "name_opens: %s: every open goes to the listener", variants[v].name);
		static const int others[] = { __NR_mkdirat, __NR_unlinkat, __NR_read, __NR_renameat2, __NR_connect };
		all = true;
		for (size_t i = 0; i < ARRAY_SIZE(others); i++) {
			struct seccomp_data d = { .nr = others[i], .arch = NATIVE_ARCH };
			struct run r = bpf_run(&prog, &d), before = bpf_run(&progs[v], &d);
			all = all && !r.error && r.ret == before.ret;
		}
		ok(all, "name_opens: %s: creations, removals, renames and the rest get what they got before",
		   variants[v].name);
		seccomp_bpf_free(&prog);
		seccomp_plan_free(&plan);
	}
}

int main(void)
{
#if !defined(NATIVE_ARCH)
	tap_skip_all("no seccomp expectations for this architecture");
#endif
	for (int v = 0; v < N_VARIANTS; v++) {
		int r = seccomp_plan(variants[v].backend, variants[v].net, variants[v].abi, &plans[v]);
		if (r < 0 || seccomp_build(&plans[v], &progs[v]) < 0) {
			printf("Bail out! cannot build %s\n", variants[v].name);
			return 1;
		}
	}
	unsigned codes = 0;
	for (int v = 0; v < N_VARIANTS; v++) {
		unsigned c;
		bpf_check(&progs[v], &c);
		codes |= c;
	}
	diag("instruction classes libseccomp emitted: %s%s%s%s%s", codes & 1 ? "ld[k] " : "",
	     codes & 2 ? "jeq/jgt/jge#k " : "", codes & 4 ? "ja " : "", codes & 8 ? "and#k " : "",
	     codes & 16 ? "ret#k" : "");

	test_interpreter();
	test_table();
	test_programs();
	test_expectations();
	test_no_listener();
	test_ids();
	test_answer_unknown();
	test_socket_fixes();
	test_reference();
	test_supervise_files();
	test_name_opens();

	for (int v = 0; v < N_VARIANTS; v++) {
		seccomp_bpf_free(&progs[v]);
		seccomp_plan_free(&plans[v]);
	}
	return tap_done();
}
