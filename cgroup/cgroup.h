/* A cgroup of the run's own, where the host delegates one: every process
 * of the run is killed with cgroup.kill when the command exits, and by
 * the keeper (keeper.h) when stockade itself dies. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct run_cgroup {
	char *dir;		/* the run's cgroup */
	int dir_fd;		/* it, open: for clone3's CLONE_INTO_CGROUP */
	int procs_fd;		/* its cgroup.procs, for the command to join */
};

#define RUN_CGROUP_INIT { .dir_fd = -1, .procs_fd = -1 }

/* This process's group in the hierarchy named name (a v1 controller,
 * or "" for v2's "0::"), from /proc/self/cgroup; NULL when it has none. */
char *cgroup_own(const char *name);

/* Creates the run's cgroup beneath stockade's own; -errno when the host
 * does not delegate one (the caller names the gap). */
int cgroup_create(struct run_cgroup *cg);
/* The cgroup removed, once every process in it is gone (the keeper's,
 * after stockade died): waits a while for the last to go. */
void cgroup_remove(const struct run_cgroup *cg);
/* In the command's process, before it is confined. */
int cgroup_join(const struct run_cgroup *cg);
int cgroup_kill(const struct run_cgroup *cg);
/* Removes the cgroup (empty by now) and forgets it. */
void cgroup_release(struct run_cgroup *cg);

/* What the landlock backend's command may read of /sys/fs/cgroup (the
 * namespace jail mounts a cgroup2 of its own cgroup namespace instead):
 * in each cgroup hierarchy mounted there, the run's own group, whole
 * where stockade made it for the run (among made[]: the run's cgroup and
 * its limits' groups), else the files of the group it shares with
 * stockade; and the limits of the groups above it, which runtimes
 * (the JVM) read too. No other group, and no listing of one it shares:
 * Landlock grants no listing of /sys/fs/cgroup, and a path walk needs
 * none. */
struct cgroup_view {
	struct cgroup_view_path {
		char *path;
		bool whole;	/* a made group: its tree; else one file */
	} *paths;
	size_t n_paths;
};

void cgroup_view(char *const *made, size_t n_made, struct cgroup_view *ret);
void cgroup_view_free(struct cgroup_view *v);
