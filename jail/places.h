/* Where a backend puts the jail's home and tmp: made for the run before it
 * starts and removed after it, with the rules that grant them (RULE_FRESH)
 * and the environment that points at them. Also stockade's own cache and
 * state directories, made where missing. Nothing else of a run writes
 * files before the command starts. */
#pragma once

#include "policy/policy.h"

/* What the housekeeping before a run could not do: never fatal, but said
 * (jail/ makes each a note; TODO(jail/run.c, jail/say.c): not said yet). */
enum places_note_kind {
	PLACES_NOTE_LIST,	/* listing the base for what killed runs left */
	PLACES_NOTE_HOLDERS,	/* telling whether a process still holds them */
	PLACES_NOTE_REMOVE,	/* removing one nothing holds */
};

struct places_note {
	enum places_note_kind kind;
	int err;
	char *path;	/* the base, or the directory left behind */
};

struct places {
	char *home;		/* the jail's HOME */
	char *tmpdir;		/* the jail's TMPDIR */
	char *base;		/* the private folder run directories go in */
	char *run_dir;		/* the run's own, in it: made for this run, removed after it */
	bool made;		/* run_dir exists, and is this run's */
	int lock_fd;		/* while made: run_dir/lock, held until run_dir is removed */
	bool sweep;		/* before making it, remove what killed runs left in base */
	struct places_note *notes;	/* that housekeeping's failures */
	size_t n_notes;
	bool populate_home;	/* the fresh home gets links to what the policy reads there */
	enum backend backend;
	char *policy_file;	/* the run's policy as the jail carries it (STOCKADE_POLICY), or NULL */
	struct rule_list rules;	/* the places' own grants: the policy's places (policy.h) */
	struct policy *policy;	/* the policy they are part of, from places_plan to places_remove */
	size_t cgroup_at, n_cgroup;	/* those of them that are the cgroup view, in rules */
	struct env env;		/* the policy's environment, pointing at them */
};

enum places_fault {
	PLACES_BASE,		/* the folder run directories go in is not private */
	PLACES_RUN_DIR,		/* making the run's directory */
	PLACES_MKDIR,		/* making a directory in it */
	PLACES_KEPT_HOME,	/* --home cannot be made or used */
	PLACES_CACHE,		/* stockade's cache directory */
	PLACES_STATE,		/* stockade's state directory */
	PLACES_LINK,		/* a link in the fresh home to what the policy lets it read */
	PLACES_POLICY,		/* the run's policy, for stockade why inside it */
};

struct places_failure {
	enum places_fault fault;
	int err;
	char *path;
};

/* Where they go, made nowhere yet. For the namespace jail: a run directory
 * where the new root is mounted; the home (unless kept) and /tmp are tmpfs
 * at their own paths, and the jail's devpts and /dev/shm are its own. For
 * the landlock backend (and --mode off): a fresh home and tmp under the
 * run directory, on a tmpfs unless TMPDIR says otherwise. They are part
 * of p from now on (p->places), until places_remove: ret must not move. */
void places_plan(struct policy *p, enum backend backend, char *const *environ, struct places *ret);
/* The same for a run: on the landlock backend, it makes its cgroups
 * next, and then gives the view of them (places_view_cgroups), so the
 * tree's listing is not made twice; and its run directory has the
 * workspace's name where that is free, made now (made, lock_fd). */
void places_plan_run(struct policy *p, enum backend backend, char *const *environ, struct places *ret);
/* The landlock backend: the slave of the run's own pty, on the host's
 * devpts, granted by path (a program reopens its terminal by name). */
void places_add_terminal(struct places *pl, const char *slave);
/* The landlock backend's /sys/fs/cgroup, where the policy reads it:
 * the run's own groups alone (cgroup_view() in cgroup/cgroup.h), as rules
 * of the plan: the tree hidden, the view read. made: the groups stockade
 * made for the run (none before it has made them: its own are shown).
 * Replaces the view given before. */
void places_view_cgroups(struct places *pl, const struct policy *p, char *const *made, size_t n_made);
/* Makes them, and stockade's own directories where missing. The landlock
 * backend's home gets links to the toolchains, caches and git
 * configuration the policy lets it read, so that programs looking under
 * $HOME find them. The run directory is locked from before it has its
 * name until places_remove(), and for the landlock backend and --mode off
 * the directories earlier runs left in base (their stockade killed) are
 * removed first, once nothing holds them: what of that fails is in
 * pl->notes, and the run goes on. */
int places_make(struct places *pl, const struct policy *p, struct places_failure *f);
/* Removes what runs whose stockade is gone left in base, this one's
 * among them once its stockade is (the keeper's, after stockade died):
 * each directory nobody locks or holds. */
void places_sweep(struct places *pl, uid_t uid);
/* What a run wrote in a place of its own that goes with it: regular
 * files and their bytes, a few of their paths (prefix/REL: as the command
 * saw them) and the distinct top-level names they lie under. */
struct written {
	unsigned long files;
	unsigned long long bytes;
	char **paths;
	char **tops;
};
/* Counts what lies beneath dirfd (never following a link, at most
 * PLACES_WRITTEN_MAX entries, 64 deep), but the relative paths in skip
 * (what stockade made there: a mount point, a link). Once the run is
 * over: nothing changes it while it is counted. */
#define PLACES_WRITTEN_MAX 100000
void places_count_written(int dirfd, const char *prefix, char *const *skip, struct written *ret);
void written_free(struct written *w);

/* Removes the run directory and frees pl, which is no part of its policy
 * any more. */
void places_remove(struct places *pl);
void places_failure_free(struct places_failure *f);
