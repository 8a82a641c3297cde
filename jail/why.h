/* stockade why TARGET [-- COMMAND]: which rule governs an access for that
 * command, where the rule comes from, and how to change it. */
#pragma once

#include "policy/policy.h"

/* Prints the answer for target (a path, HOST:PORT or unix:PATH) under p
 * and its places; 0, or 125 when target cannot be read as any of them
 * (said). */
int why_verb(const struct policy *p, const char *target);

/* Inside a run (file: what STOCKADE_POLICY names): the same answer from
 * the run's own policy, as the jail carries it; 125 when it cannot be
 * read (said). */
int why_in_run(const char *file, const char *target);
