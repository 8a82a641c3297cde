#include "jail/run.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

#include "jail/caps.h"
#include "supervise/supervise.h"
#include "lib/log.h"
#include "lib/fd.h"
#include "lib/util.h"
#include "netns/netns.h"

/* Newer than the distribution's headers (Linux 6.6). */
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

/* What the command's process tells stockade when its setup fails, before
 * it exits 125 (or 126/127 when exec itself failed). */
enum stage {
	STAGE_NONE,
	STAGE_MOUNT,
	STAGE_NETLINK,
	STAGE_INIT,
	STAGE_PGRP,
	STAGE_CGROUP,
	STAGE_CHDIR,
	STAGE_CAPS,
	STAGE_NNP,
	STAGE_LANDLOCK,
	STAGE_SECCOMP,
	STAGE_HANDOVER,
	STAGE_EXEC,
};

struct child_error {
	int stage;
	int err;
	char step[64];
	char path[512];
};

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

static _Noreturn void child_fail_step(int fd, enum stage stage, int err, const char *step,
				      const char *path, int code)
{
	struct child_error e = { .stage = stage, .err = err < 0 ? -err : err };
	if (step)
		snprintf(e.step, sizeof(e.step), "%s", step);
	if (path)
		snprintf(e.path, sizeof(e.path), "%s", path);
	(void)!write(fd, &e, sizeof(e));
	_exit(code);
}

static _Noreturn void child_fail(int fd, enum stage stage, int err, const char *path, int code)
{
	child_fail_step(fd, stage, err, NULL, path, code);
}

static int send_fd(int sock, int fd)
{
	char dummy = 'L';
	struct iovec iov = { .iov_base = &dummy, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u = { 0 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

static int recv_fd(int sock, int *ret_fd)
{
	char dummy;
	struct iovec iov = { .iov_base = &dummy, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	ssize_t n;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	if (!c || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EBADMSG;
	memcpy(ret_fd, CMSG_DATA(c), sizeof(int));
	return 0;
}

/* Confines the calling process for good. The order matters: capabilities
 * go before no_new_privs and Landlock (which needs no_new_privs without
 * CAP_SYS_ADMIN); the filter comes last so that setting up never meets
 * it, and its listener goes to stockade and never stays here: holding it,
 * the command could answer its own refusals. */
static void confine(const struct run_setup *s, int err_fd, int sock)
{
	int r = caps_drop_all();
	if (r < 0)
		child_fail(err_fd, STAGE_CAPS, r, NULL, 125);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(err_fd, STAGE_NNP, errno, NULL, 125);
	if (s->landlock) {
		const char *failing = NULL;
		r = landlock_apply(s->landlock, &failing);
		if (r < 0)
			child_fail(err_fd, STAGE_LANDLOCK, r, failing, 125);
	}
	if (s->bpf) {
		int listener = -1;
		r = seccomp_load_filter(s->bpf, &listener);
		if (r < 0)
			child_fail(err_fd, STAGE_SECCOMP, r, NULL, 125);
		r = send_fd(sock, listener);
		if (r < 0)
			child_fail(err_fd, STAGE_HANDOVER, r, NULL, 125);
		close(listener);
	}
}

static _Noreturn void exec_program(const char *program, char *const *argv, char *const *envp, int err_fd)
{
	/* Only 0, 1 and 2 reach the command; the rest close at exec, the
	 * error pipe last of all. */
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	execve(program, argv, envp);
	int e = errno;
	/* The program was found before the fork: failing now means it
	 * cannot run (its interpreter or loader is missing, or outside what
	 * the jail may read), 126 as a shell says. */
	child_fail(err_fd, STAGE_EXEC, e, program, 126);
}

static _Noreturn void exec_command(const struct policy *p, int err_fd)
{
	exec_program(p->program, p->argv, p->envp, err_fd);
}

/* The landlock backend's command process starts before its policy is
 * known, so that the fork and the filter's load overlap stockade's
 * planning. It takes the filter at once (the variant depends only on the
 * command line), then waits for the rest: the Landlock ruleset stockade
 * built, where to start and what to run. */
struct spec_header {
	uint32_t flags;
	uint32_t n_argv;
	uint32_t n_envp;
	uint32_t blob_len;	/* cwd, program, argv, envp: NUL-terminated strings */
};

#define SPEC_JAIL (1u << 0)
#define SPEC_RULESET (1u << 1)
#define SPEC_CGROUP (1u << 2)

/* Does stockade have its terminal in the foreground? Then the command
 * stays in stockade's process group, so the terminal's job control and
 * its signals reach it as they would without stockade. */
static bool on_foreground_terminal(void)
{
	for (int fd = 0; fd <= 2; fd++)
		if (isatty(fd) && tcgetsid(fd) == getsid(0))
			return true;
	return false;
}

struct early {
	pid_t pid;
	int err_fd;
	int sock;
	bool own_pgrp;
	bool jail;
	bool in_cgroup;		/* born in the run's cgroup */
};

static int send_spec(int sock, const struct spec_header *h, const int *fds, size_t n_fds, const char *blob)
{
	struct iovec iov = { .iov_base = (void *)h, .iov_len = sizeof(*h) };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u = { 0 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n_fds) {
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(n_fds * sizeof(int));
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(n_fds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, n_fds * sizeof(int));
	}
	if (sendmsg(sock, &msg, MSG_NOSIGNAL) != (ssize_t)sizeof(*h))
		return -errno;
	return write_all(sock, blob, h->blob_len);
}

static _Noreturn void early_child(const struct sock_fprog *bpf, bool own_pgrp, pid_t parent, int err_fd,
				  int sock)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(125);
	if (own_pgrp && setpgid(0, 0) < 0)
		child_fail(err_fd, STAGE_PGRP, errno, NULL, 125);
	if (bpf) {
		/* no_new_privs first: without CAP_SYS_ADMIN the kernel takes
		 * a filter only then. Everything this process does up to its
		 * exec is in the filter's allowlist. */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
			child_fail(err_fd, STAGE_NNP, errno, NULL, 125);
		int listener = -1;
		int r = seccomp_load_filter(bpf, &listener);
		if (r < 0)
			child_fail(err_fd, STAGE_SECCOMP, r, NULL, 125);
		r = send_fd(sock, listener);
		if (r < 0)
			child_fail(err_fd, STAGE_HANDOVER, r, NULL, 125);
		/* The listener never stays here: holding it, the command
		 * could answer its own refusals. */
		close(listener);
	}

	struct spec_header h;
	int fds[2] = { -1, -1 };
	struct iovec iov = { .iov_base = &h, .iov_len = sizeof(h) };
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	ssize_t n;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	while (n < 0 && errno == EINTR);
	if (n != sizeof(h))
		_exit(125);	/* stockade gave up before the command could start */
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_type == SCM_RIGHTS)
		memcpy(fds, CMSG_DATA(c), c->cmsg_len - CMSG_LEN(0));
	char *blob = malloc(h.blob_len + 1);
	size_t got;
	if (!blob || read_all(sock, blob, h.blob_len, &got) < 0 || got != h.blob_len)
		_exit(125);
	blob[h.blob_len] = '\0';
	char **argv = calloc(h.n_argv + 1, sizeof(char *));
	char **envp = calloc(h.n_envp + 1, sizeof(char *));
	if (!argv || !envp)
		_exit(125);
	char *s = blob;
	const char *cwd = s;
	s += strlen(s) + 1;
	const char *program = s;
	s += strlen(s) + 1;
	for (uint32_t i = 0; i < h.n_argv; i++, s += strlen(s) + 1)
		argv[i] = s;
	for (uint32_t i = 0; i < h.n_envp; i++, s += strlen(s) + 1)
		envp[i] = s;

	int k = 0;
	int ruleset = (h.flags & SPEC_RULESET) ? fds[k++] : -1;
	int cgroup_procs = (h.flags & SPEC_CGROUP) ? fds[k++] : -1;
	if (cgroup_procs >= 0 && write(cgroup_procs, "0", 1) != 1)
		child_fail(err_fd, STAGE_CGROUP, errno, "cgroup.procs", 125);
	if (chdir(cwd) < 0)
		child_fail(err_fd, STAGE_CHDIR, errno, cwd, 125);
	if (h.flags & SPEC_JAIL) {
		int r = caps_drop_all();
		if (r < 0)
			child_fail(err_fd, STAGE_CAPS, r, NULL, 125);
		if (ruleset >= 0 && (r = landlock_restrict(ruleset)) < 0)
			child_fail(err_fd, STAGE_LANDLOCK, r, NULL, 125);
	}
	exec_program(program, argv, envp, err_fd);
}

/* Forks, straight into the run's cgroup where there is one (clone3 with
 * CLONE_INTO_CGROUP): moving a process between cgroups afterwards waits
 * for an RCU grace period, milliseconds. 1 when the child was born in
 * it. */
static pid_t fork_into(const struct run_cgroup *cg, bool *ret_in_cgroup)
{
	*ret_in_cgroup = false;
	if (cg && cg->dir_fd >= 0) {
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

int run_early_start(const struct sock_fprog *bpf, const struct run_cgroup *cg, struct early **ret)
{
	int errp[2], sv[2];
	if (pipe2(errp, O_CLOEXEC) < 0)
		return -errno;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		int e = -errno;
		close(errp[0]);
		close(errp[1]);
		return e;
	}
	bool own_pgrp = !on_foreground_terminal();
	pid_t parent = getpid();
	bool in_cgroup;
	pid_t pid = fork_into(cg, &in_cgroup);
	if (pid == 0) {
		close(errp[0]);
		close(sv[0]);
		early_child(bpf, own_pgrp, parent, errp[1], sv[1]);
	}
	int e = -errno;
	close(errp[1]);
	close(sv[1]);
	if (pid < 0) {
		close(errp[0]);
		close(sv[0]);
		return e;
	}
	if (own_pgrp)
		(void)setpgid(pid, pid);
	struct early *x = xcalloc(1, sizeof(*x));
	*x = (struct early){
		.pid = pid,
		.err_fd = errp[0],
		.sock = sv[0],
		.own_pgrp = own_pgrp,
		.jail = bpf != NULL,
		.in_cgroup = in_cgroup,
	};
	*ret = x;
	return 0;
}

void run_early_release(struct early *e)
{
	free(e);
}

void run_early_abort(struct early *e)
{
	if (!e)
		return;
	kill(e->pid, SIGKILL);
	while (waitpid(e->pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(e->err_fd);
	close(e->sock);
	free(e);
}

/* Hands the early process what it waits for. */
static int start_early(const struct run_setup *s, const struct early *e, char **ret_error)
{
	const struct policy *p = s->p;
	_cleanup_close_ int ruleset = -1;
	if (s->jail && s->landlock) {
		const char *failing = NULL;
		int r = landlock_build(s->landlock, &ruleset, &failing);
		if (r < 0) {
			*ret_error = failing ? xasprintf("cannot apply the Landlock rule on '%s': %s", failing, strerror(-r))
					     : xasprintf("cannot create the Landlock ruleset: %s", strerror(-r));
			return r;
		}
	}
	size_t len = strlen(p->cwd) + 1 + strlen(p->program) + 1;
	size_t n_argv = strv_length(p->argv), n_envp = strv_length(p->envp);
	for (size_t i = 0; i < n_argv; i++)
		len += strlen(p->argv[i]) + 1;
	for (size_t i = 0; i < n_envp; i++)
		len += strlen(p->envp[i]) + 1;
	_cleanup_free_ char *blob = xmalloc(len);
	char *w = blob;
	w = stpcpy(w, p->cwd) + 1;
	w = stpcpy(w, p->program) + 1;
	for (size_t i = 0; i < n_argv; i++)
		w = stpcpy(w, p->argv[i]) + 1;
	for (size_t i = 0; i < n_envp; i++)
		w = stpcpy(w, p->envp[i]) + 1;

	struct spec_header h = {
		.flags = (e->jail ? SPEC_JAIL : 0),
		.n_argv = (uint32_t)n_argv,
		.n_envp = (uint32_t)n_envp,
		.blob_len = (uint32_t)len,
	};
	int fds[2];
	size_t n_fds = 0;
	if (ruleset >= 0) {
		h.flags |= SPEC_RULESET;
		fds[n_fds++] = ruleset;
	}
	if (s->cgroup && s->cgroup->procs_fd >= 0 && !e->in_cgroup) {
		h.flags |= SPEC_CGROUP;
		fds[n_fds++] = s->cgroup->procs_fd;
	}
	int r = send_spec(e->sock, &h, fds, n_fds, blob);
	if (r < 0)
		*ret_error = NULL;	/* the process is gone: its error pipe says why */
	return r;
}

/* Reaps every child that has exited; *status takes the command's when it
 * is among them. */
static void reap_exited(pid_t pid, int *status)
{
	int st;
	pid_t w;
	while ((w = waitpid(-1, &st, WNOHANG)) > 0)
		if (w == pid)
			*status = st;
}

/* The namespace jail's init, pid 1 of its pid namespace: builds the jail,
 * confines itself, forks the command, reaps every process, forwards the
 * signals stockade sends it, and hands the command's status back. */
static _Noreturn void jail_init(const struct run_setup *s, const sigset_t *old_mask, bool own_pgrp,
				int err_fd, int sock, int go_fd)
{
	const struct policy *p = s->p;

	/* The jail dies with stockade: init first, the pid namespace with
	 * it. EOF on the go pipe means stockade is already gone. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		_exit(125);
	char go;
	if (read(go_fd, &go, 1) != 1)
		_exit(125);
	close(go_fd);

	if (p->net == NET_LOOPBACK) {
		int r = netns_loopback_up();
		if (r < 0)
			child_fail_step(err_fd, STAGE_NETLINK, r, "bring lo up", "lo", 125);
	}
	struct mount_failure mf;
	int r = mount_apply(s->mounts, p->run_dir, &mf);
	if (r < 0)
		child_fail_step(err_fd, STAGE_MOUNT, r, mf.step, mf.path, 125);
	if (chdir(p->cwd) < 0)
		child_fail(err_fd, STAGE_CHDIR, errno, p->cwd, 125);
	/* Not dumpable: /proc/1 of the jail (its exe, its memory) stays
	 * closed to the command (CVE-2019-5736). */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	confine(s, err_fd, sock);

	sigset_t mask;
	sigemptyset(&mask);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&mask, forwarded[i]);
	sigaddset(&mask, SIGCHLD);
	int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sig_fd < 0)
		child_fail(err_fd, STAGE_INIT, errno, "signalfd", 125);

	pid_t pid = fork();
	if (pid < 0)
		child_fail(err_fd, STAGE_INIT, errno, "fork", 125);
	if (pid == 0) {
		if (own_pgrp && setpgid(0, 0) < 0)
			child_fail(err_fd, STAGE_PGRP, errno, NULL, 125);
		sigprocmask(SIG_SETMASK, old_mask, NULL);
		exec_command(p, err_fd);
	}
	/* stockade sees EOF on the error pipe when the command has exec'd. */
	close(err_fd);

	int status = -1;
	while (status == -1) {
		struct signalfd_siginfo si;
		ssize_t n = read(sig_fd, &si, sizeof(si));
		if (n != sizeof(si))
			continue;
		int sig = (int)si.ssi_signo;
		if (sig == SIGCHLD) {
			reap_exited(pid, &status);
			continue;
		}
		/* The terminal already reached the command in this group. */
		if (!own_pgrp && si.ssi_code == SI_KERNEL)
			continue;
		kill(own_pgrp ? -pid : pid, sig);
	}
	/* Everything the command left, setsid or not: pid 1 sees the whole
	 * namespace. */
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	(void)!write(sock, &status, sizeof(status));
	_exit(0);
}

static void say_child_error(const struct child_error *e, const struct policy *p)
{
	const char *err = strerror(e->err);
	switch (e->stage) {
	case STAGE_MOUNT:
		log_error("cannot build the jail: %s '%s': %s", e->step, e->path, err);
		if (e->err == ELOOP)
			log_hint("a directory on that path turned into a symlink while the jail was set up");
		break;
	case STAGE_NETLINK:
		log_error("cannot bring up the jail's loopback: %s", err);
		break;
	case STAGE_INIT:
		log_error("the jail's init cannot %s: %s", e->path, err);
		break;
	case STAGE_PGRP:
		log_error("cannot give the command a process group of its own: %s", err);
		break;
	case STAGE_CGROUP:
		log_error("cannot move the command into the cgroup '%s': %s", e->path, err);
		break;
	case STAGE_CHDIR:
		log_error("cannot change to '%s': %s", e->path, err);
		break;
	case STAGE_CAPS:
		log_error("cannot drop capabilities: %s", err);
		break;
	case STAGE_NNP:
		log_error("cannot set no_new_privs: %s", err);
		break;
	case STAGE_LANDLOCK:
		if (e->path[0])
			log_error("cannot apply the Landlock rule on '%s': %s", e->path, err);
		else
			log_error("cannot enforce the Landlock ruleset: %s", err);
		if (e->err == ELOOP)
			log_hint("a directory on that path turned into a symlink while the jail was set up");
		break;
	case STAGE_SECCOMP:
		log_error("cannot load the seccomp filter: %s", err);
		break;
	case STAGE_HANDOVER:
		log_error("cannot hand the seccomp listener to stockade: %s", err);
		break;
	case STAGE_EXEC:
		log_error("cannot run '%s': %s", p->argv[0], err);
		if (e->err == EACCES)
			log_hint("the program, or the interpreter its first line names, lies outside what the jail may read; grant it with --read PATH");
		break;
	default:
		log_error("the command's setup failed: %s", err);
	}
}

/* The processes stockade, as subreaper, holds as children: the command
 * and whatever it left behind whose parent is gone. */
static size_t list_children(pid_t *out, size_t max)
{
	char path[64], buf[21];
	stpcpy(stpcpy(stpcpy(path, "/proc/self/task/"), fmt_u64(buf, (uint64_t)getpid())), "/children");
	_cleanup_free_ char *text = NULL;
	if (read_file_at(AT_FDCWD, path, 1 << 16, &text, NULL) < 0)
		return 0;
	size_t n = 0;
	for (char *p = text, *end; n < max; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		out[n++] = (pid_t)pid;
	}
	return n;
}

/* Kills everything the command left: the run's cgroup at once where there
 * is one, the command's process group, then each child in turn; a killed
 * process's children come to stockade as orphans, and go the same way. */
static void kill_leftovers(const struct run_setup *s, pid_t pgid)
{
	if (s->cgroup && s->cgroup->dir)
		(void)cgroup_kill(s->cgroup);
	if (pgid > 0)
		kill(-pgid, SIGKILL);
	for (;;) {
		pid_t pids[256];
		size_t n = list_children(pids, ARRAY_SIZE(pids));
		for (size_t i = 0; i < n; i++)
			kill(pids[i], SIGKILL);
		pid_t w = waitpid(-1, NULL, 0);
		if (w < 0 && errno == ECHILD)
			break;
	}
}


static void serve_listener(int listener, struct seccomp_notif *req, struct seccomp_notif_resp *resp,
			   const struct seccomp_plan *plan, struct supervisor *sv, struct report *rep,
			   bool *ret_broken)
{
	memset(req, 0, sizeof(*req));
	if (ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
		/* ENOENT: the caller was killed while waiting. */
		if (errno != ENOENT && errno != EINTR)
			*ret_broken = true;
		return;
	}
	if (sv && supervisor_handles(sv, req->data.nr)) {
		supervisor_handle(sv, req);
		return;
	}
	const struct sc_rule *rule = NULL;
	int err = seccomp_answer(plan, req->data.nr, (const uint64_t *)req->data.args, &rule);
	*resp = (struct seccomp_notif_resp){ .id = req->id, .error = -err };
	(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, resp);
	const char *name = rule ? rule->name : seccomp_syscall_name(req->data.nr);
	report_denial(rep, "syscall", name, strerrorname_np(err) ? strerrorname_np(err) : "?");
}

/* May the namespace jail's failure at this step send auto to the landlock
 * backend? Only when the host refused a capability: never for something
 * a path in the workspace could cause (ENOENT, ELOOP), so that nothing
 * in the workspace can push stockade onto the weaker backend. */
static bool host_refused(int stage, const char *step, int err)
{
	if (err != EPERM && err != EACCES && err != ENOSYS && err != EINVAL)
		return false;
	if (stage == STAGE_NETLINK)
		return true;
	if (stage != STAGE_MOUNT)
		return false;
	return !streq(step, "open") && !streq(step, "create the mount point") && !streq(step, "open the workspace");
}

/* /proc/PID/FILE, or /proc/self/FILE for pid 0. */
static int write_proc(pid_t pid, const char *file, const char *content)
{
	char path[64], buf[21];
	stpcpy(stpcpy(stpcpy(stpcpy(path, "/proc/"), pid ? fmt_u64(buf, (uint64_t)pid) : "self"), "/"), file);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return write_all(fd, content, strlen(content));
}

int run_map_ids(pid_t pid, uid_t uid, gid_t gid)
{
	int r = write_proc(pid, "setgroups", "deny");
	if (r < 0 && r != -ENOENT)
		return r;
	const struct {
		const char *file;
		unsigned id;
	} maps[] = { { "uid_map", uid }, { "gid_map", gid } };
	for (size_t i = 0; i < ARRAY_SIZE(maps); i++) {
		char line[64], buf[21];
		const char *id = fmt_u64(buf, maps[i].id);
		stpcpy(stpcpy(stpcpy(stpcpy(line, id), " "), id), " 1\n");
		if ((r = write_proc(pid, maps[i].file, line)) < 0)
			return r;
	}
	return 0;
}

static void set_fallback(struct report *rep, const char *fmt, const char *a, int err)
{
	free(rep->fallback);
	rep->fallback = xasprintf(fmt, a, strerrorname_np(err) ? strerrorname_np(err) : "?");
}

int run_command(const struct run_setup *s, struct report *rep)
{
	const struct policy *p = s->p;
	bool ns = s->backend == BACKEND_NAMESPACES;
	sigset_t mask, old_mask;
	sigemptyset(&mask);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&mask, forwarded[i]);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old_mask);
	_cleanup_close_ int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sig_fd < 0) {
		log_error("cannot create a signalfd: %m");
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		return 125;
	}

	int errp[2] = { -1, -1 }, sv[2] = { -1, -1 }, gop[2] = { -1, -1 };
	if (ns && (pipe2(errp, O_CLOEXEC) < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
		   pipe2(gop, O_CLOEXEC) < 0)) {
		log_error("cannot create the pipes to the command's process: %m");
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		return 125;
	}

	/* Orphans of the run come to stockade, which reaps and kills them;
	 * in the namespace jail, init does. */
	if (!ns && prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
		log_error("cannot become the run's subreaper: %m");
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		return 125;
	}
	bool own_pgrp = s->early ? s->early->own_pgrp : !on_foreground_terminal();
	pid_t parent = getpid();
	pid_t pid;
	int clone_err = 0;
	if (ns) {
		unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
				      CLONE_NEWCGROUP | (p->net == NET_ON ? 0 : CLONE_NEWNET);
		pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
		if (pid == 0) {
			close(errp[0]);
			close(sv[0]);
			close(gop[1]);
			jail_init(s, &old_mask, own_pgrp, errp[1], sv[1], gop[0]);
		}
		clone_err = errno;
		close(errp[1]);
		close(sv[1]);
		close(gop[0]);
	} else {
		/* The command's process already runs, under its filter,
		 * waiting for what only the policy says. */
		pid = s->early->pid;
		errp[0] = s->early->err_fd;
		sv[0] = s->early->sock;
	}
	_cleanup_close_ int err_fd = errp[0];
	_cleanup_close_ int sock = sv[0];
	_cleanup_close_ int go_fd = ns ? gop[1] : -1;
	if (!ns) {
		_cleanup_free_ char *err = NULL;
		if (start_early(s, s->early, &err) < 0 && err) {
			log_error("%s", err);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			sigprocmask(SIG_SETMASK, &old_mask, NULL);
			return 125;
		}
		/* A failure to send means the process is gone; its error
		 * pipe says why, below. */
	}
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		if (ns && (clone_err == EPERM || clone_err == EACCES || clone_err == ENOSYS || clone_err == EINVAL ||
			   clone_err == ENOSPC || clone_err == EUSERS)) {
			set_fallback(rep, "user namespaces refused: %s: %s", "clone", clone_err);
			if (s->may_fall_back)
				return RUN_FALLBACK;
			log_error("cannot build the namespace jail: %s", rep->fallback);
			log_hint("stockade doctor says what this host can enforce; --backend auto falls back to the landlock backend");
			return 125;
		}
		log_error("cannot %s: %s", ns ? "clone the jail's init" : "fork", strerror(clone_err));
		return 125;
	}

	if (ns) {
		int r = run_map_ids(pid, p->uid, p->gid);
		if (r < 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			sigprocmask(SIG_SETMASK, &old_mask, NULL);
			if ((r == -EPERM || r == -EACCES) && s->may_fall_back) {
				set_fallback(rep, "user namespaces refused: %s: %s", "writing the uid and gid maps", -r);
				return RUN_FALLBACK;
			}
			log_error("cannot write the jail's uid and gid maps: %s", strerror(-r));
			return 125;
		}
		if (write(go_fd, "g", 1) != 1) {
			log_error("cannot start the jail's init: %m");
			kill(pid, SIGKILL);
		}
		close(TAKE_FD(go_fd));
	}

	_cleanup_close_ int listener = -1;
	int status = -1, code = 0;
	bool setup_failed = false;
	if (s->jail && s->bpf) {
		int r = recv_fd(sock, &listener);
		if (r < 0)
			setup_failed = true;	/* the error pipe says why */
	}
	struct child_error ce;
	size_t got = 0;
	if (read_all(err_fd, &ce, sizeof(ce), &got) == 0 && got == sizeof(ce)) {
		setup_failed = true;
		if (ns && s->may_fall_back && host_refused(ce.stage, ce.step, ce.err)) {
			_cleanup_free_ char *what = xasprintf("%s '%s'", ce.stage == STAGE_NETLINK ? "netlink" : ce.step,
							      ce.path);
			set_fallback(rep, "the namespace jail was refused: %s: %s", what, ce.err);
			waitpid(pid, NULL, 0);
			sigprocmask(SIG_SETMASK, &old_mask, NULL);
			return RUN_FALLBACK;
		}
		say_child_error(&ce, p);
		code = ce.stage == STAGE_EXEC ? 126 : 125;
	} else if (setup_failed) {
		log_error("the command's process ended before it was confined");
		code = 125;
	}
	unsigned long long exec_us = now_usec();
	rep->setup_us = exec_us - s->start_us;

	/* Synchronous wake-ups (Linux 6.6): the command and stockade hand
	 * the CPU to each other directly, halving a notification's round
	 * trip. An older kernel just does without. */
	if (listener >= 0)
		(void)ioctl(listener, SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
	struct seccomp_notif notif_req;
	struct seccomp_notif_resp notif_resp;
	struct seccomp_notif *req = listener >= 0 ? &notif_req : NULL;
	struct seccomp_notif_resp *resp = &notif_resp;
	/* The connect supervisor: in the landlock backend, the only thing
	 * between the command and a socket it was not given. What it cannot
	 * open when a call comes (sock_diag), it refuses the call for. */
	struct supervisor *super = listener >= 0 && !ns && !setup_failed ? supervisor_new(p, listener, rep) : NULL;
	bool broken = false;
	/* The command's process may have ended before stockade blocked
	 * SIGCHLD (the landlock backend's starts ahead of the policy):
	 * look once before waiting for the signal. */
	reap_exited(pid, &status);
	while (status == -1) {
		struct pollfd fds[2 + 64] = {
			{ .fd = sig_fd, .events = POLLIN },
			{ .fd = listener, .events = POLLIN },
		};
		size_t n_pending = super ? supervisor_pollfds(super, fds + 2, 64) : 0;
		/* A pending connect to a full Unix backlog is tried again
		 * every 10 ms. */
		int n = poll(fds, 2 + n_pending, n_pending ? 10 : -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error("cannot wait for the command: %m");
			kill(pid, SIGKILL);
			code = 125;
			break;
		}
		if (listener < 0)
			fds[1].revents = 0;
		if (n_pending)
			supervisor_ready(super, fds + 2, n_pending);
		if (listener >= 0 && (fds[1].revents & POLLIN))
			serve_listener(listener, req, resp, s->seccomp, super, rep, &broken);
		if (listener >= 0 && (fds[1].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(fds[1].revents & POLLIN)) {
			/* Every filtered process is gone. */
			close(listener);
			listener = -1;
		}
		if (!(fds[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		while (read(sig_fd, &si, sizeof(si)) == sizeof(si)) {
			int sig = (int)si.ssi_signo;
			if (sig == SIGCHLD) {
				reap_exited(pid, &status);
				continue;
			}
			if (status != -1 || (pid_t)si.ssi_pid == parent)
				continue;
			/* A signal the terminal sent already reached the
			 * command in stockade's process group: once is
			 * enough. */
			if (!own_pgrp && si.ssi_code == SI_KERNEL)
				continue;
			/* The jail's init forwards it to the command. */
			kill(ns ? pid : own_pgrp ? -pid : pid, sig);
		}
	}

	if (ns) {
		/* init passed on the command's own status before it went. */
		int command_status;
		size_t n = 0;
		if (!setup_failed && read_all(sock, &command_status, sizeof(command_status), &n) == 0 &&
		    n == sizeof(command_status) && command_status != -1)
			status = command_status;
		/* Otherwise init itself was killed: its status stands. */
	} else {
		kill_leftovers(s, own_pgrp ? pid : 0);
	}
	rep->run_us = now_usec() - exec_us;
	if (super) {
		supervisor_drain(super);
		if (!supervisor_whole_run(super))
			broken = true;
		supervisor_free(super);
	}

	if (listener >= 0) {
		close(listener);
		listener = -1;
	}
	rep->supervisor = s->bpf && !broken && !setup_failed;
	sigprocmask(SIG_SETMASK, &old_mask, NULL);

	if (setup_failed || status == -1)
		return code ? code : 125;
	rep->exited = true;
	if (WIFSIGNALED(status)) {
		rep->signal = WTERMSIG(status);
		return 128 + WTERMSIG(status);
	}
	rep->exit_code = WEXITSTATUS(status);
	return WEXITSTATUS(status);
}
