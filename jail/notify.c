#include "jail/notify.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "jail/owed.h"
#include "jail/say.h"
#include "lib/path.h"
#include "lib/util.h"

char **notify_bound_handoffs(const struct plan *pl, const struct policy *p)
{
	char **v = strv_new();
	for (size_t i = 0; i < pl->mounts.n_entries; i++) {
		const struct mount_entry *m = &pl->mounts.entries[i];
		if (m->kind != MOUNT_BIND || !(m->flags & MOUNT_READONLY))
			continue;
		const struct rule *h = supervise_rename_handoff(p, m->target);
		if (h && streq(h->path, m->target))
			strv_add(&v, m->target);
	}
	return v;
}

static bool calls_files(void *data, int nr)
{
	return seccomp_files_call(nr);
}

static bool calls_openat(void *data, int nr)
{
	return nr == SYS_openat;
}

static bool calls_rename(void *data, int nr)
{
	return supervise_is_rename(nr);
}

static bool calls_connect(void *data, int nr)
{
	return nr == SYS_connect;
}

/* The landlock backend before its supervisor: the command's process, up
 * to its exec, opens and makes as it may (Landlock decides). */
static enum notif_outcome take_early_files(void *data, const struct seccomp_notif *req, int *ret_err)
{
	return seccomp_files_call(req->data.nr) && !supervise_is_shm_open(req->data.nr, (const uint64_t *)req->data.args)
		       ? NOTIF_CONTINUE
		       : NOTIF_NOT_MINE;
}

/* An open in the host's /dev/shm, named; an open in the run's own home
 * or tmp (in /dev/shm when TMPDIR is not set) is Landlock's to allow, and
 * no refusal. Landlock decides either way. */
static enum notif_outcome take_shm(void *data, const struct seccomp_notif *req, int *ret_err)
{
	const struct notify *n = data;
	if (!supervise_is_shm_open(req->data.nr, (const uint64_t *)req->data.args))
		return NOTIF_NOT_MINE;
	_cleanup_free_ char *shm = NULL;
	if (supervise_shm_path(req, &shm) && !(n->w && n->w->run_dir && path_is_beneath(shm, n->w->run_dir)))
		report_denial_ruled(n->rep, "shm", shm, "EACCES",
				    "the host's /dev/shm is not the run's on the landlock backend: POSIX semaphores and "
				    "shared memory (Python's multiprocessing) are refused there",
				    "built in: the landlock backend's filesystem rules",
				    "none on this backend, where the host's /dev/shm is shared with your other programs: "
				    "the namespace jail gives the run one of its own (stockade doctor says why it is not "
				    "used here)");
	return NOTIF_CONTINUE;
}

/* A rename onto or off a hand-off the namespace jail binds read-only is
 * named; the kernel's bind decides. */
static enum notif_outcome take_rename(void *data, const struct seccomp_notif *req, int *ret_err)
{
	const struct notify *n = data;
	if (!supervise_is_rename(req->data.nr))
		return NOTIF_NOT_MINE;
	const struct watch *w = n->w;
	_cleanup_free_ char *oldp = NULL, *newp = NULL;
	if (w && w->bound && w->bound[0] && supervise_rename_paths(req, &oldp, &newp) == 0) {
		const char *hit = NULL;
		for (size_t i = 0; !hit && w->bound[i]; i++)
			hit = path_is_beneath(newp, w->bound[i]) ? newp : path_is_beneath(oldp, w->bound[i]) ? oldp : NULL;
		if (hit)
			say_handoff_refused(w->workspace, hit, n->rep);
	}
	return NOTIF_CONTINUE;
}

/* The namespace jail's connects the filter shows (every one but an inet
 * connect): named where a socket file of the host's is missing. */
static enum notif_outcome take_connect(void *data, const struct seccomp_notif *req, int *ret_err)
{
	const struct notify *n = data;
	if (req->data.nr != SYS_connect)
		return NOTIF_NOT_MINE;
	owed_watch_connect(req, n->w ? n->w->policy : NULL, n->rep);
	return NOTIF_CONTINUE;
}

static bool calls_chmod(void *data, int nr)
{
	static const uint64_t setgid_mode[6] = { 0, S_ISGID, S_ISGID };
	return supervise_is_setgid_chmod(nr, setgid_mode);
}

/* A setgid bit alone, which the filter cannot tell a directory's from a
 * file's: carried out on a directory, refused on a file
 * (supervise/setgid.c). */
static enum notif_outcome take_setgid(void *data, const struct seccomp_notif *req, int *ret_err)
{
	const struct notify *n = data;
	if (!supervise_is_setgid_chmod(req->data.nr, (const uint64_t *)req->data.args))
		return NOTIF_NOT_MINE;
	*ret_err = supervise_setgid(n->svc.listener, req, n->rep);
	return NOTIF_ANSWER;
}

static bool calls_open(void *data, int nr)
{
	return seccomp_open_call(nr);
}

/* name_opens: an open of a hidden path, named with its rule; every open
 * goes on to the kernel, which decides (the cover, or Landlock, refuses
 * a hidden one). */
static enum notif_outcome take_open(void *data, const struct seccomp_notif *req, int *ret_err)
{
	const struct notify *n = data;
	if (!seccomp_open_call(req->data.nr))
		return NOTIF_NOT_MINE;
	if (n->w && n->w->policy)
		supervise_name_hidden_open(n->w->policy, n->rep, req, n->plan->backend == BACKEND_NAMESPACES);
	return NOTIF_CONTINUE;
}

/* Everything else: a refusal of the filter's, recorded and answered with
 * the table's errno. */
static enum notif_outcome take_refused(void *data, const struct seccomp_notif *req, int *ret_err)
{
	const struct notify *n = data;
	const struct sc_rule *rule = NULL;
	int err = seccomp_answer(n->plan, req->data.nr, (const uint64_t *)req->data.args, &rule);
	const char *name = rule ? rule->name : seccomp_syscall_name(req->data.nr);
	/* A terminal request is named: the list refuses many. */
	char ioctl_what[48];
	if (rule && streq(rule->name, "ioctl")) {
		snprintf(ioctl_what, sizeof(ioctl_what), "ioctl %s", seccomp_ioctl_name((uint32_t)req->data.args[1]));
		name = ioctl_what;
	}
	const char *why = rule ? seccomp_why(rule) : NULL;
	_cleanup_free_ char *what = xstrcat3("refused by the system call table: ", why ? why : "not on the allowlist", "");
	const char *fix = seccomp_fix(rule, n->plan->net, req->data.nr, (const uint64_t *)req->data.args);
	report_denial_ruled(n->rep, "syscall", name, strerrorname_np(err) ? strerrorname_np(err) : "?", what,
			    "built in: the seccomp allowlist", fix ? fix : "none: no option allows it (stockade.1, BACKENDS)");
	*ret_err = err;
	return NOTIF_ANSWER;
}

void notify_init(struct notify *n, int listener, const struct seccomp_plan *plan, struct supervisor *sv,
		 const struct watch *w, struct report *rep)
{
	*n = (struct notify){ .plan = plan, .w = w, .rep = rep };
	notif_service_init(&n->svc, listener);
	if (sv)
		notif_service_add_supervisor(&n->svc, sv, plan->supervise_files);
	else if (plan->supervise_files)
		notif_service_add(&n->svc, "files", calls_files, take_early_files, n);
	if (plan->backend == BACKEND_LANDLOCK)
		notif_service_add(&n->svc, "shm", calls_openat, take_shm, n);
	if (plan->backend == BACKEND_NAMESPACES) {
		notif_service_add(&n->svc, "renames", calls_rename, take_rename, n);
		notif_service_add(&n->svc, "connect", calls_connect, take_connect, n);
		notif_service_add(&n->svc, "setgid", calls_chmod, take_setgid, n);
	}
	if (plan->name_opens)
		notif_service_add(&n->svc, "hides", calls_open, take_open, n);
	notif_service_add(&n->svc, "refused", NULL, take_refused, n);
}
