/* The policy: plain data built once from the built-in defaults and the
 * command line, later ones winning. Nothing in it depends on the backend;
 * every backend renders it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Ordered by precedence between rules on the same path: a higher value
 * wins (hide beats protect beats read beats write). */
enum access {
	ACCESS_WRITE,
	ACCESS_READ,
	ACCESS_PROTECT,
	ACCESS_HIDE,
};

/* What a path ends up with once every rule above it is taken into account:
 * protect never grants anything, so it is read under a wider read or write
 * and nothing otherwise. */
enum effect {
	EFFECT_NONE,
	EFFECT_READ,
	EFFECT_WRITE,
};

#define RULE_HANDOFF (1u << 0)	/* a trust hand-off: kept by the guard, never enumerated */
#define RULE_BENEATH (1u << 1)	/* found inside the workspace, resolved beneath it */
#define RULE_DEVICE (1u << 2)	/* a device node: read and write, never made */
#define RULE_SYSTEM (1u << 3)	/* part of the built-in defaults */
#define RULE_TMPFS (1u << 4)	/* namespaces backend: a fresh tmpfs, not the host's tree */

struct rule {
	char *path;		/* absolute and canonical */
	enum access access;
	unsigned flags;
	char *origin;		/* where it came from, as explain prints it */
};

enum net_mode {
	NET_OFF,
	NET_LOOPBACK,
	NET_ON,
};

enum backend {
	BACKEND_AUTO,
	BACKEND_NAMESPACES,
	BACKEND_LANDLOCK,
	BACKEND_SEATBELT,
	BACKEND_NONE,
};

enum run_mode {
	MODE_AUTO,
	MODE_REQUIRED,
	MODE_OFF,
};

struct env_change {
	char *name;
	char *value;		/* NULL when the variable is removed */
	char *why;
};

struct policy {
	char *workspace;	/* canonical; written */
	char *cwd;		/* where the command starts */
	uid_t uid;
	gid_t gid;
	char *user_home;	/* the caller's own home, canonical */
	char *home;		/* the jail's HOME */
	bool keep_home;		/* --home: kept across runs */
	char *tmpdir;		/* the jail's TMPDIR */
	char *run_dir;		/* holds a fresh home and tmp; removed afterwards */
	char *cache_dir;	/* stockade's own build caches, writable */
	char *state_dir;	/* guard copies, quarantine, locks */

	enum net_mode net;
	enum backend backend;
	enum run_mode mode;

	struct rule *rules;
	size_t n_rules;

	char **argv;		/* the command */
	char *program;		/* argv[0] resolved on the jail's PATH */
	int program_error;	/* why it was not, as an errno */
	char **envp;		/* the command's environment */
	struct env_change *env_changes;
	size_t n_env_changes;

	char **notes;		/* said once on stderr: skipped hide targets and the like */
};

const char *access_name(enum access a);
const char *net_mode_name(enum net_mode m);
const char *backend_name(enum backend b);
const char *effect_name(enum effect e);
int access_from_name(const char *s, enum access *ret);
int net_mode_from_name(const char *s, enum net_mode *ret);
int backend_from_name(const char *s, enum backend *ret);
int run_mode_from_name(const char *s, enum run_mode *ret);

void policy_init(struct policy *p);
void policy_free(struct policy *p);

/* Adds a rule on an absolute path; the path is normalised, never resolved. */
struct rule *policy_add_rule(struct policy *p, const char *path, enum access a,
			     unsigned flags, const char *origin);

/* The rule that decides path: the deepest rule at or above it, ties going
 * to the stronger access. NULL when no rule covers it. */
const struct rule *policy_rule_for(const struct policy *p, const char *path);
/* What path ends up with. */
enum effect policy_effect(const struct policy *p, const char *path);
/* True when some rule lies strictly beneath path. */
bool policy_has_rule_beneath(const struct policy *p, const char *path);

/* Sorts the rules shallow to deep, then by path, then by precedence; the
 * order explain prints and backends walk. */
void policy_sort(struct policy *p);
