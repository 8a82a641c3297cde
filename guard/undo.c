/* Undoing: the workspace brought back to the baseline, what it held
 * instead set aside. Never failing open: what cannot go to the quarantine
 * is renamed beside itself to a name nothing reads, what cannot be put
 * back has its old content kept in the quarantine, and only what is left
 * in effect fails the undo (the next run tries again, and until then
 * refuses to start). */
#include <fcntl.h>
#include <limits.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>

#include "guard/internal.h"
#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"

/* A config larger than this is not vetted: it is set aside whole. */
#define CONFIG_VET_MAX ((size_t)4 << 20)

struct aside {
	char *where;	/* absolute */
	char *id;
	bool beside;
};

struct undo {
	const struct guard_options *o;
	int wfd;
	struct objdir *od;
	const struct baseline *b;
	struct quarantine q;
	struct guard_report *rep;
	unsigned flags;		/* UNDO_* */
	int error;		/* the first failure that leaves a change in effect */
	char *error_path;	/* the hand-off it was about */
	unsigned long counter;
};

static void undo_fail(struct undo *u, int r, const char *rel)
{
	if (r < 0 && u->error == 0) {
		u->error = r;
		u->error_path = xstrdup(str_empty(rel) ? "." : rel);
	}
}

/* A change, by its index: the array grows while a change is worked on. */
static size_t report_change(struct guard_report *rep, enum guard_change_kind kind, const char *rel)
{
	rep->changes = xgrow(rep->changes, rep->n_changes, sizeof(*rep->changes));
	rep->changes[rep->n_changes] = (struct guard_change){ .kind = kind, .path = xstrdup(rel) };
	return rep->n_changes++;
}

#define NO_CHANGE ((size_t)-1)

static void change_aside(struct guard_report *rep, size_t ci, struct aside *a)
{
	struct guard_change *c = &rep->changes[ci];
	c->quarantined = TAKE_PTR(a->where);
	c->id = TAKE_PTR(a->id);
	c->beside = a->beside;
}

/* ---------------------------------------------------------------------
 * Setting aside
 * ------------------------------------------------------------------ */

static void aside_done(struct aside *a)
{
	free(a->where);
	free(a->id);
	*a = (struct aside){ 0 };
}

/* Renamed beside itself: `pre-commit` to `pre-commit.stockade-<id>`.
 * No tool the table names reads a name of that form (git runs a hook by
 * its exact name; `mise.toml.stockade-...` does not end in .toml). */
static int set_aside_beside(struct undo *u, int dfd, const char *name, const char *rel, const char *id,
			    struct aside *ret)
{
	_cleanup_free_ char *inert = xstrcat3(name, ".stockade-", id);
	int r = rename_noreplace(dfd, name, dfd, inert);
	if (r < 0)
		return r;
	const char *base;
	_cleanup_free_ char *parent = path_parent(rel, &base);
	_cleanup_free_ char *inert_rel = parent && *parent ? path_join(parent, inert) : xstrdup(inert);
	ret->where = path_join(u->o->workspace, inert_rel);
	ret->beside = true;
	return 0;
}

/* Moves what lies at dfd/name (workspace path rel) out of effect: into
 * the quarantine by rename (no space needed), or by a bounded copy where
 * the quarantine is on another filesystem, or else beside itself. Its
 * record says why. */
static int set_aside(struct undo *u, int dfd, const char *name, const char *rel, const char *why, const char *detail,
		     struct aside *ret)
{
	*ret = (struct aside){ 0 };
	struct qitem it;
	int r = quarantine_item_new(&u->q, rel, &it);
	if (r == 0) {
		r = rename_noreplace(dfd, name, it.dirfd, it.name);
		if (r == -EXDEV) {
			/* another filesystem: a copy, bounded, without holes;
			 * one that fails leaves the original where it is */
			size_t cap = u->o->total_cap ? u->o->total_cap : TOTAL_CAP_DEFAULT;
			r = tree_copy(dfd, name, it.dirfd, it.name, cap);
			if (r == 0)
				r = tree_remove(dfd, name);
			else
				(void)tree_remove(it.dirfd, it.name);
		}
		if (r == 0) {
			ret->where = TAKE_PTR(it.abs);
			ret->id = TAKE_PTR(it.id);
		}
	}
	if (r < 0) {
		_cleanup_free_ char *fallback_id = it.id ? xstrdup(it.id) : xasprintf("%d-%lu", (int)getpid(), u->counter++);
		r = set_aside_beside(u, dfd, name, rel, fallback_id, ret);
		if (r == 0) {
			ret->id = TAKE_PTR(fallback_id);
			u->rep->cleanup_failed = true;
		}
	}
	qitem_done(&it);
	if (r < 0)
		return r;
	(void)quarantine_item_record(&u->q, ret->id,
				     &(struct qrecord){ .path = rel, .why = why, .stored = ret->where, .detail = detail });
	return 0;
}

/* What a run left at a path, set aside as a copy of data (read under
 * git's lock, below) while the file itself stays until the vetted text
 * is renamed over it: the path is never missing in between. */
static int set_aside_copy(struct undo *u, const char *rel, const char *data, size_t len, const char *why,
			  const char *detail, struct aside *ret)
{
	*ret = (struct aside){ 0 };
	struct qitem it;
	int r = quarantine_item_new(&u->q, rel, &it);
	if (r < 0)
		return r;
	int fd = openat(it.dirfd, it.name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	r = fd < 0 ? -errno : write_all(fd, data, len);
	if (fd >= 0 && close(fd) < 0 && r == 0)
		r = -errno;
	if (r < 0) {
		if (fd >= 0)
			unlinkat(it.dirfd, it.name, 0);
		qitem_done(&it);
		return r;
	}
	ret->where = TAKE_PTR(it.abs);
	ret->id = TAKE_PTR(it.id);
	qitem_done(&it);
	(void)quarantine_item_record(&u->q, ret->id,
				     &(struct qrecord){ .path = rel, .why = why, .stored = ret->where, .detail = detail });
	return 0;
}

/* git's own lock on a config, taken as git takes it (NAME.lock, made
 * O_EXCL): neither the guard nor a git still going in another run (or the
 * user's, outside) then writes over the other's config. Waits up to 2 s
 * for a lock somebody holds; -EEXIST after that. */
#define CONFIG_LOCK_WAIT_MS 2000

static int config_lock(int dfd, const char *name, int wait_ms, int *ret_fd, char **ret_lock)
{
	_cleanup_free_ char *lock = xstrcat3(name, ".lock", "");
	for (int waited = 0;; waited += 10) {
		int fd = openat(dfd, lock, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			*ret_fd = fd;
			*ret_lock = TAKE_PTR(lock);
			return 0;
		}
		if (errno != EEXIST || waited >= wait_ms)
			return -errno;
		struct timespec ts = { 0, 10 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

/* The old content of a file that could not be put back, kept in the
 * quarantine: a link to the baseline's copy, which needs no space. */
static void keep_old_content(struct undo *u, const struct entry *b, size_t ci)
{
	u->rep->cleanup_failed = true;
	if (ci == NO_CHANGE)
		ci = report_change(u->rep, GUARD_REMOVED, b->path);
	u->rep->changes[ci].unrestored = true;
	struct qitem it;
	int objfd = objdir_fd(u->od);
	if (objfd < 0 || !b->object || quarantine_item_new(&u->q, b->path, &it) < 0) {
		undo_fail(u, objfd < 0 ? objfd : -ENOENT, b->path);
		return;
	}
	if (linkat(objfd, b->object, it.dirfd, it.name, 0) < 0) {
		undo_fail(u, -errno, b->path);
	} else {
		if (fchmodat(it.dirfd, it.name, b->mode & 0777, 0) < 0) {
			/* the content is what matters; its mode is in the baseline */
		}
		(void)quarantine_item_record(&u->q, it.id,
					     &(struct qrecord){ .path = b->path, .why = "old content", .stored = it.abs });
		u->rep->changes[ci].old_id = TAKE_PTR(it.id);
	}
	qitem_done(&it);
}

/* ---------------------------------------------------------------------
 * Putting back
 * ------------------------------------------------------------------ */

/* content in a new file beside the one it replaces, so that renameat()
 * puts it in place at once */
static int write_tmp(struct undo *u, int dfd, const char *data, size_t len, mode_t mode, char **ret_tmp)
{
	_cleanup_free_ char *tmp = xasprintf(".stockade-restore-%d-%lu", (int)getpid(), u->counter++);
	_cleanup_close_ int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		/* a directory the command made read-only: its mode comes
		 * back as the baseline has it once the entry is in place */
		struct stat st;
		if (fstat(dfd, &st) == 0 && st.st_uid == geteuid() && fchmod(dfd, (st.st_mode & 07777) | 0700) == 0)
			fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	}
	if (fd < 0)
		return -errno;
	int r = write_all(fd, data, len);
	if (r == 0 && fchmod(fd, mode & 07777) < 0)
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

static int write_restore_tmp(struct undo *u, int dfd, const struct entry *b, char **ret_tmp)
{
	_cleanup_free_ char *data = NULL;
	int r = object_read(u->od, b, &data);
	if (r < 0)
		return r == -ENOENT ? -EBADMSG : r;
	return write_tmp(u, dfd, data, b->fp.size, b->mode, ret_tmp);
}

static int put_in_place(int dfd, const char *tmp, const char *name)
{
	if (renameat(dfd, tmp, dfd, name) == 0)
		return 0;
	int r = -errno;
	unlinkat(dfd, tmp, 0);
	return r;
}

/* Content the baseline does not hold (over the size cap, unreadable, not
 * a file it copies) cannot come back: the cleanup failed, which the run's
 * exit status says (122), not only its report. */
static void old_content_gone(struct undo *u, bool *unrestorable)
{
	*unrestorable = true;
	u->rep->cleanup_failed = true;
}

/* Recreates a baseline entry (and what it held) where nothing is now.
 * *unrestorable is set for content the baseline does not hold; a file
 * that cannot be written back has its old content kept (c). */
static int restore_entry(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b,
			 bool *unrestorable, size_t ci, unsigned depth)
{
	switch (b->type) {
	case ENTRY_REG: {
		if (!(b->flags & ENTRY_COPIED)) {
			old_content_gone(u, unrestorable);
			return 0;
		}
		_cleanup_free_ char *tmp = NULL;
		int r = write_restore_tmp(u, dfd, b, &tmp);
		if (r == -EBADMSG) {
			old_content_gone(u, unrestorable);
			return 0;
		}
		if (r == 0)
			r = tmp ? put_in_place(dfd, tmp, name) : -EIO;
		if (r < 0) {
			/* no space, most likely: the old content waits in the
			 * quarantine, nothing of the run's is in effect */
			keep_old_content(u, b, ci);
			return 0;
		}
		return r;
	}
	case ENTRY_LNK:
		return symlinkat(b->target, dfd, name) < 0 ? -errno : 0;
	case ENTRY_OTHER:
		if ((S_ISFIFO(b->mode) || S_ISSOCK(b->mode)) && mknodat(dfd, name, b->mode & (S_IFMT | 07777), 0) == 0)
			return 0;
		old_content_gone(u, unrestorable);
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
		/* a file whose content cannot come back is named on its own */
		int r = restore_entry(u, fd, names[i], crel, baseline_find(u->b, crel), unrestorable, NO_CHANGE,
				      depth + 1);
		if (r < 0 && first == 0)
			first = r;
	}
	/* last: the old mode may forbid writing into it */
	if (fchmod(fd, b->mode & 07777) < 0 && first == 0)
		first = -errno;
	return first;
}

/* What is there now goes aside, the baseline's comes back. */
static void replace_entry(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b,
			  unsigned depth)
{
	enum guard_change_kind kind = b ? GUARD_CHANGED : GUARD_CREATED;
	struct aside a;
	int r = set_aside(u, dfd, name, rel, guard_change_kind_name(kind), NULL, &a);
	if (r < 0 && r != -ENOENT) {
		undo_fail(u, r, rel);
		return;
	}
	size_t ci = report_change(u->rep, r == -ENOENT && b ? GUARD_REMOVED : kind, rel);
	change_aside(u->rep, ci, &a);
	aside_done(&a);
	bool unrestorable = false;
	r = b ? restore_entry(u, dfd, name, rel, b, &unrestorable, ci, depth) : 0;
	undo_fail(u, r, rel);
	if (unrestorable)
		u->rep->changes[ci].kind = GUARD_UNRESTORABLE;
}

/* ---------------------------------------------------------------------
 * Trees
 * ------------------------------------------------------------------ */

static void undo_entry(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b,
		       bool hooks, unsigned depth);

/* hooks: this directory is a hooks directory, whose samples are free. */
static void undo_children(struct undo *u, int fd, const char *rel, bool hooks, unsigned depth)
{
	_cleanup_strv_ char **now = NULL;
	int r = dir_list(fd, &now);
	if (r < 0) {
		undo_fail(u, r, rel);
		return;
	}
	_cleanup_strv_ char **then = baseline_children(u->b, rel);
	/* both sorted: merge, each name once */
	size_t a = 0, c = 0, na = strv_length(now), nc = strv_length(then);
	while (a < na || c < nc) {
		int cmp = a >= na ? 1 : c >= nc ? -1 : strcmp(now[a], then[c]);
		const char *name = cmp <= 0 ? now[a] : then[c];
		if (cmp <= 0)
			a++;
		if (cmp >= 0)
			c++;
		if (hooks && !handoff_hook_runs(name))
			continue;
		_cleanup_free_ char *crel = path_join(rel, name);
		undo_entry(u, fd, name, crel, baseline_find(u->b, crel), false, depth + 1);
	}
}

static void undo_file(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b,
		      const struct stat *st)
{
	/* A hard link the run made to it (the baseline gave it one name:
	 * baseline.c's unlink_alias) is a name it can write it by later,
	 * while the next run has it read-only: changed, whatever it holds. */
	if (S_ISREG(st->st_mode) && st->st_nlink > 1) {
		replace_entry(u, dfd, name, rel, b, 0);
		return;
	}
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
		/* made unreadable: whatever it holds, it goes */
		replace_entry(u, dfd, name, rel, b, 0);
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
		/* cannot be compared: it goes, the baseline's comes back */
		replace_entry(u, dfd, name, rel, b, 0);
		return;
	}
	bool same_inode = fp.dev == b->fp.dev && fp.ino == b->fp.ino;
	if (same && (same_inode || (st->st_mode & 07777) == (b->mode & 07777))) {
		/* `chmod +x` turns a sample into a hook. Only on the file the
		 * baseline saw: another inode may be a hard link to a file
		 * elsewhere, and is replaced instead. */
		if ((st->st_mode & 07777) != (b->mode & 07777)) {
			if (fchmod(fd, b->mode & 07777) < 0)
				replace_entry(u, dfd, name, rel, b, 0);
			else
				report_change(u->rep, GUARD_CHANGED, rel);
		}
		return;
	}
	replace_entry(u, dfd, name, rel, b, 0);
}

static void undo_entry(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b,
		       bool hooks, unsigned depth)
{
	struct stat st;
	bool have = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (!have && errno != ENOENT) {
		undo_fail(u, -errno, rel);
		return;
	}
	if (!b && !have)
		return;
	if (!b) {
		if (hooks && S_ISDIR(st.st_mode)) {
			/* a new hooks directory (git init): its samples stay */
			_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				replace_entry(u, dfd, name, rel, NULL, depth);
			else
				undo_children(u, fd, rel, true, depth);
			return;
		}
		/* new: set aside whole, however deep, in one rename */
		replace_entry(u, dfd, name, rel, NULL, depth);
		return;
	}
	if (!have) {
		size_t ci = report_change(u->rep, GUARD_REMOVED, rel);
		bool unrestorable = false;
		int r = restore_entry(u, dfd, name, rel, b, &unrestorable, ci, depth);
		undo_fail(u, r, rel);
		if (unrestorable)
			u->rep->changes[ci].kind = GUARD_UNRESTORABLE;
		return;
	}
	if (entry_type_of(st.st_mode) != b->type || (b->flags & ENTRY_UNLISTED)) {
		/* a directory the baseline could not look through, or one
		 * deeper than this walk goes: what it holds now cannot be
		 * told from what it held, so it goes */
		replace_entry(u, dfd, name, rel, (b->flags & ENTRY_UNLISTED) ? NULL : b, depth);
		return;
	}

	switch (b->type) {
	case ENTRY_REG:
		undo_file(u, dfd, name, rel, b, &st);
		return;
	case ENTRY_LNK: {
		char buf[PATH_MAX + 1];
		ssize_t n = readlinkat(dfd, name, buf, sizeof(buf) - 1);
		if (n < 0 || (size_t)n != strlen(b->target) || memcmp(buf, b->target, (size_t)n) != 0)
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
	if (fd < 0 && errno == EACCES) {
		/* made unsearchable: the mode comes back below */
		_cleanup_close_ int pfd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		char proc[32];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
		if (pfd >= 0 && chmod(proc, (st.st_mode & 07777) | 0700) == 0) {
			st.st_mode |= 0700;
			fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
	}
	if (fd < 0) {
		replace_entry(u, dfd, name, rel, b, depth);
		return;
	}
	bool mode_changed = (st.st_mode & 07777) != (b->mode & 07777);
	if ((st.st_mode & 0700) != 0700 && fchmod(fd, (st.st_mode & 07777) | 0700) < 0) {
		replace_entry(u, dfd, name, rel, b, depth);
		return;
	}
	undo_children(u, fd, rel, hooks, depth);
	if (mode_changed || (st.st_mode & 0700) != 0700) {
		if (fchmod(fd, b->mode & 07777) < 0)
			undo_fail(u, -errno, rel);
		else if (mode_changed)
			report_change(u->rep, GUARD_CHANGED, rel);
	}
}

/* ---------------------------------------------------------------------
 * Git configs and pointers
 * ------------------------------------------------------------------ */

static char *read_now(int dfd, const char *name, size_t max, size_t *ret_len)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	if (read_small_fd(fd, max + 1, &text, &len) < 0)
		return NULL;
	if (len > max) {
		free(text);
		return NULL;
	}
	*ret_len = len;
	return text;
}

/* Where a config vetted lies, for gitconfig_where.local_ok and worktree_ok. */
struct config_place {
	const struct undo *u;
	const char *rel;	/* the config, relative to the workspace */
};

/* Whether a local repository at path (absolute, as a config names it)
 * lies outside every tree the run may write, and outside the workspace:
 * its hooks are then the user's. The part of it that exists is resolved,
 * so that a symlink outside into a writable tree counts as that tree. */
static bool local_repo_outside(void *data, const char *path)
{
	const struct undo *u = ((const struct config_place *)data)->u;
	_cleanup_free_ char *norm = path_normalize(path);
	_cleanup_free_ char *head = xstrdup(norm);
	_cleanup_free_ char *canon = NULL;
	const char *tail = "";
	while (path_canonical(head, &canon) < 0) {
		char *slash = strrchr(head, '/');
		if (!slash || slash == head) {
			canon = xstrdup("/");
			tail = norm + 1;
			break;
		}
		*slash = '\0';
		tail = norm + (slash - head) + 1;
	}
	_cleanup_free_ char *full = *tail ? path_join(canon, tail) : xstrdup(canon);
	if (path_is_beneath(full, u->o->workspace))
		return false;
	for (size_t i = 0; u->o->writable && u->o->writable[i]; i++)
		if (path_is_beneath(full, u->o->writable[i]))
			return false;
	return true;
}

/* The working tree of the repository whose submodule's git directory
 * holds the config at rel (".git/modules/NAME/config", nested ones
 * ".git/modules/a/modules/b/config" too): the folder holding that first
 * `.git`, absolute. NULL when rel is no submodule's config. */
static char *superproject_tree(const struct undo *u, const char *rel)
{
	if (!str_has_suffix(rel, "/config") && !str_has_suffix(rel, "/config.worktree"))
		return NULL;
	if (str_has_prefix(rel, ".git/modules/"))
		return xstrdup(u->o->workspace);
	const char *at = strstr(rel, "/.git/modules/");
	if (at) {
		_cleanup_free_ char *top = xstrndup(rel, at - rel);
		return path_join(u->o->workspace, top);
	}
	/* the workspace a git directory (git from a subdirectory): its
	 * working tree is the folder around it */
	if (u->o->gitdir_only && str_has_prefix(rel, "modules/"))
		return path_parent(u->o->workspace, NULL);
	return NULL;
}

/* core.worktree is git's own for a submodule (git submodule add, git
 * clone --recurse-submodules write "../../../sub"): kept only in a
 * submodule's git directory, and only naming a folder that exists inside
 * the superproject's working tree, symlinks resolved as git would. A run
 * that sets it in the repository's own config (or a nested repository's)
 * would have the user's `git add -A` read ~/private, and `git restore .`
 * write the run's files into ~/.local/bin. */
static bool submodule_worktree_ok(void *data, const char *value)
{
	const struct config_place *c = data;
	_cleanup_free_ char *top = superproject_tree(c->u, c->rel);
	if (!top || str_empty(value) || str_has_control(value))
		return false;
	_cleanup_free_ char *config = path_join(c->u->o->workspace, c->rel);
	_cleanup_free_ char *gitdir = path_parent(config, NULL);
	_cleanup_free_ char *tree = value[0] == '/' ? xstrdup(value) : path_join(gitdir, value);
	_cleanup_free_ char *canon = NULL;
	if (path_canonical(tree, &canon) < 0)
		return false;
	return path_is_beneath(canon, top) && !streq(canon, top);
}

/* A config the run wrote or changed keeps its inert settings (remotes,
 * branches, identity, the repository's format); the rest comes back as
 * the baseline had it, and the config as the run left it is set aside.
 * Settings the user changed outside meanwhile that are inert stay too. */
static void undo_config(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) || (b && b->type != ENTRY_REG) ||
	    (b && !(b->flags & ENTRY_COPIED))) {
		/* not a file, or a baseline without its content: as a tree */
		undo_entry(u, dfd, name, rel, b, false, 0);
		return;
	}
	if (st.st_nlink > 1) {
		/* a hard link the run made: as undo_file says */
		replace_entry(u, dfd, name, rel, b, 0);
		return;
	}
	if (b) {
		struct fingerprint fp = fingerprint_of(&st);
		if (fingerprint_eq(&fp, &b->fp) && !entry_racy(u->b, b))
			return;
	}
	_cleanup_free_ char *base = NULL;
	if (b && object_read(u->od, b, &base) < 0) {
		undo_entry(u, dfd, name, rel, b, false, 0);
		return;
	}
	struct config_place place = { .u = u, .rel = rel };
	struct gitconfig_where where = { .local_ok = local_repo_outside, .worktree_ok = submodule_worktree_ok, .data = &place };
	/* First without git's lock: git puts a config in place by rename,
	 * so what is read is one whole version of it, and one whose every
	 * change is inert (git init's, git remote add's) needs no write.
	 * Taking the lock for it would make a git still going (in another
	 * run, or one a session left running) fail to set its next setting. */
	size_t len0 = 0;
	_cleanup_free_ char *first = read_now(dfd, name, CONFIG_VET_MAX, &len0);
	if (first) {
		struct gitconfig_vetted v0;
		if (u->o->knows->config_vet(base, b ? b->fp.size : 0, first, len0, &where, &v0) == 0) {
			bool keep = v0.keep;
			gitconfig_vetted_free(&v0);
			if (keep)
				return;
		}
	}
	/* Under git's lock, the config as it is now: what a git of a run
	 * still going wrote is either all in it or not yet begun. Without
	 * the lock (held for longer than a git takes), as before: the run's
	 * version renamed aside, then the vetted text into its place. */
	_cleanup_free_ char *lock = NULL;
	_cleanup_close_ int lfd = -1;
	int lr = config_lock(dfd, name, (u->flags & UNDO_SKIP_LOCKED) ? 0 : CONFIG_LOCK_WAIT_MS, &lfd, &lock);
	if (lr == -EEXIST && (u->flags & UNDO_SKIP_LOCKED))
		/* a git writing it now: its rename is an event, and the
		 * check it brings (or the one after the command) vets it */
		return;
	bool locked = lr == 0;
	size_t len = 0;
	_cleanup_free_ char *now = read_now(dfd, name, CONFIG_VET_MAX, &len);
	if (!now) {
		/* unreadable or too large to vet: set aside whole */
		if (locked)
			unlinkat(dfd, lock, 0);
		replace_entry(u, dfd, name, rel, b, 0);
		return;
	}
	struct gitconfig_vetted v;
	if (u->o->knows->config_vet(base, b ? b->fp.size : 0, now, len, &where, &v) < 0) {
		if (locked)
			unlinkat(dfd, lock, 0);
		replace_entry(u, dfd, name, rel, b, 0);
		return;
	}
	if (v.keep) {
		if (locked)
			unlinkat(dfd, lock, 0);
		gitconfig_vetted_free(&v);
		return;
	}
	/* one a line: a subsection may hold ", " (remote "a, b") */
	_cleanup_free_ char *detail = NULL;
	for (size_t i = 0; v.dropped && v.dropped[i]; i++) {
		char *d = detail ? xstrcat3(detail, "\n", v.dropped[i]) : xstrdup(v.dropped[i]);
		free(detail);
		detail = d;
	}
	_cleanup_free_ char *tmp = NULL;
	int r = 0;
	if (v.text && locked) {
		r = write_all(lfd, v.text, v.n);
		if (r == 0 && fchmod(lfd, st.st_mode & 07777) < 0)
			r = -errno;
		if (r == 0)
			tmp = xstrdup(lock);
	} else if (v.text) {
		r = write_tmp(u, dfd, v.text, v.n, st.st_mode, &tmp);
	}
	if (r < 0) {
		/* no space for the vetted text: set aside whole, the
		 * baseline's back */
		if (locked)
			unlinkat(dfd, lock, 0);
		gitconfig_vetted_free(&v);
		replace_entry(u, dfd, name, rel, b, 0);
		return;
	}
	struct aside a = { 0 };
	const char *why = guard_change_kind_name(GUARD_VETTED);
	/* the run's version: a copy where the vetted text replaces it (the
	 * path never missing), moved where nothing does */
	r = tmp && locked ? set_aside_copy(u, rel, now, len, why, detail, &a) : -EAGAIN;
	if (r < 0)
		r = set_aside(u, dfd, name, rel, why, detail, &a);
	if (r < 0) {
		if (tmp)
			unlinkat(dfd, tmp, 0);
		if (locked && (!tmp || !streq(tmp, lock)))
			unlinkat(dfd, lock, 0);
		gitconfig_vetted_free(&v);
		undo_fail(u, r, rel);
		return;
	}
	size_t ci = report_change(u->rep, v.text ? GUARD_VETTED : b ? GUARD_CHANGED : GUARD_CREATED, rel);
	change_aside(u->rep, ci, &a);
	u->rep->changes[ci].dropped = TAKE_PTR(v.dropped);
	aside_done(&a);
	gitconfig_vetted_free(&v);
	if (tmp && put_in_place(dfd, tmp, name) < 0 && b) {
		/* the vetted text could not take its place (put_in_place
		 * removed it): the baseline's, or its old content kept */
		bool unrestorable = false;
		undo_fail(u, restore_entry(u, dfd, name, rel, b, &unrestorable, ci, 0), rel);
	}
	if (locked && (!tmp || !streq(tmp, lock)))
		unlinkat(dfd, lock, 0);
}

/* ---------------------------------------------------------------------
 * A rebase, cherry-pick or revert stopped midway
 * ------------------------------------------------------------------ */

#define SEQUENCE_READ_MAX (4u << 20)

/* Whether the file name in the state directory dfd holds what git would
 * run at --continue, by check; a file that cannot be read as itself (a
 * symlink, which git would follow; too large; unreadable) does. */
static bool state_file_runs(int dfd, const char *name, bool (*check)(const char *text, size_t n))
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno != ENOENT;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return true;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_small_fd(TAKE_FD(fd), SEQUENCE_READ_MAX + 1, &text, &len) < 0 || len > SEQUENCE_READ_MAX)
		return true;
	return check(text, len);
}

/* rebase-merge/strategy: one name, its line end dropped */
static bool strategy_runs(const char *text, size_t n)
{
	_cleanup_free_ char *name = xstrndup(text, strnlen(text, n));
	name[strcspn(name, "\r\n")] = '\0';
	return !handoff_strategy_builtin(name);
}

/* sequencer/opts, a git config: "strategy = NAME" under [options]. Read
 * a line at a time, loosely: any line whose key is strategy counts, and
 * a value that is not a built-in name as written (quoted, escaped) runs. */
static bool opts_run(const char *text, size_t n)
{
	_cleanup_free_ char *copy = xstrndup(text, strnlen(text, n));
	if (strlen(copy) != n)
		return true;
	for (char *line = copy, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line += strspn(line, " \t");
		if (strncasecmp(line, "strategy", strlen("strategy")) != 0)
			continue;
		char *v = line + strlen("strategy");
		v += strspn(v, " \t");
		if (*v != '=')
			continue;
		v++;
		v += strspn(v, " \t");
		v[strcspn(v, " \t\r;#")] = '\0';
		if (!handoff_strategy_builtin(v))
			return true;
	}
	return false;
}

/* Whether the state at dfd/name holds a command for git to run at
 * --continue: an exec line in its todo list, a merge strategy that is a
 * program. Anything there that is not a plain directory does (a symlink
 * would have git read a todo list from anywhere). */
static bool sequence_runs(int dfd, const char *name)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno != ENOENT;
	if (!S_ISDIR(st.st_mode))
		return true;
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return true;
	return state_file_runs(fd, "git-rebase-todo", handoff_todo_runs) || state_file_runs(fd, "todo", handoff_todo_runs) ||
	       state_file_runs(fd, "strategy", strategy_runs) || state_file_runs(fd, "opts", opts_run);
}

/* A rebase the run began or went on with stays, so that git rebase
 * --continue works outside after a conflict the run stopped on. One
 * whose todo list now holds an exec line (or names a strategy that is
 * a program) hands git rebase --continue, outside, a command to run: it
 * is undone as any tree, the run's state set aside whole and the
 * baseline's back (the user's own rebase, when one was under way). */
static void undo_sequence(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b)
{
	if (!sequence_runs(dfd, name))
		return;
	undo_entry(u, dfd, name, rel, b, false, 0);
}

/* What a pointer names, as an absolute path, or NULL: a `.git` file's
 * "gitdir:", a commondir's path, or a symlink's target. */
static char *pointer_names(int dfd, const char *name, const char *dir_abs, const struct stat *st)
{
	_cleanup_free_ char *value = NULL;
	if (S_ISLNK(st->st_mode)) {
		char buf[PATH_MAX + 1];
		ssize_t n = readlinkat(dfd, name, buf, sizeof(buf) - 1);
		if (n <= 0)
			return NULL;
		buf[n] = '\0';
		value = xstrdup(buf);
	} else if (S_ISREG(st->st_mode)) {
		size_t len = 0;
		_cleanup_free_ char *text = read_now(dfd, name, 4096, &len);
		if (!text)
			return NULL;
		value = streq(name, ".git") ? handoff_gitfile_target(text, len) : NULL;
		if (!streq(name, ".git")) {
			text[strcspn(text, "\n")] = '\0';
			value = xstrdup(text);
		}
	}
	if (str_empty(value))
		return NULL;
	_cleanup_free_ char *j = value[0] == '/' ? xstrdup(value) : path_join(dir_abs, value);
	return path_normalize(j);
}

/* A `.git` file or symlink, or a commondir: kept while it names a git
 * directory inside the workspace (whose config and hooks discovery then
 * finds and guards), set aside when it names one outside, where the guard
 * cannot look (another repository's hooks would run for this one), or a
 * folder git would not take for one (whose files must not be swept up as
 * a config and hooks). A `.git` directory in its place is a git
 * directory, found as one. */
static void undo_pointer(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			undo_fail(u, -errno, rel);
		else if (b)
			undo_entry(u, dfd, name, rel, b, false, 0);
		return;
	}
	if (S_ISDIR(st.st_mode) && streq(name, ".git"))
		return;
	if (S_ISREG(st.st_mode) && st.st_nlink > 1) {
		/* a hard link the run made: as undo_file says */
		replace_entry(u, dfd, name, rel, b, 0);
		return;
	}
	if (b && b->type == entry_type_of(st.st_mode)) {
		struct fingerprint fp = fingerprint_of(&st);
		if (b->type == ENTRY_REG && fingerprint_eq(&fp, &b->fp) && !entry_racy(u->b, b))
			return;
	}
	const char *base;
	_cleanup_free_ char *parent = path_parent(rel, &base);
	_cleanup_free_ char *dir_abs = parent && *parent ? path_join(u->o->workspace, parent) : xstrdup(u->o->workspace);
	_cleanup_free_ char *target = pointer_names(dfd, name, dir_abs, &st);
	if (target && path_is_beneath(target, u->o->workspace) && !streq(target, u->o->workspace) &&
	    u->o->knows->gitdir_plausible(u->wfd, path_below(target, u->o->workspace)))
		return;
	/* unchanged from the baseline, it is the user's own (a workspace
	 * that is a submodule of a repository outside it) */
	if (b)
		undo_entry(u, dfd, name, rel, b, false, 0);
	else
		replace_entry(u, dfd, name, rel, NULL, 0);
}

/* ---------------------------------------------------------------------
 * Roots
 * ------------------------------------------------------------------ */

/* The directory that holds rel, made again where the command removed it
 * or put something else (a symlink) in its way; what was in the way is
 * set aside. */
static int make_parents(struct undo *u, const char *rel)
{
	const char *base;
	_cleanup_free_ char *parent = path_parent(rel, &base);
	_cleanup_close_ int cur = openat(u->wfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	for (const char *p = parent; *p;) {
		const char *end = strchrnul(p, '/');
		_cleanup_free_ char *comp = xstrndup(p, (size_t)(end - p));
		_cleanup_free_ char *sofar = xstrndup(parent, (size_t)(end - parent));
		int next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			if (errno == ENOTDIR || errno == ELOOP) {
				replace_entry(u, cur, comp, sofar, NULL, 0);
			} else if (errno != ENOENT) {
				return -errno;
			}
			const struct entry *b = baseline_find(u->b, sofar);
			if (mkdirat(cur, comp, b && b->type == ENTRY_DIR ? b->mode & 07777 : 0777) < 0 && errno != EEXIST) {
				int r = -errno;
				if (r != -EACCES && r != -EPERM)
					return r;
				/* a parent the command made read-only */
				struct stat st;
				if (fstat(cur, &st) < 0 || st.st_uid != geteuid() ||
				    fchmod(cur, (st.st_mode & 07777) | 0700) < 0 || mkdirat(cur, comp, 0777) < 0)
					return r;
				(void)fchmod(cur, st.st_mode & 07777);
			}
			next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (next < 0)
				return -errno;
		}
		close(cur);
		cur = next;
		p = *end ? end + 1 : end;
	}
	return TAKE_FD(cur);
}

static void undo_root(struct undo *u, const struct handoff *rt)
{
	const struct entry *b = baseline_find(u->b, rt->path);
	const char *name;
	_cleanup_close_ int owned = -1;
	int pfd;
	if (!strchr(rt->path, '/')) {
		name = rt->path;
		pfd = u->wfd;
	} else {
		/* opened for reading, not O_PATH: a read-only parent is
		 * made writable through it */
		_cleanup_free_ char *parent = path_parent(rt->path, &name);
		pfd = owned = open_nofollow(u->wfd, parent, O_RDONLY | O_DIRECTORY, 0, OPEN_BENEATH);
	}
	if (pfd < 0) {
		if (!errno_is_absent(pfd)) {
			undo_fail(u, pfd, rt->path);
			return;
		}
		/* nothing was there, and nothing can be reached there now
		 * without a symlink; a symlink on the way is set aside */
		if (!b) {
			if (pfd == -ELOOP || pfd == -ENOTDIR) {
				owned = make_parents(u, rt->path);
				if (owned < 0)
					undo_fail(u, owned, rt->path);
			}
			return;
		}
		owned = make_parents(u, rt->path);
		if (owned < 0) {
			undo_fail(u, owned, rt->path);
			return;
		}
		pfd = owned;
	}
	switch (rt->kind) {
	case HANDOFF_CONFIG:
		undo_config(u, pfd, name, rt->path, b);
		break;
	case HANDOFF_POINTER:
		undo_pointer(u, pfd, name, rt->path, b);
		break;
	case HANDOFF_SEQUENCE:
		undo_sequence(u, pfd, name, rt->path, b);
		break;
	case HANDOFF_HOOKS:
	case HANDOFF_TREE:
		undo_entry(u, pfd, name, rt->path, b, rt->kind == HANDOFF_HOOKS, 0);
		break;
	}
}

/* Whether what lies at dfd/name, and all beneath it, was last changed
 * before since_ns: a repository the user made outside between two runs,
 * which the index did not know of at the begin. A change time cannot be
 * set back, and a rename or a link moves it forward, so nothing the run
 * wrote or moved there passes. */
static bool untouched_since(int dfd, const char *name, int64_t since_ns, unsigned depth)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT;
	if ((int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec >= since_ns)
		return false;
	if (!S_ISDIR(st.st_mode))
		return true;
	if (depth >= WALK_DEPTH_MAX)
		return false;
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_strv_ char **names = NULL;
	if (fd < 0 || dir_list(fd, &names) < 0)
		return false;
	for (size_t i = 0; names[i]; i++)
		if (!untouched_since(fd, names[i], since_ns, depth + 1))
			return false;
	return true;
}

static bool root_untouched(struct undo *u, const char *rel)
{
	const char *name;
	_cleanup_free_ char *parent = path_parent(rel, &name);
	_cleanup_close_ int pfd = parent && *parent ? open_nofollow(u->wfd, parent, O_PATH | O_DIRECTORY, 0, OPEN_BENEATH) : -1;
	if (parent && *parent && pfd < 0)
		return false;
	/* the clock a file's times come from ticks coarsely: a margin */
	return untouched_since(pfd >= 0 ? pfd : u->wfd, name, u->b->taken_ns - RACY_NS, 0);
}

static bool file_in_baseline(void *data, const char *rel)
{
	const struct entry *e = baseline_find(data, rel);
	return e && e->type == ENTRY_REG;
}

/* Every root of the baseline first; then, on the workspace as restored,
 * the roots that are new (a repository made during the run), whose
 * whole content is new. */
int undo_all(const struct guard_options *o, int wfd, int statefd, const struct handoff_repos *repos,
	     char *const *too_deep, struct objdir *od, const struct baseline *b, unsigned flags,
	     struct guard_report *rep, char **ret_failing, char ***ret_roots)
{
	struct undo u = {
		.o = o,
		.wfd = wfd,
		.od = od,
		.b = b,
		.q = QUARANTINE_INIT(o->state_dir, statefd, o->workspace),
		.rep = rep,
		.flags = flags,
	};
	/* The top as it is now, listed once: a root that nothing held at
	 * the begin, under a name that is not there now, has nothing to
	 * undo (most roots: the hand-offs a workspace does not have). */
	struct dir_listing top;
	(void)dir_listing_read(wfd, "", &top);
	size_t changes = rep->n_changes;
	for (size_t i = 0; i < b->roots.n; i++) {
		const char *path = b->roots.v[i].path;
		if (!baseline_find(b, path)) {
			_cleanup_free_ char *first = xstrndup(path, strcspn(path, "/"));
			if (dir_listing_type(&top, first) == DIR_ABSENT)
				continue;
		}
		undo_root(&u, &b->roots.v[i]);
	}

	/* deeper than a path can name: what it holds cannot be looked
	 * through, so it goes whole */
	for (size_t i = 0; too_deep && too_deep[i]; i++) {
		const char *name;
		_cleanup_free_ char *parent = path_parent(too_deep[i], &name);
		_cleanup_close_ int pfd = open_nofollow(wfd, parent, O_RDONLY | O_DIRECTORY, 0, OPEN_BENEATH);
		if (pfd < 0)
			undo_fail(&u, pfd, too_deep[i]);
		else
			replace_entry(&u, pfd, name, too_deep[i], NULL, 0);
	}

	struct handoff_scan scan = guard_scan(o, repos);
	scan.known = file_in_baseline;
	scan.known_data = (void *)b;
	/* the listing still holds where nothing was undone */
	if (rep->n_changes == changes && !u.error)
		scan.top = &top;
	struct parent_cache parents = PARENT_CACHE_INIT(wfd);
	struct handoffs found = { 0 };
	int r = o->knows->discover(&scan, wfd, &parents, &found);
	parent_cache_done(&parents);
	if (r < 0) {
		undo_fail(&u, r, NULL);
	} else {
		for (size_t i = 0; i < found.n; i++) {
			const struct handoff *old = handoffs_find(&b->roots, found.v[i].path);
			if (old && old->kind == found.v[i].kind)
				continue;
			/* new to the guard, and older than the run: the user's */
			if (!old && root_untouched(&u, found.v[i].path))
				continue;
			undo_root(&u, &found.v[i]);
		}
		for (size_t i = 0; found.unguarded && found.unguarded[i]; i++)
			report_unguarded(rep, found.unguarded[i]);
	}
	if (ret_roots) {
		/* both sorted: merged, each once */
		char **v = strv_new();
		for (size_t i = 0, k = 0; i < b->roots.n || k < found.n;) {
			int c = i == b->roots.n ? 1 : k == found.n ? -1 : path_cmp(b->roots.v[i].path, found.v[k].path);
			strv_add(&v, c <= 0 ? b->roots.v[i].path : found.v[k].path);
			i += c <= 0;
			k += c >= 0;
		}
		*ret_roots = v;
	}
	handoffs_free(&found);
	dir_listing_free(&top);
	quarantine_done(&u.q);
	*ret_failing = u.error_path;
	return u.error;
}
