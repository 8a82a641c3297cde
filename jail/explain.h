/* stockade explain: the policy, and how a backend renders it, printed
 * from the plans the modules made; nothing is made, nothing run. */
#pragma once

#include <stdio.h>

#include "jail/plan.h"
#include "jail/run.h"

/* Plans r's backend for r->p and prints it on stdout; 0, or 125 when a plan
 * cannot be made (said). */
int explain(struct run *r);

/* Prints a plan made for p, with what it enforces (rep, from
 * plan_describe). */
void explain_print(FILE *f, const struct policy *p, const struct plan *pl, const char *why, const struct report *rep);
/* The same in one screen, and as one JSON object. */
void explain_summary(FILE *f, const struct policy *p, const struct plan *pl, const char *why, const struct report *rep);
void explain_json(FILE *f, const struct policy *p, const struct plan *pl, const char *why, const struct report *rep);
