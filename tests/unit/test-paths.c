/* paths: path_canonical() on a real tree of symlinks (a link to a
 * directory, a chain, a dangling link, a loop, `..` after a link resolved
 * as the kernel does), also where openat2 is refused (old kernels and
 * container seccomp profiles answer ENOSYS or EPERM; simulated here with a
 * seccomp filter in a child); path_find_program() as execvp would;
 * rm_rf() on a tree with read-only and unsearchable directories and
 * symlinks out of it, as root and as an unprivileged user; mkdir_private()
 * refusing what others could swap. */
#include "lib/fs.h"

#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "lib/path.h"
#include "lib/fd.h"
#include "lib/util.h"
#include "tests/tap.h"

#define NOBODY 65534

static char *base;

static char *at(const char *rel)
{
	return xasprintf("%s/%s", base, rel);
}

static void must(int r, const char *what)
{
	if (r < 0)
		diag("setup: %s: %m", what);
}

static void mkdir_at(const char *rel, mode_t mode)
{
	_cleanup_free_ char *p = at(rel);
	must(mkdir(p, mode), p);
	must(chmod(p, mode), p);
}

static void file_at(const char *rel, mode_t mode, const char *content)
{
	_cleanup_free_ char *p = at(rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	must(fd, p);
	if (fd >= 0) {
		if (content)
			must(write_all(fd, content, strlen(content)), p);
		close(fd);
	}
	must(chmod(p, mode), p);
}

static void link_at(const char *target, const char *rel)
{
	_cleanup_free_ char *p = at(rel);
	must(symlink(target, p), p);
}

static bool exists(const char *rel)
{
	_cleanup_free_ char *p = at(rel);
	struct stat st;
	return lstat(p, &st) == 0;
}

static int unlink_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	if (type == FTW_DP || type == FTW_D)
		chmod(path, 0700);
	return remove(path) < 0 ? -1 : 0;
}

/* ---- path_canonical ---- */

struct canon_case {
	const char *rel;	/* relative to base; NULL: the absolute path in want */
	const char *want;	/* relative to base; "/" for the root */
	int err;
};

static const struct canon_case canon_cases[] = {
	{ "real/x", "real/x", 0 },
	{ "real/./deep/../x", "real/x", 0 },
	{ "real//deep///file", "real/deep/file", 0 },
	{ "real/", "real", 0 },
	{ "dlink", "real/deep", 0 },
	{ "dlink/file", "real/deep/file", 0 },
	{ "dlink/../x", "real/x", 0 },		/* `..` after a link: from the link's target */
	{ "dlink/up", "real/x", 0 },		/* real/deep/up -> ../x */
	{ "dlink/up2", "real/y2", 0 },		/* real/deep/up2 -> ../x2, real/x2 -> y2 */
	{ "dlink/../rl", "real/x", 0 },		/* real/rl -> x */
	{ "chain1", "real/deep/file", 0 },	/* chain1 -> chain2 -> chain3 -> real/deep/file */
	{ "abslink/x", "real/x", 0 },		/* abslink -> <base>/real */
	{ "binlike/deep", "real/deep", 0 },	/* binlike -> real, as /bin -> usr/bin */
	{ "dangling", NULL, -ENOENT },
	{ "real/missing", NULL, -ENOENT },
	{ "dlink/missing", NULL, -ENOENT },
	{ "loop1", NULL, -ELOOP },
	{ "real/x/y", NULL, -ENOTDIR },
	{ "real/x/", NULL, -ENOTDIR },
};

static void make_canon_tree(void)
{
	mkdir_at("real", 0755);
	mkdir_at("real/deep", 0755);
	file_at("real/deep/file", 0644, NULL);
	file_at("real/x", 0644, NULL);
	file_at("real/y2", 0644, NULL);
	file_at("x", 0644, "decoy");	/* what a lexical `..` would find */
	file_at("y2", 0644, "decoy");
	link_at("real/deep", "dlink");
	link_at("../x", "real/deep/up");
	link_at("../x2", "real/deep/up2");
	link_at("y2", "real/x2");
	link_at("x", "real/rl");
	link_at("chain2", "chain1");
	link_at("chain3", "chain2");
	link_at("real/deep/file", "chain3");
	link_at("nowhere", "dangling");
	_cleanup_free_ char *real = at("real");
	link_at(real, "abslink");
	link_at("real", "binlike");
	link_at("loop2", "loop1");
	link_at("loop1", "loop2");
}

struct canon_result {
	int r;
	char path[PATH_MAX];
};

static struct canon_result canon_one(const char *rel)
{
	struct canon_result res = { 0 };
	_cleanup_free_ char *p = at(rel);
	char *got = NULL;
	res.r = path_canonical(p, &got);
	if (res.r == 0)
		snprintf(res.path, sizeof(res.path), "%s", got);
	free(got);
	return res;
}

static void check_canon(const char *how, const struct canon_case *c, const struct canon_result *res)
{
	if (c->err) {
		if (!ok(res->r == c->err, "%s: '%s' is %s", how, c->rel, strerrorname_np(-c->err)))
			diag("  got %d (%s)%s%s", res->r, res->r < 0 ? strerrorname_np(-res->r) : "ok",
			     res->r == 0 ? " " : "", res->r == 0 ? res->path : "");
		return;
	}
	_cleanup_free_ char *want = at(c->want);
	if (!ok(res->r == 0 && streq(res->path, want), "%s: '%s' resolves to '%s'", how, c->rel, c->want))
		diag("  got %s", res->r == 0 ? res->path : strerrorname_np(-res->r));
}

static void test_canonical(void)
{
	make_canon_tree();
	for (size_t i = 0; i < ARRAY_SIZE(canon_cases); i++) {
		struct canon_result res = canon_one(canon_cases[i].rel);
		check_canon("openat2 works", &canon_cases[i], &res);
	}

	char *got = NULL;
	ok(path_canonical("/", &got) == 0 && streq(got, "/"), "'/' is '/'");
	free(got);
	got = NULL;
	/* A relative path resolves against the current directory. */
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (chdir(base) == 0) {
		_cleanup_free_ char *want = at("real/deep/file");
		int r = path_canonical("dlink/file", &got);
		ok(r == 0 && streq(got, want), "a relative path through a link, from the current directory");
		free(got);
		got = NULL;
		if (cwd && chdir(cwd) < 0)
			diag("cannot go back to %s: %m", cwd);
	}
}

/* The same cases in a child whose openat2 is answered by a seccomp
 * filter with err, as an old kernel (ENOSYS) or an older container
 * runtime's profile (EPERM) answers it. */
static void canon_refused_openat2(int err)
{
	int fds[2];
	if (pipe2(fds, O_CLOEXEC) < 0) {
		ok(0, "pipe: %m");
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		struct sock_filter insns[] = {
			BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
			BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (uint32_t)err),
			BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		};
		struct sock_fprog prog = { .len = ARRAY_SIZE(insns), .filter = insns };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
			_exit(2);
		/* Prove the filter is in place. */
		if (syscall(SYS_openat2, AT_FDCWD, "/", NULL, 0) >= 0 || errno != err)
			_exit(3);
		for (size_t i = 0; i < ARRAY_SIZE(canon_cases); i++) {
			struct canon_result res = canon_one(canon_cases[i].rel);
			if (write_all(fds[1], &res, sizeof(res)) < 0)
				_exit(4);
		}
		_exit(0);
	}
	close(fds[1]);
	_cleanup_free_ char *how = xasprintf("openat2 answers %s", strerrorname_np(err));
	size_t i = 0;
	for (; i < ARRAY_SIZE(canon_cases); i++) {
		struct canon_result res;
		size_t got = 0;
		if (read_all(fds[0], &res, sizeof(res), &got) < 0 || got != sizeof(res))
			break;
		check_canon(how, &canon_cases[i], &res);
	}
	close(fds[0]);
	int status;
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0 && i == ARRAY_SIZE(canon_cases),
	   "%s: the child ran every case (status %d)", how, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

/* ---- path_find_program ---- */

static void test_find_program(void)
{
	mkdir_at("p", 0755);
	mkdir_at("p/bin1", 0755);
	mkdir_at("p/bin2", 0755);
	file_at("p/bin1/tool", 0755, "#!/bin/sh\n");
	file_at("p/bin1/both", 0755, "#!/bin/sh\n");
	file_at("p/bin2/both", 0644, "not executable");
	file_at("p/bin2/onlynoexec", 0644, "not executable");
	mkdir_at("p/bin2/dirprog", 0755);
	_cleanup_free_ char *p = at("p");
	_cleanup_free_ char *bin1 = at("p/bin1");
	_cleanup_free_ char *bin2 = at("p/bin2");
	_cleanup_free_ char *path = xasprintf("%s:%s", bin2, bin1);
	_cleanup_free_ char *tool = at("p/bin1/tool");
	char *got = NULL;

	is_int(path_find_program("tool", path, p, &got), 0, "'tool' found on PATH");
	is_str(got, tool, "'tool' is bin1/tool");
	free(got);
	got = NULL;
	is_int(path_find_program("nothere", path, p, &got), -ENOENT, "a missing program: -ENOENT");
	ok(got == NULL, "nothing returned for a missing program");
	is_int(path_find_program("onlynoexec", path, p, &got), -EACCES, "only a non-executable file: -EACCES");
	is_int(path_find_program("dirprog", path, p, &got), -EACCES, "only a directory of that name: -EACCES");
	/* a PATH directory this user cannot search holds nothing: not
	 * found (127, as a shell says), not "Permission denied" (126) */
	mkdir_at("p/closed", 0755);
	file_at("p/closed/tool2", 0755, "#!/bin/sh\n");
	_cleanup_free_ char *closed = at("p/closed");
	_cleanup_free_ char *closed_path = xasprintf("%s:%s", closed, bin1);
	chmod(closed, 0);
	if (geteuid() != 0) {
		is_int(path_find_program("sudo", closed_path, p, &got), -ENOENT,
		       "a PATH directory that cannot be searched: -ENOENT, not -EACCES");
		is_int(path_find_program("tool2", closed_path, p, &got), -ENOENT, "what it holds is not found either");
	} else {
		is_int(path_find_program("sudo", closed_path, p, &got), -ENOENT, "as root every directory is searched: -ENOENT");
		is_int(path_find_program("tool2", closed_path, p, &got), 0, "as root, what it holds is found");
		free(got);
		got = NULL;
	}
	chmod(closed, 0755);
	is_int(path_find_program("both", path, p, &got), 0, "a non-executable first, an executable later: found");
	_cleanup_free_ char *both = at("p/bin1/both");
	is_str(got, both, "the executable one, as execvp would");
	free(got);
	got = NULL;

	is_int(path_find_program("bin1/tool", "/nonexistent", p, &got), 0,
	       "a relative word with a slash: resolved against cwd, PATH ignored");
	is_str(got, tool, "bin1/tool is <cwd>/bin1/tool");
	free(got);
	got = NULL;
	is_int(path_find_program("./bin1/tool", "/nonexistent", p, &got), 0, "'./bin1/tool' found");
	char *real = got ? realpath(got, NULL) : NULL;
	ok(real && streq(real, tool), "'./bin1/tool' is the same file (got '%s')", got ? got : "(null)");
	free(real);
	free(got);
	got = NULL;
	is_int(path_find_program(tool, "/nonexistent", "/", &got), 0, "an absolute word");
	is_str(got, tool, "an absolute word is itself");
	free(got);
	got = NULL;
	_cleanup_free_ char *noexec = at("p/bin2/onlynoexec");
	is_int(path_find_program(noexec, NULL, "/", &got), -EACCES, "an absolute non-executable: -EACCES");
	is_int(path_find_program("bin1/missing", NULL, p, &got), -ENOENT, "a relative missing word: -ENOENT");
	is_int(path_find_program("", path, p, &got), -ENOENT, "an empty word: -ENOENT");

	is_int(path_find_program("tool", "bin1", p, &got), 0, "a relative PATH entry resolves against cwd");
	is_str(got, tool, "relative entry bin1 gives <cwd>/bin1/tool");
	free(got);
	got = NULL;
	_cleanup_free_ char *empty_entry = xasprintf(":%s", bin2);
	is_int(path_find_program("tool", empty_entry, bin1, &got), 0, "an empty PATH entry means cwd (execvp)");
	real = got ? realpath(got, NULL) : NULL;
	ok(real && streq(real, tool), "the empty entry found <cwd>/tool (got '%s')", got ? got : "(null)");
	free(real);
	free(got);
	got = NULL;

	is_int(path_find_program("sh", NULL, "/", &got), 0, "no PATH: the default one finds sh");
	ok(got && str_has_suffix(got, "/sh"), "sh found at %s", got ? got : "(null)");
	free(got);
}

/* ---- rm_rf ---- */

static void make_victim(const char *dir)
{
	_cleanup_free_ char *v = xasprintf("%s/victim", dir);
	_cleanup_free_ char *o = xasprintf("%s/outside", dir);
	mkdir_at(o, 0755);
	_cleanup_free_ char *keep = xasprintf("%s/keep", o);
	file_at(keep, 0644, "keep me");
	_cleanup_free_ char *osub = xasprintf("%s/sub", o);
	mkdir_at(osub, 0755);
	_cleanup_free_ char *osubf = xasprintf("%s/sub/f", o);
	file_at(osubf, 0644, "keep me too");

	mkdir_at(v, 0755);
	_cleanup_free_ char *a = xasprintf("%s/a", v), *b = xasprintf("%s/a/b", v), *c = xasprintf("%s/a/b/c", v);
	mkdir_at(a, 0755);
	mkdir_at(b, 0755);
	file_at(c, 0644, "c");
	_cleanup_free_ char *ro = xasprintf("%s/ro", v), *rof = xasprintf("%s/ro/file", v),
			    *ros = xasprintf("%s/ro/sub", v), *rosf = xasprintf("%s/ro/sub/file", v),
			    *rol = xasprintf("%s/ro/link_in_ro", v);
	mkdir_at(ro, 0755);
	file_at(rof, 0444, "ro");
	mkdir_at(ros, 0755);
	file_at(rosf, 0444, "ro");
	link_at("../../outside", rol);
	_cleanup_free_ char *np = xasprintf("%s/noperm", v), *npf = xasprintf("%s/noperm/file", v);
	mkdir_at(np, 0755);
	file_at(npf, 0644, "np");
	_cleanup_free_ char *lo = xasprintf("%s/link_out", v), *lf = xasprintf("%s/link_file", v),
			    *dg = xasprintf("%s/dangling", v), *ff = xasprintf("%s/fifo", v);
	link_at("../outside", lo);
	link_at("../outside/keep", lf);
	link_at("nowhere", dg);
	_cleanup_free_ char *ffp = at(ff);
	must(mkfifo(ffp, 0644), ffp);
}

static void lock_victim(const char *dir)
{
	/* Read-only and unsearchable directories, as a command may leave. */
	static const struct {
		const char *rel;
		mode_t mode;
	} modes[] = { { "victim/ro/sub", 0555 }, { "victim/ro", 0555 }, { "victim/noperm", 0000 } };
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		_cleanup_free_ char *p = xasprintf("%s/%s/%s", base, dir, modes[i].rel);
		must(chmod(p, modes[i].mode), p);
	}
}

static int chown_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	return lchown(path, NOBODY, NOBODY) < 0 ? -1 : 0;
}

static void check_victim_gone(const char *dir, const char *how, int r)
{
	is_int(r, 0, "%s: rm_rf succeeds", how);
	_cleanup_free_ char *v = xasprintf("%s/victim", dir);
	ok(!exists(v), "%s: the tree is gone", how);
	_cleanup_free_ char *keep = xasprintf("%s/%s/outside/keep", base, dir);
	_cleanup_free_ char *content = NULL;
	read_file_at(AT_FDCWD, keep, 64, &content, NULL);
	is_str(content, "keep me", "%s: the file a symlink pointed to survives, unchanged", how);
	_cleanup_free_ char *subf = xasprintf("%s/outside/sub/f", dir);
	ok(exists(subf), "%s: the directory a symlink pointed to keeps its contents", how);
}

static void test_rm_rf(void)
{
	/* As whoever runs the tests (root here: permissions do not stop it). */
	mkdir_at("rm", 0755);
	make_victim("rm");
	lock_victim("rm");
	_cleanup_free_ char *v = at("rm/victim");
	check_victim_gone("rm", geteuid() == 0 ? "as root" : "as the user", rm_rf(v));

	_cleanup_free_ char *missing = at("rm/never-was");
	is_int(rm_rf(missing), 0, "rm_rf of a missing path: 0");
	is_int(rm_rf("relative"), -EINVAL, "rm_rf of a relative word without a slash: -EINVAL");

	/* rm_rf on a symlink to a directory: whatever it answers, the
	 * directory it points to stays whole. */
	_cleanup_free_ char *target = at("rm/outside");
	_cleanup_free_ char *lnk = at("rm/link-to-outside");
	must(symlink(target, lnk), lnk);
	int r = rm_rf(lnk);
	diag("rm_rf of a symlink to a directory answers %d (%s)", r, r < 0 ? strerrorname_np(-r) : "ok");
	ok(exists("rm/outside/keep") && exists("rm/outside/sub/f"), "rm_rf of a symlink never empties its target");

	/* As an unprivileged user, where read-only and unsearchable
	 * directories really stop unlink and readdir: the suite's
	 * unprivileged run is one; the root run becomes uid 65534 for it. */
	if (geteuid() != 0) {
		mkdir_at("nb", 0755);
		make_victim("nb");
		lock_victim("nb");
		_cleanup_free_ char *victim = at("nb/victim");
		check_victim_gone("nb", "as this unprivileged user", rm_rf(victim));
		return;
	}
	mkdir_at("nb", 0755);
	make_victim("nb");
	_cleanup_free_ char *nb = at("nb");
	must(nftw(nb, chown_cb, 32, FTW_PHYS), "chown nb");
	lock_victim("nb");
	must(chmod(base, 0755), base);
	pid_t pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
		    setresuid(NOBODY, NOBODY, NOBODY) < 0)
			_exit(100);
		_cleanup_free_ char *victim = at("nb/victim");
		/* A TMPDIR inside a private directory: nothing to test here. */
		if (access(nb, X_OK) < 0)
			_exit(100);
		int q = rm_rf(victim);
		_exit(q == 0 ? 0 : q > -100 ? -q : 101);
	}
	int status;
	waitpid(pid, &status, 0);
	int q = WIFEXITED(status) ? -WEXITSTATUS(status) : -999;
	if (q == -100) {
		ok(1, "# SKIP cannot become uid %d, or it cannot reach %s", NOBODY, nb);
		return;
	}
	check_victim_gone("nb", "as uid 65534", q);
	must(chmod(base, 0700), base);
}

/* ---- mkdir_private ---- */

static void test_mkdir_private(void)
{
	uid_t uid = geteuid();
	mode_t old = umask(0);
	_cleanup_free_ char *nested = at("priv/a/b");
	is_int(mkdir_private(nested, uid), 0, "missing parents are made");
	umask(old);
	struct stat st;
	_cleanup_free_ char *a = at("priv/a");
	ok(stat(nested, &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == 0700,
	   "priv/a/b is 0700 (even with umask 0)");
	ok(stat(a, &st) == 0 && (st.st_mode & 07777) == 0700, "the parent made on the way is 0700");
	is_int(mkdir_private(nested, uid), 0, "an existing private directory: 0");

	static const struct {
		const char *rel;
		mode_t mode;
		int want;
		const char *what;
	} modes[] = {
		{ "m755", 0755, 0, "0755 (nobody else can write)" },
		{ "m777", 0777, -EPERM, "0777" },
		{ "m770", 0770, -EPERM, "0770 (group-writable)" },
		{ "m702", 0702, -EPERM, "0702 (others-writable)" },
		{ "m1777", 01777, -EPERM, "1777 (a sticky /tmp-like directory)" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(modes); i++) {
		mkdir_at(modes[i].rel, modes[i].mode);
		_cleanup_free_ char *p = at(modes[i].rel);
		is_int(mkdir_private(p, uid), modes[i].want, "an existing directory %s: %s", modes[i].what,
		       modes[i].want ? strerrorname_np(-modes[i].want) : "0");
	}

	_cleanup_free_ char *real = at("priv/a/b");
	link_at(real, "symlink-to-private");
	_cleanup_free_ char *sl = at("symlink-to-private");
	/* open(O_DIRECTORY | O_NOFOLLOW) on a symlink: Linux answers ENOTDIR. */
	is_int(mkdir_private(sl, uid), -ENOTDIR, "a symlink to a private directory: -ENOTDIR");
	ok(lstat(sl, &st) == 0 && S_ISLNK(st.st_mode), "the symlink is left alone");
	link_at("nowhere", "dangling-private");
	_cleanup_free_ char *dl = at("dangling-private");
	is_int(mkdir_private(dl, uid), -ENOTDIR, "a dangling symlink: -ENOTDIR");
	_cleanup_free_ char *nowhere = at("nowhere");
	ok(lstat(nowhere, &st) < 0 && errno == ENOENT, "the dangling symlink's target is not created");
	file_at("afile", 0600, NULL);
	_cleanup_free_ char *af = at("afile");
	is_int(mkdir_private(af, uid), -ENOTDIR, "a regular file: -ENOTDIR");

	if (uid == 0) {
		mkdir_at("theirs", 0700);
		_cleanup_free_ char *theirs = at("theirs");
		must(chown(theirs, NOBODY, NOBODY), theirs);
		is_int(mkdir_private(theirs, 0), -EPERM, "a directory owned by someone else: -EPERM");
		is_int(mkdir_private(theirs, NOBODY), 0, "the same directory, asked for its owner: 0");
	}
	/* Unprivileged, no directory of someone else's can be made here;
	 * the suite's root run covers that case. */
}

/* The joins and numbers a run makes without printf, the arrays that grow
 * by doubling, and read_file_at's buffer sized from the file. */
static void test_strings(void)
{
	char dec[21], hex[17];
	is_str(fmt_u64(dec, 0), "0", "fmt_u64 0");
	is_str(fmt_u64(dec, 1002), "1002", "fmt_u64 1002");
	is_str(fmt_u64(dec, UINT64_MAX), "18446744073709551615", "fmt_u64 the largest");
	is_str(fmt_x64(hex, 0xabcULL), "0000000000000abc", "fmt_x64 pads to 16 digits");
	is_str(fmt_x64(hex, UINT64_MAX), "ffffffffffffffff", "fmt_x64 the largest");

	_cleanup_free_ char *cat = xstrcat3("HOME", "=", "/home/a");
	is_str(cat, "HOME=/home/a", "xstrcat3");
	_cleanup_free_ char *empty = xstrcat3("", "", "");
	is_str(empty, "", "xstrcat3 of nothing");
	_cleanup_free_ char *j1 = path_join("/a", "b");
	_cleanup_free_ char *j2 = path_join("/a/", "/b");
	_cleanup_free_ char *j3 = path_join("/", "b");
	is_str(j1, "/a/b", "path_join adds the slash");
	is_str(j2, "/a/b", "path_join keeps one slash of two");
	is_str(j3, "/b", "path_join under /");

	int *v = NULL;
	for (size_t n = 0; n < 1000; n++) {
		v = xgrow(v, n, sizeof(*v));
		v[n] = (int)n;
	}
	bool all = true;
	for (size_t n = 0; n < 1000; n++)
		all = all && v[n] == (int)n;
	ok(all, "xgrow keeps 1000 elements grown one at a time");
	free(v);

	char **sv = strv_new();
	for (int i = 0; i < 300; i++) {
		char *num = xstrdup(fmt_u64(dec, (uint64_t)i));
		strv_push(&sv, num);
	}
	ok(strv_length(sv) == 300 && streq(sv[0], "0") && streq(sv[299], "299") && !sv[300],
	   "strv_push keeps 300 strings and the NULL");
	char **copy = strv_copy(sv);
	ok(copy != sv && copy[0] != sv[0] && strv_equal(copy, sv), "strv_copy: the same strings, copied");
	free(copy[299]);
	copy[299] = xstrdup("x");
	ok(!strv_equal(copy, sv), "strv_equal: one string differs");
	free(copy[299]);
	copy[299] = NULL;
	ok(!strv_equal(copy, sv) && !strv_equal(sv, copy), "strv_equal: one vector longer, either way");
	char *none[] = { NULL };
	ok(strv_equal(NULL, none) && strv_equal(none, NULL) && !strv_equal(NULL, sv) && !strv_copy(NULL),
	   "strv_equal: NULL as the empty vector; strv_copy of NULL is NULL");
	strv_free(copy);
	strv_free(sv);

	/* A file bigger than the first guess, one that grows past the cap,
	 * and one of /proc's, whose size says 0. */
	_cleanup_free_ char *big = path_join(base, "big");
	FILE *f = fopen(big, "w");
	for (int i = 0; i < 20000; i++)
		fputc('a' + i % 26, f);
	fclose(f);
	char *text = NULL;
	size_t len = 0;
	ok(read_file_at(AT_FDCWD, big, 1 << 20, &text, &len) == 0 && len == 20000 && text[19999] == 'a' + 19999 % 26 &&
		   text[20000] == '\0',
	   "read_file_at reads a 20000-byte file whole");
	free(text);
	ok(read_file_at(AT_FDCWD, big, 5000, &text, &len) == 0 && len == 5000 && strlen(text) == 5000,
	   "read_file_at stops at the cap");
	free(text);
	ok(read_file_at(AT_FDCWD, "/proc/self/status", 1 << 16, &text, &len) == 0 && len > 100 &&
		   strstr(text, "VmRSS") != NULL,
	   "read_file_at reads a /proc file, whose size says 0");
	free(text);
}

/* What a terminal is shown of a name: every control character, backslash
 * and byte that is not UTF-8 escaped; UTF-8 text as it is. */
static void test_visible(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "plain/path.txt", "plain/path.txt" },
		{ "tasks\n.json", "tasks\\n.json" },
		{ "\x1b[31mred\x07", "\\x1b[31mred\\x07" },
		{ "a\\b", "a\\\\b" },
		{ "\r\t\x7f", "\\r\\t\\x7f" },
		{ "caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93" },
		{ "\xff\xfe", "\\xff\\xfe" },
		{ "\xc3(", "\\xc3(" },
		{ "\xc2\x9b" "2J", "\\xc2\\x9b2J" },
		{ "\xe2\x80\xae" "txt.exe", "\\xe2\\x80\\xaetxt.exe" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		_cleanup_free_ char *got = str_visible(cases[i].in);
		is_str(got, cases[i].want, "str_visible case %zu", i);
		ok(str_is_visible(cases[i].in) == streq(cases[i].in, cases[i].want), "str_is_visible case %zu", i);
	}
	char small[6];
	is_int((int)str_visible_into(small, sizeof(small), "ab\x1b" "cd"), 2, "str_visible_into stops before a whole escape");
	is_str(small, "ab", "and ends the text there");
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");
	_cleanup_free_ char *tmpl = xasprintf("%s/stockade-test-paths-XXXXXX", str_empty(tmp) ? "/tmp" : tmp);
	if (!mkdtemp(tmpl)) {
		printf("Bail out! mkdtemp: %m\n");
		return 1;
	}
	base = realpath(tmpl, NULL);

	test_canonical();
	canon_refused_openat2(ENOSYS);
	canon_refused_openat2(EPERM);
	test_find_program();
	test_rm_rf();
	test_mkdir_private();
	test_strings();
	test_visible();

	nftw(base, unlink_cb, 32, FTW_DEPTH | FTW_PHYS);
	struct stat st;
	ok(lstat(base, &st) < 0 && errno == ENOENT, "the temporary tree is removed");
	free(base);
	return tap_done();
}
