/* The policy: plain data, built once from layers (the built-in defaults,
 * then each source of settings, then the command line; policy/build.h),
 * every rule remembering where it came from. Nothing in it depends on the
 * backend: each backend renders it, and what one backend alone needs (its
 * fresh home and tmp, its device nodes, its filter variant) is that
 * backend's plan. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/* Ordered by precedence between rules on the same path: a higher value
 * wins (hide beats protect beats read beats write). */
struct allow_entry;

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
/* A place a backend makes for the run (its fresh home and tmp; the
 * namespace jail's /dev/shm and devpts): never a rule of the policy
 * itself, only of a backend's plan. */
#define RULE_FRESH (1u << 4)
/* The run's own policy, as the jail carries it (policy/carried.h): a
 * read-only file the backend writes for the run. */
#define RULE_CARRIED (1u << 5)
/* A regular file as the backend's own listing found it (the landlock
 * backend's cgroup view, read from a cgroup directory, which holds no
 * link): its plan takes it as one without looking again. */
#define RULE_REGULAR (1u << 6)
/* stockade's own state (trust records, the quarantine, the sessions'
 * control sockets): hidden from every run, and no option lifts it. */
#define RULE_STATE (1u << 7)

/* Where a rule or a setting came from. */
enum source_kind {
	SOURCE_DEFAULT,		/* built in */
	SOURCE_FILE,		/* a line of a stockade.ini */
	SOURCE_OPTION,		/* the command line */
};

struct source {
	const char *key;	/* the key or option ("write", "--read"); for a default, which one */
	const char *file;	/* SOURCE_FILE: the file (lives as long as the policy) */
	unsigned line;		/* SOURCE_FILE */
	enum source_kind kind;
};

#define SOURCE_OPTION_OF(opt) ((struct source){ .kind = SOURCE_OPTION, .key = (opt) })
#define SOURCE_DEFAULT_OF(what) ((struct source){ .kind = SOURCE_DEFAULT, .key = (what) })

struct rule {
	char *path;		/* absolute and canonical */
	char *origin;		/* where it came from, as explain prints it (the policy's) */
	struct source source;
	enum access access;
	unsigned flags;
};

/* Ordered from narrow to wide: an untrusted file's mode above the one
 * before it is a widening. */
enum net_mode {
	NET_OFF,
	NET_LOOPBACK,
	NET_ALLOW,		/* loopback, and the allowed names (policy/allow.h) */
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

/* What a run may be given of the network beyond its mode, on both
 * backends: a listener of its own made reachable from the host (--publish
 * [HOST_ADDR:]PORT[:JAIL_PORT]), or one service of the host it may reach
 * (--connect HOST:PORT, --connect unix:PATH). */
enum grant_kind {
	GRANT_PUBLISH,
	GRANT_CONNECT,
	GRANT_CONNECT_UNIX,
};

struct net_grant {
	enum grant_kind kind;
	char *host;		/* a numeric address (IPv6 without brackets) or "localhost";
				 * publish: the host's side, "127.0.0.1" unless given */
	unsigned short port;	/* publish: the host's port; connect: the service's */
	unsigned short jail_port;	/* publish: the run's listener (PORT unless given) */
	char *path;		/* connect unix: an absolute path */
	struct source source;
};

/* Parses a --publish or --connect value (kind GRANT_PUBLISH or
 * GRANT_CONNECT; "unix:PATH" gives GRANT_CONNECT_UNIX). Pure: 0, or
 * -EINVAL with what is wrong in *ret_why (static text). */
int net_grant_parse(enum grant_kind kind, const char *spec, struct net_grant *ret, const char **ret_why);
void net_grant_free(struct net_grant *g);
/* "127.0.0.1:8080 -> jail port 80", "localhost:5432", "unix:/run/pg.sock". */
char *net_grant_text(const struct net_grant *g);
/* A grant's host is localhost or a loopback address (127/8, ::1, an
 * IPv4-mapped 127/8): only this host reaches it. */
bool net_grant_on_loopback(const struct net_grant *g);

struct env_change {
	char *name;
	char *value;		/* NULL when the variable is removed */
	char *why;
};

/* An environment and the changes made to it on the way from the caller's.
 * Its strings are the caller's, another environment's it was copied from
 * (which must outlive it), or its own. */
struct env {
	char **envp;		/* NULL-terminated */
	char **owned;		/* the strings it made */
	struct env_change *changes;
	size_t n_changes;
};

/* A size as written: bytes, or a share of the host's memory. */
struct size_spec {
	uint64_t bytes;
	unsigned percent;	/* of the host's memory, when bytes is 0 */
};

/* The run's limits, each with where it was set. */
struct limits {
	unsigned long max_procs;	/* tasks of the run, threads included */
	struct size_spec memory;	/* its memory, the tmpfs it writes included */
	struct size_spec tmp_size;	/* the namespace jail's /tmp, home and /dev/shm, together */
	struct source max_procs_source, memory_source, tmp_size_source;
};

/* The defaults: far above what a build or test suite needs, well below
 * what takes a host down. */
#define LIMIT_MAX_PROCS 8192
#define LIMIT_MEMORY_PERCENT 75
#define LIMIT_TMP_PERCENT 50
/* What --max-procs and max-procs accept: a shell and its child, up to
 * the kernel's pid_max ceiling. */
#define LIMIT_MIN_PROCS 2
#define LIMIT_MAX_MAX_PROCS (1UL << 22)

/* A setting or rule of an untrusted layer that gives more than the
 * layers before it did. */
struct widening {
	struct source source;
	char *value;		/* as written */
	char *before;		/* what the layers before it gave: "read", "loopback", ... */
	char *what;		/* what it would give, where the value does not say it (a variable
				 * the defaults derive a grant from); may be NULL */
};

/* A grant the built-in defaults would have derived, not given: the way
 * to it passes through a tree the run may write, where an earlier run
 * could have put a symlink or swapped a directory (policy/steer.h). */
struct declined {
	char *path;		/* where it leads now */
	char *origin;		/* the grant it would have been ("default: PATH directory ...") */
	char *via;		/* the directory a run may write that it passed through */
	char *link;		/* the symlink met there, or NULL */
};

/* A settings file in effect and how it stands: the user's own, trusted
 * with stockade trust, or not trusted (only what it narrows applies). */
struct settings_file {
	char *path;
	char *standing;
};

/* Rules kept apart from the policy's own (a backend's places). */
struct rule_list {
	struct rule *v;
	size_t n;
};

struct policy {
	char *workspace;	/* canonical; written */
	char *cwd;		/* where the command starts */
	uid_t uid;
	gid_t gid;
	char *user_home;	/* the caller's own home, canonical */
	char *passwd_home;	/* the home the user database gives, canonical, if another */
	char *home;		/* --home: a home kept across runs; NULL: a fresh one each run */
	char *cache_dir;	/* stockade's own build caches, writable */
	char *state_dir;	/* guard copies, quarantine, locks */
	char **own_state;	/* every place a stockade of the user keeps its state (this one's, the
				 * default one, the sessions' sockets): never the jail's to see or make */
	/* When the workspace lies inside a git working tree (a package of a
	 * monorepo): that tree, read-only, and its git directory (and, for a
	 * linked worktree, the common one), writable and guarded like the
	 * workspace's own. NULL otherwise. */
	char *outer_worktree;
	char *outer_gitdir;
	char *outer_commondir;

	enum net_mode net;
	struct source net_source;
	struct net_grant *grants;	/* --publish and --connect, every layer's */
	size_t n_grants;
	/* network allow: the names it reaches (policy/allow.h), every
	 * layer's, each once */
	struct allow_entry *allow;
	size_t n_allow;
	enum backend backend;	/* what was asked for */
	struct source backend_source;
	enum run_mode mode;
	struct limits limits;
	struct source mode_source;
	bool hide_ignored;	/* hide what git ignores in the workspace */
	struct source hide_ignored_source;
	/* What hide-ignored did (policy/ignored.h), for jail/ to say. */
	struct {
		bool asked;		/* git was asked, and listed */
		bool no_tree;		/* git said the workspace is no working tree it reads */
		char *hidden, *kept;	/* the first names of each, "" when none */
		size_t n_hidden, n_kept;
	} ignored;
	/* What layers nobody trusted would widen: the run is refused while
	 * there is one. */
	struct widening *widenings;
	size_t n_widenings;

	struct rule *rules;
	size_t n_rules;
	/* The backend's places (its fresh home and tmp, the run directory:
	 * jail/places.h), once planned: grants like the rules, never
	 * enumerated, which every question below takes into account and
	 * every plan renders. The places' own list, which they grow and
	 * free: set while they exist; NULL before and after. */
	const struct rule_list *places;

	char **argv;		/* the command */
	char *program;		/* argv[0] resolved on the jail's PATH, canonical: what the policy grants */
	/* The same as found on PATH, its symlinks kept (/usr/bin/psql, not
	 * the pg_wrapper it links to): what is exec'd, so that a program
	 * that decides what to be by the name it was called by (busybox,
	 * pg_wrapper, git's dashed forms, update-alternatives' links) sees
	 * that name. NULL: the same as program. */
	char *exec_path;
	int program_error;	/* why it was not, as an errno */
	struct env env;		/* the command's environment, but for where the jail's home and tmp are */
	char **env_decided;	/* names the user set, passed or unset: the jail's own values never replace them */
	/* Every layer's environment operations, in order (the policy's own
	 * copies): a session's exec makes its environment from its own
	 * caller's with them (env_again). */
	struct env_op *env_ops;
	size_t n_env_ops;

	struct rule *skipped;	/* hide rules on paths that do not exist: nothing to hide (path as written) */
	size_t n_skipped;
	/* built-in hides (credentials) a rule of the user's named on their
	 * very path: theirs to ask for, so the user's rule stands, said */
	struct rule *lifted;	/* the user's rules that lifted one */
	size_t n_lifted;
	char **origins;		/* the rules' origins, each once */
	char **files;		/* the settings files read, for struct source */
	struct settings_file *standings;	/* each settings file's standing, for why */
	size_t n_standings;
	/* The trees the run may write, as the build steered its own grants
	 * around them (policy/steer.h): the workspace, a kept home, the
	 * caches, every layer's write. */
	char **writable;
	struct declined *declined;
	size_t n_declined;
	/* The settings files in effect that lie in the workspace, relative
	 * to it: trust hand-offs like its own stockade.ini (NULL-terminated,
	 * may be NULL). */
	char **conf_handoffs;
	/* The rules by path, for the look-ups of a policy of many rules
	 * (hide-ignored's thousands): a cache, made when first needed and
	 * again whenever the rules have changed since. */
	size_t *by_path;
	const struct rule *by_path_of;	/* the rules it was made for, */
	size_t by_path_n;		/* how many, */
	unsigned by_path_changed;	/* and at which change of their order */
	unsigned rules_changed;		/* counts sorts and removals */
};

const char *access_name(enum access a);
const char *net_mode_name(enum net_mode m);
const char *backend_name(enum backend b);
const char *effect_name(enum effect e);
int access_from_name(const char *s, enum access *ret);
int net_mode_from_name(const char *s, enum net_mode *ret);
int backend_from_name(const char *s, enum backend *ret);
int run_mode_from_name(const char *s, enum run_mode *ret);
/* "512M", "4G", "1048576", "25%": -EINVAL for anything else, 0 or
 * above 100%, or a byte count that overflows. */
int size_spec_parse(const char *s, struct size_spec *ret);
/* A number of processes from LIMIT_MIN_PROCS to LIMIT_MAX_MAX_PROCS:
 * -EINVAL for anything else. */
int max_procs_parse(const char *s, unsigned long *ret);
/* Its bytes on a host with ram bytes of memory. */
uint64_t size_spec_bytes(const struct size_spec *s, uint64_t ram);
/* "4.0 GiB", "50% of memory (12.0 GiB)". */
void size_spec_format(const struct size_spec *s, uint64_t ram, char *buf, size_t size);

/* How a source reads in a message or in explain: "default: credentials",
 * "--read on the command line", "stockade.ini line 4 (write)". */
char *source_text(const struct source *s);

void policy_init(struct policy *p);
void policy_free(struct policy *p);

/* Adds a rule on an absolute path; the path is normalised, never resolved.
 * origin NULL: source_text(source). */
struct rule *policy_add_rule(struct policy *p, const char *path, enum access a, unsigned flags,
			     struct source source, const char *origin);

/* The same for a rule known to be new (from a list without repeats, such
 * as git's): no search for the same rule among the others. */
void policy_add_rule_new(struct policy *p, const char *path, enum access a, struct source source);

/* Every rule of the run: the policy's, then its places' (i below
 * policy_n_all). */
static inline size_t policy_n_all(const struct policy *p)
{
	return p->n_rules + (p->places ? p->places->n : 0);
}
static inline const struct rule *policy_rule_at(const struct policy *p, size_t i)
{
	return i < p->n_rules ? &p->rules[i] : &p->places->v[i - p->n_rules];
}

/* The rule that decides path (the places' too): the deepest rule at or
 * above it, ties going to the stronger access. NULL when no rule covers
 * it. */
const struct rule *policy_rule_for(const struct policy *p, const char *path);
/* What path ends up with. */
enum effect policy_effect(const struct policy *p, const char *path);
/* Whether the command can meet a hidden path where it looks: a hide of
 * the person's, or a built-in one (a credential) beneath a grant of the
 * person's or a tree in the home. Such a run names each open of one.
 * any: whether there is a hide at all (-v names them all, a credential
 * the fresh home does not hold too). */
bool policy_hides_in_reach(const struct policy *p, bool any);
/* Whether path lies in stockade's own state (a RULE_STATE hide): no
 * rule beneath it is honoured, as the deepest would be elsewhere. */
bool policy_in_own_state(const struct policy *p, const char *path);
/* The fix a refusal there names: none. */
#define POLICY_STATE_FIX                                                                                          \
	"none: stockade's own state (trust records, the quarantine, the sessions' control sockets) is never the " \
	"jail's; a session's commands go through stockade session exec, outside the jail"
/* One operation on a path, as a backend meets it. */
enum path_op {
	PATH_OP_READ,		/* read a file, list a directory */
	PATH_OP_EXEC,		/* run a file, map it executable */
	PATH_OP_WRITE,		/* change a file, create or remove an entry there */
	PATH_OP_MOVE,		/* rename or unlink the path itself */
	PATH_OP_CONNECT,	/* connect to a Unix socket there */
	PATH_OP_BIND,		/* make a Unix socket there */
};
const char *path_op_name(enum path_op op);
/* Whether the policy (its places too) lets a command do op on path: the one answer each backend's rendering must give. Read and
 * exec need read, write and bind need write, connect needs either (as the
 * supervisor decides it), and moving a path needs write and no hide or
 * protect rule at or beneath it: a folder renamed aside must not carry a
 * secret out, nor take a trust hand-off from under its rule (as a bind
 * in the namespace jail makes the rename fail). */
bool policy_allows(const struct policy *p, enum path_op op, const char *path);
/* True when some rule lies strictly beneath path. */
bool policy_has_rule_beneath(const struct policy *p, const char *path);

/* Sorts the rules shallow to deep, then by path, then by precedence; the
 * order explain prints and backends walk. */
/* Shallow to deep, then by path: where a rule stands in every ordering of
 * rules (the policy's sort, the Seatbelt profile's lines). */
int rule_place_cmp(const struct rule *x, const struct rule *y);
void policy_sort(struct policy *p);
