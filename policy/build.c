#include "policy/build.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>

#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/allow.h"
#include "policy/defaults.h"
#include "policy/handoff.h"
#include "policy/ignored.h"
#include "policy/own.h"
#include "policy/steer.h"

void policy_failure_free(struct policy_failure *f)
{
	free(f->path);
	free(f->other);
	free(f->via);
	free(f->tree);
	*f = (struct policy_failure){ 0 };
}

int policy_fail(struct policy_failure *f, enum policy_fault fault, int err, const char *path,
		const struct source *source)
{
	free(f->path);
	free(f->other);
	free(f->via);
	free(f->tree);
	*f = (struct policy_failure){
		.fault = fault,
		.err = err,
		.path = path ? xstrdup(path) : NULL,
		.source = source ? *source : (struct source){ 0 },
	};
	return err ? -err : -EINVAL;
}

/* The settings, each from the last layer that sets it. */
struct settings {
	const char *workspace;
	const struct source *workspace_source;
	const char *home;
	const struct source *home_source;
	const char *home_dir;	/* the folder of the layer that set home */
	/* every layer's environment operations, in order */
	struct env_op *env_ops;
	size_t n_env_ops;
	/* those of the layers that need no trust: what the person set */
	struct env_op *own_ops;
	size_t n_own_ops;
};

static struct widening *add_widening(struct policy *p, const struct source *source, const char *value,
				      const char *before)
{
	p->widenings = xgrow(p->widenings, p->n_widenings, sizeof(*p->widenings));
	p->widenings[p->n_widenings] = (struct widening){
		.source = *source,
		.value = xstrdup(value),
		.before = xstrdup(before),
	};
	return &p->widenings[p->n_widenings++];
}

/* How strict a run mode is: required refuses more than auto, auto more
 * than off. */
static int mode_strictness(enum run_mode m)
{
	return m == MODE_REQUIRED ? 2 : m == MODE_AUTO ? 1 : 0;
}

/* This host's memory, what a share of it is of; 0 if unknown. */
static uint64_t host_ram(void)
{
	struct sysinfo si;
	return sysinfo(&si) == 0 ? (uint64_t)si.totalram * si.mem_unit : 0;
}

/* Whether limit a lets the run have more than b, on this host. */
static bool size_spec_above(const struct size_spec *a, const struct size_spec *b)
{
	if (!a->bytes && !b->bytes)
		return a->percent > b->percent;
	uint64_t ram = host_ram();
	return size_spec_bytes(a, ram) > size_spec_bytes(b, ram);
}

/* A limit as a widening names it: "8192", "4.0 GiB". */
static void add_size_widening(struct policy *p, const struct source *source, const struct size_spec *now,
			      const struct size_spec *before)
{
	uint64_t ram = host_ram();
	char a[64], b[64];
	size_spec_format(now, ram, a, sizeof(a));
	size_spec_format(before, ram, b, sizeof(b));
	add_widening(p, source, a, b);
}

static bool allowed_already(const struct policy *p, const struct allow_entry *e)
{
	for (size_t i = 0; i < p->n_allow; i++)
		if (allow_entry_same(&p->allow[i], e))
			return true;
	return false;
}

/* The settings of an untrusted layer that widen what the layers before
 * it say: a wider network, a less strict mode, any backend, a kept home
 * (written, outside the workspace), a variable the scrub would take
 * away, a higher limit (a file of the repository's could otherwise let
 * a run take the host's processes or memory). Each is named; none is
 * applied. */
static bool settings_widen(struct policy *p, const struct layer *l)
{
	bool widened = false;
	/* An allow list's names are named one by one below: the mode it
	 * implies is not named again. */
	if (l->net_set && l->net > p->net && !(l->net == NET_ALLOW && l->n_allow)) {
		add_widening(p, &l->net_source, net_mode_name(l->net), net_mode_name(p->net));
		widened = true;
	}
	if (l->mode_set && mode_strictness(l->mode) < mode_strictness(p->mode)) {
		add_widening(p, &l->mode_source, l->mode == MODE_OFF ? "off" : "auto",
			     p->mode == MODE_REQUIRED ? "required" : "auto");
		widened = true;
	}
	if (l->backend_set) {
		add_widening(p, &l->backend_source, backend_name(l->backend), backend_name(p->backend));
		widened = true;
	}
	if (l->home) {
		add_widening(p, &l->home_source, l->home, "a fresh home");
		widened = true;
	}
	/* what git ignores, hidden by a layer before: shown again */
	if (l->hide_ignored_set && !l->hide_ignored && p->hide_ignored) {
		add_widening(p, &l->hide_ignored_source, "false", "true");
		widened = true;
	}
	if (l->max_procs && l->max_procs > p->limits.max_procs) {
		char a[32], b[32];
		snprintf(a, sizeof(a), "%lu", l->max_procs);
		snprintf(b, sizeof(b), "%lu", p->limits.max_procs);
		add_widening(p, &l->max_procs_source, a, b);
		widened = true;
	}
	if ((l->memory.bytes || l->memory.percent) && size_spec_above(&l->memory, &p->limits.memory)) {
		add_size_widening(p, &l->memory_source, &l->memory, &p->limits.memory);
		widened = true;
	}
	if ((l->tmp_size.bytes || l->tmp_size.percent) && size_spec_above(&l->tmp_size, &p->limits.tmp_size)) {
		add_size_widening(p, &l->tmp_size_source, &l->tmp_size, &p->limits.tmp_size);
		widened = true;
	}
	for (size_t k = 0; k < l->n_env_ops; k++)
		if (l->env_ops[k].kind == ENV_PASS && env_is_secret(l->env_ops[k].name)) {
			add_widening(p, &l->env_ops[k].source, l->env_ops[k].name, "removed");
			widened = true;
		}
	/* A name to reach is a way out, as network = on is: each one the
	 * layers before did not allow (with the network on already, they
	 * narrow it). */
	for (size_t k = 0; k < l->n_allow && p->net != NET_ON; k++) {
		if (allowed_already(p, &l->allow[k]))
			continue;
		_cleanup_free_ char *text = allow_entry_text(&l->allow[k]);
		add_widening(p, &l->allow[k].source, text, "not allowed");
		widened = true;
	}
	return widened;
}

static void collect(const struct layer *layers, size_t n, struct policy *p, struct settings *s)
{
	for (size_t i = 0; i < n; i++) {
		const struct layer *l = &layers[i];
		/* An untrusted layer that widens a setting gives none of its
		 * settings: the run is refused anyway, and explain must not
		 * show what it was not given. */
		if (l->needs_trust && settings_widen(p, l))
			continue;
		if (l->workspace) {
			s->workspace = l->workspace;
			s->workspace_source = &l->workspace_source;
		}
		if (l->net_set) {
			p->net = l->net;
			p->net_source = l->net_source;
		}
		if (l->backend_set) {
			p->backend = l->backend;
			p->backend_source = l->backend_source;
		}
		if (l->mode_set) {
			p->mode = l->mode;
			p->mode_source = l->mode_source;
		}
		if (l->hide_ignored_set) {
			p->hide_ignored = l->hide_ignored;
			p->hide_ignored_source = l->hide_ignored_source;
		}
		if (l->max_procs) {
			p->limits.max_procs = l->max_procs;
			p->limits.max_procs_source = l->max_procs_source;
		}
		if (l->memory.bytes || l->memory.percent) {
			p->limits.memory = l->memory;
			p->limits.memory_source = l->memory_source;
		}
		if (l->tmp_size.bytes || l->tmp_size.percent) {
			p->limits.tmp_size = l->tmp_size;
			p->limits.tmp_size_source = l->tmp_size_source;
		}
		if (l->home) {
			s->home = l->home;
			s->home_source = &l->home_source;
			s->home_dir = l->dir;
		}
		for (size_t k = 0; k < l->n_grants; k++) {
			struct net_grant g = l->grants[k];
			g.host = g.host ? xstrdup(g.host) : NULL;
			g.path = g.path ? xstrdup(g.path) : NULL;
			p->grants = xgrow(p->grants, p->n_grants, sizeof(*p->grants));
			p->grants[p->n_grants++] = g;
		}
		for (size_t k = 0; k < l->n_allow; k++) {
			if (allowed_already(p, &l->allow[k]))
				continue;
			p->allow = xgrow(p->allow, p->n_allow, sizeof(*p->allow));
			p->allow[p->n_allow++] = allow_entry_copy(&l->allow[k]);
		}
		for (size_t k = 0; k < l->n_env_ops; k++) {
			s->env_ops = xgrow(s->env_ops, s->n_env_ops, sizeof(*s->env_ops));
			s->env_ops[s->n_env_ops++] = l->env_ops[k];
			if (!l->needs_trust) {
				s->own_ops = xgrow(s->own_ops, s->n_own_ops, sizeof(*s->own_ops));
				s->own_ops[s->n_own_ops++] = l->env_ops[k];
			}
			if (!strv_contains(p->env_decided, l->env_ops[k].name))
				strv_add(&p->env_decided, l->env_ops[k].name);
		}
	}
}

/* A path as a layer wrote it, made absolute: "~" is the caller's home, a
 * relative path starts at the layer's folder (the current directory for
 * the command line). */
static char *layer_path(const struct policy *p, const char *dir, const char *cwd, const char *path)
{
	if (str_has_prefix(path, "~/") || streq(path, "~"))
		return path_join(p->user_home, path + 1);
	if (path[0] == '/')
		return xstrdup(path);
	return path_join(dir ? dir : cwd, path);
}

static int find_home(struct policy *p, char *const *environ, struct policy_failure *f)
{
	const char *passwd_home = defaults_passwd_home(p->uid);
	const char *home_env = defaults_user_var(environ, "HOME");
	if (home_env && passwd_home && streq(home_env, passwd_home))
		p->user_home = xstrdup(passwd_home);
	else if (home_env && path_canonical(home_env, &p->user_home) < 0)
		p->user_home = NULL;
	if (!p->user_home && passwd_home)
		p->user_home = xstrdup(passwd_home);
	if (!p->user_home)
		return policy_fail(f, POLICY_NO_HOME, ENOENT, NULL, NULL);
	if (passwd_home && !streq(passwd_home, p->user_home))
		p->passwd_home = xstrdup(passwd_home);
	return 0;
}

struct run_dir;
static int check_steered(const struct policy *p, const char *abs, const char *as_written, enum access a,
			 const struct source *source, struct run_dir *dir, struct policy_failure *f);

static int find_workspace(struct policy *p, const struct settings *s, const char *cwd, struct run_dir *dir,
			  struct policy_failure *f)
{
	int r;
	if (s->workspace) {
		if (str_has_control(s->workspace))
			return policy_fail(f, POLICY_PATH_CONTROL, 0, s->workspace, s->workspace_source);
		_cleanup_free_ char *abs = s->workspace[0] == '/' ? xstrdup(s->workspace) : path_join(cwd, s->workspace);
		/* a link a run in the directory stockade runs from planted on
		 * the way (packages/app -> ~/.config/autostart) would choose
		 * what this run writes */
		if ((r = check_steered(p, abs, s->workspace, ACCESS_WRITE, s->workspace_source, dir, f)) < 0)
			return r;
		r = path_canonical(abs, &p->workspace);
		if (r < 0)
			return policy_fail(f, POLICY_WORKSPACE_UNUSABLE, -r, s->workspace, s->workspace_source);
		struct stat st;
		if (stat(p->workspace, &st) < 0 || !S_ISDIR(st.st_mode))
			return policy_fail(f, POLICY_WORKSPACE_NOT_DIR, ENOTDIR, s->workspace, s->workspace_source);
	} else {
		r = path_canonical(cwd, &p->workspace);
		if (r < 0)
			return policy_fail(f, POLICY_CWD_UNRESOLVED, -r, cwd, NULL);
	}
	p->cwd = xstrdup(p->workspace);
	/* A workspace is written: never the whole system or the home, where
	 * the credentials and the user's own startup files live. */
	if (streq(p->workspace, "/"))
		return policy_fail(f, POLICY_WORKSPACE_IS_ROOT, 0, p->workspace, s->workspace_source);
	if (path_is_beneath(p->user_home, p->workspace) ||
	    (p->passwd_home && path_is_beneath(p->passwd_home, p->workspace)))
		return policy_fail(f, POLICY_WORKSPACE_HOLDS_HOME, 0, p->workspace, s->workspace_source);
	return 0;
}

/* A git directory named by a `.git` file (or a commondir) at dir, as a
 * canonical path, or NULL. */
static char *git_pointer(const char *dir, const char *file, bool gitfile)
{
	_cleanup_free_ char *path = path_join(dir, file);
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file_at(AT_FDCWD, path, 4096, &text, &len) < 0)
		return NULL;
	_cleanup_free_ char *value = gitfile ? handoff_gitfile_target(text, len) : xstrndup(text, strcspn(text, "\n"));
	if (str_empty(value))
		return NULL;
	_cleanup_free_ char *abs = value[0] == '/' ? xstrdup(value) : path_join(dir, value);
	char *canon = NULL;
	struct stat st;
	if (path_canonical(abs, &canon) < 0 || stat(canon, &st) < 0 || !S_ISDIR(st.st_mode)) {
		free(canon);
		return NULL;
	}
	return canon;
}

/* The file a linked worktree's git directory names its worktree's `.git`
 * by (its `gitdir`, absolute or relative to that directory), canonical,
 * or NULL. */
static char *git_backpointer(const char *gitdir)
{
	_cleanup_free_ char *path = path_join(gitdir, "gitdir");
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	if (read_file_at(AT_FDCWD, path, 4096, &text, &len) < 0 || strlen(text) != len)
		return NULL;
	text[strcspn(text, "\r\n")] = '\0';
	if (str_empty(text))
		return NULL;
	_cleanup_free_ char *abs = text[0] == '/' ? xstrdup(text) : path_join(gitdir, text);
	char *canon = NULL;
	if (path_canonical(abs, &canon) < 0)
		return NULL;
	return canon;
}

static bool has_entry(const char *dir, const char *name, bool want_dir)
{
	_cleanup_free_ char *path = path_join(dir, name);
	struct stat st;
	return lstat(path, &st) == 0 && (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

/* Whether path is the home, or a directory that holds it. */
static bool holds_home(const struct policy *p, const char *path)
{
	return path_is_beneath(p->user_home, path) || (p->passwd_home && path_is_beneath(p->passwd_home, path));
}

/* A linked worktree as the workspace (`git worktree add ../feature`): its
 * `.git` file names its own git directory, COMMON/worktrees/NAME, inside
 * the main repository's, where git also finds the objects, refs, logs and
 * config the worktrees share. That git directory becomes writable and
 * guarded, as the monorepo's below, and the main working tree readable,
 * unless it is the home or above it (a dotfiles repository): then the
 * git directory alone. The `.git` file lies in the workspace, which
 * anyone who wrote the repository wrote: it is believed only where the
 * git directory it names names the workspace back (the `gitdir` file
 * `git worktree add` wrote there, outside the workspace) and its
 * commondir is the one two levels up, so that it cannot turn another
 * place into a grant. A submodule's `.git` file (modules/NAME, no
 * commondir) is not one. */
static void find_linked_worktree(struct policy *p, const char *dotgit)
{
	_cleanup_free_ char *gitdir = git_pointer(p->workspace, ".git", true);
	if (!gitdir || path_is_beneath(gitdir, p->workspace))
		return;	/* none, or inside: the workspace's own */
	const char *name, *folder;
	_cleanup_free_ char *worktrees = path_parent(gitdir, &name);
	_cleanup_free_ char *common = worktrees ? path_parent(worktrees, &folder) : NULL;
	if (!common || !streq(folder, "worktrees") || holds_home(p, common) ||
	    !has_entry(common, "HEAD", false) || !has_entry(common, "objects", true) || !has_entry(common, "refs", true))
		return;
	_cleanup_free_ char *named_common = git_pointer(gitdir, "commondir", false);
	_cleanup_free_ char *back = git_backpointer(gitdir);
	if (!named_common || !streq(named_common, common) || !back || !streq(back, dotgit))
		return;
	const char *base;
	_cleanup_free_ char *main_tree = path_parent(common, &base);
	if (main_tree && streq(base, ".git") && !holds_home(p, main_tree)) {
		p->outer_worktree = TAKE_PTR(main_tree);
		policy_add_rule(p, p->outer_worktree, ACCESS_READ, 0,
				SOURCE_DEFAULT_OF("the main working tree of this linked worktree"),
				"default: the main working tree of this linked worktree");
	}
	p->outer_gitdir = TAKE_PTR(gitdir);
	p->outer_commondir = TAKE_PTR(common);
	policy_add_rule(p, p->outer_commondir, ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("its git directory"),
			"default: the main repository's git directory, shared by this linked worktree (guarded)");
}

/* git from a subdirectory: a workspace inside a git working tree (a
 * package of a monorepo) has git find its repository, as outside. The
 * tree around it becomes readable, its git directory writable; the guard
 * keeps that git directory's hand-offs as it keeps the workspace's. Not
 * for a repository at the home or above it (a dotfiles repository would
 * open up the whole home), nor one across the top. */
static void find_outer_repo(struct policy *p)
{
	struct stat st;
	_cleanup_free_ char *own = path_join(p->workspace, ".git");
	if (lstat(own, &st) == 0) {
		/* the workspace is a repository's top */
		if (S_ISREG(st.st_mode))
			find_linked_worktree(p, own);
		return;
	}
	_cleanup_free_ char *dir = path_parent(p->workspace, NULL);
	while (dir && !streq(dir, "/") && !path_is_beneath(p->user_home, dir) &&
	       !(p->passwd_home && path_is_beneath(p->passwd_home, dir))) {
		_cleanup_free_ char *dotgit = path_join(dir, ".git");
		if (lstat(dotgit, &st) == 0) {
			char *gitdir = NULL;
			if (S_ISDIR(st.st_mode))
				(void)path_canonical(dotgit, &gitdir);
			else if (S_ISREG(st.st_mode))
				gitdir = git_pointer(dir, ".git", true);
			if (!gitdir)
				return;
			p->outer_worktree = TAKE_PTR(dir);
			p->outer_gitdir = gitdir;
			char *common = git_pointer(gitdir, "commondir", false);
			if (common && !streq(common, gitdir))
				p->outer_commondir = common;
			else
				free(common);
			return;
		}
		char *up = path_parent(dir, NULL);
		free(dir);
		dir = up;
	}
}

/* Its rules: the tree read, its git directory (and common one) written. */
static void add_outer_repo_rules(struct policy *p)
{
	if (!p->outer_worktree)
		return;
	policy_add_rule(p, p->outer_worktree, ACCESS_READ, 0, SOURCE_DEFAULT_OF("the git working tree around the workspace"),
			"default: the git working tree around the workspace");
	policy_add_rule(p, p->outer_gitdir, ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("its git directory"),
			"default: its git directory (guarded)");
	if (p->outer_commondir)
		policy_add_rule(p, p->outer_commondir, ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("its git directory"),
				"default: its common git directory (guarded)");
}

/* The trees a run could have written before this one, for a path the
 * command line names: this run's own, and the directory stockade runs
 * from, every run's workspace there (unless it could be none: the home,
 * /). NULL-terminated; free with strv_free. */
static char **steer_trees_now(const struct policy *p, const char *here)
{
	char **v = strv_new();
	for (size_t i = 0; p->writable && p->writable[i]; i++)
		strv_add(&v, p->writable[i]);
	if (here && !strv_contains(v, here))
		strv_add(&v, here);
	return v;
}

/* The directory stockade runs from, as the command line's paths are
 * checked against it: looked at once per build, and only when a path
 * on the command line asks. */
struct run_dir {
	const char *cwd;
	bool looked;
	char *tree;	/* canonical; NULL where it could be no run's workspace (the home, /) */
};

static const char *run_dir_tree(const struct policy *p, struct run_dir *d)
{
	if (d->looked)
		return d->tree;
	d->looked = true;
	if (path_canonical(d->cwd, &d->tree) < 0)
		return NULL;
	if (streq(d->tree, "/") || path_is_beneath(p->user_home, d->tree) ||
	    (p->passwd_home && path_is_beneath(p->passwd_home, d->tree)))
		free(TAKE_PTR(d->tree));
	return d->tree;
}

static void run_dir_done(struct run_dir *d)
{
	free(d->tree);
}

/* A path that leads out of a tree a run may write, by a symlink there or
 * a directory a run could have swapped: what it grants would be what an
 * earlier run chose, not what the file meant when it was written or
 * trusted, nor what the person named (packages/app, planted as a link to
 * ~/.config/autostart). An error naming the key or option, with the path
 * it leads to, which the person may name as it is; a path that stays
 * inside the tree it entered has that tree's rights and is granted as it
 * is, and one that leads where the run has that access anyway gives
 * nothing. dir: for the command line's paths, the directory stockade
 * runs from. */
static int check_steered(const struct policy *p, const char *abs, const char *as_written, enum access a,
			 const struct source *source, struct run_dir *dir, struct policy_failure *f)
{
	if (source->kind != SOURCE_FILE && source->kind != SOURCE_OPTION)
		return 0;
	_cleanup_strv_ char **now = source->kind == SOURCE_OPTION ? steer_trees_now(p, run_dir_tree(p, dir)) : NULL;
	struct steer st;
	if (steer_path(now ? now : p->writable, abs, &st) < 0)
		return 0;	/* the error, if any, is the caller's to find */
	int r = 0;
	/* what the path leads to has what the rule asks already: the way
	 * there grants nothing */
	enum effect want = a == ACCESS_WRITE ? EFFECT_WRITE : EFFECT_READ;
	if (st.escapes && policy_effect(p, st.target) < want) {
		r = policy_fail(f, POLICY_PATH_STEERED, 0, as_written, source);
		f->access = a;
		f->other = TAKE_PTR(st.target);
		f->via = st.link ? TAKE_PTR(st.link) : TAKE_PTR(st.dir);
		f->tree = TAKE_PTR(st.tree);
	}
	steer_free(&st);
	return r;
}

/* A home kept across runs: resolved here, made (if missing) by the
 * backend before the run. One that exists must be a private directory of
 * the caller's: earlier runs wrote it, others must not have. */
static int find_kept_home(struct policy *p, const struct settings *s, const char *cwd, struct policy_failure *f)
{
	if (!s->home)
		return 0;
	if (str_has_control(s->home))
		return policy_fail(f, POLICY_PATH_CONTROL, 0, s->home, s->home_source);
	_cleanup_free_ char *abs = layer_path(p, s->home_dir, cwd, s->home);
	struct stat st;
	if (lstat(abs, &st) == 0) {
		if (!S_ISDIR(st.st_mode))
			return policy_fail(f, POLICY_HOME_UNUSABLE, S_ISLNK(st.st_mode) ? ELOOP : ENOTDIR, s->home, s->home_source);
		if (st.st_uid != p->uid || (st.st_mode & 022))
			return policy_fail(f, POLICY_HOME_UNUSABLE, EPERM, s->home, s->home_source);
		int r = path_canonical(abs, &p->home);
		if (r < 0)
			return policy_fail(f, POLICY_HOME_UNUSABLE, -r, s->home, s->home_source);
	} else if (errno == ENOENT) {
		p->home = path_normalize(abs);
	} else {
		return policy_fail(f, POLICY_HOME_UNUSABLE, errno, s->home, s->home_source);
	}
	if (path_is_beneath(p->user_home, p->home))
		return policy_fail(f, POLICY_HOME_HOLDS_HOME, 0, s->home, s->home_source);
	return 0;
}

/* Whether path lies at or beneath a trust hand-off of the workspace (a
 * name of the table at its top, or anything in a .git): a write there,
 * deeper than the hand-off's own protect rule, would win over it. */
static bool in_handoff(const struct policy *p, const char *path)
{
	if (!path_is_beneath(path, p->workspace) || streq(path, p->workspace))
		return false;
	const char *rel = path_below(path, p->workspace);
	for (size_t i = 0; i < handoff_table_len; i++)
		if (handoff_table[i].place == HANDOFF_AT_TOP && path_is_beneath(rel, handoff_table[i].name))
			return true;
	for (const char *c = rel; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL)
		if (str_has_prefix(c, ".git") && (c[4] == '\0' || c[4] == '/'))
			return true;
	return false;
}

/* A read or write of the user's on the very path a built-in hide keeps
 * (--read ~/.ssh) is the user's own choice: it stands, said once, where
 * on one path hide would otherwise win. A wider one (--read ~) leaves
 * the credentials inside hidden. A workspace file's rule gets here only
 * once the file is trusted (conf/: a read outside the workspace widens).
 * A rule whose own name is a symlink to the credential (--read dir where
 * dir -> ~/.ssh, planted or flipped there by an earlier run) did not name
 * it: the hide stays, and the rule, not honoured, is an error. */
static void lift_default_hide(struct policy *p, const char *canon, const char *abs, const struct layer_rule *lr)
{
	struct stat st;
	if (lstat(abs, &st) < 0 || S_ISLNK(st.st_mode))
		return;
	for (size_t i = 0; i < p->n_rules; i++) {
		struct rule *h = &p->rules[i];
		if (h->access != ACCESS_HIDE || !(h->flags & RULE_SYSTEM) || !streq(h->path, canon))
			continue;
		free(h->path);
		p->rules[i] = p->rules[--p->n_rules];
		p->rules_changed++;	/* the index by path is stale */
		p->lifted = xgrow(p->lifted, p->n_lifted, sizeof(*p->lifted));
		p->lifted[p->n_lifted++] = (struct rule){ .path = xstrdup(canon), .access = lr->access, .source = lr->source };
		return;
	}
}

static int add_layer_rules(struct policy *p, const struct layer *l, const char *cwd, struct run_dir *dir,
			   struct policy_failure *f)
{
	/* An untrusted layer's rules are measured against the layers before
	 * it, all of them before any is added: its own hide on a path does
	 * not make its read there a widening, nor its own read a later one
	 * look narrower. */
	_cleanup_free_ bool *widens = l->needs_trust && l->n_rules ? xcalloc(l->n_rules, sizeof(bool)) : NULL;
	_cleanup_strv_ char **canons = strv_new();
	_cleanup_strv_ char **abss = strv_new();
	for (size_t i = 0; i < l->n_rules; i++) {
		const struct layer_rule *lr = &l->rules[i];
		if (str_has_control(lr->path) || str_empty(lr->path)) {
			int r = policy_fail(f, str_empty(lr->path) ? POLICY_PATH_EMPTY : POLICY_PATH_CONTROL, 0, lr->path,
				     &lr->source);
			f->access = lr->access;
			return r;
		}
		_cleanup_free_ char *abs = layer_path(p, l->dir, cwd, lr->path);
		if (lr->access == ACCESS_READ || lr->access == ACCESS_WRITE) {
			int e = check_steered(p, abs, lr->path, lr->access, &lr->source, dir, f);
			if (e < 0)
				return e;
		}
		char *canon = NULL;
		int r = path_canonical(abs, &canon);
		if (r < 0) {
			if (lr->access == ACCESS_HIDE) {
				/* Nothing there to hide: said, never an error. */
				p->skipped = xgrow(p->skipped, p->n_skipped, sizeof(*p->skipped));
				p->skipped[p->n_skipped++] = (struct rule){ .path = xstrdup(lr->path), .access = lr->access,
									    .source = lr->source };
				strv_add(&canons, "");
				strv_add(&abss, "");
				continue;
			}
			r = policy_fail(f, POLICY_PATH_MISSING, -r, lr->path, &lr->source);
			f->access = lr->access;
			return r;
		}
		/* A rule of an untrusted layer that gives its path more than
		 * the layers before it did (a read where nothing was, a write
		 * where a read was) widens the jail: named, not applied. What
		 * decides a path beneath it is the deepest rule, so what the
		 * path itself had is what everything the rule covers had. */
		if (widens && (lr->access == ACCESS_READ || lr->access == ACCESS_WRITE)) {
			enum effect had = policy_effect(p, canon);
			enum effect gives = lr->access == ACCESS_WRITE ? EFFECT_WRITE : EFFECT_READ;
			if (gives > had) {
				widens[i] = true;
				add_widening(p, &lr->source, lr->path, effect_name(had));
			} else if (lr->access == ACCESS_WRITE && in_handoff(p, canon)) {
				widens[i] = true;
				add_widening(p, &lr->source, lr->path, "a trust hand-off, kept read-only");
			}
		}
		strv_push(&canons, canon);
		strv_add(&abss, abs);
	}
	for (size_t i = 0; i < l->n_rules; i++) {
		const struct layer_rule *lr = &l->rules[i];
		if (!canons[i][0] || (widens && widens[i]))
			continue;
		if (lr->access == ACCESS_READ || lr->access == ACCESS_WRITE)
			lift_default_hide(p, canons[i], abss[i], lr);
		policy_add_rule(p, canons[i], lr->access, 0, lr->source, NULL);
	}
	return 0;
}

/* Whether what a path ends up with is what a rule on it asks for; a
 * protect asks only that it is not written. */
static bool honoured(enum access a, enum effect e)
{
	switch (a) {
	case ACCESS_READ:
		return e == EFFECT_READ;
	case ACCESS_WRITE:
		return e == EFFECT_WRITE;
	case ACCESS_HIDE:
		return e == EFFECT_NONE;
	case ACCESS_PROTECT:
		return e != EFFECT_WRITE;
	}
	return false;
}

static bool is_users(const struct rule *r)
{
	return r->source.kind != SOURCE_DEFAULT;
}

/* Every rule the user asked for is honoured, or the run is refused: a
 * rule another decides on its own path (a --read of a credential the
 * defaults hide, a --write of a trust hand-off), a hide that would take
 * the workspace away (--hide /, --hide ..), a rule on the jail's own
 * /proc or /dev. A hide of the user's takes away the built-in grants
 * beneath it too (--hide ~ hides the toolchains the defaults read there);
 * the user's own rules beneath it stand. */
static int honour_user_rules(struct policy *p, struct policy_failure *f)
{
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *u = &p->rules[i];
		if (!is_users(u))
			continue;
		int fault = POLICY_OK;
		const struct rule *w = NULL;
		if (path_is_beneath(u->path, "/proc") || path_is_beneath(u->path, "/dev"))
			fault = POLICY_RULE_SPECIAL;
		else if (u->access != ACCESS_HIDE && policy_in_own_state(p, u->path))
			fault = POLICY_RULE_STATE;
		else if (u->access == ACCESS_HIDE && path_is_beneath(p->workspace, u->path))
			fault = POLICY_RULE_HOLDS_WORKSPACE;
		else if ((w = policy_rule_for(p, u->path)) && w != u && streq(w->path, u->path) &&
			 !honoured(u->access, policy_effect(p, u->path)))
			fault = POLICY_RULE_OVERRULED;
		else
			w = NULL;
		if (fault == POLICY_OK)
			continue;
		/* the path as the user wrote it is gone by now: the canonical one */
		int r = policy_fail(f, (enum policy_fault)fault, 0, u->path, &u->source);
		f->access = u->access;
		if (w) {
			f->other = w->origin ? xstrdup(w->origin) : source_text(&w->source);
			f->other_access = w->access;
		}
		return r;
	}
	size_t kept = 0;
	for (size_t i = 0; i < p->n_rules; i++) {
		struct rule *r = &p->rules[i];
		bool dropped = false;
		if (!is_users(r) && (r->access == ACCESS_READ || r->access == ACCESS_WRITE))
			for (size_t k = 0; k < p->n_rules && !dropped; k++)
				dropped = is_users(&p->rules[k]) && p->rules[k].access == ACCESS_HIDE &&
					  !streq(p->rules[k].path, r->path) && path_is_beneath(r->path, p->rules[k].path);
		if (dropped)
			free(r->path);
		else
			p->rules[kept++] = *r;
	}
	p->n_rules = kept;
	return 0;
}

/* The program that will run: argv[0] found on the command's own PATH
 * (after every layer's env), from where the command starts, as execvp
 * finds it; run from where it really is, argv[0] staying as the caller
 * wrote it. Its grant is the defaults', from what the person set (env). */
static void add_program(struct policy *p, char *const *argv, char *const *env, const char *from)
{
	if (!argv || !argv[0])
		return;
	p->argv = strv_new();
	for (size_t i = 0; argv[i]; i++)
		strv_add(&p->argv, argv[i]);
	int r = path_find_program(argv[0], env_get(p->env.envp, "PATH"), p->cwd, &p->program);
	p->program_error = -r;
	if (r == 0) {
		/* It is exec'd by the path found on PATH, links kept, where
		 * that leads to the same file in the jail (jail/child.c), and
		 * argv[0] stays as the caller wrote it, as a shell does; what
		 * it really is is what is granted (defaults_add_program). */
		char *canon = NULL;
		if (path_canonical(p->program, &canon) == 0) {
			if (!streq(canon, p->program))
				p->exec_path = TAKE_PTR(p->program);
			else
				free(p->program);
			p->program = canon;
		}
	}
	/* found on the same PATH as the grant's: the same search */
	const char *grant_path = env_get(env, "PATH"), *run_path = env_get(p->env.envp, "PATH");
	bool same = r == 0 && (grant_path == run_path || (grant_path && run_path && streq(grant_path, run_path)));
	defaults_add_program(p, argv[0], env, from, same ? (p->exec_path ? p->exec_path : p->program) : NULL);
	/* A program that cannot be found or run is the caller's to report
	 * with 126 or 127, before anything starts. */
}

int policy_find_state_dir(char *const *environ, char **ret, struct policy_failure *f)
{
	*f = (struct policy_failure){ 0 };
	struct policy p;
	policy_init(&p);
	p.uid = getuid();
	int r = find_home(&p, environ, f);
	if (r == 0) {
		p.state_dir = own_state_dir(&p, environ);
		r = own_resolve_state(&p, f);
	}
	if (r == 0)
		*ret = TAKE_PTR(p.state_dir);
	policy_free(&p);
	return r;
}

void policy_add_handoffs(struct policy *p, const char *base, char *const *rel_paths)
{
	for (size_t i = 0; rel_paths && rel_paths[i]; i++) {
		_cleanup_free_ char *path = path_join(base, rel_paths[i]);
		policy_add_rule(p, path, ACCESS_PROTECT, RULE_HANDOFF | RULE_BENEATH, SOURCE_DEFAULT_OF("trust hand-off"),
				"default: trust hand-off");
	}
	policy_sort(p);
}

/* A built-in read is there to grant: one that lies in a tree a wider
 * rule lets the run write (a PATH directory in the workspace, a venv's
 * bin/ on PATH) would make it read-only there, and is dropped. The
 * user's own reads narrow, as DESIGN.md's path rules say. */
static bool default_read(const struct rule *r)
{
	return (r->flags & RULE_SYSTEM) && r->access == ACCESS_READ;
}

static void drop_narrowing_defaults(struct policy *p)
{
	size_t kept = 0;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *r = &p->rules[i];
		/* the deepest other rule over it, built-in reads aside */
		const struct rule *over = NULL;
		for (size_t j = 0; default_read(r) && j < p->n_rules; j++) {
			const struct rule *o = &p->rules[j];
			if (default_read(o) || !path_is_beneath(r->path, o->path))
				continue;
			size_t lo = strlen(o->path), lb = over ? strlen(over->path) : 0;
			if (!over || lo > lb || (lo == lb && o->access > over->access))
				over = o;
		}
		if (over && over->access == ACCESS_WRITE) {
			free(p->rules[i].path);
			continue;
		}
		p->rules[kept++] = p->rules[i];
	}
	p->n_rules = kept;
}

/* Whose PATH the defaults read, for their grants' origins: the caller's,
 * or the last layer's among ops that set it. */
static char *path_from(const struct env_op *ops, size_t n)
{
	for (size_t i = n; i-- > 0;)
		if (streq(ops[i].name, "PATH") && ops[i].kind != ENV_PASS) {
			_cleanup_free_ char *t = source_text(&ops[i].source);
			return xstrcat3("PATH as ", t, " sets it");
		}
	return xstrdup("your environment's PATH");
}

/* The trees the run may write, known before any rule is made: the
 * workspace, a kept home, the caches, the git directory around the
 * workspace, and every layer's write (a later layer's too), so that no
 * built-in grant and no settings file's path is derived through one. */
static char **first_writable(const struct policy *p, const struct layer *layers, size_t n, const char *cwd)
{
	char **v = strv_new();
	const char *own[] = { p->workspace, p->home, p->cache_dir, p->outer_gitdir, p->outer_commondir };
	for (size_t i = 0; i < ARRAY_SIZE(own); i++)
		if (own[i] && !strv_contains(v, own[i]))
			strv_add(&v, own[i]);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < layers[i].n_rules; k++) {
			const struct layer_rule *lr = &layers[i].rules[k];
			if (lr->access != ACCESS_WRITE || str_empty(lr->path) || str_has_control(lr->path))
				continue;
			_cleanup_free_ char *abs = layer_path(p, layers[i].dir, cwd, lr->path);
			_cleanup_free_ char *canon = NULL;
			if (path_canonical(abs, &canon) == 0 && !strv_contains(v, canon))
				strv_add(&v, canon);
		}
	return v;
}

/* The grants the defaults derive from env alone (its PATH's directories,
 * toolchains and links, the command's program), for p's user, workspace
 * and writable trees. */
static void derive_alone(const struct policy *p, char *const *env, const char *from, struct policy *q)
{
	policy_init(q);
	q->uid = p->uid;
	q->gid = p->gid;
	q->net = p->net;
	q->user_home = xstrdup(p->user_home);
	q->workspace = xstrdup(p->workspace);
	q->cwd = xstrdup(p->cwd);
	q->writable = strv_new();
	for (size_t i = 0; p->writable && p->writable[i]; i++)
		strv_add(&q->writable, p->writable[i]);
	defaults_add_path_reads(q, env, from);
	if (p->argv && p->argv[0])
		defaults_add_program(q, p->argv[0], env, from, NULL);
}

/* A grant q gives that neither base nor the policy p gives, or NULL. */
static const struct rule *grant_beyond(const struct policy *q, const struct policy *base, const struct policy *p)
{
	for (size_t i = 0; i < q->n_rules; i++) {
		const struct rule *r = &q->rules[i];
		if (r->access != ACCESS_READ && r->access != ACCESS_WRITE)
			continue;
		enum effect e = r->access == ACCESS_WRITE ? EFFECT_WRITE : EFFECT_READ;
		if (policy_effect(base, r->path) < e && policy_effect(p, r->path) < e)
			return r;
	}
	return NULL;
}

/* Each operation of an untrusted layer on one of names, as the widening
 * that gives r. */
static void name_env_ops(struct policy *p, const struct layer *layers, size_t n, char *const *names, const struct rule *r)
{
	_cleanup_free_ char *what = xasprintf("with it the built-in defaults would %s '%s' (%s)",
					      r->access == ACCESS_WRITE ? "write" : "read", r->path,
					      r->origin ? r->origin : "default");
	for (size_t i = 0; i < n; i++) {
		if (!layers[i].needs_trust)
			continue;
		for (size_t k = 0; k < layers[i].n_env_ops; k++) {
			const struct env_op *op = &layers[i].env_ops[k];
			if (!strv_contains(names, op->name))
				continue;
			_cleanup_free_ char *value = op->kind == ENV_SET ? xstrcat3(op->name, "=", op->value) : xstrdup(op->name);
			struct widening *w = add_widening(p, &op->source, value, "your environment's");
			w->what = xstrdup(what);
		}
	}
}

static bool same_value(const char *a, const char *b)
{
	return a && b ? streq(a, b) : a == b;
}

/* What an untrusted layer sets in the environment (PATH, a toolchain's
 * variable, anything the defaults read) is measured as every other
 * setting is: the defaults derive the run's grants from what the person
 * set (own: the caller's environment and the trusted layers'); the grants
 * they would derive from the command's environment (all) beyond those are
 * widenings, each named by the operations on the variable that gives it. */
static void measure_env(struct policy *p, const struct layer *layers, size_t n, const struct env *own,
			const char *own_from, const struct env *all, const char *all_from)
{
	_cleanup_strv_ char **names = strv_new();
	char *const *envs[] = { own->envp, all->envp };
	for (size_t e = 0; e < ARRAY_SIZE(envs); e++)
		for (size_t i = 0; envs[e] && envs[e][i]; i++) {
			const char *eq = strchr(envs[e][i], '=');
			if (!eq)
				continue;
			_cleanup_free_ char *name = xstrndup(envs[e][i], (size_t)(eq - envs[e][i]));
			if (!strv_contains(names, name) && !same_value(env_get(own->envp, name), env_get(all->envp, name)))
				strv_add(&names, name);
		}
	if (!names[0])
		return;
	struct policy base;
	derive_alone(p, own->envp, own_from, &base);
	bool named = false;
	for (size_t i = 0; names[i]; i++) {
		struct env mixed;
		env_copy(&mixed, own);
		env_put(&mixed, names[i], env_get(all->envp, names[i]), "measured");
		struct policy q;
		derive_alone(p, mixed.envp, streq(names[i], "PATH") ? all_from : own_from, &q);
		const struct rule *r = grant_beyond(&q, &base, p);
		if (r) {
			char *one[] = { names[i], NULL };
			name_env_ops(p, layers, n, one, r);
			named = true;
		}
		policy_free(&q);
		env_free(&mixed);
	}
	/* none alone, but together */
	if (!named && names[1]) {
		struct policy q;
		derive_alone(p, all->envp, all_from, &q);
		const struct rule *r = grant_beyond(&q, &base, p);
		if (r)
			name_env_ops(p, layers, n, names, r);
		policy_free(&q);
	}
	policy_free(&base);
}

static bool untrusted_env(const struct layer *layers, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (layers[i].needs_trust && layers[i].n_env_ops)
			return true;
	return false;
}

/* hide-ignored, last: what git ignores is hidden once every rule and the
 * program are known (the trees the command runs from are kept). */
static int hide_ignored(struct policy *p, const struct policy_facts *facts, struct policy_failure *f)
{
	if (!p->hide_ignored || !facts || !facts->ignored)
		return 0;
	const char *list = NULL;
	size_t len = 0;
	int r = facts->ignored(facts->data, p->workspace, p->user_home, &list, &len);
	if (r < 0)
		return policy_fail(f, POLICY_IGNORED, -r, p->workspace, &p->hide_ignored_source);
	if (r > 0) {
		p->ignored.no_tree = true;
		return 0;
	}
	policy_hide_ignored(p, list, len);
	return 0;
}

int policy_build(const struct layer *layers, size_t n_layers, char *const *argv, char *const *environ,
		 const struct policy_facts *facts, struct policy *p, struct policy_failure *f)
{
	*f = (struct policy_failure){ 0 };
	policy_init(p);
	p->uid = getuid();
	p->gid = getgid();
	p->net_source = SOURCE_DEFAULT_OF("network");
	p->backend_source = SOURCE_DEFAULT_OF("backend");
	p->mode_source = SOURCE_DEFAULT_OF("mode");
	struct settings s = { 0 };
	collect(layers, n_layers, p, &s);
	_cleanup_free_ struct env_op *ops = s.env_ops;
	_cleanup_free_ struct env_op *own_ops = s.own_ops;

	int r = find_home(p, environ, f);
	if (r < 0)
		return r;
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (!cwd)
		return policy_fail(f, POLICY_NO_CWD, errno, NULL, NULL);
	_cleanup_(run_dir_done) struct run_dir dir = { .cwd = cwd };
	if ((r = find_workspace(p, &s, cwd, &dir, f)) < 0 || (r = find_kept_home(p, &s, cwd, f)) < 0)
		return r;
	p->cache_dir = own_cache_dir(p, environ);
	p->state_dir = own_state_dir(p, environ);
	p->own_state = own_state_places(p, environ);
	find_outer_repo(p);
	p->writable = first_writable(p, layers, n_layers, cwd);
	if (s.home) {
		_cleanup_free_ char *abs = layer_path(p, s.home_dir, cwd, s.home);
		if ((r = check_steered(p, abs, s.home, ACCESS_WRITE, s.home_source, &dir, f)) < 0)
			return r;
	}

	/* The command's environment takes every layer's operations; the
	 * grants derived from an environment take only what the person set:
	 * the caller's, and what the layers that need no trust did to it. */
	env_begin(&p->env, environ, ops, s.n_env_ops);
	struct env own = { 0 };
	env_begin(&own, environ, own_ops, s.n_own_ops);
	_cleanup_free_ char *own_from = path_from(own_ops, s.n_own_ops);
	p->env_ops = xcalloc(s.n_env_ops + 1, sizeof(*p->env_ops));
	for (size_t i = 0; i < s.n_env_ops; i++)
		p->env_ops[i] = (struct env_op){ .kind = ops[i].kind, .name = xstrdup(ops[i].name),
						 .value = ops[i].value ? xstrdup(ops[i].value) : NULL,
						 .source = ops[i].source };
	p->n_env_ops = s.n_env_ops;
	defaults_point_caches(p);

	defaults_add_reads(p, own.envp, own_from);
	policy_add_rule(p, p->workspace, ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("workspace"), "workspace");
	add_outer_repo_rules(p);
	if (p->home)
		policy_add_rule(p, p->home, ACCESS_WRITE, 0, *s.home_source, "home (--home)");
	policy_add_rule(p, p->cache_dir, ACCESS_WRITE, 0, SOURCE_DEFAULT_OF("stockade's own build caches"),
			"stockade's own build caches");
	defaults_add_hides(p);

	for (size_t i = 0; i < n_layers && r == 0; i++)
		r = add_layer_rules(p, &layers[i], cwd, &dir, f);
	if (r == 0) {
		add_program(p, argv, own.envp, own_from);
		if ((r = honour_user_rules(p, f)) == 0)
			r = own_check(p, f);
	}
	if (r == 0) {
		drop_narrowing_defaults(p);
		policy_sort(p);
		if (untrusted_env(layers, n_layers)) {
			struct env all = { 0 };
			env_begin(&all, environ, ops, s.n_env_ops);
			_cleanup_free_ char *all_from = path_from(ops, s.n_env_ops);
			measure_env(p, layers, n_layers, &own, own_from, &all, all_from);
			env_free(&all);
		}
		/* from here on, what the final policy lets the run write */
		strv_free(p->writable);
		p->writable = steer_trees(p);
		r = hide_ignored(p, facts, f);
	}
	env_free(&own);
	return r;
}
