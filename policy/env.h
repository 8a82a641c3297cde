/* The command's environment: the caller's, less what carries credentials or
 * reaches agents, with what the layers set, and the jail's own locations
 * once a backend has chosen them. Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

enum env_op_kind {
	ENV_PASS,		/* --env NAME: keep the caller's value even if scrubbed */
	ENV_SET,		/* --env NAME=VALUE */
	ENV_UNSET,		/* --unset NAME */
};

struct env_op {
	enum env_op_kind kind;
	char *name;
	char *value;
	struct source source;
};

/* True when a variable of this name is taken away by default. */
bool env_is_secret(const char *name);

/* The value of name in a NULL-terminated environment, or NULL. */
const char *env_get(char *const *envp, const char *name);
/* Sets (value != NULL) or removes name, recording the change with why. */
void env_put(struct env *e, const char *name, const char *value, const char *why);
/* dst borrows src's strings: src must outlive it. */
void env_copy(struct env *dst, const struct env *src);
void env_free(struct env *e);

/* Starts an environment from the caller's (whose strings it borrows):
 * secrets removed, then the layers' operations applied in order. */
void env_begin(struct env *e, char *const *caller, const struct env_op *ops, size_t n_ops);

/* The environment another caller of the same policy gets (a session's
 * exec): its own variables, less secrets, with the policy's operations
 * (p->env_ops) and what the policy set by default in env (the toolchains'
 * homes, stockade's caches) set again. */
void env_again(struct env *e, char *const *caller, const struct policy *p);

/* Points HOME, TMPDIR and the XDG and TMP variables at the jail's home and
 * tmp, but for the names in decided (the user's own choice stands). */
void env_point_into_jail(struct env *e, const char *home, const char *tmpdir, const char *cwd,
			 char *const *decided);
