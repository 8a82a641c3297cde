/* Builds a run's policy: the built-in defaults, then the command line,
 * every path resolved once. */
#pragma once

#include "jail/cli.h"
#include "policy/policy.h"

/* On failure returns -errno and a message naming what failed (the option,
 * the path) in *ret_error; the caller says it and exits 125. The policy
 * is the same for every backend but where the jail's home and tmp are:
 * fresh tmpfs at the real home and /tmp in the namespace jail, fresh
 * directories under p->run_dir otherwise. */
int policy_build(const struct options *o, char *const *environ, enum backend backend,
		 struct policy *p, char **ret_error);
/* Makes the fresh home look like one: links to the real ~/.gitconfig, the
 * toolchains and caches the policy lets the command read, so programs that
 * look under $HOME find them. */
int policy_populate_home(const struct policy *p, char **ret_error);
/* Removes what policy_build created for this run alone. */
void policy_remove_run_dir(const struct policy *p);
