/* A file's mode, owner, extended attributes and times, on the landlock
 * backend.
 *
 * Landlock has no right for them: chmod, chown, setxattr (a POSIX ACL
 * among them) and utimes reach every file the user owns, wherever it is,
 * whatever the policy grants. A run could make ~/.ssh/id_rsa readable by
 * every user of the host, ~/.bashrc writable by them, or (a root run) set
 * the setuid bit of a program root owns. The filter sends each such call
 * to the listener; the supervisor finds the file as the command would
 * (its working directory or directory descriptor, following links or not
 * as the call asks), holds it by a descriptor of its own, and carries the
 * call out through that descriptor, as the command (a root stockade
 * without its capabilities), only where the policy lets the command
 * write (never a device node), or on what the run made (a file, a socket
 * file of its own), or on what has no name (a pipe, a socket, an unlinked
 * file), or through a descriptor of the command's open for writing. The
 * check and the change are on the one inode: a link swapped after the
 * check moves nothing. Anything else is refused EACCES, as Landlock refuses a write,
 * and named with the rule and the fix. */
#include "supervise/internal.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/xattr.h>
#include <linux/fs.h>
#include <utime.h>

#include "lib/path.h"
#include "lib/util.h"
#include "policy/why.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef SYS_setxattrat
#define SYS_setxattrat 463
#endif
#ifndef SYS_removexattrat
#define SYS_removexattrat 466
#endif
#define XATTR_VALUE_MAX 65536

enum attr_op { ATTR_NONE, ATTR_MODE, ATTR_OWNER, ATTR_SETXATTR, ATTR_REMOVEXATTR, ATTR_TIMES, ATTR_FLAGS, ATTR_WATCH };

/* The ioctls that set a file's flags (chattr's: immutable, append-only,
 * no-dump; the project id), which the kernel lets the owner set through
 * any descriptor, one open for reading too, and Landlock does not govern
 * (its ioctl right is for devices): the filter sends these to the
 * supervisor (seccomp/table.c), with its answer's size. */
#define EXT4_IOC_SETVERSION _IOW('f', 4, long)
/* fs-verity (the file's data fixed for good) and an encryption policy
 * on an empty directory: the owner's too, through a descriptor open for
 * reading. linux/fsverity.h's and linux/fscrypt.h's numbers. */
#define FS_IOC_ENABLE_VERITY_ 0x40806685U
#define FS_IOC_SET_ENCRYPTION_POLICY_ 0x800c6613U
struct verity_arg {
	uint32_t version, hash_algorithm, block_size, salt_size;
	uint64_t salt_ptr;
	uint32_t sig_size, reserved1;
	uint64_t sig_ptr;
	uint64_t reserved2[11];
};
_Static_assert(sizeof(struct verity_arg) == 128, "struct fsverity_enable_arg");
#if __has_include(<linux/fsverity.h>) && __has_include(<linux/fscrypt.h>)
#include <linux/fscrypt.h>
#include <linux/fsverity.h>
_Static_assert(FS_IOC_ENABLE_VERITY == FS_IOC_ENABLE_VERITY_ && FS_IOC_SET_ENCRYPTION_POLICY == FS_IOC_SET_ENCRYPTION_POLICY_ &&
		       sizeof(struct fsverity_enable_arg) == sizeof(struct verity_arg),
	       "the fs-verity and fscrypt ioctls");
#endif
#define VERITY_SALT_MAX 32
#define VERITY_SIG_MAX 16128

static const struct {
	uint32_t request;
	const char *name;
	size_t size;		/* what the argument points to; 0: read in parts */
} setters[] = {
	{ FS_IOC_SETFLAGS, "ioctl FS_IOC_SETFLAGS", sizeof(int) },	/* the kernel reads an int */
	{ FS_IOC_SETVERSION, "ioctl FS_IOC_SETVERSION", sizeof(int) },
	{ EXT4_IOC_SETVERSION, "ioctl EXT4_IOC_SETVERSION", sizeof(int) },
	{ FS_IOC_FSSETXATTR, "ioctl FS_IOC_FSSETXATTR", sizeof(struct fsxattr) },
	{ FS_IOC_ENABLE_VERITY_, "ioctl FS_IOC_ENABLE_VERITY", 0 },
	{ FS_IOC_SET_ENCRYPTION_POLICY_, "ioctl FS_IOC_SET_ENCRYPTION_POLICY", 0 },
};

static int setter_of(uint32_t request)
{
	for (size_t i = 0; i < ARRAY_SIZE(setters); i++)
		if (setters[i].request == request)
			return (int)i;
	return -1;
}

bool supervise_flags_ioctl(uint32_t request, size_t *ret_size)
{
	int i = setter_of(request);
	if (ret_size)
		*ret_size = i < 0 ? 0 : setters[i].size;
	return i >= 0;
}

/* A setter's argument, copied from the caller's memory once: the ioctl
 * stockade makes reads this copy, pointers and all. */
struct flags_arg {
	union {
		int i;
		struct fsxattr fx;
		unsigned char policy[24];	/* fscrypt_policy v1 (12 bytes) or v2 (24) */
		struct verity_arg verity;
	} u;
	unsigned char salt[VERITY_SALT_MAX];
	void *sig;		/* to free */
};


static int flags_arg_of(pid_t pid, uint32_t request, uint64_t addr, struct flags_arg *ret)
{
	memset(ret, 0, sizeof(*ret));
	size_t size = 0;
	(void)supervise_flags_ioctl(request, &size);
	if (size)
		return size <= sizeof(ret->u) && sv_read_mem(pid, addr, &ret->u, size) ? 0 : EFAULT;
	if (request == FS_IOC_SET_ENCRYPTION_POLICY_) {
		/* the version first, then the policy of its size */
		if (!sv_read_mem(pid, addr, ret->u.policy, 1))
			return EFAULT;
		size = ret->u.policy[0] == 0 ? 12 : ret->u.policy[0] == 2 ? 24 : 0;
		if (!size)
			return EINVAL;
		return sv_read_mem(pid, addr, ret->u.policy, size) ? 0 : EFAULT;
	}
	struct verity_arg *v = &ret->u.verity;
	if (!sv_read_mem(pid, addr, v, sizeof(*v)))
		return EFAULT;
	if (v->salt_size > VERITY_SALT_MAX || v->sig_size > VERITY_SIG_MAX)
		return EMSGSIZE;
	if (v->salt_size && !sv_read_mem(pid, v->salt_ptr, ret->salt, v->salt_size))
		return EFAULT;
	v->salt_ptr = (uint64_t)(uintptr_t)ret->salt;
	if (v->sig_size) {
		ret->sig = xmalloc(v->sig_size);
		if (!sv_read_mem(pid, v->sig_ptr, ret->sig, v->sig_size))
			return EFAULT;
		v->sig_ptr = (uint64_t)(uintptr_t)ret->sig;
	}
	return 0;
}

/* One call, its arguments in one shape. */
struct attr_call {
	enum attr_op op;
	const char *name;
	bool by_fd;		/* fd alone (fchmod, fchown, fsetxattr, futimens) */
	int fd;			/* by_fd: the descriptor; else the directory's (AT_FDCWD) */
	uint64_t path;		/* the path's address */
	bool follow;		/* a link at the end is followed */
	bool empty_ok;		/* AT_EMPTY_PATH: an empty path names fd */
	uint64_t mode;
	uint32_t uid, gid;
	uint64_t xname, value, size;
	int xflags;
	uint64_t times;		/* address, or 0 for now */
	uint32_t request;	/* ATTR_FLAGS: the ioctl; its argument's address in value */
	int watcher;		/* ATTR_WATCH: the inotify descriptor; its mask in mode */
	enum { T_SPEC, T_VAL, T_BUF } times_kind;
};

static bool attr_call_of(int nr, const __u64 *a, struct attr_call *c)
{
	*c = (struct attr_call){ .op = ATTR_NONE, .fd = AT_FDCWD, .follow = true };
	switch (nr) {
#ifdef SYS_chmod
	case SYS_chmod:
		*c = (struct attr_call){ ATTR_MODE, "chmod", false, AT_FDCWD, a[0], true, .mode = a[1] };
		return true;
#endif
	case SYS_fchmod:
		*c = (struct attr_call){ ATTR_MODE, "fchmod", true, (int)a[0], .mode = a[1] };
		return true;
	case SYS_fchmodat:
		*c = (struct attr_call){ ATTR_MODE, "fchmodat", false, (int)a[0], a[1], true, .mode = a[2] };
		return true;
	case SYS_fchmodat2:
		*c = (struct attr_call){ ATTR_MODE, "fchmodat2", false, (int)a[0], a[1], !(a[3] & AT_SYMLINK_NOFOLLOW),
					 (a[3] & AT_EMPTY_PATH) != 0, .mode = a[2] };
		return true;
#ifdef SYS_chown
	case SYS_chown:
	case SYS_lchown:
		*c = (struct attr_call){ ATTR_OWNER, nr == SYS_chown ? "chown" : "lchown", false, AT_FDCWD, a[0],
					 nr == SYS_chown, .uid = (uint32_t)a[1], .gid = (uint32_t)a[2] };
		return true;
#endif
	case SYS_fchown:
		*c = (struct attr_call){ ATTR_OWNER, "fchown", true, (int)a[0], .uid = (uint32_t)a[1],
					 .gid = (uint32_t)a[2] };
		return true;
	case SYS_fchownat:
		*c = (struct attr_call){ ATTR_OWNER, "fchownat", false, (int)a[0], a[1], !(a[4] & AT_SYMLINK_NOFOLLOW),
					 (a[4] & AT_EMPTY_PATH) != 0, .uid = (uint32_t)a[2], .gid = (uint32_t)a[3] };
		return true;
	case SYS_setxattr:
	case SYS_lsetxattr:
		*c = (struct attr_call){ ATTR_SETXATTR, nr == SYS_setxattr ? "setxattr" : "lsetxattr", false, AT_FDCWD,
					 a[0], nr == SYS_setxattr, .xname = a[1], .value = a[2], .size = a[3],
					 .xflags = (int)a[4] };
		return true;
	case SYS_fsetxattr:
		*c = (struct attr_call){ ATTR_SETXATTR, "fsetxattr", true, (int)a[0], .xname = a[1], .value = a[2],
					 .size = a[3], .xflags = (int)a[4] };
		return true;
	case SYS_removexattr:
	case SYS_lremovexattr:
		*c = (struct attr_call){ ATTR_REMOVEXATTR, nr == SYS_removexattr ? "removexattr" : "lremovexattr", false,
					 AT_FDCWD, a[0], nr == SYS_removexattr, .xname = a[1] };
		return true;
	case SYS_fremovexattr:
		*c = (struct attr_call){ ATTR_REMOVEXATTR, "fremovexattr", true, (int)a[0], .xname = a[1] };
		return true;
	case SYS_removexattrat:
		*c = (struct attr_call){ ATTR_REMOVEXATTR, "removexattrat", false, (int)a[0], a[1],
					 !(a[2] & AT_SYMLINK_NOFOLLOW), (a[2] & AT_EMPTY_PATH) != 0, .xname = a[3] };
		return true;
	case SYS_setxattrat:
		/* (dfd, path, at_flags, name, struct xattr_args *, size):
		 * the value and flags are read from the struct */
		*c = (struct attr_call){ ATTR_SETXATTR, "setxattrat", false, (int)a[0], a[1],
					 !(a[2] & AT_SYMLINK_NOFOLLOW), (a[2] & AT_EMPTY_PATH) != 0, .xname = a[3],
					 .value = a[4], .size = a[5], .xflags = -1 };
		return true;
#ifdef SYS_utime
	case SYS_utime:
		*c = (struct attr_call){ ATTR_TIMES, "utime", false, AT_FDCWD, a[0], true, .times = a[1],
					 .times_kind = T_BUF };
		return true;
#endif
#ifdef SYS_utimes
	case SYS_utimes:
		*c = (struct attr_call){ ATTR_TIMES, "utimes", false, AT_FDCWD, a[0], true, .times = a[1],
					 .times_kind = T_VAL };
		return true;
#endif
#ifdef SYS_futimesat
	case SYS_futimesat:
		*c = (struct attr_call){ ATTR_TIMES, "futimesat", false, (int)a[0], a[1], true, .times = a[2],
					 .times_kind = T_VAL };
		return true;
#endif
	case SYS_ioctl:
		if (!supervise_flags_ioctl((uint32_t)a[1], NULL))
			return false;
		*c = (struct attr_call){ ATTR_FLAGS, setters[setter_of((uint32_t)a[1])].name, true, (int)a[0], .request = (uint32_t)a[1], .value = a[2] };
		return true;
	case SYS_inotify_add_watch:
		*c = (struct attr_call){ ATTR_WATCH, "inotify_add_watch", false, AT_FDCWD, a[1], !(a[2] & IN_DONT_FOLLOW),
					 .mode = a[2], .watcher = (int)a[0] };
		return true;
	case SYS_utimensat:
		/* a null path: the descriptor itself (futimens) */
		*c = (struct attr_call){ ATTR_TIMES, "utimensat", a[1] == 0, (int)a[0], a[1],
					 !(a[3] & AT_SYMLINK_NOFOLLOW), (a[3] & AT_EMPTY_PATH) != 0, .times = a[2],
					 .times_kind = T_SPEC };
		return true;
	}
	return false;
}

bool supervise_attrs_call(int nr)
{
	struct attr_call c;
	static const __u64 none[6];
	return nr == SYS_ioctl || attr_call_of(nr, none, &c);
}

bool supervise_flags_type(uint32_t request)
{
	uint32_t type = (request >> 8) & 0xff;
	return type == 'f' || type == 'X' || type == 'v';
}

bool supervise_attrs_takes(int nr, const __u64 args[6])
{
	struct attr_call c;
	return attr_call_of(nr, args, &c);
}

/* /proc/self and /proc/thread-self in a path the command names are its
 * own, not stockade's. */
static char *own_proc(pid_t pid, const char *path)
{
	static const char *const selves[] = { "/proc/self", "/proc/thread-self" };
	for (size_t i = 0; i < ARRAY_SIZE(selves); i++) {
		size_t n = strlen(selves[i]);
		if (strncmp(path, selves[i], n) == 0 && (path[n] == '/' || path[n] == '\0')) {
			char num[21];
			_cleanup_free_ char *base = xstrcat3("/proc/", fmt_u64(num, (uint64_t)pid), "");
			return xstrcat3(base, path + n, "");
		}
	}
	return xstrdup(path);
}

/* The file the call names, held by a descriptor of stockade's (O_PATH
 * for a path): -errno on failure. *ret_opath says it is O_PATH. */
static int target_of(struct supervisor *sv, const struct seccomp_notif *req, const struct attr_call *c,
		     bool *ret_opath)
{
	pid_t pid = (pid_t)req->pid;
	*ret_opath = false;
	_cleanup_free_ char *raw = c->by_fd ? NULL : supervise_read_path(pid, c->path);
	if (!c->by_fd && !raw)
		return -EFAULT;
	if (c->by_fd || (!*raw && c->empty_ok)) {
		if (c->by_fd && c->fd < 0)
			return -EBADF;
		if (c->fd == AT_FDCWD) {
			char link[64];
			snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
			*ret_opath = true;
			int fd = open(link, O_PATH | O_CLOEXEC);
			return fd < 0 ? -errno : fd;
		}
		int fd = sv_caller_fd(sv, req, c->fd);
		return fd < 0 ? -(errno == ESRCH ? ESRCH : EBADF) : fd;
	}
	if (!*raw)
		return -ENOENT;
	_cleanup_close_ int dir = -1;
	if (raw[0] != '/') {
		char link[64];
		if (c->fd == AT_FDCWD)
			snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
		else
			snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, c->fd);
		dir = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return errno == ENOENT ? -EBADF : -errno;
	}
	_cleanup_free_ char *path = own_proc(pid, raw);
	/* The command's own descriptor by its /proc name (glibc's lchmod
	 * and fchmodat emulations): that descriptor. */
	char own[64];
	int n = -1, end = 0;
	snprintf(own, sizeof(own), "/proc/%d/fd/", (int)pid);
	if (strncmp(path, own, strlen(own)) == 0 && sscanf(path + strlen(own), "%d%n", &n, &end) == 1 &&
	    path[strlen(own) + (size_t)end] == '\0' && n >= 0) {
		int fd = sv_caller_fd(sv, req, n);
		if (fd < 0)
			return -(errno == ESRCH ? ESRCH : ENOENT);
		/* by its name, an O_PATH descriptor is a file as any */
		*ret_opath = (fcntl(fd, F_GETFL) & O_PATH) != 0;
		return fd;
	}
	/* Any other magic link (another process's /proc/PID/fd/N, reached
	 * by name or through a link the run made) is stockade's to follow,
	 * not the command's: never followed. */
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | (c->follow ? 0 : O_NOFOLLOW),
				.resolve = RESOLVE_NO_MAGICLINKS };
	*ret_opath = true;
	int fd = (int)syscall(SYS_openat2, dir >= 0 ? dir : AT_FDCWD, path, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/* May the run change this file's attributes? writer: the command's own
 * descriptor, open for writing. */
static bool attrs_allowed(struct supervisor *sv, int fd, bool writer, const struct stat *st, char *real, size_t size)
{
	if (sv_fd_path(fd, real, size) < 0)
		return false;
	/* A pipe, a socket, an anonymous inode: no name anyone else finds. */
	if (real[0] != '/')
		return true;
	/* A device node is the host's, whatever grants it (a root run's
	 * chmod 0 /dev/null). */
	if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode))
		return false;
	/* Unlinked, with no other name. */
	if (st->st_nlink == 0)
		return true;
	/* A file the command holds open for writing: Landlock let it write
	 * that file when it opened it, wherever the file is now (the
	 * guard's quarantine, for a hook it planted), as the namespace jail
	 * lets it change that file's mode through its descriptor. */
	if (writer)
		return true;
	return sv_may_write(sv, real) || sv_made_inode(sv, st) || sv_run_socket_file(sv, st->st_dev, st->st_ino);
}

/* May the run watch this file (inotify)? Where it may read it: what
 * has no name, what the policy lets it read or write, what the run made. */
static bool watch_allowed(struct supervisor *sv, int fd, const struct stat *st, char *real, size_t size)
{
	if (sv_fd_path(fd, real, size) < 0)
		return false;
	if (real[0] != '/')
		return true;
	return policy_effect(sv->p, real) != EFFECT_NONE || sv_may_write(sv, real) || sv_made_inode(sv, st) ||
	       sv_run_socket_file(sv, st->st_dev, st->st_ino);
}

struct attr_act {
	const struct attr_call *c;
	int fd;
	bool opath;
	const struct stat *st;
	const char *xname;
	const void *value;
	size_t size;
	int xflags;
	const struct timespec *ts;
	int watcher;		/* ATTR_WATCH: the command's inotify descriptor, as stockade's */
};

static int act(void *data)
{
	const struct attr_act *x = data;
	const struct attr_call *c = x->c;
	char proc[40];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", x->fd);
	bool link = S_ISLNK(x->st->st_mode);
	switch (c->op) {
	case ATTR_MODE:
		if (link) {
			errno = EOPNOTSUPP;
			return -1;
		}
		return x->opath ? chmod(proc, (mode_t)c->mode) : fchmod(x->fd, (mode_t)c->mode);
	case ATTR_OWNER:
		return fchownat(x->fd, "", c->uid, c->gid, AT_EMPTY_PATH);
	case ATTR_SETXATTR:
		if (!x->opath)
			return fsetxattr(x->fd, x->xname, x->value, x->size, x->xflags);
		if (link) {
			/* user.* is refused on a link; the rest needs
			 * capabilities the command lacks */
			errno = EPERM;
			return -1;
		}
		return setxattr(proc, x->xname, x->value, x->size, x->xflags);
	case ATTR_REMOVEXATTR:
		if (!x->opath)
			return fremovexattr(x->fd, x->xname);
		if (link) {
			errno = EPERM;
			return -1;
		}
		return removexattr(proc, x->xname);
	case ATTR_TIMES:
		return x->opath ? utimensat(x->fd, "", x->ts, AT_EMPTY_PATH) : futimens(x->fd, x->ts);
	case ATTR_FLAGS:
		/* the argument copied (x->value): read once, by stockade */
		return ioctl(x->fd, c->request, x->value);
	case ATTR_WATCH:
		/* the file resolved and checked: its descriptor's name, the
		 * link already followed or not as the call asked */
		return inotify_add_watch(x->watcher, proc, (uint32_t)c->mode & ~(uint32_t)IN_DONT_FOLLOW);
	case ATTR_NONE:
		break;
	}
	errno = ENOSYS;
	return -1;
}

/* The times the call asks for, as utimensat's pair; NULL: now. */
static int times_of(pid_t pid, const struct attr_call *c, struct timespec ts[2], const struct timespec **ret)
{
	*ret = NULL;
	if (!c->times)
		return 0;
	if (c->times_kind == T_SPEC) {
		if (!sv_read_mem(pid, c->times, ts, 2 * sizeof(*ts)))
			return EFAULT;
	} else if (c->times_kind == T_VAL) {
		struct timeval tv[2];
		if (!sv_read_mem(pid, c->times, tv, sizeof(tv)))
			return EFAULT;
		for (int i = 0; i < 2; i++) {
			if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
				return EINVAL;
			ts[i] = (struct timespec){ tv[i].tv_sec, tv[i].tv_usec * 1000 };
		}
	} else {
		struct utimbuf b;
		if (!sv_read_mem(pid, c->times, &b, sizeof(b)))
			return EFAULT;
		ts[0] = (struct timespec){ b.actime, 0 };
		ts[1] = (struct timespec){ b.modtime, 0 };
	}
	*ret = ts;
	return 0;
}

/* setxattrat's struct xattr_args */
struct xattr_args_ {
	uint64_t value;
	uint32_t size;
	uint32_t flags;
};

static void refuse(struct supervisor *sv, const struct attr_call *c, const char *real)
{
	struct why w;
	if (c->op == ATTR_WATCH) {
		why_path(sv->p, real, WANT_READ, &w);
		why_fix_for_real(sv->p, real, WANT_READ, &w);
		_cleanup_free_ char *rule = xstrcat3("Landlock does not govern inotify: the supervisor adds a watch only "
						     "where the run may read (", w.rule ? w.rule : "no grant", ")");
		report_denial_ruled(sv->rep, c->name, real, "EACCES", rule,
				    w.source ? w.source : "built in: the supervisor", w.fix);
		why_free(&w);
		return;
	}
	why_path(sv->p, real, WANT_WRITE, &w);
	why_fix_for_real(sv->p, real, WANT_WRITE, &w);
	_cleanup_free_ char *rule = xstrcat3("Landlock has no right for a file's mode, owner, flags, extended attributes "
					     "or times: the supervisor changes them only where the run may write (",
					     w.rule ? w.rule : "no grant", ")");
	report_denial_ruled(sv->rep, c->name, real, "EACCES", rule, w.source ? w.source : "built in: the supervisor",
			    w.fix);
	why_free(&w);
}

void supervisor_attrs(struct supervisor *sv, const struct seccomp_notif *req)
{
	struct attr_call c;
	pid_t pid = (pid_t)req->pid;
	if (!attr_call_of(req->data.nr, req->data.args, &c)) {
		sv_respond(sv, req->id, ENOSYS);
		return;
	}
	bool opath;
	_cleanup_close_ int fd = target_of(sv, req, &c, &opath);
	if (fd < 0) {
		sv_respond(sv, req->id, -fd);
		return;
	}
	struct stat st;
	char real[4096];
	if (fstat(fd, &st) < 0) {
		sv_respond(sv, req->id, errno);
		return;
	}
	/* A setuid bit: the file would run as the user (root, for a root
	 * run) for every user of the host, after the run. The namespace
	 * jail's filter refuses the same. */
	if (c.op == ATTR_MODE && (c.mode & S_ISUID)) {
		(void)sv_fd_path(fd, real, sizeof(real));
		report_denial_ruled(sv->rep, c.name, real, "EPERM",
				    "a setuid bit: the file would run as you for every user of the host, after the run",
				    "built in: the system call table", "none: no option allows it (stockade.1, BACKENDS)");
		sv_respond(sv, req->id, EPERM);
		return;
	}
	/* A setgid bit on a file (not a directory, where it only gives new
	 * entries the directory's group: git init --shared): the file would
	 * run with your group for every user of the host, after the run. */
	if (c.op == ATTR_MODE && (c.mode & S_ISGID) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
		(void)sv_fd_path(fd, real, sizeof(real));
		report_denial_ruled(sv->rep, c.name, real, "EPERM", SUPERVISE_SETGID_RULE,
				    "built in: the system call table", "none: no option allows it (stockade.1, BACKENDS)");
		sv_respond(sv, req->id, EPERM);
		return;
	}
	bool writer = !opath && (fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDONLY;
	if (c.op == ATTR_WATCH ? !watch_allowed(sv, fd, &st, real, sizeof(real))
			       : !attrs_allowed(sv, fd, writer, &st, real, sizeof(real))) {
		refuse(sv, &c, real);
		sv_respond(sv, req->id, EACCES);
		return;
	}
	struct attr_act x = { .c = &c, .fd = fd, .opath = opath, .st = &st, .xflags = c.xflags };
	char xname[256];
	_cleanup_free_ void *value = NULL;
	struct timespec ts[2];
	int err = 0;
	if (c.op == ATTR_SETXATTR || c.op == ATTR_REMOVEXATTR) {
		_cleanup_free_ char *n = supervise_read_path(pid, c.xname);
		if (!n || strlen(n) >= sizeof(xname))
			err = n ? ERANGE : EFAULT;
		else
			strcpy(xname, n);
		x.xname = xname;
	}
	if (!err && c.op == ATTR_SETXATTR) {
		uint64_t at = c.value, size = c.size;
		if (c.xflags == -1) {
			struct xattr_args_ args = { 0 };
			if (c.size < sizeof(args) || !sv_read_mem(pid, c.value, &args, sizeof(args)))
				err = c.size < sizeof(args) ? EINVAL : EFAULT;
			at = args.value, size = args.size, x.xflags = (int)args.flags;
		}
		if (!err && size > XATTR_VALUE_MAX)
			err = E2BIG;
		if (!err) {
			value = xmalloc(size ? size : 1);
			if (!sv_read_mem(pid, at, value, size))
				err = EFAULT;
		}
		x.value = value;
		x.size = size;
	}
	if (!err && c.op == ATTR_TIMES)
		err = times_of(pid, &c, ts, &x.ts);
	struct flags_arg flags = { .sig = NULL };
	_cleanup_free_ void *flags_sig = NULL;
	if (!err && c.op == ATTR_FLAGS) {
		err = flags_arg_of(pid, c.request, c.value, &flags);
		flags_sig = flags.sig;
		x.value = &flags.u;
	}
	_cleanup_close_ int watcher = -1;
	if (!err && c.op == ATTR_WATCH) {
		watcher = sv_caller_fd(sv, req, c.watcher);
		if (watcher < 0)
			err = errno == ESRCH ? ESRCH : EBADF;
		x.watcher = watcher;
	}
	if (err) {
		sv_respond(sv, req->id, err);
		return;
	}
	/* The memory read was the caller's: it still waits. */
	if (!sv_id_valid(sv, req->id))
		return;
	int r = -1;
	err = sv_acting(sv);
	if (!err) {
		r = act(&x);
		err = r < 0 ? errno : 0;
		sv_acted(sv);
	}
	/* a watch answers its descriptor */
	if (!err && c.op == ATTR_WATCH)
		sv_respond_value(sv, req->id, r);
	else
		sv_respond(sv, req->id, err);
}
