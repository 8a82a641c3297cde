/* lib/fs.c's rm_rf() at any depth and with few descriptors, never through
 * a symlink nor into another mount; dirs_held() naming what a process
 * holds by its cwd, a descriptor or a mapping. Every tree is made under a
 * mkdtemp directory in /tmp and built through descriptors: no chmod here
 * ever takes a path that could pass a symlink. lib/fd.c's fd_closer
 * closing what it was given, whatever the order, and nothing else. */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"
#include "tests/tap.h"

static char *base;

static char *at(const char *rel)
{
	return path_join(base, rel);
}

static bool exists(const char *rel)
{
	_cleanup_free_ char *p = at(rel);
	struct stat st;
	return lstat(p, &st) == 0;
}

static void must(int r, const char *what)
{
	if (r < 0) {
		printf("Bail out! %s: %s\n", what, strerror(errno));
		exit(1);
	}
}

static void file_in(int dirfd, const char *name, const char *content)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	must(fd, name);
	if (content)
		must((int)write(fd, content, strlen(content)), name);
	close(fd);
}

static int dir_in(int dirfd, const char *name)
{
	if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
		must(-1, name);
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	must(fd, name);
	return fd;
}

/* Beside every tree: a directory and a file its symlinks point at, whose
 * contents and modes must come through unchanged. */
static void make_outside(void)
{
	_cleanup_free_ char *o = at("outside");
	must(mkdir(o, 0755), o);
	_cleanup_close_ int fd = open(o, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	must(fd, o);
	file_in(fd, "keep", "keep me");
	_cleanup_close_ int sub = dir_in(fd, "sub");
	file_in(sub, "f", "keep me too");
	must(fchmod(sub, 0555), "outside/sub");
	must(fchmod(fd, 0555), o);
}

static mode_t mode_of(const char *rel)
{
	_cleanup_free_ char *p = at(rel);
	struct stat st;
	return lstat(p, &st) == 0 ? st.st_mode & 07777 : (mode_t)-1;
}

static void check_outside(const char *how)
{
	_cleanup_free_ char *keep = at("outside/keep");
	char buf[32] = "";
	int fd = open(keep, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	is_str(buf, "keep me", "%s: the file the symlinks point at is unchanged", how);
	ok(exists("outside/sub/f"), "%s: the directory they point at keeps its contents", how);
	is_int(mode_of("outside"), 0555, "%s: the directory they point at keeps its mode", how);
	is_int(mode_of("outside/sub"), 0555, "%s: so does the one below it", how);
}

/* Links out of the tree, in the directory dirfd. */
static void links_out(int dirfd, const char *outside)
{
	_cleanup_free_ char *keep = path_join(outside, "keep");
	must(symlinkat(outside, dirfd, "link-dir"), "link-dir");
	must(symlinkat(keep, dirfd, "link-file"), "link-file");
	must(symlinkat("/etc", dirfd, "link-etc"), "link-etc");
}

static int max_fds(void)
{
	struct rlimit rl;
	return getrlimit(RLIMIT_NOFILE, &rl) == 0 ? (int)rl.rlim_cur : -1;
}

/* rm_rf with at most limit descriptors open (three are stdio's). */
static int rm_rf_with_fds(const char *path, rlim_t limit)
{
	struct rlimit old, tight;
	must(getrlimit(RLIMIT_NOFILE, &old), "getrlimit");
	tight = (struct rlimit){ .rlim_cur = limit, .rlim_max = old.rlim_max };
	must(setrlimit(RLIMIT_NOFILE, &tight), "setrlimit");
	int r = rm_rf(path);
	must(setrlimit(RLIMIT_NOFILE, &old), "setrlimit");
	return r;
}

static void test_deep(void)
{
	/* 10,000 levels, a file and links out on some, and directories left
	 * 0500 and 0000 on the way, each made so once its child exists,
	 * through its own descriptor. */
	_cleanup_free_ char *top = at("deep");
	_cleanup_free_ char *outside = at("outside");
	must(mkdir(top, 0755), top);
	int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	must(fd, top);
	for (int level = 1; level <= 10000; level++) {
		int sub = dir_in(fd, "d");
		if (level % 97 == 0)
			file_in(sub, "f", "x");
		if (level % 1000 == 3)
			links_out(sub, outside);
		if (level % 1500 == 7)
			must(fchmod(fd, 0500), "chmod 0500");
		else if (level % 2500 == 11)
			must(fchmod(fd, 0000), "chmod 0000");
		close(fd);
		fd = sub;
	}
	close(fd);
	diag("descriptors allowed: %d; rm_rf gets 80", max_fds());
	is_int(rm_rf_with_fds(top, 80), 0, "a tree 10,000 levels deep: rm_rf succeeds with 80 descriptors");
	ok(!exists("deep"), "the 10,000-level tree is gone");
	check_outside("10,000 levels");
}

static void test_wide(void)
{
	/* 100,000 files: 90,000 in one directory, 10,000 over 100 more. */
	_cleanup_free_ char *top = at("wide");
	must(mkdir(top, 0755), top);
	_cleanup_close_ int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	must(fd, top);
	char name[32];
	_cleanup_close_ int flat = dir_in(fd, "flat");
	for (int i = 0; i < 90000; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		file_in(flat, name, NULL);
	}
	for (int d = 0; d < 100; d++) {
		snprintf(name, sizeof(name), "d%d", d);
		_cleanup_close_ int sub = dir_in(fd, name);
		for (int i = 0; i < 100; i++) {
			snprintf(name, sizeof(name), "f%d", i);
			file_in(sub, name, NULL);
		}
	}
	is_int(rm_rf(top), 0, "a tree of 100,000 files: rm_rf succeeds");
	ok(!exists("wide"), "the 100,000 files are gone");
}

static void test_links(void)
{
	/* Links out at the top, at depth 1, and below where rm_rf moves
	 * directories up; a link where a moved one's new name would go. */
	_cleanup_free_ char *top = at("links");
	_cleanup_free_ char *outside = at("outside");
	must(mkdir(top, 0755), top);
	int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	must(fd, top);
	links_out(fd, outside);
	must(symlinkat(outside, fd, "rm-deep-0"), "rm-deep-0");
	_cleanup_close_ int taken = dir_in(fd, "rm-deep-1");
	file_in(taken, "f", "x");
	for (int level = 1; level <= 300; level++) {
		int sub = dir_in(fd, "d");
		if (level == 1 || level == 63 || level == 64 || level == 65 || level == 200)
			links_out(sub, outside);
		close(fd);
		fd = sub;
	}
	close(fd);
	is_int(rm_rf(top), 0, "a tree with symlinks out of it: rm_rf succeeds");
	ok(!exists("links"), "the tree with symlinks is gone");
	check_outside("symlinks");

	_cleanup_free_ char *lnk = at("link-to-outside");
	must(symlink(outside, lnk), lnk);
	is_int(rm_rf(lnk), 0, "rm_rf of a symlink to a directory: 0");
	ok(!exists("link-to-outside"), "the symlink itself is gone");
	check_outside("rm_rf of a symlink");

	_cleanup_free_ char *missing = at("never-was");
	is_int(rm_rf(missing), 0, "rm_rf of a missing path: 0");
}

/* Another mount inside the tree: not entered, its contents left whole,
 * the rest removed. In a mount namespace of a child's own. */
static void test_mounts(void)
{
	_cleanup_free_ char *outside = at("outside");
	uid_t uid = geteuid();
	gid_t gid = getegid();
	pid_t pid = fork();
	if (pid == 0) {
		if (unshare(uid == 0 ? CLONE_NEWNS : CLONE_NEWUSER | CLONE_NEWNS) < 0)
			_exit(77);
		if (uid != 0) {
			/* The same ids inside: the tree stays ours. */
			char map[64];
			snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
			_cleanup_close_ int u = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
			_cleanup_close_ int s = open("/proc/self/setgroups", O_WRONLY | O_CLOEXEC);
			if (u < 0 || write(u, map, strlen(map)) < 0 || s < 0 || write(s, "deny", 4) < 0)
				_exit(77);
			snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
			_cleanup_close_ int g = open("/proc/self/gid_map", O_WRONLY | O_CLOEXEC);
			if (g < 0 || write(g, map, strlen(map)) < 0)
				_exit(77);
		}
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
			_exit(77);
		_cleanup_free_ char *top = at("mounts");
		_cleanup_free_ char *tmpfs = at("mounts/a/tmpfs");
		_cleanup_free_ char *bind = at("mounts/b/bind");
		if (mkdir(top, 0755) < 0)
			_exit(90);
		int fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		int a = dir_in(fd, "a"), b = dir_in(fd, "b");
		close(dir_in(a, "tmpfs"));
		close(dir_in(b, "bind"));
		file_in(a, "sibling", "x");
		close(a);
		close(b);
		close(fd);
		if (mount("t", tmpfs, "tmpfs", 0, "size=1m") < 0 || mount(outside, bind, NULL, MS_BIND, NULL) < 0)
			_exit(77);
		_cleanup_free_ char *in_tmpfs = at("mounts/a/tmpfs/keep");
		int k = open(in_tmpfs, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (k < 0)
			_exit(91);
		close(k);
		int r = rm_rf(top);
		struct stat st;
		/* 1: the error is named; 2: the sibling went; 4: the tmpfs
		 * kept its file; 8: the bind mount its target's. */
		int got = (r == -EXDEV || r == -EBUSY) | (!exists("mounts/a/sibling")) << 1 |
			  (stat(in_tmpfs, &st) == 0) << 2 | exists("mounts/b/bind/keep") << 3;
		umount2(tmpfs, MNT_DETACH);
		umount2(bind, MNT_DETACH);
		_exit(rm_rf(top) == 0 ? got : 92);
	}
	int status;
	waitpid(pid, &status, 0);
	int got = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	if (got == 77) {
		ok(1, "# SKIP no mount namespace of a child's own here");
		return;
	}
	if (got >= 90)
		diag("the mount test's child failed at step %d", got);
	ok(got >= 0 && got < 90 && (got & 1), "a mount inside the tree: rm_rf says so (EXDEV or EBUSY)");
	ok(got >= 0 && got < 90 && (got & 2), "what is beside the mount is removed all the same");
	ok(got >= 0 && got < 90 && (got & 4), "a tmpfs mounted inside keeps its file");
	ok(got >= 0 && got < 90 && (got & 8), "a bind mount of the same file system inside is not entered");
	check_outside("mounts");
}

/* A child that holds dir by its cwd (how 'c') or a mapping only (how
 * 'm'), until killed; its pid. */
static pid_t holder(const char *dir, char how)
{
	int p[2];
	must(pipe2(p, O_CLOEXEC), "pipe");
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		if (how == 'c' && chdir(dir) < 0)
			_exit(1);
		if (how == 'm') {
			_cleanup_free_ char *f = path_join(dir, "mapped");
			int fd = open(f, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
			if (fd < 0 || ftruncate(fd, 4096) < 0 ||
			    mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED || chdir("/") < 0)
				_exit(1);
			close(fd);
		}
		(void)!write(p[1], "r", 1);
		for (;;)
			pause();
	}
	close(p[1]);
	char c;
	(void)!read(p[0], &c, 1);
	close(p[0]);
	return pid;
}

static void reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

static void test_held(void)
{
	_cleanup_free_ char *d_fd = at("held-fd"), *d_cwd = at("held-cwd"), *d_map = at("held-map"),
			    *d_free = at("held-free"), *d_near = at("held-fd-not");
	char *dirs[] = { d_fd, d_cwd, d_map, d_free, d_near };
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		must(mkdir(dirs[i], 0700), dirs[i]);
	/* /proc writes paths without symlinks: the base's real one. */
	_cleanup_free_ char *real = realpath(base, NULL);
	_cleanup_free_ char *r_fd = path_join(real, "held-fd"), *r_cwd = path_join(real, "held-cwd"),
			    *r_map = path_join(real, "held-map"), *r_free = path_join(real, "held-free"),
			    *r_near = path_join(real, "held-fd-not");
	char *canon[] = { r_fd, r_cwd, r_map, r_free, r_near };
	pid_t by_cwd = holder(d_cwd, 'c');
	pid_t by_map = holder(d_map, 'm');
	/* Opened after the forks: this process alone holds it. */
	_cleanup_free_ char *f = path_join(d_fd, "open");
	int fd = open(f, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	must(fd, f);
	bool held[ARRAY_SIZE(canon)];

	is_int(dirs_held(canon, ARRAY_SIZE(canon), geteuid(), 0, held), 0, "dirs_held reads /proc");
	ok(held[0], "a directory with a file open in it is held");
	ok(held[1], "a directory a process has for its cwd is held");
	ok(held[2], "a directory with a file mapped (its descriptor closed) is held");
	ok(!held[3], "a directory nothing is in is not held");
	ok(!held[4], "a directory whose name the held one's begins with is not held");

	is_int(dirs_held(canon, 1, geteuid(), getpid(), held), 0, "dirs_held, this process left out");
	ok(!held[0], "what the process left out holds does not count");
	is_int(dirs_held(canon + 1, 1, geteuid() + 1, 0, held), 0, "dirs_held for another uid");
	ok(!held[0], "another user's processes are not looked at");

	reap(by_cwd);
	reap(by_map);
	close(fd);
	is_int(dirs_held(canon, 3, geteuid(), 0, held), 0, "dirs_held once the holders are gone");
	ok(!held[0] && !held[1] && !held[2], "nothing is held any more");
	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		is_int(rm_rf(dirs[i]), 0, "%s removed", dirs[i] + strlen(base) + 1);
}

/* dir_could_write: tried with a file nobody sees, leaving nothing. */
static void test_could_write(void)
{
	_cleanup_free_ char *dir = at("could"), *deep = at("could/a/b"), *file = at("could/f"), *under = at("could/f/x");
	mkdir(dir, 0700);
	int fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	ok(dir_could_write(dir), "a directory of one's own could be written");
	ok(dir_could_write(deep), "so could one not made yet beneath it");
	ok(!exists("could/a"), "and trying made nothing");
	ok(!dir_could_write(under), "a path beneath a file could not");
	ok(proc_self_status("NoNewPrivs") >= 0 && proc_self_status("No such line") == -1,
	   "proc_self_status reads a line of /proc/self/status, and -1 for one it lacks");
}

/* lib/fd.c's dir_listing: a directory's names and types, read once;
 * one reached through a symlink, or missing, lists empty and answers
 * every name absent; one that cannot be read answers nothing. */
static void test_listing(void)
{
	_cleanup_free_ char *dir = at("listing");
	must(mkdir(dir, 0755), dir);
	int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	must(dfd, dir);
	file_in(dfd, "b-file", "x");
	int sub = dir_in(dfd, "a-dir");
	file_in(sub, "inner", NULL);
	close(sub);
	must(symlinkat("a-dir", dfd, "c-link"), "c-link");

	struct dir_listing l;
	is_int(dir_listing_read(dfd, "", &l), 0, "the directory itself is listed");
	is_int(l.n, 3, "with its three entries");
	is_int(dir_listing_type(&l, "a-dir"), DT_DIR, "a directory's type");
	is_int(dir_listing_type(&l, "b-file"), DT_REG, "a file's type");
	is_int(dir_listing_type(&l, "c-link"), DT_LNK, "a symlink's type, not its target's");
	is_int(dir_listing_type(&l, "missing"), DIR_ABSENT, "a name it does not hold is absent");
	dir_listing_free(&l);

	is_int(dir_listing_read(dfd, "a-dir", &l), 0, "a directory beneath it");
	is_int(dir_listing_type(&l, "inner"), DT_REG, "answers for its own names");
	dir_listing_free(&l);

	is_int(dir_listing_read(dfd, "c-link", &l), 0, "a directory reached through a symlink");
	ok(!l.failed && l.n == 0 && dir_listing_type(&l, "inner") == DIR_ABSENT,
	   "lists empty: nothing is reached there without the symlink");
	dir_listing_free(&l);

	is_int(dir_listing_read(dfd, "nowhere/deeper", &l), 0, "a missing directory");
	ok(!l.failed && dir_listing_type(&l, "x") == DIR_ABSENT, "lists empty too");
	dir_listing_free(&l);

	ok(dir_listing_read(dfd, "b-file", &l) < 0 || dir_listing_type(&l, "x") == DIR_ABSENT,
	   "a file where a directory should be holds nothing");
	dir_listing_free(&l);

	if (geteuid() != 0) {
		must(fchmodat(dfd, "a-dir", 0, 0), "chmod");
		ok(dir_listing_read(dfd, "a-dir", &l) == -EACCES && l.failed &&
			   dir_listing_type(&l, "inner") == DT_UNKNOWN,
		   "one that cannot be read answers nothing (DT_UNKNOWN), not absent");
		dir_listing_free(&l);
		must(fchmodat(dfd, "a-dir", 0755, 0), "chmod");
	}
	close(dfd);
}

/* A directory moved out of dirfd while open_nofollow looks it up beneath:
 * openat2 answers EXDEV for what was there when the lookup began (another
 * run's guard moving a plant to its quarantine). open_nofollow answers
 * what the path holds now instead: the directory or nothing, never EXDEV,
 * which callers take for a path that climbs out. */
static void test_moved_away(void)
{
	_cleanup_free_ char *ws = at("moving-ws");
	_cleanup_free_ char *away = at("moving-away");
	must(mkdir(ws, 0755), ws);
	must(mkdir(away, 0755), away);
	int wfd = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int afd = open(away, O_PATH | O_DIRECTORY | O_CLOEXEC);
	must(wfd, ws);
	must(afd, away);
	int d = dir_in(wfd, "d");
	int e = dir_in(d, "e");
	close(dir_in(e, "f"));
	close(e);
	close(d);

	pid_t pid = fork();
	must(pid, "fork");
	if (pid == 0) {
		for (;;) {
			renameat(wfd, "d", afd, "d");
			renameat(afd, "d", wfd, "d");
		}
	}
	long tries = 0, found = 0, absent = 0, other = 0, exdev = 0;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++, tries++) {
			int fd = open_nofollow(wfd, "d/e/f", O_PATH | O_DIRECTORY, 0, OPEN_BENEATH);
			if (fd >= 0) {
				found++;
				close(fd);
			} else if (fd == -ENOENT)
				absent++;
			else if (fd == -EXDEV)
				exdev++;
			else
				other++;
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 1500);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	printf("# %ld lookups while it moved: %ld found, %ld absent, %ld EXDEV, %ld other\n", tries, found, absent,
	       exdev, other);
	ok(found > 0 && absent > 0, "the lookups raced the moves (found and absent both seen)");
	is_int((int)exdev, 0, "no lookup of a path moved out while looked up answers EXDEV");
	is_int((int)other, 0, "nor anything but the directory or its absence");
	is_int(open_nofollow(wfd, "../moving-away", O_PATH, 0, OPEN_BENEATH), -EXDEV,
	       "a path that climbs out is still EXDEV");
	close(wfd);
	close(afd);
}

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

static void test_closer(void)
{
	/* 40 descriptors in a row, one of them not the closer's; given in
	 * an order that goes down as well as up. */
	int fds[40];
	for (size_t i = 0; i < 40; i++)
		fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int foreign = fds[17];
	struct fd_closer c = FD_CLOSER_INIT;
	for (size_t i = 20; i < 40; i++)
		fd_closer_add(&c, fds[i]);
	for (size_t i = 20; i-- > 0;)
		if (fds[i] != foreign)
			fd_closer_add(&c, fds[i]);
	bool all_held = true;
	for (size_t i = 0; i < 40; i++)
		all_held = all_held && is_open(fds[i]);
	ok(all_held, "fd_closer: nothing is closed before its flush");
	fd_closer_flush(&c);
	bool closed = true;
	for (size_t i = 0; i < 40; i++)
		if (fds[i] != foreign)
			closed = closed && !is_open(fds[i]);
	ok(closed, "fd_closer: every descriptor it was given is closed");
	ok(is_open(foreign), "fd_closer: a descriptor in their midst it was not given stays open");
	close(foreign);

	/* One 64 or more numbers away: what it held is closed first. */
	int near = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int far = fcntl(near, F_DUPFD_CLOEXEC, near + 200);
	fd_closer_add(&c, near);
	fd_closer_add(&c, far);
	ok(!is_open(near) && is_open(far), "fd_closer: one far away closes what it held, and is held");
	fd_closer_flush(&c);
	ok(!is_open(far), "fd_closer: the far one is closed at the flush");
	fd_closer_flush(&c);
	ok(c.held == 0, "fd_closer: an empty closer flushes to nothing");

	/* Under a low open-files limit (a session started under ulimit -n
	 * 40): a pass that opens one after another, each given to the
	 * closer, never runs out. */
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit rl = { .rlim_cur = 40, .rlim_max = 40 };
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			_exit(2);
		struct fd_closer low = FD_CLOSER_INIT;
		for (int i = 0; i < 500; i++) {
			int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				_exit(1);
			fd_closer_add(&low, fd);
		}
		fd_closer_flush(&low);
		_exit(0);
	}
	int st = -1;
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "fd_closer: under ulimit -n 40, 500 opens given to it never run out (status %d)",
	   st);
}

int main(void)
{
	char tmpl[] = "/tmp/stockade-test-fs-XXXXXX";
	if (!mkdtemp(tmpl))
		tap_skip_all("cannot make a temporary directory");
	base = tmpl;
	make_outside();
	test_deep();
	test_wide();
	test_links();
	test_mounts();
	test_held();
	test_could_write();
	test_listing();
	test_moved_away();
	test_closer();
	/* The outside directories are 0555: rm_rf makes them writable. */
	is_int(rm_rf(base), 0, "the test's directory is removed");
	return tap_done();
}
