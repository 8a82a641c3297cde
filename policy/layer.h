/* A layer: one source of settings (a stockade.ini section, the command
 * line), as policy/build.h builds the policy from them. Its parts, and
 * the keys it takes by name: one row per stockade.ini key, read by the
 * loader (conf/load.c), by the command line for the options of the same
 * meaning (jail/cli.c) and by a session's exec, which may apply only some
 * of them. A new key is one row here, with its setter, plus its field in
 * struct layer and in the policy (policy/build.c merges it). Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy/env.h"
#include "policy/policy.h"

struct layer_rule {
	char *path;		/* as written: absolute, "~/...", or relative to the layer's folder */
	enum access access;
	struct source source;
};

/* One source of settings. What it does not set, it leaves as the layers
 * before it said. */
struct layer {
	char *dir;		/* relative paths resolve against it; NULL: the current directory */
	char *workspace;	/* set only by the command line */
	struct source workspace_source;
	bool net_set;
	enum net_mode net;
	struct source net_source;
	bool backend_set;
	enum backend backend;
	struct source backend_source;
	bool mode_set;
	enum run_mode mode;
	struct source mode_source;
	bool hide_ignored_set;
	bool hide_ignored;	/* hide what git ignores in the workspace */
	struct source hide_ignored_source;
	/* A file nobody trusted: what it widens beyond the layers before it
	 * is not applied but named (policy.widenings), and the run refused. */
	bool needs_trust;
	char *home;		/* a home kept across runs */
	struct source home_source;
	unsigned long max_procs;	/* 0: not set */
	struct size_spec memory, tmp_size;	/* all 0: not set */
	struct source max_procs_source, memory_source, tmp_size_source;
	struct layer_rule *rules;
	size_t n_rules;
	struct env_op *env_ops;
	size_t n_env_ops;
	struct net_grant *grants;	/* --publish, --connect: added to every other layer's */
	size_t n_grants;
	/* allow, --allow: the names network allow reaches, added to every
	 * other layer's (policy/allow.h) */
	struct allow_entry *allow;
	size_t n_allow;
};

/* Parses and adds a --publish or --connect value; -EINVAL with the reason
 * in *ret_why. */
int layer_add_grant(struct layer *l, enum grant_kind kind, const char *spec, struct source source,
		    const char **ret_why);
/* Parses and adds an allow item (a name, *.NAME, NAME:PORT or a list
 * such as @npm); -EINVAL with the reason in *ret_why. */
int layer_add_allow(struct layer *l, const char *item, struct source source, const char **ret_why);
void layer_add_rule(struct layer *l, const char *path, enum access a, struct source source);
void layer_add_env(struct layer *l, enum env_op_kind kind, const char *name, const char *value,
		   struct source source);
void layer_free(struct layer *l);

/* A key: its name, what it takes, and its setter. */
struct layer_key {
	const char *name;	/* the key, as stockade.ini and stockade.5 spell it */
	const char *allowed;	/* what a value may be, for an error: "use ..." */
	bool list;		/* items separated by commas, each given to set */
	/* Through layer_key_set. */
	int (*set)(struct layer *l, const char *item, struct source source, char **why);
	/* For a key a session settles once, which one exec cannot set: where
	 * l sets it, or NULL. NULL for the keys an exec may narrow. */
	const struct source *(*set_at)(const struct layer *l);
};

/* Every key, ending in a row without a name. */
extern const struct layer_key layer_keys[];

/* The row of a key, or NULL. */
const struct layer_key *layer_key_find(const char *name);

/* Sets item (a whole value, or one item of a list) on l, from source: 0,
 * or -EINVAL with what is wrong in *why (allocated; an item of a list
 * named in it, "use" and what is allowed otherwise). */
int layer_key_set(const struct layer_key *k, struct layer *l, const char *item, struct source source, char **why);

/* Where l sets the first key a session settles once, or NULL. */
const struct source *layer_session_setting(const struct layer *l);

/* A variable's name as env and unset take it: not empty, no '=', no blank
 * or control character. */
bool env_name_valid(const char *s, size_t n);
