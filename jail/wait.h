/* The run's wait, from the command's start to its end: the signals
 * stockade forwards, read from a signalfd; the loop that serves the
 * listener, the responder, the way out, the relays, the pty and a
 * session's control socket until the command has ended; the reaping of
 * the jail's init and the command's process. Both backends' (run.c). */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "jail/keeper.h"
#include "policy/report.h"
#include "seccomp/seccomp.h"

struct supervisor;
struct forward;
struct allowing;
struct watch;
struct terminal;
struct holder;

/* The signals stockade forwards and SIGCHLD, blocked before any fork so
 * that none is lost, and read from a signalfd. */
struct signals {
	sigset_t old;
	int fd;
};

/* The command's process as stockade holds it while it runs. */
struct process {
	pid_t pid;		/* the jail's init, or the command itself */
	bool own_pgrp;		/* the command has a process group of its own */
	bool via_init;		/* signals go to init, which passes them on */
	int listener;		/* -1: none */
	int responder;		/* the namespace jail's name responder; -1: none */
	int outside;		/* its way out that leads nowhere (netns/outside.c); -1: none */
	int refusals;		/* the look-out on its loopback (netns/outside.c); -1: none */
	struct supervisor *super;
	struct forward *forward;	/* --publish, --connect; NULL: none */
	struct allowing *allowing;	/* network allow's relay; NULL or no relay: none */
	const char *net_source;		/* where the network mode comes from, for the responder's records */
	const struct watch *watch;	/* the namespace jail's */
	struct terminal *term;		/* the run's pty, relayed (NULL: none) */
	int init_sock;			/* the jail's init's reports, or the keeper's (-1: none) */
	int init_status;		/* the command's status init reported; -1: none yet */
	bool keeper;			/* the landlock backend: the keeper reports on init_sock */
	struct holder *holder;		/* a session's: its control socket served too (NULL: none) */
};

/* What the jail's init reports on its socket before the command's status:
 * the command stopped. */
#define INIT_REPORT_STOPPED (-2)
_Static_assert(INIT_REPORT_STOPPED == KEEPER_STOPPED, "the keeper reports as init does");

int signals_block(struct signals *s);
void signals_restore(struct signals *s);

/* Until the process exits: serves the listener and the supervisor's
 * connects in progress, forwards signals, reaps. The process's status,
 * or -1 when stockade could not wait. */
int wait_command(const struct signals *sg, struct process *pr, const struct seccomp_plan *sc, struct report *rep,
		 bool *broken);

/* A child of stockade's killed, and reaped. */
void kill_and_reap(pid_t pid);
/* The jail's init once it reported the command's status: everything
 * else of the jail is gone, and its own end (its mounts let go) goes on
 * beside stockade's. Waited for now where the run's groups are to be
 * removed (they are busy until it is gone), else at stockade's end. */
void reap_init(pid_t pid, bool now);
