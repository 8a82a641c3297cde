/* What a direnv .envrc names: the files it sources, the .env files it
 * loads, the directories it puts on PATH and its kin, the nix files it
 * has evaluated. Each is a hand-off too, as the .envrc itself: what the
 * jailed command writes there runs outside the jail when the user next
 * enters the directory. Found by reading the text as the shell would
 * split it (quotes, escapes, comments, `;`, `&&`, `|`, `if`/`then`, a
 * here-document's body skipped), never by running it; a name that only
 * the shell could work out (a `$`, a backtick, `$(...)`, a glob, a
 * brace) comes back unresolved, never left out. Pure: no system call but
 * memory, nothing printed. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

enum envrc_ref_kind {
	/* a file sourced: source and `.`, source_env (a directory there
	 * means its .envrc), source_env_if_exists, use vim (.vimrc.local,
	 * which direnv.vim sources) */
	ENVRC_SOURCE,
	/* dotenv, dotenv_if_exists: a .env file (a directory there means
	 * its .env) */
	ENVRC_DOTENV,
	/* a directory put on PATH or a variable like it: PATH_add,
	 * path_add, MANPATH_add, load_prefix (its bin, lib, include and
	 * man beneath it), layout (node_modules/.bin, vendor/bin, or the
	 * layout directory .direnv) */
	ENVRC_PATH_DIR,
	/* source_up, source_up_if_exists: the file of that name (.envrc by
	 * default) in the nearest parent directory that has one */
	ENVRC_PARENT,
	/* use nix (shell.nix, default.nix, or the .nix files named), use
	 * flake (flake.nix and flake.lock of the flake's directory): nix
	 * evaluates them */
	ENVRC_NIX,
};

struct envrc_ref {
	enum envrc_ref_kind kind;
	/* Resolved: the path with the shell's quotes and escapes removed,
	 * relative to the .envrc's directory unless absolute, $PWD or
	 * ${PWD} at its start taken as that directory. Unresolved: the
	 * word as it is written in the file. */
	char *path;
	bool resolved;
	bool home;		/* starts with ~ or ~user, left as written */
	unsigned line;		/* 1-based */
};

struct envrc_refs {
	struct envrc_ref *v;
	size_t n;
};

/* The references of an .envrc, in the order they are written. -EBADMSG,
 * with the line in *ret_bad_line (which may be NULL), for a NUL byte or
 * a quote, `$(`, `${` or backtick left open at the end of the file: the
 * shell refuses the command it is in, and nothing after it can be split
 * with any confidence. *ret is then empty. */
int envrc_refs(const char *text, size_t n, struct envrc_refs *ret, unsigned *ret_bad_line);
void envrc_refs_free(struct envrc_refs *r);

/* "source", "dotenv", "path", "parent", "nix". */
const char *envrc_ref_kind_name(enum envrc_ref_kind kind);
