/* The lines a run owes where it would otherwise be silent (owed.c). */
#pragma once

#include <linux/seccomp.h>

#include "jail/plan.h"
#include "policy/policy.h"
#include "policy/report.h"
#include "supervise/supervise.h"

/* The namespace jail's listener: a connect the filter shows it (every one
 * but an inet connect) to a socket file the jail does not have, where the
 * host has one, is named with --connect unix:PATH (it goes on as made:
 * the caller lets it). */
void owed_watch_connect(const struct seccomp_notif *req, const struct policy *p, struct report *rep);
/* Once every process of the run is gone: what it wrote in its fresh home
 * and /tmp (the namespace jail's one tmpfs, shared: -1 none), or its home,
 * TMPDIR and what the supervisor made in the host's /tmp (the landlock
 * backend), counted, said once for the same places and reported, with
 * the option that keeps them. */
void owed_count_shared(const struct policy *p, struct report *rep, const struct plan *pl, int shared);
void owed_count_run_dir(const struct policy *p, struct report *rep, const struct plan *pl, struct supervisor *sv);
