/* The mount namespace: the new root, planned as data from the policy and
 * applied by the jail's init. A fresh tmpfs is the root; every read rule
 * is bound read-only (nosuid, nodev) with its submounts, every write rule
 * read-write, deeper rules after shallower ones; hidden paths are not
 * bound, or covered; /proc, /dev, /tmp and the home are fresh. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "policy/policy.h"
#include "policy/report.h"

enum mount_kind {
	MOUNT_BIND,		/* a host tree or file, at the same path */
	MOUNT_TMPFS,		/* an empty tmpfs: /tmp, /dev, the home; read-only covers a hidden directory */
	MOUNT_PROC,		/* a procfs of the jail's pid namespace */
	MOUNT_DEVPTS,		/* a devpts instance of the jail's own */
	MOUNT_EMPTY_FILE,	/* an empty read-only file covers a hidden file */
	MOUNT_SYMLINK,		/* a symlink in the new root (/bin -> usr/bin) */
	MOUNT_CGROUP,		/* a cgroup2 (source NULL) or a v1 hierarchy (source "cgroup", options its
				 * controllers) of the jail's own cgroup namespace, read-only */
	MOUNT_TEXT,		/* a read-only file of the root with options as its content (the run's policy) */
};

#define MOUNT_READONLY (1u << 0)
#define MOUNT_DEVICE (1u << 1)	/* a device node: not nodev */
#define MOUNT_FILE (1u << 2)	/* the target is not a directory */
#define MOUNT_BENEATH (1u << 3)	/* source resolved beneath the workspace */
#define MOUNT_SHARED (1u << 4)	/* tmpfs: a directory of the run's one tmpfs (options: its mode) */
#define MOUNT_READABLE (1u << 5)	/* an empty file anyone may read (mode 0444) */
#define MOUNT_IF_PRESENT (1u << 6)	/* a hand-off's hole: skipped when the path is gone by the time it is bound */
#define MOUNT_SEAL (1u << 7)	/* a hidden directory's cover with a grant beneath it: read-only once that is mounted */

struct mount_entry {
	enum mount_kind kind;
	unsigned flags;
	char *source;		/* host path, or the symlink's target */
	char *target;		/* path in the jail */
	char *options;		/* tmpfs and devpts options */
	const char *origin;	/* the policy rule it renders (borrowed) */
	size_t depth;		/* the target's, for the plan's order */
};

struct mount_plan {
	struct mount_entry *entries;
	size_t n_entries;
	char *workspace;	/* for sources resolved beneath it */
	char *shared_options;	/* the one tmpfs of the home, /tmp and /dev/shm: its size */
};

/* The new root for the policy and its places (RULE_FRESH: the jail's
 * tmpfs home and /tmp). Reads which paths exist and what they are;
 * changes nothing. */
int mount_plan(const struct policy *p, struct mount_plan *ret);
void mount_plan_free(struct mount_plan *plan);
/* Covers a regular file the plan binds with an empty read-only one (the
 * jail's resolver configuration, for the name responder). A symlink or a
 * path nothing binds is left as it is. */
void mount_plan_cover(struct mount_plan *plan, const char *path, const char *origin);
/* A file of the new root, read-only, holding text (the run's policy as
 * the jail carries it). */
void mount_plan_add_text(struct mount_plan *plan, const char *path, const char *text, const char *origin);
void mount_plan_print(FILE *f, const struct mount_plan *plan);

enum mount_step {
	MOUNT_STEP_PRIVATE,
	MOUNT_STEP_NEW_ROOT,
	MOUNT_STEP_OPEN_ROOT,
	MOUNT_STEP_OPEN_WORKSPACE,
	MOUNT_STEP_TARGET,
	MOUNT_STEP_SYMLINK,
	MOUNT_STEP_OPEN_SOURCE,
	MOUNT_STEP_FSOPEN,
	MOUNT_STEP_FSCONFIG,
	MOUNT_STEP_FSMOUNT,
	MOUNT_STEP_MOVE_MOUNT,
	MOUNT_STEP_OPEN_TREE,
	MOUNT_STEP_SETATTR,
	MOUNT_STEP_EMPTY_FILE,
	MOUNT_STEP_CHDIR,
	MOUNT_STEP_PIVOT,
	MOUNT_STEP_DETACH,
	MOUNT_STEP_READ_ONLY,
	MOUNT_STEP_TEXT,
};

struct mount_failure {
	enum mount_step step;
	const char *path;	/* the path it was about */
};

/* The cgroup tree the plan names (MOUNT_CGROUP), in the new root that
 * mount_apply() built and pivoted into: apart, so that it is mounted in
 * the cgroup namespace of the run's own groups, which init may join only
 * after the root is built. A v1 hierarchy that cannot be mounted is left
 * out. */
int mount_apply_cgroups(const struct mount_plan *plan, struct mount_failure *ret);
/* "pivot_root", "create the mount point", ... */
const char *mount_step_name(enum mount_step step);
/* Whether a failure at this step can come from a path (one that vanished,
 * a symlink where a directory was): never a refusal by the host, so never
 * a reason to leave the namespace jail for a weaker one. */
bool mount_step_is_path(enum mount_step step);

/* What the mounts enforce, into the report. */
void mount_describe(struct report *rep);

/* In the jail's init, in its own user and mount namespaces: builds the
 * root on a tmpfs mounted at root_dir (a directory stockade made, holding
 * only its run's lock, which the tmpfs covers),
 * pivots into it and detaches the old root. Every source is opened
 * without following symlinks and bound from its descriptor, every target
 * pinned the same way, so a directory swapped for a symlink during setup
 * fails (ELOOP) instead of exposing what it points to. */
int mount_apply(const struct mount_plan *plan, const char *root_dir, struct mount_failure *ret);
/* The same, and *ret_shared (when not NULL): a descriptor of the run's
 * one tmpfs (the home, /tmp and /dev/shm, each the directory named by its
 * entry's index in the plan), detached from the jail's tree but held
 * alive by it, for what the run wrote there to be counted once it is
 * over (-1: the plan has none). */
int mount_apply_keep(const struct mount_plan *plan, const char *root_dir, int *ret_shared, struct mount_failure *ret);
