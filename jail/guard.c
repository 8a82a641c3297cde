#include "jail/guard.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "jail/paths.h"
#include "jail/util.h"

#define FILE_CAP_DEFAULT ((size_t)1 << 20)
#define TOTAL_CAP_DEFAULT ((size_t)32 << 20)
/* A .git pointer file is one short line; git itself reads no more. */
#define GITFILE_MAX 4096
/* Git configs are small; one larger than this is not parsed past it. */
#define GITCONFIG_MAX ((size_t)4 << 20)
/* Every level holds a descriptor: well below RLIMIT_NOFILE. */
#define WALK_DEPTH_MAX 256
#define GETDENTS_BUF 8192

/* ---------------------------------------------------------------------
 * Resolving beneath the workspace
 * ------------------------------------------------------------------ */

static bool openat2_missing;

/* Component by component, for kernels before 5.6 or a seccomp filter
 * that refuses openat2: each step refuses a symlink, so the result is
 * the same as RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS for the normalised
 * relative paths the guard uses. */
static int open_beneath_walk(int wfd, const char *path, int flags, mode_t mode)
{
	_cleanup_close_ int cur = openat(wfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (cur < 0)
		return -errno;
	const char *p = path;
	for (;;) {
		const char *end = strchrnul(p, '/');
		_cleanup_free_ char *comp = xstrndup(p, (size_t)(end - p));
		if (streq(comp, "..") || !*comp)
			return -EXDEV;
		if (!*end) {
			int fd = openat(cur, comp, flags | O_NOFOLLOW | O_CLOEXEC, mode);
			return fd < 0 ? -errno : fd;
		}
		int next = openat(cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
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

/* Opens a workspace-relative path without following any symlink and
 * without leaving the workspace, so that nothing a jailed command
 * planted can turn a guard operation into one elsewhere. */
static int open_beneath(int wfd, const char *path, int flags, mode_t mode)
{
	if (str_empty(path))
		path = ".";
	if (!openat2_missing) {
		struct open_how how = {
			.flags = (uint64_t)(flags | O_CLOEXEC),
			.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		long fd = syscall(SYS_openat2, wfd, path, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		/* EPERM: what older container seccomp profiles answer. */
		if (errno != ENOSYS && errno != EPERM)
			return -errno;
		openat2_missing = true;
	}
	if (streq(path, ".")) {
		int fd = openat(wfd, ".", flags | O_CLOEXEC, mode);
		return fd < 0 ? -errno : fd;
	}
	return open_beneath_walk(wfd, path, flags, mode);
}

/* The directory holding a relative path, and the last component. */
static char *path_parent(const char *rel, const char **ret_name)
{
	const char *slash = strrchr(rel, '/');
	if (!slash) {
		*ret_name = rel;
		return xstrdup("");
	}
	*ret_name = slash + 1;
	return xstrndup(rel, (size_t)(slash - rel));
}

/* Opens the directory holding rel. -ENOENT, -ENOTDIR and -ELOOP mean
 * that rel does not exist at that path (for the guard, a symlink on
 * the way is no way at all). */
static int open_parent_beneath(int wfd, const char *rel, const char **ret_name)
{
	_cleanup_free_ char *parent = path_parent(rel, ret_name);
	return open_beneath(wfd, parent, O_PATH | O_DIRECTORY, 0);
}

static bool errno_is_absent(int r)
{
	return r == -ENOENT || r == -ENOTDIR || r == -ELOOP;
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

/* The last parent directory opened, kept: roots come sorted, so those
 * that share a parent (.git/hooks and .git/config) come together. Only
 * for passes that change nothing in the workspace; an undo opens afresh,
 * as it may move a parent aside. */
struct parent_cache {
	int wfd;
	char *path;	/* the parent's relative path, NULL when none is held */
	int fd;		/* or -errno, when that parent could not be opened */
};

static int parent_cached(struct parent_cache *c, const char *rel, const char **ret_name)
{
	if (!strchr(rel, '/')) {
		*ret_name = rel;
		return c->wfd;
	}
	const char *slash = strrchr(rel, '/');
	*ret_name = slash + 1;
	size_t n = (size_t)(slash - rel);
	if (c->path && strlen(c->path) == n && strncmp(c->path, rel, n) == 0)
		return c->fd;
	if (c->path && c->fd >= 0)
		close(c->fd);
	free(c->path);
	c->path = xstrndup(rel, n);
	c->fd = open_beneath(c->wfd, c->path, O_PATH | O_DIRECTORY, 0);
	return c->fd;
}

static void parent_cache_done(struct parent_cache *c)
{
	if (c->path && c->fd >= 0)
		close(c->fd);
	free(c->path);
	c->path = NULL;
	c->fd = -1;
}

/* Reads a small regular file opened through fd (closed here). */
static int read_small_fd(int fd, size_t max, char **ret, size_t *ret_len)
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

static int read_small_cached(struct parent_cache *c, const char *rel, size_t max, char **ret, size_t *ret_len)
{
	const char *name;
	int pfd = parent_cached(c, rel, &name);
	if (pfd < 0)
		return pfd;
	int fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return read_small_fd(fd, max, ret, ret_len);
}

/* Relative paths in the order that puts every descendant of a path
 * right after it: '/' sorts before every other byte. */
static int path_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		unsigned char x = (unsigned char)*a, y = (unsigned char)*b;
		if (x == '/')
			x = 1;
		if (y == '/')
			y = 1;
		if (x != y || !x)
			return (int)x - (int)y;
	}
}

static char *rel_join(const char *dir, const char *name)
{
	return str_empty(dir) ? xstrdup(name) : xstrcat3(dir, "/", name);
}

/* ---------------------------------------------------------------------
 * Git configuration: only core.hooksPath, parsed here. Running git to
 * read it would run whatever a hostile config names (core.fsmonitor).
 * Include directives ([include], [includeIf]) are not followed: an
 * included file lies wherever the config says, and a config inside the
 * workspace is itself kept by the guard, so a new include is undone.
 * ------------------------------------------------------------------ */

static bool config_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
}

/* A value as git's parse_value() reads it: surrounding blanks dropped,
 * quotes removed, \" \\ \n \t \b and line continuations honoured, a
 * comment outside quotes ends it. Returns NULL on a malformed value. */
static char *config_parse_value(const char **pp, const char *end)
{
	const char *p = *pp;
	size_t cap = 64, len = 0, spaces = 0;
	char *out = xmalloc(cap);
	bool quote = false, comment = false;
	for (;;) {
		if (p >= end || *p == '\n') {
			if (p < end)
				p++;
			if (quote)
				goto bad_free;
			break;
		}
		char c = *p++;
		if (comment)
			continue;
		if ((c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') && !quote) {
			if (len)
				spaces++;
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		if (c == '\\') {
			if (p >= end)
				goto bad_free;
			c = *p++;
			if (c == '\n') {
				/* the escaped newline joins the next line */
				continue;
			}
			switch (c) {
			case 't': c = '\t'; break;
			case 'b': c = '\b'; break;
			case 'n': c = '\n'; break;
			case '"': case '\\': break;
			default: goto bad_free;
			}
		} else if (c == '"') {
			quote = !quote;
			continue;
		}
		if (len + spaces + 2 > cap) {
			cap = (len + spaces + 2) * 2;
			out = xrealloc(out, cap);
		}
		for (; spaces; spaces--)
			out[len++] = ' ';
		out[len++] = c;
	}
	out[len] = '\0';
	*pp = p;
	return out;
bad_free:
	free(out);
	return NULL;
}

/* The last core.hooksPath in a config text, or NULL. A config git would
 * refuse stops the parse: what came before still counts, which keeps
 * more rather than less. */
static char *gitconfig_hooks_path(const char *text, size_t n)
{
	const char *p = text, *end = text + n;
	bool in_core = false;
	char *found = NULL;

	while (p < end) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n' || *p == '\f' || *p == '\v'))
			p++;
		if (p >= end)
			break;
		if (*p == '#' || *p == ';') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		if (*p == '[') {
			p++;
			const char *name = p;
			while (p < end && (config_key_char(*p) || *p == '.'))
				p++;
			size_t name_len = (size_t)(p - name);
			bool plain = true;
			while (p < end && (*p == ' ' || *p == '\t'))
				p++;
			if (p < end && *p == '"') {
				/* [core "sub"]: a subsection, not core itself */
				plain = false;
				p++;
				while (p < end && *p != '"' && *p != '\n') {
					if (*p == '\\' && p + 1 < end)
						p++;
					p++;
				}
				if (p >= end || *p != '"')
					break;
				p++;
			}
			if (p >= end || *p != ']')
				break;
			p++;
			in_core = plain && name_len == 4 && strncasecmp(name, "core", 4) == 0;
			/* a key may follow on the same line: "[core] hooksPath = x" */
			continue;
		}
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z')))
			break;
		const char *key = p;
		while (p < end && config_key_char(*p))
			p++;
		size_t key_len = (size_t)(p - key);
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		char *value = NULL;
		if (p < end && *p == '=') {
			p++;
			value = config_parse_value(&p, end);
			if (!value)
				break;
		} else if (p < end && *p != '\n' && *p != '\r' && *p != '#' && *p != ';') {
			break;
		} else {
			while (p < end && *p != '\n')
				p++;
		}
		if (in_core && value && key_len == 9 && strncasecmp(key, "hooksPath", 9) == 0) {
			free(found);
			found = TAKE_PTR(value);
		}
		free(value);
	}
	return found;
}

/* ---------------------------------------------------------------------
 * Discovery: which paths are hand-offs
 * ------------------------------------------------------------------ */

enum root_kind {
	ROOT_TREE,	/* the path and everything beneath it */
	ROOT_GITDIR,	/* a git directory: itself, and of its entries only
			 * hooks and config (objects and refs change in
			 * every commit and run nothing) */
};

struct root {
	char *path;
	enum root_kind kind;
};

struct roots {
	struct root *v;
	size_t n, cap;
};

/* What git runs from a hooks directory (githooks(5)); used where a
 * hooksPath names a directory too wide to keep whole. */
static const char *const hook_names[] = {
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit",
	"pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit",
	"pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive",
	"update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc",
	"post-rewrite", "sendemail-validate", "fsmonitor-watchman",
	"p4-changelist", "p4-prepare-changelist", "p4-post-changelist",
	"p4-pre-submit", "post-index-change",
};

static const char *const root_only[] = {
	"stockade.ini", ".stockade.ini", ".claude", ".vscode", ".idea", ".cursor", ".envrc",
};

static const char *const gitdir_members[] = { "config", "hooks" };

static void roots_add(struct roots *rs, char *path, enum root_kind kind)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 32;
		rs->v = xreallocarray(rs->v, rs->cap, sizeof(*rs->v));
	}
	rs->v[rs->n++] = (struct root){ .path = path, .kind = kind };
}

static void roots_free(struct roots *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].path);
	free(rs->v);
	*rs = (struct roots){ 0 };
}

static int root_cmp(const void *a, const void *b)
{
	const struct root *x = a, *y = b;
	int c = path_cmp(x->path, y->path);
	if (c)
		return c;
	/* a tree before a git directory on the same path: it covers it */
	return (int)x->kind - (int)y->kind;
}

static const struct root *roots_find(const struct roots *rs, const char *path)
{
	size_t lo = 0, hi = rs->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = path_cmp(rs->v[mid].path, path);
		if (c == 0) {
			/* the tree, if both kinds share the path */
			while (mid > 0 && streq(rs->v[mid - 1].path, path))
				mid--;
			return &rs->v[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* Whether some root other than r already keeps r's path: a tree root
 * at r or above it, or a git directory whose hooks or config hold it. */
static bool roots_covered(const struct roots *rs, const struct root *r)
{
	const char *path = r->path;
	size_t n = strlen(path);
	_cleanup_free_ char *prefix = xstrdup(path);
	for (size_t i = n;; i--) {
		if (i == n || path[i] == '/') {
			prefix[i] = '\0';
			const struct root *a = roots_find(rs, prefix);
			if (a && a != r && a->kind == ROOT_TREE)
				return true;
			if (a && a != r && a->kind == ROOT_GITDIR && i == n && r->kind == ROOT_GITDIR)
				return true;
			if (a && a->kind == ROOT_GITDIR && i < n) {
				const char *rest = path + i + 1;
				for (size_t k = 0; k < ARRAY_SIZE(gitdir_members); k++) {
					size_t m = strlen(gitdir_members[k]);
					if (strncmp(rest, gitdir_members[k], m) == 0 && (rest[m] == '\0' || rest[m] == '/'))
						return true;
				}
			}
			prefix[i] = path[i];
		}
		if (i == 0)
			break;
	}
	/* every root is beneath the workspace root "" */
	if (n) {
		const struct root *a = roots_find(rs, "");
		if (a && a != r && a->kind == ROOT_TREE)
			return true;
	}
	return false;
}

/* Sorted, each path once, none inside another. */
static void roots_normalize(struct roots *rs)
{
	if (!rs->n)
		return;
	qsort(rs->v, rs->n, sizeof(*rs->v), root_cmp);
	size_t k = 0;
	for (size_t i = 0; i < rs->n; i++) {
		if (k && streq(rs->v[k - 1].path, rs->v[i].path) && rs->v[k - 1].kind == rs->v[i].kind) {
			free(rs->v[i].path);
			continue;
		}
		rs->v[k++] = rs->v[i];
	}
	rs->n = k;
	bool *drop = xcalloc(rs->n, sizeof(bool));
	for (size_t i = 0; i < rs->n; i++)
		drop[i] = roots_covered(rs, &rs->v[i]);
	k = 0;
	for (size_t i = 0; i < rs->n; i++) {
		if (drop[i])
			free(rs->v[i].path);
		else
			rs->v[k++] = rs->v[i];
	}
	rs->n = k;
	free(drop);
}

struct discover {
	const struct guard_options *o;
	int wfd;
	struct roots roots;
	char **unguarded;
	char *global_hooks;	/* core.hooksPath of the user's own config */
	/* Set while undoing: only a config or a .git file the baseline holds
	 * (now put back) may name a hooksPath or a gitdir. A new one is about
	 * to be quarantined, and what it names (any folder with a `hooks`
	 * in it) must not be swept up as a new hand-off. */
	bool (*known)(void *data, const char *rel);
	void *known_data;
	char **link_targets;	/* roots added by following a symlink */
	char **bufs;		/* one getdents buffer per depth */
	struct parent_cache parents;
	/* What the walk saw at the top under the names always kept there
	 * (root_only, then .git): a DT_* type, or TOP_MISSING. Looked up
	 * instead of asking the kernel about each name again. */
	int top[ARRAY_SIZE(root_only) + 1];
	bool top_listed;
};

#define TOP_MISSING (-1)

static const char *top_name(size_t i)
{
	return i < ARRAY_SIZE(root_only) ? root_only[i] : ".git";
}

static void top_note(struct discover *d, const char *name, unsigned char type)
{
	/* every kept name but one starts with a dot */
	if (name[0] != '.' && name[0] != 's')
		return;
	for (size_t i = 0; i < ARRAY_SIZE(d->top); i++)
		if (streq(name, top_name(i)))
			d->top[i] = type;
}

enum top_answer {
	TOP_ASK,	/* not known from the listing: ask the kernel */
	TOP_ABSENT,	/* nothing can be reached at rel without a symlink */
	TOP_NOT_LINK,	/* rel is there, and is no symlink */
};

/* What the listing of the top says about rel, without a system call. */
static enum top_answer top_lookup(const struct discover *d, const char *rel)
{
	if (!d->top_listed)
		return TOP_ASK;
	size_t n = strcspn(rel, "/");
	for (size_t i = 0; i < ARRAY_SIZE(d->top); i++) {
		const char *name = top_name(i);
		if (strlen(name) != n || strncmp(rel, name, n) != 0)
			continue;
		int t = d->top[i];
		if (t == TOP_MISSING)
			return TOP_ABSENT;
		if (rel[n])
			/* beneath it: only a directory leads there */
			return t == DT_DIR || t == DT_UNKNOWN ? TOP_ASK : TOP_ABSENT;
		return t == DT_LNK || t == DT_UNKNOWN ? TOP_ASK : TOP_NOT_LINK;
	}
	return TOP_ASK;
}

/* A path a git file names, absolute or relative to the worktree, as a
 * path below the workspace (pointing into *ret_abs), or NULL where it lies
 * outside: the command cannot write there. Lexical: a symlink on the way
 * is refused when the path is opened, so ".." cannot be made to mean
 * another place. */
static const char *below_workspace(const struct discover *d, const char *worktree, const char *value,
				   char **ret_abs)
{
	const char *ws = d->o->workspace;
	if (value[0] == '/') {
		*ret_abs = path_normalize(value);
	} else {
		_cleanup_free_ char *base = path_join(ws, worktree);
		_cleanup_free_ char *j = path_join(base, value);
		*ret_abs = path_normalize(j);
	}
	return path_is_beneath(*ret_abs, ws) ? path_below(*ret_abs, ws) : NULL;
}

static void add_hooks_path(struct discover *d, const char *worktree, const char *value)
{
	_cleanup_free_ char *home_path = NULL, *abs = NULL;
	if (str_empty(value))
		return;
	if (value[0] == '~') {
		/* ~user/ names another account's home: not this workspace's
		 * business unless that home holds it, which we do not guess. */
		if ((value[1] != '/' && value[1]) || str_empty(d->o->user_home))
			return;
		value = home_path = xstrcat3(d->o->user_home, "/", value + 1);
	}
	const char *rel = below_workspace(d, worktree, value, &abs);
	if (!rel)
		return;
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	/* A hooksPath of the workspace itself or of a git directory would
	 * make the whole tree (or every object) a hand-off; what git runs
	 * from it is the hooks by name. */
	if (!*rel || streq(base, ".git")) {
		for (size_t i = 0; i < ARRAY_SIZE(hook_names); i++)
			roots_add(&d->roots, rel_join(rel, hook_names[i]), ROOT_TREE);
		return;
	}
	roots_add(&d->roots, xstrdup(rel), ROOT_TREE);
}

static void add_config_hooks(struct discover *d, const char *worktree, const char *config_rel)
{
	if (d->known && !d->known(d->known_data, config_rel))
		return;
	if (top_lookup(d, config_rel) == TOP_ABSENT)
		return;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_small_cached(&d->parents, config_rel, GITCONFIG_MAX, &text, &len) < 0)
		return;
	_cleanup_free_ char *hp = gitconfig_hooks_path(text, len);
	if (hp)
		add_hooks_path(d, worktree, hp);
}

/* A `.git` file: "gitdir: PATH", relative to the directory holding it. */
static void add_gitfile(struct discover *d, int dfd, const char *worktree)
{
	_cleanup_free_ char *self = rel_join(worktree, ".git");
	if (d->known && !d->known(d->known_data, self))
		return;
	int fd = openat(dfd, ".git", O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_small_fd(fd, GITFILE_MAX, &text, &len) < 0)
		return;
	if (strlen(text) != len || !str_has_prefix(text, "gitdir: "))
		return;
	char *v = text + strlen("gitdir: ");
	v[strcspn(v, "\n")] = '\0';
	size_t n = strlen(v);
	while (n && (v[n - 1] == '\r' || v[n - 1] == ' ' || v[n - 1] == '\t'))
		v[--n] = '\0';
	if (!n)
		return;
	_cleanup_free_ char *abs = NULL;
	const char *rel = below_workspace(d, worktree, v, &abs);
	if (!rel)
		return;
	if (!*rel) {
		/* "gitdir: ." at the top: the workspace is the git directory */
		for (size_t i = 0; i < ARRAY_SIZE(gitdir_members); i++)
			roots_add(&d->roots, xstrdup(gitdir_members[i]), ROOT_TREE);
	} else {
		roots_add(&d->roots, xstrdup(rel), ROOT_GITDIR);
	}
	_cleanup_free_ char *config = rel_join(rel, "config");
	add_config_hooks(d, worktree, config);
}

/* A repository whose working tree is `worktree`, with a `.git` entry of
 * the given d_type in dfd. */
static void found_repo(struct discover *d, int dfd, const char *worktree, unsigned char type)
{
	roots_add(&d->roots, rel_join(worktree, ".git"), ROOT_GITDIR);
	if (d->global_hooks)
		add_hooks_path(d, worktree, d->global_hooks);
	if (type == DT_DIR) {
		_cleanup_free_ char *config = rel_join(worktree, ".git/config");
		add_config_hooks(d, worktree, config);
	} else if (type == DT_REG) {
		add_gitfile(d, dfd, worktree);
	}
	/* a symlink or anything else is kept as itself, never followed */
}

/* Named to the caller by path; why is for the reader of this code. */
static void note_unguarded(char ***list, const char *rel, const char *why _unused_)
{
	if (!strv_contains(*list, str_empty(rel) ? "." : rel))
		strv_add(list, str_empty(rel) ? "." : rel);
}

/* Reads a directory a getdents at a time into the caller's buffer of
 * GETDENTS_BUF bytes. */
struct dir_iter {
	int fd;
	char *buf;
	ssize_t len, off;
};

/* The next entry but "." and "..", NULL at the end (*ret_err 0) or on a
 * failure (*ret_err -errno). */
static const struct dirent64 *dir_next(struct dir_iter *it, int *ret_err)
{
	*ret_err = 0;
	for (;;) {
		while (it->off < it->len) {
			const struct dirent64 *de = (const struct dirent64 *)(it->buf + it->off);
			it->off += de->d_reclen;
			const char *name = de->d_name;
			if (!(name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]))))
				return de;
		}
		it->len = getdents64(it->fd, it->buf, GETDENTS_BUF);
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
}

/* Every `.git` beneath the workspace. One open and a few getdents per
 * directory, d_type instead of a stat, symlinks never followed. */
static int walk_repos(struct discover *d, int dfd, const char *rel, unsigned depth, bool *ret_root_git)
{
	if (depth >= WALK_DEPTH_MAX) {
		note_unguarded(&d->unguarded, rel, "too deep to look for repositories");
		return 0;
	}
	if (!d->bufs[depth])
		d->bufs[depth] = xmalloc(GETDENTS_BUF);
	struct dir_iter it = { .fd = dfd, .buf = d->bufs[depth] };
	const struct dirent64 *de;
	int err;
	while ((de = dir_next(&it, &err))) {
		const char *name = de->d_name;
		unsigned char type = de->d_type;
		if (type == DT_UNKNOWN) {
			struct stat st;
			if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISREG(st.st_mode) ? DT_REG
				: S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN;
		}
		if (depth == 0)
			top_note(d, name, type);
		if (streq(name, ".git")) {
			if (depth == 0)
				*ret_root_git = true;
			found_repo(d, dfd, rel, type);
			continue;
		}
		if (type != DT_DIR)
			continue;
		_cleanup_close_ int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_free_ char *crel = rel_join(rel, name);
		if (cfd < 0) {
			/* gone, or replaced by a symlink, since it was listed */
			if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP)
				continue;
			note_unguarded(&d->unguarded, crel, "cannot be searched for repositories");
			continue;
		}
		int r = walk_repos(d, cfd, crel, depth + 1, ret_root_git);
		if (r < 0)
			note_unguarded(&d->unguarded, crel, "cannot be searched for repositories");
	}
	return err;
}

static char *read_user_hooks_path(const char *home)
{
	if (str_empty(home))
		return NULL;
	/* git reads ~/.config/git/config first, ~/.gitconfig after: the
	 * later value wins. These are the user's own files, outside the
	 * workspace: following a symlink to them (a dotfiles checkout) is
	 * what git does too. */
	static const char *const files[] = { ".config/git/config", ".gitconfig" };
	char *found = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *path = path_join(home, files[i]);
		int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		_cleanup_free_ char *text = NULL;
		size_t len = 0;
		if (read_small_fd(fd, GITCONFIG_MAX, &text, &len) < 0)
			continue;
		char *v = gitconfig_hooks_path(text, len);
		if (v) {
			free(found);
			found = v;
		}
	}
	return found;
}

/* Where a symlink at rel points, as a workspace-relative path, or NULL
 * when that is outside the workspace or cannot be told without following
 * a symlink: only leading ".." are taken, and they start from rel's own
 * directory, which was reached without symlinks, so they mean what they
 * say. */
static char *symlink_target_beneath(struct discover *d, const char *rel)
{
	if (top_lookup(d, rel) != TOP_ASK)
		return NULL;
	const char *name;
	int pfd = parent_cached(&d->parents, rel, &name);
	if (pfd < 0)
		return NULL;
	char buf[PATH_MAX + 1];
	ssize_t n = readlinkat(pfd, name, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	bool seen_name = false;
	for (const char *p = buf; *p;) {
		const char *end = strchrnul(p, '/');
		size_t len = (size_t)(end - p);
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (seen_name)
				return NULL;
		} else if (len && !(len == 1 && p[0] == '.')) {
			seen_name = true;
		}
		p = *end ? end + 1 : end;
	}
	const char *ws = d->o->workspace;
	_cleanup_free_ char *abs = NULL;
	if (buf[0] == '/') {
		abs = path_normalize(buf);
	} else {
		const char *base;
		_cleanup_free_ char *parent = path_parent(rel, &base);
		_cleanup_free_ char *dir = path_join(ws, parent);
		_cleanup_free_ char *j = path_join(dir, buf);
		abs = path_normalize(j);
	}
	if (!path_is_beneath(abs, ws) || streq(abs, ws))
		return NULL;
	return xstrdup(path_below(abs, ws));
}

/* A hand-off that is a symlink to a place inside the workspace hands
 * off that place too: `.git/hooks -> ../tools/hooks` is common, and git
 * runs what it finds there. The symlink itself stays guarded as a
 * symlink; what it points at becomes a root of the same kind. Nothing
 * outside the workspace is ever read through it. */
static void add_symlink_targets(struct discover *d)
{
	/* a chain, or a loop, ends here */
	size_t budget = 64 + d->roots.n;
	for (size_t i = 0; i < d->roots.n && budget; i++) {
		_cleanup_free_ char *path = xstrdup(d->roots.v[i].path);
		enum root_kind kind = d->roots.v[i].kind;
		size_t n_rel = kind == ROOT_GITDIR ? 1 + ARRAY_SIZE(gitdir_members) : 1;
		for (size_t k = 0; k < n_rel && budget; k++) {
			_cleanup_free_ char *rel = k == 0 ? xstrdup(path) : rel_join(path, gitdir_members[k - 1]);
			_cleanup_free_ char *target = symlink_target_beneath(d, rel);
			if (!target || strv_contains(d->link_targets, target))
				continue;
			budget--;
			strv_add(&d->link_targets, target);
			roots_add(&d->roots, TAKE_PTR(target), k == 0 ? kind : ROOT_TREE);
		}
	}
}

static int relpath_valid(const char *rel)
{
	if (str_empty(rel) || rel[0] == '/' || str_has_control(rel))
		return -EINVAL;
	for (const char *p = rel;;) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

/* The hand-off roots of the workspace as it is now. */
static int discover_roots(const struct guard_options *o, int wfd, struct discover *d)
{
	d->o = o;
	d->wfd = wfd;
	d->parents = (struct parent_cache){ .wfd = wfd, .fd = -1 };
	for (size_t i = 0; i < ARRAY_SIZE(d->top); i++)
		d->top[i] = TOP_MISSING;
	d->global_hooks = read_user_hooks_path(o->user_home);
	d->bufs = xcalloc(WALK_DEPTH_MAX, sizeof(char *));

	for (size_t i = 0; i < ARRAY_SIZE(root_only); i++)
		roots_add(&d->roots, xstrdup(root_only[i]), ROOT_TREE);
	for (size_t i = 0; o->extra && o->extra[i]; i++) {
		_cleanup_free_ char *norm = path_normalize(o->extra[i]);
		if (relpath_valid(o->extra[i]) < 0 || streq(norm, "/"))
			return -EINVAL;
		roots_add(&d->roots, xstrdup(norm + 1), ROOT_TREE);
	}

	/* wfd is the workspace opened for reading: listed from its start */
	if (lseek(wfd, 0, SEEK_SET) < 0)
		return -errno;
	bool root_git = false;
	int r = walk_repos(d, wfd, "", 0, &root_git);
	if (r < 0)
		return r;
	d->top_listed = true;
	/* .git/hooks and .git/config are hand-offs before `git init`. */
	if (!root_git)
		found_repo(d, wfd, "", DT_UNKNOWN);
	add_symlink_targets(d);
	roots_normalize(&d->roots);
	return 0;
}

static void discover_done(struct discover *d)
{
	parent_cache_done(&d->parents);
	roots_free(&d->roots);
	strv_free(d->unguarded);
	strv_free(d->link_targets);
	free(d->global_hooks);
	if (d->bufs)
		for (size_t i = 0; i < WALK_DEPTH_MAX; i++)
			free(d->bufs[i]);
	free(d->bufs);
	*d = (struct discover){ 0 };
}

/* Opened for reading, not O_PATH: the walk lists it through this very
 * descriptor. */
static int open_workspace(const struct guard_options *o)
{
	if (!o || !path_is_absolute(o->workspace))
		return -EINVAL;
	int fd = open(o->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int guard_discover(const struct guard_options *o, char ***ret_paths)
{
	_cleanup_close_ int wfd = open_workspace(o);
	if (wfd < 0)
		return wfd;
	struct discover d = { 0 };
	int r = discover_roots(o, wfd, &d);
	if (r < 0) {
		discover_done(&d);
		return r;
	}
	char **out = xcalloc(d.roots.n * ARRAY_SIZE(gitdir_members) + 1, sizeof(char *));
	size_t n = 0;
	for (size_t i = 0; i < d.roots.n; i++) {
		const struct root *rt = &d.roots.v[i];
		if (rt->kind == ROOT_GITDIR) {
			const char *name;
			int pfd = parent_cached(&d.parents, rt->path, &name);
			struct stat st;
			bool is_dir_or_absent = pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
						S_ISDIR(st.st_mode);
			if (is_dir_or_absent) {
				for (size_t k = 0; k < ARRAY_SIZE(gitdir_members); k++)
					out[n++] = rel_join(rt->path, gitdir_members[k]);
				continue;
			}
		}
		out[n++] = xstrdup(rt->path);
	}
	discover_done(&d);
	*ret_paths = out;
	return 0;
}

/* ---------------------------------------------------------------------
 * The baseline: every entry beneath the roots, as it was
 * ------------------------------------------------------------------ */

enum entry_type {
	ENTRY_REG = 1,
	ENTRY_DIR,
	ENTRY_LNK,
	ENTRY_OTHER,	/* fifo, socket, device */
};

enum entry_flag {
	ENTRY_COPIED = 1 << 0,		/* the content is in an object */
	ENTRY_UNLISTED = 1 << 1,	/* a directory that could not be read */
	ENTRY_GITDIR = 1 << 2,		/* the top of a git directory: only its
					 * hooks and config are kept */
};

/* What identifies one version of a file without reading it. ctime cannot
 * be set from userspace, so an equal fingerprint means an unchanged file,
 * unless the change fell in the same clock tick (see entry_racy()). */
struct fingerprint {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
};

struct entry {
	char *path;
	uint8_t type, flags;
	uint32_t mode;
	struct fingerprint fp;
	uint64_t hash;		/* FNV-1a of the content, when copied */
	char *target;		/* a symlink's */
	char *object;		/* the copy's name in objects/ */
};

struct baseline {
	char *workspace;
	int64_t taken_ns;	/* CLOCK_REALTIME when the snapshot began */
	struct roots roots;
	struct entry *v;
	size_t n, cap;
};

/* Timestamps come from a clock that ticks coarsely (a jiffy; a second
 * on some network filesystems): a file changed within this window of the
 * snapshot may change again with the same fingerprint, so its content is
 * compared instead ("racy git" in git's index). */
#define RACY_NS ((int64_t)2000000000)

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
#define FNV_INIT 0xcbf29ce484222325ULL

static int64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static struct fingerprint fingerprint_of(const struct stat *st)
{
	return (struct fingerprint){
		.dev = (uint64_t)st->st_dev,
		.ino = (uint64_t)st->st_ino,
		.size = (uint64_t)st->st_size,
		.mtime_ns = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec,
		.ctime_ns = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec,
	};
}

static bool fingerprint_eq(const struct fingerprint *a, const struct fingerprint *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime_ns == b->mtime_ns &&
	       a->ctime_ns == b->ctime_ns;
}

static bool entry_racy(const struct baseline *b, const struct entry *e)
{
	return e->fp.ctime_ns + RACY_NS >= b->taken_ns;
}

static uint8_t entry_type_of(mode_t m)
{
	return S_ISREG(m) ? ENTRY_REG : S_ISDIR(m) ? ENTRY_DIR : S_ISLNK(m) ? ENTRY_LNK : ENTRY_OTHER;
}

static void entry_done(struct entry *e)
{
	free(e->path);
	free(e->target);
	free(e->object);
}

static void baseline_free(struct baseline *b)
{
	free(b->workspace);
	roots_free(&b->roots);
	for (size_t i = 0; i < b->n; i++)
		entry_done(&b->v[i]);
	free(b->v);
	*b = (struct baseline){ 0 };
}

static struct entry *baseline_push(struct baseline *b)
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

static void baseline_sort(struct baseline *b)
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

static const struct entry *baseline_find(const struct baseline *b, const char *path)
{
	ssize_t i = baseline_index(b, path);
	return i < 0 ? NULL : &b->v[i];
}

/* The names of a directory entry's children in the baseline, in order.
 * Descendants follow their directory (path_cmp), so this is one scan. */
static char **baseline_children(const struct baseline *b, const char *dir)
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

static void report_unguarded(struct guard_report *rep, const char *rel)
{
	if (!strv_contains(rep->unguarded, rel))
		strv_add(&rep->unguarded, rel);
}

static int strcmp_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A directory's entry names, sorted; "." and ".." left out. */
static int list_dir(int fd, char ***ret)
{
	char **v = NULL;
	size_t n = 0, cap = 0;
	_cleanup_free_ char *buf = xmalloc(GETDENTS_BUF);
	struct dir_iter it = { .fd = fd, .buf = buf };
	const struct dirent64 *de;
	int err;
	while ((de = dir_next(&it, &err))) {
		if (n + 2 > cap) {
			cap = cap ? cap * 2 : 16;
			v = xreallocarray(v, cap, sizeof(char *));
		}
		v[n++] = xstrdup(de->d_name);
		v[n] = NULL;
	}
	if (err < 0) {
		strv_free(v);
		return err;
	}
	if (!v)
		v = strv_new();
	qsort(v, n, sizeof(char *), strcmp_ptr);
	*ret = v;
	return 0;
}

/* ---------------------------------------------------------------------
 * Objects: the copies of baseline contents, in state/objects/
 * ------------------------------------------------------------------ */

/* state/objects/, opened when first needed: a workspace without a file
 * to keep, or one that changed nothing, never needs it. */
struct objdir {
	int dirfd;	/* the state directory, borrowed */
	int fd;
};

static int objdir_fd(struct objdir *od)
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

static void objdir_close(struct objdir *od)
{
	if (od->fd >= 0)
		close(od->fd);
	od->fd = -1;
}

/* Reads an object and checks it against what the manifest says: a copy
 * cut short by a crash must never be written back as the old content. */
static int object_read(struct objdir *od, const struct entry *e, char **ret)
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
static int content_matches(int fd, struct objdir *od, const struct entry *e, bool *ret)
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
		size_t len;
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

static int snap_tree(struct snapshot *s, int dfd, const char *name, const char *rel, bool gitdir_top, unsigned depth)
{
	struct stat st;
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -errno;
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

	if (gitdir_top)
		e->flags |= ENTRY_GITDIR;
	_cleanup_close_ int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0 || depth >= WALK_DEPTH_MAX) {
		e->flags |= ENTRY_UNLISTED;
		report_unguarded(s->rep, rel);
		return 0;
	}
	_cleanup_strv_ char **names = NULL;
	if (gitdir_top) {
		names = strv_new();
		for (size_t i = 0; i < ARRAY_SIZE(gitdir_members); i++)
			strv_add(&names, gitdir_members[i]);
	} else {
		r = list_dir(cfd, &names);
		if (r < 0) {
			s->b->v[idx].flags |= ENTRY_UNLISTED;
			report_unguarded(s->rep, rel);
			return 0;
		}
	}
	for (size_t i = 0; names[i]; i++) {
		_cleanup_free_ char *crel = rel_join(rel, names[i]);
		r = snap_tree(s, cfd, names[i], crel, false, depth + 1);
		if (r < 0)
			return r;
	}
	return 0;
}

static int baseline_take(const struct guard_options *o, int wfd, struct objdir *od, const struct baseline *prev,
			 struct baseline *ret, struct guard_report *rep)
{
	struct baseline b = { .workspace = xstrdup(o->workspace), .taken_ns = realtime_ns() };
	struct discover d = { 0 };
	int r = discover_roots(o, wfd, &d);
	if (r < 0)
		goto out_free;
	for (size_t i = 0; d.unguarded && d.unguarded[i]; i++)
		report_unguarded(rep, d.unguarded[i]);
	b.roots = d.roots;
	d.roots = (struct roots){ 0 };

	struct snapshot s = {
		.wfd = wfd,
		.od = od,
		.file_cap = o->file_cap ? o->file_cap : FILE_CAP_DEFAULT,
		.total_cap = o->total_cap ? o->total_cap : TOTAL_CAP_DEFAULT,
		.b = &b,
		.prev = prev,
		.rep = rep,
	};
	for (size_t i = 0; i < b.roots.n; i++) {
		const struct root *rt = &b.roots.v[i];
		const char *name;
		/* a name at the top costs one fstatat, in snap_tree */
		int pfd = parent_cached(&d.parents, rt->path, &name);
		if (pfd < 0) {
			if (errno_is_absent(pfd))
				continue;
			r = pfd;
			goto out_free;
		}
		r = snap_tree(&s, pfd, name, rt->path, rt->kind == ROOT_GITDIR, 0);
		if (r < 0)
			goto out_free;
	}
	baseline_sort(&b);
	*ret = b;
	b = (struct baseline){ 0 };
out_free:
	discover_done(&d);
	baseline_free(&b);
	return r;
}

static size_t baseline_files(const struct baseline *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].type == ENTRY_REG)
			n++;
	return n;
}

/* ---------------------------------------------------------------------
 * The manifest: the baseline on disk. Binary and length-prefixed, so a
 * file name may hold any byte; a checksum at the end, so a torn write is
 * refused rather than believed.
 * ------------------------------------------------------------------ */

#define MANIFEST_MAGIC "stockade guard manifest\n"
#define MANIFEST_VERSION 1
#define NO_STRING UINT32_MAX

struct wbuf {
	char *p;
	size_t n, cap;
};

static void wb_put(struct wbuf *w, const void *data, size_t n)
{
	if (w->n + n > w->cap) {
		w->cap = (w->n + n) * 2 + 256;
		w->p = xrealloc(w->p, w->cap);
	}
	memcpy(w->p + w->n, data, n);
	w->n += n;
}

static void wb_u8(struct wbuf *w, uint8_t v)
{
	wb_put(w, &v, 1);
}

static void wb_u32(struct wbuf *w, uint32_t v)
{
	wb_put(w, &v, sizeof(v));
}

static void wb_u64(struct wbuf *w, uint64_t v)
{
	wb_put(w, &v, sizeof(v));
}

static void wb_str(struct wbuf *w, const char *s)
{
	if (!s) {
		wb_u32(w, NO_STRING);
		return;
	}
	size_t n = strlen(s);
	wb_u32(w, (uint32_t)n);
	wb_put(w, s, n);
}

struct rbuf {
	const char *p;
	size_t n, off;
	bool bad;
};

static bool rb_get(struct rbuf *r, void *out, size_t n)
{
	if (r->bad || r->n - r->off < n) {
		r->bad = true;
		memset(out, 0, n);
		return false;
	}
	memcpy(out, r->p + r->off, n);
	r->off += n;
	return true;
}

static uint8_t rb_u8(struct rbuf *r)
{
	uint8_t v;
	rb_get(r, &v, sizeof(v));
	return v;
}

static uint32_t rb_u32(struct rbuf *r)
{
	uint32_t v;
	rb_get(r, &v, sizeof(v));
	return v;
}

static uint64_t rb_u64(struct rbuf *r)
{
	uint64_t v;
	rb_get(r, &v, sizeof(v));
	return v;
}

static char *rb_str(struct rbuf *r)
{
	uint32_t n = rb_u32(r);
	if (r->bad || n == NO_STRING)
		return NULL;
	if (r->n - r->off < n) {
		r->bad = true;
		return NULL;
	}
	const char *s = r->p + r->off;
	r->off += n;
	if (memchr(s, '\0', n)) {
		r->bad = true;
		return NULL;
	}
	return xstrndup(s, n);
}

static bool object_name_valid(const char *s)
{
	if (str_empty(s))
		return false;
	for (; *s; s++)
		if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f') || *s == '-'))
			return false;
	return true;
}

static void manifest_render(const struct baseline *b, struct wbuf *w)
{
	wb_put(w, MANIFEST_MAGIC, strlen(MANIFEST_MAGIC));
	wb_u32(w, MANIFEST_VERSION);
	wb_str(w, b->workspace);
	wb_u64(w, (uint64_t)b->taken_ns);
	wb_u32(w, (uint32_t)b->roots.n);
	for (size_t i = 0; i < b->roots.n; i++) {
		wb_u8(w, (uint8_t)b->roots.v[i].kind);
		wb_str(w, b->roots.v[i].path);
	}
	wb_u64(w, b->n);
	for (size_t i = 0; i < b->n; i++) {
		const struct entry *e = &b->v[i];
		wb_str(w, e->path);
		wb_u8(w, e->type);
		wb_u8(w, e->flags);
		wb_u32(w, e->mode);
		wb_u64(w, e->fp.dev);
		wb_u64(w, e->fp.ino);
		wb_u64(w, e->fp.size);
		wb_u64(w, (uint64_t)e->fp.mtime_ns);
		wb_u64(w, (uint64_t)e->fp.ctime_ns);
		wb_u64(w, e->hash);
		wb_str(w, e->target);
		wb_str(w, e->object);
	}
	wb_u64(w, fnv1a(FNV_INIT, w->p, w->n));
}

static int manifest_parse(const char *data, size_t n, struct baseline *ret)
{
	size_t magic = strlen(MANIFEST_MAGIC);
	if (n < magic + sizeof(uint64_t) || memcmp(data, MANIFEST_MAGIC, magic) != 0)
		return -EBADMSG;
	uint64_t sum;
	memcpy(&sum, data + n - sizeof(sum), sizeof(sum));
	if (fnv1a(FNV_INIT, data, n - sizeof(sum)) != sum)
		return -EBADMSG;
	struct rbuf r = { .p = data, .n = n - sizeof(sum), .off = magic };
	if (rb_u32(&r) != MANIFEST_VERSION)
		return -EBADMSG;

	struct baseline b = { 0 };
	int ret_r = -EBADMSG;
	b.workspace = rb_str(&r);
	b.taken_ns = (int64_t)rb_u64(&r);
	uint32_t nroots = rb_u32(&r);
	if (r.bad || !b.workspace || nroots > r.n)
		goto out_free;
	for (uint32_t i = 0; i < nroots; i++) {
		uint8_t kind = rb_u8(&r);
		char *path = rb_str(&r);
		if (r.bad || !path || relpath_valid(path) < 0 || kind > ROOT_GITDIR) {
			free(path);
			goto out_free;
		}
		roots_add(&b.roots, path, (enum root_kind)kind);
	}
	uint64_t nentries = rb_u64(&r);
	if (r.bad || nentries > r.n)
		goto out_free;
	for (uint64_t i = 0; i < nentries; i++) {
		struct entry *e = baseline_push(&b);
		e->path = rb_str(&r);
		e->type = rb_u8(&r);
		e->flags = rb_u8(&r);
		e->mode = rb_u32(&r);
		e->fp.dev = rb_u64(&r);
		e->fp.ino = rb_u64(&r);
		e->fp.size = rb_u64(&r);
		e->fp.mtime_ns = (int64_t)rb_u64(&r);
		e->fp.ctime_ns = (int64_t)rb_u64(&r);
		e->hash = rb_u64(&r);
		e->target = rb_str(&r);
		e->object = rb_str(&r);
		if (r.bad || !e->path || relpath_valid(e->path) < 0 || e->type < ENTRY_REG || e->type > ENTRY_OTHER ||
		    entry_type_of(e->mode) != e->type || (e->type == ENTRY_LNK && !e->target) ||
		    ((e->flags & ENTRY_COPIED) && (!object_name_valid(e->object) || e->type != ENTRY_REG)))
			goto out_free;
	}
	if (r.off != r.n)
		goto out_free;
	for (size_t i = 1; i < b.n; i++)
		if (path_cmp(b.v[i - 1].path, b.v[i].path) >= 0)
			goto out_free;
	*ret = b;
	b = (struct baseline){ 0 };
	ret_r = 0;
out_free:
	baseline_free(&b);
	return ret_r;
}

/* The manifest parsed, and its bytes as they are on disk in *ret_raw,
 * for manifest_current(). */
static int manifest_load(int dirfd, struct baseline *ret, struct wbuf *ret_raw)
{
	_cleanup_close_ int fd = openat(dirfd, "manifest", O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EBADMSG;
	_cleanup_free_ char *data = xmalloc((size_t)st.st_size + 1);
	size_t len;
	int r = read_all(fd, data, (size_t)st.st_size, &len);
	if (r < 0)
		return r;
	if (len != (size_t)st.st_size)
		return -EBADMSG;
	r = manifest_parse(data, len, ret);
	if (r == 0)
		*ret_raw = (struct wbuf){ .p = TAKE_PTR(data), .n = len, .cap = len + 1 };
	return r;
}

/* Whether next is the baseline the manifest already holds, so that
 * nothing need be written: the same bytes but for the time it was taken,
 * which is then left as it was. An older time only makes more entries
 * racy (compared by content rather than trusted by fingerprint); when an
 * entry racy then is not racy now, the manifest is written after all, so
 * that the compare is not repeated run after run. */
static bool manifest_current(const struct baseline *prev, const struct wbuf *raw, struct baseline *next)
{
	int64_t taken = next->taken_ns;
	next->taken_ns = prev->taken_ns;
	struct wbuf w = { 0 };
	manifest_render(next, &w);
	bool same = w.n == raw->n && memcmp(w.p, raw->p, w.n) == 0;
	free(w.p);
	for (size_t i = 0; same && i < next->n; i++) {
		const struct entry *e = &next->v[i];
		if (e->type == ENTRY_REG && entry_racy(prev, e) && e->fp.ctime_ns + RACY_NS < taken)
			same = false;
	}
	if (!same)
		next->taken_ns = taken;
	return same;
}

static int manifest_store(int dirfd, const struct baseline *b)
{
	struct wbuf w = { 0 };
	manifest_render(b, &w);
	_cleanup_free_ char *data = w.p;
	_cleanup_free_ char *tmp = xasprintf("manifest.tmp-%d", (int)getpid());
	unlinkat(dirfd, tmp, 0);
	_cleanup_close_ int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	int r = write_all(fd, data, w.n);
	if (r == 0 && close(TAKE_FD(fd)) < 0)
		r = -errno;
	if (r == 0 && renameat(dirfd, tmp, dirfd, "manifest") < 0)
		r = -errno;
	if (r < 0)
		unlinkat(dirfd, tmp, 0);
	return r;
}

/* Objects the new manifest does not name, and copies left half-written
 * by a killed run. */
static void objects_collect(struct objdir *od, const struct baseline *b)
{
	/* not made here: none yet, nothing to collect */
	_cleanup_close_ int fd = od->fd >= 0 ? openat(od->fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
					     : openat(od->dirfd, "objects", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_strv_ char **names = NULL;
	if (fd < 0 || list_dir(fd, &names) < 0)
		return;
	size_t n = 0;
	_cleanup_free_ const char **used = xcalloc(b->n + 1, sizeof(char *));
	for (size_t i = 0; i < b->n; i++)
		if (b->v[i].object)
			used[n++] = b->v[i].object;
	qsort(used, n, sizeof(char *), strcmp_ptr);
	for (size_t i = 0; names[i]; i++) {
		const char *key = names[i];
		if (!bsearch(&key, used, n, sizeof(char *), strcmp_ptr))
			unlinkat(fd, names[i], 0);
	}
}

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
		char *j = rel_join(qparent, comp);
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
			_cleanup_free_ char *qrel = rel_join(qparent, name);
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
		int r = list_dir(in, &names);
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
	int r = list_dir(fd, &names);
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
	unsigned long counter;
};

static void undo_fail(struct undo *u, int r)
{
	if (r < 0 && u->error == 0)
		u->error = r;
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
		_cleanup_free_ char *crel = rel_join(rel, names[i]);
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
		undo_fail(u, r);
		return;
	}
	bool unrestorable = false;
	r = b ? restore_entry(u, dfd, name, rel, b, &unrestorable, depth) : 0;
	undo_fail(u, r);
	report_change(u->rep, !b ? GUARD_CREATED : unrestorable ? GUARD_UNRESTORABLE : GUARD_CHANGED, rel, q);
}

static void undo_entry(struct undo *u, int dfd, const char *name, const char *rel, const struct entry *b,
		       bool gitdir_top, unsigned depth);

static void undo_children(struct undo *u, int fd, const char *rel, bool gitdir_top, unsigned depth)
{
	_cleanup_strv_ char **names = NULL;
	if (gitdir_top) {
		names = strv_new();
		for (size_t i = 0; i < ARRAY_SIZE(gitdir_members); i++)
			strv_add(&names, gitdir_members[i]);
	} else {
		_cleanup_strv_ char **now = NULL;
		int r = list_dir(fd, &now);
		if (r < 0) {
			undo_fail(u, r);
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
		_cleanup_free_ char *crel = rel_join(rel, names[i]);
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
		undo_fail(u, -errno);
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
		undo_fail(u, r);
		return;
	}
	bool same_inode = fp.dev == b->fp.dev && fp.ino == b->fp.ino;
	if (same && (same_inode || (st->st_mode & 07777) == (b->mode & 07777))) {
		/* `chmod +x` turns a sample into a hook. Only on the file the
		 * baseline saw: another inode may be a hard link to a file
		 * elsewhere, and is replaced instead. */
		if ((st->st_mode & 07777) != (b->mode & 07777)) {
			if (fchmod(fd, b->mode & 07777) < 0)
				undo_fail(u, -errno);
			else
				report_change(u->rep, GUARD_CHANGED, rel, NULL);
		}
		return;
	}
	_cleanup_free_ char *tmp = NULL;
	r = write_restore_tmp(u, dfd, b, &tmp);
	if (r < 0) {
		undo_fail(u, r);
		return;
	}
	char *q = NULL;
	r = quarantine_move(&u->q, dfd, name, rel, &q);
	if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
		r = -errno;
	if (r < 0) {
		unlinkat(dfd, tmp, 0);
		undo_fail(u, r);
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
		undo_fail(u, -errno);
		return;
	}
	if (!b && !have)
		return;
	if (b && (b->flags & ENTRY_GITDIR))
		gitdir_top = true;
	if (depth >= WALK_DEPTH_MAX) {
		undo_fail(u, -ELOOP);
		return;
	}

	if (!b) {
		/* a new repository: its objects stay, its hooks and config go */
		if (gitdir_top && S_ISDIR(st.st_mode)) {
			_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				undo_fail(u, -errno);
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
		undo_fail(u, r);
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
			undo_fail(u, -errno);
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
		undo_fail(u, -errno);
		return;
	}
	bool mode_changed = (st.st_mode & 07777) != (b->mode & 07777);
	if (mode_changed && (st.st_mode & 0700) != 0700 && fchmod(fd, (st.st_mode & 07777) | 0700) < 0)
		undo_fail(u, -errno);
	if (!(b->flags & ENTRY_UNLISTED))
		undo_children(u, fd, rel, gitdir_top, depth);
	if (mode_changed) {
		if (fchmod(fd, b->mode & 07777) < 0)
			undo_fail(u, -errno);
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

static void undo_root(struct undo *u, const struct root *rt)
{
	const struct entry *b = baseline_find(u->b, rt->path);
	const char *name;
	_cleanup_close_ int owned = -1;
	int pfd = parent_fd(u->wfd, rt->path, &name, &owned);
	if (pfd < 0) {
		if (!errno_is_absent(pfd)) {
			undo_fail(u, pfd);
			return;
		}
		/* nothing was there, and nothing can be reached there now */
		if (!b)
			return;
		owned = make_parents(u, rt->path);
		if (owned < 0) {
			undo_fail(u, owned);
			return;
		}
		pfd = owned;
	}
	undo_entry(u, pfd, name, rt->path, b, rt->kind == ROOT_GITDIR, 0);
}

static bool file_in_baseline(void *data, const char *rel)
{
	const struct entry *e = baseline_find(data, rel);
	return e && e->type == ENTRY_REG;
}

/* Every root of the baseline first; then, on the workspace as restored,
 * the roots that are new (a repository made during the run), whose
 * whole content is new. */
static int undo_all(const struct guard_options *o, int wfd, struct objdir *od, const struct baseline *b,
		    struct guard_report *rep)
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

	struct discover d = {
		.known = file_in_baseline,
		.known_data = (void *)b,
	};
	int r = discover_roots(o, wfd, &d);
	if (r < 0) {
		undo_fail(&u, r);
	} else {
		struct roots all = { 0 };
		for (size_t i = 0; i < b->roots.n; i++)
			roots_add(&all, xstrdup(b->roots.v[i].path), b->roots.v[i].kind);
		for (size_t i = 0; i < d.roots.n; i++)
			roots_add(&all, xstrdup(d.roots.v[i].path), d.roots.v[i].kind);
		roots_normalize(&all);
		for (size_t i = 0; i < all.n; i++) {
			const struct root *old = roots_find(&b->roots, all.v[i].path);
			if (old && old->kind == all.v[i].kind)
				continue;
			undo_root(&u, &all.v[i]);
		}
		roots_free(&all);
		for (size_t i = 0; d.unguarded && d.unguarded[i]; i++)
			report_unguarded(rep, d.unguarded[i]);
	}
	discover_done(&d);
	if (u.q.fd >= 0)
		close(u.q.fd);
	free(u.q.dir);
	return u.error;
}

/* ---------------------------------------------------------------------
 * The state directory of one workspace, state_dir/guard/<hash>/: the
 * manifest, objects/, and lock.
 *
 * lock is at once the mutex and the register of runs under way, with
 * open file description locks (F_OFD_*), which belong to an open file and
 * vanish with it, however its process ended:
 *   byte 0       the mutex, held for the length of a begin or an end;
 *   byte n >= 1  a slot, held by one run from its begin to its end.
 * "Every other run is over" is then "no byte past 0 is locked but by me",
 * one F_OFD_GETLK: a killed run leaves nothing to clean up, and a reused
 * pid cannot pass for a live run.
 *
 * A lock cannot tell that a run began and never ended; the first byte of
 * the file, the run mark, does: '1' from a begin on a clean baseline
 * until an end that finds no other run under way, then '0' (no byte: a
 * new file, clean). A mark with no run under way is a killed run, undone
 * by the next begin. It is one byte written in place; with it, a run in
 * an unchanged workspace writes nothing else to the state directory.
 *
 * The descriptor is O_CLOEXEC, so the command does not hold it. What
 * stockade forks without exec (the namespace jail's init) shares it, and
 * dies with stockade.
 * ------------------------------------------------------------------ */

#define SLOT_MAX 4096

/* Opens the state directory of the workspace, made when missing. */
static int state_open(const char *dir, int *ret_dirfd)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		int r = mkdir_private(dir, geteuid());
		if (r < 0)
			return r;
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int r = -errno;
		close(fd);
		return r;
	}
	/* As mkdir_private() checks: a directory someone else owns or may
	 * write could have its baseline swapped under us. */
	if (st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(fd);
		return -EPERM;
	}
	*ret_dirfd = fd;
	return 0;
}

static int lock_open(int dirfd)
{
	int fd = openat(dirfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

static int lock_range(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = len };
	while (fcntl(fd, cmd, &fl) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

static int mutex_take(int lockfd)
{
	return lock_range(lockfd, F_OFD_SETLKW, F_WRLCK, 0, 1);
}

static void mutex_drop(int lockfd)
{
	(void)lock_range(lockfd, F_OFD_SETLK, F_UNLCK, 0, 1);
}

/* Whether a slot is locked through another open file: a run under way
 * other than the caller's. */
static int runs_others(int lockfd, bool *ret)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1, .l_len = 0 };
	if (fcntl(lockfd, F_OFD_GETLK, &fl) < 0)
		return -errno;
	*ret = fl.l_type != F_UNLCK;
	return 0;
}

/* The first free slot, locked. Under the mutex, so no one races for it. */
static int slot_take(int lockfd)
{
	for (off_t k = 1; k <= SLOT_MAX; k++) {
		int r = lock_range(lockfd, F_OFD_SETLK, F_WRLCK, k, 1);
		if (r == 0)
			return 0;
		if (r != -EAGAIN && r != -EACCES)
			return r;
	}
	return -EBUSY;
}

static int mark_read(int lockfd, bool *ret)
{
	char c;
	ssize_t n = pread(lockfd, &c, 1, 0);
	if (n < 0)
		return -errno;
	/* anything but a clean mark counts as a run that never ended */
	*ret = n == 1 && c != '0';
	return 0;
}

static int mark_write(int lockfd, bool set)
{
	char c = set ? '1' : '0';
	ssize_t n = pwrite(lockfd, &c, 1, 0);
	return n == 1 ? 0 : n < 0 ? -errno : -EIO;
}

struct guard {
	struct guard_options o;	/* with copies of every string */
	char *dir;		/* state_dir/guard/<hash of the workspace> */
	int lockfd;		/* lock, holding this run's slot; -1 once ended */
};

static void options_copy(struct guard_options *dst, const struct guard_options *o)
{
	*dst = (struct guard_options){
		.workspace = xstrdup(o->workspace),
		.state_dir = xstrdup(o->state_dir),
		.user_home = o->user_home ? xstrdup(o->user_home) : NULL,
		.file_cap = o->file_cap,
		.total_cap = o->total_cap,
	};
	if (o->extra) {
		char **extra = strv_new();
		for (size_t i = 0; o->extra[i]; i++)
			strv_add(&extra, o->extra[i]);
		dst->extra = extra;
	}
}

static void options_done(struct guard_options *o)
{
	free((char *)o->workspace);
	free((char *)o->state_dir);
	free((char *)o->user_home);
	strv_free((char **)o->extra);
}

void guard_free(struct guard *g)
{
	if (!g)
		return;
	/* g->lockfd stays open on purpose: its slot is the run's
	 * registration, dropped when this process exits. */
	options_done(&g->o);
	free(g->dir);
	free(g);
}

static void report_unguarded_from(struct guard_report *rep, const struct baseline *b)
{
	for (size_t i = 0; i < b->n; i++) {
		const struct entry *e = &b->v[i];
		if ((e->type == ENTRY_REG && !(e->flags & ENTRY_COPIED)) || (e->flags & ENTRY_UNLISTED))
			report_unguarded(rep, e->path);
	}
}

static int options_check(const struct guard_options *o)
{
	if (!o || !path_is_absolute(o->workspace) || !path_is_absolute(o->state_dir))
		return -EINVAL;
	for (size_t i = 0; o->extra && o->extra[i]; i++)
		if (relpath_valid(o->extra[i]) < 0)
			return -EINVAL;
	return 0;
}

/* Under the mutex: the baseline this run begins with, and its slot. */
static int begin_locked(const struct guard_options *o, int wfd, int dirfd, int lockfd, struct guard_report *rep)
{
	struct objdir od = { .dirfd = dirfd, .fd = -1 };
	struct baseline prev = { 0 }, next = { 0 };
	struct wbuf raw = { 0 };
	bool marked = false, others = false;
	int r = mark_read(lockfd, &marked);
	if (r == 0)
		r = runs_others(lockfd, &others);
	if (r < 0)
		return r;
	int mr = manifest_load(dirfd, &prev, &raw);
	if (mr == 0 && !streq(prev.workspace, o->workspace)) {
		baseline_free(&prev);
		mr = -EBADMSG;
	}
	if (mr < 0 && mr != -ENOENT && mr != -EBADMSG) {
		r = mr;
		goto out_free;
	}

	if (others && mr == 0) {
		/* A run under way may have changed things already: its
		 * baseline is the only true one. */
		r = slot_take(lockfd);
		if (r == 0 && !marked)
			r = mark_write(lockfd, true);
		if (r < 0)
			goto out_free;
		report_unguarded_from(rep, &prev);
		rep->n_files = baseline_files(&prev);
		goto out_free;
	}
	if ((others || marked) && mr < 0) {
		/* Runs began, and there is no baseline to undo them with:
		 * refuse rather than take what they left as the new one. */
		r = -EBADMSG;
		goto out_free;
	}
	if (marked) {
		/* every run is over, and one never ended: undo what it left */
		r = undo_all(o, wfd, &od, &prev, rep);
		if (r < 0)
			goto out_free;
	}

	r = baseline_take(o, wfd, &od, mr == 0 ? &prev : NULL, &next, rep);
	if (r < 0)
		goto out_free;
	if (mr < 0 || !manifest_current(&prev, &raw, &next)) {
		r = manifest_store(dirfd, &next);
		if (r < 0)
			goto out_free;
		objects_collect(&od, &next);
	}
	/* The mark last: a begin killed before it has run nothing. */
	r = slot_take(lockfd);
	if (r == 0 && !marked)
		r = mark_write(lockfd, true);
	if (r < 0)
		goto out_free;
	rep->n_files = baseline_files(&next);
out_free:
	free(raw.p);
	baseline_free(&prev);
	baseline_free(&next);
	objdir_close(&od);
	return r;
}

int guard_begin(const struct guard_options *o, struct guard **ret, struct guard_report *ret_report)
{
	*ret_report = (struct guard_report){ 0 };
	*ret = NULL;
	int r = options_check(o);
	if (r < 0)
		return r;
	_cleanup_close_ int wfd = open_workspace(o);
	if (wfd < 0)
		return wfd;
	_cleanup_free_ char *gdir = path_join(o->state_dir, "guard");
	char hex[17];
	_cleanup_free_ char *dir =
		xstrcat3(gdir, "/", fmt_x64(hex, fnv1a(FNV_INIT, o->workspace, strlen(o->workspace))));
	_cleanup_close_ int dirfd = -1;
	r = state_open(dir, &dirfd);
	if (r < 0)
		return r;
	/* On failure, closing it drops the mutex and any slot: nothing has
	 * forked since it was opened. */
	_cleanup_close_ int lockfd = lock_open(dirfd);
	if (lockfd < 0)
		return lockfd;
	r = mutex_take(lockfd);
	if (r < 0)
		return r;
	r = begin_locked(o, wfd, dirfd, lockfd, ret_report);
	if (r < 0)
		return r;
	mutex_drop(lockfd);

	struct guard *g = xcalloc(1, sizeof(*g));
	options_copy(&g->o, o);
	g->dir = TAKE_PTR(dir);
	g->lockfd = TAKE_FD(lockfd);
	*ret = g;
	return 0;
}

int guard_end(struct guard *g, struct guard_report *ret_report)
{
	*ret_report = (struct guard_report){ 0 };
	if (!g)
		return -EINVAL;
	_cleanup_close_ int wfd = open_workspace(&g->o);
	if (wfd < 0)
		return wfd;
	_cleanup_close_ int dirfd = -1;
	int r = state_open(g->dir, &dirfd);
	if (r < 0)
		return r;
	/* an end called again after one that succeeded holds no slot */
	_cleanup_close_ int spare = g->lockfd < 0 ? lock_open(dirfd) : -1;
	int lockfd = g->lockfd >= 0 ? g->lockfd : spare;
	if (lockfd < 0)
		return lockfd;
	r = mutex_take(lockfd);
	if (r < 0)
		return r;

	struct objdir od = { .dirfd = dirfd, .fd = -1 };
	struct baseline b = { 0 };
	struct wbuf raw = { 0 };
	r = manifest_load(dirfd, &b, &raw);
	free(raw.p);
	if (r == 0 && !streq(b.workspace, g->o.workspace))
		r = -EBADMSG;
	if (r == 0) {
		/* Re-discovered inside: a repository made during the run has
		 * hand-offs of its own. */
		r = undo_all(&g->o, wfd, &od, &b, ret_report);
		ret_report->n_files = baseline_files(&b);
	}
	/* The last run out clears the mark. When something could not be
	 * undone, the slot and the mark stay, so that the next run tries
	 * again once this process is gone. */
	bool others = true;
	if (r == 0)
		r = runs_others(lockfd, &others);
	if (r == 0 && !others)
		r = mark_write(lockfd, false);
	if (r == 0 && g->lockfd >= 0) {
		/* Unlocked, not only closed: a process forked during the run
		 * may share the open file, and with it the slot. */
		(void)lock_range(g->lockfd, F_OFD_SETLK, F_UNLCK, 0, 0);
		close(g->lockfd);
		g->lockfd = -1;
	} else {
		mutex_drop(lockfd);
	}
	baseline_free(&b);
	objdir_close(&od);
	return r;
}

void guard_report_free(struct guard_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n_changes; i++) {
		free(r->changes[i].path);
		free(r->changes[i].quarantined);
	}
	free(r->changes);
	strv_free(r->unguarded);
	*r = (struct guard_report){ 0 };
}

const char *guard_change_kind_name(enum guard_change_kind k)
{
	switch (k) {
	case GUARD_CHANGED:
		return "changed";
	case GUARD_CREATED:
		return "created";
	case GUARD_REMOVED:
		return "removed";
	case GUARD_UNRESTORABLE:
		return "unrestorable";
	}
	return "unknown";
}
