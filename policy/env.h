/* The command's environment: the caller's, less what carries credentials or
 * reaches agents, with the jail's own locations set. Pure. */
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
};

/* True when a variable of this name is taken away by default. */
bool env_is_secret(const char *name);

/* The value of name in a NULL-terminated environment, or NULL. */
const char *env_get(char *const *envp, const char *name);
/* Sets (value != NULL) or removes name, recording the change with why. */
void env_put(struct policy *p, const char *name, const char *value, const char *why);

/* Starts the policy's environment from the caller's: secrets removed,
 * then the command line's --env and --unset applied. */
void env_begin(struct policy *p, char *const *caller, const struct env_op *ops, size_t n_ops);
/* True when the command line decided this variable (it then keeps what
 * the user said over the jail's own value). */
bool env_user_decided(const struct env_op *ops, size_t n_ops, const char *name);
