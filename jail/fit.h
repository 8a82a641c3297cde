/* What this host can enforce, found by asking and by trying; and the
 * backend a run gets. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "policy/policy.h"

struct host {
	char kernel[200];
	bool probed;		/* everything below landlock was tried */
	int landlock_abi;	/* 0: none */
	int landlock_err;	/* why none, when probing failed otherwise */
	bool userns;
	const char *userns_step;	/* the step that failed */
	int userns_err;
	bool notify;
	bool notify_killable;
	/* Already under a seccomp filter (another jail, a sandbox, a
	 * container), and one of them holds a listener: no second one can be
	 * had (EBUSY), and the run's filter goes without. */
	int seccomp_filters;
	bool listener_busy;
	/* This network namespace has no interface but lo (an outer
	 * namespace jail's): probed only where the listener is busy. */
	bool netns_loopback_only;
	int notify_err;
	bool pidfd_getfd;
	int pidfd_getfd_err;
	bool cgroup;
	char *cgroup_dir;
	int cgroup_err;
	int yama;		/* ptrace_scope, -1 when Yama is absent */
	int legacy_tiocsti;	/* -1 unknown */
	/* AppArmor's restriction of unprivileged user namespaces (Ubuntu
	 * 23.10 and later): -1 absent, 0 off, 1 on; and whether the profile
	 * make install puts in place is loaded. */
	int apparmor_userns;
	bool apparmor_profile;
};

#define HOST_CHEAP 0		/* Landlock and Yama: what every run asks */
#define HOST_ALL 1		/* everything, by trying: doctor */

void host_probe(struct host *h, int what);
void host_free(struct host *h);

/* The backend auto picks on this host, and why the others are out. */
enum backend fit_auto(const struct host *h, const char **ret_why);
/* The backend a run starts with: none for --mode off, the one chosen, or
 * auto's. With auto, the namespace jail wherever the host might allow it
 * (whether it does is found by trying, and a refusal falls back). */
enum backend fit_choose(const struct policy *p, const struct host *h, const char **ret_why);

int doctor_print(const struct host *h, bool json, FILE *f);

/* Whether AppArmor refuses this binary user namespaces for want of its
 * profile: then the one line to say, else NULL. */
const char *fit_apparmor_hint(void);
