#include "jail/run.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>

#include "jail/caps.h"
#include "jail/log.h"
#include "jail/util.h"

/* What the command's process tells stockade when its setup fails, before
 * it exits 125 (or 126/127 when exec itself failed). */
enum stage {
	STAGE_NONE,
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
	char path[512];
};

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

static _Noreturn void child_fail(int fd, enum stage stage, int err, const char *path, int code)
{
	struct child_error e = { .stage = stage, .err = err < 0 ? -err : err };
	if (path)
		snprintf(e.path, sizeof(e.path), "%s", path);
	(void)!write(fd, &e, sizeof(e));
	_exit(code);
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

/* The command's process: confine, hand the listener over, exec. The
 * order matters: capabilities go before no_new_privs and Landlock (which
 * needs no_new_privs without CAP_SYS_ADMIN); the filter comes last so
 * that setting up never meets it; descriptors are closed at exec. */
static _Noreturn void child(const struct run_setup *s, const sigset_t *old_mask, pid_t parent,
			    bool own_pgrp, int err_fd, int sock)
{
	const struct policy *p = s->p;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
		_exit(125);
	/* stockade only blocked the signals it forwards; the command gets
	 * the caller's dispositions (a nohup's ignored SIGHUP) as it would
	 * without stockade. */
	sigprocmask(SIG_SETMASK, old_mask, NULL);

	if (own_pgrp && setpgid(0, 0) < 0)
		child_fail(err_fd, STAGE_PGRP, errno, NULL, 125);
	if (s->cgroup && s->cgroup->dir) {
		int r = cgroup_join(s->cgroup);
		if (r < 0)
			child_fail(err_fd, STAGE_CGROUP, r, s->cgroup->dir, 125);
	}
	if (chdir(p->cwd) < 0)
		child_fail(err_fd, STAGE_CHDIR, errno, p->cwd, 125);

	if (s->jail) {
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
			/* The listener never stays in the command: holding it,
			 * the command could answer its own refusals. */
			close(listener);
		}
	}
	close(sock);

	/* Only 0, 1 and 2 reach the command; the rest close at exec, the
	 * error pipe last of all. */
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	execve(p->program, p->argv, p->envp);
	int e = errno;
	/* The program was found before the fork: failing now means it
	 * cannot run (its interpreter or loader is missing, or outside what
	 * the jail may read), 126 as a shell says. */
	child_fail(err_fd, STAGE_EXEC, e, p->program, 126);
}

static void say_child_error(const struct child_error *e, const struct policy *p)
{
	const char *err = strerror(e->err);
	switch (e->stage) {
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
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	size_t n = 0;
	if (!f)
		return 0;
	int pid;
	while (n < max && fscanf(f, "%d", &pid) == 1)
		out[n++] = pid;
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

static void serve_listener(int listener, struct seccomp_notif *req, struct seccomp_notif_resp *resp,
			   const struct seccomp_plan *plan, struct report *rep, bool *ret_broken)
{
	memset(req, 0, sizeof(*req));
	int r = seccomp_notify_receive(listener, req);
	if (r < 0) {
		/* ENOENT: the caller was killed while waiting. */
		if (r != -ENOENT && r != -EINTR)
			*ret_broken = true;
		return;
	}
	const struct sc_rule *rule = NULL;
	int err = seccomp_answer(plan, req->data.nr, (const uint64_t *)req->data.args, &rule);
	*resp = (struct seccomp_notif_resp){ .id = req->id, .error = -err };
	(void)seccomp_notify_respond(listener, resp);
	const char *name = rule ? rule->name : seccomp_syscall_name(req->data.nr);
	report_denial(rep, "syscall", name, strerrorname_np(err) ? strerrorname_np(err) : "?");
}

int run_command(const struct run_setup *s, struct report *rep)
{
	const struct policy *p = s->p;
	sigset_t mask, old_mask;
	sigemptyset(&mask);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&mask, forwarded[i]);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &old_mask);
	_cleanup_close_ int sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sig_fd < 0) {
		log_error("cannot create a signalfd: %m");
		return 125;
	}

	int errp[2], sv[2];
	if (pipe2(errp, O_CLOEXEC) < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		log_error("cannot create the pipes to the command's process: %m");
		return 125;
	}

	/* Orphans of the run come to stockade, which reaps and kills them. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0) {
		log_error("cannot become the run's subreaper: %m");
		return 125;
	}
	bool own_pgrp = !on_foreground_terminal();
	pid_t parent = getpid();
	pid_t pid = fork();
	if (pid < 0) {
		log_error("cannot fork: %m");
		return 125;
	}
	if (pid == 0) {
		close(errp[0]);
		close(sv[0]);
		child(s, &old_mask, parent, own_pgrp, errp[1], sv[1]);
	}
	close(errp[1]);
	close(sv[1]);
	_cleanup_close_ int err_fd = errp[0];
	_cleanup_close_ int sock = sv[0];
	if (own_pgrp)
		(void)setpgid(pid, pid);

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
		say_child_error(&ce, p);
		setup_failed = true;
		code = ce.stage == STAGE_EXEC ? 126 : 125;
	} else if (setup_failed) {
		log_error("the command's process ended before it was confined");
		code = 125;
	}
	unsigned long long exec_us = now_usec();
	rep->setup_us = exec_us - s->start_us;

	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	if (listener >= 0 && seccomp_notify_alloc(&req, &resp) < 0) {
		log_error("cannot allocate seccomp notification buffers");
		kill(pid, SIGKILL);
		setup_failed = true;
		code = 125;
	}
	bool broken = false;
	bool done = false;
	while (!done) {
		struct pollfd fds[2] = {
			{ .fd = sig_fd, .events = POLLIN },
			{ .fd = listener, .events = POLLIN },
		};
		int n = poll(fds, listener >= 0 ? 2 : 1, -1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error("cannot wait for the command: %m");
			kill(pid, SIGKILL);
			code = 125;
			break;
		}
		if (listener >= 0 && (fds[1].revents & POLLIN))
			serve_listener(listener, req, resp, s->seccomp, rep, &broken);
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
				int st;
				pid_t w;
				while ((w = waitpid(-1, &st, WNOHANG)) > 0)
					if (w == pid)
						status = st;
				if (status != -1)
					done = true;
				continue;
			}
			if (status != -1 || (pid_t)si.ssi_pid == parent)
				continue;
			/* A signal the terminal sent already reached the
			 * command in stockade's process group: once is
			 * enough. */
			if (!own_pgrp && si.ssi_code == SI_KERNEL)
				continue;
			kill(own_pgrp ? -pid : pid, sig);
		}
	}

	kill_leftovers(s, own_pgrp ? pid : 0);
	rep->run_us = now_usec() - exec_us;
	if (req)
		seccomp_notify_free(req, resp);
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
