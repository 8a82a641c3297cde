/* A setgid bit in the namespace jail. On a directory it only gives new
 * entries the directory's group (git init --shared=group sets it); on any
 * other file, the file would run with the user's group for every user of
 * the host once the run is over, as a setuid bit would run as the user.
 * The filter sees the mode but not the file: it sends a chmod whose mode
 * has the setgid bit alone to the listener (seccomp/table.c), and this
 * finds the file where the command would, within the jail's root, holds
 * it by a descriptor of stockade's, and changes that descriptor's mode
 * itself when it is a directory (capabilities set aside, as the command
 * would), else refuses EPERM. The check and the change are on the one
 * inode: a rename or a link swapped after the check moves nothing. */
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/capability.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "lib/util.h"
#include "supervise/supervise.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif

struct setgid_call {
	const char *name;
	bool by_fd;		/* fchmod, or an empty path with AT_EMPTY_PATH */
	int fd;			/* the descriptor, or the directory's (AT_FDCWD) */
	uint64_t path;
	bool follow;
	mode_t mode;
	bool empty_ok;		/* AT_EMPTY_PATH: an empty path names fd */
};

static bool call_of(int nr, const uint64_t *a, struct setgid_call *c)
{
	switch (nr) {
#ifdef SYS_chmod
	case SYS_chmod:
		*c = (struct setgid_call){ "chmod", false, AT_FDCWD, a[0], true, (mode_t)a[1], false };
		break;
#endif
	case SYS_fchmod:
		*c = (struct setgid_call){ "fchmod", true, (int)a[0], 0, true, (mode_t)a[1], false };
		break;
	case SYS_fchmodat:
		*c = (struct setgid_call){ "fchmodat", false, (int)a[0], a[1], true, (mode_t)a[2], false };
		break;
	case SYS_fchmodat2:
		*c = (struct setgid_call){ "fchmodat2", false, (int)a[0], a[1], !(a[3] & AT_SYMLINK_NOFOLLOW),
					   (mode_t)a[2], (a[3] & AT_EMPTY_PATH) != 0 };
		break;
	default:
		return false;
	}
	/* the filter's test, again: the setgid bit without the setuid bit */
	return (a[nr == SYS_fchmodat || nr == SYS_fchmodat2 ? 2 : 1] & (S_ISUID | S_ISGID)) == S_ISGID;
}

bool supervise_is_setgid_chmod(int nr, const uint64_t *args)
{
	struct setgid_call c;
	return call_of(nr, args, &c);
}

/* "/proc/self/fd/N" (or thread-self): the command's own descriptor N
 * (glibc's fchmodat emulation names it so); -1 for any other path. */
static int own_fd_name(const char *path)
{
	static const char *const selves[] = { "/proc/self/fd/", "/proc/thread-self/fd/" };
	for (size_t i = 0; i < ARRAY_SIZE(selves); i++) {
		size_t len = strlen(selves[i]);
		int n = -1, end = 0;
		if (strncmp(path, selves[i], len) == 0 && sscanf(path + len, "%d%n", &n, &end) == 1 &&
		    path[len + (size_t)end] == '\0' && n >= 0)
			return n;
	}
	return -1;
}

/* The file the call names, within the jail's root, held by a descriptor
 * of stockade's (O_PATH for a path: *ret_opath); -errno. */
static int target_of(int listener, const struct seccomp_notif *req, const struct setgid_call *c, bool *ret_opath)
{
	pid_t pid = (pid_t)req->pid;
	char link[64];
	*ret_opath = false;
	_cleanup_free_ char *raw = c->by_fd ? NULL : supervise_read_path(pid, c->path);
	if (!c->by_fd && !raw)
		return -EFAULT;
	if (!c->by_fd && !*raw && !c->empty_ok)
		return -ENOENT;
	if (!c->by_fd && !*raw && c->fd == AT_FDCWD) {
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
		*ret_opath = true;
		int fd = open(link, O_PATH | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	if (c->by_fd || !*raw)
		return c->fd < 0 ? -EBADF : notif_caller_fd(listener, req, c->fd);
	int own = own_fd_name(raw);
	if (own >= 0) {
		int fd = notif_caller_fd(listener, req, own);
		if (fd >= 0)
			*ret_opath = (fcntl(fd, F_GETFL) & O_PATH) != 0;
		return fd == -EBADF ? -ENOENT : fd;
	}
	/* The path as the command sees it, from the jail's root: its working
	 * directory's or directory descriptor's name is the jail's (the
	 * jail's root is its mount namespace's, which /proc names from). */
	_cleanup_free_ char *full = NULL;
	if (raw[0] == '/') {
		full = xstrdup(raw);
	} else {
		if (c->fd == AT_FDCWD)
			snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
		else if (c->fd >= 0)
			snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, c->fd);
		else
			return -EBADF;
		char base[4096];
		ssize_t n = readlink(link, base, sizeof(base) - 1);
		if (n < 0)
			return errno == ENOENT ? -EBADF : -errno;
		base[n] = '\0';
		if (base[0] != '/')
			return -ENOTDIR;
		full = xstrcat3(base, "/", raw);
	}
	snprintf(link, sizeof(link), "/proc/%d/root", (int)pid);
	_cleanup_close_ int root = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return -ESRCH;
	/* Never above the jail's root, and no magic link (another
	 * process's descriptor) followed for the command. */
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | (c->follow ? 0 : O_NOFOLLOW),
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	*ret_opath = true;
	int fd = (int)syscall(SYS_openat2, root, full, &how, sizeof(how));
	return fd < 0 ? -errno : fd;
}

/* chmod through stockade's descriptor, its capabilities (a root
 * stockade's) set aside: what the owner may do. */
static int chmod_as_command(int fd, bool opath, mode_t mode)
{
	cap_t own = cap_get_proc(), none = own ? cap_dup(own) : NULL;
	int err = 0;
	if (!own || !none || cap_clear_flag(none, CAP_EFFECTIVE) < 0 || cap_set_proc(none) < 0) {
		err = EPERM;
	} else {
		char proc[40];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		err = (opath ? chmod(proc, mode) : fchmod(fd, mode)) < 0 ? errno : 0;
		if (cap_set_proc(own) < 0)
			abort();	/* stockade's own capabilities, back: cannot fail */
	}
	cap_free(own);
	cap_free(none);
	return err;
}

int supervise_setgid(int listener, const struct seccomp_notif *req, struct report *rep)
{
	struct setgid_call c;
	if (!call_of(req->data.nr, (const uint64_t *)req->data.args, &c))
		return ENOSYS;
	bool opath;
	_cleanup_close_ int fd = target_of(listener, req, &c, &opath);
	if (fd < 0)
		return -fd;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return errno;
	if (S_ISLNK(st.st_mode))
		return EOPNOTSUPP;	/* the kernel's answer: a link has no mode of its own */
	if (!S_ISDIR(st.st_mode)) {
		char proc[40], real[4096];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(proc, real, sizeof(real) - 1);
		real[n < 0 ? 0 : n] = '\0';
		report_denial_ruled(rep, c.name, real, "EPERM", SUPERVISE_SETGID_RULE, "built in: the system call table",
				    "none: no option allows it (stockade.1, BACKENDS)");
		return EPERM;
	}
	/* The path's memory was the caller's: it still waits. */
	if (!notif_id_valid(listener, req->id))
		return ESRCH;
	return chmod_as_command(fd, opath, (mode_t)c.mode);
}
