/* The filesystem helpers only Linux builds: removing a tree by mount
 * (statx's mount id, renameat2) and finding the processes that hold a
 * folder (/proc). What macOS builds of lib/fs.h is in fs.c. */
#include "lib/fs.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>

#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"

/* Local file systems never answer EINTR, FUSE and NFS can: every call
 * that reads or changes the tree is retried. */
#define RETRY(expr)                                                            \
	({                                                                     \
		long r_;                                                       \
		do                                                             \
			r_ = (long)(expr);                                     \
		while (r_ < 0 && errno == EINTR);                              \
		r_;                                                            \
	})

/* rm_rf holds this many directories open at once, the top included. A
 * directory found below the last is moved up to the top under a name of
 * its own and removed from there on a later pass: each move takes a
 * branch 63 levels closer to the top, so that no tree is too deep and
 * none costs more descriptors. */
#define RM_LEVELS 64

struct rm_level {
	struct dir_iter it;		/* it.fd: the directory, open */
	char name[NAME_MAX + 1];	/* its name in the level above */
};

struct rm_walk {
	char *buf[RM_LEVELS];	/* each level's listing buffer, once it has one */
	int depth;
	struct statx top;	/* the top's mount: no other is entered */
	uint64_t moved;		/* names handed out at the top so far */
	bool progress;		/* this pass removed or moved something */
	int err;		/* the first failure */
	/* Last, and never cleared: only the levels entered are written
	 * (18 KiB of them, most never used). */
	struct rm_level level[RM_LEVELS];
};

static void rm_failed(struct rm_walk *w, int err)
{
	if (w->err == 0)
		w->err = err;
}

/* chmod of the directory an O_PATH descriptor holds: its /proc link
 * reaches that inode itself, where a chmod by name would follow a
 * symlink planted there meanwhile. */
static int chmod_opath(int fd, mode_t mode)
{
	char buf[21];
	_cleanup_free_ char *proc = xstrcat3("/proc/self/fd/", fmt_u64(buf, (uint64_t)fd), "");
	return RETRY(chmod(proc, mode)) < 0 ? -errno : 0;
}

static bool same_mount(const struct statx *a, const struct statx *b)
{
	if ((a->stx_mask & b->stx_mask & STATX_MNT_ID) && a->stx_mnt_id != b->stx_mnt_id)
		return false;
	return a->stx_dev_major == b->stx_dev_major && a->stx_dev_minor == b->stx_dev_minor;
}

/* Opens the directory name in dirfd for reading and makes it readable,
 * writable and searchable: a command may leave one 0500, or 0000, and
 * what is in it is ours. Never through a symlink; on another mount than
 * top (where top is given) not at all: a bind mount inside the tree is
 * not the tree's to empty. */
static int open_emptiable(int dirfd, const char *name, const struct statx *top, struct statx *ret_stx, int *ret_fd)
{
	int fd = (int)RETRY(openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
	if (fd < 0 && errno == EACCES) {
		_cleanup_close_ int path_fd =
			(int)RETRY(openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
		if (path_fd < 0)
			return -errno;
		int r = chmod_opath(path_fd, 0700);
		if (r < 0)
			return r;
		fd = (int)RETRY(openat(path_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
	}
	if (fd < 0)
		return -errno;
	if (statx(fd, "", AT_EMPTY_PATH, STATX_MODE | STATX_MNT_ID, ret_stx) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (top && !same_mount(top, ret_stx)) {
		close(fd);
		return -EXDEV;
	}
	if ((ret_stx->stx_mode & 0700) != 0700 && fchmod(fd, 0700) < 0) {
		/* not ours to change: removing may still work */
	}
	*ret_fd = fd;
	return 0;
}

/* A directory on the last level held open: moved up to the top under a
 * fresh name, whence a later pass removes it. The top is the directory
 * being removed, so that nothing ever leaves the tree. */
static void move_up(struct rm_walk *w, int dirfd, const char *name)
{
	int top = w->level[0].it.fd;
	unsigned flags = RENAME_NOREPLACE;
	bool made_writable = false;
	for (unsigned taken = 0; taken < 64;) {
		char buf[21];
		_cleanup_free_ char *fresh = xstrcat3("rm-deep-", fmt_u64(buf, w->moved), "");
		if (RETRY(renameat2(dirfd, name, top, fresh, flags)) == 0) {
			w->moved++;
			w->progress = true;
			return;
		}
		if (errno == ENOENT)
			return;
		/* The name is taken (without RENAME_NOREPLACE, only by an
		 * entry that is not an empty directory: replacing one of those
		 * in the tree is removing it). */
		if (errno == EEXIST || errno == ENOTEMPTY || errno == ENOTDIR) {
			w->moved++;
			taken++;
			continue;
		}
		if (errno == EINVAL && flags) {
			flags = 0;	/* a file system without RENAME_NOREPLACE */
			continue;
		}
		/* Moving a directory to another parent rewrites its "..":
		 * it must be writable itself. */
		if (errno == EACCES && !made_writable) {
			made_writable = true;
			_cleanup_close_ int path_fd =
				(int)RETRY(openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
			if (path_fd >= 0 && chmod_opath(path_fd, 0700) == 0)
				continue;
			errno = EACCES;
		}
		rm_failed(w, -errno);
		return;
	}
	rm_failed(w, -EEXIST);
}

/* One entry of the directory on the current level: removed, or its
 * directory entered, or moved up. */
static void remove_entry(struct rm_walk *w, const char *name, unsigned char type)
{
	int dirfd = w->level[w->depth].it.fd;
	/* Files, the most of a tree, the cheap way; a directory among the
	 * DT_UNKNOWN says EISDIR. */
	if (type != DT_DIR) {
		if (RETRY(unlinkat(dirfd, name, 0)) == 0) {
			w->progress = true;
			return;
		}
		if (errno == ENOENT)
			return;
		if (errno != EISDIR) {
			rm_failed(w, -errno);
			return;
		}
	}
	/* Then an empty directory, as most a run leaves are. */
	if (RETRY(unlinkat(dirfd, name, AT_REMOVEDIR)) == 0) {
		w->progress = true;
		return;
	}
	if (errno == ENOENT)
		return;
	if (errno == ENOTDIR) {
		/* No longer a directory. */
		if (RETRY(unlinkat(dirfd, name, 0)) == 0)
			w->progress = true;
		else if (errno != ENOENT)
			rm_failed(w, -errno);
		return;
	}
	if (errno != ENOTEMPTY && errno != EEXIST) {
		rm_failed(w, -errno);	/* EBUSY: a mount point */
		return;
	}
	if (w->depth + 1 == RM_LEVELS) {
		move_up(w, dirfd, name);
		return;
	}
	struct rm_level *next = &w->level[w->depth + 1];
	struct statx stx;
	int fd;
	int r = open_emptiable(dirfd, name, &w->top, &stx, &fd);
	if (r < 0) {
		if (r != -ENOENT)
			rm_failed(w, r);
		return;
	}
	if (!w->buf[w->depth + 1])
		w->buf[w->depth + 1] = xmalloc(DIR_BUF);
	next->it.buf = w->buf[w->depth + 1];
	next->it.fd = fd;
	next->it.len = next->it.off = 0;
	memcpy(next->name, name, strlen(name) + 1);	/* d_name: NAME_MAX at most */
	w->depth++;
}

/* Passes over the tree from the top, each removing what it can, until
 * one changes nothing: what was moved up, and what a directory did not
 * list while it changed, goes on a later one. */
static void rm_walk(struct rm_walk *w)
{
	for (;;) {
		struct rm_level *cur = &w->level[w->depth];
		int err;
		const dir_entry *de = dir_next(&cur->it, &err);
		if (de) {
			remove_entry(w, de->d_name, de->d_type);
			continue;
		}
		if (err < 0)
			rm_failed(w, err);
		if (w->depth == 0) {
			if (!w->progress)
				return;
			w->progress = false;
			if (lseek(cur->it.fd, 0, SEEK_SET) < 0) {
				rm_failed(w, -errno);
				return;
			}
			cur->it.len = cur->it.off = 0;
			continue;
		}
		close(cur->it.fd);
		cur->it.fd = -1;
		w->depth--;
		/* ENOTEMPTY: something in it could not go (said already), or
		 * came meanwhile, for the next pass. */
		if (RETRY(unlinkat(w->level[w->depth].it.fd, cur->name, AT_REMOVEDIR)) == 0)
			w->progress = true;
		else if (errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST)
			rm_failed(w, -errno);
	}
}

int rm_rf_at(int dirfd, const char *name)
{
	/* The cheap way first: most of what a run leaves is an empty
	 * directory or a plain file. */
	if (RETRY(unlinkat(dirfd, name, AT_REMOVEDIR)) == 0 || errno == ENOENT)
		return 0;
	if (errno == ENOTDIR)
		return RETRY(unlinkat(dirfd, name, 0)) == 0 || errno == ENOENT ? 0 : -errno;
	if (errno != ENOTEMPTY && errno != EEXIST && errno != EACCES && errno != EPERM)
		return -errno;

	_cleanup_free_ struct rm_walk *w = xmalloc(sizeof(*w));
	memset(w, 0, offsetof(struct rm_walk, level));
	int fd;
	int r = open_emptiable(dirfd, name, NULL, &w->top, &fd);
	if (r < 0)
		return r == -ENOENT ? 0 : r;
	w->buf[0] = xmalloc(DIR_BUF);
	w->level[0].it = (struct dir_iter){ .fd = fd, .buf = w->buf[0] };
	rm_walk(w);
	/* It ends on the top, the only level still open. */
	close(fd);
	for (int i = 0; i < RM_LEVELS; i++)
		free(w->buf[i]);
	if (RETRY(unlinkat(dirfd, name, AT_REMOVEDIR)) < 0 && errno != ENOENT)
		rm_failed(w, -errno);
	return w->err;
}

int rm_rf(const char *path)
{
	_cleanup_free_ char *copy = xstrdup(path);
	char *slash = strrchr(copy, '/');
	if (!slash || !slash[1])
		return -EINVAL;
	*slash = '\0';
	_cleanup_close_ int parent = open(slash == copy ? "/" : copy, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0)
		return -errno;
	return rm_rf_at(parent, slash + 1);
}

/* Marks the dirs path lies in. A deleted file's " (deleted)" after its
 * path leaves it in its directory. */
static void mark_held(const char *path, char *const *dirs, size_t n, bool *held)
{
	for (size_t i = 0; i < n; i++)
		if (!held[i] && path_is_beneath(path, dirs[i]))
			held[i] = true;
}

static void mark_link(int dirfd, const char *name, char *const *dirs, size_t n, bool *held)
{
	char target[PATH_MAX];
	ssize_t len = readlinkat(dirfd, name, target, sizeof(target) - 1);
	if (len <= 0 || target[0] != '/')
		return;	/* gone, unreadable, or no path: "socket:[...]" */
	target[len] = '\0';
	mark_held(target, dirs, n, held);
}

/* What one process holds: cwd, root, descriptors, mappings. */
static void mark_process(int pid_fd, char *const *dirs, size_t n, bool *held)
{
	mark_link(pid_fd, "cwd", dirs, n, held);
	mark_link(pid_fd, "root", dirs, n, held);
	_cleanup_close_ int fds = openat(pid_fd, "fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fds >= 0) {
		_cleanup_free_ char *buf = xmalloc(DIR_BUF);
		struct dir_iter it = { .fd = fds, .buf = buf };
		const dir_entry *de;
		int err;
		while ((de = dir_next(&it, &err)))
			mark_link(fds, de->d_name, dirs, n, held);
	}
	/* A mapped file needs no descriptor: a program run from the tmp,
	 * its libraries, a file mmap'ed and closed. The path is the last
	 * field, the only one with a slash in it. */
	int maps = openat(pid_fd, "maps", O_RDONLY | O_CLOEXEC);
	_cleanup_fclose_ FILE *f = maps >= 0 ? fdopen(maps, "r") : NULL;
	if (!f) {
		if (maps >= 0)
			close(maps);
		return;
	}
	_cleanup_free_ char *line = NULL;
	size_t size = 0;
	ssize_t len;
	while ((len = getline(&line, &size, f)) > 0) {
		if (line[len - 1] == '\n')
			line[len - 1] = '\0';
		const char *path = strchr(line, '/');
		if (path)
			mark_held(path, dirs, n, held);
	}
}

int dirs_held(char *const *dirs, size_t n, uid_t uid, pid_t except, bool *ret_held)
{
	for (size_t i = 0; i < n; i++)
		ret_held[i] = false;
	_cleanup_close_ int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (proc < 0)
		return -errno;
	_cleanup_free_ char *buf = xmalloc(DIR_BUF);
	struct dir_iter it = { .fd = proc, .buf = buf };
	const dir_entry *de;
	int err = 0;
	size_t n_held = 0;
	char self[21];
	const char *except_name = fmt_u64(self, (uint64_t)except);
	while (n_held < n && (de = dir_next(&it, &err))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || streq(de->d_name, except_name))
			continue;
		_cleanup_close_ int pid_fd = openat(proc, de->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC);
		struct stat st;
		/* /proc/PID belongs to the process's effective uid. One made
		 * undumpable (ssh-agent and gpg-agent make themselves so)
		 * belongs to root and cannot be read but by root: taking it
		 * for a holder would keep every directory for as long as an
		 * agent runs, and none of the run's own is undumpable unless
		 * it made itself so. */
		if (pid_fd < 0 || fstat(pid_fd, &st) < 0 || st.st_uid != uid)
			continue;
		mark_process(pid_fd, dirs, n, ret_held);
		n_held = 0;
		for (size_t i = 0; i < n; i++)
			n_held += ret_held[i];
	}
	return n_held < n ? err : 0;
}

int proc_self_status(const char *name)
{
	/* Read once in a process: what is asked (NoNewPrivs,
	 * Seccomp_filters) is set where the jail is built, in its own
	 * processes, never in the one that reads it. A child forked after
	 * the read reads its own. */
	static char *st;
	static pid_t read_by;
	if (!st || read_by != getpid()) {
		free(st);
		st = NULL;
		if (read_file_at(AT_FDCWD, "/proc/self/status", 1 << 14, &st, NULL) < 0)
			return -1;
		read_by = getpid();
	}
	size_t n = strlen(name);
	for (const char *line = st; line && *line;) {
		if (strncmp(line, name, n) == 0 && line[n] == ':')
			return atoi(line + n + 1);
		line = strchr(line, '\n');
		line = line ? line + 1 : NULL;
	}
	return -1;
}

bool dir_could_write(const char *dir)
{
	_cleanup_free_ char *at = xstrdup(dir);
	for (;;) {
		struct stat st;
		if (stat(at, &st) == 0) {
			struct statvfs sv;
			if (!S_ISDIR(st.st_mode) || (statvfs(at, &sv) == 0 && (sv.f_flag & ST_RDONLY)))
				return false;
			/* A file without a name, gone at close: what Landlock
			 * would refuse a write there (access(2) never asks it). */
			int fd = open(at, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
			if (fd >= 0) {
				close(fd);
				return true;
			}
			if (errno == EACCES || errno == EPERM || errno == EROFS)
				return false;
			return access(at, W_OK | X_OK) == 0;
		}
		char *slash = strrchr(at, '/');
		if (!slash || slash == at)
			return false;
		*slash = '\0';
	}
}
