/* The process: fork the command, confine it in its own process, then
 * supervise: serve the seccomp listener, forward signals, reap, and kill
 * whatever the command leaves behind. */
#pragma once

#include <linux/filter.h>
#include <stdbool.h>

#include "jail/cgroup.h"
#include "policy/policy.h"
#include "policy/report.h"
#include "seccomp/seccomp.h"
#include "landlock/landlock.h"
#include "mount/mount.h"

struct early;

/* Starts the landlock backend's command process ahead of its policy: it
 * takes bpf (NULL: no jail, --mode off) and waits. */
int run_early_start(const struct sock_fprog *bpf, const struct run_cgroup *cg, struct early **ret);
void run_early_abort(struct early *e);
/* After run_command, which took its descriptors and its process. */
void run_early_release(struct early *e);

struct run_setup {
	const struct policy *p;
	enum backend backend;			/* namespaces or landlock (or none) */
	bool may_fall_back;			/* auto: a refused namespace jail falls back */
	const struct mount_plan *mounts;	/* namespaces */
	bool jail;				/* false: --mode off */
	const struct landlock_plan *landlock;	/* NULL: no Landlock layer */
	const struct sock_fprog *bpf;
	const struct seccomp_plan *seccomp;
	struct run_cgroup *cgroup;		/* dir NULL when none */
	struct early *early;			/* landlock and none: the process started ahead */
	unsigned long long start_us;
};

/* The namespace jail was refused by the host and auto may fall back to
 * the landlock backend; rep->fallback says why. Nothing of the command
 * ran. */
#define RUN_FALLBACK (-1)

/* Maps the caller's own ids, and nothing else, in the user namespace of
 * pid (0: the caller's own), setgroups denied so that no supplementary
 * group can be dropped to get past a group-deny ACL (CVE-2014-8989). The
 * jail's maps, and doctor's trial of them. */
int run_map_ids(pid_t pid, uid_t uid, gid_t gid);

/* Returns the exit status stockade ends with: the command's own, 128+N,
 * or 125/126/127 (then a message has been said), or RUN_FALLBACK. */
int run_command(const struct run_setup *s, struct report *rep);
