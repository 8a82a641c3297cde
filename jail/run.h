/* A run: the one order of operations of each backend, from a built policy
 * to the command's exit, each step a line of run.c. */
#pragma once

#include <stdbool.h>

#include "guard/guard.h"
#include "jail/fit.h"
#include "policy/policy.h"
#include "policy/report.h"

struct run {
	const struct policy *p;
	const struct host *h;
	char *const *environ;
	enum backend backend;	/* namespaces, landlock, or none (--mode off) */
	const char *why;	/* why that backend */
	bool may_fall_back;	/* auto: a refused namespace jail falls back to landlock */
	unsigned long long start_us;
	struct report *rep;
	struct guard *guard;	/* begun by the first backend that gets that far */
};

/* Runs the command on r->backend (falling back from the namespace jail to
 * the landlock backend where the host refuses it and r allows), ends the
 * guard once every process is gone, and returns the exit status stockade
 * ends with: the command's own, 128+N, or 125/126/127 (then a message has
 * been said). */
int run_command(struct run *r);
