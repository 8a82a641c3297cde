/* What a run could steer on the way to a path. The grants stockade derives
 * itself (the built-in defaults from PATH and the home, a settings file's
 * paths, the program a [command] section matches, the user's own settings
 * file) must not lead where an earlier run pointed them. A path is
 * resolved one name at a time (lib/fs.h, path_walk); a directory a name is
 * looked up in that lies in a tree the run may write is one where a run
 * could have put a symlink, or swapped a directory for another. Reads the
 * file system, writes nothing. */
#pragma once

#include <stdbool.h>

#include "policy/policy.h"

struct steer {
	char *target;	/* where the path leads now: canonical, a missing rest as written */
	bool missing;	/* the path, or a directory on the way, does not exist */
	char *dir;	/* the first directory on the way a run may write (a name is looked up there); NULL: none */
	char *tree;	/* the widest writable tree that holds dir, or else target; NULL: none */
	char *link;	/* the first symlink met in such a directory; NULL: none */
	bool inside;	/* target lies in a writable tree: it has that tree's rights */
	bool escapes;	/* it passed through a writable tree and leads out of it */
};

/* The trees the policy lets the run write: its write rules, devices
 * aside, each once (canonical, NULL-terminated). */
char **steer_trees(const struct policy *p);
/* The widest of trees that holds path, or NULL. */
const char *steer_tree_of(char *const *trees, const char *path);
/* Walks path (absolute) against trees (may be NULL). 0, or the walk's
 * -errno (nothing set then but zeroes). */
int steer_path(char *const *trees, const char *path, struct steer *ret);
void steer_free(struct steer *s);

/* Whether a run may decide what lies at the path: it passed through a
 * writable tree, or lies in one. */
static inline bool steer_steerable(const struct steer *s)
{
	return s->dir || s->inside;
}
