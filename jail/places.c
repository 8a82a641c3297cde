#include "jail/places.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>

#include "cgroup/cgroup.h"
#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/carried.h"
#include "policy/defaults.h"
#include "policy/env.h"

static int fail(struct places_failure *f, enum places_fault fault, int err, const char *path)
{
	free(f->path);
	*f = (struct places_failure){ .fault = fault, .err = err, .path = xstrdup(path) };
	return -err;
}

void places_failure_free(struct places_failure *f)
{
	free(f->path);
	*f = (struct places_failure){ 0 };
}

static bool is_tmpfs(const char *path)
{
	struct statfs sfs;
	return statfs(path, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
}

/* Where a run's directory goes: where TMPDIR says, when you set it;
 * otherwise on a tmpfs (the namespace jail's home and tmp are tmpfs too),
 * which makes and removes them at a tenth of what a journalled file
 * system costs. */
static char *run_base(char *const *environ, uid_t uid)
{
	char buf[21];
	const char *id = fmt_u64(buf, uid);
	const char *tmp = defaults_user_var(environ, "TMPDIR");
	if (tmp)
		return xstrcat3(tmp, "/stockade-", id);
	const char *runtime = defaults_user_var(environ, "XDG_RUNTIME_DIR");
	if (runtime && is_tmpfs(runtime))
		return path_join(runtime, "stockade");
	return xstrcat3(is_tmpfs("/dev/shm") ? "/dev/shm" : "/tmp", "/stockade-", id);
}

static void add_place(struct places *pl, const char *path, unsigned flags, const char *origin)
{
	pl->rules.v = xgrow(pl->rules.v, pl->rules.n, sizeof(*pl->rules.v));
	pl->rules.v[pl->rules.n++] = (struct rule){
		.path = xstrdup(path),
		.access = ACCESS_WRITE,
		.flags = RULE_FRESH | flags,
		.source = SOURCE_DEFAULT_OF(origin),
		.origin = xstrdup(origin),
	};
}

/* stockade's own directories: the build caches (writable for every run,
 * so they must exist to be granted) and the state the guard keeps. */
static int make_own_dirs(const struct policy *p, struct places_failure *f)
{
	bool fresh = access(p->cache_dir, F_OK) < 0;
	int r = mkdir_private(p->cache_dir, p->uid);
	if (r < 0)
		return fail(f, PLACES_CACHE, -r, p->cache_dir);
	r = mkdir_private(p->state_dir, p->uid);
	if (r < 0)
		return fail(f, PLACES_STATE, -r, p->state_dir);
	for (size_t i = 0; fresh && i < defaults_n_own_caches; i++) {
		_cleanup_free_ char *dir = path_join(p->cache_dir, defaults_own_caches[i].sub);
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return fail(f, PLACES_MKDIR, errno, dir);
	}
	return 0;
}

/* Creates dir/rel's parents and a symlink at rel, one component at a time
 * and never through a symlink: a kept --home is writable by earlier runs,
 * which may have planted links to send these writes elsewhere. */
static int link_beneath(int dirfd, const char *rel, const char *target)
{
	_cleanup_free_ char *copy = xstrdup(rel);
	_cleanup_close_ int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	char *save = NULL;
	char *comp = strtok_r(copy, "/", &save);
	while (comp) {
		char *next = strtok_r(NULL, "/", &save);
		if (!next)
			return symlinkat(target, fd, comp) < 0 && errno != EEXIST ? -errno : 0;
		if (mkdirat(fd, comp, 0700) < 0 && errno != EEXIST)
			return -errno;
		int sub = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			return -errno;
		close(fd);
		fd = sub;
		comp = next;
	}
	return 0;
}

/* Links in a fresh home to the real ~/.gitconfig, the toolchains and the
 * caches the policy lets the command read. */
static int populate_home(const struct policy *p, const char *home, struct places_failure *f)
{
	_cleanup_close_ int fd = open(home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return fail(f, PLACES_MKDIR, errno, home);
	const char *linked[64];
	size_t n_linked = 0;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *r = &p->rules[i];
		if (r->access != ACCESS_READ || !(r->flags & RULE_SYSTEM) || !path_is_beneath(r->path, p->user_home) ||
		    streq(r->path, p->user_home))
			continue;
		/* Rules are sorted shallow first: a deeper one under a link
		 * already made is reached through it. */
		bool covered = false;
		for (size_t j = 0; j < n_linked && !covered; j++)
			covered = path_is_beneath(r->path, linked[j]);
		if (covered)
			continue;
		int q = link_beneath(fd, path_below(r->path, p->user_home), r->path);
		if (q < 0 && q != -ELOOP && q != -ENOTDIR)
			return fail(f, PLACES_LINK, -q, r->path);
		if (n_linked < ARRAY_SIZE(linked))
			linked[n_linked++] = r->path;
	}
	return 0;
}

/* A run directory's lock, and why each step is where it is.
 *
 * base/run-X/lock is held with an open file description lock (F_OFD_SETLK,
 * F_WRLCK) for as long as a stockade uses run-X: taken before the
 * directory has that name, released when the descriptor's last copy
 * closes (by stockade, or by the kernel when it is killed). The command
 * never sees it: its grants are run-X/home and run-X/tmp, not run-X.
 *
 * The directory is made as base/new-X (the same X), its lock file made
 * and locked in it, and only then renamed to run-X: a run-* directory with a lock file
 * has had it held from the moment it had its name, so that a sweeper
 * that takes the lock (without waiting) knows its stockade is gone. A
 * run-* directory without one is an older stockade's, which locked
 * nothing. A new-* directory lives the few microseconds between a mkdir
 * and a rename, and between them its lock file is made but not yet
 * locked: one changed less than STAGING_GRACE_S ago is someone's being
 * made, whatever its lock says, and an older one was left by a stockade
 * killed (or stopped) in between.
 *
 * The sweeper keeps the lock it took while it looks for holders and
 * removes: a second sweeper finds it held and leaves the directory to
 * the first. What a sweeper finds without any lock, a second may remove
 * too: both tolerate what the other already took. */
#define STAGING_GRACE_S 60
/* Leftovers one run removes at most. */
#define SWEEP_MAX 64

static int lock_try(int fd)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	for (;;) {
		if (fcntl(fd, F_OFD_SETLK, &fl) == 0)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
}

static int make_run_dir(struct places *pl, int base_fd)
{
	const char *name = strrchr(pl->run_dir, '/') + 1;
	_cleanup_free_ char *staging = xstrcat3("new-", name + strlen("run-"), "");
	if (mkdirat(base_fd, staging, 0700) < 0)
		return -errno;
	_cleanup_close_ int dir = openat(base_fd, staging, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int lock = -1;
	int r = 0;
	if (dir < 0 || (lock = openat(dir, "lock", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0)
		r = -errno;
	if (r == 0)
		r = lock_try(lock);
	/* Never onto a directory of that name: another run's, however
	 * unlikely two random names are the same. */
	if (r == 0 && renameat2(base_fd, staging, base_fd, name, RENAME_NOREPLACE) < 0) {
		r = -errno;
		/* A file system without RENAME_NOREPLACE: rename(2), which
		 * would replace an empty directory, once the name is free. */
		if (r == -EINVAL && faccessat(base_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			r = renameat(base_fd, staging, base_fd, name) < 0 ? -errno : 0;
	}
	if (r < 0) {
		(void)rm_rf_at(base_fd, staging);
		return r;
	}
	pl->lock_fd = TAKE_FD(lock);
	pl->made = true;
	return 0;
}

static void add_note(struct places *pl, enum places_note_kind kind, int err, const char *path)
{
	pl->notes = xgrow(pl->notes, pl->n_notes, sizeof(*pl->notes));
	pl->notes[pl->n_notes++] = (struct places_note){ .kind = kind, .err = err, .path = xstrdup(path) };
}

/* A directory in base left by another run, its lock held here (or -1:
 * it has none). */
struct leftover {
	char *name;
	int lock_fd;
};

/* Is base/name still some stockade's? 1 when it is (or is gone), 0 when
 * not, its lock then taken into *ret_lock (-1 for a directory with none),
 * or -errno when that cannot be told. */
static int claim_leftover(int base_fd, const char *name, bool staging, int *ret_lock)
{
	*ret_lock = -1;
	_cleanup_close_ int dir = openat(base_fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dir < 0)
		return errno == ENOENT || errno == ENOTDIR || errno == ELOOP ? 1 : -errno;
	if (staging) {
		struct stat st;
		struct timespec now;
		if (fstat(dir, &st) < 0)
			return -errno;
		clock_gettime(CLOCK_REALTIME, &now);
		/* Its last change: the lock file made in it. */
		if (now.tv_sec - st.st_mtim.tv_sec < STAGING_GRACE_S)
			return 1;
	}
	int lock = openat(dir, "lock", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (lock < 0)
		return errno == ENOENT ? 0 : -errno;
	int r = lock_try(lock);
	if (r < 0) {
		close(lock);
		return r == -EAGAIN || r == -EACCES ? 1 : r;
	}
	*ret_lock = lock;
	return 0;
}

/* The path of base as /proc shows the paths processes hold: the kernel's
 * own spelling, whatever symlinks TMPDIR went through. */
static char *proc_path_of(int fd)
{
	char buf[21], target[PATH_MAX];
	_cleanup_free_ char *proc = xstrcat3("/proc/self/fd/", fmt_u64(buf, (uint64_t)fd), "");
	ssize_t n = readlink(proc, target, sizeof(target) - 1);
	if (n <= 0 || target[0] != '/')
		return NULL;
	target[n] = '\0';
	return xstrdup(target);
}

/* Removes the run directories in base whose stockade is gone (killed
 * before it removed its own) and that no process holds any more: the
 * command's children outlive a killed stockade where no cgroup is
 * delegated, and their files stay theirs while they run. A normal run,
 * with nothing left in base, pays one getdents here; /proc is read only
 * when something was left. */
static void sweep(struct places *pl, int base_fd, uid_t uid)
{
	/* base_fd's own offset: nothing else reads it as a directory. */
	char buf[DIR_BUF] __attribute__((aligned(8)));
	struct dir_iter it = { .fd = base_fd, .buf = buf };
	struct leftover *left = NULL;
	size_t n = 0;
	const dir_entry *de;
	int err = 0;
	/* A few at a time, each lock held until its directory is gone: the
	 * rest go with the next runs. */
	while (n < SWEEP_MAX && (de = dir_next(&it, &err))) {
		bool staging = str_has_prefix(de->d_name, "new-");
		if ((!staging && !str_has_prefix(de->d_name, "run-")) || (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN))
			continue;
		int lock;
		int r = claim_leftover(base_fd, de->d_name, staging, &lock);
		if (r < 0) {
			_cleanup_free_ char *path = path_join(pl->base, de->d_name);
			add_note(pl, PLACES_NOTE_HOLDERS, -r, path);
		}
		if (r != 0)
			continue;
		left = xgrow(left, n, sizeof(*left));
		left[n++] = (struct leftover){ .name = xstrdup(de->d_name), .lock_fd = lock };
	}
	if (err < 0)
		add_note(pl, PLACES_NOTE_LIST, -err, pl->base);
	if (n == 0)
		return;

	_cleanup_free_ char *seen = proc_path_of(base_fd);
	char **dirs = xcalloc(n, sizeof(*dirs));
	bool *held = xcalloc(n, sizeof(*held));
	for (size_t i = 0; i < n; i++)
		dirs[i] = path_join(seen ? seen : pl->base, left[i].name);
	int r = seen ? dirs_held(dirs, n, uid, getpid(), held) : -ENOENT;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *path = path_join(pl->base, left[i].name);
		if (r < 0) {
			/* Without /proc nothing proves them unused: kept. */
			add_note(pl, PLACES_NOTE_HOLDERS, -r, path);
		} else if (!held[i]) {
			int q = rm_rf_at(base_fd, left[i].name);
			if (q < 0)
				add_note(pl, PLACES_NOTE_REMOVE, -q, path);
		}
		/* The lock goes after the directory: no second sweeper
		 * starts on it meanwhile. */
		if (left[i].lock_fd >= 0)
			close(left[i].lock_fd);
		free(left[i].name);
		free(dirs[i]);
	}
	free(dirs);
	free(held);
	free(left);
}

/* The run's policy, for `stockade why` inside it: read-only, at a path
 * of the jail's root in the namespace jail (written there by its init),
 * in the run directory on the landlock backend. */
static void add_policy_file(struct places *pl, const char *path)
{
	pl->policy_file = xstrdup(path);
	pl->rules.v = xgrow(pl->rules.v, pl->rules.n, sizeof(*pl->rules.v));
	pl->rules.v[pl->rules.n++] = (struct rule){
		.path = xstrdup(path),
		.access = ACCESS_READ,
		.flags = RULE_CARRIED | RULE_SYSTEM,
		.source = SOURCE_DEFAULT_OF("the run's own policy"),
		.origin = xstrdup("default: the run's own policy (stockade why)"),
	};
	env_put(&pl->env, POLICY_CARRIED_ENV, path, "the run's own policy, for stockade why");
}

void places_add_terminal(struct places *pl, const char *slave)
{
	add_place(pl, slave, RULE_SYSTEM | RULE_DEVICE, "default: the run's own terminal");
}

#define CGROUP_TREE "/sys/fs/cgroup"
#define CGROUP_VIEW "the cgroup tree shows the run's own groups alone (and the limits above them)"

void places_view_cgroups(struct places *pl, const struct policy *p, char *const *made, size_t n_made)
{
	for (size_t i = pl->cgroup_at; i < pl->cgroup_at + pl->n_cgroup; i++) {
		free(pl->rules.v[i].path);
		free(pl->rules.v[i].origin);
	}
	memmove(pl->rules.v + pl->cgroup_at, pl->rules.v + pl->cgroup_at + pl->n_cgroup,
		(pl->rules.n - pl->cgroup_at - pl->n_cgroup) * sizeof(*pl->rules.v));
	pl->rules.n -= pl->n_cgroup;
	pl->n_cgroup = 0;
	/* Only a read of the whole tree is narrowed (as the namespace jail
	 * mounts its own in place of it): a deeper rule of the user's is
	 * the user's. */
	const struct rule *w = policy_rule_for(p, CGROUP_TREE);
	if (!w || !streq(w->path, CGROUP_TREE) || w->access != ACCESS_READ)
		return;
	struct cgroup_view v;
	cgroup_view(made, n_made, &v);
	pl->cgroup_at = pl->rules.n;
	pl->n_cgroup = 1 + v.n_paths;
	pl->rules.v = xgrow(pl->rules.v, pl->rules.n, sizeof(*pl->rules.v));
	pl->rules.v[pl->rules.n++] = (struct rule){
		.path = xstrdup(CGROUP_TREE),
		.access = ACCESS_HIDE,
		.flags = RULE_SYSTEM,
		.source = SOURCE_DEFAULT_OF(CGROUP_VIEW),
		.origin = xstrdup("default: " CGROUP_VIEW),
	};
	for (size_t i = 0; i < v.n_paths; i++) {
		bool file = !v.paths[i].whole;
		char *path = TAKE_PTR(v.paths[i].path);
		pl->rules.v = xgrow(pl->rules.v, pl->rules.n, sizeof(*pl->rules.v));
		pl->rules.v[pl->rules.n++] = (struct rule){
			.path = path,
			.access = ACCESS_READ,
			.flags = RULE_SYSTEM | (file ? RULE_REGULAR : 0),
			.source = SOURCE_DEFAULT_OF(CGROUP_VIEW),
			.origin = xstrdup("default: " CGROUP_VIEW),
		};
	}
	cgroup_view_free(&v);
}

/* A landlock run's directory, where it can be: one name for each
 * workspace (run-w and a hash of its path), so that HOME and TMPDIR are
 * the same from one run to the next, as they are in the namespace jail,
 * and the caches keyed on them hit (go test's: a test that read TMPDIR or
 * HOME, as t.TempDir does, is run again when either changed). It is made
 * anew, empty, for each run, and removed after it, as a random one is; a
 * second run of the workspace while one is live takes a random name.
 * Made now, at the plan, with its lock: the command's environment names
 * it, and the command's process is forked before the rest is made. */
static void claim_workspace_dir(struct places *pl, const struct policy *p)
{
	_cleanup_close_ int base_fd = -1;
	if (mkdir_private(pl->base, p->uid) < 0 ||
	    (base_fd = open(pl->base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return;
	char hex[17];
	pl->run_dir = xstrcat3(pl->base, "/run-w", fmt_x64(hex, fnv1a(FNV_INIT, p->workspace, strlen(p->workspace))));
	/* taken (a live run of the workspace, or a killed one's, which the
	 * sweep removes for the runs after this one): a random name */
	if (make_run_dir(pl, base_fd) < 0)
		free(TAKE_PTR(pl->run_dir));
}

static void plan(struct policy *p, enum backend backend, char *const *environ, bool run, struct places *ret)
{
	*ret = (struct places){ .lock_fd = -1, .backend = backend, .policy = p };
	struct places *pl = ret;
	/* part of the policy from now on, until places_remove */
	p->places = &pl->rules;
	pl->base = run_base(environ, p->uid);
	if (run && backend == BACKEND_LANDLOCK)
		claim_workspace_dir(pl, p);
	/* Otherwise a name of the run's own, chosen now so that the plan
	 * names the paths it grants before they exist; the folder it goes in
	 * is private, so nobody else can have taken it. */
	if (!pl->run_dir) {
		uint64_t id = 0;
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = now_usec() ^ ((uint64_t)getpid() << 32);
		char hex[17];
		pl->run_dir = xstrcat3(pl->base, "/run-", fmt_x64(hex, id));
	}

	if (backend == BACKEND_NAMESPACES) {
		/* The run directory is where the new root is mounted; the
		 * home and /tmp are tmpfs of the jail's own at their paths. */
		pl->tmpdir = xstrdup("/tmp");
		pl->home = xstrdup(p->home ? p->home : p->user_home);
		add_place(pl, "/tmp", 0, "private /tmp (tmpfs)");
		if (!p->home)
			add_place(pl, pl->home, 0, "fresh home (tmpfs)");
		add_place(pl, "/dev/pts", RULE_SYSTEM | RULE_DEVICE, "default: the jail's devpts");
		add_place(pl, "/dev/shm", RULE_SYSTEM, "default: the jail's /dev/shm");
	} else {
		pl->tmpdir = path_join(pl->run_dir, "tmp");
		add_place(pl, pl->tmpdir, 0, "private tmp (TMPDIR)");
		pl->home = p->home ? xstrdup(p->home) : path_join(pl->run_dir, "home");
		if (!p->home)
			add_place(pl, pl->home, 0, "fresh home");
		pl->populate_home = backend == BACKEND_LANDLOCK;
		/* New ptys of the run's own (tmux, script, pexpect, a test
		 * suite's openpty): the host's /dev/ptmx, whose slaves come
		 * through TIOCGPTPEER (glibc's openpty), so that no /dev/pts
		 * name, the user's terminals among them, is ever granted. */
		if (backend == BACKEND_LANDLOCK)
			add_place(pl, "/dev/ptmx", RULE_SYSTEM | RULE_DEVICE, "default: new ptys of the run's own");
		/* Not the host's whole cgroup tree: the run's own groups (its
		 * stockade's until the run has groups of its own). */
		if (backend == BACKEND_LANDLOCK && !run)
			places_view_cgroups(pl, p, NULL, 0);
	}
	/* What killed runs left in base goes before this run's is made: a
	 * landlock run's home and tmp, or a namespace jail's empty mount
	 * point (its home and /tmp are tmpfs in its mount namespace, gone
	 * with it), left when stockade died before its keeper began. */
	pl->sweep = true;
	env_copy(&pl->env, &p->env);
	env_point_into_jail(&pl->env, pl->home, pl->tmpdir, p->cwd, p->env_decided);
	if (backend == BACKEND_NAMESPACES)
		add_policy_file(pl, POLICY_CARRIED_NS_PATH);
	else if (backend == BACKEND_LANDLOCK) {
		_cleanup_free_ char *path = path_join(pl->run_dir, "policy");
		add_policy_file(pl, path);
	}
}

void places_plan(struct policy *p, enum backend backend, char *const *environ, struct places *ret)
{
	plan(p, backend, environ, false, ret);
}

void places_plan_run(struct policy *p, enum backend backend, char *const *environ, struct places *ret)
{
	plan(p, backend, environ, true, ret);
}

/* The landlock backend's copy of the run's policy, read-only. */
static int write_policy_file(const struct places *pl, const struct policy *p)
{
	_cleanup_free_ char *text = policy_carry(p, pl->backend);
	_cleanup_close_ int fd = open(pl->policy_file, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return -errno;
	return write_all(fd, text, strlen(text));
}

void places_sweep(struct places *pl, uid_t uid)
{
	_cleanup_close_ int base_fd = open(pl->base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (base_fd >= 0)
		sweep(pl, base_fd, uid);
}

int places_make(struct places *pl, const struct policy *p, struct places_failure *f)
{
	*f = (struct places_failure){ 0 };
	int r = make_own_dirs(p, f);
	if (r < 0)
		return r;
	if (p->home && (r = mkdir_private(p->home, p->uid)) < 0)
		return fail(f, PLACES_KEPT_HOME, -r, p->home);
	r = mkdir_private(pl->base, p->uid);
	if (r < 0)
		return fail(f, PLACES_BASE, -r, pl->base);
	_cleanup_close_ int base_fd = open(pl->base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (base_fd < 0)
		return fail(f, PLACES_BASE, errno, pl->base);
	/* Before this run's directory exists: it is nobody's to sweep. */
	if (pl->sweep)
		sweep(pl, base_fd, p->uid);
	/* Locked for every backend: a sweeping run must not take a namespace
	 * jail's, where removing the mount point would detach the jail's
	 * root from under it. */
	/* (the landlock backend's may be made already: claim_workspace_dir) */
	r = pl->made ? 0 : make_run_dir(pl, base_fd);
	if (r < 0)
		return fail(f, PLACES_RUN_DIR, -r, pl->run_dir);
	for (size_t i = 0; i < pl->rules.n; i++) {
		const char *dir = pl->rules.v[i].path;
		if (!(pl->rules.v[i].flags & RULE_CARRIED) && path_is_beneath(dir, pl->run_dir) && mkdir(dir, 0700) < 0)
			return fail(f, PLACES_MKDIR, errno, dir);
	}
	if (pl->policy_file && pl->backend != BACKEND_NAMESPACES && (r = write_policy_file(pl, p)) < 0)
		return fail(f, PLACES_POLICY, -r, pl->policy_file);
	if (pl->populate_home && (r = populate_home(p, pl->home, f)) < 0)
		return r;
	return 0;
}

struct walk {
	struct written *w;
	char *const *skip;
	const char *prefix;
	size_t entries;
	char *buf;	/* DIR_BUF bytes, the one listing's at a time */
};

/* A directory's entries, then its subdirectories': one listing is read
 * at a time, into one buffer for the whole walk (a stream each, 32 KiB,
 * for every level open at once, had been most of a run's heap). */
static void count_dir(struct walk *k, int dir, const char *rel, unsigned depth)
{
	struct dir_iter it = { .fd = dir, .buf = k->buf };
	_cleanup_strv_ char **subdirs = strv_new();
	const dir_entry *de;
	int err;
	while (k->entries < PLACES_WRITTEN_MAX && (de = dir_next(&it, &err))) {
		k->entries++;
		_cleanup_free_ char *sub = rel ? xstrcat3(rel, "/", de->d_name) : xstrdup(de->d_name);
		if (strv_contains(k->skip, sub))
			continue;
		struct stat st;
		if (fstatat(dir, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (depth < 64)
				strv_add(&subdirs, de->d_name);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		k->w->files++;
		k->w->bytes += (unsigned long long)st.st_size;
		if (strv_length(k->w->paths) < 3) {
			_cleanup_free_ char *shown = xstrcat3(k->prefix, "/", sub);
			strv_add(&k->w->paths, shown);
		}
		_cleanup_free_ char *top = xstrndup(sub, strcspn(sub, "/"));
		_cleanup_free_ char *shown = xstrcat3(k->prefix, "/", top);
		if (!strv_contains(k->w->tops, shown) && strv_length(k->w->tops) < 8)
			strv_add(&k->w->tops, shown);
	}
	for (size_t i = 0; subdirs[i]; i++) {
		int fd = openat(dir, subdirs[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		_cleanup_free_ char *sub = rel ? xstrcat3(rel, "/", subdirs[i]) : xstrdup(subdirs[i]);
		count_dir(k, fd, sub, depth + 1);
	}
	close(dir);
}

void places_count_written(int dirfd, const char *prefix, char *const *skip, struct written *ret)
{
	*ret = (struct written){ .paths = strv_new(), .tops = strv_new() };
	_cleanup_free_ char *buf = xmalloc(DIR_BUF);
	struct walk k = { .w = ret, .skip = skip, .prefix = prefix, .buf = buf };
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		count_dir(&k, fd, NULL, 0);
}

void written_free(struct written *w)
{
	strv_free(w->paths);
	strv_free(w->tops);
	*w = (struct written){ 0 };
}

void places_remove(struct places *pl)
{
	if (pl->made) {
		/* The namespace jail's run directory holds its lock alone
		 * (the root was mounted on it, in the jail's own namespace):
		 * two calls, where rm_rf's walk allocates and clears its
		 * levels. What else is there (the landlock backend's home and
		 * tmp) goes by the walk. */
		char lock[PATH_MAX];
		bool alone = false;
		if (strlen(pl->run_dir) + sizeof("/lock") <= sizeof(lock)) {
			stpcpy(stpcpy(lock, pl->run_dir), "/lock");
			alone = unlink(lock) == 0 && rmdir(pl->run_dir) == 0;
		}
		if (!alone)
			(void)rm_rf(pl->run_dir);
		/* Only now: a directory that could not go is a leftover for
		 * the next run to sweep. */
		close(pl->lock_fd);
	}
	for (size_t i = 0; i < pl->n_notes; i++)
		free(pl->notes[i].path);
	free(pl->notes);
	free(pl->base);
	for (size_t i = 0; i < pl->rules.n; i++) {
		free(pl->rules.v[i].path);
		free(pl->rules.v[i].origin);
	}
	free(pl->rules.v);
	if (pl->policy && pl->policy->places == &pl->rules)
		pl->policy->places = NULL;
	env_free(&pl->env);
	free(pl->home);
	free(pl->tmpdir);
	free(pl->run_dir);
	free(pl->policy_file);
	*pl = (struct places){ 0 };
}
