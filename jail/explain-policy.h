/* What explain prints of the policy itself, the same for every backend:
 * the head, the rules with their sources, the environment, and what is
 * enforced. In a file of its own because macOS builds it too. */
#pragma once

#include <stdio.h>

#include "policy/policy.h"
#include "policy/report.h"

void explain_print_head(FILE *f, const struct policy *p, enum backend backend, const char *why, const char *home,
			const char *tmpdir);
void explain_print_rules(FILE *f, const struct policy *p);
void explain_print_env(FILE *f, const struct env *e);
void explain_print_report(FILE *f, const struct report *rep);
/* The rules in one screen: one line per kind of rule (its access and
 * where it comes from), a few of its paths, and how many more. */
void explain_print_rules_summary(FILE *f, const struct policy *p);
/* The policy as JSON members (no braces): the head, every rule with its
 * source, the backend's places, the environment's changes, what is
 * enforced and not. */
void explain_json_policy(FILE *f, const struct policy *p, enum backend backend, const char *why, const char *home,
			 const char *tmpdir, const struct env *env, const struct report *rep);
