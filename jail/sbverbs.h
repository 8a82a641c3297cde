/* The seatbelt backend's verbs, on every system: explain prints its
 * profile anywhere; a run needs macOS (sandbox-exec). Built on Linux and
 * on macOS alike, so nothing here reaches a Linux mechanism. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "policy/policy.h"
#include "policy/report.h"

/* Prints the policy and its profile; 0, or 125 when a path cannot be
 * written in SBPL (said). */
int sbverb_explain(struct policy *p, char *const *environ, const char *why);
/* Runs the command under the profile on macOS; elsewhere says that it
 * needs macOS and returns 125. The exit status stockade ends with. */
int sbverb_run(struct policy *p, char *const *environ, struct report *rep);
/* stockade doctor on macOS: what sandbox-exec enforces there and what it
 * does not. */
int sbverb_doctor(bool json, FILE *f);
