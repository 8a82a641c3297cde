/* What explain prints of the policy itself, the same for every backend:
 * the head, the rules with their sources, the environment, and what is
 * enforced. In a file of its own because macOS builds it too. */
#pragma once

#include <stdio.h>

#include "policy/policy.h"
#include "policy/report.h"

void explain_print_head(FILE *f, const struct policy *p, enum backend backend, const char *why, const char *home,
			const char *tmpdir);
void explain_print_rules(FILE *f, const struct policy *p, const struct rule *places, size_t n_places);
void explain_print_env(FILE *f, const struct env *e);
void explain_print_report(FILE *f, const struct report *rep);
