/* The settings a layer takes by name: one row per stockade.ini key, read
 * by the loader (conf/load.c), by the command line for the options of the
 * same meaning (jail/cli.c) and by a session's exec, which may apply only
 * some of them. A new key is one row here, with its setter, plus its field
 * in struct layer and in the policy (policy/build.c merges it). Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy/build.h"

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
