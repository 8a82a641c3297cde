/* The process: fork the command, confine it in its own process, then
 * supervise: serve the seccomp listener, forward signals, reap, and kill
 * whatever the command leaves behind. */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>

#include "jail/cgroup.h"
#include "jail/policy.h"
#include "jail/report.h"
#include "jail/seccomp.h"
#include "landlock/landlock.h"

struct run_setup {
	const struct policy *p;
	bool jail;				/* false: --mode off */
	const struct landlock_plan *landlock;	/* NULL: no Landlock layer */
	const struct sock_fprog *bpf;
	const struct seccomp_plan *seccomp;
	struct run_cgroup *cgroup;		/* dir NULL when none */
	unsigned long long start_us;
};

/* Returns the exit status stockade ends with: the command's own, 128+N,
 * or 125/126/127 (then a message has been said). */
int run_command(const struct run_setup *s, struct report *rep);
