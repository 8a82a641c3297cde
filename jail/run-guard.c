/* The guard around a run, and around each command of a session: its
 * areas (the workspace, and a git directory around it), its baselines
 * taken before the command starts, checked between a session's commands
 * and watched while none runs, and its end once every process of the run
 * is gone, with stockade's own limits checked first. Declared in run.h;
 * every message is say.c's. */
#include "jail/run.h"

#include <poll.h>
#include <sys/resource.h>

#include "handoff/gitconfig.h"
#include "handoff/handoff.h"
#include "jail/say.h"
#include "lib/log.h"
#include "lib/util.h"

const struct guard_knowledge run_guard_knowledge = {
	.discover = handoffs_discover,
	.dir_is_bare = handoff_dir_is_bare,
	.gitdir_plausible = handoff_gitdir_plausible,
	.config_vet = gitconfig_vet,
};

size_t run_guard_areas(const struct policy *p, char *const *writable, struct guard_options ret[RUN_GUARD_AREAS])
{
	size_t n = 0;
	/* The settings files in effect that lie in the workspace are
	 * hand-offs too: the next run reads them. */
	ret[n++] = (struct guard_options){ .workspace = p->workspace, .state_dir = p->state_dir, .user_home = p->user_home,
					   .writable = writable, .extra = p->conf_handoffs,
					   .knows = &run_guard_knowledge };
	const char *outer[] = { p->outer_gitdir, p->outer_commondir };
	for (size_t i = 0; i < ARRAY_SIZE(outer); i++)
		if (outer[i])
			ret[n++] = (struct guard_options){ .workspace = outer[i], .state_dir = p->state_dir,
							   .user_home = p->user_home, .writable = writable,
							   .gitdir_only = true, .knows = &run_guard_knowledge };
	return n;
}

char **run_writable_trees(const struct policy *p)
{
	char **v = strv_new();
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].access == ACCESS_WRITE && !strv_contains(v, p->rules[i].path))
			strv_add(&v, p->rules[i].path);
	return v;
}

/* stockade's own limits, which the guard needs once the run is over:
 * descriptors, file sizes, memory, processes (its git) and CPU time. */
static const struct {
	int resource;
	const char *name;
} own_limits[] = {
	{ RLIMIT_NOFILE, "RLIMIT_NOFILE" }, { RLIMIT_FSIZE, "RLIMIT_FSIZE" }, { RLIMIT_AS, "RLIMIT_AS" },
	{ RLIMIT_DATA, "RLIMIT_DATA" },	    { RLIMIT_STACK, "RLIMIT_STACK" }, { RLIMIT_NPROC, "RLIMIT_NPROC" },
	{ RLIMIT_CPU, "RLIMIT_CPU" },
};
_Static_assert(ARRAY_SIZE(own_limits) == ARRAY_SIZE(((struct run *)0)->own_limits), "struct run keeps each of them");

/* Before the guard's end: each soft limit raised to its hard one (the
 * run is over, nothing inherits them but stockade's own git), so that a
 * caller's low descriptor limit does not leave a hand-off planted. One
 * lowered below what stockade started with, by anyone, and not raised
 * back: said, and false; the guard still does what it can. */
static bool restore_own_limits(const struct rlimit before[])
{
	bool ok = true;
	for (size_t i = 0; i < ARRAY_SIZE(own_limits); i++) {
		struct rlimit now;
		if (getrlimit(own_limits[i].resource, &now) < 0)
			continue;
		if (now.rlim_cur != now.rlim_max) {
			struct rlimit raised = { .rlim_cur = now.rlim_max, .rlim_max = now.rlim_max };
			if (setrlimit(own_limits[i].resource, &raised) == 0)
				now = raised;
		}
		if (now.rlim_cur >= before[i].rlim_cur)
			continue;
		log_error("stockade's own %s was lowered during the run (to %llu, from %llu): the guard may not undo everything",
			  own_limits[i].name, (unsigned long long)now.rlim_cur, (unsigned long long)before[i].rlim_cur);
		ok = false;
	}
	return ok;
}

/* The guard's baselines, a killed run undone first; said, and failed on. */
int run_begin_guard(struct run *r)
{
	if (r->n_guards)
		return 0;
	/* stockade's own limits, as the run starts: the guard's end checks
	 * them (restore_own_limits). */
	for (size_t i = 0; i < ARRAY_SIZE(own_limits); i++)
		if (getrlimit(own_limits[i].resource, &r->own_limits[i]) < 0)
			r->own_limits[i] = (struct rlimit){ 0, 0 };
	struct guard_options areas[RUN_GUARD_AREAS] = { 0 };
	_cleanup_strv_ char **writable = run_writable_trees(r->p);
	size_t n = run_guard_areas(r->p, writable, areas);
	for (size_t i = 0; i < n; i++) {
		struct guard_report gr = { 0 };
		struct guard_failure gf = { 0 };
		int e = guard_begin(&areas[i], &r->guards[i], &gr, &gf);
		say_guard_report(&gr, areas[i].gitdir_only ? areas[i].workspace : NULL, r->p, r->rep);
		guard_report_free(&gr);
		if (e < 0)
			say_guard_failure(&gf, e, areas[i].workspace, false);
		guard_failure_free(&gf);
		if (e < 0)
			return e;
		r->n_guards = i + 1;
	}
	return 0;
}

/* A session's guard that cannot watch, or stopped: said once, for it
 * costs each command's check a look at every directory, not safety. */
static void say_guard_unwatched(const char *workspace, int err, bool stopped)
{
	log_note("the guard %s '%s' (%s): after each command of the session it looks at every directory of it, "
		 "as after a run",
		 stopped ? "stopped watching" : "cannot watch", workspace, strerror(-err));
	if (err == -ENOSPC)
		log_hint("out of inotify watches: raise fs.inotify.max_user_watches (sysctl), then start the session again");
	else if (err == -EMFILE)
		log_hint("out of inotify instances: raise fs.inotify.max_user_instances (sysctl), or stop another session");
}

/* One guard of a session checked (guard_check): said, and whether the
 * undo left something. */
static bool check_guard(struct run *r, size_t i, const struct guard_options *area, unsigned flags)
{
	struct guard_report gr = { 0 };
	struct guard_failure gf = { 0 };
	int e = guard_check(r->guards[i], flags, &gr, &gf);
	/* What cannot be kept is said after each command; not again each
	 * time the watch wakes. */
	if (flags & GUARD_CHECK_IF_SEEN) {
		strv_free(gr.unguarded);
		gr.unguarded = NULL;
	}
	say_guard_report(&gr, area->gitdir_only ? area->workspace : NULL, r->p, r->rep);
	if (gr.watch_stopped)
		say_guard_unwatched(area->workspace, gr.watch_stopped, true);
	bool failed = e < 0 || gr.cleanup_failed;
	guard_report_free(&gr);
	if (e < 0)
		say_guard_failure(&gf, e, area->workspace, true);
	guard_failure_free(&gf);
	return failed;
}

int run_recheck_guard(struct run *r)
{
	/* Every process of the command is gone (what else the session left
	 * running goes on): what changed since the guard began is undone,
	 * each guard kept, with its baseline and its watch. The holder's
	 * limits once: no process of the jail can name it (the pid
	 * namespace, or the supervisor's ESRCH), so only the person could
	 * lower them again. */
	bool failed = false;
	if (!r->own_limits_raised) {
		failed = !restore_own_limits(r->own_limits);
		r->own_limits_raised = !failed;
	}
	struct guard_options areas[RUN_GUARD_AREAS] = { 0 };
	run_guard_areas(r->p, NULL, areas);
	for (size_t i = 0; i < r->n_guards; i++)
		failed |= check_guard(r, i, &areas[i], 0);
	if (r->guard_failed_between) {
		/* said when it happened, and to the next exec as it began */
		log_error("between the session's commands the guard could not undo everything a process of the session "
			  "changed in the trust hand-offs (said above, as this command began)");
		r->guard_failed_between = false;
		failed = true;
	}
	return failed ? -1 : 0;
}

void run_watch_guard(struct run *r)
{
	struct guard_options areas[RUN_GUARD_AREAS] = { 0 };
	run_guard_areas(r->p, NULL, areas);
	for (size_t i = 0; i < r->n_guards; i++) {
		int e = guard_watch(r->guards[i]);
		if (e < 0)
			say_guard_unwatched(areas[i].workspace, e, false);
	}
}

size_t run_guard_pollfds(const struct run *r, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n_guards && n < max; i++) {
		int fd = guard_watch_fd(r->guards[i]);
		if (fd >= 0)
			fds[n++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	return n;
}

void run_guard_watched(struct run *r)
{
	struct guard_options areas[RUN_GUARD_AREAS] = { 0 };
	run_guard_areas(r->p, NULL, areas);
	for (size_t i = 0; i < r->n_guards; i++)
		if (guard_watch_fd(r->guards[i]) >= 0 && check_guard(r, i, &areas[i], GUARD_CHECK_IF_SEEN))
			r->guard_failed_between = true;
}

int run_end_guard(struct run *r, int status)
{
	/* Every process of the run is gone: the guard undoes what it changed,
	 * in the workspace and in a git directory around it, with stockade's
	 * own limits checked first (fails closed: 122). */
	if (!restore_own_limits(r->own_limits) && status != EXIT_STOCKADE)
		status = EXIT_UNDO_FAILED;
	struct guard_options areas[RUN_GUARD_AREAS] = { 0 };
	run_guard_areas(r->p, NULL, areas);
	for (size_t i = 0; i < r->n_guards; i++) {
		struct guard_report gr = { 0 };
		struct guard_failure gf = { 0 };
		int e = guard_end(r->guards[i], &gr, &gf);
		say_guard_report(&gr, areas[i].gitdir_only ? areas[i].workspace : NULL, r->p, r->rep);
		/* The command ran; what it left could not all be undone: not
		 * its 0, whatever it was (stockade.1, EXIT STATUS). */
		if ((e < 0 || gr.cleanup_failed) && status != EXIT_STOCKADE)
			status = EXIT_UNDO_FAILED;
		guard_report_free(&gr);
		if (e < 0)
			say_guard_failure(&gf, e, areas[i].workspace, true);
		guard_failure_free(&gf);
		guard_free(r->guards[i]);
		r->guards[i] = NULL;
	}
	r->n_guards = 0;
	return status;
}
