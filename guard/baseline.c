/* The baseline: every entry beneath the hand-offs as it was when a run
 * began, the copies of their contents (objects), and taking it. */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guard/internal.h"
#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"

/* ---------------------------------------------------------------------
 * The baseline: every entry beneath the roots, as it was
 * ------------------------------------------------------------------ */

static int64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct fingerprint fingerprint_of(const struct stat *st)
{
	return (struct fingerprint){
		.dev = (uint64_t)st->st_dev,
		.ino = (uint64_t)st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		.ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
	};
}

bool fingerprint_eq(const struct fingerprint *a, const struct fingerprint *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
	       a->ctime_ns == b->ctime_ns;
}

bool entry_racy(const struct baseline *b, const struct entry *e)
{
	return e->fp.ctime_ns + RACY_NS >= b->taken_ns;
}

uint8_t entry_type_of(mode_t m)
{
	return S_ISREG(m) ? ENTRY_REG : S_ISDIR(m) ? ENTRY_DIR : S_ISLNK(m) ? ENTRY_LNK : ENTRY_OTHER;
}

void entry_done(struct entry *e)
{
	free(e->path);
	free(e->target);
	free(e->object);
}

void baseline_free(struct baseline *b)
{
	free(b->workspace);
	handoffs_free(&b->roots);
	for (size_t i = 0; i < b->n; i++)
		entry_done(&b->v[i]);
	free(b->v);
	*b = (struct baseline){ 0 };
}

struct entry *baseline_push(struct baseline *b)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 64;
		b->v = xreallocarray(b->v, b->cap, sizeof(*b->v));
	}
	b->v[b->n] = (struct entry){ 0 };
	return &b->v[b->n++];
}

static int entry_cmp(const void *a, const void *b)
{
	return path_cmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

void baseline_sort(struct baseline *b)
{
	/* qsort's array must not be NULL, even with no elements. */
	if (b->n)
		qsort(b->v, b->n, sizeof(*b->v), entry_cmp);
}

static ssize_t baseline_index(const struct baseline *b, const char *path)
{
	size_t lo = 0, hi = b ? b->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = path_cmp(b->v[mid].path, path);
		if (c == 0)
			return (ssize_t)mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

const struct entry *baseline_find(const struct baseline *b, const char *path)
{
	ssize_t i = baseline_index(b, path);
	return i < 0 ? NULL : &b->v[i];
}

/* The names of a directory entry's children in the baseline, in order.
 * Descendants follow their directory (path_cmp), so this is one scan. */
char **baseline_children(const struct baseline *b, const char *dir)
{
	char **out = strv_new();
	size_t n = 0, cap = 0;
	ssize_t i = baseline_index(b, dir);
	if (i < 0)
		return out;
	size_t len = strlen(dir);
	for (size_t k = (size_t)i + 1; k < b->n; k++) {
		const char *p = b->v[k].path;
		if (strncmp(p, dir, len) != 0 || p[len] != '/')
			break;
		if (strchr(p + len + 1, '/'))
			continue;
		if (n + 2 > cap) {
			cap = cap ? cap * 2 : 16;
			out = xreallocarray(out, cap, sizeof(char *));
		}
		out[n++] = xstrdup(p + len + 1);
		out[n] = NULL;
	}
	return out;
}

void report_unguarded(struct guard_report *rep, const char *rel)
{
	if (!strv_contains(rep->unguarded, rel))
		strv_add(&rep->unguarded, rel);
}

/* ---------------------------------------------------------------------
 * Objects: the copies of baseline contents, in state/objects/
 * ------------------------------------------------------------------ */

/* state/objects/, opened when first needed: a workspace without a file
 * to keep, or one that changed nothing, never needs it. */
int objdir_fd(struct objdir *od)
{
	if (od->fd >= 0)
		return od->fd;
	int fd = openat(od->dirfd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* 0700 in a private directory: no one else can put another
		 * one in its place */
		if (mkdirat(od->dirfd, "objects", 0700) < 0 && errno != EEXIST)
			return -errno;
		fd = openat(od->dirfd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	od->fd = fd;
	return fd;
}

void objdir_close(struct objdir *od)
{
	if (od->fd >= 0)
		close(od->fd);
	od->fd = -1;
}

/* Reads an object and checks it against what the manifest says: a copy
 * cut short by a crash must never be written back as the old content. */
int object_read(struct objdir *od, const struct entry *e, char **ret)
{
	if (!e->object)
		return -ENOENT;
	int objfd = objdir_fd(od);
	if (objfd < 0)
		return objfd;
	_cleanup_close_ int fd = openat(objfd, e->object, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	_cleanup_free_ char *buf = xmalloc(e->fp.size + 1);
	size_t len;
	int r = read_all(fd, buf, e->fp.size + 1, &len);
	if (r < 0)
		return r;
	if (len != e->fp.size || fnv1a(FNV_INIT, buf, len) != e->hash)
		return -EBADMSG;
	*ret = TAKE_PTR(buf);
	return 0;
}

/* Reads a regular file from its start, up to max bytes; *ret_len says
 * how much there was (max + 1 reads tell a file that grew). */
static int read_fd_from_start(int fd, size_t max, char **ret, size_t *ret_len)
{
	_cleanup_free_ char *buf = xmalloc(max + 1);
	size_t got = 0;
	while (got < max + 1) {
		ssize_t n = pread(fd, buf + got, max + 1 - got, (off_t)got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	*ret = TAKE_PTR(buf);
	*ret_len = got;
	return 0;
}

/* Whether the open file fd holds what the entry's object holds.
 * -EBADMSG when the object is damaged. */
int content_matches(int fd, struct objdir *od, const struct entry *e, bool *ret)
{
	_cleanup_free_ char *old = NULL, *cur = NULL;
	int r = object_read(od, e, &old);
	if (r < 0)
		return r == -ENOENT ? -EBADMSG : r;
	size_t len;
	r = read_fd_from_start(fd, e->fp.size, &cur, &len);
	if (r < 0)
		return r;
	*ret = len == e->fp.size && memcmp(old, cur, len) == 0;
	return 0;
}

/* ---------------------------------------------------------------------
 * Taking the baseline
 * ------------------------------------------------------------------ */

struct snapshot {
	char *failing;		/* the entry the first failure was about */
	int wfd;
	struct objdir *od;
	size_t file_cap, total_cap, total;
	struct baseline *b;
	const struct baseline *prev;	/* the last manifest, for its copies */
	struct guard_report *rep;
	unsigned long counter;
};

static int object_write(struct snapshot *s, const char *data, size_t len, const char *name)
{
	int objfd = objdir_fd(s->od);
	if (objfd < 0)
		return objfd;
	_cleanup_free_ char *tmp = xasprintf("tmp-%d-%lu", (int)getpid(), s->counter++);
	_cleanup_close_ int fd = openat(objfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r = write_all(fd, data, len);
	if (r == 0 && close(TAKE_FD(fd)) < 0)
		r = -errno;
	if (r == 0 && renameat(objfd, tmp, objfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(objfd, tmp, 0);
	return r;
}

/* The last manifest's entry for e when its copy may stand for e: the
 * same fingerprint, and the object still there at its size. */
static const struct entry *snap_reusable(struct snapshot *s, const struct entry *e)
{
	const struct entry *pe = baseline_find(s->prev, e->path);
	if (!pe || pe->type != ENTRY_REG || !(pe->flags & ENTRY_COPIED) || !fingerprint_eq(&pe->fp, &e->fp))
		return NULL;
	int objfd = objdir_fd(s->od);
	struct stat ost;
	if (objfd < 0 || fstatat(objfd, pe->object, &ost, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(ost.st_mode) ||
	    (uint64_t)ost.st_size != pe->fp.size)
		return NULL;
	return pe;
}

static void snap_reuse(struct snapshot *s, struct entry *e, const struct entry *pe)
{
	e->object = xstrdup(pe->object);
	e->hash = pe->hash;
	e->flags |= ENTRY_COPIED;
	s->total += e->fp.size;
}

static bool snap_over_cap(const struct snapshot *s, const struct entry *e)
{
	return e->fp.size > s->file_cap || s->total + e->fp.size > s->total_cap;
}

/* Records a regular file's content: the last manifest's copy when the
 * fingerprint says the file is the same one, otherwise a new copy. e
 * holds what lstat said. */
static int snap_file(struct snapshot *s, int dfd, const char *name, struct entry *e)
{
	if (snap_over_cap(s, e)) {
		report_unguarded(s->rep, e->path);
		return 0;
	}
	/* The usual case, an unchanged file, without opening it: ctime
	 * cannot be set back, so the same fingerprint is the same file. */
	const struct entry *pe = snap_reusable(s, e);
	if (pe && !entry_racy(s->prev, pe)) {
		snap_reuse(s, e, pe);
		return 0;
	}

	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return -ENOENT;
		/* unreadable, or swapped for a symlink since the stat: kept by
		 * its fingerprint alone */
		report_unguarded(s->rep, e->path);
		return 0;
	}
	for (int attempt = 0;; attempt++) {
		struct stat st;
		if (fstat(fd, &st) < 0)
			return -errno;
		if (!S_ISREG(st.st_mode)) {
			report_unguarded(s->rep, e->path);
			return 0;
		}
		e->mode = st.st_mode;
		e->fp = fingerprint_of(&st);
		if (snap_over_cap(s, e)) {
			report_unguarded(s->rep, e->path);
			return 0;
		}

		pe = snap_reusable(s, e);
		if (pe) {
			bool same = !entry_racy(s->prev, pe);
			if (!same && content_matches(fd, s->od, pe, &same) < 0)
				same = false;
			if (same) {
				snap_reuse(s, e, pe);
				return 0;
			}
		}

		_cleanup_free_ char *data = NULL;
		size_t len = 0;
		int r = read_fd_from_start(fd, e->fp.size, &data, &len);
		if (r < 0)
			return r;
		struct stat after;
		if (fstat(fd, &after) < 0)
			return -errno;
		struct fingerprint fp_after = fingerprint_of(&after);
		if (len != e->fp.size || !fingerprint_eq(&fp_after, &e->fp)) {
			/* written to while read: a copy must be of one version */
			if (attempt < 3)
				continue;
			report_unguarded(s->rep, e->path);
			return 0;
		}
		e->hash = fnv1a(FNV_INIT, data, len);
		e->object = xasprintf("%016" PRIx64 "-%" PRIx64 "-%016" PRIx64, (uint64_t)e->fp.ctime_ns, e->fp.ino, e->hash);
		r = object_write(s, data, len, e->object);
		if (r < 0)
			return r;
		e->flags |= ENTRY_COPIED;
		s->total += len;
		s->rep->n_copied++;
		return 0;
	}
}

/* A hand-off file with another name (a hard link the run made in the
 * workspace, `ln .git/config notes.txt`) can be written through that
 * name while it is read-only in the namespace jail, and while the
 * guard's snapshot stands for it on the landlock backend: git outside
 * reads it as it is written. It gets an inode of its own, the same
 * content, mode and owner, put in place by rename so that its path is
 * never missing; the other name keeps the old inode. Extended
 * attributes and ACLs are not carried over. */
static int unlink_alias(struct snapshot *s, int dfd, const char *name, const struct stat *st)
{
	_cleanup_close_ int from = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (from < 0)
		return -errno;
	struct stat fst;
	if (fstat(from, &fst) < 0)
		return -errno;
	if (fst.st_dev != st->st_dev || fst.st_ino != st->st_ino)
		/* swapped since the stat: looked at again by the caller */
		return -EAGAIN;
	_cleanup_free_ char *tmp = xasprintf(".%s.stockade-unlink-%ld-%lu", name, (long)getpid(), s->counter++);
	_cleanup_close_ int to = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (to < 0)
		return -errno;
	int r = file_copy(from, to, fst.st_size);
	/* the owner before the mode: fchown clears set-id bits */
	if (r == 0 && (fst.st_uid != geteuid() || fst.st_gid != getegid()) && fchown(to, fst.st_uid, fst.st_gid) < 0)
		r = -errno;
	if (r == 0 && fchmod(to, fst.st_mode & 07777) < 0)
		r = -errno;
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dfd, tmp, 0);
	return r;
}

static int snap_tree(struct snapshot *s, int dfd, const char *name, const char *rel, unsigned depth);

static int snap_tree_at(struct snapshot *s, int dfd, const char *name, const char *rel, unsigned depth)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
		int r = unlink_alias(s, dfd, name, &st);
		if (r == -ENOENT)
			return 0;
		if (r < 0 && r != -EAGAIN)
			return r;
		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? 0 : -errno;
		if (r == 0)
			strv_add(&s->rep->unlinked, rel);
		/* still more than one name (swapped again meanwhile): it
		 * cannot be snapshotted as the only way to write it */
		if (S_ISREG(st.st_mode) && st.st_nlink > 1)
			return -EMLINK;
	}
	size_t idx = s->b->n;
	struct entry *e = baseline_push(s->b);
	e->path = xstrdup(rel);
	e->type = entry_type_of(st.st_mode);
	e->mode = st.st_mode;
	e->fp = fingerprint_of(&st);

	int r = 0;
	switch (e->type) {
	case ENTRY_REG:
		r = snap_file(s, dfd, name, e);
		if (r == -ENOENT) {
			/* removed since the stat */
			entry_done(&s->b->v[idx]);
			s->b->n = idx;
			return 0;
		}
		return r;
	case ENTRY_LNK: {
		char buf[PATH_MAX + 1];
		ssize_t n = readlinkat(dfd, name, buf, sizeof(buf) - 1);
		if (n < 0) {
			r = -errno;
			entry_done(&s->b->v[idx]);
			s->b->n = idx;
			/* EINVAL: no longer a symlink. Left out of the baseline,
			 * whatever is there at the end is quarantined as new. */
			return r == -ENOENT || r == -EINVAL ? 0 : r;
		}
		buf[n] = '\0';
		e->target = xstrndup(buf, (size_t)n);
		return 0;
	}
	case ENTRY_DIR:
		break;
	default:
		return 0;
	}

	_cleanup_close_ int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0 || depth >= WALK_DEPTH_MAX) {
		e->flags |= ENTRY_UNLISTED;
		report_unguarded(s->rep, rel);
		return 0;
	}
	_cleanup_strv_ char **names = NULL;
	r = dir_list(cfd, &names);
	if (r < 0) {
		s->b->v[idx].flags |= ENTRY_UNLISTED;
		report_unguarded(s->rep, rel);
		return 0;
	}
	for (size_t i = 0; names[i]; i++) {
		_cleanup_free_ char *crel = path_join(rel, names[i]);
		r = snap_tree(s, cfd, names[i], crel, depth + 1);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The first failure names the deepest entry it was about. */
static int snap_tree(struct snapshot *s, int dfd, const char *name, const char *rel, unsigned depth)
{
	int r = snap_tree_at(s, dfd, name, rel, depth);
	if (r < 0 && !s->failing)
		s->failing = xstrdup(rel);
	return r;
}

int baseline_take(const struct guard_options *o, int wfd, const struct handoff_repos *repos, struct objdir *od,
		  const struct baseline *prev,
		  struct baseline *ret, struct guard_report *rep, char **ret_failing)
{
	struct baseline b = { .workspace = xstrdup(o->workspace), .taken_ns = realtime_ns() };
	struct snapshot s = {
		.wfd = wfd,
		.od = od,
		.file_cap = o->file_cap ? o->file_cap : FILE_CAP_DEFAULT,
		.total_cap = o->total_cap ? o->total_cap : TOTAL_CAP_DEFAULT,
		.b = &b,
		.prev = prev,
		.rep = rep,
	};
	struct handoff_scan scan = guard_scan(o, repos);
	struct parent_cache parents = PARENT_CACHE_INIT(wfd);
	int r = o->knows->discover(&scan, wfd, &parents, &b.roots);
	for (size_t i = 0; r == 0 && b.roots.unguarded && b.roots.unguarded[i]; i++)
		report_unguarded(rep, b.roots.unguarded[i]);
	for (size_t i = 0; r == 0 && i < b.roots.n; i++) {
		const struct handoff *rt = &b.roots.v[i];
		const char *name;
		/* a name at the top costs one fstatat, in snap_tree */
		int pfd = parent_cache_open(&parents, rt->path, &name);
		if (pfd < 0) {
			if (!errno_is_absent(pfd)) {
				r = pfd;
				s.failing = xstrdup(rt->path);
			}
			continue;
		}
		r = snap_tree(&s, pfd, name, rt->path, 0);
	}
	if (r == 0) {
		baseline_sort(&b);
		*ret = b;
		b = (struct baseline){ 0 };
	}
	*ret_failing = s.failing;
	parent_cache_done(&parents);
	baseline_free(&b);
	return r;
}

size_t baseline_files(const struct baseline *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].type == ENTRY_REG)
			n++;
	return n;
}

