/* stockade's own places: its state and caches (policy/own.c). */
#pragma once

#include "policy/build.h"
#include "policy/policy.h"

/* stockade's own build caches, one set per workspace. */
char *own_cache_dir(const struct policy *p, char *const *environ);
/* This run's state directory, as written (own_resolve_state makes it
 * real). */
char *own_state_dir(const struct policy *p, char *const *environ);
/* Every place a stockade of the user keeps its state: this run's first,
 * then the default one in each home, and the sessions' sockets in the
 * runtime directory (p->own_state). */
char **own_state_places(const struct policy *p, char *const *environ);
/* p->state_dir as it really is; a symlink on the way the jail could
 * change is refused (POLICY_STATE_LINK). */
int own_resolve_state(struct policy *p, struct policy_failure *f);
/* stockade's own binary and every state place out of what the run may
 * write (POLICY_SELF_WRITABLE, POLICY_STATE_WRITABLE). */
int own_check(struct policy *p, struct policy_failure *f);
/* Whether dir is or holds stockade's own binary or one of its state
 * places: a --write of it is refused (own_check). */
bool own_held_by(const struct policy *p, const char *dir);
