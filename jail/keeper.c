/* The keeper (keeper.h): stockade's child that ends the run should
 * stockade die first. */
#include "jail/keeper.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail/terminal.h"
#include "lib/fd.h"
#include "lib/phase.h"
#include "lib/util.h"
#include "supervise/supervise.h"

/* The processes let go (keeper_let_go), for keeper_reap: waited for, but
 * keepers whose end waits for what they hold (keeper_hold) only reaped if
 * they are gone already. */
static struct let_go {
	pid_t pid;
	bool wait;
} *let_go;
static size_t n_let_go;

/* What stockade sends: the run ended whole. (The supervisor's records of
 * what it made in /tmp start with SUPERVISE_TMP_RECORD.) */
#define KEEPER_DONE 'D'
/* What stockade gives it to close at its end (keeper_hold), as
 * descriptors with the byte. */
#define KEEPER_HOLD 'H'

/* The processes this one, as subreaper, holds as children. */
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

void keeper_kill_children(const struct run_cgroup *cg, pid_t pgid)
{
	if (cg && cg->dir)
		(void)cgroup_kill(cg);
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

/* Every descriptor but 0 to 2 and those kept, closed: the keeper holds
 * nothing of stockade's (the guard's and the places' locks above all,
 * whose release tells a sweeper that the run is over). */
static void close_all_but(const int *keep, size_t n)
{
	int lo = 3;
	for (;;) {
		/* the lowest kept at or above lo */
		int next = -1;
		for (size_t i = 0; i < n; i++)
			if (keep[i] >= lo && (next < 0 || keep[i] < next))
				next = keep[i];
		if (next < 0) {
			syscall(SYS_close_range, (unsigned)lo, ~0U, 0);
			return;
		}
		if (next > lo)
			syscall(SYS_close_range, (unsigned)lo, (unsigned)next - 1, 0);
		lo = next + 1;
	}
}

struct made {
	char *name;
	dev_t dev;
	ino_t ino;
};

/* The command's status, once it has gone (its leftovers killed first):
 * sent to stockade, which ends with it. */
static void report_int(int sock, int v)
{
	(void)!send(sock, &v, sizeof(v), MSG_NOSIGNAL);
}

static _Noreturn void keeper_main(const struct keeper_duty *d, int sock)
{
	/* The command's process first, as stockade would have forked it (the
	 * signals stockade forwards are blocked still, and their dispositions
	 * are stockade's: an ignored one would be the command's too). The
	 * run's subreaper before its first process exists. */
	phase_mark("keeper:start");
	pid_t command = -1;
	/* The pty's session, led here (terminal.h); should it fail, the
	 * command's process says so as it makes its group the foreground. */
	if (d->ctty && setsid() >= 0)
		(void)terminal_lead(*d->ctty);
	if (d->start) {
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
		command = d->start(d->data);
		phase_mark("keeper:fork_command");
	}
	/* Only SIGKILL ends it: it has a duty once stockade is gone, and
	 * its lines may go to a terminal it no longer shares a session with,
	 * or to a pipe nobody reads. */
	static const int ignored[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH,
				       SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE, SIGCONT };
	for (size_t i = 0; i < ARRAY_SIZE(ignored); i++)
		signal(ignored[i], SIG_IGN);
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_SETMASK, &chld, NULL);
	int keep[16];
	size_t n_keep = 0;
#ifdef STOCKADE_PHASES
	keep[n_keep++] = PHASE_FD;
#endif
	keep[n_keep++] = sock;
	if (d->init_pidfd >= 0)
		keep[n_keep++] = d->init_pidfd;
	if (d->cg && d->cg->dir_fd >= 0)
		keep[n_keep++] = d->cg->dir_fd;
	for (size_t i = 0; i < d->n_keep && n_keep < ARRAY_SIZE(keep); i++)
		keep[n_keep++] = d->keep[i];
	close_all_but(keep, n_keep);
	/* Only now that it holds nothing of the command's (the error pipe
	 * above all, whose EOF tells stockade the command has exec'd, and
	 * until which stockade answers the listener without its supervisor)
	 * does stockade learn the command's pid, and let it go on. */
	if (d->start) {
		report_int(sock, command < 0 ? command : (int)command);
		if (command < 0)
			_exit(0);
	}
	/* Out of stockade's session and process group: a kill of the group,
	 * a Ctrl-C, a hangup of the terminal reach stockade, not this. Last:
	 * the session's new scheduling group (autogroup) may let the
	 * command's first moments run ahead of it, some 300 us on a small
	 * machine, which the end of the error pipe above must not wait for.
	 * Until then the signals above are ignored. */
	if (!d->ctty)
		(void)setsid();
	prctl(PR_SET_NAME, "stockade-keeper", 0, 0, 0);
	phase_mark("keeper:ready");
	int sigfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);

	struct made *made = NULL;
	size_t n_made = 0;
	int status = -1;
	bool gone = false;	/* stockade */
	while (!gone) {
		struct pollfd fds[2] = { { .fd = sock, .events = POLLIN }, { .fd = sigfd, .events = POLLIN } };
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			gone = true;	/* cannot watch: treated as stockade gone */
			break;
		}
		if (fds[1].revents & POLLIN) {
			struct signalfd_siginfo si;
			while (read(sigfd, &si, sizeof(si)) == sizeof(si))
				;
			int st;
			pid_t w;
			while (command > 0 && (w = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
				if (w != command)
					continue;
				if (WIFSTOPPED(st)) {
					report_int(sock, KEEPER_STOPPED);
					continue;
				}
				/* Everything the command left goes before its status:
				 * stockade ends once it has it. */
				status = st;
				keeper_kill_children(d->cg, d->command_pgrp ? command : 0);
				command = -1;
				report_int(sock, status);
			}
		}
		if (!fds[0].revents)
			continue;
		char buf[sizeof(struct supervise_tmp_record)] = { 0 };
		union {
			char buf[CMSG_SPACE(sizeof(int) * KEEPER_HOLD_MAX)];
			struct cmsghdr align;
		} u;
		struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
		ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		/* Descriptors: held to its end when given to hold, closed at
		 * once when they came with anything else. */
		struct cmsghdr *c = n > 0 ? CMSG_FIRSTHDR(&msg) : NULL;
		if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && buf[0] != KEEPER_HOLD) {
			int held[KEEPER_HOLD_MAX];
			size_t got = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			memcpy(held, CMSG_DATA(c), sizeof(int) * got);
			for (size_t i = 0; i < got; i++)
				close(held[i]);
		}
		if (n <= 0) {
			gone = true;
		} else if (buf[0] == KEEPER_HOLD) {
			continue;
		} else if (buf[0] == KEEPER_DONE) {
			/* stockade ended the run: the command is gone, unless
			 * stockade gave up before it ran (then it dies here). */
			if (command > 0)
				keeper_kill_children(d->cg, d->command_pgrp ? command : 0);
			_exit(0);
		} else if (buf[0] == SUPERVISE_TMP_RECORD && (size_t)n > offsetof(struct supervise_tmp_record, name)) {
			struct supervise_tmp_record rec;
			memcpy(&rec, buf, (size_t)n);
			((char *)&rec)[n < (ssize_t)sizeof(rec) ? n : (ssize_t)sizeof(rec) - 1] = '\0';
			made = xgrow(made, n_made, sizeof(*made));
			made[n_made++] = (struct made){ .name = xstrdup(rec.name), .dev = (dev_t)rec.dev,
							.ino = (ino_t)rec.ino };
		}
	}
	/* Stockade is gone, killed or crashed: every process of the run goes
	 * now. */
	if (command > 0)
		keeper_kill_children(d->cg, d->command_pgrp ? command : 0);
	if (d->init_pidfd >= 0) {
		/* The jail's init dies with stockade (its death signal); its
		 * pidfd is readable once it and, with it, every process of its
		 * pid namespace are gone. */
		(void)syscall(SYS_pidfd_send_signal, d->init_pidfd, SIGKILL, NULL, 0);
		struct pollfd pfd = { .fd = d->init_pidfd, .events = POLLIN };
		while (poll(&pfd, 1, 10000) < 0 && errno == EINTR)
			;
	}
	if (d->cg)
		cgroup_remove(d->cg);
	for (size_t i = 0; i < n_made; i++)
		(void)supervise_tmp_remove(made[i].name, made[i].dev, made[i].ino);
	d->finish(d->data, status);
	_exit(0);
}

int keeper_begin(struct keeper *k, const struct keeper_duty *d)
{
	*k = (struct keeper)KEEPER_INIT;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	pid_t pid = fork();
	if (pid < 0) {
		int e = -errno;
		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (pid == 0) {
		close(sv[0]);
		keeper_main(d, sv[1]);
	}
	close(sv[1]);
	k->pid = pid;
	k->sock = sv[0];
	k->settled = !d->start;
	return 0;
}

pid_t keeper_command(struct keeper *k)
{
	if (k->command)
		return k->command;
	int v;
	size_t n = 0;
	if (read_all(k->sock, &v, sizeof(v), &n) < 0 || n != sizeof(v))
		v = -EPIPE;
	k->command = v;
	return v;
}

int keeper_hold(struct keeper *k, const int *fds, size_t n)
{
	if (k->pid <= 0 || !n || n > KEEPER_HOLD_MAX)
		return -EINVAL;
	int r = fd_send_n(k->sock, KEEPER_HOLD, fds, n);
	if (r < 0)
		return r;
	k->slow_end = true;
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}

void keeper_let_go(pid_t pid, bool wait)
{
	let_go = xgrow(let_go, n_let_go, sizeof(*let_go));
	let_go[n_let_go++] = (struct let_go){ pid, wait };
}

void keeper_end(struct keeper *k)
{
	if (k->pid <= 0)
		return;
	char done = KEEPER_DONE;
	(void)send(k->sock, &done, 1, MSG_NOSIGNAL);
	close(k->sock);
	if (k->settled) {
		/* One whose end waits for what it holds (a packet socket's
		 * grace period) is reaped by keeper_reap if it is over by
		 * then, else by whatever adopts it, as any process whose
		 * parent ended first. */
		keeper_let_go(k->pid, !k->slow_end);
	} else {
		while (waitpid(k->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	*k = (struct keeper)KEEPER_INIT;
}

void keeper_reap(void)
{
	/* Those waited for first: the others have had longer by then. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < n_let_go; i++)
			if (let_go[i].wait == !pass)
				while (waitpid(let_go[i].pid, NULL, pass ? WNOHANG : 0) < 0 && errno == EINTR)
					;
	free(let_go);
	let_go = NULL;
	n_let_go = 0;
}
