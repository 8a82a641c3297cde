/* Git's configuration files, read the way git reads them, and vetted
 * after a jailed run: a config the run wrote or changed keeps the
 * settings known to be inert (they cannot make git, or a tool reading the
 * config, run a program), and every other setting it changed goes back to
 * what it was. Pure: no system call but memory, nothing printed.
 *
 * The parser mirrors git's config.c (git_parse_source, get_base_var,
 * get_extended_base_var, get_value, parse_value) and refuses, as
 * -EBADMSG with the line, what git refuses and also what git versions
 * read differently or what stockade cannot be sure it reads as git does:
 * a NUL byte anywhere (git cuts the value there, or skips it in a
 * comment), a key before any section, a dotted section name with an
 * empty part ("[a..b]") or with a quoted subsection too ("[a.b "c"]"), a
 * control character in a subsection, an unquoted tab or lone CR inside a
 * value (git before 2.45 reads it as a space, later as itself), and a
 * backslash as the last byte of the file (a continuation into nothing,
 * which would swallow whatever is appended after it). Refusing is safe
 * both ways: a config the run wrote that is refused is undone whole.
 *
 * What vetting is told (struct gitconfig_where) and hands back (struct
 * gitconfig_vetted, gitconfig_vetted_free) are policy/handoff.h's: the
 * guard acts on them, and is handed gitconfig_vet by jail/. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy/handoff.h"

struct gitconfig_entry {
	char *section;		/* lowercased */
	char *subsection;	/* as written ("[a.b]" lowercases it); NULL when none */
	char *key;		/* lowercased */
	char *value;		/* NULL: a key alone (boolean true) */
	/* Removing text[start, end) removes this entry and nothing else,
	 * and leaves a file that parses: an entry on a line of its own takes
	 * the whole line with its newline (and its continuation lines); one
	 * on its header's line ("[core] bare = true") takes only the key up
	 * to the line end, so the header and the newline stay. */
	size_t start, end;
	unsigned line;		/* 1-based, of the key */
};

struct gitconfig {
	struct gitconfig_entry *v;
	size_t n;
};

/* The entries of a config text, in order. -EBADMSG, with the 1-based line
 * in *ret_bad_line (which may be NULL), when git would refuse it or
 * stockade cannot be sure how git reads it; *ret is then empty. */
int gitconfig_parse(const char *text, size_t n, struct gitconfig *ret, unsigned *ret_bad_line);
void gitconfig_free(struct gitconfig *c);

/* "section.subsection.key", or "section.key": how git names it. */
char *gitconfig_entry_name(const struct gitconfig_entry *e);

/* The last value of section.key without a subsection (core.hooksPath),
 * names compared without regard to case; NULL when there is none or the
 * last one is a key alone (git refuses that for a string). */
const char *gitconfig_get(const struct gitconfig *c, const char *section, const char *key);

/* The paths that include.path and includeIf.<condition>.path name, in
 * order, every includeIf whatever its condition (NULL-terminated, never
 * NULL). "[include "x"] path" is no include to git, and a key alone
 * names no path: neither is listed. */
char **gitconfig_includes(const struct gitconfig *c);

/* True when this setting, with this value, cannot make git, or a tool
 * reading the config, run a program (the table in gitconfig.c): most
 * keys are inert whatever their value, remote.*.url and pushurl only
 * for a URL of the network, or a local repository where w says the run
 * cannot make one, core.worktree only where w says it is git's own for
 * a submodule. subsection NULL: none; value NULL: a key alone. */
bool gitconfig_inert(const char *section, const char *subsection, const char *key, const char *value,
		     const struct gitconfig_where *w);

/* Vets `now`, a config as a run left it, against `base`, the same file
 * before the run (NULL when the file is new). Afterwards every setting
 * that is not inert has exactly the values, in order, that it had in
 * base, and every inert one what `now` gives it. Returns 0 (the outcome
 * is in *ret, to be freed with gitconfig_vetted_free) or -errno. */
int gitconfig_vet(const char *base, size_t base_n, const char *now, size_t now_n, const struct gitconfig_where *w,
		  struct gitconfig_vetted *ret);
