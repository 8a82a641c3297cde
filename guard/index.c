/* The index: where the repositories of a workspace are, kept between runs
 * in state/guard/<hash>/index, so that finding them does not cost a walk
 * of the whole tree. It holds every directory with what identifies one
 * version of its entries (device, inode, change time) and the type of its
 * `.git` entry. A directory whose change time is the same has the same
 * entries: creating, removing or renaming one changes it, and a change
 * time cannot be set back. So a refresh stats each directory once and
 * lists again only those that changed, and the new ones beneath them.
 *
 * A run's begin takes the index as it is (what changed since is the
 * user's, between runs); its end refreshes it, since the run may have
 * made a repository anywhere. A directory stockade cannot look into is
 * opened up for the time it takes (the files are the user's); one deeper
 * than a path can name is listed as too deep, and the guard sets it
 * aside whole rather than leave what it holds unseen. */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/stat.h>

#include "guard/internal.h"
#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"

#define INDEX_MAGIC "stockade guard index\n"
#define INDEX_VERSION 5	/* 4: bare git directories, .hg and .jj beside .git; 5: not walked into */
/* Paths stay well under PATH_MAX, for fstatat and openat from the top. */
#define INDEX_PATH_MAX 3072

struct index_dir *index_find(const struct index *ix, const char *path)
{
	size_t lo = 0, hi = ix ? ix->n : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = path_cmp(ix->v[mid].path, path);
		if (c == 0)
			return &ix->v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

void index_free(struct index *ix)
{
	for (size_t i = 0; i < ix->n; i++)
		free(ix->v[i].path);
	free(ix->v);
	free(ix->workspace);
	strv_free(ix->too_deep);
	strv_free(ix->unsearchable);
	*ix = (struct index){ 0 };
}

static int dir_cmp(const void *a, const void *b)
{
	return path_cmp(((const struct index_dir *)a)->path, ((const struct index_dir *)b)->path);
}

/* Each entry's descendants follow it (path_cmp order): their count, so
 * that its direct children are found by skipping. */
static bool under(const char *path, const char *dir)
{
	size_t len = strlen(dir);
	return len == 0 || (strncmp(path, dir, len) == 0 && path[len] == '/');
}

static void index_count(struct index *ix)
{
	size_t *stack = xcalloc(ix->n + 1, sizeof(size_t));
	size_t depth = 0;
	for (size_t i = 0; i <= ix->n; i++) {
		/* what i is not beneath is done: its count goes to its parent */
		while (depth && (i == ix->n || !under(ix->v[i].path, ix->v[stack[depth - 1]].path))) {
			size_t c = stack[--depth];
			if (depth)
				ix->v[stack[depth - 1]].nsub += 1 + ix->v[c].nsub;
		}
		if (i < ix->n) {
			ix->v[i].nsub = 0;
			stack[depth++] = i;
		}
	}
	free(stack);
}

static void index_push(struct index *ix, const char *path, const struct stat *st, uint8_t git)
{
	ix->v = xgrow(ix->v, ix->n, sizeof(*ix->v));
	ix->v[ix->n++] = (struct index_dir){
		.path = xstrdup(path),
		.dev = (uint64_t)st->st_dev,
		.ino = (uint64_t)st->st_ino,
		.ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
		.git = git,
	};
}

/* ---------------------------------------------------------------------
 * On disk
 * ------------------------------------------------------------------ */

/* Each directory is stored as its parent's place in the index and its
 * name: the index of a large tree is a fifth of its paths' size, and a
 * name cannot hold a slash, so nothing read back can name a place outside
 * the tree. */
int index_load(int dirfd, const char *workspace, struct index *ret)
{
	*ret = (struct index){ 0 };
	struct wbuf raw;
	struct rbuf r;
	int e = state_file_load(dirfd, "index", INDEX_MAGIC, &raw, &r);
	if (e < 0)
		return e;
	_cleanup_free_ char *data = raw.p;
	struct index ix = { 0 };
	e = -EBADMSG;
	if (rb_u32(&r) != INDEX_VERSION)
		goto out;
	ix.workspace = rb_str(&r);
	uint64_t n = rb_u64(&r);
	if (r.bad || !ix.workspace || !streq(ix.workspace, workspace) || n == 0 || n > r.n)
		goto out;
	ix.v = xcalloc(n, sizeof(*ix.v));
	for (uint64_t i = 0; i < n; i++) {
		uint32_t parent = rb_u32(&r);
		_cleanup_free_ char *name = rb_str(&r);
		struct index_dir *d = &ix.v[ix.n];
		d->dev = rb_u64(&r);
		d->ino = rb_u64(&r);
		d->ctime_ns = (int64_t)rb_u64(&r);
		d->git = rb_u8(&r);
		if (r.bad || !name)
			goto out;
		if (i == 0) {
			/* the top, with no name and no parent */
			if (*name || parent != 0)
				goto out;
			d->path = xstrdup("");
		} else {
			if (parent >= i || !*name || strchr(name, '/') || streq(name, ".") || streq(name, "..") ||
			    str_has_control(name))
				goto out;
			d->path = path_join(ix.v[parent].path, name);
			if (path_cmp(ix.v[i - 1].path, d->path) >= 0)
				goto out;
		}
		ix.n++;
	}
	if (r.off != r.n)
		goto out;
	index_count(&ix);
	*ret = ix;
	ix = (struct index){ 0 };
	e = 0;
out:
	index_free(&ix);
	return e;
}

int index_store(int dirfd, const struct index *ix)
{
	struct wbuf w = { 0 };
	wbuf_put(&w, INDEX_MAGIC, strlen(INDEX_MAGIC));
	wb_u32(&w, INDEX_VERSION);
	wb_str(&w, ix->workspace);
	wb_u64(&w, ix->n);
	/* the parent of each: the nearest earlier entry it lies beneath */
	size_t *stack = xcalloc(ix->n + 1, sizeof(size_t));
	size_t depth = 0;
	for (size_t i = 0; i < ix->n; i++) {
		const struct index_dir *d = &ix->v[i];
		while (depth && !under(d->path, ix->v[stack[depth - 1]].path))
			depth--;
		size_t parent = depth ? stack[depth - 1] : 0;
		const char *name = i == 0 ? "" : d->path + strlen(ix->v[parent].path) + (*ix->v[parent].path ? 1 : 0);
		wb_u32(&w, (uint32_t)parent);
		wb_str(&w, name);
		wb_u64(&w, d->dev);
		wb_u64(&w, d->ino);
		wb_u64(&w, (uint64_t)d->ctime_ns);
		wb_u8(&w, d->git);
		stack[depth++] = i;
	}
	free(stack);
	wb_u64(&w, state_sum(w.p, w.n));
	int r = state_file_store(dirfd, "index", &w);
	free(w.p);
	return r;
}

/* ---------------------------------------------------------------------
 * Refreshing
 * ------------------------------------------------------------------ */

struct refresh {
	int wfd;
	const struct index *old;
	struct index *out;
	char *buf;		/* one getdents buffer: a directory is listed whole before going down */
	const uint8_t *same;	/* per entry of old: unchanged, as checked up front; or NULL */
	const struct index_lister *lister;	/* or NULL */
	bool changed;
};

unsigned long index_dirs_stated;

static bool same_dir(const struct index_dir *d, const struct stat *st)
{
	return d->dev == (uint64_t)st->st_dev && d->ino == (uint64_t)st->st_ino &&
	       d->ctime_ns == (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* A directory the run (or the user) made unreadable: opened up, to be
 * listed, with the mode to put back in *ret_restore. */
static int open_listable(int wfd, const char *rel, mode_t *ret_restore)
{
	*ret_restore = 0;
	const char *p = *rel ? rel : ".";
	int fd = open_nofollow(wfd, p, O_RDONLY | O_DIRECTORY, 0, OPEN_BENEATH);
	if (fd != -EACCES)
		return fd;
	_cleanup_close_ int pfd = open_nofollow(wfd, p, O_PATH | O_DIRECTORY, 0, OPEN_BENEATH);
	struct stat st;
	char proc[32];
	if (pfd < 0 || fstat(pfd, &st) < 0 || st.st_uid != geteuid())
		return -EACCES;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	if (chmod(proc, (st.st_mode & 07777) | 0500) < 0)
		return -EACCES;
	*ret_restore = (st.st_mode & 07777) | S_IFDIR;
	return open_nofollow(wfd, p, O_RDONLY | O_DIRECTORY, 0, OPEN_BENEATH);
}

/* Siblings in path_cmp's order: listed that way, a walk down the tree
 * gives the whole index already sorted. */
static int name_cmp(const void *a, const void *b)
{
	return path_cmp(*(char *const *)a, *(char *const *)b);
}

static void index_copy_push(struct index *ix, const struct index_dir *d)
{
	ix->v = xgrow(ix->v, ix->n, sizeof(*ix->v));
	ix->v[ix->n] = *d;
	ix->v[ix->n++].path = xstrdup(d->path);
}

static void refresh_dir(struct refresh *rf, const char *rel, const struct index_dir *old, unsigned depth);

/* A directory's repositories in the one byte the index keeps of them:
 * the d_type of its `.git` with INDEX_DOTGIT (a d_type may be 0), and the
 * flags of a bare git directory, a `.hg` and a `.jj` (handoff.h). */
#define INDEX_DOTGIT 0x10
#define INDEX_DOTGIT_TYPE 0x0f
_Static_assert(((HANDOFF_REPO_BARE | HANDOFF_REPO_HG | HANDOFF_REPO_JJ) & (INDEX_DOTGIT | INDEX_DOTGIT_TYPE)) == 0,
	       "the index's repository byte: the flags apart from the .git entry's");

static uint8_t repos_byte(bool dotgit, uint8_t type, bool bare, uint8_t vcs)
{
	if (dotgit)
		return (uint8_t)(INDEX_DOTGIT | (type & INDEX_DOTGIT_TYPE) | vcs);
	return (uint8_t)((bare ? HANDOFF_REPO_BARE : 0) | vcs);
}

/* What a directory holds now: its subdirectories, and its repositories. */
static void list_dir(struct refresh *rf, const char *rel, const struct stat *st, unsigned depth)
{
	mode_t restore = 0;
	_cleanup_close_ int fd = open_listable(rf->wfd, rel, &restore);
	if (fd < 0) {
		if (fd != -ENOENT && fd != -ENOTDIR && fd != -ELOOP)
			strv_add(&rf->out->unsearchable, *rel ? rel : ".");
		return;
	}
	/* told before it is listed: a watch begun now sees what is made
	 * after, the listing what was made before */
	if (rf->lister)
		rf->lister->opened(rf->lister->data, fd, rel);
	_cleanup_strv_ char **subdirs = strv_new();
	uint8_t git = 0, vcs = 0;
	bool dotgit = false;
	struct bare_probe bare = { 0 };
	struct dir_iter it = { .fd = fd, .buf = rf->buf };
	const dir_entry *de;
	int err;
	while ((de = dir_next(&it, &err))) {
		unsigned char type = de->d_type;
		if (type == DT_UNKNOWN) {
			struct stat cst;
			if (fstatat(fd, de->d_name, &cst, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			type = S_ISDIR(cst.st_mode) ? DT_DIR : S_ISREG(cst.st_mode) ? DT_REG
			       : S_ISLNK(cst.st_mode) ? DT_LNK : DT_UNKNOWN;
		}
		if (streq(de->d_name, ".git")) {
			git = type;
			dotgit = true;
		} else if (handoff_vcs_dir(de->d_name, type)) {
			/* .hg or .jj: its hand-offs are the policy's to find, as
			 * .git's are; its store is not walked */
			vcs |= handoff_vcs_dir(de->d_name, type);
		} else if (type == DT_DIR) {
			strv_add(&subdirs, de->d_name);
		}
		bare_probe_see(&bare, de->d_name, type);
	}
	git = repos_byte(dotgit, git, bare_probe_is(&bare), vcs);
	if (err < 0) {
		strv_add(&rf->out->unsearchable, *rel ? rel : ".");
	} else {
		/* recorded with what was true before it was listed: a change
		 * while listing shows at the next refresh */
		index_push(rf->out, rel, st, git);
		qsort(subdirs, strv_length(subdirs), sizeof(char *), name_cmp);
		/* an opened-up directory stays open until what is below it has
		 * been walked: its children are reached through it by path */
		if (!restore)
			close(TAKE_FD(fd));
		for (size_t i = 0; subdirs[i]; i++) {
			_cleanup_free_ char *crel = path_join(rel, subdirs[i]);
			refresh_dir(rf, crel, index_find(rf->old, crel), depth + 1);
		}
	}
	if (restore) {
		char proc[32];
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		(void)!chmod(proc, restore & 07777);
	}
}

/* old: the index's entry for rel, or NULL when it has none. */
static void refresh_dir(struct refresh *rf, const char *rel, const struct index_dir *old, unsigned depth)
{
	if (old && rf->same && rf->same[old - rf->old->v])
		goto unchanged;
	if (strlen(rel) > INDEX_PATH_MAX) {
		/* deeper than a path from the top can name: set aside whole by
		 * the guard, through its parent, which can be named */
		strv_add(&rf->out->too_deep, rel);
		rf->changed = true;
		return;
	}
	struct stat st;
	index_dirs_stated++;
	if (fstatat(rf->wfd, *rel ? rel : ".", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return;
	if (!old || !same_dir(old, &st)) {
		rf->changed = true;
		list_dir(rf, rel, &st, depth);
		return;
	}
unchanged:
	/* unchanged: its entries are the ones the index has, and each
	 * subdirectory is checked in its turn */
	index_copy_push(rf->out, old);
	size_t i = (size_t)(old - rf->old->v);
	for (size_t j = i + 1; j < i + 1 + old->nsub; j += 1 + rf->old->v[j].nsub)
		refresh_dir(rf, rf->old->v[j].path, &rf->old->v[j], depth + 1);
}

/* The check of each directory's change time, a stat apiece, is the whole
 * cost of a large tree: done up front on two threads where there are
 * many (the stats are independent), and what it finds is what the walk
 * below goes by. A directory that changes in between is seen changed at
 * the next refresh, as one that changes after it would be. */
#define INDEX_PARALLEL_MIN 1024

struct check {
	const struct index *old;
	int wfd;
	size_t from, to;
	uint8_t *same;
};

static void *check_range(void *arg)
{
	struct check *c = arg;
	for (size_t i = c->from; i < c->to; i++) {
		const struct index_dir *d = &c->old->v[i];
		struct stat st;
		c->same[i] = fstatat(c->wfd, *d->path ? d->path : ".", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			     S_ISDIR(st.st_mode) && same_dir(d, &st);
	}
	return NULL;
}

static uint8_t *check_all(int wfd, const struct index *old)
{
	if (!old || old->n < INDEX_PARALLEL_MIN)
		return NULL;
	uint8_t *same = xcalloc(old->n, 1);
	index_dirs_stated += old->n;
	struct check a = { .old = old, .wfd = wfd, .from = 0, .to = old->n / 2, .same = same };
	struct check b = { .old = old, .wfd = wfd, .from = old->n / 2, .to = old->n, .same = same };
	pthread_t t;
	bool threaded = pthread_create(&t, NULL, check_range, &b) == 0;
	check_range(&a);
	if (threaded)
		pthread_join(t, NULL);
	else
		check_range(&b);
	return same;
}

int index_refresh(int wfd, const char *workspace, const struct index *old, const struct index_lister *lister,
		  struct index *ret, bool *ret_changed)
{
	*ret = (struct index){ .workspace = xstrdup(workspace) };
	_cleanup_free_ uint8_t *same = check_all(wfd, old);
	struct refresh rf = { .wfd = wfd, .old = old, .out = ret, .buf = xmalloc(DIR_BUF), .same = same, .lister = lister };
	refresh_dir(&rf, "", index_find(old, ""), 0);
	free(rf.buf);
	if (!ret->n) {
		index_free(ret);
		return -ENOENT;
	}
	/* walked in order; sorted all the same where a name holds a byte
	 * path_cmp cannot tell from a slash */
	for (size_t i = 1; i < ret->n; i++)
		if (path_cmp(ret->v[i - 1].path, ret->v[i].path) >= 0) {
			qsort(ret->v, ret->n, sizeof(*ret->v), dir_cmp);
			break;
		}
	index_count(ret);
	/* what was listed and what was not are the same set either way: a
	 * vanished directory shows as a shorter index */
	*ret_changed = rf.changed || !old || old->n != ret->n;
	return 0;
}

/* ---------------------------------------------------------------------
 * Kept up to date by a watch (watch.c): a subtree listed again where the
 * events said a directory came or went, a `.git` entry looked at again
 * where one did; nothing else is looked at.
 * ------------------------------------------------------------------ */

/* The entries at and beneath rel, [*ret_lo, *ret_hi): its descendants
 * follow it. */
static void subtree_range(const struct index *ix, const char *rel, size_t *ret_lo, size_t *ret_hi)
{
	size_t lo = 0, hi = ix->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (path_cmp(ix->v[mid].path, rel) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t end = lo;
	while (end < ix->n && (streq(ix->v[end].path, rel) || under(ix->v[end].path, rel)))
		end++;
	*ret_lo = lo;
	*ret_hi = end;
}

/* Whether two runs of entries hold the same repositories. */
static bool same_repos(const struct index_dir *a, size_t na, const struct index_dir *b, size_t nb)
{
	for (size_t i = 0, j = 0;; i++, j++) {
		while (i < na && !a[i].git)
			i++;
		while (j < nb && !b[j].git)
			j++;
		if (i == na || j == nb)
			return i == na && j == nb;
		if (!streq(a[i].path, b[j].path) || a[i].git != b[j].git)
			return false;
	}
}

/* The items of *v at or beneath rel replaced by those of add (taken);
 * whether that changed the set. */
static bool strv_replace_under(char ***v, const char *rel, char **add)
{
	size_t kept = 0, dropped = 0, n_add = strv_length(add);
	bool same = true;
	for (size_t i = 0; *v && (*v)[i]; i++) {
		char *p = (*v)[i];
		if (streq(p, rel) || under(p, rel)) {
			same &= strv_contains(add, p);
			dropped++;
			free(p);
		} else {
			(*v)[kept++] = p;
		}
	}
	if (*v)
		(*v)[kept] = NULL;
	same &= dropped == n_add;
	for (size_t i = 0; i < n_add; i++)
		strv_push(v, add[i]);
	free(add);
	return !same;
}

int index_rescan(struct index *ix, int wfd, const char *rel, const struct index_lister *lister, bool *ret_changed)
{
	*ret_changed = false;
	if (str_empty(rel))
		return -EINVAL;
	_cleanup_free_ char *parent = path_parent(rel, NULL);
	/* a parent gone meanwhile, or never listed (too deep): nothing of
	 * the index's is there */
	if (!parent || !index_find(ix, parent))
		return 0;
	struct index sub = { 0 };
	struct refresh rf = { .wfd = wfd, .out = &sub, .buf = xmalloc(DIR_BUF), .lister = lister };
	refresh_dir(&rf, rel, NULL, 0);
	free(rf.buf);

	size_t lo, hi;
	subtree_range(ix, rel, &lo, &hi);
	bool changed = !same_repos(ix->v + lo, hi - lo, sub.v, sub.n);
	changed |= strv_replace_under(&ix->too_deep, rel, TAKE_PTR(sub.too_deep));
	changed |= strv_replace_under(&ix->unsearchable, rel, TAKE_PTR(sub.unsearchable));

	size_t n = ix->n - (hi - lo) + sub.n;
	struct index_dir *v = xcalloc(n ? n : 1, sizeof(*v));
	memcpy(v, ix->v, lo * sizeof(*v));
	if (sub.n)
		memcpy(v + lo, sub.v, sub.n * sizeof(*v));
	memcpy(v + lo + sub.n, ix->v + hi, (ix->n - hi) * sizeof(*v));
	for (size_t i = lo; i < hi; i++)
		free(ix->v[i].path);
	free(ix->v);
	free(sub.v);
	ix->v = v;
	ix->n = n;
	/* where a name holds a byte path_cmp cannot tell from a slash, the
	 * subtree may not be one run */
	for (size_t i = 1; i < ix->n; i++)
		if (path_cmp(ix->v[i - 1].path, ix->v[i].path) >= 0) {
			qsort(ix->v, ix->n, sizeof(*ix->v), dir_cmp);
			break;
		}
	index_count(ix);
	*ret_changed = changed;
	return 0;
}

bool index_regit(struct index *ix, int wfd, const char *rel, const struct guard_knowledge *knows)
{
	struct index_dir *d = index_find(ix, rel);
	if (!d)
		return false;
	/* beneath the workspace, through no symlink: only what git would
	 * find from that directory counts */
	_cleanup_close_ int fd = open_nofollow(wfd, *rel ? rel : ".", O_PATH | O_DIRECTORY, 0, OPEN_BENEATH);
	struct stat st;
	bool dotgit = fd >= 0 && fstatat(fd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0;
	uint8_t type = dotgit ? (uint8_t)IFTODT(st.st_mode) : 0, vcs = 0;
	if (fd >= 0 && fstatat(fd, ".hg", &st, AT_SYMLINK_NOFOLLOW) == 0)
		vcs |= handoff_vcs_dir(".hg", (uint8_t)IFTODT(st.st_mode));
	if (fd >= 0 && fstatat(fd, ".jj", &st, AT_SYMLINK_NOFOLLOW) == 0)
		vcs |= handoff_vcs_dir(".jj", (uint8_t)IFTODT(st.st_mode));
	uint8_t git = repos_byte(dotgit, type, !dotgit && fd >= 0 && knows->dir_is_bare(fd), vcs);
	if (git == d->git)
		return false;
	d->git = git;
	return true;
}

void index_repos(const struct index *ix, struct handoff_repos *ret)
{
	*ret = (struct handoff_repos){ 0 };
	for (size_t i = 0; i < ix->n; i++) {
		uint8_t g = ix->v[i].git;
		if (g & INDEX_DOTGIT)
			handoff_repos_add(ret, ix->v[i].path, g & INDEX_DOTGIT_TYPE);
		static const uint8_t flags[] = { HANDOFF_REPO_BARE, HANDOFF_REPO_HG, HANDOFF_REPO_JJ };
		for (size_t k = 0; k < ARRAY_SIZE(flags); k++)
			if (g & flags[k])
				handoff_repos_add(ret, ix->v[i].path, flags[k]);
	}
	for (size_t i = 0; ix->unsearchable && ix->unsearchable[i]; i++)
		strv_add(&ret->unsearchable, ix->unsearchable[i]);
}
