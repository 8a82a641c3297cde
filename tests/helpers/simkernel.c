/* simkernel: run a command as if on an older or more restricted kernel.
 *
 *     simkernel [--errno SYSCALL=ERRNO]... [--no-userns[=ERRNO]]
 *               [--no-landlock[=ERRNO]] [--no-mount[=ERRNO]] [--old-open-tree]
 *               -- COMMAND [ARG]...
 *
 * It sets no_new_privs, installs a seccomp filter whose default is ALLOW and
 * which answers the named system calls with an errno, then execs COMMAND.
 * stockade run under it sees what it would see on such a host: no Landlock
 * (ENOSYS: not built; EOPNOTSUPP: built but not enabled), user namespaces
 * refused (a sysctl, AppArmor), mounts refused (a container), a kernel
 * before 6.15 that clones no tree from a detached mount (--old-open-tree:
 * open_tree of a path, not AT_EMPTY_PATH, answers EINVAL; stockade makes
 * that call for that clone alone).
 *
 * The filter only refuses; it never allows anything the kernel would not.
 * Filters stack and the strictest answer wins, so whatever stockade installs
 * on top still applies in full. Calls from other ABIs (i386 int 0x80, x32)
 * are passed through untouched, for the same reason: this filter must not
 * be what refuses them in a test of stockade's own filter.
 *
 * ERRNO is a name (ENOSYS, EOPNOTSUPP, EPERM, ...) or a number; SYSCALL is a
 * name libseccomp or this file knows, or a number. Bare --no-landlock means
 * ENOSYS, bare --no-userns and --no-mount mean EPERM. Exit status: 125 for
 * simkernel's own errors, 126/127 when COMMAND cannot be run, as env(1). */

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define EXIT_SETUP 125

struct name_value {
	const char *name;
	int value;
};

#define E(x) { #x, x }
static const struct name_value errno_names[] = {
	E(EPERM),	 E(ENOENT),	E(ESRCH),	  E(EINTR),	   E(EIO),
	E(ENXIO),	 E(E2BIG),	E(ENOEXEC),	  E(EBADF),	   E(ECHILD),
	E(EAGAIN),	 E(ENOMEM),	E(EACCES),	  E(EFAULT),	   E(EBUSY),
	E(EEXIST),	 E(EXDEV),	E(ENODEV),	  E(ENOTDIR),	   E(EISDIR),
	E(EINVAL),	 E(ENFILE),	E(EMFILE),	  E(ENOTTY),	   E(ETXTBSY),
	E(ENOSPC),	 E(EROFS),	E(EMLINK),	  E(EPIPE),	   E(ENOSYS),
	E(ENOTSUP),	 E(EOPNOTSUPP), E(EAFNOSUPPORT), E(EPROTONOSUPPORT), E(ECONNREFUSED),
	E(ENETUNREACH), E(EHOSTUNREACH), E(ETIMEDOUT), E(EADDRINUSE),	   E(EADDRNOTAVAIL),
	E(ENOKEY),	 E(ENOTCONN),	E(ENOBUFS),	  E(ENAMETOOLONG), E(ELOOP),
};
#undef E

/* Calls this libseccomp might be too old to name; x86_64 numbers come from
 * the C library's headers when it has them. */
static const struct name_value extra_syscalls[] = {
#ifdef SYS_landlock_create_ruleset
	{ "landlock_create_ruleset", SYS_landlock_create_ruleset },
	{ "landlock_add_rule", SYS_landlock_add_rule },
	{ "landlock_restrict_self", SYS_landlock_restrict_self },
#endif
#ifdef SYS_mount_setattr
	{ "mount_setattr", SYS_mount_setattr },
#endif
#ifdef SYS_clone3
	{ "clone3", SYS_clone3 },
#endif
#ifdef SYS_fsopen
	{ "fsopen", SYS_fsopen },	  { "fsconfig", SYS_fsconfig },	    { "fsmount", SYS_fsmount },
	{ "fspick", SYS_fspick },	  { "open_tree", SYS_open_tree },   { "move_mount", SYS_move_mount },
#endif
#ifdef SYS_pidfd_getfd
	{ "pidfd_getfd", SYS_pidfd_getfd },
#endif
	{ NULL, 0 },
};

/* One refusal. A masked rule applies only when (arg0 & mask) == mask on
 * the low 32 bits: CLONE_NEWUSER in the flags of unshare or clone; with
 * absent, only when (arg & mask) == 0 for argument arg: no AT_EMPTY_PATH
 * in open_tree's flags. */
struct refusal {
	const char *syscall;
	int nr;
	int err;
	unsigned long mask;
	unsigned arg;
	bool absent;
};

#define MAX_REFUSALS 256
static struct refusal refusals[MAX_REFUSALS];
static size_t n_refusals;

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("simkernel: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_SETUP);
}

static bool parse_number(const char *s, long *ret)
{
	char *end;

	errno = 0;
	*ret = strtol(s, &end, 0);
	return !errno && end != s && !*end;
}

static int parse_errno(const char *s, const char *option)
{
	long v;

	for (size_t i = 0; i < sizeof(errno_names) / sizeof(errno_names[0]); i++)
		if (strcmp(errno_names[i].name, s) == 0)
			return errno_names[i].value;
	if (parse_number(s, &v) && v > 0 && v < 4096)
		return (int)v;
	die("unknown errno '%s' in '%s'", s, option);
}

static int resolve_syscall(const char *name, const char *option)
{
	long v;
	int nr;

	if (parse_number(name, &v) && v >= 0)
		return (int)v;
	nr = seccomp_syscall_resolve_name(name);
	if (nr != __NR_SCMP_ERROR)
		return nr;
	for (const struct name_value *e = extra_syscalls; e->name; e++)
		if (strcmp(e->name, name) == 0)
			return e->value;
	die("unknown system call '%s' in '%s'", name, option);
}

/* A later refusal of the same call, with the same condition, replaces an
 * earlier one: "--no-mount --errno mount=ENOSYS" means ENOSYS for mount. */
static void add_refusal(const char *syscall_name, int err, unsigned long mask, const char *option)
{
	int nr = resolve_syscall(syscall_name, option);

	for (size_t i = 0; i < n_refusals; i++)
		if (refusals[i].nr == nr && refusals[i].mask == mask) {
			refusals[i].err = err;
			return;
		}
	if (n_refusals == MAX_REFUSALS)
		die("too many refusals");
	refusals[n_refusals++] = (struct refusal){ syscall_name, nr, err, mask, 0, false };
}

/* "--no-landlock=EPERM" or bare "--no-landlock": the errno, or the default. */
static bool match_flag(const char *arg, const char *flag, int default_err, int *ret_err)
{
	size_t len = strlen(flag);

	if (strncmp(arg, flag, len) != 0)
		return false;
	if (arg[len] == '\0')
		*ret_err = default_err;
	else if (arg[len] == '=')
		*ret_err = parse_errno(arg + len + 1, arg);
	else
		return false;
	return true;
}

static void usage(void)
{
	fputs("usage: simkernel [--errno SYSCALL=ERRNO]... [--no-userns[=ERRNO]]\n"
	      "                 [--no-landlock[=ERRNO]] [--no-mount[=ERRNO]] [--old-open-tree]\n"
	      "                 -- COMMAND [ARG]...\n",
	      stderr);
	exit(EXIT_SETUP);
}

int main(int argc, char **argv)
{
	static const char *const landlock_calls[] = { "landlock_create_ruleset", "landlock_add_rule",
						       "landlock_restrict_self" };
	static const char *const mount_calls[] = { "mount",   "umount2",   "pivot_root",
						   "fsopen",  "fsmount",   "fsconfig",
						   "fspick",  "open_tree", "move_mount",
						   "mount_setattr" };
	scmp_filter_ctx ctx;
	int i, err, r;

	for (i = 1; i < argc; i++) {
		const char *arg = argv[i];

		if (strcmp(arg, "--") == 0) {
			i++;
			break;
		} else if (strcmp(arg, "--errno") == 0 || strncmp(arg, "--errno=", 8) == 0) {
			const char *spec = arg[7] == '=' ? arg + 8 : argv[++i];
			char *copy, *eq;

			if (!spec)
				die("--errno needs SYSCALL=ERRNO");
			copy = strdup(spec);
			if (!copy)
				die("out of memory");
			eq = strchr(copy, '=');
			if (!eq || eq == copy || !eq[1])
				die("bad --errno '%s': want SYSCALL=ERRNO", spec);
			*eq = '\0';
			add_refusal(copy, parse_errno(eq + 1, spec), 0, spec);
		} else if (match_flag(arg, "--no-landlock", ENOSYS, &err)) {
			for (size_t k = 0; k < sizeof(landlock_calls) / sizeof(landlock_calls[0]); k++)
				add_refusal(landlock_calls[k], err, 0, arg);
		} else if (match_flag(arg, "--no-userns", EPERM, &err)) {
			add_refusal("unshare", err, CLONE_NEWUSER, arg);
			add_refusal("clone", err, CLONE_NEWUSER, arg);
			/* clone3 passes its flags in memory a filter cannot read:
			 * refuse it whole, with ENOSYS, so that callers (glibc,
			 * stockade) fall back to clone, whose flags we can see. */
			add_refusal("clone3", ENOSYS, 0, arg);
		} else if (match_flag(arg, "--no-mount", EPERM, &err)) {
			for (size_t k = 0; k < sizeof(mount_calls) / sizeof(mount_calls[0]); k++)
				add_refusal(mount_calls[k], err, 0, arg);
		} else if (strcmp(arg, "--old-open-tree") == 0) {
			add_refusal("open_tree", EINVAL, 0, arg);
			refusals[n_refusals - 1].mask = AT_EMPTY_PATH;
			refusals[n_refusals - 1].arg = 2;
			refusals[n_refusals - 1].absent = true;
		} else if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
			usage();
		} else {
			fprintf(stderr, "simkernel: unknown option '%s'\n", arg);
			usage();
		}
	}
	if (i >= argc)
		usage();

	/* Needed to load a filter without privilege; stockade sets it anyway.
	 * (It also means set-uid helpers such as newuidmap do not gain
	 * privilege under simkernel.) */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die("cannot set no_new_privs: %s", strerror(errno));

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		die("cannot create a seccomp filter");
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW);
	if (r < 0)
		die("cannot let other ABIs through: %s", strerror(-r));
	for (size_t k = 0; k < n_refusals; k++) {
		const struct refusal *f = &refusals[k];

		if (f->absent)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(f->err), f->nr, 1,
					     SCMP_CMP(f->arg, SCMP_CMP_MASKED_EQ, f->mask, 0));
		else if (f->mask)
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(f->err), f->nr, 1,
					     SCMP_A0(SCMP_CMP_MASKED_EQ, f->mask, f->mask));
		else
			r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(f->err), f->nr, 0);
		if (r < 0)
			die("cannot add a rule for '%s': %s", f->syscall, strerror(-r));
	}
	r = seccomp_load(ctx);
	if (r < 0)
		die("cannot load the seccomp filter: %s", strerror(-r));
	seccomp_release(ctx);

	execvp(argv[i], argv + i);
	err = errno;
	fprintf(stderr, "simkernel: cannot run '%s': %s\n", argv[i], strerror(err));
	return err == ENOENT ? 127 : 126;
}
