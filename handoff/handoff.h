/* Trust hand-offs: files inside the workspace that make something run
 * later, outside the jail. The look for them in a workspace as it is now,
 * by the one table of them (policy/handoff.h); the guard (guard/) keeps them, and the
 * namespace jail binds those that exist read-only.
 *
 * Git's, in every git directory of the workspace: a `.git` directory; the
 * gitdir a `.git` file or symlink names and the common directory a
 * `commondir` file names, when they lie inside the workspace; a linked
 * worktree's `worktrees/NAME`; a submodule's `modules/NAME`. Of each: the
 * config and config.worktree (a change keeps only inert settings, see
 * handoff/gitconfig.h), the hooks directory, info/attributes, commondir,
 * and the `.git` file itself. Also the core.hooksPath directory those
 * configs and ~/.gitconfig name, and the files an include names inside
 * the workspace (read here, never by running git). At the top: stockade's
 * own configuration, editor and agent settings, and `.envrc` with the
 * files it sources, loads or puts on a PATH (handoff/envrc.h).
 *
 * Each is opened beneath the workspace without following a symlink: one
 * that is a symlink is kept as the symlink, and what it points at is kept
 * too when that lies inside the workspace. Nothing here writes anything. */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "policy/handoff.h"

struct parent_cache;

/* The deepest a walk of the workspace goes (the repositories', the
 * guard's): every level holds a descriptor, well below RLIMIT_NOFILE. */
#define WALK_DEPTH_MAX 256


struct handoff {
	char *path;	/* relative to the workspace */
	enum handoff_kind kind;
};

struct handoffs {
	struct handoff *v;
	size_t n, cap;
	char **unguarded;	/* what could not be looked through (NULL-terminated, may be NULL) */
};

/* Where git repositories are in the workspace: each `.git` entry, by the
 * working tree that holds it. Finding them is the one part of discovery
 * that grows with the workspace; the guard keeps them in an index and
 * hands them in, so that a repeat run does not walk the tree. */
struct handoff_repo {
	char *worktree;		/* relative to the workspace ("" at the top) */
	unsigned char type;	/* the `.git` entry's: DT_DIR, DT_REG, DT_LNK, ...; or HANDOFF_REPO_BARE */
};

/* The type of a repository whose directory is itself a bare git
 * directory (no `.git` in it; its HEAD, objects/ and refs/): git runs its
 * hooks, and reads its config, when something is pushed to it. Not a
 * d_type. */
#define HANDOFF_REPO_BARE 0x80
/* Other version control systems' repositories, whose own config runs
 * programs at their commands outside: Mercurial's (a `.hg` directory:
 * .hg/hgrc's and .hg/hgrc-not-shared's [hooks] and [extensions], and a
 * share's sharedpath with the source's hgrc) and Jujutsu's (a `.jj` directory:
 * .jj/repo/config.toml's tools, pager and editor; a second workspace's
 * .jj/repo file with the config of the repo it names). Not d_types. */
#define HANDOFF_REPO_HG 0x40
#define HANDOFF_REPO_JJ 0x20
/* What a directory entry's name makes of its directory: HANDOFF_REPO_HG,
 * HANDOFF_REPO_JJ, or 0. */
static inline unsigned char handoff_vcs_dir(const char *name, unsigned char d_type)
{
	if (d_type != DT_DIR)
		return 0;
	return strcmp(name, ".hg") == 0 ? HANDOFF_REPO_HG : strcmp(name, ".jj") == 0 ? HANDOFF_REPO_JJ : 0;
}

/* What a directory's listing says of it being a bare git directory: a
 * HEAD file, and objects/ and refs/ directories. */
struct bare_probe {
	bool head, objects, refs;
};

static inline void bare_probe_see(struct bare_probe *b, const char *name, unsigned char d_type)
{
	if (d_type == DT_REG && strcmp(name, "HEAD") == 0)
		b->head = true;
	else if (d_type == DT_DIR && strcmp(name, "objects") == 0)
		b->objects = true;
	else if (d_type == DT_DIR && strcmp(name, "refs") == 0)
		b->refs = true;
}

static inline bool bare_probe_is(const struct bare_probe *b)
{
	return b->head && b->objects && b->refs;
}

/* The same, of a directory opened at dfd (through no symlink). */
bool handoff_dir_is_bare(int dfd);

struct handoff_repos {
	struct handoff_repo *v;
	size_t n;
	char **unsearchable;	/* directories that could not be listed (NULL-terminated, may be NULL) */
};

/* Walks the whole workspace (opened for reading at wfd) for `.git`
 * entries and bare git directories, never following a symlink. */
int handoff_repos_walk(int wfd, struct handoff_repos *ret);
void handoff_repos_add(struct handoff_repos *r, const char *worktree, unsigned char type);
void handoff_repos_free(struct handoff_repos *r);

struct handoff_scan {
	const char *workspace;	/* canonical absolute path */
	const char *user_home;	/* for ~/.gitconfig's core.hooksPath and ~ in includes; may be NULL */
	char *const *extra;	/* more workspace-relative paths to keep; may be NULL */
	const struct handoff_repos *repos;	/* where the repositories are; NULL: walk for them */
	/* The workspace is a git directory, outside the run's workspace
	 * (git from a subdirectory): only its own rows of the table. */
	bool gitdir_only;
	/* Set while undoing: only a config or an .envrc the baseline holds
	 * (now put back) may name a hooks directory, an include or a file
	 * to source. A new one is about to be set aside or vetted, and what
	 * it names must not be swept up as a new hand-off. */
	bool (*known)(void *data, const char *rel);
	void *known_data;
};

/* The hand-offs of the workspace opened (for reading) at wfd, sorted, each
 * once, none inside another. parents (on wfd) is the caller's, and keeps
 * what it opened for the caller's next pass. */
int handoffs_discover(const struct handoff_scan *s, int wfd, struct parent_cache *parents, struct handoffs *ret);

/* Lists the hand-offs of a workspace, relative to it, existing or not
 * (for `stockade explain` and for read-only binds), sorted so that a
 * directory comes before what lies in it. */
int handoffs_list(const struct handoff_scan *s, char ***ret_paths);

void handoffs_add(struct handoffs *h, char *path, enum handoff_kind kind);	/* takes path */
/* The entry on path, or NULL. */
const struct handoff *handoffs_find(const struct handoffs *h, const char *path);
/* Sorted, each path once (the strictest kind), none inside another. */
void handoffs_normalize(struct handoffs *h);
void handoffs_free(struct handoffs *h);

/* Whether the directory at rel (beneath wfd) is one git would take for a
 * git directory: a HEAD, and objects or a commondir. */
bool handoff_gitdir_plausible(int wfd, const char *rel);

/* A relative path with no empty, "." or ".." component and no control
 * character: -EINVAL otherwise. */
int handoff_relpath_valid(const char *rel);
/* The same but for control characters, which a name a run made may hold
 * (the guard keeps a file of any name beneath a hand-off). */
int handoff_relpath_shape(const char *rel);
