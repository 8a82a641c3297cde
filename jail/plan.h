/* A backend's plan for one policy: its places, and each mechanism's
 * rendering of the policy (mounts, Landlock rules, the seccomp filter),
 * made without touching the system but to read it. What run.c applies,
 * what explain prints; and what the backend enforces and leaves out, as
 * each module says it. */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>

#include "jail/fit.h"
#include "jail/places.h"
#include "landlock/landlock.h"
#include "mount/mount.h"
#include "policy/policy.h"
#include "policy/report.h"
#include "seccomp/seccomp.h"

struct plan {
	enum backend backend;		/* namespaces, landlock, or none (--mode off) */
	struct places places;
	struct mount_plan mounts;	/* namespaces */
	struct landlock_plan landlock;	/* .abi 0: no Landlock layer */
	struct seccomp_plan seccomp;
	struct sock_fprog bpf;
	bool watch_every_hide;		/* a run with -v: every hide's opens named (plan_filter) */
};

/* What a plan step failed at, for the caller's message. */
enum plan_fault {
	PLAN_LANDLOCK,		/* err: reading a tree to enumerate */
	PLAN_SECCOMP,		/* err */
};

/* Each step, in the order the backend's run needs: the places first, the
 * filter (it depends only on the policy and the host), then the mounts
 * and the Landlock rules (after the guard has begun: what it undoes of a
 * killed run must not be in them). */
void plan_init(struct plan *pl, enum backend backend);
int plan_filter(struct plan *pl, const struct policy *p, const struct host *h);
void plan_mounts(struct plan *pl, const struct policy *p);
int plan_landlock(struct plan *pl, const struct policy *p, const struct host *h);
void plan_free(struct plan *pl);

/* Fills what a run on the plan's backend enforces and what it leaves
 * out, and why: the same lines explain prints and --mode required
 * refuses on. cgroup: the run has a cgroup of its own. */
void plan_describe(const struct plan *pl, const struct policy *p, const struct host *h, bool cgroup,
		   struct report *rep);
