/* probe: processes, ids and the terminal. */
#include "tests/helpers/probe/probe.h"

/* ------------------------------------------------------------ processes */

int op_kill(char **a)
{
	pid_t pid = (pid_t)parse_long(a[0], "pid");
	int sig = parse_signal(a[1]);

	return raw_result(kill(pid, sig));
}

int op_ptrace(char **a)
{
	pid_t pid = (pid_t)parse_long(a[0], "pid");
	int status;

	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0)
		return errno;
	/* Attaching stops the tracee; wait for that stop, then let it go. */
	waitpid(pid, &status, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return 0;
}

int op_pidfd_getfd(char **a)
{
	pid_t pid = (pid_t)parse_long(a[0], "pid");
	int target_fd = (int)parse_long(a[1], "fd");
	char link[64], target[PATH_MAX];
	int pidfd, fd, e;
	ssize_t n;

	/* Both descriptors are close-on-exec by the kernel's own rule. */
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return errno;
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, target_fd, 0);
	e = errno;
	close(pidfd);
	if (fd < 0)
		return e;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	target[n < 0 ? 0 : n] = '\0';
	printf("got fd %d -> %s\n", fd, target);
	close(fd);
	return 0;
}

int op_read_mem(char **a)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/mem", parse_long(a[0], "pid"));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

int op_read_environ(char **a)
{
	static char buf[MAX_READ];
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/environ", parse_long(a[0], "pid"));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno;
	n = read(fd, buf, sizeof(buf));
	if (n < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	close(fd);
	for (ssize_t i = 0; i < n; i++)
		if (buf[i] == '\0')
			buf[i] = '\n';
	emit_bytes(buf, (size_t)n);
	return 0;
}

int op_sleep(char **a)
{
	sleep_seconds(parse_seconds(a[0]));
	return 0;
}

/* The grandchild reports back through a pipe, so that "probe: ok" means
 * the orphan exists and FILE holds its pid. */
struct orphan_report {
	int err;
	pid_t pid;
};

int op_orphan(char **a)
{
	double seconds = parse_seconds(a[1]);
	struct orphan_report r = { 0, 0 };
	int p[2], status;
	pid_t child;

	if (pipe2(p, O_CLOEXEC) < 0)
		return errno;
	fflush(stdout);
	child = fork();
	if (child < 0)
		return errno;
	if (child == 0) {
		pid_t grandchild;

		close(p[0]);
		grandchild = fork();
		if (grandchild != 0)
			_exit(grandchild < 0 ? 1 : 0);

		/* Let go of the test's output pipes, or a caller that reads the
		 * probe's output to EOF would wait for the orphan. */
		int null = open("/dev/null", O_RDWR | O_CLOEXEC);
		for (int fd = 0; fd <= 2; fd++) {
			if (null >= 0)
				dup2(null, fd);
			else
				close(fd);
		}

		r.pid = getpid();
		if (setsid() < 0) {
			r.err = errno;
		} else {
			int fd = open(a[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			char buf[32];
			int len = snprintf(buf, sizeof(buf), "%d\n", (int)r.pid);
			if (fd < 0 || write(fd, buf, (size_t)len) != len)
				r.err = errno ? errno : EIO;
			if (fd >= 0)
				close(fd);
		}
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		close(p[1]);
		if (r.err)
			_exit(1);
		sleep_seconds(seconds);
		_exit(0);
	}
	close(p[1]);
	waitpid(child, &status, 0);
	if (read(p[0], &r, sizeof(r)) != sizeof(r))
		r.err = ECHILD;
	close(p[0]);
	if (r.err)
		return r.err;
	printf("orphan %d\n", (int)r.pid);
	return 0;
}

int op_spawn_wait(char **a)
{
	double seconds = parse_seconds(a[0]);
	int status;
	pid_t child;

	fflush(stdout);
	child = fork();
	if (child < 0)
		return errno;
	if (child == 0) {
		sleep_seconds(seconds);
		_exit(0);
	}
	printf("child %d\n", (int)child);
	fflush(stdout);
	while (waitpid(child, &status, 0) < 0)
		if (errno != EINTR)
			return errno;
	print_wait_status("child", status);
	return 0;
}

int op_pgrp(char **a)
{
	pid_t tpgrp;

	printf("pgrp %d\n", (int)getpgrp());
	printf("sid %d\n", (int)getsid(0));
	tpgrp = tcgetpgrp(0);
	if (tpgrp < 0)
		printf("tpgrp -1 %s\n", errno_name(errno));
	else
		printf("tpgrp %d\n", (int)tpgrp);
	return 0;
}

static const int watched_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2,
				       SIGWINCH };

static void on_watched_signal(int sig)
{
	/* Only async-signal-safe calls here: build the line, one write(2). */
	const char *abbrev = sigabbrev_np(sig);
	char line[48] = "got SIG";
	size_t len = strlen(line);

	for (; abbrev && *abbrev && len < sizeof(line) - 2; abbrev++)
		line[len++] = *abbrev;
	line[len++] = '\n';
	if (write(STDOUT_FILENO, line, len) < 0)
		return;
}

int op_signals(char **a)
{
	double seconds = parse_seconds(a[0]);
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_watched_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(watched_signals) / sizeof(watched_signals[0]); i++)
		if (sigaction(watched_signals[i], &sa, NULL) < 0)
			return errno;
	printf("waiting\n");
	fflush(stdout);
	sleep_seconds(seconds);
	return 0;
}

/* ------------------------------------------------------------------ ids */

int op_chown(char **a)
{
	return raw_result(chown(a[0], (uid_t)parse_long(a[1], "uid"), (gid_t)parse_long(a[2], "gid")));
}

int op_setuid(char **a) { return raw_result(setuid((uid_t)parse_long(a[0], "uid"))); }
int op_setgid(char **a) { return raw_result(setgid((gid_t)parse_long(a[0], "gid"))); }
int op_setgroups(char **a) { return raw_result(setgroups(0, NULL)); }

int op_id(char **a)
{
	gid_t groups[NGROUPS_MAX];
	int n = getgroups(NGROUPS_MAX, groups);

	printf("uid=%d euid=%d gid=%d egid=%d groups=", (int)getuid(), (int)geteuid(),
	       (int)getgid(), (int)getegid());
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", (int)groups[i]);
	putchar('\n');
	return 0;
}

/* ------------------------------------------------------------- terminal */

static int inject(const char *text, bool high_bits)
{
	for (const char *c = text; *c; c++) {
		long r;
		if (high_bits)
			/* CVE-2019-10063: the kernel truncates the request to
			 * 32 bits, a filter comparing all 64 does not. */
			r = syscall(SYS_ioctl, 0, (unsigned long)TIOCSTI | (0x123UL << 32), c);
		else
			r = ioctl(0, TIOCSTI, c);
		if (r < 0)
			return errno;
	}
	return 0;
}

int op_tiocsti(char **a) { return inject(a[0] ? a[0] : "id\n", false); }
int op_tiocsti_high(char **a) { return inject(a[0] ? a[0] : "id\n", true); }

int op_tioclinux(char **a)
{
	char subcode = 6; /* TIOCL_GETSHIFTSTATE: harmless on a VT, refused anyway */

	return raw_result(ioctl(0, TIOCLINUX, &subcode));
}

/* What one read of fd gets within seconds, printed escaped on one line
 * ("stole: ..."); ETIMEDOUT when nothing came. */
static int read_within(int fd, double seconds)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	unsigned char buf[256];
	int n = poll(&p, 1, (int)(seconds * 1000));

	if (n < 0)
		return errno;
	if (n == 0)
		return ETIMEDOUT;
	ssize_t got = read(fd, buf, sizeof(buf));
	if (got < 0)
		return errno;
	printf("stole: ");
	for (ssize_t i = 0; i < got; i++)
		printf(buf[i] >= 0x20 && buf[i] < 0x7f && buf[i] != '\\' ? "%c" : "\\x%02x", buf[i]);
	printf("\n");
	return 0;
}

/* CVE-2016-2779's way in: the controlling terminal opened anew, SIGTTOU
 * and SIGTTIN ignored, this process's own group made the foreground, and
 * what the user types next read. ok: it read something. */
int op_tty_steal(char **a)
{
	double seconds = parse_seconds(a[0]);
	int fd = open("/dev/tty", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return errno;
	signal(SIGTTOU, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	(void)setpgid(0, 0);
	if (tcsetpgrp(fd, getpgrp()) < 0)
		printf("tcsetpgrp: %s\n", errno_name(errno));
	else
		printf("tcsetpgrp: ok\n");
	fflush(stdout);
	return read_within(fd, seconds);
}

/* The same through a descriptor the process holds (its stdout, say). */
int op_read_fd(char **a)
{
	int fd = (int)parse_long(a[0], "fd");

	signal(SIGTTIN, SIG_IGN);
	printf("reading fd %d\n", fd);
	fflush(stdout);
	return read_within(fd, parse_seconds(a[1]));
}

/* TIOCSETD on fd: N_NULL (27) leaves a terminal that takes no input,
 * and the line discipline outlives the process. */
int op_tiocsetd(char **a)
{
	int ldisc = (int)parse_long(a[1], "ldisc");

	return raw_result(ioctl((int)parse_long(a[0], "fd"), TIOCSETD, &ldisc));
}

/* The terminal's size now, and again after the first SIGWINCH or
 * seconds. */
static volatile sig_atomic_t winched;
static void on_winch(int sig) { winched = 1; }

int op_winsize(char **a)
{
	struct winsize ws;
	double seconds = parse_seconds(a[0]);
	struct sigaction sa = { .sa_handler = on_winch };

	sigaction(SIGWINCH, &sa, NULL);
	if (ioctl(1, TIOCGWINSZ, &ws) < 0)
		return errno;
	printf("size %dx%d\n", ws.ws_row, ws.ws_col);
	fflush(stdout);
	for (int i = 0; i < (int)(seconds * 100) && !winched; i++)
		usleep(10000);
	if (ioctl(1, TIOCGWINSZ, &ws) < 0)
		return errno;
	printf("%s %dx%d\n", winched ? "winch" : "no winch", ws.ws_row, ws.ws_col);
	return 0;
}

/* --------------------------------------- calls that name another process */

/* on-process CALL TARGET: one call that changes the process TARGET names
 * (a pid; self: the probe's own, by number; child: a child it forks;
 * parent: its parent), in a way that harms nothing: RLIMIT_NOFILE's soft
 * limit lowered to 64, niceness 5, affinity to the first CPU it may run
 * on, the idle-ish best-effort I/O priority 7, SCHED_BATCH. The pgrp and
 * user forms of setpriority and ioprio_set take TARGET as the group or
 * uid (0: the caller's own). */
int op_on_process(char **a)
{
	const char *call = a[0];
	pid_t child = -1;
	long pid;
	int r, e;

	if (strcmp(a[1], "self") == 0) {
		pid = getpid();
	} else if (strcmp(a[1], "parent") == 0) {
		pid = getppid();
	} else if (strcmp(a[1], "child") == 0) {
		child = fork();
		if (child < 0)
			return errno;
		if (child == 0) {
			pause();
			_exit(0);
		}
		pid = child;
	} else {
		pid = parse_long(a[1], "pid");
	}

	if (strcmp(call, "prlimit") == 0) {
		struct rlimit old, lower;
		r = (int)syscall(SYS_prlimit64, (pid_t)pid, RLIMIT_NOFILE, NULL, &old);
		if (r == 0) {
			lower = (struct rlimit){ .rlim_cur = 64, .rlim_max = old.rlim_max };
			r = (int)syscall(SYS_prlimit64, (pid_t)pid, RLIMIT_NOFILE, &lower, NULL);
		}
	} else if (strcmp(call, "setpriority") == 0) {
		r = setpriority(PRIO_PROCESS, (id_t)pid, 5);
	} else if (strcmp(call, "setpriority-pgrp") == 0) {
		r = setpriority(PRIO_PGRP, (id_t)pid, 5);
	} else if (strcmp(call, "setpriority-user") == 0) {
		r = setpriority(PRIO_USER, (id_t)pid, 5);
	} else if (strcmp(call, "affinity") == 0) {
		cpu_set_t set, one;
		r = sched_getaffinity((pid_t)pid, sizeof(set), &set);
		if (r == 0) {
			CPU_ZERO(&one);
			for (int cpu = 0; cpu < CPU_SETSIZE; cpu++)
				if (CPU_ISSET(cpu, &set)) {
					CPU_SET(cpu, &one);
					break;
				}
			r = sched_setaffinity((pid_t)pid, sizeof(one), &one);
		}
	} else if (strcmp(call, "ioprio") == 0) {
		/* IOPRIO_WHO_PROCESS; IOPRIO_PRIO_VALUE(IOPRIO_CLASS_BE, 7) */
		r = (int)syscall(SYS_ioprio_set, 1, (int)pid, (2 << 13) | 7);
	} else if (strcmp(call, "scheduler") == 0) {
		struct sched_param sp = { .sched_priority = 0 };
		r = sched_setscheduler((pid_t)pid, SCHED_BATCH, &sp);
	} else if (strcmp(call, "pidfd") == 0) {
		r = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
		if (r >= 0) {
			close(r);
			r = 0;
		}
	} else {
		usage_error("unknown call '%s'", call);
	}
	e = errno;
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	return r < 0 ? e : 0;
}

/* spawn-many N [HOLD]: forks N children that wait, or as many as it can:
 * prints "started K", holds them HOLD seconds (touching the file
 * $PROBE_HELD, if set, once they all run), then kills them; the result is
 * the errno of the fork that failed. A fork bomb with an end. */
int op_spawn_many(char **a)
{
	long n = parse_long(a[0], "count");
	double hold = a[1] ? parse_seconds(a[1]) : 0;
	const char *held = getenv("PROBE_HELD");
	pid_t *pids = calloc((size_t)n, sizeof(*pids));
	long k;
	int e = 0;

	if (!pids)
		return ENOMEM;
	for (k = 0; k < n; k++) {
		pids[k] = fork();
		if (pids[k] < 0) {
			e = errno;
			break;
		}
		if (pids[k] == 0) {
			pause();
			_exit(0);
		}
	}
	printf("started %ld\n", k);
	fflush(stdout);
	if (held) {
		int fd = open(held, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0)
			close(fd);
	}
	if (hold > 0)
		sleep_seconds(hold);
	for (long i = 0; i < k; i++)
		kill(pids[i], SIGKILL);
	for (long i = 0; i < k; i++)
		waitpid(pids[i], NULL, 0);
	free(pids);
	return e;
}

/* alloc MIB: allocates MIB mebibytes and touches every page. */
int op_alloc(char **a)
{
	long mib = parse_long(a[0], "MiB");
	for (long i = 0; i < mib; i++) {
		char *p = malloc(1 << 20);
		if (!p)
			return ENOMEM;
		memset(p, 1, 1 << 20);
	}
	printf("allocated %ld MiB\n", mib);
	return 0;
}
