/* Trust hand-offs: files inside the workspace that make something run
 * later, outside the jail. This is the one table of them (handoff_table,
 * printed by `stockade explain` and listed in stockade.1), with what a
 * policy needs of them, and the hand-offs as data: a set of them, where
 * a workspace's repositories are, what a look for them is asked, what
 * vetting a git config hands back, and the pure helpers over these.
 * What works on the disk (the look for them in a workspace, git's config
 * vetting) is handoff/'s; the guard (guard/) keeps them, and is handed
 * handoff/'s functions by its caller (struct guard_knowledge). */
#pragma once

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

enum handoff_kind {
	HANDOFF_TREE,	 /* the path and everything beneath it: any change is undone */
	HANDOFF_CONFIG,	 /* a git config: a change keeps only the inert settings */
	HANDOFF_HOOKS,	 /* a hooks directory: a tree, but for `*.sample` entries,
			  * which git never runs (git init writes them) */
	HANDOFF_POINTER, /* a `.git` file or symlink, or a `commondir`: kept while it
			  * names a place inside the workspace (then guarded as a git
			  * directory), set aside when it names one outside */
	HANDOFF_SEQUENCE, /* a rebase, cherry-pick or revert stopped midway
			   * (rebase-merge/, sequencer/): writable during the run
			   * (git rebase --continue in the jail), kept as the run
			   * left it unless it holds a command git would run at
			   * --continue (handoff_sequence_runs), then undone as
			   * a tree */
};

/* One row of the table: a name at the top of the workspace, or in every
 * git directory. */
enum handoff_place {
	HANDOFF_AT_TOP,
	HANDOFF_IN_GITDIR,
};

struct handoff_row {
	const char *name;
	enum handoff_kind kind;
	enum handoff_place place;
	const char *what;	/* who reads it, for explain and stockade.1 */
};

extern const struct handoff_row handoff_table[];
extern const size_t handoff_table_len;

const char *handoff_kind_name(enum handoff_kind k);

/* Whether git would run a file of this name in a hooks directory: every
 * name but a `*.sample`. */
bool handoff_hook_runs(const char *name);

/* Whether a todo list of git's sequencer (rebase-merge/git-rebase-todo,
 * sequencer/todo) holds a line git runs as a shell command at
 * --continue: "exec" or "x", as git's parse_insn_line reads them (blanks
 * before the command skipped, the command followed by a blank or the
 * line's end). */
bool handoff_todo_runs(const char *text, size_t n);

/* Whether a merge strategy's name is one of git's own (ort, recursive,
 * resolve, octopus, ours, subtree): any other name is run as the
 * program git-merge-NAME, one the run may have planted. */
bool handoff_strategy_builtin(const char *name);

/* What a `.git` file says ("gitdir: PATH"), as written; NULL when it is
 * not one. */
char *handoff_gitfile_target(const char *text, size_t n);

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

void handoffs_add(struct handoffs *h, char *path, enum handoff_kind kind);	/* takes path */
/* The entry on path, or NULL. */
const struct handoff *handoffs_find(const struct handoffs *h, const char *path);
/* Sorted, each path once (the strictest kind), none inside another. */
void handoffs_normalize(struct handoffs *h);
void handoffs_free(struct handoffs *h);

/* A relative path with no empty, "." or ".." component and no control
 * character: -EINVAL otherwise. */
int handoff_relpath_valid(const char *rel);
/* The same but for control characters, which a name a run made may hold
 * (the guard keeps a file of any name beneath a hand-off). */
int handoff_relpath_shape(const char *rel);

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

struct handoff_repos {
	struct handoff_repo *v;
	size_t n;
	char **unsearchable;	/* directories that could not be listed (NULL-terminated, may be NULL) */
};

void handoff_repos_add(struct handoff_repos *r, const char *worktree, unsigned char type);
void handoff_repos_free(struct handoff_repos *r);

/* What a look for a workspace's hand-offs is asked (handoff/handoff.h's
 * handoffs_discover and handoffs_list). */
struct dir_listing;

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
	/* The workspace's top directory as it is now, when the caller has
	 * just listed it; NULL: listed as needed. */
	const struct dir_listing *top;
};

/* Vetting a git config (handoff/gitconfig.h's gitconfig_vet): what it is
 * told of where a local repository lies, and what it hands back. */

/* Where a local repository may lie for a URL naming it to be inert: git
 * push runs receive-pack there, and so its hooks. local_ok(data, path)
 * says whether path (absolute, as written) lies outside everything the
 * run could write. NULL, or a NULL local_ok: no local URL is inert. */
struct gitconfig_where {
	bool (*local_ok)(void *data, const char *path);
	/* Whether core.worktree = value, in this config, is git's own for a
	 * submodule: the config is a submodule's git directory's
	 * (.git/modules/NAME), and the working tree it names lies in the
	 * workspace. Anywhere else a core.worktree the run set makes the
	 * user's git read and write the tree it names, outside the
	 * repository too. NULL: no core.worktree is inert. */
	bool (*worktree_ok)(void *data, const char *value);
	void *data;
};

struct gitconfig_vetted {
	bool keep;		/* `now` is inert against `base`: leave the file as it is */
	char *text;		/* otherwise the vetted content to write; NULL: remove
				 * the file (it is new and does not parse) */
	size_t n;
	/* The settings ("section.subsection.key") whose values now differ
	 * from base's, each once, and so were dropped or restored; when
	 * `now` does not parse, every setting read before its bad line.
	 * NULL-terminated, never NULL. */
	char **dropped;
	unsigned bad_line;	/* when `now` does not parse: its line; else 0 */
};

void gitconfig_vetted_free(struct gitconfig_vetted *v);
