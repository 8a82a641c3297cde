/* A session's zygote (zygote.h). */
#include "jail/zygote.h"

#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "landlock/landlock.h"
#include "seccomp/seccomp.h"
#include "lib/fs.h"
#include "lib/util.h"
#include "lib/wire.h"
#include "policy/env.h"

extern char **environ;

/* The execs under way: id and pid. */
struct running {
	long id;
	pid_t pid;
};

/* The zygote's own, read once as it starts (a syscall in the jail goes
 * through its filter, and these are asked of every exec): the signals it
 * ignores (the holder's SIGHUP and SIGPIPE, inherited) and those it
 * handles, which a spawn's child sets for the command where they differ
 * from the caller's, its limits, niceness and CPUs, which a
 * command's are kept within, and its umask: an exec sets only what
 * differs from these. A command of the session could change them since
 * (prlimit, setpriority and sched_setaffinity on a process of its own
 * user, as it could signal the zygote): a command then asks at most what
 * the session started with, and the kernel holds each to what the
 * zygote has now; a soft limit lowered in the zygote stays lowered for
 * the execs that ask for the one it started with. */
static struct {
	unsigned long ignored;
	uint64_t handled;	/* bit N-1 for signal N, 1 to 64: a handler of its own */
	struct rlimit limits[RLIM_NLIMITS];
	bool have_limit[RLIM_NLIMITS];
	int nice;
	bool have_nice;
	cpu_set_t cpus;
	bool have_cpus;
	long umask;
} own;

/* The kernel's struct sigaction, for the signals glibc keeps to itself
 * (32 and 33), whose handlers a spawned child must not keep either. */
struct kernel_sigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	uint64_t mask;
};

static void own_read(void)
{
	own.ignored = signals_ignored();
	for (int sig = 1; sig <= 64; sig++) {
		struct kernel_sigaction ka;
		if (syscall(SYS_rt_sigaction, sig, NULL, &ka, sizeof(ka.mask)) == 0 && ka.handler != SIG_DFL &&
		    ka.handler != SIG_IGN)
			own.handled |= 1ULL << (sig - 1);
	}
	for (int res = 0; res < RLIM_NLIMITS; res++)
		own.have_limit[res] = getrlimit(res, &own.limits[res]) == 0;
	errno = 0;
	own.nice = getpriority(PRIO_PROCESS, 0);
	own.have_nice = errno == 0;
	own.have_cpus = sched_getaffinity(0, sizeof(own.cpus), &own.cpus) == 0;
	own.umask = umask(0);
	umask((mode_t)own.umask);
}

/* Hex of at most n bytes, the rest of out zero: false when s is more, or
 * not hex. */
static bool unhex_upto(const char *s, void *out, size_t n)
{
	size_t len = s ? strlen(s) : 0;
	if (!s || len % 2 || len > 2 * n)
		return false;
	unsigned char *o = out;
	memset(o, 0, n);
	for (size_t i = 0; i < len / 2; i++) {
		unsigned v;
		if (!isxdigit((unsigned char)s[2 * i]) || !isxdigit((unsigned char)s[2 * i + 1]) ||
		    sscanf(s + 2 * i, "%2x", &v) != 1)
			return false;
		o[i] = (unsigned char)v;
	}
	return true;
}

/* Hex of a struct's bytes, as the client sends the terminal's mode. */
static bool unhex(const char *s, void *out, size_t n)
{
	return s && strlen(s) == 2 * n && unhex_upto(s, out, n);
}

/* What an exec of the caller's would inherit beside its descriptors:
 * the signals it ignores, its signal mask, umask, resource limits,
 * niceness and CPUs (sigign=, sigblk=, umask=, rlimit=, nice=, cpus=),
 * each within the session's: no limit above the zygote's hard one, no
 * niceness below its own, which nothing in the jail could raise, and
 * only CPUs the zygote may run on. What the caller did not send is the
 * zygote's, but the ignored signals: none (nohup's SIGHUP and a
 * background job's SIGINT and SIGQUIT are the caller's to pass on, the
 * holder's SIGHUP and SIGPIPE never). */
struct inherited {
	unsigned long ignored;	/* bit N-1 for signal N, 1 to 31 */
	sigset_t mask;		/* the signal mask it starts with */
	long umask;		/* -1: the zygote's */
	bool set_cpus;		/* the CPUs it may run on: the caller's, of the zygote's */
	cpu_set_t cpus;
	long nice;		/* the niceness to take, above the zygote's; or none */
	bool renice;
	size_t n_lim;		/* those that differ from the zygote's */
	struct {
		int resource;
		struct rlimit rl;
	} lim[RLIM_NLIMITS];
};

static void inherited_read(const struct child *c, const struct wire_msg *m, struct inherited *in)
{
	*in = (struct inherited){ .umask = -1 };
	long ignored = 0;
	(void)wire_get_long(m, "sigign", 0, 0x7fffffff, &ignored);
	in->ignored = (unsigned long)ignored & ~(SIGNAL_BIT(SIGKILL) | SIGNAL_BIT(SIGSTOP));
	in->mask = *c->exec_mask;
	long blocked;
	if (wire_get_long(m, "sigblk", 0, 0x7fffffff, &blocked) == 0)
		for (int sig = 1; sig < 32; sig++) {
			if (blocked & SIGNAL_BIT(sig))
				sigaddset(&in->mask, sig);
			else
				sigdelset(&in->mask, sig);
		}
	if (wire_get_long(m, "umask", 0, 0777, &in->umask) == 0 && in->umask == own.umask)
		in->umask = -1;
	if (own.have_cpus && unhex_upto(wire_get(m, "cpus"), &in->cpus, sizeof(in->cpus))) {
		CPU_AND(&in->cpus, &in->cpus, &own.cpus);
		in->set_cpus = CPU_COUNT(&in->cpus) > 0 && !CPU_EQUAL(&in->cpus, &own.cpus);
	}
	long nice;
	if (own.have_nice && wire_get_long(m, "nice", -20, 19, &nice) == 0) {
		in->renice = nice > own.nice;
		in->nice = nice;
	}
	_cleanup_free_ char **lims = wire_get_all(m, "rlimit");
	for (size_t i = 0; lims[i] && in->n_lim < ARRAY_SIZE(in->lim); i++) {
		int res;
		unsigned long long soft, hard;
		if (sscanf(lims[i], "%d %llu %llu", &res, &soft, &hard) != 3 || res < 0 || res >= RLIM_NLIMITS ||
		    !own.have_limit[res])
			continue;
		const struct rlimit *held = &own.limits[res];
		struct rlimit rl = { .rlim_cur = soft, .rlim_max = hard };
		if (rl.rlim_max > held->rlim_max)
			rl.rlim_max = held->rlim_max;
		if (rl.rlim_cur > rl.rlim_max)
			rl.rlim_cur = rl.rlim_max;
		/* the zygote's own, which the command has already */
		if (rl.rlim_cur == held->rlim_cur && rl.rlim_max == held->rlim_max)
			continue;
		in->lim[in->n_lim].resource = res;
		in->lim[in->n_lim++].rl = rl;
	}
}

/* The process's own of them: umask, niceness, CPUs and limits. Plain
 * calls, which a spawn's child may make too. */
static void inherited_apply_process(const struct inherited *in)
{
	if (in->umask >= 0)
		umask((mode_t)in->umask);
	if (in->renice)
		(void)setpriority(PRIO_PROCESS, 0, (int)in->nice);
	if (in->set_cpus)
		(void)sched_setaffinity(0, sizeof(in->cpus), &in->cpus);
	for (size_t i = 0; i < in->n_lim; i++)
		(void)setrlimit(in->lim[i].resource, &in->lim[i].rl);
}

/* In the forked exec's process, before the program. */
static void inherited_apply(const struct inherited *in)
{
	for (int sig = 1; sig < 32; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, (in->ignored & SIGNAL_BIT(sig)) ? SIG_IGN : SIG_DFL);
	sigprocmask(SIG_SETMASK, &in->mask, NULL);
	inherited_apply_process(in);
}

static void say(int fd, const char *what, const char *arg, int err)
{
	dprintf(fd, "stockade: cannot %s '%s': %s\n", what, arg, strerror(err));
}

/* execvp's error as a shell would say it: EACCES where no directory of
 * path_env holds the program at all (one the jail refuses to search,
 * another user's ~/.cargo/bin, says EACCES to execvp) is not found, as
 * stockade finds a run's program (path_find_program); a file there that
 * may not be run stays EACCES. */
static int exec_error(const char *word, int err, const char *path_env, const char *cwd)
{
	if (err != EACCES || strchr(word, '/'))
		return err;
	_cleanup_free_ char *found = NULL;
	return path_find_program(word, path_env, cwd ? cwd : "/", &found) == -ENOENT ? ENOENT : err;
}

/* The command's own --hide, --read and --net off (the holder checked
 * that they narrow). --net off: a filter of its own refusing every inet
 * socket (a Landlock TCP rule would not do: the landlock backend's
 * supervisor binds and connects for the command). The paths: a Landlock
 * layer of its own on top of the session's, from everything granted less
 * what they name, planned in the jail's view of the tree (the namespace
 * jail's /tmp and home are its own) or, on the landlock backend, by the
 * holder, whose view it is and which can list what the command cannot.
 * --net off alone gets a layer too, granting all the session grants: a
 * Landlock domain of its own is what keeps the command from ptrace and
 * /proc/PID/mem of the session's other processes (the zygote, a server an
 * earlier exec left), which have the network and would make its
 * connections for it, and run every later exec. The layer scopes
 * nothing, so the command still signals and reaches the session's other
 * processes' sockets. */
static int narrow(const struct wire_msg *m, const int *fds, size_t n_fds)
{
	const char *net = wire_get(m, "net");
	bool net_off = net && streq(net, "off");
	if (net_off) {
		int r = seccomp_load_no_inet();
		if (r < 0)
			return r;
	}
	/* The landlock backend's holder planned it, in the same view. */
	const char *rs = wire_get(m, "ruleset");
	if (rs && streq(rs, "1"))
		return n_fds > 3 ? landlock_restrict(fds[3]) : -EBADF;
	struct policy p;
	policy_init(&p);
	p.net = NET_ON;
	bool any = false;
	policy_add_rule(&p, "/", ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("the session"), "the session's grants");
	for (size_t i = 0; i < m->n; i++) {
		bool hide = streq(m->f[i].key, "hide");
		if (!hide && !streq(m->f[i].key, "read"))
			continue;
		policy_add_rule(&p, m->f[i].value, hide ? ACCESS_HIDE : ACCESS_READ, 0, SOURCE_OPTION_OF(hide ? "--hide" : "--read"),
				hide ? "--hide" : "--read");
		any = true;
	}
	int r = 0;
	if (any || net_off) {
		policy_sort(&p);
		struct landlock_plan plan;
		r = landlock_plan(&p, landlock_abi(), 0, &plan);
		if (r == 0) {
			plan.scoped = 0;
			const char *failing = NULL;
			r = landlock_apply(&plan, &failing);
			landlock_plan_free(&plan);
		}
	}
	policy_free(&p);
	return r;
}

/* The exec's process leads the session of its pty (it is its controlling
 * terminal) and the command runs in a group of its own in it, the
 * pty's foreground: a group with a parent in another group of its session
 * is not orphaned, so that a Ctrl-Z's SIGTSTP stops the command (the
 * kernel discards it for an orphaned group), as jail/terminal.h says of
 * a run. Returns in the command's process; the leader stays here: it
 * holds nothing, passes each signal the zygote sends it on to the
 * command's group, stops when the command stops (the zygote reports the
 * stop, session exec stops too; the SIGCONT that continues it goes on to
 * the command) and ends as the command ended. The leader is confined as
 * the command is (narrowed too): nothing it does is a way out. */
static void lead_exec(void)
{
	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid_t pid = fork();
	if (pid < 0)
		_exit(EXIT_STOCKADE);
	if (pid == 0) {
		/* (SIGTTOU blocked: the group asking is not the foreground) */
		if (setpgid(0, 0) < 0 || tcsetpgrp(0, getpid()) < 0) {
			say(2, "make its group the foreground of", "/dev/tty", errno);
			_exit(EXIT_STOCKADE);
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		return;
	}
	(void)setpgid(pid, pid);
	syscall(SYS_close_range, 0, ~0U, 0);
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&all, &si);
		if (sig < 0)
			continue;
		if (sig != SIGCHLD) {
			if (kill(-pid, sig) < 0)
				kill(pid, sig);
			continue;
		}
		int st;
		pid_t w;
		while ((w = waitpid(pid, &st, WNOHANG | WUNTRACED)) > 0) {
			if (WIFSTOPPED(st)) {
				raise(SIGSTOP);
				continue;
			}
			if (WIFEXITED(st))
				_exit(WEXITSTATUS(st));
			/* The command's signal, without a core of the leader's. */
			sig = WTERMSIG(st);
			prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
			signal(sig, SIG_DFL);
			sigset_t one;
			sigemptyset(&one);
			sigaddset(&one, sig);
			sigprocmask(SIG_UNBLOCK, &one, NULL);
			raise(sig);
			_exit(128 + sig);
		}
	}
}

/* In the exec's process: its descriptors, session and terminal, working
 * directory, the narrowing ruleset, then the program. */
static _Noreturn void start_exec(const struct child *c, const struct wire_msg *m, const int *fds, size_t n_fds,
				 int slave, const struct terminal_child *tc, const struct inherited *in)
{
	/* 0 to 2 first, from what came (the caller's own descriptors), then
	 * the pty's slave where the caller had a terminal. */
	for (int fd = 0; fd <= 2; fd++)
		if ((size_t)fd < n_fds && fds[fd] >= 0 && dup2(fds[fd], fd) < 0)
			_exit(EXIT_STOCKADE);
	if (setsid() < 0)
		_exit(EXIT_STOCKADE);
	if (slave >= 0) {
		for (int fd = 0; fd <= 2; fd++)
			if ((tc->tty_fds & (1u << fd)) && dup2(slave, fd) < 0)
				_exit(EXIT_STOCKADE);
		if (tc->controlling && ioctl(0, TIOCSCTTY, 0) < 0)
			_exit(EXIT_STOCKADE);
	}
	const char *cwd = wire_get(m, "cwd");
	if (!cwd || chdir(cwd) < 0) {
		say(2, "enter the working directory", cwd ? cwd : "?", cwd ? errno : EINVAL);
		_exit(EXIT_STOCKADE);
	}
	int r = narrow(m, fds, n_fds);
	if (r < 0) {
		say(2, "narrow the command with a Landlock layer of its own", "--hide, --read, --net", -r);
		_exit(EXIT_STOCKADE);
	}
	if (slave >= 0 && tc->controlling)
		lead_exec();
	char **argv = wire_get_all(m, "arg");
	environ = wire_get_all(m, "env");
	if (!argv[0]) {
		dprintf(2, "stockade: cannot run a command with no words\n");
		_exit(EXIT_STOCKADE);
	}
	inherited_apply(in);
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	execvp(argv[0], argv);
	int e = exec_error(argv[0], errno, getenv("PATH"), cwd);
	say(2, "run", argv[0], e);
	_exit(exit_exec_failed(e));
}

/* Whether an exec can be spawned: no terminal of its own, nothing
 * narrowed (each needs the fork's own code, and memory of its own), the
 * caller's three descriptors. Most of a session's are. */
static bool spawnable(const struct wire_msg *m, size_t n_fds, const int *fds)
{
	if (n_fds < 3 || fds[0] < 0 || fds[1] < 0 || fds[2] < 0)
		return false;
	for (size_t i = 0; i < m->n; i++) {
		const char *k = m->f[i].key;
		if (streq(k, "tty-fds") || streq(k, "net") || streq(k, "ruleset") || streq(k, "hide") || streq(k, "read"))
			return false;
	}
	return true;
}

/* What the spawned child does, and where it failed. */
struct spawn {
	const int *fds;
	int cwd_fd;
	const struct inherited *in;
	char **argv;
	const char *step;	/* the child's: what failed */
	int err;		/* the child's: its errno */
};

/* The child of a spawn: it runs on the zygote's memory, with every
 * signal blocked, until the program replaces it (or it exits), so it
 * calls nothing that allocates or takes a lock. A signal with a handler
 * of the zygote's is made the default before any is unblocked: no
 * handler of the zygote's ever runs here. Then what start_exec does, in
 * its order, and the caller's signals, limits, niceness and CPUs as
 * inherited_apply gives them; one call for each that differs from the
 * zygote's, which the child has now. */
__attribute__((no_sanitize("address", "undefined"))) static int spawn_child(void *arg)
{
	struct spawn *s = arg;
	const struct inherited *in = s->in;
	for (int sig = 1; sig <= 64; sig++) {
		uint64_t bit = 1ULL << (sig - 1);
		bool ignore = sig < 32 && (in->ignored & SIGNAL_BIT(sig));
		bool ignored = sig < 32 && (own.ignored & SIGNAL_BIT(sig));
		if (sig == SIGKILL || sig == SIGSTOP || (!(own.handled & bit) && ignore == ignored))
			continue;
		struct kernel_sigaction ka = { .handler = ignore ? SIG_IGN : SIG_DFL };
		(void)syscall(SYS_rt_sigaction, sig, &ka, NULL, sizeof(ka.mask));
	}
	s->step = "give the command its descriptors";
	for (int fd = 0; fd <= 2; fd++) {
		/* one that is already in place keeps its close-on-exec flag
		 * through a dup2 to itself */
		if (s->fds[fd] == fd ? fcntl(fd, F_SETFD, 0) < 0 : dup2(s->fds[fd], fd) < 0)
			goto fail;
	}
	s->step = "start the command's session";
	if (setsid() < 0)
		goto fail;
	s->step = "enter the working directory";
	if (fchdir(s->cwd_fd) < 0)
		goto fail;
	inherited_apply_process(in);
	(void)syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	(void)syscall(SYS_rt_sigprocmask, SIG_SETMASK, &in->mask, NULL, sizeof(uint64_t));
	/* on the command's PATH, which execvp reads from environ; a file
	 * with no #! line is run by /bin/sh, as a shell would */
	s->step = NULL;
	execvp(s->argv[0], s->argv);
fail:
	s->err = errno;
	_exit(127);
}

/* The child's stack: the spawn's, kept for the next (one thread, and the
 * child is done with it when the clone returns). execvp's own needs are
 * a path and, for a script, the arguments once more. */
static void *spawn_stack(size_t argc, size_t *ret_size)
{
	static void *stack;
	static size_t size;
	size_t need = (argc + 3) * sizeof(char *) + 2 * PATH_MAX + 32 * 1024;
	need = (need + 4095) & ~(size_t)4095;
	if (need > size) {
		if (stack)
			munmap(stack, size);
		stack = mmap(NULL, need, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
		size = stack == MAP_FAILED ? 0 : need;
		if (stack == MAP_FAILED)
			stack = NULL;
	}
	*ret_size = size;
	return stack;
}

/* An exec spawned without copying the zygote (a vfork: the child shares
 * the zygote's memory until it execs, so there is no page table to copy
 * and none to tear down at the exec). glibc's posix_spawn would do the
 * same with two or more calls for every signal in the child, each
 * through the jail's filter; spawn_child makes one for each the command
 * must have otherwise, mostly none. The pid, or the negated exit status
 * of what failed, said on the caller's stderr. */
static pid_t spawn(const struct wire_msg *m, const int *fds, const struct inherited *in)
{
	const char *cwd = wire_get(m, "cwd");
	_cleanup_close_ int cwd_fd = cwd ? open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC) : -1;
	if (cwd_fd < 0) {
		int e = cwd ? errno : EINVAL;
		say(fds[2], "enter the working directory", cwd ? cwd : "?", e);
		return -EXIT_STOCKADE;
	}
	_cleanup_free_ char **argv = wire_get_all(m, "arg");
	_cleanup_free_ char **envp = wire_get_all(m, "env");
	if (!argv[0]) {
		dprintf(fds[2], "stockade: cannot run a command with no words\n");
		return -EXIT_STOCKADE;
	}
	size_t argc = 0, size;
	while (argv[argc])
		argc++;
	char *stack = spawn_stack(argc, &size);
	if (!stack) {
		say(fds[2], "start", argv[0], ENOMEM);
		return -EXIT_STOCKADE;
	}
	struct spawn s = { .fds = fds, .cwd_fd = cwd_fd, .in = in, .argv = argv };
	uint64_t all = ~0ULL, old;
	(void)syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, sizeof(all));
	char **own_environ = environ;
	environ = envp;
	pid_t pid = clone(spawn_child, stack + size, CLONE_VM | CLONE_VFORK | SIGCHLD, &s);
	int e = pid < 0 ? errno : s.err;
	environ = own_environ;
	(void)syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, sizeof(old));
	if (pid > 0 && s.err)
		(void)waitpid(pid, NULL, 0);
	if (pid < 0) {
		say(fds[2], "start", argv[0], e);
		return -EXIT_STOCKADE;
	}
	if (s.err && s.step) {
		say(fds[2], s.step, argv[0], e);
		return -EXIT_STOCKADE;
	}
	if (s.err) {
		e = exec_error(argv[0], e, env_get(envp, "PATH"), cwd);
		say(fds[2], "run", argv[0], e);
		return -exit_exec_failed(e);
	}
	return pid;
}

static void answer(int sock, const char *type, long id, const char *key, long value, const int *fds, size_t n)
{
	struct wire_out o = { 0 };
	wire_begin(&o, type);
	wire_add_long(&o, "id", id);
	if (key)
		wire_add_long(&o, key, value);
	/* write, where no descriptor goes: on the landlock backend every
	 * sendmsg is the supervisor's to carry out, a write is not. */
	if (n)
		(void)wire_send(sock, &o, fds, n);
	else
		(void)!write(sock, o.buf, o.len);
	wire_out_free(&o);
}

/* One exec: forked now, answered "started" with its pid (and the pty's
 * master), or "exit" with 125's status when it cannot be. */
static void exec_one(const struct child *c, int sock, const struct wire_msg *m, const int *fds, size_t n_fds,
		     struct running **run, size_t *n_run)
{
	long id;
	if (wire_get_long(m, "id", 0, LONG_MAX, &id) < 0)
		return;
	struct inherited in;
	inherited_read(c, m, &in);
	if (spawnable(m, n_fds, fds)) {
		pid_t pid = spawn(m, fds, &in);
		if (pid < 0) {
			answer(sock, "exit", id, "status", (-pid) << 8, NULL, 0);
			return;
		}
		*run = xgrow(*run, *n_run, sizeof(**run));
		(*run)[(*n_run)++] = (struct running){ .id = id, .pid = pid };
		answer(sock, "started", id, "pid", pid, NULL, 0);
		return;
	}
	struct terminal_child tc = { 0 };
	long bits = 0, ctty = 0, rows = 0, cols = 0;
	int master = -1, slave = -1;
	if (wire_get_long(m, "tty-fds", 1, 7, &bits) == 0) {
		(void)wire_get_long(m, "ctty", 0, 1, &ctty);
		(void)wire_get_long(m, "rows", 0, 65535, &rows);
		(void)wire_get_long(m, "cols", 0, 65535, &cols);
		tc.tty_fds = (unsigned)bits;
		tc.controlling = ctty;
		if (!unhex(wire_get(m, "tio"), &tc.tio, sizeof(tc.tio)))
			tcgetattr(STDERR_FILENO, &tc.tio);
		tc.ws = (struct winsize){ .ws_row = (unsigned short)rows, .ws_col = (unsigned short)cols };
		int r = terminal_open_jail_pty(&tc, &master, &slave);
		if (r < 0) {
			if (n_fds > 2)
				say(fds[2], "open a terminal for the command", "/dev/ptmx", -r);
			answer(sock, "exit", id, "status", EXIT_STOCKADE << 8, NULL, 0);
			return;
		}
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(sock);
		if (master >= 0)
			close(master);
		start_exec(c, m, fds, n_fds, slave, &tc, &in);
	}
	if (slave >= 0)
		close(slave);
	if (pid < 0) {
		if (n_fds > 2)
			say(fds[2], "fork", "the command", errno);
		answer(sock, "exit", id, "status", EXIT_STOCKADE << 8, NULL, 0);
	} else {
		*run = xgrow(*run, *n_run, sizeof(**run));
		(*run)[(*n_run)++] = (struct running){ .id = id, .pid = pid };
		answer(sock, "started", id, "pid", pid, master >= 0 ? &master : NULL, master >= 0);
	}
	if (master >= 0)
		close(master);
}

_Noreturn void zygote_main(const struct child *c)
{
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sig_fd < 0)
		_exit(EXIT_STOCKADE);
	int sock = c->requests;
	own_read();
	/* Ready: stockade sees EOF on the error pipe. */
	close(c->err_fd);
	struct running *run = NULL;
	size_t n_run = 0;
	int factory = c->factory;
	for (;;) {
		struct pollfd fds[3] = { { .fd = sig_fd, .events = POLLIN }, { .fd = sock, .events = POLLIN },
					 { .fd = factory, .events = POLLIN } };
		if (poll(fds, 3, -1) < 0)
			continue;
		if (fds[2].revents)
			factory = child_serve_factory(factory);
		if (fds[0].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sig_fd, &si, sizeof(si)) == sizeof(si))
				;
			int st;
			pid_t w;
			while ((w = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0)
				for (size_t i = 0; i < n_run; i++) {
					if (run[i].pid != w)
						continue;
					if (WIFSTOPPED(st)) {
						answer(sock, "stopped", run[i].id, NULL, 0, NULL, 0);
						break;
					}
					answer(sock, "exit", run[i].id, "status", st, NULL, 0);
					run[i] = run[--n_run];
					break;
				}
		}
		if (!(fds[1].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		struct wire_msg m;
		int in[WIRE_MAX_FDS];
		size_t n_in = 0;
		int r = wire_recv(sock, &m, in, WIRE_MAX_FDS, &n_in);
		if (r == -EPIPE)
			_exit(0);	/* the holder is gone: the jail goes with it */
		if (r < 0)
			continue;
		if (streq(m.type, "exec")) {
			exec_one(c, sock, &m, in, n_in, &run, &n_run);
		} else if (streq(m.type, "signal")) {
			long id, sig;
			if (wire_get_long(&m, "id", 0, LONG_MAX, &id) == 0 && wire_get_long(&m, "sig", 1, 64, &sig) == 0)
				for (size_t i = 0; i < n_run; i++)
					if (run[i].id == id && kill(-run[i].pid, (int)sig) < 0)
						kill(run[i].pid, (int)sig);
		}
		for (size_t i = 0; i < n_in; i++)
			close(in[i]);
		wire_msg_free(&m);
	}
}
