#include "handoff/handoff.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "lib/fd.h"
#include "lib/path.h"
#include "lib/util.h"
#include "handoff/envrc.h"
#include "handoff/gitconfig.h"

/* A .git pointer file is one short line; git itself reads no more. */
#define GITFILE_MAX 4096
/* Git configs are small; one larger than this is not read for what it
 * names (the guard sets a changed one that large aside whole). */
#define GITCONFIG_MAX ((size_t)4 << 20)
#define ENVRC_MAX ((size_t)1 << 20)
/* git stops following includes at 10 levels. */
#define INCLUDE_DEPTH_MAX 10
/* Submodules nest (modules/a/modules/b) and their names hold slashes
 * (modules/libs/a): deeper than this, git itself would not find them. */
#define MODULES_DEPTH_MAX 16
/* Git directories, includes and symlinks followed in one discovery: a
 * chain or a loop ends here. */
#define FOLLOW_BUDGET 4096

/* What git runs from a hooks directory (githooks(5)); used where a
 * hooksPath names a directory too wide to keep whole (the workspace, a
 * git directory). */
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

/* ---------------------------------------------------------------------
 * Repositories: every `.git` beneath the workspace
 * ------------------------------------------------------------------ */

static void note_path(char ***list, const char *rel)
{
	const char *p = str_empty(rel) ? "." : rel;
	if (!strv_contains(*list, p))
		strv_add(list, p);
}

struct repo_walk {
	struct handoff_repos *out;
	char **bufs;		/* one getdents buffer per depth */
};

/* One open and a few getdents per directory, d_type instead of a stat,
 * symlinks never followed. */
static int walk_repos(struct repo_walk *w, int dfd, const char *rel, unsigned depth)
{
	if (depth >= WALK_DEPTH_MAX) {
		note_path(&w->out->unsearchable, rel);
		return 0;
	}
	if (!w->bufs[depth])
		w->bufs[depth] = xmalloc(DIR_BUF);
	struct dir_iter it = { .fd = dfd, .buf = w->bufs[depth] };
	const dir_entry *de;
	int err;
	bool dotgit = false;
	struct bare_probe bare = { 0 };
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
		if (streq(name, ".git")) {
			handoff_repos_add(w->out, rel, type);
			dotgit = true;
			continue;
		}
		unsigned char vcs = handoff_vcs_dir(name, type);
		if (vcs) {
			handoff_repos_add(w->out, rel, vcs);
			continue;
		}
		bare_probe_see(&bare, name, type);
		if (type != DT_DIR)
			continue;
		_cleanup_close_ int cfd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_free_ char *crel = path_join(rel, name);
		if (cfd < 0) {
			/* gone, or replaced by a symlink, since it was listed */
			if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP)
				note_path(&w->out->unsearchable, crel);
			continue;
		}
		if (walk_repos(w, cfd, crel, depth + 1) < 0)
			note_path(&w->out->unsearchable, crel);
	}
	if (!dotgit && bare_probe_is(&bare))
		handoff_repos_add(w->out, rel, HANDOFF_REPO_BARE);
	return err;
}

bool handoff_dir_is_bare(int dfd)
{
	struct stat st;
	return fstatat(dfd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
	       fstatat(dfd, "objects", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
	       fstatat(dfd, "refs", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

int handoff_repos_walk(int wfd, struct handoff_repos *ret)
{
	*ret = (struct handoff_repos){ 0 };
	/* wfd is the workspace opened for reading: listed from its start */
	if (lseek(wfd, 0, SEEK_SET) < 0)
		return -errno;
	struct repo_walk w = { .out = ret, .bufs = xcalloc(WALK_DEPTH_MAX, sizeof(char *)) };
	int r = walk_repos(&w, wfd, "", 0);
	for (size_t i = 0; i < WALK_DEPTH_MAX; i++)
		free(w.bufs[i]);
	free(w.bufs);
	if (r < 0)
		handoff_repos_free(ret);
	return r;
}

/* ---------------------------------------------------------------------
 * Discovery: which paths are hand-offs
 * ------------------------------------------------------------------ */

struct discover {
	const struct handoff_scan *o;
	int wfd;
	struct handoffs roots;
	char **unguarded;
	char *global_hooks;	/* core.hooksPath of the user's own config */
	char **gitdirs;		/* git directories expanded, for loops */
	char **followed;	/* configs read and symlinks followed, for loops */
	size_t budget;
	struct parent_cache *parents;	/* the caller's */
	/* Directories listed once, for what is in them: most hand-offs do
	 * not exist, and a getdents tells that of all of a directory's at
	 * once, where a readlink or an open each would ask one by one. The
	 * top's may be the caller's (o->top). */
	struct listing {
		char *dir;
		struct dir_listing l;
	} lists[8];
	size_t n_lists;
};

/* What lies at rel: a DT_* type, DIR_ABSENT, or DT_UNKNOWN when that
 * cannot be told from a listing of its directory. */
static unsigned char entry_type(struct discover *d, const char *rel)
{
	const char *name;
	_cleanup_free_ char *dir = path_parent(rel, &name);
	if (!dir)
		return DT_UNKNOWN;
	if (!*dir && d->o->top)
		return dir_listing_type(d->o->top, name);
	if (*dir) {
		/* beneath a name the top does not hold as a directory: nothing
		 * reached without a symlink, as a listing would find */
		_cleanup_free_ char *first = xstrndup(dir, strcspn(dir, "/"));
		unsigned char top = entry_type(d, first);
		if (top != DT_DIR && top != DT_UNKNOWN)
			return DIR_ABSENT;
	}
	struct listing *l = NULL;
	for (size_t i = 0; i < d->n_lists && !l; i++)
		if (streq(d->lists[i].dir, dir))
			l = &d->lists[i];
	if (!l) {
		if (d->n_lists == ARRAY_SIZE(d->lists))
			return DT_UNKNOWN;
		l = &d->lists[d->n_lists++];
		l->dir = xstrdup(dir);
		(void)dir_listing_read(d->wfd, dir, &l->l);
	}
	return dir_listing_type(&l->l, name);
}

static void listings_free(struct discover *d)
{
	for (size_t i = 0; i < d->n_lists; i++) {
		free(d->lists[i].dir);
		dir_listing_free(&d->lists[i].l);
	}
}

static bool follow_once(struct discover *d, char ***seen, const char *rel)
{
	if (!d->budget || strv_contains(*seen, rel))
		return false;
	d->budget--;
	strv_add(seen, rel);
	return true;
}

static char *read_rel(struct discover *d, const char *rel, size_t max, size_t *ret_len)
{
	unsigned char t = entry_type(d, rel);
	if (t != DT_REG && t != DT_UNKNOWN)
		return NULL;
	char *text = NULL;
	size_t len = 0;
	if (parent_cache_read(d->parents, rel, max, &text, &len) < 0)
		return NULL;
	*ret_len = len;
	return text;
}

/* A file read for what it names: while undoing, only one the baseline
 * holds (see struct handoff_scan). */
static char *read_known(struct discover *d, const char *rel, size_t max, size_t *ret_len)
{
	if (d->o->known && !d->o->known(d->o->known_data, rel))
		return NULL;
	return read_rel(d, rel, max, ret_len);
}

/* A path a git file or setting names (absolute; or relative to base, a
 * directory relative to the workspace), as a path below the workspace, or
 * NULL where it lies outside or is the workspace itself: the command
 * cannot write outside. Lexical: a symlink on the way is refused when the
 * path is opened, so ".." cannot be made to mean another place. */
static char *below_workspace(const struct discover *d, const char *base, const char *value)
{
	const char *ws = d->o->workspace;
	_cleanup_free_ char *abs = NULL;
	if (value[0] == '/') {
		abs = path_normalize(value);
	} else {
		_cleanup_free_ char *dir = path_join(ws, base);
		_cleanup_free_ char *j = path_join(dir, value);
		abs = path_normalize(j);
	}
	if (!path_is_beneath(abs, ws) || streq(abs, ws))
		return NULL;
	return xstrdup(path_below(abs, ws));
}

/* `~/x` as git and direnv expand it, or NULL for `~user/` (another
 * account's home is not this workspace's business). */
static char *expand_tilde(const struct discover *d, const char *value)
{
	if (value[0] != '~')
		return xstrdup(value);
	if ((value[1] != '/' && value[1]) || str_empty(d->o->user_home))
		return NULL;
	return xstrcat3(d->o->user_home, "/", value[1] ? value + 2 : "");
}

static void add_hooks_path(struct discover *d, const char *worktree, const char *value)
{
	if (str_empty(value))
		return;
	_cleanup_free_ char *v = expand_tilde(d, value);
	_cleanup_free_ char *rel = v ? below_workspace(d, worktree, v) : NULL;
	if (!rel) {
		/* the workspace itself: what git runs from it is the hooks
		 * by name, not every file of the tree */
		_cleanup_free_ char *abs = v && v[0] != '/' ? path_join(d->o->workspace, worktree) : NULL;
		_cleanup_free_ char *full = v ? (abs ? path_join(abs, v) : xstrdup(v)) : NULL;
		_cleanup_free_ char *norm = full ? path_normalize(full) : NULL;
		if (norm && streq(norm, d->o->workspace))
			for (size_t i = 0; i < ARRAY_SIZE(hook_names); i++)
				handoffs_add(&d->roots, xstrdup(hook_names[i]), HANDOFF_TREE);
		return;
	}
	const char *base = strrchr(rel, '/');
	base = base ? base + 1 : rel;
	/* a git directory as hooksPath would make every object a hand-off */
	if (streq(base, ".git")) {
		for (size_t i = 0; i < ARRAY_SIZE(hook_names); i++)
			handoffs_add(&d->roots, path_join(rel, hook_names[i]), HANDOFF_TREE);
		return;
	}
	handoffs_add(&d->roots, TAKE_PTR(rel), HANDOFF_HOOKS);
}

/* A config: what its core.hooksPath and includes name become hand-offs
 * (an include is a config of its own, read the same way). */
static void add_config(struct discover *d, const char *rel, const char *worktree, unsigned depth)
{
	/* once for each working tree it is read for: a relative hooksPath
	 * is that tree's */
	_cleanup_free_ char *key = xstrcat3(rel, "\n", worktree);
	if (depth > INCLUDE_DEPTH_MAX || !follow_once(d, &d->followed, key))
		return;
	size_t len = 0;
	_cleanup_free_ char *text = read_known(d, rel, GITCONFIG_MAX, &len);
	if (!text)
		return;
	/* A config git refuses stops every git command there: it names
	 * nothing git would run. */
	struct gitconfig c;
	if (gitconfig_parse(text, len, &c, NULL) < 0)
		return;
	add_hooks_path(d, worktree, gitconfig_get(&c, "core", "hookspath"));
	_cleanup_strv_ char **includes = gitconfig_includes(&c);
	const char *name;
	_cleanup_free_ char *dir = path_parent(rel, &name);
	for (size_t i = 0; includes && includes[i]; i++) {
		_cleanup_free_ char *v = expand_tilde(d, includes[i]);
		_cleanup_free_ char *inc = v ? below_workspace(d, dir, v) : NULL;
		if (!inc || handoff_relpath_valid(inc) < 0)
			continue;
		handoffs_add(&d->roots, xstrdup(inc), HANDOFF_CONFIG);
		add_config(d, inc, worktree, depth + 1);
	}
	gitconfig_free(&c);
}

/* What a pointer file names: a `.git` file's "gitdir: PATH" (relative to
 * the directory holding it), or a commondir's path (relative to the git
 * directory holding it); as a path below the workspace, or NULL. */
static char *pointer_target(struct discover *d, const char *rel, bool gitfile)
{
	size_t len = 0;
	_cleanup_free_ char *text = read_rel(d, rel, GITFILE_MAX, &len);
	if (!text || strlen(text) != len)
		return NULL;
	_cleanup_free_ char *value = gitfile ? handoff_gitfile_target(text, len) : NULL;
	if (!gitfile) {
		text[strcspn(text, "\n")] = '\0';
		value = xstrdup(text);
	}
	if (str_empty(value))
		return NULL;
	const char *name;
	_cleanup_free_ char *dir = path_parent(rel, &name);
	return below_workspace(d, dir, value);
}

static void add_gitdir(struct discover *d, const char *gitdir, const char *worktree, unsigned depth);

/* A directory a git setting names (absolute, or relative to base) as a
 * path below the workspace, "" for the workspace itself, or NULL
 * outside it. */
static char *dir_in_workspace(const struct discover *d, const char *base, const char *value)
{
	char *rel = below_workspace(d, base, value);
	if (rel)
		return rel;
	_cleanup_free_ char *dir = value[0] == '/' ? NULL : path_join(d->o->workspace, base);
	_cleanup_free_ char *joined = dir ? path_join(dir, value) : xstrdup(value);
	_cleanup_free_ char *abs = path_normalize(joined);
	return abs && streq(abs, d->o->workspace) ? xstrdup("") : NULL;
}

/* The working tree a git directory's config names (core.worktree,
 * relative to the git directory as git reads it: a submodule's
 * ../../../lib), when it lies in the workspace; NULL otherwise. */
static char *config_worktree(struct discover *d, const char *gitdir)
{
	_cleanup_free_ char *config = path_join(gitdir, "config");
	size_t len = 0;
	_cleanup_free_ char *text = read_known(d, config, GITCONFIG_MAX, &len);
	struct gitconfig c;
	if (!text || gitconfig_parse(text, len, &c, NULL) < 0)
		return NULL;
	const char *v = gitconfig_get(&c, "core", "worktree");
	char *wt = str_empty(v) ? NULL : dir_in_workspace(d, gitdir, v);
	gitconfig_free(&c);
	return wt;
}

/* modules/: each directory that holds a HEAD is a submodule's git
 * directory; the others are the folders of a name with slashes. */
static void add_modules(struct discover *d, const char *dir, unsigned depth)
{
	if (depth > MODULES_DEPTH_MAX || entry_type(d, dir) == DIR_ABSENT)
		return;
	_cleanup_close_ int fd = open_nofollow(d->wfd, dir, O_RDONLY | O_DIRECTORY, 0, OPEN_BENEATH);
	_cleanup_strv_ char **names = NULL;
	if (fd < 0 || dir_list(fd, &names) < 0)
		return;
	for (size_t i = 0; names[i]; i++) {
		struct stat st;
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		_cleanup_free_ char *sub = path_join(dir, names[i]);
		_cleanup_free_ char *head = path_join(names[i], "HEAD");
		if (fstatat(fd, head, &st, AT_SYMLINK_NOFOLLOW) == 0)
			add_gitdir(d, sub, NULL, depth + 1);
		else
			add_modules(d, sub, depth + 1);
	}
}

/* worktrees/NAME: a linked worktree's own git directory. Its `gitdir`
 * file says where the worktree is, for a relative hooksPath. */
static void add_worktrees(struct discover *d, const char *dir, unsigned depth)
{
	if (entry_type(d, dir) == DIR_ABSENT)
		return;
	_cleanup_close_ int fd = open_nofollow(d->wfd, dir, O_RDONLY | O_DIRECTORY, 0, OPEN_BENEATH);
	_cleanup_strv_ char **names = NULL;
	if (fd < 0 || dir_list(fd, &names) < 0)
		return;
	for (size_t i = 0; names[i]; i++) {
		struct stat st;
		if (fstatat(fd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
			continue;
		_cleanup_free_ char *sub = path_join(dir, names[i]);
		_cleanup_free_ char *gitdir_file = path_join(sub, "gitdir");
		size_t len = 0;
		_cleanup_free_ char *text = read_rel(d, gitdir_file, GITFILE_MAX, &len);
		_cleanup_free_ char *wt = NULL;
		if (text && strlen(text) == len) {
			text[strcspn(text, "\n")] = '\0';
			_cleanup_free_ char *dotgit = text[0] ? below_workspace(d, sub, text) : NULL;
			if (dotgit)
				wt = path_parent(dotgit, NULL);
		}
		add_gitdir(d, sub, wt, depth + 1);
	}
}

/* A git directory: its rows of the table, and the git directories it
 * leads to. worktree is where git runs with it, for a relative
 * hooksPath (NULL when not known: the git directory's parent). */
static void add_gitdir(struct discover *d, const char *gitdir, const char *worktree, unsigned depth)
{
	if (depth > MODULES_DEPTH_MAX)
		return;
	/* Where git runs with it, for a relative hooksPath: the working
	 * tree it was reached from, and the one its config names (a
	 * submodule's core.worktree); with neither, its parent. */
	_cleanup_free_ char *named = config_worktree(d, gitdir);
	_cleanup_free_ char *parent = worktree || named ? NULL : path_parent(gitdir, NULL);
	const char *wt = worktree ? worktree : named ? named : parent ? parent : "";
	_cleanup_free_ char *key = xstrcat3(gitdir, "\n", wt);
	if (!follow_once(d, &d->gitdirs, key))
		return;
	for (size_t i = 0; i < handoff_table_len; i++)
		if (handoff_table[i].place == HANDOFF_IN_GITDIR)
			handoffs_add(&d->roots, path_join(gitdir, handoff_table[i].name), handoff_table[i].kind);
	_cleanup_free_ char *config = path_join(gitdir, "config");
	_cleanup_free_ char *config_wt = path_join(gitdir, "config.worktree");
	add_config(d, config, wt, 0);
	add_config(d, config_wt, wt, 0);
	if (named && !streq(named, wt)) {
		add_config(d, config, named, 0);
		add_config(d, config_wt, named, 0);
	}

	/* commondir redirects config and hooks to the common directory; one
	 * that leaves the workspace is the guard's to set aside */
	_cleanup_free_ char *commondir = path_join(gitdir, "commondir");
	_cleanup_free_ char *common = pointer_target(d, commondir, false);
	if (common && handoff_gitdir_plausible(d->wfd, common))
		add_gitdir(d, common, wt, depth + 1);
	_cleanup_free_ char *worktrees = path_join(gitdir, "worktrees");
	add_worktrees(d, worktrees, depth);
	_cleanup_free_ char *modules = path_join(gitdir, "modules");
	add_modules(d, modules, depth);
}

/* A Mercurial config: itself, and each file a `%include` line names
 * inside the workspace (relative to the config's folder, as hg reads
 * it), read the same way. */
static void add_hgrc(struct discover *d, const char *rel, unsigned depth)
{
	if (depth > INCLUDE_DEPTH_MAX || !follow_once(d, &d->followed, rel))
		return;
	handoffs_add(&d->roots, xstrdup(rel), HANDOFF_TREE);
	size_t len = 0;
	_cleanup_free_ char *text = read_known(d, rel, GITCONFIG_MAX, &len);
	if (!text)
		return;
	const char *name;
	_cleanup_free_ char *dir = path_parent(rel, &name);
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (strncmp(line, "%include", 8) != 0 || (line[8] != ' ' && line[8] != '\t'))
			continue;
		char *v = line + 8 + strspn(line + 8, " \t");
		size_t n = strlen(v);
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t' || v[n - 1] == '\r'))
			v[--n] = '\0';
		_cleanup_free_ char *x = n ? expand_tilde(d, v) : NULL;
		_cleanup_free_ char *inc = x ? below_workspace(d, dir, x) : NULL;
		if (inc && handoff_relpath_valid(inc) == 0)
			add_hgrc(d, inc, depth + 1);
	}
}

/* A Mercurial or Jujutsu repository at `worktree`: the config of its own
 * that runs programs. */
static void add_vcs(struct discover *d, const char *worktree, unsigned char type)
{
	if (type == HANDOFF_REPO_HG) {
		/* hg reads .hg/hgrc, then .hg/hgrc-not-shared; and, in a share
		 * (`hg share`), the source's hgrc first, the .hg folder its
		 * sharedpath names. A sharedpath the run made or changed would
		 * send hg to an hgrc of its own: the file is kept as it is. */
		static const char *const own[] = { ".hg/hgrc", ".hg/hgrc-not-shared" };
		for (size_t i = 0; i < ARRAY_SIZE(own); i++) {
			_cleanup_free_ char *rc = path_join(worktree, own[i]);
			add_hgrc(d, rc, 0);
		}
		char *sharedpath = path_join(worktree, ".hg/sharedpath");
		_cleanup_free_ char *source = pointer_target(d, sharedpath, false);
		handoffs_add(&d->roots, sharedpath, HANDOFF_TREE);
		if (source) {
			_cleanup_free_ char *rc = path_join(source, "hgrc");
			add_hgrc(d, rc, 0);
		}
		return;
	}
	/* jj reads .jj/repo/config.toml; in a second workspace (jj
	 * workspace add) .jj/repo is a file naming the first one's repo
	 * folder (relative to .jj), whose config.toml it reads instead. Such
	 * a file is kept as it is: one a run put in place of the folder would
	 * send jj to a config of its own. */
	_cleanup_free_ char *repo = path_join(worktree, ".jj/repo");
	if (entry_type(d, repo) != DT_REG) {
		handoffs_add(&d->roots, path_join(repo, "config.toml"), HANDOFF_TREE);
		return;
	}
	_cleanup_free_ char *target = pointer_target(d, repo, false);
	handoffs_add(&d->roots, xstrdup(repo), HANDOFF_TREE);
	if (target)
		handoffs_add(&d->roots, path_join(target, "config.toml"), HANDOFF_TREE);
}

/* A repository whose working tree is `worktree`, with a `.git` entry of
 * the given d_type; or, HANDOFF_REPO_BARE, the bare git directory
 * `worktree` is. */
static void add_repo(struct discover *d, const char *worktree, unsigned char type)
{
	_cleanup_free_ char *dotgit = path_join(worktree, ".git");
	if (type == HANDOFF_REPO_HG || type == HANDOFF_REPO_JJ) {
		add_vcs(d, worktree, type);
		return;
	}
	/* ~/.gitconfig's hooksPath, relative to each working tree (a bare
	 * repository's: the git directory, where its hooks run) */
	if (d->global_hooks)
		add_hooks_path(d, worktree, d->global_hooks);
	if (type == HANDOFF_REPO_BARE) {
		add_gitdir(d, worktree, worktree, 0);
		return;
	}
	if (type == DT_DIR) {
		add_gitdir(d, dotgit, worktree, 0);
		return;
	}
	/* a `.git` file (a worktree's or a submodule's) or a symlink: kept
	 * as itself, and what it names inside the workspace is a git
	 * directory. Anything else git does not use. */
	if (type != DT_REG && type != DT_LNK && type != DT_UNKNOWN)
		return;
	handoffs_add(&d->roots, xstrdup(dotgit), HANDOFF_POINTER);
	_cleanup_free_ char *target = type == DT_REG ? pointer_target(d, dotgit, true) : NULL;
	if (target && handoff_gitdir_plausible(d->wfd, target))
		add_gitdir(d, target, worktree, 0);
}

bool handoff_gitdir_plausible(int wfd, const char *rel)
{
	_cleanup_close_ int fd = open_nofollow(wfd, rel, OPEN_PATH | O_DIRECTORY, 0, OPEN_BENEATH);
	struct stat st;
	if (fd < 0 || fstatat(fd, "HEAD", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return (fstatat(fd, "objects", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) ||
	       (fstatat(fd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode));
}


/* The user's own configs, outside the workspace: following a symlink to
 * them (a dotfiles checkout) and their includes is what git does too. */
static void read_user_hooks_path(struct discover *d, const char *path, unsigned depth)
{
	if (depth > INCLUDE_DEPTH_MAX)
		return;
	int fd = open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return;
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	struct gitconfig c;
	if (read_small_fd(fd, GITCONFIG_MAX, &text, &len) < 0 || gitconfig_parse(text, len, &c, NULL) < 0)
		return;
	/* in order: an include's value counts where the include stands,
	 * and a later line wins */
	for (size_t i = 0; i < c.n; i++) {
		const struct gitconfig_entry *e = &c.v[i];
		if (streq(e->section, "core") && !e->subsection && streq(e->key, "hookspath") && e->value) {
			free(d->global_hooks);
			d->global_hooks = xstrdup(e->value);
		} else if (e->value && streq(e->key, "path") &&
			   (streq(e->section, "include") || (streq(e->section, "includeif") && e->subsection))) {
			_cleanup_free_ char *v = expand_tilde(d, e->value);
			if (!v)
				continue;
			_cleanup_free_ char *dir = path_parent(path, NULL);
			_cleanup_free_ char *inc = v[0] == '/' ? xstrdup(v) : path_join(dir, v);
			read_user_hooks_path(d, inc, depth + 1);
		}
	}
	gitconfig_free(&c);
}

/* An .envrc: the files it sources or loads and the directories it puts
 * on a PATH, where they lie inside the workspace. What cannot be told
 * without running it (a variable, a command substitution) is named. */
static void add_envrc(struct discover *d, const char *rel)
{
	size_t len = 0;
	_cleanup_free_ char *text = read_known(d, rel, ENVRC_MAX, &len);
	if (!text)
		return;
	struct envrc_refs refs;
	unsigned bad = 0;
	if (envrc_refs(text, len, &refs, &bad) < 0) {
		/* the shell refuses it too, but what comes before its bad
		 * line may still run: named, as nothing it names is known */
		_cleanup_free_ char *what = xasprintf("%s:%u", rel, bad);
		note_path(&d->unguarded, what);
		return;
	}
	_cleanup_free_ char *dir = path_parent(rel, NULL);
	for (size_t i = 0; i < refs.n; i++) {
		const struct envrc_ref *f = &refs.v[i];
		if (f->kind == ENVRC_PARENT)
			continue;	/* the parents' .envrc: outside the workspace */
		_cleanup_free_ char *v = f->resolved ? expand_tilde(d, f->path) : NULL;
		if (!v) {
			_cleanup_free_ char *what = xasprintf("%s:%u: %s", rel, f->line, f->path);
			note_path(&d->unguarded, what);
			continue;
		}
		_cleanup_free_ char *target = below_workspace(d, dir ? dir : "", v);
		if (target && handoff_relpath_valid(target) == 0)
			handoffs_add(&d->roots, TAKE_PTR(target), HANDOFF_TREE);
	}
	envrc_refs_free(&refs);
}

/* Where a symlink at rel points, as a workspace-relative path, or NULL
 * when that is outside the workspace or cannot be told without following
 * a symlink: only leading ".." are taken, and they start from rel's own
 * directory, which was reached without symlinks, so they mean what they
 * say. */
static char *symlink_target_beneath(struct discover *d, const char *rel)
{
	unsigned char t = entry_type(d, rel);
	if (t != DT_LNK && t != DT_UNKNOWN)
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
		const char *end = str_chrnul(p, '/');
		size_t len = (size_t)(end - p);
		if (len == 2 && p[0] == '.' && p[1] == '.') {
			if (seen_name)
				return NULL;
		} else if (len && !(len == 1 && p[0] == '.')) {
			seen_name = true;
		}
		p = *end ? end + 1 : end;
	}
	_cleanup_free_ char *parent = path_parent(rel, NULL);
	return below_workspace(d, parent, buf);
}

/* A hand-off that is a symlink to a place inside the workspace hands
 * off that place too: `.git/hooks -> ../tools/hooks` is common, and git
 * runs what it finds there. The symlink itself stays guarded as a
 * symlink; what it points at becomes a root of the same kind (a `.git`
 * symlink's target, a git directory). Nothing outside the workspace is
 * ever read through it. */
static void add_symlink_targets(struct discover *d)
{
	for (size_t i = 0; i < d->roots.n; i++) {
		_cleanup_free_ char *path = xstrdup(d->roots.v[i].path);
		enum handoff_kind kind = d->roots.v[i].kind;
		_cleanup_free_ char *target = symlink_target_beneath(d, path);
		if (!target || !follow_once(d, &d->followed, target))
			continue;
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		if (kind == HANDOFF_POINTER && streq(base, ".git")) {
			_cleanup_free_ char *worktree = path_parent(path, NULL);
			if (handoff_gitdir_plausible(d->wfd, target))
				add_gitdir(d, target, worktree, 0);
		} else {
			handoffs_add(&d->roots, TAKE_PTR(target), kind);
		}
	}
}

int handoffs_discover(const struct handoff_scan *o, int wfd, struct parent_cache *parents, struct handoffs *ret)
{
	*ret = (struct handoffs){ 0 };
	struct discover d = {
		.o = o,
		.wfd = wfd,
		.parents = parents,
		.budget = FOLLOW_BUDGET,
	};
	if (o->user_home) {
		/* git reads ~/.config/git/config first, ~/.gitconfig after:
		 * the later value wins */
		_cleanup_free_ char *xdg = path_join(o->user_home, ".config/git/config");
		_cleanup_free_ char *dot = path_join(o->user_home, ".gitconfig");
		read_user_hooks_path(&d, xdg, 0);
		read_user_hooks_path(&d, dot, 0);
	}

	int r = 0;
	struct handoff_repos walked = { 0 };
	if (o->gitdir_only) {
		add_gitdir(&d, "", NULL, 0);
		goto done;
	}
	for (size_t i = 0; i < handoff_table_len; i++)
		if (handoff_table[i].place == HANDOFF_AT_TOP)
			handoffs_add(&d.roots, xstrdup(handoff_table[i].name), handoff_table[i].kind);
	for (size_t i = 0; o->extra && o->extra[i] && r == 0; i++) {
		_cleanup_free_ char *norm = path_normalize(o->extra[i]);
		if (handoff_relpath_valid(o->extra[i]) < 0 || streq(norm, "/"))
			r = -EINVAL;
		else
			handoffs_add(&d.roots, xstrdup(norm + 1), HANDOFF_TREE);
	}

	const struct handoff_repos *repos = o->repos;
	if (r == 0 && !repos) {
		r = handoff_repos_walk(wfd, &walked);
		repos = &walked;
	}
	if (r == 0) {
		bool top = false;
		for (size_t i = 0; i < repos->n; i++) {
			unsigned char type = repos->v[i].type;
			add_repo(&d, repos->v[i].worktree, type);
			top |= str_empty(repos->v[i].worktree) && type != HANDOFF_REPO_HG && type != HANDOFF_REPO_JJ;
		}
		/* .git/hooks and .git/config are hand-offs before `git init` */
		if (!top) {
			if (d.global_hooks)
				add_hooks_path(&d, "", d.global_hooks);
			add_gitdir(&d, ".git", "", 0);
		}
		for (size_t i = 0; repos->unsearchable && repos->unsearchable[i]; i++)
			note_path(&d.unguarded, repos->unsearchable[i]);
		add_envrc(&d, ".envrc");
	}
done:
	if (r == 0) {
		add_symlink_targets(&d);
		handoffs_normalize(&d.roots);
		*ret = d.roots;
		ret->unguarded = TAKE_PTR(d.unguarded);
		d.roots = (struct handoffs){ 0 };
	}
	handoff_repos_free(&walked);
	handoffs_free(&d.roots);
	strv_free(d.unguarded);
	strv_free(d.gitdirs);
	strv_free(d.followed);
	free(d.global_hooks);
	listings_free(&d);
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
	parent_cache_done(&parents);
	if (r < 0)
		return r;
	char **out = xcalloc(found.n + 1, sizeof(char *));
	for (size_t i = 0; i < found.n; i++)
		out[i] = TAKE_PTR(found.v[i].path);
	handoffs_free(&found);
	*ret_paths = out;
	return 0;
}
