/* Moving, copying and removing trees the command may have rearranged:
 * never through a symlink, never without bound, and never stopped by a
 * directory the command made read-only (the files are the user's). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

#include "guard/internal.h"
#include "lib/fd.h"
#include "lib/util.h"

/* Held descriptors while removing: deeper directories are moved up to
 * the top of the tree and removed from there. */
#define REMOVE_DEPTH 64

/* fchmod, also on an O_PATH descriptor (through its /proc link, which
 * names that very inode). */
static int fd_chmod(int fd, mode_t mode)
{
	if (fchmod(fd, mode) == 0)
		return 0;
	if (errno != EBADF)
		return -errno;
	char path[32];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return chmod(path, mode) < 0 ? -errno : 0;
}

/* Makes the directory at fd writable and searchable by its owner, when
 * that is us and it is not; *ret_mode is what to put back (0: nothing). */
static mode_t dir_unlock(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 0300) == 0300)
		return 0;
	return fd_chmod(fd, (st.st_mode & 07777) | 0700) == 0 ? (st.st_mode & 07777) | S_IFDIR : 0;
}

static void dir_relock(int fd, mode_t mode)
{
	if (mode)
		(void)fd_chmod(fd, mode & 07777);
}

static int rename2(int sfd, const char *sname, int dfd, const char *dname)
{
	if (renameat2(sfd, sname, dfd, dname, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL)
		return -errno;
	/* a filesystem without RENAME_NOREPLACE: the name checked first;
	 * only our own processes write where this renames to */
	struct stat st;
	if (fstatat(dfd, dname, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return -EEXIST;
	return renameat(sfd, sname, dfd, dname) < 0 ? -errno : 0;
}

int rename_noreplace(int sfd, const char *sname, int dfd, const char *dname)
{
	int r = rename2(sfd, sname, dfd, dname);
	if (r != -EACCES && r != -EPERM)
		return r;
	/* a directory the command left read-only (`chmod 555 .`) */
	mode_t smode = dir_unlock(sfd);
	mode_t dmode = dfd != sfd ? dir_unlock(dfd) : 0;
	if (smode || dmode)
		r = rename2(sfd, sname, dfd, dname);
	dir_relock(sfd, smode);
	dir_relock(dfd, dmode);
	return r;
}

/* ---------------------------------------------------------------------
 * Removing
 * ------------------------------------------------------------------ */

struct remover {
	int topfd;		/* the tree's top: deep directories come up here */
	unsigned long moved;
	int error;
};

static void remove_children(struct remover *rm, int fd, unsigned depth);

static void remove_failed(struct remover *rm, int r)
{
	if (r < 0 && !rm->error)
		rm->error = r;
}

/* unlinkat, once more with fd made writable where the command made it
 * read-only. */
static int unlink_in(int fd, const char *name, int flags)
{
	if (unlinkat(fd, name, flags) == 0 || errno == ENOENT)
		return 0;
	if (errno != EACCES && errno != EPERM)
		return -errno;
	mode_t m = dir_unlock(fd);
	int r = !m ? -EACCES : unlinkat(fd, name, flags) == 0 || errno == ENOENT ? 0 : -errno;
	dir_relock(fd, m);
	return r;
}

static void remove_entry(struct remover *rm, int fd, const char *name, unsigned depth)
{
	int r = unlink_in(fd, name, 0);
	if (r != -EISDIR) {
		remove_failed(rm, r);
		return;
	}
	if (depth >= REMOVE_DEPTH) {
		/* up to the top, to be removed from there: the depth this
		 * walk holds descriptors for stays bounded */
		char up[48];
		snprintf(up, sizeof(up), ".stockade-deep-%lu", rm->moved++);
		remove_failed(rm, rename_noreplace(fd, name, rm->topfd, up));
		return;
	}
	_cleanup_close_ int cfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0 && errno == EACCES) {
		/* an unsearchable directory: ours to open up */
		_cleanup_close_ int pfd = openat(fd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pfd >= 0 && fd_chmod(pfd, 0700) == 0)
			cfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (cfd < 0) {
		remove_failed(rm, errno == ENOENT ? 0 : -errno);
		return;
	}
	(void)dir_unlock(cfd);
	remove_children(rm, cfd, depth + 1);
	remove_failed(rm, unlink_in(fd, name, AT_REMOVEDIR));
}

static void remove_children(struct remover *rm, int fd, unsigned depth)
{
	_cleanup_strv_ char **names = NULL;
	int r = dir_list(fd, &names);
	if (r < 0) {
		remove_failed(rm, r);
		return;
	}
	for (size_t i = 0; names[i]; i++)
		remove_entry(rm, fd, names[i], depth);
}

int tree_remove(int dfd, const char *name)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlink_in(dfd, name, 0);
	_cleanup_close_ int top = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top < 0 && errno == EACCES) {
		_cleanup_close_ int pfd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (pfd >= 0 && fd_chmod(pfd, 0700) == 0)
			top = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (top < 0)
		return errno == ENOENT ? 0 : -errno;
	(void)dir_unlock(top);
	struct remover rm = { .topfd = top };
	/* Each pass removes what it can reach and brings what lies deeper
	 * up to the top; the next pass takes that. */
	for (;;) {
		unsigned long before = rm.moved;
		remove_children(&rm, top, 0);
		if (rm.error || rm.moved == before)
			break;
	}
	return rm.error ? rm.error : unlink_in(dfd, name, AT_REMOVEDIR);
}

/* ---------------------------------------------------------------------
 * Copying, for a quarantine on another filesystem
 * ------------------------------------------------------------------ */

struct copier {
	size_t left;	/* bytes of data still allowed */
};

/* The data of a regular file, hole by hole: a sparse file of a terabyte
 * with a byte in it costs a byte, and its holes stay holes. */
static int copy_data(struct copier *c, int in, int out, off_t size)
{
	char buf[65536];
	for (off_t off = 0; off < size;) {
		off_t data = lseek(in, off, SEEK_DATA);
		if (data < 0) {
			if (errno == ENXIO)
				break;	/* a hole to the end */
			if (errno != EINVAL)
				return -errno;
			data = off;	/* no SEEK_DATA here: all of it is data */
		}
		off_t hole = lseek(in, data, SEEK_HOLE);
		if (hole < 0)
			hole = size;
		if (hole > size)
			hole = size;
		for (off_t at = data; at < hole;) {
			size_t want = (size_t)(hole - at) < sizeof(buf) ? (size_t)(hole - at) : sizeof(buf);
			if (want > c->left)
				return -EFBIG;
			ssize_t n = pread(in, buf, want, at);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			if (n == 0)
				break;
			ssize_t w = pwrite(out, buf, (size_t)n, at);
			if (w < 0) {
				if (errno == EINTR)
					continue;
				return -errno;
			}
			if (w != n)
				return -ENOSPC;
			c->left -= (size_t)n;
			at += n;
		}
		off = hole;
	}
	return ftruncate(out, size) < 0 ? -errno : 0;
}

static int copy_at(struct copier *c, int sfd, const char *sname, int dfd, const char *dname, unsigned depth)
{
	struct stat st;
	if (fstatat(sfd, sname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISREG(st.st_mode)) {
		_cleanup_close_ int in = openat(sfd, sname, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (in < 0 && errno == EACCES) {
			/* a file the command made unreadable: ours to read */
			_cleanup_close_ int pfd = openat(sfd, sname, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (pfd >= 0 && fd_chmod(pfd, (st.st_mode & 07777) | 0400) == 0)
				in = openat(sfd, sname, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		}
		if (in < 0)
			return -errno;
		_cleanup_close_ int out = openat(dfd, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out < 0)
			return -errno;
		int r = copy_data(c, in, out, st.st_size);
		if (r == 0 && fchmod(out, st.st_mode & 0777) < 0)
			r = -errno;
		return r;
	}
	if (S_ISLNK(st.st_mode)) {
		char buf[PATH_MAX + 1];
		ssize_t n = readlinkat(sfd, sname, buf, sizeof(buf) - 1);
		if (n < 0)
			return -errno;
		buf[n] = '\0';
		return symlinkat(buf, dfd, dname) < 0 ? -errno : 0;
	}
	if (S_ISDIR(st.st_mode)) {
		if (depth >= WALK_DEPTH_MAX)
			return -ELOOP;
		if (mkdirat(dfd, dname, 0700) < 0)
			return -errno;
		_cleanup_close_ int in = openat(sfd, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int out = openat(dfd, dname, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (in < 0 || out < 0)
			return -errno;
		_cleanup_strv_ char **names = NULL;
		int r = dir_list(in, &names);
		for (size_t i = 0; r == 0 && names[i]; i++)
			r = copy_at(c, in, names[i], out, names[i], depth + 1);
		return r;
	}
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
		return mknodat(dfd, dname, st.st_mode & (S_IFMT | 0600), 0) < 0 ? -errno : 0;
	/* a device node cannot be made without privilege, and holds no data */
	return 0;
}

int tree_copy(int sfd, const char *sname, int dfd, const char *dname, size_t max)
{
	struct copier c = { .left = max };
	return copy_at(&c, sfd, sname, dfd, dname, 0);
}

int file_copy(int in, int out, off_t size)
{
	struct copier c = { .left = SIZE_MAX };
	return copy_data(&c, in, out, size);
}
