/* places: a run's home, tmp and run directory. The plan names each
 * backend's places and grants them (write, RULE_FRESH) before anything
 * exists; TMPDIR decides where run directories go. Made in a temporary
 * tree: the run directory is private and locked, the landlock backend's
 * home links what the policy reads in the real one, the policy is
 * written read-only; removing takes the run directory and nothing else.
 * What killed runs left is swept: unlocked and unheld alone, never a
 * live run's, a fresh staging directory, or one a process still holds. */
#include "jail/places.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/path.h"
#include "lib/util.h"
#include "policy/carried.h"
#include "policy/defaults.h"
#include "policy/env.h"
#include "tests/tap.h"
#include "tests/tree.h"

static char uid_buf[21];
static const char *buf_uid;

/* A policy of the caller's own, its home and stockade's directories in
 * the tree. */
static void policy_in_tree(struct policy *p)
{
	policy_init(p);
	p->uid = getuid();
	p->gid = getgid();
	p->user_home = tree_at("uh");
	p->cwd = tree_at("ws");
	p->workspace = tree_at("ws");
	p->cache_dir = tree_at("cache/stockade");
	p->state_dir = tree_at("state/stockade");
	/* The caller's environment, as the policy's build begins it. */
	static char *const caller[] = { (char *)"PATH=/usr/bin:/bin", (char *)"TMP=/var/tmp", NULL };
	env_begin(&p->env, caller, NULL, 0);
}

static const struct rule *rule_at(const struct places *pl, const char *path)
{
	const struct rule *found = NULL;
	for (size_t i = 0; i < pl->rules.n; i++)
		if (streq(pl->rules.v[i].path, path)) {
			if (found)
				return NULL;
			found = &pl->rules.v[i];
		}
	return found;
}

static void expect_rule(const struct places *pl, const char *path, enum access a, unsigned flags, const char *what)
{
	const struct rule *r = rule_at(pl, path);
	if (!ok(r && r->access == a && r->flags == flags, "%s: %s", path, what))
		diag("got %s access %d flags %#x", r ? "a rule of" : "no rule", r ? (int)r->access : -1, r ? r->flags : 0);
}

static bool is_dir_mode(const char *path, mode_t mode)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == mode;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* An empty file, made. */
static int put_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/* Whether another open file description can take path's lock now. */
static int lock_free(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	int r = fcntl(fd, F_OFD_SETLK, &fl) == 0 ? 1 : -errno;
	close(fd);
	return r;
}

static void test_plan_namespaces(void)
{
	struct policy p;
	policy_in_tree(&p);
	_cleanup_free_ char *tmpdir = tree_at("t");
	_cleanup_free_ char *tmp_var = xstrcat3("TMPDIR=", tmpdir, "");
	char *env[] = { tmp_var, NULL };
	struct places pl;
	places_plan(&p, BACKEND_NAMESPACES, env, &pl);

	_cleanup_free_ char *base = xstrcat3(tmpdir, "/stockade-", buf_uid);
	is_str(pl.base, base, "namespaces: run directories go in TMPDIR/stockade-UID");
	_cleanup_free_ char *prefix = xstrcat3(base, "/run-", "");
	ok(str_has_prefix(pl.run_dir, prefix) && strlen(pl.run_dir) > strlen(prefix), "namespaces: the run's directory is base/run-ID (%s)",
	   pl.run_dir);
	is_str(pl.tmpdir, "/tmp", "namespaces: TMPDIR is /tmp, the jail's own tmpfs");
	is_str(pl.home, p.user_home, "namespaces: the fresh home is at the user's home path");
	is_int(pl.rules.n, 5, "namespaces: /tmp, the home, /dev/pts, /dev/shm and the policy");
	expect_rule(&pl, "/tmp", ACCESS_WRITE, RULE_FRESH, "a fresh /tmp, writable");
	expect_rule(&pl, p.user_home, ACCESS_WRITE, RULE_FRESH, "a fresh home, writable");
	expect_rule(&pl, "/dev/pts", ACCESS_WRITE, RULE_FRESH | RULE_SYSTEM | RULE_DEVICE, "the jail's devpts, a device");
	expect_rule(&pl, "/dev/shm", ACCESS_WRITE, RULE_FRESH | RULE_SYSTEM, "the jail's /dev/shm");
	expect_rule(&pl, POLICY_CARRIED_NS_PATH, ACCESS_READ, RULE_CARRIED | RULE_SYSTEM, "the carried policy, read-only");
	is_str(pl.policy_file, POLICY_CARRIED_NS_PATH, "namespaces: the policy at the jail root's path");
	ok(pl.sweep && !pl.populate_home && !pl.made && pl.lock_fd == -1,
	   "namespaces: sweeps (a killed jail's empty mount point), no links in the home, nothing made yet");
	is_str(env_get(pl.env.envp, "HOME"), p.user_home, "namespaces: HOME points at the home");
	is_str(env_get(pl.env.envp, "TMPDIR"), "/tmp", "namespaces: TMPDIR points at /tmp");
	is_str(env_get(pl.env.envp, POLICY_CARRIED_ENV), POLICY_CARRIED_NS_PATH, "namespaces: STOCKADE_POLICY names it");
	ok(!exists(base), "planning makes nothing");
	places_remove(&pl);

	/* --home: kept, so not granted as a fresh place. */
	p.home = tree_at("kept");
	places_plan(&p, BACKEND_NAMESPACES, env, &pl);
	is_str(pl.home, p.home, "namespaces --home: HOME is the kept home");
	ok(!rule_at(&pl, p.home) && !rule_at(&pl, p.user_home) && pl.rules.n == 4,
	   "namespaces --home: no fresh home among the places");
	places_remove(&pl);
	policy_free(&p);
}

static void test_plan_landlock(void)
{
	struct policy p;
	policy_in_tree(&p);
	_cleanup_free_ char *tmpdir = tree_at("t");
	_cleanup_free_ char *tmp_var = xstrcat3("TMPDIR=", tmpdir, "");
	char *env[] = { tmp_var, NULL };
	struct places pl;
	places_plan(&p, BACKEND_LANDLOCK, env, &pl);

	_cleanup_free_ char *home = path_join(pl.run_dir, "home");
	_cleanup_free_ char *tmp = path_join(pl.run_dir, "tmp");
	_cleanup_free_ char *policy = path_join(pl.run_dir, "policy");
	is_str(pl.tmpdir, tmp, "landlock: TMPDIR is run_dir/tmp");
	is_str(pl.home, home, "landlock: the fresh home is run_dir/home");
	is_int(pl.rules.n, 4, "landlock: tmp, home, /dev/ptmx and the policy (no cgroup view without a read of it)");
	expect_rule(&pl, tmp, ACCESS_WRITE, RULE_FRESH, "the private tmp, writable");
	expect_rule(&pl, home, ACCESS_WRITE, RULE_FRESH, "the fresh home, writable");
	expect_rule(&pl, "/dev/ptmx", ACCESS_WRITE, RULE_FRESH | RULE_SYSTEM | RULE_DEVICE, "new ptys of the run's own");
	expect_rule(&pl, policy, ACCESS_READ, RULE_CARRIED | RULE_SYSTEM, "the carried policy, read-only");
	is_int(pl.n_cgroup, 0, "landlock: no cgroup view where the policy does not read /sys/fs/cgroup");
	ok(pl.sweep && pl.populate_home, "landlock: sweeps, and links in the home");
	is_str(env_get(pl.env.envp, "HOME"), home, "landlock: HOME points at it");
	is_str(env_get(pl.env.envp, "TMPDIR"), tmp, "landlock: TMPDIR points at it");
	is_str(env_get(pl.env.envp, "TMP"), tmp, "landlock: TMP, set by the caller, points at it too");
	is_str(env_get(pl.env.envp, "PATH"), "/usr/bin:/bin", "landlock: the rest of the caller's environment kept");
	ok(!env_get(pl.env.envp, "XDG_RUNTIME_DIR"), "landlock: XDG_RUNTIME_DIR unset (the host's is not the jail's)");
	_cleanup_free_ char *cfg = path_join(home, ".config");
	is_str(env_get(pl.env.envp, "XDG_CONFIG_HOME"), cfg, "landlock: XDG_CONFIG_HOME is under the home");

	places_add_terminal(&pl, "/dev/pts/7");
	expect_rule(&pl, "/dev/pts/7", ACCESS_WRITE, RULE_FRESH | RULE_SYSTEM | RULE_DEVICE, "the run's terminal, by path");
	is_int(pl.rules.n, 5, "the terminal adds one rule");
	places_remove(&pl);

	/* With the whole cgroup tree read: hidden, and a view of it read. */
	policy_add_rule(&p, "/sys/fs/cgroup", ACCESS_READ, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"), "test");
	policy_sort(&p);
	places_plan(&p, BACKEND_LANDLOCK, env, &pl);
	ok(pl.n_cgroup >= 1 && pl.cgroup_at + pl.n_cgroup == pl.rules.n - 1, "landlock: the cgroup view's rules, in one run (%zu)",
	   pl.n_cgroup);
	if (pl.n_cgroup >= 1) {
		const struct rule *r = &pl.rules.v[pl.cgroup_at];
		ok(streq(r->path, "/sys/fs/cgroup") && r->access == ACCESS_HIDE && r->flags == RULE_SYSTEM,
		   "landlock: the tree itself hidden");
		bool reads = true;
		for (size_t i = pl.cgroup_at + 1; i < pl.cgroup_at + pl.n_cgroup; i++)
			reads = reads && pl.rules.v[i].access == ACCESS_READ && path_is_beneath(pl.rules.v[i].path, "/sys/fs/cgroup");
		ok(reads, "landlock: the rest of the view reads beneath it");
	}
	size_t before = pl.rules.n;
	places_view_cgroups(&pl, &p, NULL, 0);
	is_int(pl.rules.n, before, "places_view_cgroups again: replaces the view, adds nothing");
	places_remove(&pl);
	policy_free(&p);
}

/* A landlock run's directory has the workspace's name where that is
 * free: HOME and TMPDIR the same from run to run. */
static void test_plan_run_landlock(void)
{
	struct policy p;
	policy_in_tree(&p);
	_cleanup_free_ char *tmpdir = tree_at("t-run");
	_cleanup_free_ char *tmp_var = xstrcat3("TMPDIR=", tmpdir, "");
	char *env[] = { tmp_var, NULL };
	struct places a, b, c;
	struct places_failure f;
	places_plan_run(&p, BACKEND_LANDLOCK, env, &a);
	char hex[17];
	_cleanup_free_ char *named =
		xstrcat3(a.base, "/run-w", fmt_x64(hex, fnv1a(FNV_INIT, p.workspace, strlen(p.workspace))));
	is_str(a.run_dir, named, "landlock run: the run directory has the workspace's name");
	_cleanup_free_ char *lock = path_join(named, "lock");
	ok(a.made && a.lock_fd >= 0 && lock_free(lock) == -EAGAIN, "landlock run: made at the plan, its lock held");
	_cleanup_free_ char *tmp = path_join(named, "tmp");
	is_str(env_get(a.env.envp, "TMPDIR"), tmp, "landlock run: TMPDIR is in it");

	places_plan_run(&p, BACKEND_LANDLOCK, env, &b);
	ok(!streq(b.run_dir, named) && !b.made && !str_has_prefix(strrchr(b.run_dir, '/'), "/run-w"),
	   "landlock run: a second run of the workspace while the first is live takes a random name (%s)", b.run_dir);
	ok(places_make(&b, &p, &f) == 0 && is_dir_mode(b.tmpdir, 0700), "landlock run: the second is made");
	places_failure_free(&f);
	ok(places_make(&a, &p, &f) == 0 && is_dir_mode(a.tmpdir, 0700) && is_dir_mode(a.home, 0700),
	   "landlock run: the first is made, its sweep leaving it (its own lock)");
	places_failure_free(&f);
	_cleanup_free_ char *stray = path_join(a.tmpdir, "left");
	ok(put_file(stray) == 0, "a file left in its tmp");
	places_remove(&b);
	places_remove(&a);
	ok(!exists(named), "landlock run: removed after the run");

	places_plan_run(&p, BACKEND_LANDLOCK, env, &c);
	is_str(c.run_dir, named, "landlock run: the next run has the name again");
	ok(!exists(stray), "landlock run: and nothing of the last run's");
	places_remove(&c);
	ok(!exists(named), "landlock run: a run that ends before places_make removes it too");

	/* A killed run's, its lock free: taken by no run until swept. */
	ok(mkdir(named, 0700) == 0 && put_file(lock) == 0, "a killed run's directory of that name");
	places_plan_run(&p, BACKEND_LANDLOCK, env, &a);
	ok(!streq(a.run_dir, named), "landlock run: a killed run's directory of the name: a random name");
	ok(places_make(&a, &p, &f) == 0 && !exists(named), "landlock run: its sweep removes the killed run's");
	places_failure_free(&f);
	places_remove(&a);
	places_plan_run(&p, BACKEND_LANDLOCK, env, &a);
	is_str(a.run_dir, named, "landlock run: the run after it has the name");
	places_remove(&a);

	/* Another workspace: a name of its own. */
	char *ws = p.workspace;
	p.workspace = xstrcat3(ws, "/other", "");
	places_plan_run(&p, BACKEND_LANDLOCK, env, &a);
	ok(a.made && !streq(a.run_dir, named) && str_has_prefix(strrchr(a.run_dir, '/'), "/run-w"),
	   "landlock run: another workspace has another name (%s)", a.run_dir);
	places_remove(&a);
	free(p.workspace);
	p.workspace = ws;

	/* Planned, not run (explain), and the namespace jail: random, made
	 * nowhere. */
	places_plan(&p, BACKEND_LANDLOCK, env, &a);
	ok(!a.made && !exists(a.run_dir) && !streq(a.run_dir, named), "landlock, planned only: nothing made");
	places_remove(&a);
	places_plan_run(&p, BACKEND_NAMESPACES, env, &a);
	ok(!a.made && !streq(a.run_dir, named), "namespaces run: a random name, made with the rest");
	places_remove(&a);
	policy_free(&p);
}

static void test_plan_off(void)
{
	struct policy p;
	policy_in_tree(&p);
	_cleanup_free_ char *tmpdir = tree_at("t");
	_cleanup_free_ char *tmp_var = xstrcat3("TMPDIR=", tmpdir, "");
	char *env[] = { tmp_var, NULL };
	struct places pl;
	places_plan(&p, BACKEND_NONE, env, &pl);
	_cleanup_free_ char *home = path_join(pl.run_dir, "home");
	_cleanup_free_ char *tmp = path_join(pl.run_dir, "tmp");
	is_int(pl.rules.n, 2, "--mode off: tmp and home only");
	expect_rule(&pl, tmp, ACCESS_WRITE, RULE_FRESH, "--mode off: a private tmp");
	expect_rule(&pl, home, ACCESS_WRITE, RULE_FRESH, "--mode off: a fresh home");
	ok(pl.sweep && !pl.populate_home && !pl.policy_file, "--mode off: sweeps, no links, no policy file");
	places_remove(&pl);
	policy_free(&p);
}

/* Where run directories go without TMPDIR: XDG_RUNTIME_DIR on a tmpfs,
 * else /dev/shm (a tmpfs here), never a relative TMPDIR. */
static void test_base(void)
{
	struct policy p;
	policy_in_tree(&p);
	struct places pl;
	_cleanup_free_ char *want_shm = xstrcat3("/dev/shm/stockade-", buf_uid, "");

	char *rel[] = { (char *)"TMPDIR=relative/tmp", NULL };
	places_plan(&p, BACKEND_LANDLOCK, rel, &pl);
	is_str(pl.base, want_shm, "a relative TMPDIR is not taken: /dev/shm/stockade-UID");
	places_remove(&pl);

	_cleanup_free_ char *xdg = xstrcat3("XDG_RUNTIME_DIR=", tree_base, "");
	char *not_tmpfs[] = { xdg, NULL };
	places_plan(&p, BACKEND_LANDLOCK, not_tmpfs, &pl);
	is_str(pl.base, want_shm, "XDG_RUNTIME_DIR not on a tmpfs (/tmp here): /dev/shm/stockade-UID");
	places_remove(&pl);

	char *on_tmpfs[] = { (char *)"XDG_RUNTIME_DIR=/dev/shm", NULL };
	places_plan(&p, BACKEND_LANDLOCK, on_tmpfs, &pl);
	is_str(pl.base, "/dev/shm/stockade", "XDG_RUNTIME_DIR on a tmpfs: its stockade folder");
	places_remove(&pl);

	_cleanup_free_ char *tmpdir = tree_at("t");
	_cleanup_free_ char *tmp_var = xstrcat3("TMPDIR=", tmpdir, "");
	char *both[] = { (char *)"XDG_RUNTIME_DIR=/dev/shm", tmp_var, NULL };
	places_plan(&p, BACKEND_LANDLOCK, both, &pl);
	_cleanup_free_ char *want = xstrcat3(tmpdir, "/stockade-", buf_uid);
	is_str(pl.base, want, "TMPDIR wins over XDG_RUNTIME_DIR");
	struct places pl2;
	places_plan(&p, BACKEND_LANDLOCK, both, &pl2);
	ok(!streq(pl.run_dir, pl2.run_dir), "two plans: two run directories");
	places_remove(&pl2);
	places_remove(&pl);
	policy_free(&p);
}

static void test_make_remove(void)
{
	struct policy p;
	policy_in_tree(&p);
	tree_dir("uh/.cargo/bin");
	tree_dir("uh/.config/git");
	tree_file("uh/.gitconfig", 0644);
	/* Read rules in the real home: linked from the fresh one, the deeper
	 * of two once, through its parent's link; a write rule is not. */
	const char *reads[] = { "uh/.gitconfig", "uh/.cargo", "uh/.cargo/bin", "uh/.config/git" };
	for (size_t i = 0; i < ARRAY_SIZE(reads); i++) {
		_cleanup_free_ char *path = tree_at(reads[i]);
		policy_add_rule(&p, path, ACCESS_READ, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"), "test");
	}
	_cleanup_free_ char *written = tree_at("uh/.npm");
	tree_dir("uh/.npm");
	policy_add_rule(&p, written, ACCESS_WRITE, RULE_SYSTEM, SOURCE_DEFAULT_OF("test"), "test");
	policy_sort(&p);

	_cleanup_free_ char *tmpdir = tree_at("t");
	tree_dir("t");
	_cleanup_free_ char *tmp_var = xstrcat3("TMPDIR=", tmpdir, "");
	char *env[] = { tmp_var, NULL };
	struct places pl;
	places_plan(&p, BACKEND_LANDLOCK, env, &pl);
	/* Something of someone else's in base, made before: it stays. */
	tree_dir(path_below(pl.base, tree_base));
	chmod(pl.base, 0700);
	_cleanup_free_ char *sibling = path_join(pl.base, "keep-me");
	tree_file(sibling, 0600);
	_cleanup_free_ char *other = path_join(pl.base, "notes");
	tree_dir(other);

	struct places_failure f;
	int r = places_make(&pl, &p, &f);
	is_int(r, 0, "places_make");
	if (r != 0)
		diag("fault %d err %d path %s", f.fault, f.err, f.path ? f.path : "-");
	places_failure_free(&f);
	is_int(pl.n_notes, 0, "nothing to note: base held nothing of killed runs");
	ok(pl.made && pl.lock_fd >= 0, "made, its lock held");
	ok(is_dir_mode(pl.base, 0700), "base: a private directory");
	ok(is_dir_mode(pl.run_dir, 0700), "the run directory: 0700");
	ok(is_dir_mode(pl.home, 0700) && is_dir_mode(pl.tmpdir, 0700), "its home and tmp: 0700");
	_cleanup_free_ char *lock = path_join(pl.run_dir, "lock");
	is_int(lock_free(lock), -EAGAIN, "its lock file: held (another taker gets EAGAIN)");
	struct stat st;
	ok(lstat(pl.policy_file, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0444 && st.st_size > 0,
	   "the policy written, 0444, not empty");
	ok(is_dir_mode(p.cache_dir, 0700) && is_dir_mode(p.state_dir, 0700), "stockade's cache and state: made, private");
	bool caches = true;
	for (size_t i = 0; i < defaults_n_own_caches; i++) {
		_cleanup_free_ char *c = path_join(p.cache_dir, defaults_own_caches[i].sub);
		caches = caches && is_dir_mode(c, 0700);
	}
	ok(caches, "the caches' own directories, in a fresh cache");

	char target[PATH_MAX];
	const char *links[] = { ".gitconfig", ".cargo", ".config/git" };
	for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
		_cleanup_free_ char *at = path_join(pl.home, links[i]);
		_cleanup_free_ char *want = path_join(p.user_home, links[i]);
		ssize_t n = readlink(at, target, sizeof(target) - 1);
		target[n > 0 ? n : 0] = '\0';
		is_str(target, want, "the fresh home: %s links to the real one", links[i]);
	}
	_cleanup_free_ char *config = path_join(pl.home, ".config");
	ok(is_dir_mode(config, 0700), "the fresh home: .config a directory of its own, not a link");
	_cleanup_free_ char *bin = path_join(pl.home, ".cargo/bin");
	_cleanup_free_ char *cargo = path_join(pl.home, ".cargo");
	ok(lstat(cargo, &st) == 0 && S_ISLNK(st.st_mode), "the fresh home: .cargo a link, its bin reached through it");
	_cleanup_free_ char *npm = path_join(pl.home, ".npm");
	ok(!exists(npm), "the fresh home: no link for a write rule");

	/* What the run wrote there, counted. */
	_cleanup_free_ char *w1 = path_join(pl.tmpdir, "a/b.txt");
	_cleanup_free_ char *w2 = path_join(pl.tmpdir, "c.txt");
	_cleanup_free_ char *w3 = path_join(pl.tmpdir, "skipped/x");
	tree_file(w1, 0600);
	tree_file(w2, 0600);
	tree_file(w3, 0600);
	ok(truncate(w1, 5) == 0 && truncate(w2, 3) == 0 && truncate(w3, 100) == 0, "the run writes 5, 3 and 100 bytes");
	int tfd = open(pl.tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *skip[] = { (char *)"skipped", NULL };
	struct written w;
	places_count_written(tfd, "/tmp", skip, &w);
	close(tfd);
	is_int(w.files, 2, "written: two files, the skipped directory's not counted");
	is_int(w.bytes, 8, "written: their bytes");
	is_int(strv_length(w.tops), 2, "written: two top-level names");
	ok(strv_contains(w.tops, "/tmp/a") && strv_contains(w.tops, "/tmp/c.txt"), "written: /tmp/a and /tmp/c.txt");
	ok(strv_contains(w.paths, "/tmp/a/b.txt") && strv_contains(w.paths, "/tmp/c.txt"), "written: the paths as the command saw them");
	written_free(&w);
	(void)bin;

	/* A deep tree, and a directory of more names than one listing's
	 * buffer holds, read one listing at a time: every file counted,
	 * a skipped directory deep down left out, no descriptor kept. */
	for (int i = 0; i < 300; i++) {
		char name[64];
		snprintf(name, sizeof(name), "wide/file-with-a-longish-name-%03d", i);
		_cleanup_free_ char *file = path_join(pl.tmpdir, name);
		tree_file(file, 0600);
	}
	const char *deep[] = { "wide/d1/f", "wide/d1/d2/f", "wide/d1/d2/d3/f", "wide/d1/d2/d3/d4/d5/d6/f",
			       "wide/d1/d2/skip/f" };
	for (size_t i = 0; i < ARRAY_SIZE(deep); i++) {
		_cleanup_free_ char *file = path_join(pl.tmpdir, deep[i]);
		tree_file(file, 0600);
	}
	int fds_before = open("/dev/null", O_RDONLY | O_CLOEXEC);
	close(fds_before);
	tfd = open(pl.tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char *deep_skip[] = { (char *)"skipped", (char *)"wide/d1/d2/skip", NULL };
	places_count_written(tfd, "/tmp", deep_skip, &w);
	close(tfd);
	is_int(w.files, 2 + 300 + 4, "written: a wide directory and a deep tree, every file counted once");
	ok(strv_contains(w.tops, "/tmp/wide"), "written: the wide directory a top-level name");
	written_free(&w);
	int fds_after = open("/dev/null", O_RDONLY | O_CLOEXEC);
	close(fds_after);
	is_int(fds_after, fds_before, "written: no descriptor left open by the walk");

	_cleanup_free_ char *run_dir = xstrdup(pl.run_dir);
	_cleanup_free_ char *base = xstrdup(pl.base);
	_cleanup_free_ char *real_gitconfig = tree_at("uh/.gitconfig");
	places_remove(&pl);
	ok(!exists(run_dir), "places_remove: the run directory gone");
	ok(exists(base) && exists(sibling) && is_dir_mode(other, 0755), "places_remove: base and what else is in it stay");
	ok(exists(real_gitconfig), "places_remove: the real home's files, linked from the fresh one, stay");
	ok(is_dir_mode(p.cache_dir, 0700), "places_remove: stockade's cache stays");
	ok(pl.rules.v == NULL && pl.rules.n == 0 && pl.run_dir == NULL && p.places == NULL,
	   "places_remove: the places forgotten, by the policy too");
	policy_free(&p);
}

/* A leftover of a run: its directory, with a lock file (unless
 * no_lock), as make_run_dir leaves one. */
static char *leftover(const char *base, const char *name, bool with_lock)
{
	char *dir = path_join(base, name);
	tree_dir(dir);
	chmod(dir, 0700);
	_cleanup_free_ char *home = path_join(dir, "home/.cache");
	tree_dir(home);
	if (with_lock) {
		_cleanup_free_ char *lock = path_join(dir, "lock");
		tree_file(lock, 0600);
	}
	return dir;
}

static void age(const char *path, time_t seconds)
{
	struct timespec t[2];
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= seconds;
	t[1] = t[0];
	utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW);
}

static void test_sweep(void)
{
	struct policy p;
	policy_in_tree(&p);
	_cleanup_free_ char *tmpdir = tree_at("s");
	tree_dir("s");
	_cleanup_free_ char *tmp_var = xstrcat3("TMPDIR=", tmpdir, "");
	char *env[] = { tmp_var, NULL };
	struct places pl;
	places_plan(&p, BACKEND_NAMESPACES, env, &pl);
	tree_dir(path_below(pl.base, tree_base));
	chmod(pl.base, 0700);

	_cleanup_free_ char *dead = leftover(pl.base, "run-dead", true);
	_cleanup_free_ char *old = leftover(pl.base, "run-older", false);
	_cleanup_free_ char *live = leftover(pl.base, "run-live", true);
	_cleanup_free_ char *held = leftover(pl.base, "run-held", true);
	_cleanup_free_ char *staging_new = leftover(pl.base, "new-fresh", true);
	_cleanup_free_ char *staging_old = leftover(pl.base, "new-stale", true);
	_cleanup_free_ char *unrelated = leftover(pl.base, "cache-of-mine", false);
	_cleanup_free_ char *file = path_join(pl.base, "run-file");
	tree_file(file, 0600);
	age(staging_old, 3600);

	/* A live run: its lock held by an open file description of its own. */
	_cleanup_free_ char *live_lock = path_join(live, "lock");
	int live_fd = open(live_lock, O_RDWR | O_CLOEXEC);
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	ok(live_fd >= 0 && fcntl(live_fd, F_OFD_SETLK, &fl) == 0, "the live run's lock taken");

	/* A killed run whose command lives on: its cwd is in it. */
	int ready[2];
	if (pipe2(ready, O_CLOEXEC) < 0)
		diag("pipe: %m");
	pid_t child = fork();
	if (child == 0) {
		_cleanup_free_ char *in = path_join(held, "home");
		if (chdir(in) < 0)
			_exit(1);
		(void)!write(ready[1], "x", 1);
		pause();
		_exit(0);
	}
	char c;
	close(ready[1]);
	ok(read(ready[0], &c, 1) == 1, "a process holds run-held (its cwd)");
	close(ready[0]);

	/* The namespace jail's make sweeps what killed runs left, as the
	 * landlock backend's does: what is live or held stays. */
	struct places_failure f;
	is_int(places_make(&pl, &p, &f), 0, "namespaces: places_make");
	places_failure_free(&f);
	ok(!exists(dead) && !exists(old) && !exists(staging_old), "namespaces: its make sweeps the leftovers of killed runs");
	ok(exists(live) && exists(held) && exists(staging_new) && exists(unrelated) && exists(file),
	   "namespaces: its make keeps a live run, a held one, a fresh staging directory and what is not a run's");
	ok(pl.made && is_dir_mode(pl.run_dir, 0700), "namespaces: its run directory made (an empty mount point)");
	_cleanup_free_ char *mine = xstrdup(pl.run_dir);

	/* Killed runs again, for the keeper's sweep below. */
	free(leftover(pl.base, "run-dead", true));
	free(leftover(pl.base, "run-older", false));
	free(leftover(pl.base, "new-stale", true));
	age(staging_old, 3600);

	/* The keeper's sweep, once that run's stockade is gone: its own
	 * directory too, once its lock is released. */
	places_sweep(&pl, p.uid);
	ok(exists(mine), "places_sweep: this run's own kept while it holds its lock");
	ok(!exists(dead), "places_sweep: a run whose lock nobody holds: removed");
	ok(!exists(old), "places_sweep: an older stockade's run without a lock file: removed");
	ok(!exists(staging_old), "places_sweep: a staging directory over a minute old: removed");
	ok(exists(staging_new), "places_sweep: a staging directory just made: kept (its lock may not be taken yet)");
	ok(exists(live), "places_sweep: a live run (its lock held): kept");
	ok(exists(held), "places_sweep: a dead run a process still holds: kept");
	ok(exists(unrelated) && exists(file), "places_sweep: what is not run-* or new-*, or not a directory: kept");
	is_int(pl.n_notes, 0, "places_sweep: nothing to note");
	is_int(lock_free(live_lock), -EAGAIN, "places_sweep: the live run's lock still held, by it alone");

	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(live_fd);
	places_sweep(&pl, p.uid);
	ok(!exists(held) && !exists(live), "once its process is gone and the live run's lock released: both removed");
	ok(exists(mine), "this run's own still kept");

	/* The run's lock released without removing (its stockade killed):
	 * the next sweep takes it. */
	close(pl.lock_fd);
	pl.lock_fd = -1;
	pl.made = false;
	struct places pl2;
	places_plan(&p, BACKEND_LANDLOCK, env, &pl2);
	is_int(places_make(&pl2, &p, &f), 0, "landlock: places_make");
	places_failure_free(&f);
	ok(!exists(mine), "landlock: its make swept the run its killed stockade left");
	ok(exists(pl2.run_dir), "landlock: and made its own");
	ok(exists(staging_new) && exists(unrelated) && exists(file), "landlock: the rest kept as before");
	places_remove(&pl2);
	places_remove(&pl);
	policy_free(&p);
}

/* What stops places_make: a base others may write is not used. */
static void test_make_refused(void)
{
	struct policy p;
	policy_in_tree(&p);
	_cleanup_free_ char *tmpdir = tree_at("r");
	tree_dir("r");
	_cleanup_free_ char *tmp_var = xstrcat3("TMPDIR=", tmpdir, "");
	char *env[] = { tmp_var, NULL };
	struct places pl;
	places_plan(&p, BACKEND_LANDLOCK, env, &pl);
	tree_dir(path_below(pl.base, tree_base));
	chmod(pl.base, 0777);
	struct places_failure f;
	is_int(places_make(&pl, &p, &f), -EPERM, "a base others may write: -EPERM");
	ok(f.fault == PLACES_BASE && f.err == EPERM && f.path && streq(f.path, pl.base), "the fault: PLACES_BASE, EPERM, the base");
	ok(!pl.made && !exists(pl.run_dir), "nothing made in it");
	places_failure_free(&f);
	places_remove(&pl);
	policy_free(&p);
}

int main(void)
{
	buf_uid = fmt_u64(uid_buf, getuid());
	umask(022);
	tree_begin("places");
	test_plan_namespaces();
	test_plan_landlock();
	test_plan_run_landlock();
	test_plan_off();
	test_base();
	test_make_remove();
	test_sweep();
	test_make_refused();
	tree_end();
	return tap_done();
}
