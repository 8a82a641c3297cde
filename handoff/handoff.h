/* Trust hand-offs: files inside the workspace that make something run
 * later, outside the jail. The look for them in a workspace as it is now,
 * by the one table of them (policy/handoff.h, with the hand-offs as data
 * and the pure helpers over them). Only jail/ includes this: the guard
 * (guard/) keeps them, handed these functions by jail/ (struct
 * guard_knowledge), and the namespace jail binds those that exist
 * read-only.
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

#include <stdbool.h>

#include "policy/handoff.h"

struct parent_cache;

/* Whether the directory opened at dfd (through no symlink) is a bare git
 * directory: a HEAD file, and objects/ and refs/ directories (what
 * struct bare_probe tells from a listing). */
bool handoff_dir_is_bare(int dfd);

/* Walks the whole workspace (opened for reading at wfd) for `.git`
 * entries and bare git directories, never following a symlink. */
int handoff_repos_walk(int wfd, struct handoff_repos *ret);

/* The hand-offs of the workspace opened (for reading) at wfd, sorted, each
 * once, none inside another. parents (on wfd) is the caller's, and keeps
 * what it opened for the caller's next pass. */
int handoffs_discover(const struct handoff_scan *s, int wfd, struct parent_cache *parents, struct handoffs *ret);

/* Lists the hand-offs of a workspace, relative to it, existing or not
 * (for `stockade explain` and for read-only binds), sorted so that a
 * directory comes before what lies in it. */
int handoffs_list(const struct handoff_scan *s, char ***ret_paths);

/* Whether the directory at rel (beneath wfd) is one git would take for a
 * git directory: a HEAD, and objects or a commondir. */
bool handoff_gitdir_plausible(int wfd, const char *rel);
