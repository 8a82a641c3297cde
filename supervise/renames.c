/* Renames in the namespace jail, watched. A rename over, into or of a
 * trust hand-off the jail binds read-only fails there (the kernel's
 * answer: EBUSY for a mount point, EROFS for a read-only mount), and the
 * command's tool says only "Device or resource busy": git writes its
 * config by renaming a lock file over it. stockade reads where the rename
 * goes, as the command names it, so that one line can say which hand-off
 * and how to allow it. It decides nothing: the call goes on to the
 * kernel, whose bind is what refuses, so a path swapped after the read
 * changes only what is said. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/uio.h>
#include <linux/seccomp.h>

#include "lib/path.h"
#include "lib/util.h"
#include "supervise/internal.h"

bool supervise_is_rename(int nr)
{
	return
#ifdef SYS_rename
		nr == SYS_rename ||
#endif
		nr == SYS_renameat || nr == SYS_renameat2;
}

/* A NUL-terminated path from the command's memory, a page at a time (a
 * read may not cross into a page that is not mapped). */
char *supervise_read_path(pid_t pid, uint64_t addr)
{
	char buf[PATH_MAX];
	size_t got = 0;
	while (got < sizeof(buf)) {
		size_t page = 4096 - ((addr + got) % 4096);
		size_t want = page < sizeof(buf) - got ? page : sizeof(buf) - got;
		struct iovec local = { .iov_base = buf + got, .iov_len = want };
		struct iovec remote = { .iov_base = (void *)(uintptr_t)(addr + got), .iov_len = want };
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return NULL;
		void *nul = memchr(buf + got, '\0', (size_t)n);
		if (nul)
			return xstrdup(buf);
		got += (size_t)n;
	}
	return NULL;
}

/* Where a path the command names lies: absolute (the jail's paths are the
 * host's, bound in place), or relative to its directory descriptor or
 * working directory, read from /proc. */
char *supervise_path_of(pid_t pid, int dirfd, const char *path)
{
	if (path[0] == '/')
		return path_normalize(path);
	char link[64], base[PATH_MAX];
	if (dirfd == AT_FDCWD)
		snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
	else
		snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, dirfd);
	ssize_t n = readlink(link, base, sizeof(base) - 1);
	if (n <= 0 || base[0] != '/')
		return NULL;
	base[n] = '\0';
	_cleanup_free_ char *j = path_join(base, path);
	return path_normalize(j);
}

int supervise_rename_paths(const struct seccomp_notif *req, char **ret_old, char **ret_new)
{
	*ret_old = *ret_new = NULL;
	const __u64 *a = req->data.args;
	pid_t pid = (pid_t)req->pid;
	bool plain = !(req->data.nr == SYS_renameat || req->data.nr == SYS_renameat2);
	int olddir = plain ? AT_FDCWD : (int)a[0], newdir = plain ? AT_FDCWD : (int)a[2];
	_cleanup_free_ char *oldp = supervise_read_path(pid, plain ? a[0] : a[1]);
	_cleanup_free_ char *newp = supervise_read_path(pid, plain ? a[1] : a[3]);
	if (!oldp || !newp)
		return -EFAULT;
	*ret_old = supervise_path_of(pid, olddir, oldp);
	*ret_new = supervise_path_of(pid, newdir, newp);
	return *ret_old && *ret_new ? 0 : -ENOENT;
}

const struct rule *supervise_rename_handoff(const struct policy *p, const char *path)
{
	const struct rule *found = NULL;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *r = &p->rules[i];
		if ((r->flags & RULE_HANDOFF) && path_is_beneath(path, r->path) &&
		    (!found || strlen(r->path) > strlen(found->path)))
			found = r;
	}
	return found;
}

/* The landlock backend: an open that creates a POSIX semaphore or shared
 * memory object (glibc's sem_open and shm_open, with the exact flags they
 * use; mkstemp's are the same as sem_open's, which is why the path is
 * read) in the host's /dev/shm, which Landlock refuses there. Named, so
 * that the refusal has a line; the call goes on to the kernel, which
 * decides, whatever the path is by then. */
bool supervise_is_shm_open(int nr, const uint64_t *args)
{
	if (nr != SYS_openat)
		return false;
	uint32_t f = (uint32_t)args[2];
	return f == SHM_OPEN_SEM || f == SHM_OPEN_EXCL || f == SHM_OPEN_ATTACH;
}

bool supervise_shm_path(const struct seccomp_notif *req, char **ret_path)
{
	*ret_path = NULL;
	_cleanup_free_ char *raw = supervise_read_path((pid_t)req->pid, req->data.args[1]);
	if (!raw)
		return false;
	_cleanup_free_ char *path = supervise_path_of((pid_t)req->pid, (int)req->data.args[0], raw);
	if (!path || !str_has_prefix(path, "/dev/shm/"))
		return false;
	*ret_path = TAKE_PTR(path);
	return true;
}

/* ---- Unix connects in the namespace jail, watched ---- */

char *supervise_unix_connect_path(const struct seccomp_notif *req)
{
	if (req->data.nr != SYS_connect)
		return NULL;
	struct sockaddr_un sun = { 0 };
	size_t len = req->data.args[2] < sizeof(sun) ? (size_t)req->data.args[2] : sizeof(sun);
	if (len <= offsetof(struct sockaddr_un, sun_path) + 1)
		return NULL;
	if (!sv_read_mem((pid_t)req->pid, req->data.args[1], &sun, len) || sun.sun_family != AF_UNIX ||
	    sun.sun_path[0] == '\0')
		return NULL;
	char path[sizeof(sun.sun_path) + 1];
	size_t n = strnlen(sun.sun_path, len - offsetof(struct sockaddr_un, sun_path));
	memcpy(path, sun.sun_path, n);
	path[n] = '\0';
	return supervise_path_of((pid_t)req->pid, AT_FDCWD, path);
}
