/* Descriptors: whole-buffer reads and writes, small files, opening a path
 * without following symlinks (beneath a directory, where asked), passing a
 * descriptor over a Unix socket, and listing a directory. Each returns 0
 * (or a descriptor) or -errno, and never prints. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "lib/compat.h"

/* Retrying on EINTR and short counts. */
int write_all(int fd, const void *buf, size_t n);
int read_all(int fd, void *buf, size_t n, size_t *ret_read);
/* Reads a small file (at most max bytes) into a NUL-terminated buffer. */
int read_file_at(int dirfd, const char *path, size_t max, char **ret, size_t *ret_len);
/* The same through fd, which must be a regular file; fd is closed here. */
int read_small_fd(int fd, size_t max, char **ret, size_t *ret_len);

/* Opens path, relative to dirfd or absolute, following no symlink on the
 * way (ELOOP), nor a magic link. With OPEN_BENEATH the path never leaves
 * dirfd either ("..", an absolute path: EXDEV). Through openat2, or
 * component by component where a kernel or a filter lacks it. */
#define OPEN_BENEATH (1u << 0)
int open_nofollow(int dirfd, const char *path, int flags, mode_t mode, unsigned how);

/* For open_nofollow: nothing can be reached at that path without a
 * symlink (for stockade, a symlink on the way is no way at all). */
static inline bool errno_is_absent(int r)
{
	return r == -ENOENT || r == -ENOTDIR || r == -ELOOP;
}

/* The directory holding rel (relative to dirfd, never leaving it), and
 * rel's last component in *ret_name. */
int open_parent_beneath(int dirfd, const char *rel, const char **ret_name);

/* The last parent directory opened beneath dirfd, kept: paths that come
 * sorted and share a parent (.git/hooks and .git/config) open it once.
 * Only for passes that move nothing; one that may move a parent aside
 * opens afresh. */
struct parent_cache {
	int dirfd;	/* borrowed */
	char *path;	/* the parent's relative path, NULL when none is held */
	int fd;		/* or -errno, when that parent could not be opened */
};
#define PARENT_CACHE_INIT(d) ((struct parent_cache){ .dirfd = (d), .fd = -1 })
/* The directory holding rel: dirfd itself for a name at the top. Owned by
 * the cache. */
int parent_cache_open(struct parent_cache *c, const char *rel, const char **ret_name);
/* A small regular file at rel, through the cache, never following a
 * symlink. */
int parent_cache_read(struct parent_cache *c, const char *rel, size_t max, char **ret, size_t *ret_len);
void parent_cache_done(struct parent_cache *c);

/* Descriptors to close together: each added once it is the caller's to
 * close and closed no other way, so that every number the closer holds
 * is the caller's; closed with one close_range a run of consecutive
 * numbers, where a close each would cost a system call each (some 2 us
 * on a host where a system call is dear: a plan's hundreds of O_PATH
 * descriptors, a mount's three). It holds those within 64 numbers of
 * each other; one farther closes what it holds first. Never so many that
 * the caller's next opens would pass the open-files limit (a session
 * started under ulimit -n 64): a descriptor numbered within
 * FD_CLOSER_SPARE of it closes everything at once. */
#define FD_CLOSER_SPARE 16
struct fd_closer {
	int base;	/* the number of bit 0 of held */
	uint64_t held;
	int limit;	/* RLIMIT_NOFILE's soft limit, read at the first; 0 before */
};
#define FD_CLOSER_INIT ((struct fd_closer){ 0 })
#define _cleanup_fd_closer_ __attribute__((cleanup(fd_closer_flush)))
void fd_closer_add(struct fd_closer *c, int fd);
void fd_closer_flush(struct fd_closer *c);

/* One descriptor, and one byte with it, over a Unix socket; or, from
 * fd_send_none, the byte alone, which fd_recv gives as -1. */
int fd_send(int sock, int fd);
int fd_send_none(int sock);
int fd_recv(int sock, int *ret_fd);
/* Up to FD_BATCH_MAX descriptors in one message with the byte tag. The
 * receiver gets how many came (0: the byte alone) and the byte, or
 * -errno: -EPIPE at the end, -EBADMSG for more than max. */
#define FD_BATCH_MAX 16
int fd_send_n(int sock, char tag, const int *fds, size_t n);
int fd_recv_n(int sock, char *ret_tag, int *fds, size_t max);

/* Reads a directory a getdents at a time into a caller's buffer of
 * DIR_BUF bytes: no allocation per entry. */
#define DIR_BUF 8192
struct dir_iter {
	int fd;
	char *buf;
	ssize_t len, off;
#ifndef __linux__
	DIR *dir;	/* readdir's, from a copy of fd, closed at the end */
#endif
};
/* The next entry but "." and "..", NULL at the end (*ret_err 0) or on a
 * failure (*ret_err -errno). */
const dir_entry *dir_next(struct dir_iter *it, int *ret_err);
/* A directory's entry names, sorted. */
int dir_list(int fd, char ***ret);

/* A directory's entries with their types, read once and sorted: where
 * most names asked for do not exist, one getdents tells that of all of
 * them, where a stat each would ask one by one. */
struct dir_listing {
	struct dir_listed {
		char *name;
		unsigned char type;	/* d_type */
	} *v;
	size_t n;
	bool failed;	/* not read whole: it answers nothing */
};
#define DIR_ABSENT 0xff
/* rel beneath dirfd ("": dirfd itself), never through a symlink. A
 * directory that nothing reaches without one lists empty; 0, or the
 * -errno of what failed (then failed). */
int dir_listing_read(int dirfd, const char *rel, struct dir_listing *ret);
/* What lies at name: a DT_* type, DIR_ABSENT, or DT_UNKNOWN when the
 * listing failed. */
unsigned char dir_listing_type(const struct dir_listing *l, const char *name);
void dir_listing_free(struct dir_listing *l);
