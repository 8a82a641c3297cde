/* The built-in defaults: what a command gets with no configuration (see
 * stockade.1, DEFAULTS). The tables live in defaults.c, each entry with
 * why; these functions turn them into the first layer of a policy for one
 * user, host and command. They read the system (which paths exist, where
 * symlinks point, the caller's terminal) and change nothing. */
#pragma once

#include <sys/types.h>

#include "policy/policy.h"

/* Read: the system, devices, the caller's terminal, git configuration,
 * package caches by their known subdirectories, and the toolchains env's
 * PATH reaches (with their variables pointing at them; from says whose
 * PATH it is: "your environment's PATH"). env is what the person set: the
 * caller's environment and what trusted layers did to it. No grant is
 * derived through a tree the run may write (p->writable): one that would
 * have led out of it is in p->declined. */
void defaults_add_reads(struct policy *p, char *const *env, const char *from);
/* The program a command word names (found on env's PATH from p->cwd, as
 * execvp would), readable wherever it lies: a link to it (~/.cargo/bin/cargo
 * to rustup) may lead where the jail has nothing. Not where a run could
 * have steered the way to it. known, where not NULL, is where that search
 * has led already (the same word, PATH and directory). */
void defaults_add_program(struct policy *p, const char *word, char *const *env, const char *from, const char *known);
/* The part of them env's PATH decides, alone. */
void defaults_add_path_reads(struct policy *p, char *const *env, const char *from);
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

/* The home the password database gives uid (/etc/passwd read directly,
 * else getpwuid), canonical; NULL when it has none. Asked once in a
 * process: the state directory is found before the policy's build, and
 * both need it. */
const char *defaults_passwd_home(uid_t uid);
/* The value of a variable of the caller's environment when it is an
 * absolute path, else NULL. */
const char *defaults_user_var(char *const *environ, const char *name);
