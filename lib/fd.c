#include "lib/fd.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <sys/stat.h>
#ifdef __linux__
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif

#include "lib/path.h"
#include "lib/util.h"

int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int read_all(int fd, void *buf, size_t n, size_t *ret_read)
{
	char *p = buf;
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, p + got, n - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (ret_read)
		*ret_read = got;
	return 0;
}

int read_file_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_close_ int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	/* Sized from the file where it says (/proc says 0), grown while it
	 * fills the buffer, up to max: not max bytes for a 2 KiB file. */
	struct stat st;
	size_t cap = fstat(fd, &st) == 0 && st.st_size > 0 && (size_t)st.st_size < max ? (size_t)st.st_size + 1
		   : max < 4096 ? max : 4096;
	_cleanup_free_ char *buf = xmalloc(cap + 1);
	size_t len = 0;
	for (;;) {
		size_t got;
		int r = read_all(fd, buf + len, cap - len, &got);
		if (r < 0)
			return r;
		len += got;
		if (len < cap || cap == max)
			break;
		cap = cap > max / 2 ? max : cap * 2;
		buf = xrealloc(buf, cap + 1);
	}
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	if (ret_len)
		*ret_len = len;
	return 0;
}

int read_small_fd(int fd, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_close_ int f = fd;
	struct stat st;
	if (fstat(f, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	size_t want = (size_t)st.st_size < max ? (size_t)st.st_size : max;
	_cleanup_free_ char *buf = xmalloc(want + 1);
	size_t len;
	int r = read_all(f, buf, want, &len);
	if (r < 0)
		return r;
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	*ret_len = len;
	return 0;
}

#ifdef __linux__
static bool openat2_missing;
#endif

/* Component by component, for kernels before 5.6 or a seccomp filter
 * that refuses openat2: each step refuses a symlink, so the result is the
 * same as RESOLVE_NO_SYMLINKS (and RESOLVE_BENEATH, where asked) for the
 * normalised paths stockade opens. */
static int open_walk(int dirfd, const char *path, int flags, mode_t mode, unsigned how)
{
	bool absolute = path[0] == '/';
	if (absolute && (how & OPEN_BENEATH))
		return -EXDEV;
	_cleanup_close_ int cur = openat(absolute ? AT_FDCWD : dirfd, absolute ? "/" : ".",
					 OPEN_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	const char *p = path;
	while (*p == '/')
		p++;
	if (!*p) {
		int fd = openat(cur, ".", flags | O_CLOEXEC, mode);
		return fd < 0 ? -errno : fd;
	}
	for (;;) {
		const char *end = str_chrnul(p, '/');
		_cleanup_free_ char *comp = xstrndup(p, (size_t)(end - p));
		if (streq(comp, "..") || !*comp)
			return -EXDEV;
		if (!*end) {
			int fd = openat(cur, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode);
			return fd < 0 ? -errno : fd;
		}
		int next = openat(cur, comp, OPEN_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return -errno;
		struct stat st;
		if (fstat(next, &st) < 0) {
			close(next);
			return -errno;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(next);
			return S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
		}
		close(cur);
		cur = next;
		p = end + 1;
	}
}

int open_nofollow(int dirfd, const char *path, int flags, mode_t mode, unsigned how)
{
	if (!*path)
		path = ".";
#ifdef __linux__
	if (!openat2_missing) {
		struct open_how oh = {
			.flags = (uint64_t)(flags | O_CLOEXEC),
			.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
			.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
				   ((how & OPEN_BENEATH) ? RESOLVE_BENEATH : 0),
		};
		long fd = syscall(SYS_openat2, dirfd, path, &oh, sizeof(oh));
		/* EXDEV for a relative path is also what was found beneath
		 * and moved out while the lookup ran (another run's guard
		 * moving a plant to its quarantine): ask again for what the
		 * path holds now. A path that climbs out keeps its EXDEV. */
		for (int again = 0; fd < 0 && errno == EXDEV && (how & OPEN_BENEATH) && path[0] != '/' && again < 8;
		     again++)
			fd = syscall(SYS_openat2, dirfd, path, &oh, sizeof(oh));
		if (fd >= 0)
			return (int)fd;
		/* EPERM: what older container seccomp profiles answer. */
		if (errno != ENOSYS && errno != EPERM)
			return -errno;
		openat2_missing = true;
	}
#endif
	return open_walk(dirfd, path, flags, mode, how);
}

int open_parent_beneath(int dirfd, const char *rel, const char **ret_name)
{
	_cleanup_free_ char *parent = path_parent(rel, ret_name);
	if (!parent)
		return -EINVAL;
	return open_nofollow(dirfd, parent, OPEN_PATH | O_DIRECTORY, 0, OPEN_BENEATH);
}

int parent_cache_open(struct parent_cache *c, const char *rel, const char **ret_name)
{
	const char *slash = strrchr(rel, '/');
	if (!slash) {
		*ret_name = rel;
		return c->dirfd;
	}
	*ret_name = slash + 1;
	size_t n = (size_t)(slash - rel);
	if (c->path && strlen(c->path) == n && strncmp(c->path, rel, n) == 0)
		return c->fd;
	if (c->path && c->fd >= 0)
		close(c->fd);
	free(c->path);
	c->path = xstrndup(rel, n);
	c->fd = open_nofollow(c->dirfd, c->path, OPEN_PATH | O_DIRECTORY, 0, OPEN_BENEATH);
	return c->fd;
}

int parent_cache_read(struct parent_cache *c, const char *rel, size_t max, char **ret, size_t *ret_len)
{
	const char *name;
	int pfd = parent_cache_open(c, rel, &name);
	if (pfd < 0)
		return pfd;
	int fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return read_small_fd(fd, max, ret, ret_len);
}

void parent_cache_done(struct parent_cache *c)
{
	if (c->path && c->fd >= 0)
		close(c->fd);
	free(c->path);
	c->path = NULL;
	c->fd = -1;
}

void fd_closer_add(struct fd_closer *c, int fd)
{
	if (fd < 0)
		return;
	if (!c->limit) {
		long max = sysconf(_SC_OPEN_MAX);	/* RLIMIT_NOFILE's soft limit */
		c->limit = max > 0 && max < INT_MAX ? (int)max : INT_MAX;
	}
	if (fd >= c->limit - FD_CLOSER_SPARE) {
		fd_closer_flush(c);
		close(fd);
		return;
	}
	if (c->held) {
		int hi = c->base + 63 - __builtin_clzll(c->held);
		int lo = fd < c->base ? fd : c->base;
		if ((fd > hi ? fd : hi) - lo < 64) {
			if (fd < c->base) {
				c->held <<= c->base - fd;
				c->base = fd;
			}
			c->held |= 1ULL << (fd - c->base);
			return;
		}
		fd_closer_flush(c);
	}
	c->base = fd;
	c->held = 1;
}

static void close_numbers(int lo, int hi)
{
#ifdef __linux__
	if (lo < hi && syscall(SYS_close_range, (unsigned)lo, (unsigned)hi, 0) == 0)
		return;
#endif
	for (int fd = lo; fd <= hi; fd++)
		close(fd);
}

void fd_closer_flush(struct fd_closer *c)
{
	uint64_t held = c->held;
	while (held) {
		int first = __builtin_ctzll(held);
		/* the run of consecutive numbers from first */
		uint64_t rest = ~(held >> first);
		int n = rest ? __builtin_ctzll(rest) : 64 - first;
		close_numbers(c->base + first, c->base + first + n - 1);
		held &= n + first >= 64 ? 0 : ~0ULL << (first + n);
	}
	c->held = 0;
}

int fd_send_n(int sock, char tag, const int *fds, size_t n)
{
	if (n > FD_BATCH_MAX)
		return -EINVAL;
	struct iovec iov = { .iov_base = &tag, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int) * FD_BATCH_MAX)];
		struct cmsghdr align;
	} u = { 0 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = n ? u.buf : NULL,
		.msg_controllen = n ? CMSG_SPACE(sizeof(int) * n) : 0,
	};
	struct cmsghdr *c = n ? CMSG_FIRSTHDR(&msg) : NULL;
	if (c) {
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	return sendmsg(sock, &msg, SEND_NOSIGNAL) == 1 ? 0 : -errno;
}

int fd_send(int sock, int fd)
{
	return fd_send_n(sock, 'L', &fd, 1);
}

int fd_send_none(int sock)
{
	return fd_send_n(sock, 'N', NULL, 0);
}

int fd_recv_n(int sock, char *ret_tag, int *fds, size_t max)
{
	struct iovec iov = { .iov_base = ret_tag, .iov_len = 1 };
	union {
		char buf[CMSG_SPACE(sizeof(int) * FD_BATCH_MAX)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = CMSG_SPACE(sizeof(int) * (max < FD_BATCH_MAX ? max : FD_BATCH_MAX)),
	};
	ssize_t n;
	do
		n = recvmsg(sock, &msg, RECV_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -EPIPE;
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	if (!c)
		return 0;
	size_t got = c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len >= CMSG_LEN(0)
			     ? (c->cmsg_len - CMSG_LEN(0)) / sizeof(int)
			     : 0;
	memcpy(fds, CMSG_DATA(c), sizeof(int) * got);
	if ((msg.msg_flags & MSG_CTRUNC) || !got) {
		/* More than asked for (the rest closed by the kernel): none. */
		for (size_t i = 0; i < got; i++)
			close(fds[i]);
		return -EBADMSG;
	}
#ifndef __linux__
	/* No MSG_CMSG_CLOEXEC: marked now, before anything could exec. */
	for (size_t i = 0; i < got; i++)
		fcntl(fds[i], F_SETFD, FD_CLOEXEC);
#endif
	return (int)got;
}

int fd_recv(int sock, int *ret_fd)
{
	char tag;
	int r = fd_recv_n(sock, &tag, ret_fd, 1);
	if (r == 0 && tag == 'N')
		*ret_fd = -1;	/* fd_send_none: the sender had none to give */
	else if (r == 0)
		return -EBADMSG;
	return r < 0 ? r : 0;
}

const dir_entry *dir_next(struct dir_iter *it, int *ret_err)
{
	*ret_err = 0;
#ifndef __linux__
	/* macOS: readdir on a copy of the descriptor (getdents64 is
	 * Linux's). The copy is closed at the end of the listing; a caller
	 * that stops early leaves it open until exit. */
	if (!it->dir) {
		int copy = dup(it->fd);
		if (copy < 0 || !(it->dir = fdopendir(copy))) {
			*ret_err = -errno;
			if (copy >= 0)
				close(copy);
			return NULL;
		}
		rewinddir(it->dir);
	}
	for (;;) {
		errno = 0;
		const dir_entry *de = readdir(it->dir);
		if (!de) {
			*ret_err = errno ? -errno : 0;
			closedir(it->dir);
			it->dir = NULL;
			return NULL;
		}
		const char *name = de->d_name;
		if (!(name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))))
			return de;
	}
#else
	for (;;) {
		while (it->off < it->len) {
			const dir_entry *de = (const dir_entry *)(it->buf + it->off);
			it->off += de->d_reclen;
			const char *name = de->d_name;
			if (!(name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))))
				return de;
		}
		it->len = getdents64(it->fd, it->buf, DIR_BUF);
		it->off = 0;
		if (it->len < 0) {
			if (errno == EINTR)
				continue;
			*ret_err = -errno;
			return NULL;
		}
		if (it->len == 0)
			return NULL;
	}
#endif
}

static int strcmp_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int listed_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dir_listed *)a)->name, ((const struct dir_listed *)b)->name);
}

int dir_listing_read(int dirfd, const char *rel, struct dir_listing *ret)
{
	*ret = (struct dir_listing){ 0 };
	int fd = *rel ? open_nofollow(dirfd, rel, O_RDONLY | O_DIRECTORY, 0, OPEN_BENEATH)
		      : openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!*rel && fd < 0)
		fd = -errno;
	if (fd < 0) {
		ret->failed = !errno_is_absent(fd);
		return ret->failed ? fd : 0;
	}
	char buf[DIR_BUF];
	struct dir_iter it = { .fd = fd, .buf = buf };
	const dir_entry *de;
	int err;
	while ((de = dir_next(&it, &err))) {
		ret->v = xgrow(ret->v, ret->n, sizeof(*ret->v));
		ret->v[ret->n++] = (struct dir_listed){ .name = xstrdup(de->d_name), .type = de->d_type };
	}
	close(fd);
	ret->failed = err < 0;
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(*ret->v), listed_cmp);
	return err < 0 ? err : 0;
}

unsigned char dir_listing_type(const struct dir_listing *l, const char *name)
{
	if (l->failed)
		return DT_UNKNOWN;
	struct dir_listed key = { .name = (char *)name };
	const struct dir_listed *hit = l->n ? bsearch(&key, l->v, l->n, sizeof(*l->v), listed_cmp) : NULL;
	return hit ? hit->type : DIR_ABSENT;
}

void dir_listing_free(struct dir_listing *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].name);
	free(l->v);
	*l = (struct dir_listing){ 0 };
}

int dir_list(int fd, char ***ret)
{
	char **v = strv_new();
	size_t n = 0;
	_cleanup_free_ char *buf = xmalloc(DIR_BUF);
	struct dir_iter it = { .fd = fd, .buf = buf };
	const dir_entry *de;
	int err;
	while ((de = dir_next(&it, &err))) {
		strv_add(&v, de->d_name);
		n++;
	}
	if (err < 0) {
		strv_free(v);
		return err;
	}
	qsort(v, n, sizeof(char *), strcmp_ptr);
	*ret = v;
	return 0;
}
