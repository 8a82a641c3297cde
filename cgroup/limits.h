/* The run's limits (--max-procs, --memory), by the best mechanism this
 * host has: a cgroup's pids.max and memory.max (cgroup v2 where it is
 * delegated with those controllers, or v1's pids and memory hierarchies
 * where stockade may make a group in them, as root), else RLIMIT_NPROC:
 * in the namespace jail it counts the jail's own user namespace alone;
 * on the landlock backend it counts every process of the user, so the
 * run gets what the user has now plus --max-procs. Root is not held by
 * RLIMIT_NPROC at all. What no mechanism here bounds is named. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "policy/policy.h"
#include "policy/report.h"

struct run_limits {
	char *dirs[4];		/* the groups made for the run, to remove after it */
	size_t n_dirs;
	int procs[4];		/* where the command's process joins them, writing 0 (v1's tasks, v2's cgroup.procs) */
	size_t n_procs;
	char *pids_events;	/* where a refused fork is counted (pids.events) */
	char *memory_events;	/* and an OOM kill (memory.events, v2) */
	const char *procs_by;	/* the mechanism, or NULL: not bounded */
	const char *memory_by;
	unsigned long nproc;	/* RLIMIT_NPROC for the command's process; 0: none */
	bool nproc_plus_user;	/* plus the user's tasks, counted by the command's process */
	unsigned long max_procs;
	uint64_t memory;	/* bytes */
};

#define RUN_LIMITS_INIT { .procs = { -1, -1, -1, -1 } }

/* Makes what the limits need before the command's process exists.
 * run_cgroup: the landlock backend's cgroup of the run (NULL: none), which
 * bounds the run where the host gave it the controllers. Never fails: a
 * limit no mechanism can hold is left to limits_describe to name. */
void limits_setup(const struct policy *p, enum backend backend, const char *run_cgroup, struct run_limits *ret);
/* Tasks (threads included) whose owner is uid: what RLIMIT_NPROC counts
 * outside a user namespace of the run's own. Reads every process's
 * status: the landlock backend's process counts them itself, while
 * stockade makes the rest. */
unsigned long limits_user_tasks(uid_t uid);
/* A count of uid's tasks no lower than limits_user_tasks and at most
 * slack above it: where the host's tasks in all (/proc/loadavg, one
 * read) are no more than slack, that; else limits_user_tasks, one look
 * at every process of the host's. */
unsigned long limits_user_tasks_within(uid_t uid, unsigned long slack);
/* run_dir: where the landlock backend's home and tmp are (NULL: the
 * namespace jail's own tmpfs). */
void limits_describe(const struct run_limits *l, const struct policy *p, const char *run_dir, struct report *rep);
/* After the run: a limit it reached, said and recorded. */
void limits_after(const struct run_limits *l, const struct policy *p, struct report *rep);
void limits_release(struct run_limits *l);

/* What stockade doctor says of the limits this host can hold: lines, or
 * the members of a JSON object ("limits": {...},). */
void limits_doctor(FILE *f, bool json);
