#include "policy/handoff.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <strings.h>
#include <sys/stat.h>

#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"

/* A .git pointer file is one short line; git itself reads no more. */
#define GITFILE_MAX 4096
/* Git configs are small; one larger than this is not parsed past it. */
#define GITCONFIG_MAX ((size_t)4 << 20)
/* Every level holds a descriptor: well below RLIMIT_NOFILE. */
#define WALK_DEPTH_MAX 256

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

const char *const handoff_gitdir_members[HANDOFF_GITDIR_MEMBERS] = { "config", "hooks" };

char **handoff_gitdir_names(void)
{
	char **names = strv_new();
	for (size_t i = 0; i < HANDOFF_GITDIR_MEMBERS; i++)
		strv_add(&names, handoff_gitdir_members[i]);
	return names;
}

void handoffs_add(struct handoffs *rs, char *path, enum handoff_kind kind)
{
	if (rs->n == rs->cap) {
		rs->cap = rs->cap ? rs->cap * 2 : 32;
		rs->v = xreallocarray(rs->v, rs->cap, sizeof(*rs->v));
	}
	rs->v[rs->n++] = (struct handoff){ .path = path, .kind = kind };
}

void handoffs_free(struct handoffs *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		free(rs->v[i].path);
	free(rs->v);
	strv_free(rs->unguarded);
	*rs = (struct handoffs){ 0 };
}

static int handoff_cmp(const void *a, const void *b)
{
	const struct handoff *x = a, *y = b;
	int c = path_cmp(x->path, y->path);
	if (c)
		return c;
	/* a tree before a git directory on the same path: it covers it */
	return (int)x->kind - (int)y->kind;
}

const struct handoff *handoffs_find(const struct handoffs *rs, const char *path)
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
static bool handoffs_covered(const struct handoffs *rs, const struct handoff *r)
{
	const char *path = r->path;
	size_t n = strlen(path);
	_cleanup_free_ char *prefix = xstrdup(path);
	for (size_t i = n;; i--) {
		if (i == n || path[i] == '/') {
			prefix[i] = '\0';
			const struct handoff *a = handoffs_find(rs, prefix);
			if (a && a != r && a->kind == HANDOFF_TREE)
				return true;
			if (a && a != r && a->kind == HANDOFF_GITDIR && i == n && r->kind == HANDOFF_GITDIR)
				return true;
			if (a && a->kind == HANDOFF_GITDIR && i < n) {
				const char *rest = path + i + 1;
				for (size_t k = 0; k < ARRAY_SIZE(handoff_gitdir_members); k++) {
					size_t m = strlen(handoff_gitdir_members[k]);
					if (strncmp(rest, handoff_gitdir_members[k], m) == 0 && (rest[m] == '\0' || rest[m] == '/'))
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
		const struct handoff *a = handoffs_find(rs, "");
		if (a && a != r && a->kind == HANDOFF_TREE)
			return true;
	}
	return false;
}

/* Sorted, each path once, none inside another. */
void handoffs_normalize(struct handoffs *rs)
{
	if (!rs->n)
		return;
	qsort(rs->v, rs->n, sizeof(*rs->v), handoff_cmp);
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
		drop[i] = handoffs_covered(rs, &rs->v[i]);
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
	const struct handoff_scan *o;
	int wfd;
	struct handoffs roots;
	char **unguarded;
	char *global_hooks;	/* core.hooksPath of the user's own config */
	char **link_targets;	/* roots added by following a symlink */
	char **bufs;		/* one getdents buffer per depth */
	struct parent_cache *parents;	/* the caller's */
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
			handoffs_add(&d->roots, path_join(rel, hook_names[i]), HANDOFF_TREE);
		return;
	}
	handoffs_add(&d->roots, xstrdup(rel), HANDOFF_TREE);
}

static void add_config_hooks(struct discover *d, const char *worktree, const char *config_rel)
{
	if (d->o->known && !d->o->known(d->o->known_data, config_rel))
		return;
	if (top_lookup(d, config_rel) == TOP_ABSENT)
		return;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (parent_cache_read(d->parents, config_rel, GITCONFIG_MAX, &text, &len) < 0)
		return;
	_cleanup_free_ char *hp = gitconfig_hooks_path(text, len);
	if (hp)
		add_hooks_path(d, worktree, hp);
}

/* A `.git` file: "gitdir: PATH", relative to the directory holding it. */
static void add_gitfile(struct discover *d, int dfd, const char *worktree)
{
	_cleanup_free_ char *self = path_join(worktree, ".git");
	if (d->o->known && !d->o->known(d->o->known_data, self))
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
		for (size_t i = 0; i < ARRAY_SIZE(handoff_gitdir_members); i++)
			handoffs_add(&d->roots, xstrdup(handoff_gitdir_members[i]), HANDOFF_TREE);
	} else {
		handoffs_add(&d->roots, xstrdup(rel), HANDOFF_GITDIR);
	}
	_cleanup_free_ char *config = path_join(rel, "config");
	add_config_hooks(d, worktree, config);
}

/* A repository whose working tree is `worktree`, with a `.git` entry of
 * the given d_type in dfd. */
static void found_repo(struct discover *d, int dfd, const char *worktree, unsigned char type)
{
	handoffs_add(&d->roots, path_join(worktree, ".git"), HANDOFF_GITDIR);
	if (d->global_hooks)
		add_hooks_path(d, worktree, d->global_hooks);
	if (type == DT_DIR) {
		_cleanup_free_ char *config = path_join(worktree, ".git/config");
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

/* Every `.git` beneath the workspace. One open and a few getdents per
 * directory, d_type instead of a stat, symlinks never followed. */
static int walk_repos(struct discover *d, int dfd, const char *rel, unsigned depth, bool *ret_root_git)
{
	if (depth >= WALK_DEPTH_MAX) {
		note_unguarded(&d->unguarded, rel, "too deep to look for repositories");
		return 0;
	}
	if (!d->bufs[depth])
		d->bufs[depth] = xmalloc(DIR_BUF);
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
		_cleanup_free_ char *crel = path_join(rel, name);
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
	int pfd = parent_cache_open(d->parents, rel, &name);
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
		enum handoff_kind kind = d->roots.v[i].kind;
		size_t n_rel = kind == HANDOFF_GITDIR ? 1 + ARRAY_SIZE(handoff_gitdir_members) : 1;
		for (size_t k = 0; k < n_rel && budget; k++) {
			_cleanup_free_ char *rel = k == 0 ? xstrdup(path) : path_join(path, handoff_gitdir_members[k - 1]);
			_cleanup_free_ char *target = symlink_target_beneath(d, rel);
			if (!target || strv_contains(d->link_targets, target))
				continue;
			budget--;
			strv_add(&d->link_targets, target);
			handoffs_add(&d->roots, TAKE_PTR(target), k == 0 ? kind : HANDOFF_TREE);
		}
	}
}

int handoff_relpath_valid(const char *rel)
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
int handoffs_discover(const struct handoff_scan *o, int wfd, struct parent_cache *parents, struct handoffs *ret)
{
	*ret = (struct handoffs){ 0 };
	struct discover d = {
		.o = o,
		.wfd = wfd,
		.parents = parents,
		.global_hooks = read_user_hooks_path(o->user_home),
		.bufs = xcalloc(WALK_DEPTH_MAX, sizeof(char *)),
	};
	for (size_t i = 0; i < ARRAY_SIZE(d.top); i++)
		d.top[i] = TOP_MISSING;

	int r = 0;
	for (size_t i = 0; i < ARRAY_SIZE(root_only); i++)
		handoffs_add(&d.roots, xstrdup(root_only[i]), HANDOFF_TREE);
	for (size_t i = 0; o->extra && o->extra[i] && r == 0; i++) {
		_cleanup_free_ char *norm = path_normalize(o->extra[i]);
		if (handoff_relpath_valid(o->extra[i]) < 0 || streq(norm, "/"))
			r = -EINVAL;
		else
			handoffs_add(&d.roots, xstrdup(norm + 1), HANDOFF_TREE);
	}

	/* wfd is the workspace opened for reading: listed from its start */
	if (r == 0 && lseek(wfd, 0, SEEK_SET) < 0)
		r = -errno;
	bool root_git = false;
	if (r == 0)
		r = walk_repos(&d, wfd, "", 0, &root_git);
	if (r == 0) {
		d.top_listed = true;
		/* .git/hooks and .git/config are hand-offs before `git init`. */
		if (!root_git)
			found_repo(&d, wfd, "", DT_UNKNOWN);
		add_symlink_targets(&d);
		handoffs_normalize(&d.roots);
		*ret = d.roots;
		ret->unguarded = TAKE_PTR(d.unguarded);
		d.roots = (struct handoffs){ 0 };
	}
	handoffs_free(&d.roots);
	strv_free(d.unguarded);
	strv_free(d.link_targets);
	free(d.global_hooks);
	for (size_t i = 0; i < WALK_DEPTH_MAX; i++)
		free(d.bufs[i]);
	free(d.bufs);
	return r;
}

int handoffs_list(const struct handoff_scan *scan, char ***ret_paths)
{
	if (!path_is_absolute(scan->workspace))
		return -EINVAL;
	/* Opened for reading, not O_PATH: the walk lists it through this
	 * very descriptor. */
	_cleanup_close_ int wfd = open(scan->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (wfd < 0)
		return -errno;
	struct parent_cache parents = PARENT_CACHE_INIT(wfd);
	struct handoffs found;
	int r = handoffs_discover(scan, wfd, &parents, &found);
	if (r < 0) {
		parent_cache_done(&parents);
		return r;
	}
	char **out = xcalloc(found.n * HANDOFF_GITDIR_MEMBERS + 1, sizeof(char *));
	size_t n = 0;
	for (size_t i = 0; i < found.n; i++) {
		const struct handoff *h = &found.v[i];
		if (h->kind == HANDOFF_GITDIR) {
			const char *name;
			int pfd = parent_cache_open(&parents, h->path, &name);
			struct stat st;
			bool is_dir_or_absent = pfd < 0 || fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
						S_ISDIR(st.st_mode);
			if (is_dir_or_absent) {
				for (size_t k = 0; k < HANDOFF_GITDIR_MEMBERS; k++)
					out[n++] = path_join(h->path, handoff_gitdir_members[k]);
				continue;
			}
		}
		out[n++] = xstrdup(h->path);
	}
	handoffs_free(&found);
	parent_cache_done(&parents);
	*ret_paths = out;
	return 0;
}
