#include "jail/places.h"

#include <fcntl.h>
#include <sys/random.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"
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
	pl->rules = xgrow(pl->rules, pl->n_rules, sizeof(*pl->rules));
	pl->rules[pl->n_rules++] = (struct rule){
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

void places_plan(const struct policy *p, enum backend backend, char *const *environ, struct places *ret)
{
	*ret = (struct places){ 0 };
	struct places *pl = ret;
	/* A name of the run's own, chosen now so that the plan names the
	 * paths it grants before they exist; the folder it goes in is
	 * private, so nobody else can have taken it. */
	uint64_t id = 0;
	if (getrandom(&id, sizeof(id), 0) != sizeof(id))
		id = now_usec() ^ ((uint64_t)getpid() << 32);
	char hex[17];
	pl->base = run_base(environ, p->uid);
	pl->run_dir = xstrcat3(pl->base, "/run-", fmt_x64(hex, id));

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
	}
	env_copy(&pl->env, &p->env);
	env_point_into_jail(&pl->env, pl->home, pl->tmpdir, p->cwd, p->env_decided);
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
	if (mkdir(pl->run_dir, 0700) < 0)
		return fail(f, PLACES_RUN_DIR, errno, pl->run_dir);
	pl->made = true;
	for (size_t i = 0; i < pl->n_rules; i++) {
		const char *dir = pl->rules[i].path;
		if (path_is_beneath(dir, pl->run_dir) && mkdir(dir, 0700) < 0)
			return fail(f, PLACES_MKDIR, errno, dir);
	}
	if (pl->populate_home && (r = populate_home(p, pl->home, f)) < 0)
		return r;
	return 0;
}

void places_remove(struct places *pl)
{
	if (pl->made)
		(void)rm_rf(pl->run_dir);
	free(pl->base);
	for (size_t i = 0; i < pl->n_rules; i++) {
		free(pl->rules[i].path);
		free(pl->rules[i].origin);
	}
	free(pl->rules);
	env_free(&pl->env);
	free(pl->home);
	free(pl->tmpdir);
	free(pl->run_dir);
	*pl = (struct places){ 0 };
}
