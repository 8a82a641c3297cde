/* The built-in defaults: what a command gets with no configuration (see
 * stockade.1, DEFAULTS). The tables live in defaults.c, each entry with
 * why; these functions turn them into the first layer of a policy for one
 * user, host and command. They read the system (which paths exist, where
 * symlinks point, the caller's terminal) and change nothing. */
#pragma once

#include <sys/types.h>

#include "policy/policy.h"

/* Read: the system, devices, the caller's terminal, git configuration,
 * package caches by their known subdirectories, and the toolchains the
 * environment's PATH reaches (with their variables pointing at them). */
void defaults_add_reads(struct policy *p, char *const *environ);
/* Hidden even inside anything granted: credentials in the home (and in
 * the user database's home, if another), symlinked ones at their targets
 * too; for root the system's secrets and root's home. */
void defaults_add_hides(struct policy *p);

/* stockade's own build caches, below its cache directory, and the
 * variables that point at them. */
struct own_cache {
	const char *var;
	const char *sub;
};
extern const struct own_cache defaults_own_caches[];
extern const size_t defaults_n_own_caches;
/* Points the variables at the caches, but for those the user decided. */
void defaults_point_caches(struct policy *p);

/* The home /etc/passwd gives uid, read directly; NULL when it has none. */
char *defaults_passwd_home(uid_t uid);
/* The value of a variable of the caller's environment when it is an
 * absolute path, else NULL. */
const char *defaults_user_var(char *const *environ, const char *name);
