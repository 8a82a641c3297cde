/* Building the policy from layers: the built-in defaults first, then each
 * source of settings in turn (a stockade.ini section, the command line),
 * later ones winning, every path resolved once. Reads the system and
 * changes nothing in it: no directory is made, no process started. What
 * fails is handed back as data; jail/ says it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy/env.h"
#include "policy/layer.h"
#include "policy/policy.h"

/* What stopped a policy from being built. */
enum policy_fault {
	POLICY_OK,
	POLICY_NO_HOME,			/* HOME unset and no home in the user database */
	POLICY_NO_CWD,			/* getcwd: err */
	POLICY_CWD_UNRESOLVED,		/* the current directory cannot be resolved: err */
	POLICY_PATH_CONTROL,		/* a path with a control character */
	POLICY_PATH_EMPTY,		/* an empty path */
	POLICY_PATH_MISSING,		/* a read or write target cannot be resolved: err */
	POLICY_WORKSPACE_UNUSABLE,	/* cannot be resolved: err */
	POLICY_WORKSPACE_NOT_DIR,
	POLICY_WORKSPACE_IS_ROOT,
	POLICY_WORKSPACE_HOLDS_HOME,	/* the home, or an ancestor of it */
	POLICY_HOME_UNUSABLE,		/* --home cannot be used: err (EPERM: not private) */
	POLICY_HOME_HOLDS_HOME,
	POLICY_HANDOFFS,		/* the workspace cannot be searched for hand-offs: err */
	POLICY_SELF_WRITABLE,		/* stockade's own binary would be writable from the jail */
	POLICY_RULE_STATE,		/* a read or write of stockade's own state, which no run sees */
	POLICY_STATE_WRITABLE,		/* stockade's state directory would be */
	POLICY_STATE_LINK,		/* it is reached through a symlink the jail could change (path: the link) */
	POLICY_RULE_OVERRULED,		/* a rule of the user's decided on its own path by another (other) */
	POLICY_RULE_HOLDS_WORKSPACE,	/* a hide at or above the workspace, which the run writes */
	POLICY_RULE_SPECIAL,		/* a rule beneath /proc or /dev, which the jail makes its own */
	POLICY_IGNORED,			/* hide-ignored: git could not be asked: err (ENOENT: no git) */
	POLICY_PATH_STEERED,		/* a settings file's path leads out of a tree the run may write,
					 * through via (a symlink, or a directory a run could swap), to other */
};

struct policy_failure {
	enum policy_fault fault;
	int err;		/* the errno that says why, where one does */
	char *path;		/* the path as written, or as found */
	struct source source;	/* the option or key that named it */
	enum access access;	/* POLICY_PATH_* and POLICY_RULE_*: the rule's */
	char *other;		/* POLICY_RULE_OVERRULED: the rule that decides the path, as explain says it;
				 * POLICY_PATH_STEERED: where the path leads now */
	enum access other_access;
	char *via;		/* POLICY_PATH_STEERED: the symlink, or the writable directory, on the way */
	char *tree;		/* POLICY_PATH_STEERED, POLICY_STATE_WRITABLE: the tree the run may write
				 * that it lies in, or that is on the way to it */
};

/* Sets *f (path and source copied) and returns -err, or -EINVAL for no
 * err: the policy build's one way to fail, for policy/'s own files. */
int policy_fail(struct policy_failure *f, enum policy_fault fault, int err, const char *path,
		const struct source *source);

/* argv is the command (may be empty: explain). On failure returns -errno,
 * with what failed in *ret; free it with policy_failure_free() in every
 * case. */
/* stockade's state directory alone, resolved as a run resolves it, for
 * the verbs that need nothing else (stockade quarantine). */
int policy_find_state_dir(char *const *environ, char **ret, struct policy_failure *f);

/* The trust hand-offs the guard found beneath base (relative paths,
 * existing or not), added as protect rules: read-only for the command
 * where a backend can hole a writable tree (the namespace jail's binds),
 * kept by the guard everywhere. The workspace's own layer, found rather
 * than given. */
void policy_add_handoffs(struct policy *p, const char *base, char *const *rel_paths);

/* What the build is given besides the layers: facts about the world
 * that only jail/ may find out (by running git), each asked only when
 * the layers call for it. facts may be NULL: none are known (a test's
 * build, asking for none). */
struct policy_facts {
	/* hide-ignored: the entries git ignores in workspace, as `git
	 * ls-files --others --ignored --exclude-standard --directory -z`
	 * lists them (*ret, *ret_len bytes, the callee's: it may keep one
	 * answer for the builds of one run). 0; 1: the workspace is no
	 * working tree git reads, nothing ignored; -errno: git could not be
	 * asked. */
	int (*ignored)(void *data, const char *workspace, const char *user_home, const char **ret, size_t *ret_len);
	void *data;
};

int policy_build(const struct layer *layers, size_t n_layers, char *const *argv, char *const *environ,
		 const struct policy_facts *facts, struct policy *p, struct policy_failure *ret);
void policy_failure_free(struct policy_failure *f);
