/* The watch of a guard kept across many commands (a session's): inotify
 * on every directory of the workspace's index, so that a check lists
 * again only the directories the events named, instead of stat'ing every
 * directory of the workspace; and on the directories around and inside
 * the hand-offs and on the hand-off files themselves, so that the holder
 * can check the moment one changes rather than at the next command's end.
 *
 * What it guarantees is the index's: every directory of the workspace is
 * known, and where its `.git` is. A directory is watched before it is
 * listed, so what is made in it after is an event and what was made
 * before is in the listing; a new directory named by an event is listed
 * whole, watched first. What it does not have to guarantee is the
 * hand-offs' content: a check looks at every hand-off whatever the events
 * said (a write through a shared mapping makes no event), so the events
 * about them only say when to look, never what to skip.
 *
 * Three kinds of watch, which one directory may combine:
 *   tree     a directory of the index: made, removed and moved entries
 *   guarded  the directory a hand-off lies in, and every directory of a
 *            hand-off that is a tree (.git/hooks, .vscode): entries made,
 *            removed, moved, written and closed, or their mode changed
 *   file     a hand-off file of the baseline, by its inode: a write
 *            through another link to it, or through a descriptor kept
 *            open, is seen too
 * A check after each command looks at every hand-off whatever the events
 * said; between commands, the holder checks when an event is about a
 * hand-off (watch_seen). What inotify never reports, a write through a
 * shared mapping, waits for the check after the next command. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/stat.h>

#include "guard/internal.h"
#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"

enum {
	WATCH_TREE = 1 << 0,
	WATCH_GUARDED = 1 << 1,
	WATCH_FILE = 1 << 2,
};

/* Every mask added (IN_MASK_ADD), never replaced: one directory may be
 * watched for two reasons. IN_EXCL_UNLINK: what is removed from it is no
 * longer its business. */
#define TREE_MASK                                                                                                      \
	(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_EXCL_UNLINK)
/* No IN_MODIFY on a directory: at the workspace's top it would wake the
 * holder at every write to a log there. A hand-off file of the baseline
 * has its own watch for that; a new one is an event when it is made. */
#define GUARDED_MASK (TREE_MASK | IN_CLOSE_WRITE | IN_ATTRIB)
#define FILE_MASK (IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB)

/* A hand-off that is a tree is watched this deep and this wide, no more:
 * beyond, a change to it waits for the next check. */
#define GUARDED_DIRS_MAX 4096

struct watched {
	int wd;
	uint8_t flags;	/* WATCH_* */
	uint8_t stale;	/* the kinds not seen again since a sync began */
	char *path;	/* relative to the workspace, "" for the top */
};

struct moved {
	uint32_t cookie;
	char *path;
};

struct watch {
	int fd;
	struct watched *v;	/* sorted by wd */
	size_t n;
	char **roots;		/* the hand-offs the last check looked at, sorted */
	char **rescan;		/* tree directories to list again */
	char **regit;		/* tree directories whose `.git` came, went or changed */
	struct moved *from;	/* directories moved from a tree directory, by cookie */
	size_t n_from;
	uint32_t *to;		/* the cookies of those moved into one */
	size_t n_to;
	bool overflow;		/* events were lost */
	bool seen;		/* an event about a hand-off, or the index changed */
	int error;		/* a tree directory that could not be watched: -errno */
};

int watch_new(struct watch **ret)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct watch *w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	*ret = w;
	return 0;
}

static void moves_clear(struct watch *w)
{
	for (size_t i = 0; i < w->n_from; i++)
		free(w->from[i].path);
	free(w->from);
	free(w->to);
	w->from = NULL;
	w->to = NULL;
	w->n_from = w->n_to = 0;
}

void watch_free(struct watch *w)
{
	if (!w)
		return;
	close(w->fd);
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].path);
	free(w->v);
	strv_free(w->roots);
	strv_free(w->rescan);
	strv_free(w->regit);
	moves_clear(w);
	free(w);
}

int watch_fd(const struct watch *w)
{
	return w ? w->fd : -1;
}

size_t watch_count(const struct watch *w)
{
	return w ? w->n : 0;
}

/* ---------------------------------------------------------------------
 * The watches, by descriptor
 * ------------------------------------------------------------------ */

static size_t watched_lower(const struct watch *w, int wd)
{
	size_t lo = 0, hi = w->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->v[mid].wd < wd)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct watched *watched_find(struct watch *w, int wd)
{
	size_t i = watched_lower(w, wd);
	return i < w->n && w->v[i].wd == wd ? &w->v[i] : NULL;
}

static void watched_erase(struct watch *w, struct watched *e)
{
	size_t i = (size_t)(e - w->v);
	free(e->path);
	memmove(w->v + i, w->v + i + 1, (w->n - i - 1) * sizeof(*w->v));
	w->n--;
}

/* kinds of watch on e dropped; with none left, the watch goes */
static void watched_drop(struct watch *w, struct watched *e, uint8_t kinds)
{
	e->flags &= (uint8_t)~kinds;
	e->stale &= (uint8_t)~kinds;
	if (e->flags)
		return;
	(void)inotify_rm_watch(w->fd, e->wd);
	watched_erase(w, e);
}

/* Watches the inode open at fd (through its /proc link, which names that
 * very inode: nothing on a path can be swapped in between) as rel. */
static int watched_add(struct watch *w, int fd, const char *rel, uint8_t kind, uint32_t mask)
{
	char proc[32];
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	int wd = inotify_add_watch(w->fd, proc, mask | IN_MASK_ADD);
	if (wd < 0)
		return -errno;
	size_t i = watched_lower(w, wd);
	if (i == w->n || w->v[i].wd != wd) {
		w->v = xgrow(w->v, w->n, sizeof(*w->v));
		memmove(w->v + i + 1, w->v + i, (w->n - i) * sizeof(*w->v));
		w->v[i] = (struct watched){ .wd = wd, .path = xstrdup(rel) };
		w->n++;
	} else if (!streq(w->v[i].path, rel)) {
		/* the same inode by another path: a directory moved within
		 * the workspace, watched again where it is now */
		free(w->v[i].path);
		w->v[i].path = xstrdup(rel);
	}
	w->v[i].flags |= kind;
	w->v[i].stale &= (uint8_t)~kind;
	return 0;
}

static bool at_or_under(const char *path, const char *dir)
{
	size_t len = strlen(dir);
	return len == 0 || (strncmp(path, dir, len) == 0 && (path[len] == '/' || path[len] == '\0'));
}

/* A directory that left the workspace: nothing beneath it is ours. */
static void watched_drop_under(struct watch *w, const char *rel)
{
	for (size_t i = w->n; i-- > 0;)
		if (at_or_under(w->v[i].path, rel))
			watched_drop(w, &w->v[i], WATCH_TREE | WATCH_GUARDED | WATCH_FILE);
}

static void tree_opened(void *data, int fd, const char *rel)
{
	struct watch *w = data;
	int r = watched_add(w, fd, rel, WATCH_TREE, TREE_MASK);
	/* a tree directory unwatched would hide a repository made in it:
	 * the watch is no good from here on */
	if (r < 0 && !w->error)
		w->error = r;
}

struct index_lister watch_lister(struct watch *w)
{
	return (struct index_lister){ .opened = tree_opened, .data = w };
}

/* ---------------------------------------------------------------------
 * Events
 * ------------------------------------------------------------------ */

static int root_cmp(const void *a, const void *b)
{
	return path_cmp(*(char *const *)a, *(char *const *)b);
}

static bool root_has(char *const *roots, size_t n, const char *p)
{
	return n && bsearch(&p, roots, n, sizeof(char *), root_cmp);
}

/* Whether p is a hand-off, lies in one, or holds one. */
static bool related(char *const *roots, const char *p)
{
	size_t n = strv_length(roots);
	if (!n)
		return false;
	/* a root at p or above it */
	_cleanup_free_ char *q = xstrdup(p);
	for (char *s = q;; s++) {
		if (*s == '/' || !*s) {
			char c = *s;
			*s = '\0';
			bool hit = root_has(roots, n, q);
			*s = c;
			if (hit)
				return true;
			if (!c)
				break;
		}
	}
	/* one beneath p: they follow it */
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (path_cmp(roots[mid], p) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && at_or_under(roots[lo], p);
}

static void event(struct watch *w, const struct inotify_event *ev)
{
	if (ev->mask & IN_Q_OVERFLOW) {
		w->overflow = true;
		w->seen = true;
		return;
	}
	struct watched *e = watched_find(w, ev->wd);
	if (!e)
		return;
	if (ev->mask & IN_IGNORED) {
		/* its inode is gone (or the watch was removed) */
		watched_erase(w, e);
		return;
	}
	if (e->flags & WATCH_FILE) {
		w->seen = true;
		return;
	}
	if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
		/* its parent's watch says so, but for the top's: the
		 * workspace itself went, which only a full refresh can tell */
		if (!*e->path && (e->flags & WATCH_TREE)) {
			w->overflow = true;
			w->seen = true;
		}
		return;
	}
	if (!ev->len || !ev->name[0])
		return;
	uint32_t structural = ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO);
	if (streq(ev->name, ".git")) {
		/* a repository made or undone, or its pointer changed; a
		 * git directory is no directory of the index */
		w->seen = true;
		if (e->flags & WATCH_TREE)
			strv_add(&w->regit, e->path);
		return;
	}
	/* what makes a directory a bare git directory (git init --bare),
	 * or another system's repository (hg init, jj init), or no longer
	 * one: looked at again as a `.git` is */
	if ((e->flags & WATCH_TREE) && structural &&
	    (streq(ev->name, "HEAD") || streq(ev->name, "objects") || streq(ev->name, "refs") || streq(ev->name, ".hg") ||
	     streq(ev->name, ".jj"))) {
		w->seen = true;
		strv_add(&w->regit, e->path);
	}
	_cleanup_free_ char *p = path_join(e->path, ev->name);
	if ((e->flags & WATCH_TREE) && structural && (ev->mask & IN_ISDIR)) {
		strv_add(&w->rescan, p);
		if (ev->mask & IN_MOVED_FROM) {
			w->from = xgrow(w->from, w->n_from, sizeof(*w->from));
			w->from[w->n_from++] = (struct moved){ .cookie = ev->cookie, .path = xstrdup(p) };
		} else if (ev->mask & IN_MOVED_TO) {
			w->to = xgrow(w->to, w->n_to, sizeof(*w->to));
			w->to[w->n_to++] = ev->cookie;
		}
	}
	/* Inside a git directory or a hand-off, any directory made or moved
	 * may be one (modules/, worktrees/, hooks/); elsewhere, the names
	 * say. */
	if (related(w->roots, p) ||
	    ((e->flags & WATCH_GUARDED) && !(e->flags & WATCH_TREE) && structural && (ev->mask & IN_ISDIR)))
		w->seen = true;
}

int watch_read(struct watch *w)
{
	/* aligned for the events read into it */
	char buf[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
	for (;;) {
		ssize_t n = read(w->fd, buf, sizeof(buf));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return 0;
			return -errno;
		}
		if (n == 0)
			return 0;
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)(void *)p;
			event(w, ev);
			p += sizeof(*ev) + ev->len;
		}
	}
}

bool watch_overflowed(const struct watch *w)
{
	return w->overflow;
}

bool watch_seen(const struct watch *w)
{
	return w->seen;
}

static void pending_clear(struct watch *w)
{
	strv_free(w->rescan);
	strv_free(w->regit);
	w->rescan = NULL;
	w->regit = NULL;
	moves_clear(w);
}

int watch_apply(struct watch *w, int wfd, struct index *ix, const struct guard_knowledge *knows, bool *ret_changed)
{
	*ret_changed = false;
	w->overflow = false;
	if (!ix) {
		pending_clear(w);
		return w->error;
	}
	/* Moved out of the workspace (no move into it with its cookie):
	 * its watches go, before anything made at its path is watched. */
	for (size_t i = 0; i < w->n_from; i++) {
		bool within = false;
		for (size_t k = 0; k < w->n_to && !within; k++)
			within = w->to[k] == w->from[i].cookie;
		if (!within)
			watched_drop_under(w, w->from[i].path);
	}
	/* Ancestors first, each subtree once. */
	size_t n = strv_length(w->rescan);
	if (n)
		qsort(w->rescan, n, sizeof(char *), root_cmp);
	struct index_lister l = watch_lister(w);
	const char *last = NULL;
	bool changed = false;
	for (size_t i = 0; i < n && !w->error; i++) {
		const char *p = w->rescan[i];
		if (last && at_or_under(p, last))
			continue;
		bool ch = false;
		int r = index_rescan(ix, wfd, p, &l, &ch);
		if (r < 0 && !w->error)
			w->error = r;
		changed |= ch;
		last = p;
	}
	size_t n_regit = strv_length(w->regit);
	if (n_regit)
		qsort(w->regit, n_regit, sizeof(char *), root_cmp);
	for (size_t i = 0; i < n_regit; i++)
		if (i == 0 || !streq(w->regit[i], w->regit[i - 1]))
			changed |= index_regit(ix, wfd, w->regit[i], knows);
	pending_clear(w);
	if (w->error)
		return w->error;
	w->seen |= changed;
	*ret_changed = changed;
	return 0;
}

int watch_refresh(struct watch *w, int wfd, const char *workspace, const struct index *old, struct index *ret)
{
	pending_clear(w);
	w->overflow = false;
	w->seen = true;
	struct index_lister l = watch_lister(w);
	bool changed;
	int r = index_refresh(wfd, workspace, old, &l, ret, &changed);
	if (r < 0)
		return r;
	if (w->error) {
		index_free(ret);
		return w->error;
	}
	/* what is no directory of the index any more is watched no more as
	 * one (a refresh from old lists only what changed: the rest keeps
	 * the watch it had) */
	for (size_t i = w->n; i-- > 0;)
		if ((w->v[i].flags & WATCH_TREE) && !index_find(ret, w->v[i].path))
			watched_drop(w, &w->v[i], WATCH_TREE);
	return 0;
}

/* ---------------------------------------------------------------------
 * The hand-offs: where they lie, what they hold
 * ------------------------------------------------------------------ */

/* A hand-off's directory and every directory in it, at most *budget. */
static void guard_tree(struct watch *w, int fd, const char *rel, unsigned depth, size_t *budget)
{
	if (!*budget)
		return;
	--*budget;
	(void)watched_add(w, fd, rel, WATCH_GUARDED, GUARDED_MASK);
	_cleanup_strv_ char **names = NULL;
	if (depth >= WALK_DEPTH_MAX || dir_list(fd, &names) < 0)
		return;
	for (size_t i = 0; names[i] && *budget; i++) {
		_cleanup_close_ int cfd = openat(fd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0)
			continue;
		_cleanup_free_ char *crel = path_join(rel, names[i]);
		guard_tree(w, cfd, crel, depth + 1, budget);
	}
}

void watch_sync(struct watch *w, int wfd, char **roots, const struct baseline *b)
{
	size_t n = strv_length(roots);
	if (n)
		qsort(roots, n, sizeof(char *), root_cmp);
	strv_free(w->roots);
	w->roots = roots;
	w->seen = false;

	for (size_t i = 0; i < w->n; i++)
		w->v[i].stale = w->v[i].flags & (WATCH_GUARDED | WATCH_FILE);
	/* A watch that cannot be added here costs only time: the check
	 * after the next command looks at every hand-off all the same. */
	_cleanup_strv_ char **parents = strv_new();
	size_t budget = GUARDED_DIRS_MAX;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *parent = path_parent(roots[i], NULL);
		if (parent && !strv_contains(parents, parent)) {
			strv_add(&parents, parent);
			_cleanup_close_ int pfd = open_nofollow(wfd, *parent ? parent : ".", O_RDONLY | O_DIRECTORY, 0,
								OPEN_BENEATH);
			if (pfd >= 0)
				(void)watched_add(w, pfd, parent, WATCH_GUARDED, GUARDED_MASK);
		}
		_cleanup_close_ int fd = open_nofollow(wfd, roots[i], O_RDONLY | O_DIRECTORY, 0, OPEN_BENEATH);
		if (fd >= 0)
			guard_tree(w, fd, roots[i], 0, &budget);
	}
	for (size_t i = 0; b && i < b->n; i++) {
		if (b->v[i].type != ENTRY_REG)
			continue;
		_cleanup_close_ int fd = open_nofollow(wfd, b->v[i].path, O_PATH, 0, OPEN_BENEATH);
		struct stat st;
		if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			(void)watched_add(w, fd, b->v[i].path, WATCH_FILE, FILE_MASK);
	}
	for (size_t i = w->n; i-- > 0;)
		if (w->v[i].stale)
			watched_drop(w, &w->v[i], w->v[i].stale);
}

bool watch_roots_differ(const struct watch *w, char *const *roots)
{
	size_t n = strv_length(roots);
	if (n != strv_length(w->roots))
		return true;
	for (size_t i = 0; i < n; i++)
		if (!strv_contains(w->roots, roots[i]))
			return true;
	return false;
}
