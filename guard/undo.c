/* Undoing: the workspace brought back to the baseline, what it held
 * instead moved to the quarantine. */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>

#include "guard/internal.h"
#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"
#include "lib/fs.h"

/* ---------------------------------------------------------------------
 * Quarantine: state_dir/quarantine/<YYYYmmdd-HHMMSS>-<pid>/<path>
 * ------------------------------------------------------------------ */

struct quarantine {
	const char *state_dir;
	char *dir;	/* absolute, once made */
	int fd;
};

static int quarantine_open(struct quarantine *q)
{
	if (q->fd >= 0)
		return 0;
	_cleanup_free_ char *top = path_join(q->state_dir, "quarantine");
	int r = mkdir_private(top, geteuid());
	if (r < 0)
		return r;
	_cleanup_close_ int topfd = open(top, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (topfd < 0)
		return -errno;
	time_t now = time(NULL);
	struct tm tm;
	char stamp[32];
	if (!localtime_r(&now, &tm) || strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm) == 0)
		return -EINVAL;
	/* one folder per guard operation: two in the same second (a crash
	 * undone, then this run's end) stay apart */
	for (int i = 0;; i++) {
		_cleanup_free_ char *name = i ? xasprintf("%s-%d-%d", stamp, (int)getpid(), i)
					      : xasprintf("%s-%d", stamp, (int)getpid());
		if (mkdirat(topfd, name, 0700) == 0) {
			q->fd = openat(topfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (q->fd < 0)
				return -errno;
			q->dir = path_join(top, name);
			return 0;
		}
		if (errno != EEXIST || i >= 1000)
			return -errno;
	}
}

/* Where rel goes in the quarantine: its parents made (0700), and a name
 * not taken yet. */
static int quarantine_place(struct quarantine *q, const char *rel, int *ret_dfd, char **ret_name, char **ret_abs)
{
	int r = quarantine_open(q);
	if (r < 0)
		return r;
	_cleanup_close_ int cur = openat(q->fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	const char *base;
	_cleanup_free_ char *parent = path_parent(rel, &base);
	_cleanup_free_ char *qparent = xstrdup("");
	for (const char *p = parent; *p;) {
		const char *end = strchrnul(p, '/');
		_cleanup_free_ char *comp = xstrndup(p, (size_t)(end - p));
		if (mkdirat(cur, comp, 0700) < 0 && errno != EEXIST)
			return -errno;
		int next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			/* a file quarantined earlier under this name: keep
			 * the rest flat, beside it */
			break;
		}
		close(cur);
		cur = next;
		char *j = path_join(qparent, comp);
		free(qparent);
		qparent = j;
		p = *end ? end + 1 : end;
	}
	_cleanup_free_ char *flat = NULL;
	if (!streq(qparent, parent)) {
		flat = xstrdup(path_below(rel, qparent));
		for (char *c = flat; *c; c++)
			if (*c == '/')
				*c = '%';
		base = flat;
	}
	for (int i = 0;; i++) {
		_cleanup_free_ char *name = i ? xasprintf("%s.%d", base, i) : xstrdup(base);
		struct stat st;
		if (fstatat(cur, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
			_cleanup_free_ char *qrel = path_join(qparent, name);
			*ret_abs = path_join(q->dir, qrel);
			*ret_name = TAKE_PTR(name);
			*ret_dfd = TAKE_FD(cur);
			return 0;
		}
		if (i >= 1000)
			return -EEXIST;
	}
}

static int copy_fd(int in, int out)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return 0;
		int r = write_all(out, buf, (size_t)n);
		if (r < 0)
			return r;
	}
}

/* Copies what lies at sfd/sname to dfd/dname, never following a
 * symlink: for a quarantine on another filesystem. */
static int copy_tree(int sfd, const char *sname, int dfd, const char *dname, unsigned depth)
{
	struct stat st;
	if (fstatat(sfd, sname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISREG(st.st_mode)) {
		_cleanup_close_ int in = openat(sfd, sname, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (in < 0)
			return -errno;
		_cleanup_close_ int out = openat(dfd, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out < 0)
			return -errno;
		int r = copy_fd(in, out);
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
			r = copy_tree(in, names[i], out, names[i], depth + 1);
		return r;
	}
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))
		return mknodat(dfd, dname, st.st_mode & (S_IFMT | 0600), 0) < 0 ? -errno : 0;
	/* a device node cannot be made without privilege, and holds no data */
	return 0;
}

/* Removes what lies at dfd/name without following a symlink. */
static int remove_tree(int dfd, const char *name, unsigned depth)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	if (depth >= WALK_DEPTH_MAX)
		return -ELOOP;
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* a directory the command left read-only */
	(void)fchmod(fd, 0700);
	_cleanup_strv_ char **names = NULL;
	int r = dir_list(fd, &names);
	for (size_t i = 0; r == 0 && names[i]; i++)
		r = remove_tree(fd, names[i], depth + 1);
	if (r == 0 && unlinkat(dfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

/* Moves what lies at dfd/name (workspace path rel) into the quarantine.
 * *ret_abs is where it went. */
static int quarantine_move(struct quarantine *q, int dfd, const char *name, const char *rel, char **ret_abs)
{
	int qfd = -1;
	_cleanup_free_ char *qname = NULL, *abs = NULL;
	int r = quarantine_place(q, rel, &qfd, &qname, &abs);
	if (r < 0)
		return r;
	_cleanup_close_ int qdir = qfd;
	if (renameat2(dfd, name, qdir, qname, RENAME_NOREPLACE) < 0) {
		if (errno == EINVAL && renameat(dfd, name, qdir, qname) == 0)
			goto moved;
		if (errno != EXDEV)
			return -errno;
		/* another filesystem: copy, then remove; a failed copy leaves
		 * the original where it is */
		r = copy_tree(dfd, name, qdir, qname, 0);
		if (r < 0) {
			(void)remove_tree(qdir, qname, 0);
			return r;
		}
		r = remove_tree(dfd, name, 0);
		if (r < 0)
			return r;
	}
moved:
	*ret_abs = TAKE_PTR(abs);
	return 0;
}

/* ---------------------------------------------------------------------
 * Undoing: the workspace brought back to the baseline
 * ------------------------------------------------------------------ */

struct undo {
	int wfd;
	struct objdir *od;
	const struct baseline *b;
	struct quarantine q;
	struct guard_report *rep;
	int error;		/* the first failure; the rest is still tried */
	char *error_path;	/* the hand-off it was about */
	unsigned long counter;
};

/* The first failure, and the hand-off it was about; the rest is still
 * tried. */
static void undo_fail(struct undo *u, int r, const char *rel)
{
	if (r < 0 && u->error == 0) {
		u->error = r;
		u->error_path = xstrdup(str_empty(rel) ? "." : rel);
	}
}

static void report_change(struct guard_report *rep, enum guard_change_kind kind, const char *rel, char *quarantined)
{
	rep->changes = xgrow(rep->changes, rep->n_changes, sizeof(*rep->changes));
	rep->changes[rep->n_changes++] = (struct guard_change){
		.kind = kind,
		.path = xstrdup(rel),
		.quarantined = quarantined,
	};
}

/* The old content in a new file beside the one it replaces, so that
 * renameat() puts it in place at once. */
static int write_restore_tmp(struct undo *u, int dfd, const struct entry *b, char **ret_tmp)
{
	_cleanup_free_ char *data = NULL;
	int r = object_read(u->od, b, &data);
	if (r < 0)
		return r == -ENOENT ? -EBADMSG : r;
	_cleanup_free_ char *tmp = xasprintf(".stockade-restore-%d-%lu", (int)getpid(), u->counter++);
	_cleanup_close_ int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = write_all(fd, data, b->fp.size);
	if (r == 0 && fchmod(fd, b->mode & 07777) < 0)
		r = -errno;
	if (r == 0 && close(TAKE_FD(fd)) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dfd, tmp, 0);
		return r;
	}
	*ret_tmp = TAKE_PTR(tmp);
	return 0;
}

/* Recreates a baseline entry (and what it held) where nothing is now.
 * *unrestorable is set for content the baseline does not hold. */
static int restore_entry(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b,
			 bool *unrestorable, unsigned depth)
{
	switch (b->type) {
	case ENTRY_REG: {
		_cleanup_free_ char *tmp = NULL;
		int r = (b->flags & ENTRY_COPIED) ? write_restore_tmp(u, dfd, b, &tmp) : -EBADMSG;
		if (r == -EBADMSG) {
			*unrestorable = true;
			return 0;
		}
		if (r < 0)
			return r;
		if (renameat(dfd, tmp, dfd, name) < 0) {
			r = -errno;
			unlinkat(dfd, tmp, 0);
		}
		return r;
	}
	case ENTRY_LNK:
		return symlinkat(b->target, dfd, name) < 0 ? -errno : 0;
	case ENTRY_OTHER:
		if ((S_ISFIFO(b->mode) || S_ISSOCK(b->mode)) && mknodat(dfd, name, b->mode & (S_IFMT | 07777), 0) == 0)
			return 0;
		*unrestorable = true;
		return 0;
	default:
		break;
	}
	if (depth >= WALK_DEPTH_MAX)
		return -ELOOP;
	if (mkdirat(dfd, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int first = 0;
	_cleanup_strv_ char **names = baseline_children(u->b, rel);
	for (size_t i = 0; names[i]; i++) {
		_cleanup_free_ char *crel = path_join(rel, names[i]);
		int r = restore_entry(u, fd, names[i], crel, baseline_find(u->b, crel), unrestorable, depth + 1);
		if (r < 0 && first == 0)
			first = r;
	}
	/* last: the old mode may forbid writing into it */
	if (fchmod(fd, b->mode & 07777) < 0 && first == 0)
		first = -errno;
	return first;
}

/* What is there now moves to the quarantine, the baseline's comes back. */
static void replace_entry(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b, unsigned depth)
{
	char *q = NULL;
	int r = quarantine_move(&u->q, dfd, name, rel, &q);
	if (r < 0) {
		undo_fail(u, r, rel);
		return;
	}
	bool unrestorable = false;
	r = b ? restore_entry(u, dfd, name, rel, b, &unrestorable, depth) : 0;
	undo_fail(u, r, rel);
	report_change(u->rep, !b ? GUARD_CREATED : unrestorable ? GUARD_UNRESTORABLE : GUARD_CHANGED, rel, q);
}

static void undo_entry(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b,
		       bool gitdir_top, unsigned depth);

static void undo_children(struct undo *u, int fd, const char *rel, bool gitdir_top, unsigned depth)
{
	_cleanup_strv_ char **names = NULL;
	if (gitdir_top) {
		names = handoff_gitdir_names();
	} else {
		_cleanup_strv_ char **now = NULL;
		int r = dir_list(fd, &now);
		if (r < 0) {
			undo_fail(u, r, rel);
			return;
		}
		_cleanup_strv_ char **then = baseline_children(u->b, rel);
		/* both sorted: merge, each name once */
		size_t a = 0, c = 0, n = 0, na = strv_length(now), nc = strv_length(then);
		names = xcalloc(na + nc + 1, sizeof(char *));
		while (a < na || c < nc) {
			int cmp = a >= na ? 1 : c >= nc ? -1 : strcmp(now[a], then[c]);
			if (cmp <= 0) {
				names[n++] = xstrdup(now[a++]);
				if (cmp == 0)
					c++;
			} else {
				names[n++] = xstrdup(then[c++]);
			}
		}
	}
	for (size_t i = 0; names[i]; i++) {
		_cleanup_free_ char *crel = path_join(rel, names[i]);
		undo_entry(u, fd, names[i], crel, baseline_find(u->b, crel), false, depth + 1);
	}
}

static void undo_file(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b,
		      const struct stat *st)
{
	struct fingerprint fp = fingerprint_of(st);
	bool same_fp = fingerprint_eq(&fp, &b->fp);
	if (same_fp && !entry_racy(u->b, b))
		return;
	if (!(b->flags & ENTRY_COPIED)) {
		/* over the cap: only the fingerprint tells */
		if (!same_fp)
			replace_entry(u, dfd, name, rel, b, 0);
		return;
	}
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		undo_fail(u, -errno, rel);
		return;
	}
	bool same = false;
	int r = content_matches(fd, u->od, b, &same);
	if (r == -EBADMSG) {
		/* our copy is damaged: the old content is gone */
		if (!same_fp)
			replace_entry(u, dfd, name, rel, b, 0);
		return;
	}
	if (r < 0) {
		undo_fail(u, r, rel);
		return;
	}
	bool same_inode = fp.dev == b->fp.dev && fp.ino == b->fp.ino;
	if (same && (same_inode || (st->st_mode & 07777) == (b->mode & 07777))) {
		/* `chmod +x` turns a sample into a hook. Only on the file the
		 * baseline saw: another inode may be a hard link to a file
		 * elsewhere, and is replaced instead. */
		if ((st->st_mode & 07777) != (b->mode & 07777)) {
			if (fchmod(fd, b->mode & 07777) < 0)
				undo_fail(u, -errno, rel);
			else
				report_change(u->rep, GUARD_CHANGED, rel, NULL);
		}
		return;
	}
	_cleanup_free_ char *tmp = NULL;
	r = write_restore_tmp(u, dfd, b, &tmp);
	if (r < 0) {
		undo_fail(u, r, rel);
		return;
	}
	char *q = NULL;
	r = quarantine_move(&u->q, dfd, name, rel, &q);
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dfd, tmp, 0);
		undo_fail(u, r, rel);
		if (!q)
			return;
	}
	report_change(u->rep, GUARD_CHANGED, rel, q);
}

static void undo_entry(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b,
		       bool gitdir_top, unsigned depth)
{
	struct stat st;
	bool have = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!have && errno != ENOENT) {
		undo_fail(u, -errno, rel);
		return;
	}
	if (!b && !have)
		return;
	if (b && (b->flags & ENTRY_GITDIR))
		gitdir_top = true;
	if (depth >= WALK_DEPTH_MAX) {
		undo_fail(u, -ELOOP, rel);
		return;
	}

	if (!b) {
		/* a new repository: its objects stay, its hooks and config go */
		if (gitdir_top && S_ISDIR(st.st_mode)) {
			_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				undo_fail(u, -errno, rel);
			else
				undo_children(u, fd, rel, true, depth);
			return;
		}
		replace_entry(u, dfd, name, rel, NULL, depth);
		return;
	}
	if (!have) {
		bool unrestorable = false;
		int r = restore_entry(u, dfd, name, rel, b, &unrestorable, depth);
		undo_fail(u, r, rel);
		if (r == 0)
			report_change(u->rep, unrestorable ? GUARD_UNRESTORABLE : GUARD_REMOVED, rel, NULL);
		return;
	}
	if (entry_type_of(st.st_mode) != b->type) {
		replace_entry(u, dfd, name, rel, b, depth);
		return;
	}

	switch (b->type) {
	case ENTRY_REG:
		undo_file(u, dfd, name, rel, b, &st);
		return;
	case ENTRY_LNK: {
		char buf[PATH_MAX + 1];
		ssize_t n = readlinkat(dfd, name, buf, sizeof(buf) - 1);
		if (n < 0) {
			undo_fail(u, -errno, rel);
			return;
		}
		if ((size_t)n != strlen(b->target) || memcmp(buf, b->target, (size_t)n) != 0)
			replace_entry(u, dfd, name, rel, b, depth);
		return;
	}
	case ENTRY_OTHER:
		if ((uint64_t)st.st_dev != b->fp.dev || (uint64_t)st.st_ino != b->fp.ino || st.st_mode != b->mode)
			replace_entry(u, dfd, name, rel, b, depth);
		return;
	default:
		break;
	}

	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		undo_fail(u, -errno, rel);
		return;
	}
	bool mode_changed = (st.st_mode & 07777) != (b->mode & 07777);
	if (mode_changed && (st.st_mode & 0700) != 0700 && fchmod(fd, (st.st_mode & 07777) | 0700) < 0)
		undo_fail(u, -errno, rel);
	if (!(b->flags & ENTRY_UNLISTED))
		undo_children(u, fd, rel, gitdir_top, depth);
	if (mode_changed) {
		if (fchmod(fd, b->mode & 07777) < 0)
			undo_fail(u, -errno, rel);
		else
			report_change(u->rep, GUARD_CHANGED, rel, NULL);
	}
}

/* The directory that holds rel, made again where the command removed it
 * or put something else (a symlink) in its way; what was in the way is
 * quarantined. */
static int make_parents(struct undo *u, const char *rel)
{
	const char *base;
	_cleanup_free_ char *parent = path_parent(rel, &base);
	_cleanup_close_ int cur = openat(u->wfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	for (const char *p = parent; *p;) {
		const char *end = strchrnul(p, '/');
		_cleanup_free_ char *comp = xstrndup(p, (size_t)(end - p));
		_cleanup_free_ char *sofar = xstrndup(parent, (size_t)(end - parent));
		int next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			if (errno == ENOTDIR) {
				char *q = NULL;
				int r = quarantine_move(&u->q, cur, comp, sofar, &q);
				if (r < 0)
					return r;
				report_change(u->rep, GUARD_CHANGED, sofar, q);
			} else if (errno != ENOENT) {
				return -errno;
			}
			const struct entry *b = baseline_find(u->b, sofar);
			if (mkdirat(cur, comp, b && b->type == ENTRY_DIR ? b->mode & 07777 : 0777) < 0 && errno != EEXIST)
				return -errno;
			next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (next < 0)
				return -errno;
		}
		close(cur);
		cur = next;
		p = *end ? end + 1 : end;
	}
	return TAKE_FD(cur);
}

/* The directory holding rel: for a name at the top, the workspace's own
 * descriptor (nothing to resolve, *ret_owned is -1); otherwise one opened
 * beneath it, also put in *ret_owned for the caller to close. */
static int parent_fd(int wfd, const char *rel, const char **ret_name, int *ret_owned)
{
	*ret_owned = -1;
	if (!strchr(rel, '/')) {
		*ret_name = rel;
		return wfd;
	}
	int fd = open_parent_beneath(wfd, rel, ret_name);
	if (fd >= 0)
		*ret_owned = fd;
	return fd;
}

static void undo_root(struct undo *u, const struct handoff *rt)
{
	const struct entry *b = baseline_find(u->b, rt->path);
	const char *name;
	_cleanup_close_ int owned = -1;
	int pfd = parent_fd(u->wfd, rt->path, &name, &owned);
	if (pfd < 0) {
		if (!errno_is_absent(pfd)) {
			undo_fail(u, pfd, rt->path);
			return;
		}
		/* nothing was there, and nothing can be reached there now */
		if (!b)
			return;
		owned = make_parents(u, rt->path);
		if (owned < 0) {
			undo_fail(u, owned, rt->path);
			return;
		}
		pfd = owned;
	}
	undo_entry(u, pfd, name, rt->path, b, rt->kind == HANDOFF_GITDIR, 0);
}

static bool file_in_baseline(void *data, const char *rel)
{
	const struct entry *e = baseline_find(data, rel);
	return e && e->type == ENTRY_REG;
}

/* Every root of the baseline first; then, on the workspace as restored,
 * the roots that are new (a repository made during the run), whose
 * whole content is new. */
int undo_all(const struct guard_options *o, int wfd, struct objdir *od, const struct baseline *b,
	     struct guard_report *rep, char **ret_failing)
{
	struct undo u = {
		.wfd = wfd,
		.od = od,
		.b = b,
		.q = { .state_dir = o->state_dir, .fd = -1 },
		.rep = rep,
	};
	for (size_t i = 0; i < b->roots.n; i++)
		undo_root(&u, &b->roots.v[i]);

	struct handoff_scan scan = guard_scan(o);
	scan.known = file_in_baseline;
	scan.known_data = (void *)b;
	struct parent_cache parents = PARENT_CACHE_INIT(wfd);
	struct handoffs found = { 0 };
	int r = handoffs_discover(&scan, wfd, &parents, &found);
	parent_cache_done(&parents);
	if (r < 0) {
		undo_fail(&u, r, NULL);
	} else {
		struct handoffs all = { 0 };
		for (size_t i = 0; i < b->roots.n; i++)
			handoffs_add(&all, xstrdup(b->roots.v[i].path), b->roots.v[i].kind);
		for (size_t i = 0; i < found.n; i++)
			handoffs_add(&all, xstrdup(found.v[i].path), found.v[i].kind);
		handoffs_normalize(&all);
		for (size_t i = 0; i < all.n; i++) {
			const struct handoff *old = handoffs_find(&b->roots, all.v[i].path);
			if (old && old->kind == all.v[i].kind)
				continue;
			undo_root(&u, &all.v[i]);
		}
		handoffs_free(&all);
		for (size_t i = 0; found.unguarded && found.unguarded[i]; i++)
			report_unguarded(rep, found.unguarded[i]);
	}
	handoffs_free(&found);
	if (u.q.fd >= 0)
		close(u.q.fd);
	free(u.q.dir);
	*ret_failing = u.error_path;
	return u.error;
}

