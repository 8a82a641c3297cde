/* stockade.ini: read with inih into sections of keys that each remember
 * their line, checked whole before anything is used (an unknown section,
 * key or value, a duplicate, a line inih cannot parse, bytes that are not
 * UTF-8 are errors naming file, line, key and what is allowed); then the
 * sections a run takes turned into layers of the policy (policy/build.h):
 * [sandbox], the [profile NAME] asked for, the [command "WORDS"] sections
 * that match the command. And trust, as direnv's allow: a file's exact
 * contents, at its path, recorded by hash in the user's state directory.
 *
 * Reads files and the trust records; writes only the trust records, and
 * only in conf_trust_record and conf_trust_revoke. Never prints. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy/build.h"
#include "policy/policy.h"

/* Where a file came from, which says whether it needs trusting. */
enum conf_origin {
	CONF_USER,		/* ~/.config/stockade/stockade.ini: the user's own */
	CONF_WORKSPACE,		/* the workspace's stockade.ini or .stockade.ini */
	CONF_OPTION,		/* --config FILE */
};

enum conf_kind {
	CONF_SANDBOX,		/* [sandbox]: every command */
	CONF_PROFILE,		/* [profile NAME]: --profile NAME */
	CONF_COMMAND,		/* [command "WORDS"]: a command of these words */
};

struct conf_entry {
	const char *key;	/* a layer_keys row's name: lives forever */
	char *value;
	unsigned line;
};

struct conf_section {
	enum conf_kind kind;
	char *name;		/* the profile's name, or the command's words as written */
	char **words;		/* CONF_COMMAND: the words, NULL-terminated */
	unsigned line;
	struct conf_entry *v;
	size_t n;
};

struct conf_file {
	char *path;		/* canonical; the sources of its rules point here */
	char *dir;		/* its folder: relative paths start there */
	enum conf_origin origin;
	char *text;		/* its bytes, for the hash */
	size_t len;
	char hash[65];		/* SHA-256 of its bytes, once conf_file_hash made it */
	bool trusted;		/* the user's own, or trusted with stockade trust as it is now */
	struct conf_section *v;
	size_t n;
};

struct conf_error {
	char *file;
	unsigned line;		/* 0: the file as a whole */
	char *key;		/* the key, or NULL */
	char *msg;		/* what is wrong, and what is allowed */
};

/* The sections the loader accepts, NULL-terminated; its keys are
 * policy/layer.h's. The set stockade.5 documents (a test compares the two). */
extern const char *const conf_section_names[];

/* Parses text (len bytes, which need not end in NUL) as the file at path,
 * every value checked. Pure. 0, or -EINVAL with *err set. */
int conf_parse(const char *path, const char *text, size_t len, struct conf_file *ret, struct conf_error *err);
/* Reads path (canonical) and parses it; its hash is of the bytes read. A
 * symlink is refused at the last component. */
int conf_read(const char *path, enum conf_origin origin, struct conf_file *ret, struct conf_error *err);
void conf_file_free(struct conf_file *f);
void conf_error_free(struct conf_error *e);

/* The section of this kind and name, or NULL. */
const struct conf_section *conf_find_section(const struct conf_file *f, enum conf_kind kind, const char *name);

/* One section as a layer of the policy: the sources point into f, which
 * must outlive the layer. needs_trust for a file that is not trusted. */
void conf_section_layer(const struct conf_file *f, const struct conf_section *s, struct layer *ret);

/* The files a run reads, in order: the user's (XDG_CONFIG_HOME or
 * ~/.config), then the workspace's own or config (--config). Missing
 * ones are left out; two in one workspace are an error. */
struct conf_set {
	struct conf_file *v;
	size_t n;
};

/* The user's own file, whether or not it exists:
 * $XDG_CONFIG_HOME/stockade/stockade.ini, or
 * ~/.config/stockade/stockade.ini (as environ says); NULL without either. */
char *conf_user_file(char *const *environ);

/* A settings file's path as stockade names it: its folder canonical, its
 * own name as written (so that a symlink there is still seen). */
int conf_file_path(const char *path, char **ret);

int conf_find(const char *workspace, const char *config, char *const *environ, struct conf_set *ret,
	      struct conf_error *err);
/* The workspace's own file (stockade.ini or .stockade.ini), canonical, or
 * -ENOENT. */
int conf_workspace_file(const char *workspace, char **ret, struct conf_error *err);
void conf_set_free(struct conf_set *s);

/* [command] sections against the command. */
struct conf_match {
	const struct conf_file *file;
	const struct conf_section *section;
	bool matched;
	char *why;		/* why it matched, or why not */
};

struct conf_matches {
	struct conf_match *v;	/* every [command] section of every file; the matched ones in the order they apply */
	size_t n;
};

/* The program that will run is argv[0] found on final_path (the
 * command's PATH after every layer's env) from cwd, as execvp finds it. A
 * section matches when its first word, found on own_path (the PATH of the
 * caller's environment, the user's own file and the command line), is the
 * same file, and its other words are the command's next ones. No section
 * matches a program reached through a tree p lets the run write (p->writable:
 * a link there, a directory a run could swap), nor one found in a PATH
 * entry own_path does not lead to (one a file other than the user's own
 * set). The matched sections apply fewer words first, and between equal
 * ones in file order. */
void conf_match_commands(const struct conf_set *files, char *const *argv, const char *own_path,
			 const char *final_path, const char *cwd, const struct policy *p, struct conf_matches *ret);
/* Why the command's program, as p (built with the matched sections) would
 * run it, must not take them, or NULL: it is not expected (the program
 * they matched, canonical), or it is reached through a tree p lets the run
 * write, or found in a PATH entry own_path does not lead to. */
char *conf_recheck_program(const char *word, const char *expected, const char *own_path, const struct policy *p);
void conf_matches_free(struct conf_matches *m);

/* Trust: state_dir/trust/<SHA-256 of the path>, holding the hash of the
 * contents trusted and the path. */
/* The hash of f's bytes: made when first asked for (a run whose files
 * widen nothing never needs it). */
const char *conf_file_hash(struct conf_file *f);
bool conf_trust_check(const char *state_dir, struct conf_file *f);
int conf_trust_record(const char *state_dir, struct conf_file *f);
/* -ENOENT when the path was not trusted. */
int conf_trust_revoke(const char *state_dir, const char *path);

struct conf_trusted {
	char *path;
	char hash[65];
};

/* Every record, sorted by path. */
int conf_trust_list(const char *state_dir, struct conf_trusted **ret, size_t *ret_n);
void conf_trusted_free(struct conf_trusted *v, size_t n);
