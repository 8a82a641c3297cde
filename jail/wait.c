#include "jail/wait.h"

#include <errno.h>
#include <poll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include "forward/forward.h"
#include "jail/allow.h"
#include "jail/holder.h"
#include "jail/notify.h"
#include "jail/terminal.h"
#include "lib/fd.h"
#include "lib/log.h"
#include "lib/util.h"
#include "netns/netns.h"
#include "supervise/supervise.h"

static const int forwarded[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

int signals_block(struct signals *s)
{
	sigset_t mask;
	sigemptyset(&mask);
	for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
		sigaddset(&mask, forwarded[i]);
	sigaddset(&mask, SIGCHLD);
	/* Continued after a stop (a background stockade that touched the
	 * terminal): the relay puts the terminal back in raw mode. */
	sigaddset(&mask, SIGCONT);
	sigprocmask(SIG_BLOCK, &mask, &s->old);
	s->fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->fd < 0) {
		int e = -errno;
		sigprocmask(SIG_SETMASK, &s->old, NULL);
		return e;
	}
	return 0;
}

void signals_restore(struct signals *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	sigprocmask(SIG_SETMASK, &s->old, NULL);
}

/* Reaps every child that has exited; *status takes pid's when it is among
 * them, and *stopped says whether pid has stopped. */
static void reap_exited(pid_t pid, int *status, bool *stopped)
{
	int st;
	pid_t w;
	while ((w = waitpid(-1, &st, WNOHANG | WUNTRACED)) > 0) {
		if (w != pid)
			continue;
		if (WIFSTOPPED(st))
			*stopped = true;
		else
			*status = st;
	}
}

void kill_and_reap(pid_t pid)
{
	kill(pid, SIGKILL);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

void reap_init(pid_t pid, bool now)
{
	if (!now) {
		keeper_let_go(pid, true);
		return;
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}



/* The command stopped (Ctrl-Z through its pty, to the session's own
 * group): stockade stops too, with the user's mode back, so that the
 * user's shell has its prompt as it would without stockade; continued
 * (fg), it continues the command. (Where stockade's group is orphaned,
 * as under a terminal with no job control, the kernel leaves it running
 * and the command goes on at once.) A session's zygote is stopped by no
 * Ctrl-Z (a command's own stop is the zygote's to report): a command of
 * the session sent it SIGSTOP, which would hold that exec and every later
 * one until the session ends; it goes on at once. */
static void suspend(struct process *pr)
{
	if (pr->holder) {
		kill(pr->pid, SIGCONT);
		return;
	}
	if (!pr->term || !pr->term->child.controlling || pr->term->master < 0)
		return;
	terminal_restore(pr->term);
	kill(getpid(), SIGTSTP);
	terminal_resume(pr->term);
	if (pr->via_init || kill(-pr->pid, SIGCONT) < 0)
		kill(pr->pid, SIGCONT);
}

/* A signal for the command: the jail's init forwards it to the command,
 * whose group may not be its own yet (before its setsid). */
static void pass_on(const struct process *pr, int sig)
{
	if (pr->via_init || !pr->own_pgrp || kill(-pr->pid, sig) < 0)
		kill(pr->pid, sig);
}

static void read_init_report(struct process *pr)
{
	int v;
	size_t n = 0;
	if (read_all(pr->init_sock, &v, sizeof(v), &n) < 0 || n != sizeof(v)) {
		pr->init_sock = -1;
		return;
	}
	if (v == INIT_REPORT_STOPPED) {
		suspend(pr);
		return;
	}
	pr->init_status = v;
	pr->init_sock = -1;
}

/* The way out that leads nowhere: each attempt recorded, in network
 * allow's words where the mode is allow. */
static void serve_outside(struct process *pr, struct report *rep)
{
	if (pr->allowing && pr->allowing->relay)
		(void)netns_outside_serve_with(pr->outside, pr->net_source, rep, allowing_outside_words, pr->allowing);
	else
		(void)netns_outside_serve(pr->outside, pr->net_source, rep);
}

/* The relay's descriptors, at most: its listeners and lookups, and two a
 * connection. */
#define RUN_RELAY_POLLFDS 1280

int wait_command(const struct signals *sg, struct process *pr, const struct seccomp_plan *sc, struct report *rep,
		 bool *broken)
{
	pid_t self = getpid();
	int status = -1;
	struct notify nt;
	notify_init(&nt, pr->listener, sc, pr->super, pr->watch, rep);
	/* The process may have ended before the signalfd saw SIGCHLD: look
	 * once before waiting for the signal. */
	bool stopped = false;
	reap_exited(pr->pid, &status, &stopped);
	/* The keeper's command is not stockade's child: its status comes on
	 * the keeper's socket, its leftovers already killed. The jail's init
	 * sends the command's once it has killed and reaped everything else
	 * of the jail: its own end (the jail's mounts let go) goes on beside
	 * stockade's, which reaps it later (reap_init). */
	while (status == -1 && !((pr->keeper || pr->via_init) && pr->init_status != -1)) {
		/* A session asked to stop, or idle: its zygote is killed, and
		 * the run ends as a run whose command was. */
		if (pr->holder && holder_done(pr->holder)) {
			kill(pr->pid, SIGKILL);
			pr->holder = NULL;
		}
		enum { FIXED_FDS = 6 };
		struct pollfd fds[FIXED_FDS + TERMINAL_POLLFDS + 64 + 320 + HOLDER_POLLFDS + RUN_RELAY_POLLFDS] = {
			{ .fd = sg->fd, .events = POLLIN },
			{ .fd = pr->listener, .events = POLLIN },
			{ .fd = pr->responder, .events = POLLIN },
			{ .fd = pr->init_sock, .events = POLLIN },
			{ .fd = pr->outside, .events = POLLIN },
			{ .fd = pr->refusals, .events = POLLIN },
		};
		size_t n_term = pr->term ? terminal_pollfds(pr->term, fds + FIXED_FDS) : 0;
		struct pollfd *sv_fds = fds + FIXED_FDS + n_term;
		size_t n_pending = pr->super ? supervisor_pollfds(pr->super, sv_fds, 64) : 0;
		size_t n_forward = pr->forward ? forward_pollfds(pr->forward, sv_fds + n_pending, 320) : 0;
		struct pollfd *hold_fds = sv_fds + n_pending + n_forward;
		size_t n_hold = pr->holder ? holder_pollfds(pr->holder, hold_fds, HOLDER_POLLFDS) : 0;
		struct relay *relay = pr->allowing ? pr->allowing->relay : NULL;
		struct pollfd *relay_fds = hold_fds + n_hold;
		size_t n_relay = relay ? relay_pollfds(relay, relay_fds, RUN_RELAY_POLLFDS) : 0;
		/* A pending connect to a full Unix backlog is tried again every
		 * 10 ms; a session's idle timeout comes when it comes; the
		 * relay's timers (its lookups' tries, its connections' wait for
		 * their first bytes) say theirs. */
		int timeout = n_pending ? 10 : -1, idle = pr->holder ? holder_timeout_ms(pr->holder) : -1;
		if (idle >= 0 && (timeout < 0 || idle < timeout))
			timeout = idle;
		int relay_timeout = relay ? relay_timeout_ms(relay) : -1;
		if (relay_timeout >= 0 && (timeout < 0 || relay_timeout < timeout))
			timeout = relay_timeout;
		int n = poll(fds, FIXED_FDS + n_term + n_pending + n_forward + n_hold + n_relay, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			log_error("cannot wait for the command: %m");
			kill(pr->pid, SIGKILL);
			return -1;
		}
		if (pr->listener < 0)
			fds[1].revents = 0;
		if (n_term)
			terminal_ready(pr->term, fds + FIXED_FDS, n_term);
		if (pr->term && terminal_hung_up(pr->term) && status == -1)
			pass_on(pr, SIGHUP);
		if (pr->init_sock >= 0 && fds[3].revents) {
			read_init_report(pr);
			if (pr->keeper && pr->init_sock < 0 && pr->init_status == -1) {
				/* Killed by someone: the command died with it (its
				 * death signal), what it left comes to stockade. */
				log_error("stockade's keeper ended before the command did: the run is killed");
				return -1;
			}
		}
		if (n_pending)
			supervisor_ready(pr->super, sv_fds, n_pending);
		if (n_forward)
			forward_ready(pr->forward, sv_fds + n_pending, n_forward);
		if (n_hold)
			holder_serve(pr->holder, hold_fds, n_hold);
		if (relay)
			relay_ready(relay, relay_fds, n_relay);
		if (pr->responder >= 0 && (fds[2].revents & POLLIN))
			(void)netns_responder_serve(pr->responder, pr->net_source, rep);
		if (pr->outside >= 0 && (fds[4].revents & POLLIN))
			serve_outside(pr, rep);
		if (pr->refusals >= 0 && (fds[5].revents & POLLIN))
			(void)netns_refusals_serve(pr->refusals, pr->net_source, rep, pr->allowing != NULL,
						   pr->watch ? pr->watch->policy : NULL);
		if (fds[1].revents & POLLIN)
			*broken |= notif_serve(&nt.svc) < 0;
		if ((fds[1].revents & (POLLHUP | POLLERR | POLLNVAL)) && !(fds[1].revents & POLLIN)) {
			/* Every filtered process is gone. */
			close(pr->listener);
			pr->listener = -1;
		}
		if (!(fds[0].revents & POLLIN))
			continue;
		struct signalfd_siginfo si;
		while (read(sg->fd, &si, sizeof(si)) == sizeof(si)) {
			int sig = (int)si.ssi_signo;
			if (sig == SIGCHLD) {
				reap_exited(pr->pid, &status, &stopped);
				if (stopped && status == -1)
					suspend(pr);
				stopped = false;
				continue;
			}
			if (sig == SIGCONT) {
				if (pr->term)
					terminal_resume(pr->term);
				continue;
			}
			if (status != -1 || (pid_t)si.ssi_pid == self)
				continue;
			/* The run's pty signals its own foreground group when its
			 * size changes. */
			if (sig == SIGWINCH && pr->term && terminal_wanted(pr->term)) {
				terminal_winch(pr->term);
				continue;
			}
			/* A signal the terminal sent already reached the command
			 * in stockade's process group: once is enough. */
			if (!pr->own_pgrp && si.ssi_code == SI_KERNEL)
				continue;
			pass_on(pr, sig);
		}
	}
	/* A datagram sent just before the end waits in the way out's queue
	 * unread (nothing waits for its answer): recorded still. */
	if (pr->outside >= 0)
		serve_outside(pr, rep);
	if (pr->refusals >= 0)
		(void)netns_refusals_serve(pr->refusals, pr->net_source, rep, pr->allowing != NULL,
						   pr->watch ? pr->watch->policy : NULL);
	return pr->keeper ? pr->init_status : status;
}
