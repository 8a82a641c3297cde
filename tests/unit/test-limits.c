/* limits and cgroup: what limits_setup decides, never against the host's
 * own cgroup tree. The run's cgroup is a directory of the test's (its
 * pids.max and memory.max plain files): the limits written there, and
 * what killed runs left beside it swept. With the host's cgroup mounts
 * hidden (a private mount namespace, /sys/fs/cgroup a tmpfs) no group
 * can be made, and RLIMIT_NPROC is the mechanism: the jail's own user
 * namespace's, the user's every process plus the limit on the landlock
 * backend, an outer run's lower one, never root's. limits_user_tasks
 * counts threads. The cgroup view of this process's groups is read, and
 * changes nothing. */
#include "cgroup/cgroup.h"
#include "cgroup/limits.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"
#include "tests/tap.h"
#include "tests/tree.h"

#define USER_UID 1000

static char *text_of(const char *path)
{
	char *text = NULL;
	if (read_file_at(AT_FDCWD, path, 4096, &text, NULL) < 0)
		return NULL;
	return text;
}

static bool exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* A pid that no process has now: a child's, reaped. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

static void test_cgroup_given(void)
{
	tree_dir("cg/parent/run");
	_cleanup_free_ char *run = tree_at("cg/parent/run");
	static const char *const files[] = { "cg/parent/run/pids.max", "cg/parent/run/memory.max", "cg/parent/run/memory.swap.max" };
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		tree_file(files[i], 0644);
	/* Left beside it by runs whose stockade is gone, and not. */
	char name[64];
	pid_t dead = dead_pid();
	snprintf(name, sizeof(name), "cg/parent/stockade-limits-%d-3", (int)dead);
	tree_dir(name);
	_cleanup_free_ char *dead_limits = tree_at(name);
	snprintf(name, sizeof(name), "cg/parent/stockade-%d-1", (int)dead);
	tree_dir(name);
	_cleanup_free_ char *dead_run = tree_at(name);
	snprintf(name, sizeof(name), "cg/parent/stockade-%d-9/busy", (int)dead);
	tree_dir(name);
	_cleanup_free_ char *dead_busy = tree_at(name);
	snprintf(name, sizeof(name), "cg/parent/stockade-%d-2", (int)getpid());
	tree_dir(name);
	_cleanup_free_ char *live = tree_at(name);
	tree_dir("cg/parent/stockade-0-1");
	tree_dir("cg/parent/stockade-x");
	tree_dir("cg/parent/other-1");
	_cleanup_free_ char *zero = tree_at("cg/parent/stockade-0-1");
	_cleanup_free_ char *named = tree_at("cg/parent/stockade-x");
	_cleanup_free_ char *other = tree_at("cg/parent/other-1");

	struct policy p;
	policy_init(&p);
	p.uid = USER_UID;
	p.limits.max_procs = 4096;
	p.limits.memory = (struct size_spec){ .bytes = 512ULL << 20 };
	struct run_limits l;
	limits_setup(&p, BACKEND_LANDLOCK, run, &l);
	is_str(l.procs_by, "cgroup pids.max", "the run's cgroup: processes by its pids.max");
	is_str(l.memory_by, "cgroup memory.max", "the run's cgroup: memory by its memory.max");
	is_int(l.max_procs, 4096, "max_procs as the policy says");
	is_int(l.memory, 512ULL << 20, "memory: 512 MiB in bytes");
	is_int(l.nproc, 0, "no RLIMIT_NPROC where the cgroup holds it");
	ok(!l.nproc_plus_user, "nor the user's tasks added");
	is_int(l.n_dirs, 0, "no group of its own made");
	_cleanup_free_ char *pids_events = path_join(run, "pids.events");
	_cleanup_free_ char *memory_events = path_join(run, "memory.events");
	is_str(l.pids_events, pids_events, "refused forks are read from its pids.events");
	is_str(l.memory_events, memory_events, "OOM kills from its memory.events");
	_cleanup_free_ char *pmax = tree_at(files[0]), *mmax = tree_at(files[1]), *smax = tree_at(files[2]);
	_cleanup_free_ char *pt = text_of(pmax), *mt = text_of(mmax), *st = text_of(smax);
	is_str(pt, "4096", "pids.max: 4096 written");
	is_str(mt, "536870912", "memory.max: the bytes written");
	is_str(st, "0", "memory.swap.max: 0 (no swapping past the limit)");

	ok(!exists(dead_limits), "swept: stockade-limits-DEADPID-N, its process gone");
	ok(!exists(dead_run), "swept: stockade-DEADPID-N, its process gone");
	ok(exists(dead_busy), "kept: a dead run's group that is not empty (rmdir refuses)");
	ok(exists(live), "kept: a group of a live process");
	ok(exists(zero) && exists(named) && exists(other), "kept: names that are no pid, or no stockade's");
	limits_release(&l);
	ok(exists(run), "limits_release: the given cgroup is not removed (not the limits' own)");
	ok(l.procs_by == NULL && l.pids_events == NULL && l.procs[0] == -1, "limits_release: forgotten");

	/* The events files, read after the run. */
	struct report rep;
	report_init(&rep);
	limits_setup(&p, BACKEND_LANDLOCK, run, &l);
	int fd = open(pids_events, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ok(fd >= 0 && write_all(fd, "max 3\n", 6) == 0, "pids.events: 3 refused forks");
	if (fd >= 0)
		close(fd);
	fd = open(memory_events, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ok(fd >= 0 && write_all(fd, "low 0\nhigh 0\nmax 9\noom 2\noom_kill 1\n", 35) == 0, "memory.events: one OOM kill");
	if (fd >= 0)
		close(fd);
	/* log_note's lines go to stderr, outside the TAP stream. */
	limits_after(&l, &p, &rep);
	is_int(rep.n_denials, 2, "limits_after: two denials, the forks and the OOM kill");
	if (rep.n_denials == 2) {
		const struct denial *d = &rep.denials[0], *m = &rep.denials[1];
		is_str(d->what, "processes: the limit of 4096 (default: limits), 3 fork(s)", "the forks: what");
		is_str(d->fix, "--max-procs 8192", "the forks: the fix doubles the limit");
		is_str(d->rule, "at most 4096 processes (cgroup pids.max)", "the forks: the rule and its mechanism");
		is_str(m->what, "memory: the limit (default: limits), 1 process(es) killed", "the OOM kill: what (oom_kill, not oom)");
		is_str(m->fix, "--memory 1024M", "the OOM kill: the fix doubles the limit, in MiB");
	}
	report_free(&rep);
	limits_release(&l);
	policy_free(&p);
}

struct decided {
	char procs_by[256];
	char memory_by[256];
	unsigned long nproc;
	bool plus_user;
	size_t n_dirs;
	uint64_t memory;
	int hidden;		/* 0, or why the cgroup mounts could not be hidden (-errno) */
};

/* /sys/fs/cgroup a tmpfs of this process's own mount namespace: nothing
 * there is a cgroup, and nothing of the host's can be written. */
static int hide_cgroups(void)
{
	if (unshare(CLONE_NEWNS) < 0) {
		uid_t uid = getuid();
		gid_t gid = getgid();
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			return -errno;
		char map[64];
		int fd = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			(void)!write(fd, "deny", 4);
			close(fd);
		}
		snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid, (unsigned)uid);
		fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			return -errno;
		close(fd);
		snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid, (unsigned)gid);
		fd = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			return -errno;
		close(fd);
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/sys/fs/cgroup", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0755") < 0)
		return -errno;
	return 0;
}

/* What limits_setup decides in a child whose cgroup mounts are hidden
 * (with hard, RLIMIT_NPROC's hard limit there first, unless 0). */
static struct decided decide(uid_t uid, enum backend backend, const char *run_cgroup, unsigned long max_procs,
			     rlim_t hard)
{
	struct decided d = { 0 };
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		d.hidden = -errno;
		return d;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		d.hidden = hide_cgroups();
		if (d.hidden == 0) {
			if (hard) {
				struct rlimit rl = { hard, hard };
				(void)setrlimit(RLIMIT_NPROC, &rl);
			}
			struct policy p;
			policy_init(&p);
			p.uid = uid;
			p.limits.max_procs = max_procs;
			p.limits.memory = (struct size_spec){ .bytes = 1ULL << 30 };
			struct run_limits l;
			limits_setup(&p, backend, run_cgroup, &l);
			snprintf(d.procs_by, sizeof(d.procs_by), "%s", l.procs_by ? l.procs_by : "(none)");
			snprintf(d.memory_by, sizeof(d.memory_by), "%s", l.memory_by ? l.memory_by : "(none)");
			d.nproc = l.nproc;
			d.plus_user = l.nproc_plus_user;
			d.n_dirs = l.n_dirs;
			d.memory = l.memory;
			limits_release(&l);
			policy_free(&p);
		}
		_exit(write(pfd[1], &d, sizeof(d)) == sizeof(d) ? 0 : 1);
	}
	close(pfd[1]);
	if (read(pfd[0], &d, sizeof(d)) != sizeof(d))
		d.hidden = -EPIPE;
	close(pfd[0]);
	waitpid(pid, NULL, 0);
	return d;
}

#define NPROC_NS "RLIMIT_NPROC, which counts the jail's own user namespace"
#define NPROC_USER                                                                                                     \
	"RLIMIT_NPROC, which counts every process of the user: the run may start what the user runs now plus the limit " \
	"(at most an eighth more where the host's tasks stand in for the user's)"
#define NPROC_OUTER "RLIMIT_NPROC, lower already where this run started (an outer run's limit, which holds)"

static void test_no_cgroup(void)
{
	struct decided d = decide(USER_UID, BACKEND_NAMESPACES, NULL, 64, 0);
	if (d.hidden < 0) {
		diag("cannot hide /sys/fs/cgroup in a mount namespace: %s", strerror(-d.hidden));
		ok(1, "# SKIP RLIMIT_NPROC cases: no private mount namespace here");
		return;
	}
	is_str(d.procs_by, NPROC_NS, "namespaces, no cgroup: processes by RLIMIT_NPROC of the jail's user namespace");
	is_int(d.nproc, 64, "namespaces: RLIMIT_NPROC is --max-procs");
	ok(!d.plus_user, "namespaces: the user's other tasks are not added");
	is_str(d.memory_by, "(none)", "no cgroup: memory bounded by nothing");
	is_int(d.n_dirs, 0, "no cgroup: no group made");
	is_int(d.memory, 1ULL << 30, "the memory asked for, in bytes, all the same");

	d = decide(USER_UID, BACKEND_LANDLOCK, NULL, 64, 0);
	is_str(d.procs_by, NPROC_USER, "landlock, no cgroup: RLIMIT_NPROC over every task of the user");
	is_int(d.nproc, 64, "landlock: the limit");
	ok(d.plus_user, "landlock: plus what the user runs now");

	d = decide(0, BACKEND_NAMESPACES, NULL, 64, 0);
	is_str(d.procs_by, "(none)", "root, no cgroup: nothing bounds its processes");
	is_int(d.nproc, 0, "root: no RLIMIT_NPROC (it never holds root)");
	d = decide(0, BACKEND_LANDLOCK, NULL, 64, 0);
	is_str(d.procs_by, "(none)", "root on landlock: nothing either");

	d = decide(USER_UID, BACKEND_LANDLOCK, NULL, 64, 32);
	is_str(d.procs_by, NPROC_OUTER, "an outer run's hard limit of 32, below 64: that one");
	is_int(d.nproc, 32, "the outer hard limit");
	ok(!d.plus_user, "and no user's tasks added to it");
	d = decide(USER_UID, BACKEND_NAMESPACES, NULL, 64, 64);
	is_str(d.procs_by, NPROC_NS, "a hard limit equal to --max-procs: ours holds");
	is_int(d.nproc, 64, "the limit, unchanged");

	d = decide(USER_UID, BACKEND_NONE, NULL, 64, 0);
	ok(streq(d.procs_by, "(none)") && streq(d.memory_by, "(none)") && d.nproc == 0,
	   "--mode off: no mechanism at all");
	is_int(d.memory, 1ULL << 30, "--mode off: the bytes still computed");

	/* A run cgroup without the memory controller: pids there, memory
	 * unbounded; without either: RLIMIT_NPROC. */
	tree_dir("nomem");
	tree_file("nomem/pids.max", 0644);
	_cleanup_free_ char *nomem = tree_at("nomem");
	d = decide(USER_UID, BACKEND_LANDLOCK, nomem, 64, 0);
	is_str(d.procs_by, "cgroup pids.max", "a run cgroup with pids alone: pids.max");
	is_str(d.memory_by, "(none)", "and memory unbounded");
	is_int(d.nproc, 0, "no RLIMIT_NPROC then");
	tree_dir("bare");
	_cleanup_free_ char *bare = tree_at("bare");
	d = decide(USER_UID, BACKEND_LANDLOCK, bare, 64, 0);
	is_str(d.procs_by, NPROC_USER, "a run cgroup without controllers: RLIMIT_NPROC");
	ok(!exists("/sys/fs/cgroup/stockade-limits-test"), "nothing of the host's touched");
}

/* A task count of uid that only this test changes: as root, a uid no
 * process has; else the caller's own (others may start or end tasks
 * meanwhile: tried a few times). */
static void *idle(void *arg)
{
	pause();
	return NULL;
}

static pid_t start_threads(uid_t uid, int n_threads, int *ret_fd)
{
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(pfd[0]);
		if (geteuid() == 0 && uid != 0) {
			if (setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0)
				_exit(1);
			/* Where the kernel makes a process that changed its
			 * credentials undumpable, its /proc entries are
			 * root's: dumpable again, so they are the uid's. */
			prctl(PR_SET_DUMPABLE, 1);
		}
		pthread_t t;
		for (int i = 0; i < n_threads; i++)
			if (pthread_create(&t, NULL, idle, NULL) != 0)
				_exit(1);
		(void)!write(pfd[1], "x", 1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	char c;
	if (read(pfd[0], &c, 1) != 1) {
		close(pfd[0]);
		waitpid(pid, NULL, 0);
		return -1;
	}
	*ret_fd = pfd[0];
	return pid;
}

static void stop(pid_t pid, int fd)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
}

/* limits_user_tasks_within: never below the exact count, at most slack
 * above it; the host's tasks stand in only where they fit the slack.
 * Each count is taken at its own moment on a host whose tasks come and
 * go: compared within 64 of each other. */
static void test_user_tasks_within(void)
{
	unsigned long exact = limits_user_tasks(getuid());
	ok(limits_user_tasks_within(getuid(), 0) >= 1, "no slack: the exact count (this process at least)");
	unsigned long wide = limits_user_tasks_within(getuid(), 1UL << 30);
	char buf[128] = { 0 };
	int fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	const char *slash = n > 0 ? strchr(buf, '/') : NULL;
	unsigned long total = slash ? strtoul(slash + 1, NULL, 10) : 0;
	ok(wide + 64 >= exact && total > 0 && wide <= total + 64 && wide + 64 >= total,
	   "a slack above the host's tasks: their count (%lu; the host's %lu, the user's %lu)", wide, total, exact);
	unsigned long tight = limits_user_tasks_within(getuid(), total / 2);
	ok(tight + 8 >= exact && tight <= exact + 8, "a slack below the host's tasks: the user's own count (%lu, %lu)", tight,
	   exact);
}

static void test_user_tasks(void)
{
	ok(limits_user_tasks(getuid()) >= 1, "limits_user_tasks(getuid()): this process at least");
	if (geteuid() == 0) {
		uid_t uid = 0;
		for (uid_t u = 61000; u < 61100 && !uid; u++)
			if (limits_user_tasks(u) == 0)
				uid = u;
		ok(uid != 0, "a uid with no task (%u)", (unsigned)uid);
		int fd;
		pid_t pid = start_threads(uid, 3, &fd);
		ok(pid > 0, "a child of that uid with 3 threads more");
		is_int(limits_user_tasks(uid), 4, "its tasks: the main thread and 3");
		if (pid > 0)
			stop(pid, fd);
		is_int(limits_user_tasks(uid), 0, "and none once it is gone");
		pid = start_threads(uid, 0, &fd);
		is_int(limits_user_tasks(uid), 1, "a single-threaded process: 1");
		if (pid > 0)
			stop(pid, fd);
		return;
	}
	unsigned long before = 0, during = 0;
	bool same = false;
	for (int attempt = 0; attempt < 5 && !same; attempt++) {
		before = limits_user_tasks(getuid());
		int fd;
		pid_t pid = start_threads(getuid(), 3, &fd);
		during = limits_user_tasks(getuid());
		if (pid > 0)
			stop(pid, fd);
		same = limits_user_tasks(getuid()) == before && during == before + 4;
	}
	if (!ok(same, "a child with 3 threads: 4 tasks more, and as many fewer once gone"))
		diag("before %lu, during %lu", before, during);
}

static void test_cgroup_mechanics(void)
{
	struct run_cgroup cg = RUN_CGROUP_INIT;
	is_int(cgroup_kill(&cg), -ENOENT, "cgroup_kill without a cgroup: -ENOENT");
	is_int(cgroup_join(&cg), 0, "cgroup_join without one: nothing to join, 0");
	cgroup_remove(&cg);
	cgroup_release(&cg);
	ok(cg.dir == NULL && cg.dir_fd == -1 && cg.procs_fd == -1, "cgroup_release of none: as initialised");

	/* What a made group is: a directory; cgroup_kill writes its
	 * cgroup.kill, cgroup_join its cgroup.procs (files here). */
	tree_dir("fakecg");
	tree_file("fakecg/cgroup.kill", 0644);
	tree_file("fakecg/cgroup.procs", 0644);
	cg.dir = tree_at("fakecg");
	is_int(cgroup_kill(&cg), 0, "cgroup_kill: 0");
	_cleanup_free_ char *kill_file = tree_at("fakecg/cgroup.kill"), *procs = tree_at("fakecg/cgroup.procs");
	_cleanup_free_ char *k = text_of(kill_file);
	is_str(k, "1", "cgroup_kill wrote 1 to cgroup.kill");
	cg.procs_fd = open(procs, O_WRONLY | O_CLOEXEC);
	is_int(cgroup_join(&cg), 0, "cgroup_join: 0");
	_cleanup_free_ char *pr = text_of(procs);
	is_str(pr, "0", "cgroup_join wrote 0 (the writer itself) to cgroup.procs");
	unlink(kill_file);
	unlink(procs);
	cgroup_release(&cg);
	_cleanup_free_ char *dir = tree_at("fakecg");
	ok(!exists(dir), "cgroup_release: the empty group removed");
	ok(cg.dir == NULL && cg.procs_fd == -1, "and forgotten");
}

/* This process's group in each hierarchy, as /proc/self/cgroup says:
 * v2's "0::PATH" for "", and each v1 controller's line for its name. */
static void test_own(void)
{
	_cleanup_free_ char *text = text_of("/proc/self/cgroup");
	if (!ok(text != NULL, "/proc/self/cgroup read"))
		return;
	size_t lines = 0, right = 0;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
		if (!b)
			continue;
		_cleanup_free_ char *ctrls = xstrndup(a + 1, (size_t)(b - a - 1));
		const char *want = b + 1;
		if (str_has_prefix(line, "0::")) {
			_cleanup_free_ char *got = cgroup_own("");
			lines++;
			right += got && streq(got, want);
			continue;
		}
		/* the last controller of the line, looked up by its name */
		const char *last = strrchr(ctrls, ',') ? strrchr(ctrls, ',') + 1 : ctrls;
		if (!*last || strchr(last, '='))
			continue;	/* a named hierarchy (name=systemd) */
		_cleanup_free_ char *got = cgroup_own(last);
		lines++;
		right += got && streq(got, want);
	}
	ok(lines > 0 && right == lines, "cgroup_own: each hierarchy's group as /proc/self/cgroup gives it (%zu of %zu)",
	   right, lines);
	_cleanup_free_ char *none = cgroup_own("no-such-controller");
	ok(none == NULL, "cgroup_own: NULL for a hierarchy it is not in");
}

/* The view of this process's own groups, read from /proc and the mounts
 * as they are: whatever the host's layout, its paths are beneath
 * /sys/fs/cgroup, whole only where made, and never cgroup.procs. */
static void test_view(void)
{
	struct cgroup_view v;
	cgroup_view(NULL, 0, &v);
	bool beneath = true, files_only = true, no_procs = true;
	for (size_t i = 0; i < v.n_paths; i++) {
		struct stat st;
		beneath = beneath && path_is_beneath(v.paths[i].path, "/sys/fs/cgroup") &&
			  !streq(v.paths[i].path, "/sys/fs/cgroup");
		files_only = files_only && !v.paths[i].whole && lstat(v.paths[i].path, &st) == 0 && S_ISREG(st.st_mode);
		const char *base = strrchr(v.paths[i].path, '/') + 1;
		no_procs = no_procs && !streq(base, "cgroup.procs") && !streq(base, "tasks");
		/* a v1 hierarchy of no controller the view shows is not read */
		static const char *const unread[] = { "/sys/fs/cgroup/devices/", "/sys/fs/cgroup/freezer/",
						      "/sys/fs/cgroup/systemd/", "/sys/fs/cgroup/net_cls/" };
		for (size_t k = 0; k < ARRAY_SIZE(unread); k++)
			no_procs = no_procs && !str_has_prefix(v.paths[i].path, unread[k]);
	}
	diag("the view: %zu paths", v.n_paths);
	ok(beneath, "the view: beneath /sys/fs/cgroup, never the tree itself");
	ok(files_only, "nothing made: regular files alone, none whole");
	ok(no_procs, "never cgroup.procs or tasks, nor a hierarchy of devices, freezer, name=systemd or net_cls");
	size_t n_plain = v.n_paths;
	cgroup_view_free(&v);
	is_int(v.n_paths, 0, "cgroup_view_free: emptied");

	/* A group made for the run (named, never made here): shown whole, in
	 * place of the files of the group it shares with stockade. */
	const char *mount = NULL;
	static const char *const mounts[] = { "/sys/fs/cgroup/unified", "/sys/fs/cgroup/pids", "/sys/fs/cgroup" };
	for (size_t i = 0; i < ARRAY_SIZE(mounts) && !mount; i++) {
		struct stat st;
		if (stat(mounts[i], &st) == 0 && n_plain > 0)
			mount = mounts[i];
	}
	if (!mount) {
		ok(1, "# SKIP no cgroup hierarchy in the view here");
		return;
	}
	_cleanup_free_ char *made = path_join(mount, "stockade-test-never-made");
	char *made_v[] = { made };
	cgroup_view(made_v, 1, &v);
	size_t whole = 0;
	bool found = false;
	for (size_t i = 0; i < v.n_paths; i++) {
		whole += v.paths[i].whole;
		found = found || (v.paths[i].whole && streq(v.paths[i].path, made));
	}
	ok(found, "a made group: in the view, whole (%s)", made);
	is_int(whole, 1, "the only whole one");
	ok(!exists(made), "and nothing made by looking");
	cgroup_view_free(&v);
}

static void test_size(void)
{
	struct size_spec s;
	static const struct {
		const char *in;
		int r;
		uint64_t bytes;
		unsigned percent;
	} rows[] = {
		{ "512M", 0, 512ULL << 20, 0 },	  { "4G", 0, 4ULL << 30, 0 },	   { "4GiB", 0, 4ULL << 30, 0 },
		{ "2k", 0, 2048, 0 },		  { "1048576", 0, 1048576, 0 },	   { "1T", 0, 1ULL << 40, 0 },
		{ "25%", 0, 0, 25 },		  { "100%", 0, 0, 100 },	   { "101%", -EINVAL, 0, 0 },
		{ "0", -EINVAL, 0, 0 },		  { "0%", -EINVAL, 0, 0 },	   { "-1G", -EINVAL, 0, 0 },
		{ "G", -EINVAL, 0, 0 },		  { "5X", -EINVAL, 0, 0 },	   { "5Gb", -EINVAL, 0, 0 },
		{ "16777216T", -EINVAL, 0, 0 },	  { "16777215T", 0, 16777215ULL << 40, 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		int r = size_spec_parse(rows[i].in, &s);
		ok(r == rows[i].r && s.bytes == rows[i].bytes && s.percent == rows[i].percent,
		   "size '%s': %d, %llu bytes, %u%%", rows[i].in, r, (unsigned long long)s.bytes, s.percent);
	}
	s = (struct size_spec){ .percent = 33 };
	is_int(size_spec_bytes(&s, 1234567), 407407, "33%% of 1234567 bytes, rounded down, no overflow on the way");
	s = (struct size_spec){ .percent = 75 };
	is_int(size_spec_bytes(&s, UINT64_MAX), UINT64_MAX / 100 * 75 + UINT64_MAX % 100 * 75 / 100, "75%% of 2^64-1: no overflow");
	unsigned long n = 0;
	is_int(max_procs_parse("2", &n), 0, "max-procs 2: the least");
	is_int(max_procs_parse("1", &n), -EINVAL, "max-procs 1: refused");
	is_int(max_procs_parse("4194305", &n), -EINVAL, "max-procs above 2^22: refused");
	is_int(max_procs_parse("64x", &n), -EINVAL, "max-procs 64x: refused");

	/* limits_setup's memory: the share of this host's memory. */
	struct sysinfo si;
	sysinfo(&si);
	struct policy p;
	policy_init(&p);
	p.uid = USER_UID;
	struct run_limits l;
	limits_setup(&p, BACKEND_NONE, NULL, &l);
	uint64_t ram = (uint64_t)si.totalram * si.mem_unit;
	is_int(l.memory, ram / 100 * LIMIT_MEMORY_PERCENT + ram % 100 * LIMIT_MEMORY_PERCENT / 100,
	       "the default memory: 75%% of the host's");
	is_int(l.max_procs, LIMIT_MAX_PROCS, "the default max-procs");
	limits_release(&l);
	policy_free(&p);
}

int main(void)
{
	tree_begin("limits");
	test_size();
	test_cgroup_given();
	test_no_cgroup();
	test_user_tasks();
	test_user_tasks_within();
	test_cgroup_mechanics();
	test_own();
	test_view();
	tree_end();
	return tap_done();
}
