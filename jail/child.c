#include "jail/child.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "cgroup/cgroup.h"
#include "jail/caps.h"
#include "cgroup/limits.h"
#include "jail/zygote.h"
#include "lib/fd.h"
#include "lib/phase.h"
#include "lib/util.h"
#include "netns/netns.h"
#include "seccomp/seccomp.h"

/* make bench's phase marks (lib/phase.h): the jail's init's, or the
 * landlock backend's command's process's. */
#define child_mark(c, what) phase_mark((c)->init ? "init:" what : "command:" what)

/* The signals stockade forwards; the jail's init passes them on. */
static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT };

static _Noreturn void fail(const struct child *c, enum child_step step, int err, const char *path, int code)
{
	struct child_error e = { .step = step, .err = err < 0 ? -err : err };
	if (path) {
		size_t n = strnlen(path, sizeof(e.path) - 1);
		memcpy(e.path, path, n);
	}
	(void)!write(c->err_fd, &e, sizeof(e));
	_exit(code);
}

static _Noreturn void fail_mount(const struct child *c, int err, const struct mount_failure *mf)
{
	struct child_error e = { .step = CHILD_STEP_MOUNT, .err = -err, .mount_step = (int)mf->step };
	if (mf->path) {
		size_t n = strnlen(mf->path, sizeof(e.path) - 1);
		memcpy(e.path, mf->path, n);
	}
	(void)!write(c->err_fd, &e, sizeof(e));
	_exit(EXIT_STOCKADE);
}

/* Forks, straight into the run's cgroup where there is one (clone3 with
 * CLONE_INTO_CGROUP): moving a process between cgroups afterwards waits
 * for an RCU grace period, milliseconds. */
static pid_t fork_into(const struct run_cgroup *cg, bool *ret_in_cgroup)
{
	*ret_in_cgroup = false;
	if (cg->dir_fd >= 0) {
		struct clone_args args = {
			.flags = CLONE_INTO_CGROUP,
			.exit_signal = SIGCHLD,
			.cgroup = (uint64_t)cg->dir_fd,
		};
		long pid = syscall(SYS_clone3, &args, sizeof(args));
		if (pid >= 0) {
			*ret_in_cgroup = true;
			return (pid_t)pid;
		}
	}
	return fork();
}

/* What child_start's process is started with. */
struct start {
	const struct child *c;
	struct link *ln;
	const struct run_cgroup *cg;
	bool in_cgroup;	/* born in the run's cgroup (vfork_into says) */
};

/* The command's process, from its fork on: its pid said first (stockade
 * lets it go on that), then as child_main says. */
static _Noreturn void command_process(const struct start *st)
{
	phase_mark("command:start");
	struct child c = *st->c;
	link_child_side(st->ln);
	link_say_pid(c.sock);
	if (!st->in_cgroup)
		c.cgroup_procs = st->cg->procs_fd;
	child_main(&c);
}

static int command_vforked(void *data)
{
	command_process(data);
}

/* The stack of a vfork's process, with a page below it that faults. */
#define COMMAND_STACK (2u << 20)

#if defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
/* clone3(args), the child starting on the stack args gives it, where no
 * frame of the caller's is: it calls fn(arg) and exits with what fn
 * returns, never coming back here (glibc's clone does as much for
 * clone, and has no clone3 of its own). The child's pid, or -errno. */
static long clone3_call(struct clone_args *args, int (*fn)(void *), void *arg)
{
	long ret;
	register int (*r12)(void *) __asm__("r12") = fn;
	register void *r13 __asm__("r13") = arg;
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "xor %%ebp, %%ebp\n\t"
			 "mov %%r13, %%rdi\n\t"
			 "call *%%r12\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov %[exit], %%eax\n\t"
			 "syscall\n\t"
			 "hlt\n"
			 "1:"
			 : "=a"(ret)
			 : "0"((long)SYS_clone3), "D"(args), "S"(sizeof(*args)), "r"(r12), "r"(r13), [exit] "i"(SYS_exit)
			 : "rcx", "r11", "memory");
	return ret;
}
#endif

/* fn(arg) in a process that shares the caller's memory until it execs or
 * ends (CLONE_VM | CLONE_VFORK, on a stack of its own), the caller
 * stopped meanwhile: no copy of the caller's memory to make and tear
 * down at the exec (a fork costs a millisecond on some hosts, 40 us this
 * way). fn runs nothing but stockade's code on that memory until its
 * exec, writes nothing the caller reads, and must not return into the
 * caller's frames (it execs or _exits).
 *
 * Born in the cgroup of cgroup_fd where there is one (clone3 with
 * CLONE_INTO_CGROUP: joining later waits for an RCU grace period), on
 * x86_64; where clone3 fails (a filter's ENOSYS), a vfork that must join
 * it, *ret_in_cgroup saying which before fn starts. Each of close_first
 * (a descriptor or -1) is closed once the stack is there, before the
 * process starts. The pid, or -errno; 0 where there is no stack for it
 * (nothing closed, no process), which the caller answers with a fork.
 * Never under AddressSanitizer, which a shared stack confuses. */
static pid_t vfork_into(int (*fn)(void *), void *arg, int cgroup_fd, bool *ret_in_cgroup, int *close_first,
			size_t n_close)
{
#ifdef __SANITIZE_ADDRESS__
	(void)fn;
	(void)arg;
	(void)cgroup_fd;
	(void)ret_in_cgroup;
	(void)close_first;
	(void)n_close;
	return 0;
#else
#if !defined(__x86_64__)
	/* no clone3 of ours here: a fork born in the cgroup is faster than
	 * a vfork that joins it */
	if (cgroup_fd >= 0)
		return 0;
#endif
	char *stack = mmap(NULL, COMMAND_STACK + 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (stack == MAP_FAILED)
		return 0;
	for (size_t i = 0; i < n_close; i++)
		if (close_first[i] >= 0)
			close(TAKE_FD(close_first[i]));
	(void)mprotect(stack, 4096, PROT_NONE);
	pid_t pid = -1;
	int e = 0;
#if defined(__x86_64__)
	if (cgroup_fd >= 0) {
		struct clone_args args = {
			.flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP,
			.exit_signal = SIGCHLD,
			.stack = (uint64_t)(uintptr_t)(stack + 4096),
			.stack_size = COMMAND_STACK,
			.cgroup = (uint64_t)cgroup_fd,
		};
		if (ret_in_cgroup)
			*ret_in_cgroup = true;
		long r = clone3_call(&args, fn, arg);
		pid = r >= 0 ? (pid_t)r : -1;
	}
#endif
	if (pid < 0) {
		if (ret_in_cgroup)
			*ret_in_cgroup = false;
		pid = clone(fn, stack + 4096 + COMMAND_STACK, CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
		e = errno;
	}
	munmap(stack, COMMAND_STACK + 4096);
	return pid < 0 ? -e : pid;
#endif
}

/* Forks the command's process. The keeper's is a vfork (vfork_into),
 * into the run's cgroup where there is one: the keeper, stopped until
 * the process execs or ends, has nothing to do meanwhile, and the
 * process says its pid to stockade itself. Not a session's zygote,
 * which never execs. */
pid_t child_start(const struct child *c, struct link *ln, const struct run_cgroup *cg, bool in_keeper)
{
	struct start st = { .c = c, .ln = ln, .cg = cg };
	if (in_keeper && !c->zygote) {
		/* stockade's ends of the link, which only stockade may hold,
		 * closed first: should it die before its go, the process
		 * waiting for it reads the end, and the keeper, stopped till
		 * then, goes on to end the run */
		int ends[2] = { ln->sock[0], ln->err[0] };
		pid_t pid = vfork_into(command_vforked, &st, cg->dir_fd, &st.in_cgroup, ends, 2);
		if (pid != 0) {
			ln->sock[0] = ends[0];
			ln->err[0] = ends[1];
			return pid;
		}
	}
	pid_t pid = fork_into(cg, &st.in_cgroup);
	if (pid == 0)
		command_process(&st);
	return pid < 0 ? -errno : pid;
}

void link_say_pid(int sock)
{
	pid_t self = getpid();
	if (write(sock, &self, sizeof(self)) != (ssize_t)sizeof(self))
		_exit(EXIT_STOCKADE);
}

pid_t link_read_pid(int sock)
{
	pid_t pid = -1;
	size_t n = 0;
	int r = read_all(sock, &pid, sizeof(pid), &n);
	if (r < 0)
		return r;
	return n == sizeof(pid) && pid > 0 ? pid : -EPIPE;
}

int child_take_listener(int sock, pid_t pid, int *ret_fd)
{
	int num = -1;
	ssize_t n;
	do
		n = read(sock, &num, sizeof(num));
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(num) || num < 0)
		return n < 0 ? -errno : -EPIPE;
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	int fd = (int)syscall(SYS_pidfd_getfd, pidfd, num, 0);
	int e = errno;
	close(pidfd);
	if (fd < 0)
		return -e;
	*ret_fd = fd;
	return 0;
}

int link_open(struct link *l)
{
	*l = (struct link){ { -1, -1 }, { -1, -1 } };
	if (pipe2(l->err, O_CLOEXEC) < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, l->sock) < 0)
		return -errno;
	return 0;
}

void link_close(struct link *l)
{
	for (int i = 0; i < 2; i++) {
		if (l->err[i] >= 0)
			close(l->err[i]);
		if (l->sock[i] >= 0)
			close(l->sock[i]);
	}
	*l = (struct link){ { -1, -1 }, { -1, -1 } };
}

void link_child_side(struct link *l)
{
	close(l->err[0]);
	close(l->sock[0]);
}

void link_parent_side(struct link *l)
{
	close(l->err[1]);
	close(l->sock[1]);
	l->err[1] = l->sock[1] = -1;
}

int child_go(int sock, int ruleset)
{
	if (ruleset >= 0)
		return fd_send(sock, ruleset);
	/* A process that already failed has closed its end: EPIPE, said by
	 * the error it wrote, never SIGPIPE for stockade. */
	return send(sock, "g", 1, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

/* Waits for stockade's go, and the Landlock ruleset that may come with
 * it. EOF: stockade gave up (or is gone) before the command could start. */
static int wait_go(const struct child *c, int *ret_ruleset)
{
	char byte;
	*ret_ruleset = -1;
	return fd_recv_n(c->sock, &byte, ret_ruleset, 1) < 0 ? -EPIPE : 0;
}

/* Confines the calling process for good, in the one order both backends
 * share. Capabilities go first, while nothing is left to need them;
 * no_new_privs next, which the filter and Landlock need without
 * CAP_SYS_ADMIN. The filter before Landlock: in the landlock backend its
 * load (the kernel checks and compiles some 650 instructions, 0.3 ms
 * here) overlaps what stockade still makes, and the process
 * waits for its ruleset only then. Everything done after the filter is in
 * its allowlist (recvmsg, landlock_*, openat2, close, and for the jail's
 * init signalfd, clone, wait4), and stockade answers the listener while
 * it waits for the exec, so a refusal fails a step instead of hanging
 * it. The listener goes to stockade and never stays here: holding it,
 * the command could answer its own refusals. */
static void confine(const struct child *c)
{
	int r = caps_drop_all();
	if (r < 0)
		fail(c, CHILD_STEP_CAPS, r, NULL, EXIT_STOCKADE);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		fail(c, CHILD_STEP_NNP, errno, NULL, EXIT_STOCKADE);
	child_mark(c, "caps");
	int handed = -1;	/* the listener stockade takes by its number */
	if (c->bpf && c->no_listener) {
		/* A parent's filter holds the listener: this one goes alone,
		 * answering in itself what a listener would have. */
		r = seccomp_load_filter(c->bpf, NULL);
		if (r < 0)
			fail(c, CHILD_STEP_SECCOMP, r, NULL, EXIT_STOCKADE);
	} else if (c->bpf) {
		int listener = -1;
		r = seccomp_load_filter(c->bpf, &listener);
		if (r < 0)
			fail(c, CHILD_STEP_SECCOMP, r, NULL, EXIT_STOCKADE);
		/* The landlock backend's filter hands every sendmsg to the
		 * listener (a datagram's address), which nobody serves yet:
		 * stockade takes the listener itself (pidfd_getfd) by the
		 * number written here, and the process waits for its go, then
		 * closes it. The jail's init sends it. */
		if (c->init) {
			r = fd_send(c->sock, listener);
			if (r < 0)
				fail(c, CHILD_STEP_HANDOVER, r, NULL, EXIT_STOCKADE);
			close(listener);
		} else if (write(c->sock, &listener, sizeof(listener)) != (ssize_t)sizeof(listener))
			fail(c, CHILD_STEP_HANDOVER, -errno, NULL, EXIT_STOCKADE);
		else
			handed = listener;
	}
	child_mark(c, "seccomp_load");
	int ruleset = -1;
	if (!c->init && wait_go(c, &ruleset) < 0)
		_exit(EXIT_STOCKADE);
	if (!c->init)
		child_mark(c, "wait_go");
	/* stockade holds it by now: it took it before it said go */
	if (handed >= 0)
		close(handed);
	if (c->landlock) {
		const char *failing = NULL;
		r = landlock_apply(c->landlock, &failing);
		if (r < 0)
			fail(c, CHILD_STEP_LANDLOCK, r, failing, EXIT_STOCKADE);
	} else if (ruleset >= 0) {
		r = landlock_restrict(ruleset);
		if (r < 0)
			fail(c, CHILD_STEP_LANDLOCK, r, NULL, EXIT_STOCKADE);
		close(ruleset);
	}
	child_mark(c, "landlock");
}

/* The path the command is exec'd by: the one found on PATH, its links
 * kept (a script's interpreter is handed that path: pg_wrapper behind
 * /usr/bin/psql reads its name from it), where it leads here, in the
 * jail, to the very file the policy granted; else the granted file
 * itself (a link whose folder the jail does not have, or one changed
 * since the policy was made). */
static const char *exec_path(const struct child *c)
{
	struct stat by_name, granted;
	if (c->exec_path && stat(c->exec_path, &by_name) == 0 && stat(c->program, &granted) == 0 &&
	    by_name.st_dev == granted.st_dev && by_name.st_ino == granted.st_ino)
		return c->exec_path;
	return c->program;
}

static _Noreturn void exec_command(const struct child *c)
{
	if (c->terminal) {
		int r = terminal_enter(c->terminal);
		if (r < 0)
			fail(c, CHILD_STEP_SESSION, r, NULL, EXIT_STOCKADE);
	} else if (c->own_pgrp && setpgid(0, 0) < 0) {
		fail(c, CHILD_STEP_PGRP, errno, NULL, EXIT_STOCKADE);
	}
	sigprocmask(SIG_SETMASK, c->exec_mask, NULL);
	/* Only 0, 1 and 2 reach the command; the rest close at exec, the
	 * error pipe last of all. */
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	const char *path = exec_path(c);
	/* The landlock backend's process says it is at its exec: from here
	 * on what it calls is the command's, for the supervisor, which
	 * stockade starts once the error pipe ends (the keeper's vfork
	 * holds its end until this exec, so that EOF may come after the
	 * command's first calls). */
	if (c->jail && !c->init)
		(void)!send(c->sock, "x", 1, MSG_NOSIGNAL);
	phase_mark("command:execve");
	execve(path, c->argv, c->envp);
	/* The program was found before the fork: failing now means it cannot
	 * run: 127 as a shell says when what it needs is not there (its
	 * interpreter or loader missing, or outside what the jail may read),
	 * 126 otherwise. */
	fail(c, CHILD_STEP_EXEC, errno, c->program, exit_exec_failed(errno));
}

/* Reaps every child that has exited; *status takes the command's when it
 * is among them. A stop of the command's is reported to stockade, which
 * stops too (run.c, suspend). */
static void reap_exited(const struct child *c, pid_t pid, int *status)
{
	int st;
	pid_t w;
	while ((w = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
		if (w != pid)
			continue;
		if (!WIFSTOPPED(st)) {
			*status = st;
			continue;
		}
		int stopped = -2;	/* INIT_REPORT_STOPPED */
		(void)!write(c->sock, &stopped, sizeof(stopped));
	}
}

/* The jail's init, pid 1 of its pid namespace and already confined: forks
 * the command, reaps every process, forwards the signals stockade sends
 * it, and hands the command's status back. */
/* --publish: sockets of the jail's network for stockade, which connects
 * each to the run's listener: FACTORY_BATCH of the family asked for ('4'
 * or '6') in one message tagged with it, so that stockade asks once in a
 * while, ahead of the connections. The byte alone says none could be
 * made. The factory, or -1 once stockade has closed its end. */
int child_serve_factory(int sock)
{
	char family;
	ssize_t n = recv(sock, &family, 1, MSG_DONTWAIT);
	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		close(sock);
		return -1;
	}
	if (n != 1)
		return sock;
	int fds[FACTORY_BATCH];
	size_t made = 0;
	while (made < FACTORY_BATCH) {
		int fd = socket(family == '6' ? AF_INET6 : AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			break;
		fds[made++] = fd;
	}
	(void)fd_send_n(sock, family, fds, made);
	for (size_t i = 0; i < made; i++)
		close(fds[i]);
	return sock;
}

static int init_command(void *data)
{
	phase_mark("command:start");
	exec_command(data);
}

static _Noreturn void be_init(const struct child *c)
{
	sigset_t mask;
	sigemptyset(&mask);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&mask, forwarded[i]);
	sigaddset(&mask, SIGCHLD);
	int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sig_fd < 0)
		fail(c, CHILD_STEP_INIT, errno, "signalfd", EXIT_STOCKADE);
	/* The command as a vfork (vfork_into): init, confined by now,
	 * has nothing to do until it has exec'd. */
	pid_t pid = vfork_into(init_command, (void *)c, -1, NULL, NULL, 0);
	if (pid == 0)
		pid = fork();
	if (pid < 0)
		fail(c, CHILD_STEP_INIT, pid == -1 ? errno : -pid, "fork", EXIT_STOCKADE);
	if (pid == 0)
		init_command((void *)c);
	phase_mark("init:fork_command");
	/* stockade sees EOF on the error pipe when the command has exec'd. */
	close(c->err_fd);

	int status = -1;
	int factory = c->factory;
	while (status == -1) {
		struct pollfd fds[2] = { { .fd = sig_fd, .events = POLLIN }, { .fd = factory, .events = POLLIN } };
		if (poll(fds, 2, -1) < 0)
			continue;
		if (fds[1].revents)
			factory = child_serve_factory(factory);
		if (!(fds[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		ssize_t n = read(sig_fd, &si, sizeof(si));
		if (n != sizeof(si))
			continue;
		int sig = (int)si.ssi_signo;
		if (sig == SIGCHLD) {
			reap_exited(c, pid, &status);
			continue;
		}
		/* The terminal already reached the command in this group. */
		if (!c->own_pgrp && si.ssi_code == SI_KERNEL)
			continue;
		/* Before its setsid the command has no group of its own yet. */
		if (!c->own_pgrp || kill(-pid, sig) < 0)
			kill(pid, sig);
	}
	/* Everything the command left, setsid or not: pid 1 sees the whole
	 * namespace. */
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	phase_mark("init:all_reaped");
	(void)!write(c->sock, &status, sizeof(status));
	_exit(0);
}

_Noreturn void child_main(const struct child *c)
{
	/* 1. It dies with stockade. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(EXIT_STOCKADE);
	/* 1a. Out of the user's session, and not one descriptor of the
	 *     user's terminal kept (the jail's init included: nothing in the
	 *     jail holds one, whatever it is). */
	if (c->close_fd >= 0)
		close(c->close_fd);
	if (c->terminal) {
		/* The landlock backend's command's process, with the pty as
		 * controlling terminal, is in the keeper's session already,
		 * which leads it (terminal_lead); the jail's init leads its
		 * own, and a session's zygote has one of its own. */
		int r = terminal_leave(c->terminal, c->tty_stand_in, c->init || c->zygote || !c->terminal->controlling);
		if (r < 0)
			fail(c, CHILD_STEP_SESSION, r, NULL, EXIT_STOCKADE);
	}
	/* 2. The jail's init waits for stockade's go before anything: its
	 *    uid and gid maps are written by then. (The landlock backend's
	 *    process waits in 8, for its ruleset.) A stockade gone before it
	 *    said go (killed ahead of the death signal above) closed its end:
	 *    EOF, and nothing runs. */
	int ignored;
	if (c->init && wait_go(c, &ignored) < 0)
		_exit(EXIT_STOCKADE);
	if (c->init)
		child_mark(c, "wait_go");
	/* 3. The run's cgroup, where clone3 could not put it at birth; the
	 *    limits' groups (the jail's init as the landlock backend's
	 *    process: before anything of the command's exists, and all of
	 *    it is born in them). */
	if (c->cgroup_procs >= 0 && write(c->cgroup_procs, "0", 1) != 1)
		fail(c, CHILD_STEP_CGROUP, errno, "cgroup.procs", EXIT_STOCKADE);
	for (size_t i = 0; i < c->n_join_procs; i++)
		if (write(c->join_procs[i], "0", 1) != 1)
			fail(c, CHILD_STEP_CGROUP, errno, "the limits' cgroup", EXIT_STOCKADE);
	/* The user's tasks but this one, which is the run's: counted
	 * within an eighth of the limit, so that a host of few tasks is
	 * read in one look (limits_user_tasks_within). */
	unsigned long nproc = c->nproc;
	if (nproc && c->nproc_plus_user) {
		unsigned long others = limits_user_tasks_within(getuid(), nproc / 8);
		nproc += others ? others - 1 : 0;
		/* Never above a hard limit an outer run set: it holds. */
		struct rlimit held;
		if (getrlimit(RLIMIT_NPROC, &held) == 0 && held.rlim_max != RLIM_INFINITY && nproc > held.rlim_max)
			nproc = held.rlim_max;
	}
	child_mark(c, "cgroup_nproc");
	/* 4. The network namespace's own loopback. */
	if (c->loopback) {
		int r = netns_loopback_up();
		if (r < 0)
			fail(c, CHILD_STEP_NETLINK, r, "lo", EXIT_STOCKADE);
	}
	if (c->loopback)
		child_mark(c, "loopback_up");
	/* 4b. The name responder's socket, bound in the jail's network
	 *     namespace while init may still bind port 53 there; stockade
	 *     serves it from outside. */
	if (c->responder) {
		int fd = netns_responder_open();
		if (fd < 0)
			fail(c, CHILD_STEP_NETLINK, fd, "127.0.0.1:53", EXIT_STOCKADE);
		int r = fd_send(c->sock, fd);
		if (r < 0)
			fail(c, CHILD_STEP_HANDOVER, r, NULL, EXIT_STOCKADE);
		close(fd);
	}
	/* 4b'. The way out that leads nowhere, read by stockade, which
	 *      records where the command tried to go. Where it cannot be
	 *      made (no veth), nothing is recorded and the run goes on. */
	if (c->outside) {
		int nl = -1, pkt = -1;
		(void)netns_outside_sockets(&nl, &pkt);
		int r = nl >= 0 ? fd_send(c->sock, nl) : fd_send_none(c->sock);
		if (r == 0)
			r = pkt >= 0 ? fd_send(c->sock, pkt) : fd_send_none(c->sock);
		if (r < 0)
			fail(c, CHILD_STEP_HANDOVER, r, NULL, EXIT_STOCKADE);
		if (nl >= 0)
			close(nl);
		if (pkt >= 0)
			close(pkt);
		/* The look-out on lo for connects nobody in the jail
		 * listens for: where it cannot be made, they go unnamed. */
		int rf = netns_refusals_socket();
		r = rf >= 0 ? fd_send(c->sock, rf) : fd_send_none(c->sock);
		if (r < 0)
			fail(c, CHILD_STEP_HANDOVER, r, NULL, EXIT_STOCKADE);
		if (rf >= 0)
			close(rf);
	}
	if (c->responder || c->outside)
		child_mark(c, "responder_outside");
	/* 4c. --connect: a listener where the command will look for the
	 *     host's service, listening before the command starts. */
	for (size_t i = 0; i < c->n_listens; i++) {
		const struct child_listen *l = &c->listens[i];
		if (l->add_address) {
			const void *a = l->addr.ss_family == AF_INET
						? (const void *)&((const struct sockaddr_in *)&l->addr)->sin_addr
						: (const void *)&((const struct sockaddr_in6 *)&l->addr)->sin6_addr;
			int r = netns_loopback_add_address(l->addr.ss_family, a);
			if (r < 0)
				fail(c, CHILD_STEP_NETLINK, r, "--connect", EXIT_STOCKADE);
		}
		int fd = socket(l->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		int one = 1;
		if (fd >= 0 && l->addr.ss_family == AF_INET6)
			(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		if (fd < 0 || bind(fd, (const struct sockaddr *)&l->addr, l->len) < 0 || listen(fd, 128) < 0)
			fail(c, CHILD_STEP_NETLINK, errno, "--connect", EXIT_STOCKADE);
		int r = fd_send(c->sock, fd);
		if (r < 0)
			fail(c, CHILD_STEP_HANDOVER, r, NULL, EXIT_STOCKADE);
		close(fd);
	}
	/* 4d. Network allow: every TCP connection to an allowed port lands
	 *     on a listener here, stockade's relay's. */
	if (c->n_allow_ports) {
		int r = netns_allow_routes(c->allow_ports, c->n_allow_ports);
		if (r < 0)
			fail(c, CHILD_STEP_NETLINK, r, "network allow's routes", EXIT_STOCKADE);
	}
	for (size_t i = 0; i < c->n_allow_ports * 2; i++) {
		int family = i % 2 ? AF_INET6 : AF_INET;
		int fd = netns_allow_listen(family, c->allow_ports[i / 2]);
		if (fd < 0 && family == AF_INET6 && (fd == -EAFNOSUPPORT || fd == -EADDRNOTAVAIL)) {
			int r = fd_send_none(c->sock);
			if (r < 0)
				fail(c, CHILD_STEP_HANDOVER, r, NULL, EXIT_STOCKADE);
			continue;
		}
		if (fd < 0)
			fail(c, CHILD_STEP_NETLINK, fd, "network allow's listeners", EXIT_STOCKADE);
		int r = fd_send(c->sock, fd);
		if (r < 0)
			fail(c, CHILD_STEP_HANDOVER, r, NULL, EXIT_STOCKADE);
		close(fd);
	}
	/* 5. The new root, pivoted into. */
	if (c->mounts) {
		struct mount_failure mf;
		int shared = -1;
		int r = mount_apply_keep(c->mounts, c->root_dir, c->count_written ? &shared : NULL, &mf);
		if (r < 0)
			fail_mount(c, r, &mf);
		child_mark(c, "mount_apply");
		/* 5b. The run's tmpfs, to stockade, which counts what the run
		 *     left there once it is over (it goes with the run). */
		if (c->count_written) {
			r = shared >= 0 ? fd_send(c->sock, shared) : fd_send_none(c->sock);
			if (r < 0)
				fail(c, CHILD_STEP_HANDOVER, r, NULL, EXIT_STOCKADE);
			if (shared >= 0)
				close(shared);
		}
	}
	/* 6. The working directory, as the jail sees it. */
	if (chdir(c->cwd) < 0)
		fail(c, CHILD_STEP_CHDIR, errno, c->cwd, EXIT_STOCKADE);
	/* 6a. The jail's terminal, from its own devpts: the master to
	 *     stockade, which relays it; only the slave stays here, on the
	 *     descriptors that were the user's terminal. */
	if (c->init && c->terminal && c->terminal->tty_fds) {
		int master = -1, slave = -1;
		int r = terminal_open_jail_pty(c->terminal, &master, &slave);
		if (r < 0)
			fail(c, CHILD_STEP_TERMINAL, r, "/dev/ptmx", EXIT_STOCKADE);
		r = fd_send(c->sock, master);
		close(master);
		if (r < 0)
			fail(c, CHILD_STEP_HANDOVER, r, NULL, EXIT_STOCKADE);
		for (int fd = 0; fd <= 2; fd++)
			if ((c->terminal->tty_fds & (1u << fd)) && dup2(slave, fd) < 0)
				fail(c, CHILD_STEP_TERMINAL, errno, "dup2", EXIT_STOCKADE);
		/* init leads the session whose foreground the command's group
		 * will be (terminal.h). */
		if (c->terminal->controlling && (r = terminal_lead(slave)) < 0)
			fail(c, CHILD_STEP_TERMINAL, r, "TIOCSCTTY", EXIT_STOCKADE);
		if (slave > 2)
			close(slave);
	}
	/* 7. Not dumpable: the jail's /proc/1 (its exe, its memory) stays
	 *    closed to the command (CVE-2019-5736); exec makes the command
	 *    dumpable again. */
	/*    The landlock backend's process is not made so: stockade, as
	 *    the user, takes its seccomp listener with pidfd_getfd (a ptrace
	 *    check), and it holds nothing of stockade's before it execs. */
	if (c->init)
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	child_mark(c, "chdir_pty");
	/* 7b. The cgroup tree, once init is in the run's groups (3): a
	 *     cgroup namespace rooted where it is now, so that each
	 *     hierarchy mounted shows the run's own group, not the shared
	 *     one it was cloned in. Before the second go, while stockade
	 *     still makes the way out: nothing of it is the command's. */
	if (c->mounts) {
		if (c->cgroupns_late && unshare(CLONE_NEWCGROUP) < 0)
			fail(c, CHILD_STEP_CGROUP, errno, "cgroup namespace", EXIT_STOCKADE);
		struct mount_failure mf;
		int r = mount_apply_cgroups(c->mounts, &mf);
		if (r < 0)
			fail_mount(c, r, &mf);
		child_mark(c, "mount_cgroups");
	}
	/* 7c. The namespace jail's init: the second go, once the way out is
	 *     made and the keeper is there. */
	if (c->join_go) {
		if (wait_go(c, &ignored) < 0)
			_exit(EXIT_STOCKADE);
		child_mark(c, "wait_second_go");
	}
	/* 8. Capabilities, no_new_privs, seccomp, Landlock; --mode off waits
	 *    for go alone. */
	if (c->jail)
		confine(c);
	else if (wait_go(c, &ignored) < 0)
		_exit(EXIT_STOCKADE);
	/* 9. The run's process limit, where RLIMIT_NPROC is what holds it:
	 *    soft and hard, and without capabilities nothing raises it. */
	if (nproc) {
		struct rlimit rl = { .rlim_cur = nproc, .rlim_max = nproc };
		if (setrlimit(RLIMIT_NPROC, &rl) < 0)
			fail(c, CHILD_STEP_INIT, errno, "RLIMIT_NPROC", EXIT_STOCKADE);
	}
	/* 10. The jail's init forks the command and stays as pid 1; the
	 *    landlock backend's process is the command. A session's (either)
	 *    starts each command the holder asks for. */
	if (c->zygote)
		zygote_main(c);
	if (c->init)
		be_init(c);
	exec_command(c);
}
