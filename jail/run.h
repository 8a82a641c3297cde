/* A run: the one order of operations of each backend, from a built policy
 * to the command's exit, each step a line of run.c. */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <sys/resource.h>

#include "guard/guard.h"
#include "jail/fit.h"
#include "jail/keeper.h"
#include "policy/policy.h"
#include "policy/report.h"

struct run {
	struct policy *p;	/* the places a backend plans become part of it */
	const struct host *h;
	char *const *environ;
	enum backend backend;	/* namespaces, landlock, or none (--mode off) */
	const char *why;	/* why that backend */
	bool may_fall_back;	/* auto: a refused namespace jail falls back to landlock */
	unsigned long long start_us;
	struct report *rep;
	/* explain: one screen (0), everything (-v, 1), or JSON (--json, 2) */
	int explain_detail;
	/* begun by the first backend that gets that far: the workspace's, and
	 * those of a git directory around it (run_guard_areas) */
	struct guard *guards[3];
	size_t n_guards;
	/* stockade's own limits when the guard began (jail/run-guard.c's
	 * own_limits), checked before it ends */
	struct rlimit own_limits[7];
	/* a session's: raised at its first command's check, and nothing
	 * of the jail's can lower them (see supervise/processes.c) */
	bool own_limits_raised;
	/* the landlock backend's, and the namespace jail's: ends the run
	 * should stockade die (pid 0 or -1: none) */
	struct keeper keeper;
	/* a session's holder: the command is its zygote (NULL: a run) */
	struct holder *holder;
	/* the settings files the policy was built from (a session's
	 * commands match their [command] sections); may be NULL */
	const struct run_config *rc;
	/* a session's: a check between its commands could not undo all
	 * (said then); the next command's status says so too */
	bool guard_failed_between;
};

/* What the guard keeps: the workspace, and for git from a subdirectory
 * the git directory around it (and a linked worktree's common one). */
#define RUN_GUARD_AREAS 3
/* What the guard is handed of hand-offs on disk: handoff/'s look for
 * them and git config vetting, one table for every area (and for the
 * tests' and tools/bench-guard's guards). */
extern const struct guard_knowledge run_guard_knowledge;
size_t run_guard_areas(const struct policy *p, char *const *writable, struct guard_options ret[RUN_GUARD_AREAS]);
/* The trees the policy lets the run write (canonical), for the guard. */
char **run_writable_trees(const struct policy *p);


/* The guard begun on every area (once: a later call does nothing), a run
 * killed before undone first; what failed is said. Run by run_command
 * where its backend needs it, or before, for the baseline's hand-offs. */
int run_begin_guard(struct run *r);

/* Runs the command on r->backend (falling back from the namespace jail to
 * the landlock backend where the host refuses it and r allows), ends the
 * guard once every process is gone, and returns the exit status stockade
 * ends with: the command's own, 128+N, or 122/125/126/127 (then a message
 * has been said). */
int run_command(struct run *r);

/* A session's, after each command: what the jail changed since the
 * guard began is undone (guard_check), the guards kept; -1 where the
 * undo failed, then or between commands (said). */
int run_recheck_guard(struct run *r);

/* A session's, its jail built: each guard watches the workspace from now
 * on (guard_watch); where one cannot, said once, its checks refresh the
 * whole index. */
void run_watch_guard(struct run *r);
/* The guards' watch descriptors, for the holder's poll (at most max). */
size_t run_guard_pollfds(const struct run *r, struct pollfd *fds, size_t max);
/* One of them has events, no command running: a hand-off changed by what
 * the session left running is undone at once (said in the session's log
 * and report). */
void run_guard_watched(struct run *r);

/* The guard ended, once every process of the run is gone: status is what
 * the run ends with, changed to EXIT_UNDO_FAILED where the undo failed. */
int run_end_guard(struct run *r, int status);
