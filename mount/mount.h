/* The mount namespace: the new root, planned as data from the policy and
 * applied by the jail's init. A fresh tmpfs is the root; every read rule
 * is bound read-only (nosuid, nodev) with its submounts, every write rule
 * read-write, deeper rules after shallower ones; hidden paths are not
 * bound, or covered; /proc, /dev, /tmp and the home are fresh. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "policy/policy.h"

enum mount_kind {
	MOUNT_BIND,		/* a host tree or file, at the same path */
	MOUNT_TMPFS,		/* an empty tmpfs: /tmp, /dev, the home; read-only covers a hidden directory */
	MOUNT_PROC,		/* a procfs of the jail's pid namespace */
	MOUNT_DEVPTS,		/* a devpts instance of the jail's own */
	MOUNT_EMPTY_FILE,	/* an empty read-only file covers a hidden file */
	MOUNT_SYMLINK,		/* a symlink in the new root (/bin -> usr/bin) */
};

#define MOUNT_READONLY (1u << 0)
#define MOUNT_DEVICE (1u << 1)	/* a device node: not nodev */
#define MOUNT_FILE (1u << 2)	/* the target is not a directory */
#define MOUNT_BENEATH (1u << 3)	/* source resolved beneath the workspace */

struct mount_entry {
	enum mount_kind kind;
	unsigned flags;
	char *source;		/* host path, or the symlink's target */
	char *target;		/* path in the jail */
	char *options;		/* tmpfs and devpts options */
	const char *origin;	/* the policy rule it renders (borrowed) */
};

struct mount_plan {
	struct mount_entry *entries;
	size_t n_entries;
	char *workspace;	/* for sources resolved beneath it */
};

int mount_plan(const struct policy *p, struct mount_plan *ret);
void mount_plan_free(struct mount_plan *plan);
void mount_plan_print(FILE *f, const struct mount_plan *plan);

struct mount_failure {
	const char *step;	/* "mount", "open_tree", "pivot_root", ... */
	const char *path;	/* the path it was about, or NULL */
};

/* In the jail's init, in its own user and mount namespaces: builds the
 * root on a tmpfs mounted at root_dir (an empty directory stockade made),
 * pivots into it and detaches the old root. Every source is opened
 * without following symlinks and bound from its descriptor, every target
 * pinned the same way, so a directory swapped for a symlink during setup
 * fails (ELOOP) instead of exposing what it points to. */
int mount_apply(const struct mount_plan *plan, const char *root_dir, struct mount_failure *ret);
