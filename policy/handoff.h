/* Trust hand-offs: files inside the workspace that make something run
 * later, outside the jail. This is the table of them and the look for
 * them in a workspace as it is now; the guard (guard/) keeps them, and
 * the namespace jail binds those that exist read-only.
 *
 * The hand-offs: .git/hooks and .git/config of the workspace and of every
 * repository beneath it (a .git file, and the hooks and config of the
 * gitdir it names when that lies inside the workspace), core.hooksPath
 * from those configs and from ~/.gitconfig and ~/.config/git/config
 * (parsed here, never by running git; includes are not followed), and at
 * the top only stockade.ini, .stockade.ini, .claude, .vscode, .idea,
 * .cursor and .envrc. Each is opened beneath the workspace without
 * following a symlink: one that is a symlink is kept as the symlink, and
 * what it points at is kept too when that lies inside the workspace.
 * Nothing here writes anything. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct parent_cache;

enum handoff_kind {
	HANDOFF_TREE,	/* the path and everything beneath it */
	HANDOFF_GITDIR,	/* a git directory: itself, and of its entries only
			 * hooks and config (objects and refs change in
			 * every commit and run nothing) */
};

struct handoff {
	char *path;	/* relative to the workspace */
	enum handoff_kind kind;
};

struct handoffs {
	struct handoff *v;
	size_t n, cap;
	char **unguarded;	/* what could not be looked through (NULL-terminated, may be NULL) */
};

/* What a git directory keeps of its entries. */
#define HANDOFF_GITDIR_MEMBERS 2
extern const char *const handoff_gitdir_members[HANDOFF_GITDIR_MEMBERS];
/* The same as a vector of names, sorted (the caller frees it). */
char **handoff_gitdir_names(void);

struct handoff_scan {
	const char *workspace;	/* canonical absolute path */
	const char *user_home;	/* for ~/.gitconfig's core.hooksPath; may be NULL */
	char *const *extra;	/* more workspace-relative paths to keep; may be NULL */
	/* Set while undoing: only a config or a .git file the baseline holds
	 * (now put back) may name a hooksPath or a gitdir. A new one is about
	 * to be quarantined, and what it names (any folder with a `hooks`
	 * in it) must not be swept up as a new hand-off. */
	bool (*known)(void *data, const char *rel);
	void *known_data;
};

/* The hand-offs of the workspace opened (for reading) at wfd, sorted, each
 * once, none inside another. parents (on wfd) is the caller's, and keeps
 * what it opened for the caller's next pass. */
int handoffs_discover(const struct handoff_scan *s, int wfd, struct parent_cache *parents, struct handoffs *ret);

/* Lists the hand-offs of a workspace, relative to it, existing or not
 * (for `stockade explain` and for read-only binds), a git directory as
 * its members, sorted so that a directory comes before what lies in it. */
int handoffs_list(const struct handoff_scan *s, char ***ret_paths);

void handoffs_add(struct handoffs *h, char *path, enum handoff_kind kind);	/* takes path */
/* The entry on path (the tree, where both kinds share it), or NULL. */
const struct handoff *handoffs_find(const struct handoffs *h, const char *path);
/* Sorted, each path once, none inside another. */
void handoffs_normalize(struct handoffs *h);
void handoffs_free(struct handoffs *h);

/* A relative path with no empty, "." or ".." component and no control
 * character: -EINVAL otherwise. */
int handoff_relpath_valid(const char *rel);
