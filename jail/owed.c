/* The lines a run owes where it would otherwise be silent, from what
 * stockade sees outside the command: a connect to a socket file of the
 * host's that the namespace jail does not have, and what the run wrote
 * where it goes with the run (its fresh home, its tmp), counted as it
 * ends. The look-out on the jail's loopback is netns/'s; the hidden files
 * the landlock backend's supervisor sees opened, supervise/'s. */
#include "jail/owed.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jail/places.h"
#include "jail/say.h"
#include "lib/path.h"
#include "lib/util.h"

/* A connect to a socket file in the namespace jail: one that is not in
 * the jail (ENOENT there, what no rule brings in) where the host has a
 * socket (the user's database, its Docker) is named with the option
 * that gives that one socket. Looked up in the jail's own root, through
 * /proc; it decides nothing: the mounts do. */
void owed_watch_connect(const struct seccomp_notif *req, const struct policy *p, struct report *rep)
{
	_cleanup_free_ char *path = p ? supervise_unix_connect_path(req) : NULL;
	char root[64];
	snprintf(root, sizeof(root), "/proc/%d/root", (int)req->pid);
	_cleanup_free_ char *inside = path ? path_join(root, path) : NULL;
	struct stat st;
	bool absent = inside && lstat(inside, &st) < 0 && (errno == ENOENT || errno == ENOTDIR);
	if (absent && lstat(path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		_cleanup_free_ char *what = xstrcat3("unix:", path, "");
		_cleanup_free_ char *fix = policy_in_own_state(p, path) ? xstrdup(POLICY_STATE_FIX)
									: xstrcat3("--connect unix:", path, " (this one socket)");
		report_denial_ruled(rep, "connect", what, "ENOENT",
				    "a socket file of the host's the jail does not have: the namespace jail holds only what "
				    "the rules bring in",
				    "built in: the mounts (namespace jail)", fix);
	}
}

/* What the run wrote where it goes with the run, counted and said once
 * every process of it is gone. The options that keep it: --home DIR for
 * the home; for /tmp, the host's own (--write /tmp); for the landlock
 * backend's TMPDIR, one of yours. */
#define KEEP_HOME "--home DIR keeps a home across runs"
#define KEEP_TMP "--write /tmp writes the host's /tmp instead"
#define KEEP_TMPDIR "--env TMPDIR=DIR with --write DIR keeps them"

/* The namespace jail: the directories of the run's one tmpfs that are its
 * home and /tmp, but for what stockade made there (the points the
 * policy's binds are mounted on). */
void owed_count_shared(const struct policy *p, struct report *rep, const struct plan *pl, int shared)
{
	for (size_t i = 0; shared >= 0 && i < pl->mounts.n_entries; i++) {
		const struct mount_entry *e = &pl->mounts.entries[i];
		bool home = !p->home && pl->places.home && streq(e->target, pl->places.home);
		if (e->kind != MOUNT_TMPFS || !(e->flags & MOUNT_SHARED) || (!home && !streq(e->target, "/tmp")))
			continue;
		_cleanup_strv_ char **skip = strv_new();
		for (size_t j = 0; j < pl->mounts.n_entries; j++)
			if (j != i && path_is_beneath(pl->mounts.entries[j].target, e->target) &&
			    !streq(pl->mounts.entries[j].target, e->target))
				strv_add(&skip, path_below(pl->mounts.entries[j].target, e->target));
		char name[21];
		_cleanup_close_ int dir = openat(shared, fmt_u64(name, i), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dir < 0)
			continue;
		struct written w;
		places_count_written(dir, home ? "~" : "/tmp", skip, &w);
		say_discarded(p, rep, home ? "home" : "/tmp", home ? "its fresh home" : "its /tmp", &w,
			      home ? KEEP_HOME : KEEP_TMP);
		written_free(&w);
	}
}

/* The landlock backend: its home and TMPDIR in the run directory, and
 * what the supervisor made for it in the host's /tmp. */
void owed_count_run_dir(const struct policy *p, struct report *rep, const struct plan *pl, struct supervisor *sv)
{
	const char *dirs[] = { p->home ? NULL : pl->places.home, pl->places.tmpdir };
	for (size_t i = 0; pl->places.made && i < ARRAY_SIZE(dirs); i++) {
		_cleanup_close_ int dir = dirs[i] ? open(dirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
		if (dir < 0)
			continue;
		struct written w;
		places_count_written(dir, i ? "$TMPDIR" : "~", NULL, &w);
		say_discarded(p, rep, i ? "TMPDIR" : "home", i ? "its TMPDIR" : "its fresh home", &w,
			      i ? KEEP_TMPDIR : KEEP_HOME);
		written_free(&w);
	}
	if (sv) {
		struct written w = { .paths = strv_new(), .tops = strv_new() };
		w.files = supervisor_tmp_written(sv, &w.bytes, &w.paths);
		for (size_t i = 0; i < 8 && w.paths[i]; i++)
			strv_add(&w.tops, w.paths[i]);
		say_discarded(p, rep, "/tmp", "the host's /tmp (what the supervisor made there, removed)", &w, KEEP_TMP);
		written_free(&w);
	}
}

