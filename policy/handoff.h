/* Trust hand-offs: files inside the workspace that make something run
 * later, outside the jail. This is the one table of them (handoff_table,
 * printed by `stockade explain` and listed in stockade.1), with what a
 * policy needs of them; the look for them in a workspace is handoff/'s,
 * and the guard (guard/) keeps them. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum handoff_kind {
	HANDOFF_TREE,	 /* the path and everything beneath it: any change is undone */
	HANDOFF_CONFIG,	 /* a git config: a change keeps only the inert settings */
	HANDOFF_HOOKS,	 /* a hooks directory: a tree, but for `*.sample` entries,
			  * which git never runs (git init writes them) */
	HANDOFF_POINTER, /* a `.git` file or symlink, or a `commondir`: kept while it
			  * names a place inside the workspace (then guarded as a git
			  * directory), set aside when it names one outside */
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

/* What a `.git` file says ("gitdir: PATH"), as written; NULL when it is
 * not one. */
char *handoff_gitfile_target(const char *text, size_t n);
