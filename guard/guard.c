#include "guard/guard.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "guard/internal.h"
#include "policy/report.h"
#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"
#include "lib/fs.h"

/* ---------------------------------------------------------------------
 * The state directory of one workspace, state_dir/guard/<hash>/: the
 * manifest, objects/, and lock.
 *
 * lock is at once the mutex and the register of runs under way, with
 * open file description locks (F_OFD_*), which belong to an open file and
 * vanish with it, however its process ended:
 *   byte 0       the mutex, held for the length of a begin or an end;
 *   byte n >= 1  a slot, held by one run from its begin to its end.
 * "Every other run is over" is then "no byte past 0 is locked but by me",
 * one F_OFD_GETLK: a killed run leaves nothing to clean up, and a reused
 * pid cannot pass for a live run.
 *
 * A lock cannot tell that a run began and never ended; the first byte of
 * the file, the run mark, does: '1' from a begin on a clean baseline
 * until an end that finds no other run under way, then '0' (no byte: a
 * new file, clean). A mark with no run under way is a killed run, undone
 * by the next begin. It is one byte written in place; with it, a run in
 * an unchanged workspace writes nothing else to the state directory.
 *
 * The descriptor is O_CLOEXEC, so the command does not hold it. What
 * stockade forks without exec (the namespace jail's init) shares it, and
 * dies with stockade.
 * ------------------------------------------------------------------ */

#define SLOT_MAX 4096

/* Opens a private directory, made when missing: the state directory
 * itself (at = AT_FDCWD: every component opened without following a
 * symlink, for the path is the canonical one the policy checked, no part
 * of it writable by the run, and a link put on the way since cannot lead
 * elsewhere), or one in it. */
static int state_open(int at, const char *dir, int *ret_dirfd)
{
	int fd = open_nofollow(at, dir, O_RDONLY | O_DIRECTORY, 0, 0);
	if (fd == -ENOENT) {
		int r = at == AT_FDCWD ? mkdir_private(dir, geteuid()) : mkdirat(at, dir, 0700) < 0 && errno != EEXIST ? -errno : 0;
		if (r < 0)
			return r;
		fd = open_nofollow(at, dir, O_RDONLY | O_DIRECTORY, 0, 0);
	}
	if (fd < 0)
		return fd;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	/* As mkdir_private() checks: a directory someone else owns or may
	 * write could have its baseline swapped under us. */
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	*ret_dirfd = fd;
	return 0;
}

static int lock_open(int dirfd)
{
	int fd = openat(dirfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

static int lock_range(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	while (fcntl(fd, cmd, &fl) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int mutex_take(int lockfd)
{
	return lock_range(lockfd, F_OFD_SETLKW, F_WRLCK, 0, 1);
}

static void mutex_drop(int lockfd)
{
	(void)lock_range(lockfd, F_OFD_SETLK, F_UNLCK, 0, 1);
}

/* Whether a slot is locked through another open file: a run under way
 * other than the caller's. */
static int runs_others(int lockfd, bool *ret)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1, .l_len = 0 };
	if (fcntl(lockfd, F_OFD_GETLK, &fl) < 0)
		return -errno;
	*ret = fl.l_type != F_UNLCK;
	return 0;
}

/* The first free slot, locked. Under the mutex, so no one races for it. */
static int slot_take(int lockfd)
{
	for (off_t k = 1; k <= SLOT_MAX; k++) {
		int r = lock_range(lockfd, F_OFD_SETLK, F_WRLCK, k, 1);
		if (r == 0)
			return 0;
		if (r != -EAGAIN && r != -EACCES)
			return r;
	}
	return -EBUSY;
}

static int mark_read(int lockfd, bool *ret)
{
	char c;
	ssize_t n = pread(lockfd, &c, 1, 0);
	if (n < 0)
		return -errno;
	/* anything but a clean mark counts as a run that never ended */
	*ret = n == 1 && c != '0';
	return 0;
}

static int mark_write(int lockfd, bool set)
{
	char c = set ? '1' : '0';
	ssize_t n = pwrite(lockfd, &c, 1, 0);
	return n == 1 ? 0 : n < 0 ? -errno : -EIO;
}

struct guard {
	struct guard_options o;	/* with copies of every string */
	char *dir;		/* state_dir/guard/<hash of the workspace> */
	int statefd;		/* state_dir, as opened at the begin */
	int lockfd;		/* lock, holding this run's slot; -1 once ended */
	char **handoffs;	/* the baseline's roots the namespace jail binds read-only */
	struct index *ix;	/* the index as the begin read it (or as the watch or the last
				 * check keeps it), or NULL */
	struct handoff_repos repos;	/* from ix, for the checks */
	bool have_repos;
	struct watch *w;	/* guard_watch's, or NULL */
	/* The workspace and the state directory guard_watch opened, kept
	 * for the checks: the directories the watch is on, without their
	 * look-ups at each command; -1 without a watch. */
	int wfd, dirfd;
};

static void kept_close(struct guard *g)
{
	if (g->wfd >= 0)
		close(g->wfd);
	if (g->dirfd >= 0)
		close(g->dirfd);
	g->wfd = g->dirfd = -1;
}

/* The repositories of g->ix, kept until it changes. */
static const struct handoff_repos *guard_repos(struct guard *g)
{
	if (!g->have_repos) {
		handoff_repos_free(&g->repos);
		/* none for a git directory around the workspace, nor for a
		 * run that joined another's baseline and was never refreshed */
		if (g->ix)
			index_repos(g->ix, &g->repos);
		g->have_repos = true;
	}
	return &g->repos;
}

/* g->ix replaced by ix (taken). */
static void guard_set_index(struct guard *g, struct index *ix)
{
	if (!g->ix)
		g->ix = xcalloc(1, sizeof(*g->ix));
	index_free(g->ix);
	*g->ix = *ix;
	*ix = (struct index){ 0 };
	g->have_repos = false;
}

static void options_copy(struct guard_options *dst, const struct guard_options *o)
{
	*dst = (struct guard_options){
		.workspace = xstrdup(o->workspace),
		.state_dir = xstrdup(o->state_dir),
		.user_home = o->user_home ? xstrdup(o->user_home) : NULL,
		.file_cap = o->file_cap,
		.total_cap = o->total_cap,
		.gitdir_only = o->gitdir_only,
		.knows = o->knows,
	};
	if (o->extra) {
		char **extra = strv_new();
		for (size_t i = 0; o->extra[i]; i++)
			strv_add(&extra, o->extra[i]);
		dst->extra = extra;
	}
	if (o->writable) {
		char **w = strv_new();
		for (size_t i = 0; o->writable[i]; i++)
			strv_add(&w, o->writable[i]);
		dst->writable = w;
	}
}

static void options_done(struct guard_options *o)
{
	free((char *)o->workspace);
	free((char *)o->state_dir);
	free((char *)o->user_home);
	strv_free((char **)o->extra);
	strv_free((char **)o->writable);
}

void guard_free(struct guard *g)
{
	if (!g)
		return;
	/* g->lockfd stays open on purpose: its slot is the run's
	 * registration, dropped when this process exits. */
	options_done(&g->o);
	strv_free(g->handoffs);
	if (g->ix) {
		index_free(g->ix);
		free(g->ix);
	}
	handoff_repos_free(&g->repos);
	watch_free(g->w);
	kept_close(g);
	if (g->statefd >= 0)
		close(g->statefd);
	free(g->dir);
	free(g);
}

static void report_unguarded_from(struct guard_report *rep, const struct baseline *b)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct entry *e = &b->v[i];
		if ((e->type == ENTRY_REG && !(e->flags & ENTRY_COPIED)) || (e->flags & ENTRY_UNLISTED))
			report_unguarded(rep, e->path);
	}
}

/* Opened for reading, not O_PATH: the walk lists it through this very
 * descriptor. */
static int open_workspace(const struct guard_options *o)
{
	if (!o || !path_is_absolute(o->workspace))
		return -EINVAL;
	int fd = open(o->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int options_check(const struct guard_options *o)
{
	if (!o || !o->knows || !path_is_absolute(o->workspace) || !path_is_absolute(o->state_dir))
		return -EINVAL;
	for (size_t i = 0; o->extra && o->extra[i]; i++)
		if (handoff_relpath_valid(o->extra[i]) < 0)
			return -EINVAL;
	return 0;
}

/* This run's slot, and the mark that says a run began. */
static int register_run(int lockfd, bool marked)
{
	int r = slot_take(lockfd);
	if (r == 0 && !marked)
		r = mark_write(lockfd, true);
	return r;
}

int guard_fail(struct guard_failure *f, int r, enum guard_step step, char *path)
{
	if (f && r < 0) {
		free(f->path);
		*f = (struct guard_failure){ .step = step, .path = path };
	} else {
		free(path);
	}
	return r;
}

static char *state_path(const char *dir, const char *name)
{
	return path_join(dir, name);
}

/* Where the repositories are: the index as it is, or brought up to date
 * (and stored, when that changed it). have: the index this run read at
 * its begin, or NULL to read it now. A first run lists the whole tree;
 * an index that cannot be stored costs the next run the same again. */
static int find_repos(const struct guard_options *o, int wfd, int dirfd, const struct index *have, bool refresh,
		      struct index *ret)
{
	const char *workspace = o->workspace;
	if (o->gitdir_only) {
		*ret = (struct index){ 0 };
		return 0;
	}
	struct index old = { 0 };
	int r = have ? 0 : index_load(dirfd, workspace, &old);
	if (r == 0 && !refresh) {
		*ret = old;
		return 0;
	}
	bool changed = false;
	r = index_refresh(wfd, workspace, have ? have : r == 0 ? &old : NULL, NULL, ret, &changed);
	index_free(&old);
	if (r == 0 && changed)
		(void)index_store(dirfd, ret);
	return r;
}

static char **roots_paths(const struct handoffs *roots)
{
	char **v = strv_new();
	for (size_t i = 0; i < roots->n; i++)
		strv_add(&v, roots->v[i].path);
	return v;
}

/* The roots the namespace jail binds read-only: all but a rebase's
 * state, which git in the jail writes at every step (it is vetted at the
 * end instead). */
static char **bound_paths(const struct handoffs *roots)
{
	char **v = strv_new();
	for (size_t i = 0; i < roots->n; i++)
		if (roots->v[i].kind != HANDOFF_SEQUENCE)
			strv_add(&v, roots->v[i].path);
	return v;
}

/* Under the mutex: the baseline this run begins with, and its slot. */
static int begin_locked(const struct guard_options *o, const char *dir, int wfd, int statefd, int dirfd, int lockfd,
			struct guard_report *rep, char ***ret_roots, struct index **ret_ix, struct guard_failure *f)
{
	struct objdir od = { .dirfd = dirfd, .fd = -1 };
	struct baseline prev = { 0 }, next = { 0 };
	struct index ix = { 0 };
	struct handoff_repos repos = { 0 };
	struct wbuf raw = { 0 };
	char *failing = NULL;
	bool marked = false, others = false;
	int r = mark_read(lockfd, &marked);
	if (r == 0)
		r = runs_others(lockfd, &others);
	if (r < 0)
		return guard_fail(f, r, GUARD_STEP_STATE, state_path(dir, "lock"));
	int mr = manifest_load(dirfd, &prev, &raw);
	if (mr == 0 && !streq(prev.workspace, o->workspace)) {
		baseline_free(&prev);
		mr = -EBADMSG;
	}
	if (mr < 0 && mr != -ENOENT && mr != -EBADMSG) {
		r = guard_fail(f, mr, GUARD_STEP_BASELINE, state_path(dir, "manifest"));
		goto out_free;
	}

	if (others && mr == 0) {
		/* A run under way may have changed things already: its
		 * baseline is the only true one. */
		if ((r = register_run(lockfd, marked)) < 0) {
			guard_fail(f, r, GUARD_STEP_STATE, state_path(dir, "lock"));
			goto out_free;
		}
		report_unguarded_from(rep, &prev);
		rep->n_files = baseline_files(&prev);
		*ret_roots = bound_paths(&prev.roots);
		goto out_free;
	}
	if ((others || marked) && mr < 0) {
		/* Runs began, and there is no baseline to undo them with:
		 * refuse rather than take what they left as the new one. */
		r = guard_fail(f, -EBADMSG, GUARD_STEP_BASELINE, state_path(dir, "manifest"));
		goto out_free;
	}
	/* A run that never ended may have made repositories anywhere: the
	 * index is brought up to date first. Otherwise what changed since
	 * the last run's end is the user's (stockade.1, THE GUARD). */
	if ((r = find_repos(o, wfd, dirfd, NULL, marked, &ix)) < 0) {
		guard_fail(f, r, GUARD_STEP_WORKSPACE, xstrdup(o->workspace));
		goto out_free;
	}
	if (marked) {
		/* every run is over, and one never ended: undo what it left */
		index_repos(&ix, &repos);
		r = undo_all(o, wfd, statefd, &repos, ix.too_deep, &od, &prev, 0, rep, &failing, NULL);
		handoff_repos_free(&repos);
		if (r < 0) {
			guard_fail(f, r, GUARD_STEP_UNDO, TAKE_PTR(failing));
			goto out_free;
		}
		free(failing);
	}

	index_repos(&ix, &repos);
	r = baseline_take(o, wfd, &repos, &od, mr == 0 ? &prev : NULL, &next, rep, &failing);
	if (r < 0) {
		guard_fail(f, r, GUARD_STEP_SNAPSHOT, TAKE_PTR(failing));
		goto out_free;
	}
	free(failing);
	if (mr < 0 || !manifest_current(&prev, &raw, &next)) {
		r = manifest_store(dirfd, &next);
		if (r < 0) {
			guard_fail(f, r, GUARD_STEP_BASELINE, state_path(dir, "manifest"));
			goto out_free;
		}
		objects_collect(&od, &next);
	}
	/* The mark last: a begin killed before it has run nothing. */
	if ((r = register_run(lockfd, marked)) < 0) {
		guard_fail(f, r, GUARD_STEP_STATE, state_path(dir, "lock"));
		goto out_free;
	}
	rep->n_files = baseline_files(&next);
	*ret_roots = bound_paths(&next.roots);
	/* kept for the end: its refresh starts from it */
	*ret_ix = xmalloc(sizeof(ix));
	**ret_ix = ix;
	ix = (struct index){ 0 };
out_free:
	index_free(&ix);
	handoff_repos_free(&repos);
	free(raw.p);
	baseline_free(&prev);
	baseline_free(&next);
	objdir_close(&od);
	return r;
}

/* The workspace, its state directory (in the state directory at
 * statefd) and the lock, opened; the mutex taken. */
static int open_state(const struct guard_options *o, int statefd, const char *dir, int *wfd, int *dirfd,
		      int lockfd_held, int *ret_lockfd, struct guard_failure *f)
{
	*wfd = open_workspace(o);
	if (*wfd < 0)
		return guard_fail(f, *wfd, GUARD_STEP_WORKSPACE, xstrdup(o->workspace));
	_cleanup_close_ int gfd = -1;
	const char *key = strrchr(dir, '/') + 1;
	int r = state_open(statefd, "guard", &gfd);
	if (r == 0)
		r = state_open(gfd, key, dirfd);
	if (r < 0)
		return guard_fail(f, r, GUARD_STEP_STATE, xstrdup(dir));
	int lockfd = lockfd_held >= 0 ? lockfd_held : lock_open(*dirfd);
	if (lockfd < 0)
		return guard_fail(f, lockfd, GUARD_STEP_STATE, state_path(dir, "lock"));
	*ret_lockfd = lockfd;
	r = mutex_take(lockfd);
	if (r < 0)
		return guard_fail(f, r, GUARD_STEP_STATE, state_path(dir, "lock"));
	return 0;
}

/* state_dir/guard/<hash of the workspace> */
static char *workspace_dir(const char *state_dir, const char *workspace)
{
	_cleanup_free_ char *gdir = path_join(state_dir, "guard");
	char hex[17];
	return xstrcat3(gdir, "/", fmt_x64(hex, fnv1a(FNV_INIT, workspace, strlen(workspace))));
}

int guard_workspace_busy(const char *state_dir, const char *workspace, bool *ret)
{
	*ret = false;
	_cleanup_free_ char *dir = workspace_dir(state_dir, workspace);
	_cleanup_close_ int dirfd = open_nofollow(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY, 0, 0);
	if (dirfd == -ENOENT)
		return 0;
	if (dirfd < 0)
		return dirfd;
	_cleanup_close_ int lockfd = openat(dirfd, "lock", O_RDWR | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (lockfd < 0)
		return errno == ENOENT ? 0 : -errno;
	return runs_others(lockfd, ret);
}

int guard_begin(const struct guard_options *o, struct guard **ret, struct guard_report *ret_report,
		struct guard_failure *f)
{
	*ret_report = (struct guard_report){ 0 };
	*ret = NULL;
	if (f)
		*f = (struct guard_failure){ 0 };
	int r = options_check(o);
	if (r < 0)
		return guard_fail(f, r, GUARD_STEP_WORKSPACE, o && o->workspace ? xstrdup(o->workspace) : NULL);
	_cleanup_free_ char *dir = workspace_dir(o->state_dir, o->workspace);
	/* On failure, closing the lock drops the mutex and any slot: nothing
	 * has forked since it was opened. */
	_cleanup_close_ int statefd = -1, wfd = -1, dirfd = -1, lockfd = -1;
	r = state_open(AT_FDCWD, o->state_dir, &statefd);
	if (r < 0)
		return guard_fail(f, r, GUARD_STEP_STATE, xstrdup(o->state_dir));
	r = open_state(o, statefd, dir, &wfd, &dirfd, -1, &lockfd, f);
	if (r < 0)
		return r;
	_cleanup_strv_ char **roots = NULL;
	struct index *ix = NULL;
	r = begin_locked(o, dir, wfd, statefd, dirfd, lockfd, ret_report, &roots, &ix, f);
	if (r < 0)
		return r;
	mutex_drop(lockfd);

	struct guard *g = xcalloc(1, sizeof(*g));
	options_copy(&g->o, o);
	g->dir = TAKE_PTR(dir);
	g->statefd = TAKE_FD(statefd);
	g->lockfd = TAKE_FD(lockfd);
	g->handoffs = TAKE_PTR(roots);
	g->ix = ix;
	g->wfd = g->dirfd = -1;
	*ret = g;
	return 0;
}

/* The baseline, from the manifest (the caller frees it). */
static int baseline_load(const struct guard *g, int dirfd, struct baseline *b, struct guard_failure *f)
{
	struct wbuf raw = { 0 };
	int r = manifest_load(dirfd, b, &raw);
	free(raw.p);
	if (r == 0 && !streq(b->workspace, g->o.workspace))
		r = -EBADMSG;
	if (r < 0)
		return guard_fail(f, r, GUARD_STEP_BASELINE, state_path(g->dir, "manifest"));
	return 0;
}

/* Under the mutex, the one undo of guard_end and guard_check: every
 * change since the baseline b, with the repositories where repos says;
 * the hand-offs looked at in *ret_roots (may be NULL). */
static int undo_since_begin(struct guard *g, int wfd, int dirfd, const struct handoff_repos *repos,
			    char *const *too_deep, const struct baseline *b, unsigned undo_flags,
			    struct guard_report *rep, struct guard_failure *f, char ***ret_roots)
{
	struct objdir od = { .dirfd = dirfd, .fd = -1 };
	char *failing = NULL;
	int r = undo_all(&g->o, wfd, g->statefd, repos, too_deep, &od, b, undo_flags, rep, &failing, ret_roots);
	guard_fail(f, r, GUARD_STEP_UNDO, failing);
	rep->n_files = baseline_files(b);
	objdir_close(&od);
	return r;
}

int guard_end(struct guard *g, struct guard_report *ret_report, struct guard_failure *f)
{
	*ret_report = (struct guard_report){ 0 };
	if (f)
		*f = (struct guard_failure){ 0 };
	if (!g)
		return -EINVAL;
	/* the run's last look is the whole index: no event is trusted with
	 * what the next run begins from */
	watch_free(g->w);
	g->w = NULL;
	kept_close(g);
	_cleanup_close_ int wfd = -1, dirfd = -1, spare = -1;
	int lockfd = -1;
	/* an end called again after one that succeeded holds no slot */
	int r = open_state(&g->o, g->statefd, g->dir, &wfd, &dirfd, g->lockfd, &lockfd, f);
	if (lockfd >= 0 && lockfd != g->lockfd)
		spare = lockfd;
	if (r < 0)
		return r;

	struct baseline b = { 0 };
	r = baseline_load(g, dirfd, &b, f);
	if (r == 0) {
		/* Re-discovered inside: a repository made during the run has
		 * hand-offs of its own, and may lie anywhere. */
		struct index ix = { 0 };
		r = find_repos(&g->o, wfd, dirfd, g->ix, true, &ix);
		if (r < 0) {
			guard_fail(f, r, GUARD_STEP_WORKSPACE, xstrdup(g->o.workspace));
		} else {
			struct handoff_repos repos;
			index_repos(&ix, &repos);
			r = undo_since_begin(g, wfd, dirfd, &repos, ix.too_deep, &b, 0, ret_report, f, NULL);
			handoff_repos_free(&repos);
		}
		index_free(&ix);
		ret_report->n_files = baseline_files(&b);
	}
	/* The last run out clears the mark. When something could not be
	 * undone, the slot and the mark stay, so that the next run tries
	 * again once this process is gone. */
	bool others = true;
	if (r == 0)
		r = guard_fail(f, runs_others(lockfd, &others), GUARD_STEP_STATE, state_path(g->dir, "lock"));
	if (r == 0 && !others)
		r = guard_fail(f, mark_write(lockfd, false), GUARD_STEP_STATE, state_path(g->dir, "lock"));
	if (r == 0 && g->lockfd >= 0) {
		/* Unlocked, not only closed: a process forked during the run
		 * may share the open file, and with it the slot. */
		(void)lock_range(g->lockfd, F_OFD_SETLK, F_UNLCK, 0, 0);
		close(g->lockfd);
		g->lockfd = -1;
	} else {
		mutex_drop(lockfd);
	}
	baseline_free(&b);
	return r;
}

int guard_watch(struct guard *g)
{
	if (!g || g->lockfd < 0)
		return -EINVAL;
	if (g->w)
		return 0;
	struct watch *w = NULL;
	int r = watch_new(&w);
	if (r < 0)
		return r;
	_cleanup_close_ int wfd = -1, dirfd = -1;
	int lockfd = -1;
	struct guard_failure f = { 0 };
	r = open_state(&g->o, g->statefd, g->dir, &wfd, &dirfd, g->lockfd, &lockfd, &f);
	guard_failure_free(&f);
	if (r < 0) {
		watch_free(w);
		return r;
	}
	/* Every directory listed afresh, each watched before it is listed:
	 * from here on the index is the workspace's as the events say. (A
	 * git directory around the workspace has no index: only its
	 * hand-offs are watched.) */
	if (!g->o.gitdir_only) {
		struct index ix = { 0 };
		r = watch_refresh(w, wfd, g->o.workspace, NULL, &ix);
		if (r == 0)
			guard_set_index(g, &ix);
	}
	struct baseline b = { 0 };
	if (r == 0)
		r = baseline_load(g, dirfd, &b, NULL);
	if (r == 0)
		watch_sync(w, wfd, roots_paths(&b.roots), &b);
	baseline_free(&b);
	mutex_drop(lockfd);
	if (r < 0) {
		watch_free(w);
		return r;
	}
	g->w = w;
	g->wfd = TAKE_FD(wfd);
	g->dirfd = TAKE_FD(dirfd);
	return 0;
}

int guard_watch_fd(const struct guard *g)
{
	return g ? watch_fd(g->w) : -1;
}

/* Under the mutex: the index brought up to date from the watch's events
 * (or whole, where events were lost); whether they said to look. A watch
 * that fails stops, said in the report. */
static int check_watched(struct guard *g, int wfd, struct guard_report *rep, bool *ret_seen)
{
	int r = watch_read(g->w);
	/* a git directory around the workspace has no index: lost events
	 * cost it nothing, for every check looks at all its hand-offs */
	if (r == 0 && watch_overflowed(g->w) && !g->o.gitdir_only) {
		struct index ix = { 0 };
		r = watch_refresh(g->w, wfd, g->o.workspace, g->ix, &ix);
		if (r == 0)
			guard_set_index(g, &ix);
	} else if (r == 0) {
		bool changed = false;
		r = watch_apply(g->w, wfd, g->o.gitdir_only ? NULL : g->ix, g->o.knows, &changed);
		if (changed)
			g->have_repos = false;
	}
	if (r < 0) {
		rep->watch_stopped = r;
		watch_free(g->w);
		g->w = NULL;
		*ret_seen = true;
		return 0;
	}
	*ret_seen = watch_seen(g->w);
	return 0;
}

int guard_check(struct guard *g, unsigned flags, struct guard_report *ret_report, struct guard_failure *f)
{
	*ret_report = (struct guard_report){ 0 };
	if (f)
		*f = (struct guard_failure){ 0 };
	/* an ended run has nothing to keep */
	if (!g || g->lockfd < 0)
		return -EINVAL;
	if ((flags & GUARD_CHECK_IF_SEEN) && !g->w)
		return 0;
	_cleanup_close_ int own_wfd = -1, own_dirfd = -1;
	int wfd = g->wfd, dirfd = g->dirfd, lockfd = g->lockfd, r;
	if (wfd >= 0) {
		r = mutex_take(lockfd);
		if (r < 0)
			return guard_fail(f, r, GUARD_STEP_STATE, state_path(g->dir, "lock"));
	} else {
		r = open_state(&g->o, g->statefd, g->dir, &own_wfd, &own_dirfd, g->lockfd, &lockfd, f);
		if (r < 0)
			return r;
		wfd = own_wfd;
		dirfd = own_dirfd;
	}
	bool seen = false;
	if (g->w)
		(void)check_watched(g, wfd, ret_report, &seen);
	if (!g->w) {
		/* as guard_end looks: every directory's change time */
		struct index ix = { 0 };
		r = find_repos(&g->o, wfd, dirfd, g->ix, true, &ix);
		if (r < 0) {
			guard_fail(f, r, GUARD_STEP_WORKSPACE, xstrdup(g->o.workspace));
			goto out;
		}
		guard_set_index(g, &ix);
	}
	if ((flags & GUARD_CHECK_IF_SEEN) && !seen)
		goto out;

	struct baseline b = { 0 };
	r = baseline_load(g, dirfd, &b, f);
	if (r == 0) {
		char **roots = NULL;
		/* between commands a git config being written is left for
		 * the check its rename brings; after one, it is waited for
		 * as guard_end waits */
		r = undo_since_begin(g, wfd, dirfd, guard_repos(g), g->ix ? g->ix->too_deep : NULL, &b,
				     (flags & GUARD_CHECK_IF_SEEN) ? UNDO_SKIP_LOCKED : 0, ret_report, f,
				     g->w ? &roots : NULL);
		/* what the events are about from now on, when that may have
		 * changed: a file put back is a new inode, a new repository
		 * has hand-offs of its own */
		if (g->w && (seen || ret_report->n_changes || watch_roots_differ(g->w, roots)))
			watch_sync(g->w, wfd, TAKE_PTR(roots), &b);
		strv_free(roots);
	}
	baseline_free(&b);
out:
	mutex_drop(lockfd);
	return r;
}

void guard_describe(bool bound_readonly, struct report *rep)
{
	if (bound_readonly)
		report_enforced(rep, "trust hand-offs: those that exist are read-only during the run (binds); one made "
				     "during it is in effect until the run ends, when the guard undoes it");
	else
		report_enforced(rep, "trust hand-offs: a change is in effect until the run ends, when the guard undoes it "
				     "(Landlock cannot make a read-only hole in the writable workspace)");
}

char *const *guard_handoffs(const struct guard *g)
{
	return g ? g->handoffs : NULL;
}

int guard_list_handoffs(const struct guard_options *o, char ***ret)
{
	*ret = NULL;
	int r = options_check(o);
	if (r < 0)
		return r;
	_cleanup_close_ int wfd = open_workspace(o);
	if (wfd < 0)
		return wfd;
	/* The index, where there is one, read and never written: explain
	 * makes nothing. Without one, the tree is walked. */
	_cleanup_free_ char *dir = workspace_dir(o->state_dir, o->workspace);
	_cleanup_close_ int dirfd = open_nofollow(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY, 0, 0);
	struct index ix = { 0 };
	struct handoff_repos repos = { 0 };
	bool have = o->gitdir_only || (dirfd >= 0 && index_load(dirfd, o->workspace, &ix) == 0);
	if (have)
		index_repos(&ix, &repos);
	struct handoff_scan scan = guard_scan(o, have ? &repos : NULL);
	struct parent_cache parents = PARENT_CACHE_INIT(wfd);
	struct handoffs found;
	r = o->knows->discover(&scan, wfd, &parents, &found);
	parent_cache_done(&parents);
	index_free(&ix);
	handoff_repos_free(&repos);
	if (r < 0)
		return r;
	*ret = roots_paths(&found);
	handoffs_free(&found);
	return 0;
}

void guard_failure_free(struct guard_failure *f)
{
	if (!f)
		return;
	free(f->path);
	*f = (struct guard_failure){ 0 };
}

void guard_report_free(struct guard_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_changes; i++) {
		free(r->changes[i].path);
		free(r->changes[i].quarantined);
		free(r->changes[i].id);
		free(r->changes[i].old_id);
		strv_free(r->changes[i].dropped);
	}
	free(r->changes);
	strv_free(r->unguarded);
	strv_free(r->unlinked);
	*r = (struct guard_report){ 0 };
}

const char *guard_change_kind_name(enum guard_change_kind k)
{
	switch (k) {
	case GUARD_CHANGED:
		return "changed";
	case GUARD_CREATED:
		return "created";
	case GUARD_REMOVED:
		return "removed";
	case GUARD_UNRESTORABLE:
		return "unrestorable";
	case GUARD_VETTED:
		return "settings dropped";
	}
	return "unknown";
}

