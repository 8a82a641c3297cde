/* The quarantine: what the guard set aside, one item each, in
 * state_dir/quarantine/<ID>/<path as in the workspace>, with what it was
 * in state_dir/quarantine/<ID>.info. An item set aside in place (when the
 * quarantine could not take it) has its .info too, naming where it is.
 * Nothing here is ever deleted: `stockade quarantine restore` moves an
 * item back (or to where the user says); an item whose content went back
 * by other means (a config's dropped settings merged into the config now
 * there, at the user's word) is settled: its record and copy go. */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/stat.h>
#include <time.h>

#include "guard/internal.h"
#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"

#define INFO_MAGIC "stockade quarantine 1\n"
#define INFO_MAX 65536

static int quarantine_top(struct quarantine *q)
{
	if (q->topfd >= 0)
		return q->topfd;
	if (mkdirat(q->state_fd, "quarantine", 0700) < 0 && errno != EEXIST)
		return -errno;
	int fd = openat(q->state_fd, "quarantine", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	q->topfd = fd;
	return fd;
}

void quarantine_done(struct quarantine *q)
{
	if (q->topfd >= 0)
		close(q->topfd);
	q->topfd = -1;
}

/* Values are one line of any bytes but NUL (a name in the workspace can
 * hold any): a newline, a backslash and every other control character
 * escaped (\n, \\, \xHH), the rest as it is. */
static void info_put(struct wbuf *w, const char *key, const char *value)
{
	static const char hex[] = "0123456789abcdef";
	wbuf_put(w, key, strlen(key));
	wbuf_put(w, " ", 1);
	for (const unsigned char *p = (const unsigned char *)(value ? value : ""); *p; p++) {
		if (*p == '\n') {
			wbuf_put(w, "\\n", 2);
		} else if (*p == '\\') {
			wbuf_put(w, "\\\\", 2);
		} else if (*p < 0x20 || *p == 0x7f) {
			char esc[4] = { '\\', 'x', hex[*p >> 4], hex[*p & 15] };
			wbuf_put(w, esc, 4);
		} else {
			wbuf_put(w, (const char *)p, 1);
		}
	}
	wbuf_put(w, "\n", 1);
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* NULL where the escapes are not info_put's (a \x00 among them). */
static char *info_unescape(const char *s)
{
	char *out = xmalloc(strlen(s) + 1), *o = out;
	for (; *s; s++) {
		if (*s != '\\') {
			*o++ = *s;
		} else if (s[1] == 'n' || s[1] == '\\') {
			*o++ = s[1] == 'n' ? '\n' : '\\';
			s++;
		} else if (s[1] == 'x' && hex_digit(s[2]) >= 0 && hex_digit(s[3]) >= 0 &&
			   (hex_digit(s[2]) || hex_digit(s[3]))) {
			*o++ = (char)(hex_digit(s[2]) << 4 | hex_digit(s[3]));
			s += 3;
		} else {
			free(out);
			return NULL;
		}
	}
	*o = '\0';
	return out;
}

/* A record's path: relative, beneath the workspace, of any bytes (what
 * the guard set aside had the name the run gave it). */
static bool record_path_valid(const char *rel)
{
	if (str_empty(rel) || rel[0] == '/')
		return false;
	for (const char *p = rel;;) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (!*end)
			return true;
		p = end + 1;
	}
}

/* A new item: quarantine/<ID>/ and the parents of rel in it. The ID is
 * the time, the pid and a count: sorted by when, unique per guard. */
int quarantine_item_new(struct quarantine *q, const char *rel, struct qitem *ret)
{
	*ret = (struct qitem){ .dirfd = -1 };
	int top = quarantine_top(q);
	if (top < 0)
		return top;
	if (!q->stamp[0]) {
		time_t now = time(NULL);
		struct tm tm;
		if (!localtime_r(&now, &tm) || strftime(q->stamp, sizeof(q->stamp), "%Y%m%d-%H%M%S", &tm) == 0)
			return -EINVAL;
	}
	char *id = NULL;
	for (;;) {
		free(id);
		id = xasprintf("%s-%d-%u", q->stamp, (int)getpid(), ++q->count);
		if (mkdirat(top, id, 0700) == 0)
			break;
		if (errno != EEXIST || q->count > 100000) {
			int r = -errno;
			free(id);
			return r;
		}
	}
	_cleanup_close_ int cur = openat(top, id, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cur < 0) {
		free(id);
		return -errno;
	}
	const char *base;
	_cleanup_free_ char *parent = path_parent(rel, &base);
	for (const char *p = parent ? parent : ""; *p;) {
		const char *end = strchrnul(p, '/');
		_cleanup_free_ char *comp = xstrndup(p, (size_t)(end - p));
		int next = -1;
		if (mkdirat(cur, comp, 0700) == 0 || errno == EEXIST)
			next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0) {
			free(id);
			return -errno;
		}
		close(cur);
		cur = next;
		p = *end ? end + 1 : end;
	}
	_cleanup_free_ char *top_path = path_join(q->state_dir, "quarantine");
	_cleanup_free_ char *item_dir = path_join(top_path, id);
	ret->id = id;
	ret->abs = path_join(item_dir, rel);
	ret->name = xstrdup(base);
	ret->dirfd = TAKE_FD(cur);
	return 0;
}

void qitem_done(struct qitem *it)
{
	if (it->dirfd >= 0)
		close(it->dirfd);
	free(it->id);
	free(it->abs);
	free(it->name);
	*it = (struct qitem){ .dirfd = -1 };
}

/* The item's record, written last: an item without one is a set-aside
 * that did not finish, and list shows it as such. */
int quarantine_item_record(struct quarantine *q, const char *id, const struct qrecord *rec)
{
	int top = quarantine_top(q);
	if (top < 0)
		return top;
	struct wbuf w = { 0 };
	wbuf_put(&w, INFO_MAGIC, strlen(INFO_MAGIC));
	char num[21];
	info_put(&w, "when", fmt_u64(num, (uint64_t)time(NULL)));
	info_put(&w, "run", fmt_u64(num, (uint64_t)getpid()));
	info_put(&w, "workspace", q->workspace);
	info_put(&w, "path", rec->path);
	info_put(&w, "why", rec->why);
	info_put(&w, "stored", rec->stored);
	if (rec->detail)
		info_put(&w, "detail", rec->detail);
	_cleanup_free_ char *data = w.p;
	_cleanup_free_ char *name = xstrcat3(id, ".info", "");
	_cleanup_free_ char *tmp = xstrcat3(id, ".info.tmp", "");
	_cleanup_close_ int fd = openat(top, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r = write_all(fd, data, w.n);
	if (r == 0 && close(TAKE_FD(fd)) < 0)
		r = -errno;
	if (r == 0 && renameat(top, tmp, top, name) < 0)
		r = -errno;
	if (r < 0)
		unlinkat(top, tmp, 0);
	return r;
}

/* ---------------------------------------------------------------------
 * Listing and restoring, for `stockade quarantine`
 * ------------------------------------------------------------------ */

static int info_parse(char *text, struct guard_quarantined *ret)
{
	if (!str_has_prefix(text, INFO_MAGIC))
		return -EBADMSG;
	char *save = NULL;
	for (char *line = strtok_r(text + strlen(INFO_MAGIC), "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');
		if (!sp)
			continue;
		*sp = '\0';
		char *v = info_unescape(sp + 1);
		if (!v)
			return -EBADMSG;
		char **slot = streq(line, "workspace") ? &ret->workspace
			    : streq(line, "path")	   ? &ret->path
			    : streq(line, "why")	   ? &ret->why
			    : streq(line, "stored")	   ? &ret->stored
			    : streq(line, "detail")	   ? &ret->detail
						   : NULL;
		if (streq(line, "when"))
			ret->when = strtoll(v, NULL, 10);
		else if (streq(line, "run"))
			ret->run = strtol(v, NULL, 10);
		if (slot) {
			free(*slot);
			*slot = TAKE_PTR(v);
		}
		free(v);
	}
	if (!ret->workspace || !ret->path || !ret->stored || !path_is_absolute(ret->workspace) ||
	    !path_is_absolute(ret->stored) || !record_path_valid(ret->path))
		return -EBADMSG;
	return 0;
}

void guard_quarantined_done(struct guard_quarantined *it)
{
	free(it->id);
	free(it->workspace);
	free(it->path);
	free(it->why);
	free(it->stored);
	free(it->detail);
	*it = (struct guard_quarantined){ 0 };
}

void guard_quarantined_free(struct guard_quarantined *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		guard_quarantined_done(&v[i]);
	free(v);
}

static int open_quarantine_dir(const char *state_dir, int *ret)
{
	_cleanup_free_ char *top = path_join(state_dir, "quarantine");
	int fd = open_nofollow(AT_FDCWD, top, O_RDONLY | O_DIRECTORY, 0, 0);
	if (fd < 0)
		return fd;
	*ret = fd;
	return 0;
}

static int item_load(int topfd, const char *id, struct guard_quarantined *ret)
{
	*ret = (struct guard_quarantined){ .id = xstrdup(id) };
	_cleanup_free_ char *name = xstrcat3(id, ".info", "");
	int fd = openat(topfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	int r = read_small_fd(fd, INFO_MAX, &text, &len);
	if (r < 0)
		return r;
	return info_parse(text, ret);
}

int guard_quarantine_list(const char *state_dir, struct guard_quarantined **ret, size_t *ret_n)
{
	*ret = NULL;
	*ret_n = 0;
	_cleanup_close_ int top = -1;
	int r = open_quarantine_dir(state_dir, &top);
	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	_cleanup_strv_ char **names = NULL;
	if ((r = dir_list(top, &names)) < 0)
		return r;
	struct guard_quarantined *v = NULL;
	size_t n = 0;
	for (size_t i = 0; names[i]; i++) {
		if (!str_has_suffix(names[i], ".info"))
			continue;
		_cleanup_free_ char *id = xstrndup(names[i], strlen(names[i]) - strlen(".info"));
		struct guard_quarantined item;
		if (item_load(top, id, &item) < 0) {
			/* a record we cannot read is still listed, by its id */
			guard_quarantined_done(&item);
			item = (struct guard_quarantined){ .id = xstrdup(id) };
		}
		v = xgrow(v, n, sizeof(*v));
		v[n++] = item;
	}
	*ret = v;
	*ret_n = n;
	return 0;
}

/* The folders of rel's parent beneath the workspace, made where the run
 * took them away; never through a symlink. */
static int make_dirs_beneath(const char *workspace, const char *rel)
{
	_cleanup_close_ int cur = open_nofollow(AT_FDCWD, workspace, O_PATH | O_DIRECTORY, 0, 0);
	if (cur < 0)
		return cur;
	const char *base;
	_cleanup_free_ char *parent = path_parent(rel, &base);
	for (const char *p = parent ? parent : ""; *p;) {
		const char *end = strchrnul(p, '/');
		_cleanup_free_ char *comp = xstrndup(p, (size_t)(end - p));
		if (mkdirat(cur, comp, 0777) < 0 && errno != EEXIST)
			return -errno;
		int next = openat(cur, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0)
			return -errno;
		close(cur);
		cur = next;
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* Moves what lies at path (absolute, reached without symlinks) to dst
 * (absolute), which must not exist: by rename, or by a copy where they
 * are on different filesystems. */
static int move_back(const char *src, const char *dst)
{
	const char *sname, *dname;
	_cleanup_free_ char *sparent = path_parent(src, &sname);
	_cleanup_free_ char *dparent = path_parent(dst, &dname);
	_cleanup_close_ int sfd = open_nofollow(AT_FDCWD, sparent, O_PATH | O_DIRECTORY, 0, 0);
	if (sfd < 0)
		return sfd;
	_cleanup_close_ int dfd = open_nofollow(AT_FDCWD, dparent, O_PATH | O_DIRECTORY, 0, 0);
	if (dfd < 0)
		return dfd;
	if (renameat2(sfd, sname, dfd, dname, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EXDEV)
		return -errno;
	int r = tree_copy(sfd, sname, dfd, dname, SIZE_MAX);
	if (r < 0) {
		(void)tree_remove(dfd, dname);
		return r;
	}
	return tree_remove(sfd, sname);
}

static bool id_valid(const char *id)
{
	return !str_empty(id) && !strchr(id, '/') && id[0] != '.';
}

int guard_quarantine_get(const char *state_dir, const char *id, struct guard_quarantined *ret)
{
	*ret = (struct guard_quarantined){ 0 };
	if (!id_valid(id))
		return -EINVAL;
	_cleanup_close_ int top = -1;
	int r = open_quarantine_dir(state_dir, &top);
	if (r == 0)
		r = item_load(top, id, ret);
	return r == -ENOENT ? -ESRCH : r;
}

int guard_quarantine_settled(const char *state_dir, const char *id)
{
	if (!id_valid(id))
		return -EINVAL;
	_cleanup_close_ int top = -1;
	int r = open_quarantine_dir(state_dir, &top);
	if (r < 0)
		return r;
	/* the record first: an item without one is listed as unfinished,
	 * never as one to restore again */
	_cleanup_free_ char *info = xstrcat3(id, ".info", "");
	if (unlinkat(top, info, 0) < 0)
		return -errno;
	return tree_remove(top, id);
}

char **guard_quarantined_settings(const struct guard_quarantined *it)
{
	char **v = strv_new();
	if (!it->detail)
		return v;
	/* One a line; a record written before said them joined by ", ". */
	const char *sep = strchr(it->detail, '\n') ? "\n" : ", ";
	for (const char *p = it->detail; *p;) {
		const char *end = strstr(p, sep);
		size_t n = end ? (size_t)(end - p) : strlen(p);
		if (n)
			strv_push(&v, xstrndup(p, n));
		p += n + (end ? strlen(sep) : 0);
	}
	return v;
}

static int restore_to(const char *state_dir, const char *id, const char *as, struct guard_quarantined *ret_item,
		      struct guard_failure *f)
{
	if (f)
		*f = (struct guard_failure){ 0 };
	*ret_item = (struct guard_quarantined){ 0 };
	if (!id_valid(id))
		return guard_fail(f, -EINVAL, GUARD_STEP_STATE, xstrdup(id ? id : ""));
	_cleanup_close_ int top = -1;
	int r = open_quarantine_dir(state_dir, &top);
	if (r < 0)
		return guard_fail(f, r == -ENOENT ? -ESRCH : r, GUARD_STEP_STATE, xstrdup(id));
	r = item_load(top, id, ret_item);
	if (r < 0)
		return guard_fail(f, r == -ENOENT ? -ESRCH : r, GUARD_STEP_STATE, xstrdup(id));
	struct guard_quarantined *it = ret_item;

	_cleanup_free_ char *dst = as ? path_normalize(as) : path_join(it->workspace, it->path);
	if (!as) {
		/* Not while a run is under way there: its end would undo it
		 * again. */
		bool busy = false;
		r = guard_workspace_busy(state_dir, it->workspace, &busy);
		if (r < 0)
			return guard_fail(f, r, GUARD_STEP_STATE, xstrdup(it->workspace));
		if (busy)
			return guard_fail(f, -EBUSY, GUARD_STEP_WORKSPACE, xstrdup(it->workspace));
	}
	struct stat st;
	if (lstat(dst, &st) == 0)
		return guard_fail(f, -EEXIST, GUARD_STEP_UNDO, TAKE_PTR(dst));
	/* the parents, where the run took them away */
	if (!as && (r = make_dirs_beneath(it->workspace, it->path)) < 0)
		return guard_fail(f, r, GUARD_STEP_UNDO, TAKE_PTR(dst));
	r = move_back(it->stored, dst);
	if (r < 0)
		return guard_fail(f, r, GUARD_STEP_UNDO, TAKE_PTR(dst));
	/* the record goes with it, and the emptied item folders */
	_cleanup_free_ char *info = xstrcat3(id, ".info", "");
	(void)unlinkat(top, info, 0);
	(void)tree_remove(top, id);
	return 0;
}

int guard_quarantine_restore(const char *state_dir, const char *id, struct guard_quarantined *ret_item,
			     struct guard_failure *f)
{
	return restore_to(state_dir, id, NULL, ret_item, f);
}

int guard_quarantine_restore_as(const char *state_dir, const char *id, const char *dst,
				struct guard_quarantined *ret_item, struct guard_failure *f)
{
	return restore_to(state_dir, id, dst, ret_item, f);
}
