/* The keeper: a small process of stockade's that outlives it, so that a
 * run ends whole however stockade ends (SIGKILL by an agent's timeout or
 * a CI cancel, the OOM killer, a crash).
 *
 * It is stockade's child, in a session of its own: a kill of stockade's
 * process group (coreutils timeout sends one) or a hangup of its
 * terminal does not reach it, and a jailed process can neither signal it
 * (Landlock's signal scope; the pid namespace) nor name it in a call the
 * supervisor vets (it is no process of the run). It watches one socket
 * to stockade. When stockade says the run ended whole, it goes. When the
 * socket closes without that, stockade is gone: it kills every process
 * of the run, removes what the supervisor made in the host's /tmp, and
 * does what stockade had left of the run's end (its finish callback: the
 * places swept, the guard's undo, the report).
 *
 * On the landlock backend it is also the run's subreaper: it forks the
 * command's process, so that everything the command starts, setsid or
 * not, comes down from it; it reaps, reports the command's stops and
 * status to stockade as the namespace jail's init does (ints on the
 * socket: KEEPER_STOPPED, or the wait status), and kills what the
 * command left before it reports the status. In the namespace jail the
 * pid namespace holds the run already: the keeper holds a pidfd of the
 * jail's init, and kills it.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"

/* What the keeper reports before the command's status: it stopped. */
#define KEEPER_STOPPED (-2)

struct keeper {
	pid_t pid;		/* the keeper, stockade's child; -1: none */
	int sock;		/* stockade's end */
	pid_t command;		/* the landlock backend's command, once read; 0: not yet */
	/* It has nothing left to kill: no command of its own (the namespace
	 * jail), or it reported the command's status, its leftovers killed
	 * first. Its end is then not waited for (keeper_end). */
	bool settled;
	/* It holds descriptors whose last close is slow (keeper_hold). */
	bool slow_end;
};

#define KEEPER_INIT { .pid = -1, .sock = -1 }

struct keeper_duty {
	/* The landlock backend: forks the command's process, in the keeper,
	 * and returns its pid (-errno); NULL in the namespace jail. */
	pid_t (*start)(void *data);
	/* The command's process leads a process group of its own. */
	bool command_pgrp;
	const struct run_cgroup *cg;
	/* The landlock backend's pty (its slave), which the keeper makes its
	 * controlling terminal, in a session of its own, before it forks
	 * the command, which makes its group the foreground (terminal.h); -1:
	 * NULL: none. */
	const int *ctty;
	/* The namespace jail's init (a pidfd), or -1. */
	int init_pidfd;
	/* Descriptors it keeps beside its socket and 0 to 2 (the report's);
	 * every other one is closed, the guard's locks among them, so that
	 * stockade's death frees them. */
	const int *keep;
	size_t n_keep;
	/* In the keeper, stockade gone and every process of the run with it:
	 * the rest of the run's end. */
	void (*finish)(void *data, int command_status);
	void *data;
};

/* Forks the keeper (and, through d->start, the command's process in it).
 * 0, or -errno with nothing started. */
int keeper_begin(struct keeper *k, const struct keeper_duty *d);
/* The landlock backend's command: its pid as the keeper reports it, read
 * once (the keeper forks it while stockade goes on); -errno when the
 * keeper could not. */
pid_t keeper_command(struct keeper *k);
/* What the supervisor made in the host's /tmp, for the keeper to remove
 * should stockade die: the socket end it writes them to. */
static inline int keeper_record_fd(const struct keeper *k)
{
	return k->sock;
}
/* The landlock backend's command's status came from the keeper: what the
 * command left is gone already. */
static inline void keeper_settled(struct keeper *k)
{
	k->settled = true;
}
/* Descriptors whose last close waits (a packet socket's, for an RCU
 * grace period, some 10 ms): given to the keeper, which closes them as it
 * ends, and closed here. Stockade then does not wait for the keeper's
 * end; the keeper is the process that would otherwise be forked only to
 * close them. 0, or -errno with the descriptors still stockade's. */
#define KEEPER_HOLD_MAX 4
int keeper_hold(struct keeper *k, const int *fds, size_t n);
/* The run ended whole: the keeper goes. Stockade waits for it at once
 * only when it still has processes to kill (a run given up before the
 * command's status came); a settled keeper exits while stockade writes
 * the report and frees, and keeper_reap waits for it last. */
void keeper_end(struct keeper *k);
/* A child of stockade's whose end goes on beside stockade's own (a
 * settled keeper, the jail's init once it reported): reaped by
 * keeper_reap, at once or (wait false) only if it is gone by then. */
void keeper_let_go(pid_t pid, bool wait);
/* The keepers keeper_end let go, and every process keeper_let_go was
 * given, reaped: the last thing stockade does, so that no zombie of its
 * is left to whatever adopts it (an init that reaps late, an agent's
 * subreaper). */
void keeper_reap(void);

/* Kills every process this one, as subreaper, holds as a child or will,
 * and reaps them: the run's cgroup at once where there is one, the group
 * pgid (0: none), then each child in turn; a killed process's children
 * come here as orphans, and go the same way. The keeper's, and
 * stockade's where there is none (--mode off) or it died first. */
void keeper_kill_children(const struct run_cgroup *cg, pid_t pgid);
