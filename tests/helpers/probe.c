/* probe: the program the integration tests run inside (and outside) the jail.
 *
 *     probe OP [ARG]...
 *
 * It prints "probe: started OP" first, so that a test can tell a refusal
 * from a jail that never ran the command; then it tries exactly one thing
 * and prints exactly one result line:
 *
 *     probe: ok                 success, exit 0 (op output comes before it)
 *     probe: errno NAME         the call failed with errno NAME, exit 1
 *     probe: leaked N           (fds only) N descriptors leaked in, exit 1
 *
 * A usage error goes to stderr with exit status 2.
 *
 * The raw system call ops follow bubblewrap's tests/try-syscall.c: where a
 * real call could have side effects, they pass a bad descriptor or pointer,
 * so a call that reaches the kernel fails harmlessly (EBADF, EFAULT, ENOENT)
 * while a call a seccomp filter refuses returns the filter's errno. Each
 * op's answer outside any jail is its positive control.
 *
 * Deliberately plain: no libseccomp, no sanitizer, and every descriptor it
 * opens is O_CLOEXEC so that whatever it execs sees only what leaked in. */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <linux/keyctl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/msg.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

/* Constants the C library may not have yet; the values are the kernel ABI. */
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif
#ifndef MSG_FASTOPEN
#define MSG_FASTOPEN 0x20000000
#endif
#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif
#ifndef FSOPEN_CLOEXEC
#define FSOPEN_CLOEXEC 0x00000001
#endif
#ifndef FSPICK_CLOEXEC
#define FSPICK_CLOEXEC 0x00000001
#endif
#ifndef FSPICK_EMPTY_PATH
#define FSPICK_EMPTY_PATH 0x00000008
#endif
#ifndef FSMOUNT_CLOEXEC
#define FSMOUNT_CLOEXEC 0x00000001
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#define PROBE_FSCONFIG_SET_FLAG 0
#define PROBE_BPF_PROG_LOAD 5
#define PROBE_UFFD_USER_MODE_ONLY 1
#define PROBE_CLONE_ARGS_SIZE 88 /* struct clone_args, CLONE_ARGS_SIZE_VER2 */
#define PROBE_X32_SYSCALL_BIT 0x40000000
#define PROBE_X86_64_GETPID 39
#define PROBE_I386_GETPID 20

/* A path that cannot exist (nothing can create entries in /proc/self), for
 * calls whose real form would change the host when run as root outside a
 * jail: the kernel answers ENOENT once it gets as far as the lookup. */
#define PROBE_NO_SUCH_PATH "/proc/self/probe-no-such-dir"

/* A descriptor that is never open (fds stay below fs.nr_open, at most
 * 2^30), for calls that should fail with EBADF when they reach the kernel.
 * Not -1: some calls give -1 a meaning of its own and answer EINVAL. */
#define PROBE_BAD_FD INT_MAX

/* An op returns 0 (ok), a positive errno, or REPORTED when it has printed
 * its own failing result line. */
#define REPORTED (-1)

#define MAX_READ (64 * 1024)
#define MAX_SOCKET_READ 4096

struct errno_name {
	int num;
	const char *name;
};

#define E(x) { x, #x }
/* Aliases (EWOULDBLOCK, ENOTSUP, EDEADLOCK) are left out: the first name of
 * a number is the one printed. */
static const struct errno_name errno_names[] = {
	E(EPERM), E(ENOENT), E(ESRCH), E(EINTR), E(EIO), E(ENXIO), E(E2BIG),
	E(ENOEXEC), E(EBADF), E(ECHILD), E(EAGAIN), E(ENOMEM), E(EACCES),
	E(EFAULT), E(ENOTBLK), E(EBUSY), E(EEXIST), E(EXDEV), E(ENODEV),
	E(ENOTDIR), E(EISDIR), E(EINVAL), E(ENFILE), E(EMFILE), E(ENOTTY),
	E(ETXTBSY), E(EFBIG), E(ENOSPC), E(ESPIPE), E(EROFS), E(EMLINK),
	E(EPIPE), E(EDOM), E(ERANGE), E(EDEADLK), E(ENAMETOOLONG), E(ENOLCK),
	E(ENOSYS), E(ENOTEMPTY), E(ELOOP), E(ENOMSG), E(EIDRM), E(ENOSTR),
	E(ENODATA), E(ETIME), E(ENOSR), E(EREMOTE), E(ENOLINK), E(EPROTO),
	E(EBADMSG), E(EOVERFLOW), E(ENOTUNIQ), E(EBADFD), E(EILSEQ),
	E(ERESTART), E(EUSERS), E(ENOTSOCK), E(EDESTADDRREQ), E(EMSGSIZE),
	E(EPROTOTYPE), E(ENOPROTOOPT), E(EPROTONOSUPPORT),
	E(ESOCKTNOSUPPORT), E(EOPNOTSUPP), E(EPFNOSUPPORT), E(EAFNOSUPPORT),
	E(EADDRINUSE), E(EADDRNOTAVAIL), E(ENETDOWN), E(ENETUNREACH),
	E(ENETRESET), E(ECONNABORTED), E(ECONNRESET), E(ENOBUFS), E(EISCONN),
	E(ENOTCONN), E(ESHUTDOWN), E(ETOOMANYREFS), E(ETIMEDOUT),
	E(ECONNREFUSED), E(EHOSTDOWN), E(EHOSTUNREACH), E(EALREADY),
	E(EINPROGRESS), E(ESTALE), E(EUCLEAN), E(EREMOTEIO), E(EDQUOT),
	E(ENOMEDIUM), E(EMEDIUMTYPE), E(ECANCELED), E(ENOKEY), E(EKEYEXPIRED),
	E(EKEYREVOKED), E(EKEYREJECTED), E(EOWNERDEAD), E(ENOTRECOVERABLE),
	E(ERFKILL), E(EHWPOISON),
};
#undef E

static const char *errno_name(int e)
{
	static char number[16];

	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (errno_names[i].num == e)
			return errno_names[i].name;
	snprintf(number, sizeof(number), "%d", e);
	return number;
}

static const char *op_name = "";

__attribute__((noreturn, format(printf, 1, 2))) static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "probe: %s: ", op_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* Raw bytes (a file's content, a socket's reply) may not end in a newline;
 * the result line must still start a line of its own. */
static bool mid_line;

static void emit_bytes(const void *buf, size_t len)
{
	if (len == 0)
		return;
	fwrite(buf, 1, len, stdout);
	mid_line = ((const char *)buf)[len - 1] != '\n';
	fflush(stdout);
}

static void end_partial_line(void)
{
	if (mid_line)
		putchar('\n');
	mid_line = false;
}

static long parse_long(const char *s, const char *what)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end)
		usage_error("bad %s '%s'", what, s);
	return v;
}

static double parse_seconds(const char *s)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < 0)
		usage_error("bad seconds '%s'", s);
	return v;
}

static double now_monotonic(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleep the whole time even when signals interrupt it. */
static void sleep_seconds(double seconds)
{
	double end = now_monotonic() + seconds;
	double left;

	while ((left = end - now_monotonic()) > 0) {
		struct timespec ts = { (time_t)left, (long)((left - (time_t)left) * 1e9) };
		nanosleep(&ts, NULL);
	}
}

/* Turn "-ENOSYS"-style raw returns into the errno convention. */
static int raw_result(long ret)
{
	if (ret < 0)
		return errno;
	return 0;
}

static int parse_signal(const char *s)
{
	const char *name = s;

	if (s[0] >= '0' && s[0] <= '9')
		return (int)parse_long(s, "signal");
	if (strncmp(name, "SIG", 3) == 0)
		name += 3;
	for (int sig = 1; sig < NSIG; sig++) {
		const char *abbrev = sigabbrev_np(sig);
		if (abbrev && strcmp(abbrev, name) == 0)
			return sig;
	}
	usage_error("unknown signal '%s'", s);
}

static void print_wait_status(const char *who, int status)
{
	if (WIFEXITED(status))
		printf("%s exit %d\n", who, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("%s signal SIG%s\n", who, sigabbrev_np(WTERMSIG(status)) ?: "?");
}

/* ---------------------------------------------------------------- files */

static int op_read(char **a)
{
	static char buf[MAX_READ];
	size_t total = 0;
	int fd = open(a[0], O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno;
	while (total < sizeof(buf)) {
		ssize_t n = read(fd, buf + total, sizeof(buf) - total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			emit_bytes(buf, total);
			close(fd);
			return e;
		}
		if (n == 0)
			break;
		total += (size_t)n;
	}
	close(fd);
	emit_bytes(buf, total);
	return 0;
}

static int write_probe_line(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC, 0644);
	int e = 0;

	if (fd < 0)
		return errno;
	if (write(fd, "probe\n", 6) != 6)
		e = errno ? errno : EIO;
	if (close(fd) < 0 && !e)
		e = errno;
	return e;
}

static int op_write(char **a)
{
	return write_probe_line(a[0], O_WRONLY | O_CREAT | O_TRUNC);
}

static int op_append(char **a)
{
	return write_probe_line(a[0], O_WRONLY | O_CREAT | O_APPEND);
}

static int op_mkdir(char **a) { return raw_result(mkdir(a[0], 0755)); }
static int op_rmdir(char **a) { return raw_result(rmdir(a[0])); }
static int op_unlink(char **a) { return raw_result(unlink(a[0])); }
static int op_rename(char **a) { return raw_result(rename(a[0], a[1])); }
static int op_link(char **a) { return raw_result(link(a[0], a[1])); }
static int op_symlink(char **a) { return raw_result(symlink(a[0], a[1])); }
static int op_mkfifo(char **a) { return raw_result(mkfifo(a[0], 0644)); }
static int op_truncate(char **a) { return raw_result(truncate(a[0], 0)); }

static int op_mknod_char(char **a)
{
	/* 1:3 is /dev/null: a device node the jail must not be able to make. */
	return raw_result(mknod(a[0], S_IFCHR | 0644, makedev(1, 3)));
}

static int fill_sockaddr_un(struct sockaddr_un *sun, socklen_t *ret_len, const char *name,
			    bool abstract)
{
	size_t len = strlen(name);

	/* A path needs room for its NUL; an abstract name starts with a NUL
	 * and is exactly as long as the address length says, with no NUL at
	 * the end. Either way the length is the name's plus one. */
	if (len + 1 > sizeof(sun->sun_path))
		return ENAMETOOLONG;
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path + (abstract ? 1 : 0), name, len);
	*ret_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1);
	return 0;
}

static int op_mksock(char **a)
{
	struct sockaddr_un sun;
	socklen_t len;
	int e, fd;

	if ((e = fill_sockaddr_un(&sun, &len, a[0], false)))
		return e;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	e = bind(fd, (struct sockaddr *)&sun, len) < 0 ? errno : 0;
	close(fd);
	return e;
}

static int op_open_trunc(char **a)
{
	int fd = open(a[0], O_RDONLY | O_TRUNC | O_CLOEXEC);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int op_ftruncate(char **a)
{
	int fd = open(a[0], O_RDWR | O_CLOEXEC);
	int e;

	if (fd < 0)
		return errno;
	e = ftruncate(fd, 0) < 0 ? errno : 0;
	close(fd);
	return e;
}

static int compare_names(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static int op_ls(char **a)
{
	DIR *d = opendir(a[0]); /* glibc opens it O_CLOEXEC */
	char **names = NULL;
	size_t count = 0, cap = 0;
	struct dirent *de;
	int e = 0;

	if (!d)
		return errno;
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			e = errno;
			break;
		}
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (count == cap) {
			char **grown;
			cap = cap ? cap * 2 : 64;
			grown = realloc(names, cap * sizeof(*names));
			if (!grown)
				abort();
			names = grown;
		}
		if (!(names[count++] = strdup(de->d_name)))
			abort();
	}
	closedir(d);
	if (count)
		qsort(names, count, sizeof(*names), compare_names);
	for (size_t i = 0; i < count; i++) {
		printf("%s\n", names[i]);
		free(names[i]);
	}
	free(names);
	return e;
}

static int op_stat(char **a)
{
	struct stat st;

	if (lstat(a[0], &st) < 0)
		return errno;
	printf("mode=%o size=%lld\n", (unsigned)st.st_mode, (long long)st.st_size);
	return 0;
}

static int op_exec(char **a)
{
	/* a[] is the tail of main's argv, so it is NULL-terminated already. */
	fflush(stdout);
	execv(a[0], a);
	return errno;
}

static int op_cwd(char **a)
{
	char buf[PATH_MAX];

	if (!getcwd(buf, sizeof(buf)))
		return errno;
	printf("%s\n", buf);
	return 0;
}

static int op_env(char **a)
{
	const char *v = getenv(a[0]);

	if (v)
		printf("%s=%s\n", a[0], v);
	else
		printf("%s unset\n", a[0]);
	return 0;
}

static int op_environ(char **a)
{
	extern char **environ;

	for (char **e = environ; *e; e++)
		printf("%s\n", *e);
	return 0;
}

static int op_fds(char **a)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int leaked = 0;

	if (!d)
		return errno;
	while ((de = readdir(d))) {
		char link[64], target[PATH_MAX];
		ssize_t n;
		long fd;
		char *end;

		fd = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name)
			continue;
		if (fd <= 2 || fd == dirfd(d))
			continue;
		snprintf(link, sizeof(link), "/proc/self/fd/%ld", fd);
		n = readlink(link, target, sizeof(target) - 1);
		if (n < 0)
			snprintf(target, sizeof(target), "? (%s)", errno_name(errno));
		else
			target[n] = '\0';
		printf("fd %ld -> %s\n", fd, target);
		leaked++;
	}
	closedir(d);
	if (leaked) {
		printf("probe: leaked %d\n", leaked);
		return REPORTED;
	}
	return 0;
}

static int op_caps(char **a)
{
	static const char *const keys[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:",
					    "CapAmb:", "NoNewPrivs:" };
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];

	if (!f)
		return errno;
	while (fgets(line, sizeof(line), f))
		for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strncmp(line, keys[i], strlen(keys[i])) == 0)
				fputs(line, stdout);
	fclose(f);
	return 0;
}

/* ------------------------------------------------------------ processes */

static int op_kill(char **a)
{
	pid_t pid = (pid_t)parse_long(a[0], "pid");
	int sig = parse_signal(a[1]);

	return raw_result(kill(pid, sig));
}

static int op_ptrace(char **a)
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

static int op_pidfd_getfd(char **a)
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

static int op_read_mem(char **a)
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

static int op_read_environ(char **a)
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

static int op_sleep(char **a)
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

static int op_orphan(char **a)
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

static int op_spawn_wait(char **a)
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

static int op_pgrp(char **a)
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

static int op_signals(char **a)
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

static int op_chown(char **a)
{
	return raw_result(chown(a[0], (uid_t)parse_long(a[1], "uid"), (gid_t)parse_long(a[2], "gid")));
}

static int op_setuid(char **a) { return raw_result(setuid((uid_t)parse_long(a[0], "uid"))); }
static int op_setgid(char **a) { return raw_result(setgid((gid_t)parse_long(a[0], "gid"))); }
static int op_setgroups(char **a) { return raw_result(setgroups(0, NULL)); }

static int op_id(char **a)
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

static int op_tiocsti(char **a) { return inject(a[0] ? a[0] : "id\n", false); }
static int op_tiocsti_high(char **a) { return inject(a[0] ? a[0] : "id\n", true); }

static int op_tioclinux(char **a)
{
	char subcode = 6; /* TIOCL_GETSHIFTSTATE: harmless on a VT, refused anyway */

	return raw_result(ioctl(0, TIOCLINUX, &subcode));
}

/* --------------------------------------------------------- raw syscalls */

struct flag_name {
	const char *name;
	unsigned long flag;
};

static const struct flag_name clone_flag_names[] = {
	{ "user", CLONE_NEWUSER }, { "mount", CLONE_NEWNS },	 { "net", CLONE_NEWNET },
	{ "pid", CLONE_NEWPID },   { "ipc", CLONE_NEWIPC },	 { "uts", CLONE_NEWUTS },
	{ "cgroup", CLONE_NEWCGROUP }, { "time", CLONE_NEWTIME }, { "files", CLONE_FILES },
	{ "fs", CLONE_FS },	   { "sysvsem", CLONE_SYSVSEM }, { "none", 0 },
};

/* "user", "user,mount", "0x10000000": names or numbers, joined by , or |. */
static unsigned long parse_clone_flags(const char *s)
{
	char *copy = strdup(s), *save = NULL;
	unsigned long flags = 0;

	if (!copy)
		abort();

	for (char *tok = strtok_r(copy, ",|", &save); tok; tok = strtok_r(NULL, ",|", &save)) {
		size_t i;
		for (i = 0; i < sizeof(clone_flag_names) / sizeof(clone_flag_names[0]); i++)
			if (strcmp(tok, clone_flag_names[i].name) == 0)
				break;
		if (i < sizeof(clone_flag_names) / sizeof(clone_flag_names[0]))
			flags |= clone_flag_names[i].flag;
		else if (tok[0] >= '0' && tok[0] <= '9')
			flags |= (unsigned long)parse_long(tok, "clone flag");
		else
			usage_error("unknown namespace or clone flag '%s'", tok);
	}
	free(copy);
	return flags;
}

static int op_unshare(char **a)
{
	return raw_result(unshare((int)parse_clone_flags(a[0])));
}

/* Wait for a child made by a raw clone; report how it ended if not cleanly. */
static int reap_clone_child(pid_t child)
{
	int status;

	while (waitpid(child, &status, __WALL) < 0)
		if (errno != EINTR)
			return errno;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		print_wait_status("child", status);
	return 0;
}

static int op_clone(char **a)
{
	unsigned long flags = parse_clone_flags(a[0]);
	long child;

	fflush(stdout);
	/* x86_64 order: flags, stack (0 = share the parent's, copied as with
	 * fork), parent_tid, child_tid, tls. */
	child = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);
	if (child < 0)
		return errno;
	if (child == 0)
		_exit(0);
	return reap_clone_child((pid_t)child);
}

static int op_clone3(char **a)
{
	/* struct clone_args as 11 u64s: flags, pidfd, child_tid, parent_tid,
	 * exit_signal, stack, stack_size, tls, set_tid, set_tid_size, cgroup. */
	uint64_t args[PROBE_CLONE_ARGS_SIZE / 8];
	long child;

	memset(args, 0, sizeof(args));
	args[0] = a[0] ? parse_clone_flags(a[0]) : 0;
	args[4] = SIGCHLD;
	fflush(stdout);
	child = syscall(SYS_clone3, args, sizeof(args));
	if (child < 0)
		return errno;
	if (child == 0)
		_exit(0);
	return reap_clone_child((pid_t)child);
}

static int op_setns(char **a) { return raw_result(setns(-1, 0)); }

static int op_mount(char **a)
{
	return raw_result(mount("none", a[0] ? a[0] : PROBE_NO_SUCH_PATH, "tmpfs", 0, NULL));
}

static int op_umount2(char **a) { return raw_result(umount2(a[0], 0)); }

static int op_pivot_root(char **a)
{
	return raw_result(syscall(SYS_pivot_root, PROBE_NO_SUCH_PATH, PROBE_NO_SUCH_PATH));
}

static int op_chroot(char **a) { return raw_result(chroot(a[0])); }

static int close_if_fd(long fd)
{
	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static int op_fsopen(char **a)
{
	/* A filesystem context that is never mounted: harmless even for root. */
	return close_if_fd(syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC));
}

static int op_fspick(char **a)
{
	return close_if_fd(syscall(SYS_fspick, PROBE_BAD_FD, "", FSPICK_CLOEXEC | FSPICK_EMPTY_PATH));
}

static int op_fsconfig(char **a)
{
	return raw_result(syscall(SYS_fsconfig, PROBE_BAD_FD, PROBE_FSCONFIG_SET_FLAG, "ro", NULL, 0));
}

static int op_fsmount(char **a)
{
	return close_if_fd(syscall(SYS_fsmount, PROBE_BAD_FD, FSMOUNT_CLOEXEC, 0));
}

static int op_open_tree(char **a)
{
	/* A detached copy of the tree: gone when the descriptor closes. */
	return close_if_fd(syscall(SYS_open_tree, AT_FDCWD, a[0], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
}

static int op_move_mount(char **a)
{
	return raw_result(syscall(SYS_move_mount, PROBE_BAD_FD, "", PROBE_BAD_FD, "",
				  MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH));
}

static int op_mount_setattr(char **a)
{
	/* A bad attr pointer of the first struct size (32). */
	return raw_result(syscall(SYS_mount_setattr, PROBE_BAD_FD, "", AT_EMPTY_PATH, (void *)1, 32));
}

static int op_io_uring_setup(char **a)
{
	/* A real one-entry ring, closed at once: this is the positive control
	 * that io_uring works here at all (io_uring_disabled=0). */
	char params[120]; /* struct io_uring_params */

	memset(params, 0, sizeof(params));
	return close_if_fd(syscall(SYS_io_uring_setup, 1, params));
}

static int op_io_uring_enter(char **a)
{
	return raw_result(syscall(SYS_io_uring_enter, PROBE_BAD_FD, 0, 0, 0, NULL, 0));
}

static int op_io_uring_register(char **a)
{
	return raw_result(syscall(SYS_io_uring_register, PROBE_BAD_FD, 0, NULL, 0));
}

static int op_keyctl(char **a)
{
	long id = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);

	if (id < 0)
		return errno;
	printf("keyring %ld\n", id);
	return 0;
}

static int op_add_key(char **a)
{
	/* A bad type pointer: EFAULT from the kernel, no key made. */
	return raw_result(syscall(SYS_add_key, (char *)1, "probe", NULL, 0, KEY_SPEC_SESSION_KEYRING));
}

static int op_request_key(char **a)
{
	return raw_result(syscall(SYS_request_key, (char *)1, "probe", NULL, 0));
}

static int op_keyring_read(char **a)
{
	long ring = KEY_SPEC_SESSION_KEYRING;
	char desc[512];
	int32_t ids[256];
	long n;

	if (a[0] && strcmp(a[0], "user") == 0)
		ring = KEY_SPEC_USER_KEYRING;
	else if (a[0] && strcmp(a[0], "session") != 0)
		usage_error("keyring is 'session' or 'user', not '%s'", a[0]);
	n = syscall(SYS_keyctl, KEYCTL_DESCRIBE, ring, desc, sizeof(desc));
	if (n < 0)
		return errno;
	desc[sizeof(desc) - 1] = '\0';
	printf("keyring %s\n", desc);

	/* Then every key in it, with its payload: a canary planted in a key
	 * outside the jail must never show up here. */
	n = syscall(SYS_keyctl, KEYCTL_READ, ring, ids, sizeof(ids));
	if (n < 0)
		return errno;
	for (long i = 0; i < n / (long)sizeof(ids[0]) && i < 256; i++) {
		char payload[1024];
		long len;

		if (syscall(SYS_keyctl, KEYCTL_DESCRIBE, (long)ids[i], desc, sizeof(desc)) < 0)
			snprintf(desc, sizeof(desc), "? (%s)", errno_name(errno));
		desc[sizeof(desc) - 1] = '\0';
		printf("key %d %s: ", (int)ids[i], desc);
		mid_line = true;
		if (strncmp(desc, "keyring;", 8) == 0) {
			/* a nested keyring's payload is binary key ids */
			printf("(keyring)\n");
			mid_line = false;
			continue;
		}
		len = syscall(SYS_keyctl, KEYCTL_READ, (long)ids[i], payload, sizeof(payload));
		if (len < 0)
			printf("(%s)", errno_name(errno));
		else
			emit_bytes(payload, (size_t)(len < (long)sizeof(payload) ? len : (long)sizeof(payload)));
		end_partial_line();
	}
	return 0;
}

static int op_bpf(char **a)
{
	/* NULL attr with a nonzero size: the kernel's copy fails, EFAULT. */
	return raw_result(syscall(SYS_bpf, PROBE_BPF_PROG_LOAD, NULL, 64));
}

static int op_perf_event_open(char **a)
{
	return raw_result(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
}

static int op_userfaultfd(char **a)
{
	/* User-mode-only faults are allowed to everyone (even with
	 * vm.unprivileged_userfaultfd=0), so this succeeds where it reaches
	 * the kernel. */
	return close_if_fd(syscall(SYS_userfaultfd, O_CLOEXEC | PROBE_UFFD_USER_MODE_ONLY));
}

static int op_shmget(char **a)
{
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);

	if (id < 0)
		return errno;
	printf("shmid %d\n", id);
	shmctl(id, IPC_RMID, NULL);
	return 0;
}

static int op_semget(char **a)
{
	int id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);

	if (id < 0)
		return errno;
	printf("semid %d\n", id);
	semctl(id, 0, IPC_RMID);
	return 0;
}

static int op_msgget(char **a)
{
	int id = msgget(IPC_PRIVATE, IPC_CREAT | 0600);

	if (id < 0)
		return errno;
	printf("msqid %d\n", id);
	msgctl(id, IPC_RMID, NULL);
	return 0;
}

static int op_shmat(char **a)
{
	int id = (int)parse_long(a[0], "shm id");
	struct shmid_ds ds;
	size_t size = 4096;
	char *p;

	p = shmat(id, NULL, SHM_RDONLY);
	if (p == (void *)-1)
		return errno;
	if (shmctl(id, IPC_STAT, &ds) == 0 && ds.shm_segsz < size)
		size = ds.shm_segsz;
	/* The segment's text up to its first NUL: where a canary would be. */
	emit_bytes(p, strnlen(p, size));
	end_partial_line();
	shmdt(p);
	return 0;
}

static int op_mq_open(char **a)
{
	/* The raw call takes the name without glibc's leading slash. */
	return close_if_fd(syscall(SYS_mq_open, "probe", O_RDONLY, 0, NULL));
}

static int op_personality(char **a)
{
	unsigned long persona = a[0] ? (unsigned long)parse_long(a[0], "persona") : 0xffffffffUL;
	long r = syscall(SYS_personality, persona);

	if (r < 0)
		return errno;
	printf("personality 0x%lx\n", (unsigned long)r);
	return 0;
}

static int op_x32_getpid(char **a)
{
	long r = syscall(PROBE_X32_SYSCALL_BIT | PROBE_X86_64_GETPID);

	if (r < 0)
		return errno;
	printf("x32-getpid %ld\n", r);
	return 0;
}

static int op_int80_getpid(char **a)
{
#if defined(__x86_64__)
	long ret = PROBE_I386_GETPID;

	fflush(stdout);
	/* The 32-bit entry zeroes r8-r15 on the way back; the i386 argument
	 * registers are preserved. A filter that does not check the arch sees
	 * nr 20 and takes it for x86_64's writev. */
	__asm__ volatile("int $0x80"
			 : "+a"(ret)
			 :
			 : "memory", "cc", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15");
	printf("int80 %ld\n", ret);
	if (ret < 0 && ret > -4096)
		return (int)-ret;
	return 0;
#else
	usage_error("only on x86_64");
#endif
}

static int op_syscall(char **a)
{
	long nr = parse_long(a[0], "syscall number");
	long r = syscall(nr, 0, 0, 0, 0, 0, 0);

	if (r < 0)
		return errno;
	printf("ret %ld\n", r);
	return 0;
}

/* -------------------------------------------------------------- sockets */

static const struct flag_name family_names[] = {
	{ "inet", AF_INET },   { "inet6", AF_INET6 },	{ "unix", AF_UNIX }, { "netlink", AF_NETLINK },
	{ "packet", AF_PACKET }, { "vsock", AF_VSOCK }, { "alg", AF_ALG },
};
static const struct flag_name type_names[] = {
	{ "stream", SOCK_STREAM }, { "dgram", SOCK_DGRAM }, { "raw", SOCK_RAW },
	{ "seqpacket", SOCK_SEQPACKET }, { "rdm", SOCK_RDM },
};
static const struct flag_name proto_names[] = {
	{ "default", 0 },	 { "tcp", IPPROTO_TCP },   { "udp", IPPROTO_UDP },
	{ "sctp", IPPROTO_SCTP }, { "mptcp", IPPROTO_MPTCP }, { "icmp", IPPROTO_ICMP },
	{ "icmpv6", IPPROTO_ICMPV6 }, { "udplite", IPPROTO_UDPLITE },
	/* netlink protocols */
	{ "route", 0 },		 { "sock_diag", 4 },	   { "audit", 9 },
	{ "generic", 16 },
	/* AF_PACKET's ETH_P_ALL, in network order as socket(2) wants it */
	{ "all", 0x0300 },
};

static long lookup_name(const struct flag_name *t, size_t n, const char *s, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, s) == 0)
			return (long)t[i].flag;
	return parse_long(s, what);
}
#define LOOKUP(table, s, what) lookup_name(table, sizeof(table) / sizeof(table[0]), s, what)

static int op_socket(char **a)
{
	int family = (int)LOOKUP(family_names, a[0], "family");
	int type = (int)LOOKUP(type_names, a[1], "type");
	int proto = (int)LOOKUP(proto_names, a[2], "protocol");

	return close_if_fd(socket(family, type | SOCK_CLOEXEC, proto));
}

static int op_socketpair_dgram(char **a)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errno;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* Numeric IPv4 or IPv6 (with %scope) literals only: no name resolution
 * happens in the probe, so a test never depends on a resolver. */
static void parse_inet(const char *host, const char *port, struct sockaddr_storage *ss,
		       socklen_t *ret_len)
{
	struct addrinfo hints, *res;
	int r;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	r = getaddrinfo(host, port, &hints, &res);
	if (r)
		usage_error("bad address '%s' port '%s': %s", host, port, gai_strerror(r));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*ret_len = res->ai_addrlen;
	freeaddrinfo(res);
}

static void set_timeouts(int fd, double send_seconds, double recv_seconds)
{
	struct timeval tv;

	/* SO_SNDTIMEO bounds a blocking connect() too. */
	tv.tv_sec = (time_t)send_seconds;
	tv.tv_usec = (suseconds_t)((send_seconds - (double)tv.tv_sec) * 1e6);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	tv.tv_sec = (time_t)recv_seconds;
	tv.tv_usec = (suseconds_t)((recv_seconds - (double)tv.tv_sec) * 1e6);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* After a connection: print what the peer says (up to 4 KiB, until it
 * closes or goes quiet), so a test sees which listener it reached. */
static void print_reply(int fd)
{
	char buf[MAX_SOCKET_READ];
	size_t total = 0;

	while (total < sizeof(buf)) {
		ssize_t n = recv(fd, buf + total, sizeof(buf) - total, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += (size_t)n;
	}
	emit_bytes(buf, total);
	end_partial_line();
}

static int connect_and_read(const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errno;
	set_timeouts(fd, 10, 3);
	if (connect(fd, sa, len) < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	printf("connected\n");
	fflush(stdout);
	print_reply(fd);
	close(fd);
	return 0;
}

static int op_connect_tcp(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;

	parse_inet(a[0], a[1], &ss, &len);
	return connect_and_read((struct sockaddr *)&ss, len);
}

static int connect_unix(const char *name, bool abstract)
{
	struct sockaddr_un sun;
	socklen_t len;
	int e;

	if ((e = fill_sockaddr_un(&sun, &len, name, abstract)))
		return e;
	return connect_and_read((struct sockaddr *)&sun, len);
}

static int op_connect_unix(char **a) { return connect_unix(a[0], false); }
static int op_connect_abstract(char **a) { return connect_unix(a[0], true); }

static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -1;
}

static int bind_socket(const struct sockaddr *sa, socklen_t len, int type, int *ret_fd)
{
	int one = 1;
	int fd = socket(sa->sa_family, type | SOCK_CLOEXEC, 0);

	*ret_fd = -1;
	if (fd < 0)
		return errno;
	if (sa->sa_family != AF_UNIX)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, sa, len) < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	*ret_fd = fd;
	return 0;
}

static int op_bind_tcp(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e;

	parse_inet(a[0], a[1], &ss, &len);
	if ((e = bind_socket((struct sockaddr *)&ss, len, SOCK_STREAM, &fd)))
		return e;
	printf("bound %d\n", bound_port(fd));
	close(fd);
	return 0;
}

/* Accept for the given time; each connection gets "probe\n" and is closed. */
static int listen_and_count(int fd, double seconds)
{
	double end = now_monotonic() + seconds;
	int accepted = 0;

	if (listen(fd, 64) < 0)
		return errno;
	if (bound_port(fd) >= 0)
		printf("listening %d\n", bound_port(fd));
	else
		printf("listening\n");
	fflush(stdout);
	for (;;) {
		double left = end - now_monotonic();
		struct pollfd pfd = { fd, POLLIN, 0 };
		int conn;

		if (left <= 0)
			break;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			continue;
		accepted++;
		if (send(conn, "probe\n", 6, MSG_NOSIGNAL) < 0) {
			/* the peer may be gone already; it was still accepted */
		}
		close(conn);
	}
	printf("accepted %d\n", accepted);
	return 0;
}

/* connect-cycles HOST N: a listener of its own on HOST, then N rounds of
 * connect, accept, close; prints the microseconds per round. For the
 * supervisor's benchmark. */
static int op_connect_cycles(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int lfd, e;

	parse_inet(a[0], "0", &ss, &len);
	if ((e = bind_socket((struct sockaddr *)&ss, len, SOCK_STREAM, &lfd)))
		return e;
	if (listen(lfd, 128) < 0)
		return errno;
	len = sizeof(ss);
	getsockname(lfd, (struct sockaddr *)&ss, &len);
	long n = parse_long(a[1], "rounds");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		int c = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c < 0)
			return errno;
		if (connect(c, (struct sockaddr *)&ss, len) < 0)
			return errno;
		int s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0)
			return errno;
		close(s);
		close(c);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3;
	printf("us per round %.2f\n", us / (double)n);
	close(lfd);
	return 0;
}

/* listen-unbound: listen() on a TCP socket never bound, which binds it
 * to the wildcard address and a port of the kernel's choosing. */
static int op_listen_unbound(char **a)
{
	(void)a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	int e = listen(fd, 1) < 0 ? errno : 0;
	close(fd);
	return e;
}

static int op_listen_tcp(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e;

	parse_inet(a[0], a[1], &ss, &len);
	if ((e = bind_socket((struct sockaddr *)&ss, len, SOCK_STREAM, &fd)))
		return e;
	e = listen_and_count(fd, parse_seconds(a[2]));
	close(fd);
	return e;
}

static int listen_unix(const char *name, bool abstract, const char *seconds)
{
	struct sockaddr_un sun;
	socklen_t len;
	int fd, e;

	if ((e = fill_sockaddr_un(&sun, &len, name, abstract)))
		return e;
	if ((e = bind_socket((struct sockaddr *)&sun, len, SOCK_STREAM, &fd)))
		return e;
	e = listen_and_count(fd, parse_seconds(seconds));
	close(fd);
	return e;
}

static int op_listen_unix(char **a) { return listen_unix(a[0], false, a[1]); }
static int op_listen_abstract(char **a) { return listen_unix(a[0], true, a[1]); }

static int op_udp_send(char **a)
{
	struct sockaddr_storage ss;
	struct pollfd pfd;
	socklen_t len;
	char buf[MAX_SOCKET_READ];
	ssize_t n;
	int fd;

	parse_inet(a[0], a[1], &ss, &len);
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	n = sendto(fd, "probe\n", 6, 0, (struct sockaddr *)&ss, len);
	if (n < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	printf("sent %zd\n", n);
	fflush(stdout);
	/* A reply, if the peer sends one (netpeer does), within a second. */
	pfd = (struct pollfd){ fd, POLLIN, 0 };
	if (poll(&pfd, 1, 1000) > 0) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			emit_bytes(buf, (size_t)n);
			end_partial_line();
		}
	}
	close(fd);
	return 0;
}

/* TCP Fast Open: the data-carrying send connects implicitly, which is the
 * point: it never passes through connect(2). */
enum fastopen_call { FASTOPEN_SENDTO, FASTOPEN_SENDMSG, FASTOPEN_SENDMMSG };

static int fastopen(char **a, enum fastopen_call call)
{
	struct sockaddr_storage ss;
	char data[] = "probe\n";
	struct iovec iov = { data, 6 };
	socklen_t len;
	ssize_t n;
	int fd;

	parse_inet(a[0], a[1], &ss, &len);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		return errno;
	set_timeouts(fd, 10, 3);
	if (call == FASTOPEN_SENDTO) {
		n = sendto(fd, data, 6, MSG_FASTOPEN | MSG_NOSIGNAL, (struct sockaddr *)&ss, len);
	} else {
		struct msghdr msg;
		memset(&msg, 0, sizeof(msg));
		msg.msg_name = &ss;
		msg.msg_namelen = len;
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		if (call == FASTOPEN_SENDMSG) {
			n = sendmsg(fd, &msg, MSG_FASTOPEN | MSG_NOSIGNAL);
		} else {
			struct mmsghdr mm;
			memset(&mm, 0, sizeof(mm));
			mm.msg_hdr = msg;
			n = sendmmsg(fd, &mm, 1, MSG_FASTOPEN | MSG_NOSIGNAL);
			if (n == 1)
				n = mm.msg_len;
		}
	}
	if (n < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	printf("sent %zd\n", n);
	fflush(stdout);
	print_reply(fd);
	close(fd);
	return 0;
}

static int op_fastopen(char **a) { return fastopen(a, FASTOPEN_SENDTO); }
static int op_sendmsg_fastopen(char **a) { return fastopen(a, FASTOPEN_SENDMSG); }
static int op_sendmmsg_fastopen(char **a) { return fastopen(a, FASTOPEN_SENDMMSG); }

/* connect-race: a second thread rewrites the sockaddr that connect() is
 * reading, between address 1 and address 2, as fast as it can. A checker
 * that reads the address, approves it, and lets the kernel read it again
 * (seccomp notify CONTINUE) loses this race some of the time. */
struct race {
	struct sockaddr_storage addr1, addr2, shared;
	socklen_t len;
	int stop;
};

static void *race_flipper(void *arg)
{
	struct race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		memcpy(&r->shared, &r->addr2, r->len);
		/* keep the compiler from dropping the store above as dead */
		__asm__ volatile("" ::: "memory");
		memcpy(&r->shared, &r->addr1, r->len);
		__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

static void map_v4_to_v6(struct sockaddr_storage *ss)
{
	struct sockaddr_in v4 = *(struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	v6->sin6_family = AF_INET6;
	v6->sin6_port = v4.sin_port;
	v6->sin6_addr.s6_addr[10] = 0xff;
	v6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(&v6->sin6_addr.s6_addr[12], &v4.sin_addr, 4);
}

static bool same_inet(const struct sockaddr_storage *x, const struct sockaddr_storage *y)
{
	if (x->ss_family != y->ss_family)
		return false;
	if (x->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)x, *b = (const void *)y;
		return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
	}
	if (x->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)x, *b = (const void *)y;
		return a->sin6_port == b->sin6_port &&
		       memcmp(&a->sin6_addr, &b->sin6_addr, sizeof(a->sin6_addr)) == 0;
	}
	return false;
}

static int op_connect_race(char **a)
{
	static struct race r;
	long attempts = parse_long(a[4], "count");
	long to1 = 0, to2 = 0, failed = 0;
	socklen_t len1, len2;
	pthread_t thread;
	int e;

	parse_inet(a[0], a[1], &r.addr1, &len1);
	parse_inet(a[2], a[3], &r.addr2, &len2);
	/* One socket family for both: a v4 address meets a v6 one as
	 * ::ffff:a.b.c.d. */
	if (r.addr1.ss_family != r.addr2.ss_family) {
		if (r.addr1.ss_family == AF_INET)
			map_v4_to_v6(&r.addr1);
		else
			map_v4_to_v6(&r.addr2);
	}
	r.len = r.addr1.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	memcpy(&r.shared, &r.addr1, r.len);
	if ((e = pthread_create(&thread, NULL, race_flipper, &r)))
		return e;
	for (long i = 0; i < attempts; i++) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int fd = socket(r.addr1.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			failed++;
			continue;
		}
		set_timeouts(fd, 1, 1);
		if (connect(fd, (struct sockaddr *)&r.shared, r.len) == 0 &&
		    getpeername(fd, (struct sockaddr *)&peer, &plen) == 0) {
			if (same_inet(&peer, &r.addr2))
				to2++;
			else if (same_inet(&peer, &r.addr1))
				to1++;
			else
				failed++; /* a torn address: neither */
		} else {
			failed++;
		}
		close(fd);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	printf("connected-to-2 %ld\n", to2);
	printf("connected-to-1 %ld\n", to1);
	printf("failed %ld\n", failed);
	return 0;
}

/* ------------------------------------------------------------- the table */

struct op {
	const char *name;
	int min_args, max_args; /* max -1: any number */
	int (*run)(char **args);
	const char *usage;
};

static const struct op ops[] = {
	{ "read", 1, 1, op_read, "PATH" },
	{ "write", 1, 1, op_write, "PATH" },
	{ "append", 1, 1, op_append, "PATH" },
	{ "mkdir", 1, 1, op_mkdir, "PATH" },
	{ "rmdir", 1, 1, op_rmdir, "PATH" },
	{ "unlink", 1, 1, op_unlink, "PATH" },
	{ "rename", 2, 2, op_rename, "OLD NEW" },
	{ "link", 2, 2, op_link, "OLD NEW" },
	{ "symlink", 2, 2, op_symlink, "TARGET LINK" },
	{ "mkfifo", 1, 1, op_mkfifo, "PATH" },
	{ "mknod-char", 1, 1, op_mknod_char, "PATH" },
	{ "mksock", 1, 1, op_mksock, "PATH" },
	{ "truncate", 1, 1, op_truncate, "PATH" },
	{ "open-trunc", 1, 1, op_open_trunc, "PATH" },
	{ "ftruncate", 1, 1, op_ftruncate, "PATH" },
	{ "ls", 1, 1, op_ls, "PATH" },
	{ "stat", 1, 1, op_stat, "PATH" },
	{ "exec", 1, -1, op_exec, "PATH [ARG]..." },
	{ "cwd", 0, 0, op_cwd, "" },
	{ "env", 1, 1, op_env, "NAME" },
	{ "environ", 0, 0, op_environ, "" },
	{ "fds", 0, 0, op_fds, "" },
	{ "caps", 0, 0, op_caps, "" },

	{ "kill", 2, 2, op_kill, "PID SIG" },
	{ "ptrace", 1, 1, op_ptrace, "PID" },
	{ "pidfd-getfd", 2, 2, op_pidfd_getfd, "PID FD" },
	{ "read-mem", 1, 1, op_read_mem, "PID" },
	{ "read-environ", 1, 1, op_read_environ, "PID" },
	{ "sleep", 1, 1, op_sleep, "SECONDS" },
	{ "orphan", 2, 2, op_orphan, "FILE SECONDS" },
	{ "spawn-wait", 1, 1, op_spawn_wait, "SECONDS" },
	{ "pgrp", 0, 0, op_pgrp, "" },
	{ "signals", 1, 1, op_signals, "SECONDS" },

	{ "chown", 3, 3, op_chown, "PATH UID GID" },
	{ "setuid", 1, 1, op_setuid, "UID" },
	{ "setgid", 1, 1, op_setgid, "GID" },
	{ "setgroups", 0, 0, op_setgroups, "" },
	{ "id", 0, 0, op_id, "" },

	{ "tiocsti", 0, 1, op_tiocsti, "[TEXT]" },
	{ "tiocsti-high", 0, 1, op_tiocsti_high, "[TEXT]" },
	{ "tioclinux", 0, 0, op_tioclinux, "" },

	{ "io_uring_setup", 0, 0, op_io_uring_setup, "" },
	{ "io_uring_enter", 0, 0, op_io_uring_enter, "" },
	{ "io_uring_register", 0, 0, op_io_uring_register, "" },
	{ "keyctl", 0, 0, op_keyctl, "" },
	{ "add_key", 0, 0, op_add_key, "" },
	{ "request_key", 0, 0, op_request_key, "" },
	{ "keyring-read", 0, 1, op_keyring_read, "[session|user]" },
	{ "bpf", 0, 0, op_bpf, "" },
	{ "perf_event_open", 0, 0, op_perf_event_open, "" },
	{ "userfaultfd", 0, 0, op_userfaultfd, "" },
	{ "unshare", 1, 1, op_unshare, "FLAGS" },
	{ "clone", 1, 1, op_clone, "FLAGS" },
	{ "clone3", 0, 1, op_clone3, "[FLAGS]" },
	{ "setns", 0, 0, op_setns, "" },
	{ "mount", 0, 1, op_mount, "[TARGET]" },
	{ "umount2", 1, 1, op_umount2, "PATH" },
	{ "pivot_root", 0, 0, op_pivot_root, "" },
	{ "chroot", 1, 1, op_chroot, "PATH" },
	{ "fsopen", 0, 0, op_fsopen, "" },
	{ "fspick", 0, 0, op_fspick, "" },
	{ "fsconfig", 0, 0, op_fsconfig, "" },
	{ "fsmount", 0, 0, op_fsmount, "" },
	{ "open_tree", 1, 1, op_open_tree, "PATH" },
	{ "move_mount", 0, 0, op_move_mount, "" },
	{ "mount_setattr", 0, 0, op_mount_setattr, "" },
	{ "shmget", 0, 0, op_shmget, "" },
	{ "semget", 0, 0, op_semget, "" },
	{ "msgget", 0, 0, op_msgget, "" },
	{ "shmat", 1, 1, op_shmat, "ID" },
	{ "mq_open", 0, 0, op_mq_open, "" },
	{ "personality", 0, 1, op_personality, "[PERSONA]" },
	{ "x32-getpid", 0, 0, op_x32_getpid, "" },
	{ "int80-getpid", 0, 0, op_int80_getpid, "" },
	{ "syscall", 1, 1, op_syscall, "NR" },

	{ "socket", 3, 3, op_socket, "FAMILY TYPE PROTO" },
	{ "socketpair-dgram", 0, 0, op_socketpair_dgram, "" },
	{ "connect-tcp", 2, 2, op_connect_tcp, "HOST PORT" },
	{ "connect-unix", 1, 1, op_connect_unix, "PATH" },
	{ "connect-abstract", 1, 1, op_connect_abstract, "NAME" },
	{ "bind-tcp", 2, 2, op_bind_tcp, "HOST PORT" },
	{ "listen-tcp", 3, 3, op_listen_tcp, "HOST PORT SECONDS" },
	{ "connect-cycles", 2, 2, op_connect_cycles, "HOST ROUNDS" },
	{ "listen-unbound", 0, 0, op_listen_unbound, "" },
	{ "listen-unix", 2, 2, op_listen_unix, "PATH SECONDS" },
	{ "listen-abstract", 2, 2, op_listen_abstract, "NAME SECONDS" },
	{ "udp-send", 2, 2, op_udp_send, "HOST PORT" },
	{ "fastopen", 2, 2, op_fastopen, "HOST PORT" },
	{ "sendmsg-fastopen", 2, 2, op_sendmsg_fastopen, "HOST PORT" },
	{ "sendmmsg-fastopen", 2, 2, op_sendmmsg_fastopen, "HOST PORT" },
	{ "connect-race", 5, 5, op_connect_race, "HOST1 PORT1 HOST2 PORT2 N" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: probe OP [ARG]...\nops:\n");
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		fprintf(out, "  %s%s%s\n", ops[i].name, *ops[i].usage ? " " : "", ops[i].usage);
}

int main(int argc, char **argv)
{
	const struct op *op = NULL;
	int nargs, r;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strcmp(ops[i].name, argv[1]) == 0)
			op = &ops[i];
	if (!op) {
		fprintf(stderr, "probe: unknown op '%s'\n", argv[1]);
		usage(stderr);
		return 2;
	}
	op_name = op->name;
	nargs = argc - 2;
	if (nargs < op->min_args || (op->max_args >= 0 && nargs > op->max_args))
		usage_error("usage: probe %s %s", op->name, op->usage);

	/* Line-buffered even into a pipe, so lines and the signal handler's
	 * raw writes interleave in order. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("probe: started %s\n", op->name);
	fflush(stdout);

	errno = 0;
	r = op->run(argv + 2);
	if (r == REPORTED)
		return 1;
	end_partial_line();
	if (r == 0) {
		printf("probe: ok\n");
		return 0;
	}
	printf("probe: errno %s\n", errno_name(r));
	return 1;
}
