/* A run's notifications: the supervisor's families (supervise/'s service)
 * and the run's own, built once per listener in the order they are asked:
 * what the landlock backend lets go on before its supervisor is made,
 * the shm watch, the namespace jail's rename and socket-file watches, and
 * last the filter's table, which answers every call no family took with
 * its errno and records it. */
#pragma once

#include "jail/plan.h"
#include "policy/report.h"
#include "seccomp/seccomp.h"
#include "supervise/supervise.h"

/* What the run watches (NULL: nothing yet, before the command's exec). */
struct watch {
	const struct policy *policy;
	const char *workspace;
	char **bound;		/* the trust hand-offs the namespace jail binds read-only */
	const char *run_dir;	/* the landlock backend's: its home and tmp, which may lie in /dev/shm */
};

/* The run's families over listener; n must stay where it is while it
 * serves (its families point into it). sv: the supervisor, or NULL. */
struct notify {
	struct notif_service svc;
	const struct seccomp_plan *plan;
	const struct watch *w;
	struct report *rep;
};

void notify_init(struct notify *n, int listener, const struct seccomp_plan *plan, struct supervisor *sv,
		 const struct watch *w, struct report *rep);

/* The hand-offs the mount plan binds read-only, which a rename is named
 * against. */
char **notify_bound_handoffs(const struct plan *pl, const struct policy *p);
