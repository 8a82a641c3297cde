#include "policy/defaults.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pwd.h>
#include <sys/stat.h>

#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/env.h"
#include "policy/steer.h"

#define DEFAULT SOURCE_DEFAULT_OF(NULL)

/* The system, read: canonicalised once (/bin and /lib are links into
 * /usr on merged-usr systems), missing ones skipped. */
static const char *const system_reads[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
	/* procfs: Landlock cannot tell the run's own /proc/PID from another's;
	 * its ptrace scoping keeps environ, mem, fd and maps of outside
	 * processes closed. */
	"/proc",
	/* what runtimes read to size themselves: CPUs, NUMA, cgroup limits,
	 * transparent huge pages */
	"/sys/devices/system/cpu", "/sys/devices/system/node", "/sys/fs/cgroup",
	"/sys/kernel/mm/transparent_hugepage",
};

/* Devices are read and written, never made. */
static const char *const devices[] = {
	"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty",
};

/* Credentials, hidden even inside anything granted (home-relative). */
static const char *const credentials[] = {
	".ssh", ".aws", ".azure", ".gnupg", ".netrc", ".docker", ".kube", ".npmrc",
	".pypirc", ".git-credentials", ".password-store", ".config/gh", ".config/gcloud",
	".cargo/credentials", ".cargo/credentials.toml", ".local/share/keyrings",
};

/* For a run started as root: root in the jail has no capabilities but
 * still owns root's files. */
static const char *const root_secrets[] = {
	"/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers",
	"/etc/sudoers.d", "/etc/ssh/*_key", "/etc/ssl/private",
};

/* Package caches, read by their known subdirectories, never all of
 * ~/.cache or ~/.m2 where tokens and settings live (home-relative). */
static const char *const caches[] = {
	".cache/pip", ".cache/uv", ".cache/pypoetry/cache", ".cache/pypoetry/artifacts",
	".npm/_cacache", ".cache/yarn", ".yarn/berry/cache", ".local/share/pnpm/store",
	".cargo/registry", ".cargo/git", "go/pkg/mod", ".m2/repository", ".gradle/caches",
	".gradle/wrapper/dists", ".ivy2/cache", ".cache/coursier", ".nuget/packages",
	".cache/deno", ".bun/install/cache", ".cache/ms-playwright", ".cache/node-gyp",
};

/* A toolchain: a PATH entry beneath its root brings the root (or only
 * the given subdirectories), its companions, and its variable pointing at
 * the real root, since the jail's home is not the real one. */
struct toolchain {
	const char *name;
	const char *var;	/* set by the user, it says where the root is */
	const char *root;	/* else this, home-relative */
	const char *subs[3];	/* read only these beneath the root (none: all) */
	const char *companion;	/* another toolchain it needs */
};

static const struct toolchain toolchains[] = {
	{ "cargo", "CARGO_HOME", ".cargo", { 0 }, "rustup" },
	{ "rustup", "RUSTUP_HOME", ".rustup", { 0 }, NULL },
	{ "pyenv", "PYENV_ROOT", ".pyenv", { 0 }, NULL },
	{ "nvm", "NVM_DIR", ".nvm", { 0 }, NULL },
	{ "volta", "VOLTA_HOME", ".volta", { 0 }, NULL },
	{ "bun", "BUN_INSTALL", ".bun", { 0 }, NULL },
	{ "deno", "DENO_INSTALL", ".deno", { 0 }, NULL },
	{ "go", "GOPATH", "go", { "bin", "pkg/mod" }, NULL },
	{ "go-sdk", NULL, "sdk", { 0 }, NULL },
	{ "sdkman", "SDKMAN_DIR", ".sdkman", { 0 }, NULL },
};

/* Where stockade's own build caches go inside its cache directory, and the
 * variables that point there. */
const struct own_cache defaults_own_caches[] = {
	{ "XDG_CACHE_HOME", "xdg" },
	{ "GOCACHE", "go-build" },
	{ "CCACHE_DIR", "ccache" },
	{ "npm_config_cache", "npm" },
};
const size_t defaults_n_own_caches = ARRAY_SIZE(defaults_own_caches);

/* The names in the caller's home, and in the directories below it the
 * defaults name (~/.cache, ~/.local/share), each read once: most of the
 * paths the defaults name there (caches, toolchains, credentials) do
 * not exist, and one directory read answers for all of them, where each
 * would cost an open and a walk of its components. */
#define LISTED_MAX 8
static struct listed {
	char *dir;
	char **names;	/* sorted; NULL: it could not be read */
} listed[LISTED_MAX];
static size_t n_listed;
static char *home_listed;

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void forget_listings(void)
{
	for (size_t i = 0; i < n_listed; i++) {
		free(listed[i].dir);
		strv_free(listed[i].names);
	}
	n_listed = 0;
	free(home_listed);
	home_listed = NULL;
}

static void list_home(const char *home)
{
	forget_listings();
	home_listed = home ? xstrdup(home) : NULL;
}

/* The sorted names in dir, or NULL where they are not known. */
static char **listing_of(const char *dir)
{
	for (size_t i = 0; i < n_listed; i++)
		if (streq(listed[i].dir, dir))
			return listed[i].names;
	if (n_listed == LISTED_MAX)
		return NULL;
	struct listed *l = &listed[n_listed++];
	l->dir = xstrdup(dir);
	l->names = NULL;
	DIR *d = opendir(dir);
	if (!d)
		return NULL;
	l->names = strv_new();
	struct dirent *de;
	while ((de = readdir(d)))
		strv_add(&l->names, de->d_name);
	closedir(d);
	qsort(l->names, strv_length(l->names), sizeof(char *), strp_cmp);
	return l->names;
}

/* False when path lies in the home under a name that one of the
 * directories on its way does not have. */
static bool may_exist(const char *path)
{
	if (!home_listed || !path_is_beneath(path, home_listed) || streq(path, home_listed))
		return true;
	_cleanup_free_ char *dir = xstrdup(home_listed);
	const char *rest = path_below(path, home_listed);
	for (unsigned depth = 0; *rest && depth < 3; depth++) {
		char **names = listing_of(dir);
		if (!names)
			return true;
		_cleanup_free_ char *name = xstrndup(rest, strcspn(rest, "/"));
		if (!bsearch(&name, names, strv_length(names), sizeof(char *), strp_cmp))
			return false;
		rest += strlen(name);
		while (*rest == '/')
			rest++;
		char *next = path_join(dir, name);
		free(dir);
		dir = next;
	}
	return true;
}


/* A built-in grant that would have led to path, not given: noted (once
 * per path) for why and for the note a run says. */
static void note_declined(struct policy *p, const char *path, const char *origin, const struct steer *s)
{
	for (size_t i = 0; i < p->n_declined; i++)
		if (streq(p->declined[i].path, path))
			return;
	p->declined = xgrow(p->declined, p->n_declined, sizeof(*p->declined));
	p->declined[p->n_declined++] = (struct declined){
		.path = xstrdup(path),
		.origin = xstrdup(origin),
		.via = xstrdup(s->dir ? s->dir : s->target),
		.link = s->link ? xstrdup(s->link) : NULL,
	};
}

/* Where a built-in grant on path would lead, or NULL: it does not exist,
 * or a run could have steered it (*ret_steered then, if given). A path
 * whose way passes through a tree the run may write (a link in the
 * workspace, a PATH directory there swapped for a symlink, anything
 * beneath the tree's top) gets that tree's rights and no more: a grant
 * derived from it would follow what an earlier run put there. One that
 * led out of the tree is noted. The top of a writable tree itself is
 * left to the rules (a read there would narrow it, and goes). */
static char *grant_target(struct policy *p, const char *path, const char *origin, bool *ret_steered)
{
	if (ret_steered)
		*ret_steered = false;
	if (!may_exist(path) || path[0] != '/')
		return NULL;
	struct steer s;
	if (steer_path(p->writable, path, &s) < 0)
		return NULL;
	char *target = NULL;
	if (s.dir) {
		if (ret_steered)
			*ret_steered = true;
		if (s.escapes && !s.missing)
			note_declined(p, s.target, origin, &s);
	} else if (!s.missing) {
		target = TAKE_PTR(s.target);
	}
	steer_free(&s);
	return target;
}

/* Adds a rule on a path that is canonicalised first; a missing path, or
 * one a run could have steered, is skipped. */
static void add_canonical(struct policy *p, const char *path, enum access a, unsigned flags,
			  const char *origin)
{
	_cleanup_free_ char *c = grant_target(p, path, origin, NULL);
	if (c)
		policy_add_rule(p, c, a, flags, DEFAULT, origin);
}

/* A hidden path, and, where it is a symlink or lies under one, the place
 * it really is: a stow-managed ~/.aws/credentials is as secret at its
 * target. */
static void add_hidden(struct policy *p, const char *path, unsigned flags, const char *origin)
{
	/* A credential that does not exist needs no rule: the fresh home
	 * holds whatever the command creates. */
	struct stat st;
	if (!may_exist(path) || lstat(path, &st) < 0)
		return;
	policy_add_rule(p, path, ACCESS_HIDE, flags, DEFAULT, origin);
	_cleanup_free_ char *c = NULL;
	if (path_canonical(path, &c) < 0 || streq(c, path))
		return;
	_cleanup_free_ char *why = xasprintf("%s, the target of %s", origin, path);
	policy_add_rule(p, c, ACCESS_HIDE, flags, DEFAULT, why);
}

const char *defaults_user_var(char *const *environ, const char *name)
{
	const char *v = env_get(environ, name);
	return v && v[0] == '/' ? v : NULL;
}

/* Symlinks inside a hidden directory (a stow-managed ~/.kube/config)
 * point at secrets stored elsewhere: their targets are hidden too. A few
 * levels and a few hundred entries: credential directories are small. */
static void hide_link_targets(struct policy *p, const char *dir, int depth, unsigned *budget)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || depth > 4)
		return;
	DIR *d = fdopendir(fd);
	if (!d)
		return;
	fd = -1;
	struct dirent *de;
	while ((de = readdir(d)) && *budget > 0) {
		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		(*budget)--;
		_cleanup_free_ char *path = path_join(dir, de->d_name);
		if (de->d_type == DT_LNK)
			add_hidden(p, path, RULE_SYSTEM, "default: credentials");
		else if (de->d_type == DT_DIR)
			hide_link_targets(p, path, depth + 1, budget);
	}
	closedir(d);
}

static void add_credentials(struct policy *p, const char *home)
{
	unsigned budget = 512;
	for (size_t i = 0; i < ARRAY_SIZE(credentials); i++) {
		_cleanup_free_ char *path = path_join(home, credentials[i]);
		add_hidden(p, path, RULE_SYSTEM, "default: credentials");
		hide_link_targets(p, path, 0, &budget);
	}
}

static void add_root_secrets(struct policy *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(root_secrets); i++) {
		glob_t g;
		if (glob(root_secrets[i], GLOB_NOSORT, NULL, &g) != 0)
			continue;
		for (size_t j = 0; j < g.gl_pathc; j++)
			add_hidden(p, g.gl_pathv[j], RULE_SYSTEM, "default: the system's secrets (run as root)");
		globfree(&g);
	}
	if (!path_is_beneath(p->workspace, "/root"))
		policy_add_rule(p, "/root", ACCESS_HIDE, RULE_SYSTEM, DEFAULT, "default: root's home (run as root)");
}

static const struct toolchain *toolchain_named(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(toolchains); i++)
		if (streq(toolchains[i].name, name))
			return &toolchains[i];
	return NULL;
}

/* The root of a toolchain for this user: where its variable says, or
 * its place in the home. Canonical, or NULL when it does not exist or a
 * run could have steered it. */
static char *toolchain_root(struct policy *p, const struct toolchain *t, char *const *env)
{
	const char *var = t->var ? defaults_user_var(env, t->var) : NULL;
	_cleanup_free_ char *path = var ? xstrdup(var) : path_join(p->user_home, t->root);
	_cleanup_free_ char *origin = xstrcat3("default: toolchain ", t->name, "");
	return grant_target(p, path, origin, NULL);
}

static void add_toolchain(struct policy *p, const struct toolchain *t, const char *root, const char *why)
{
	_cleanup_free_ char *origin = xasprintf("default: toolchain %s (%s)", t->name, why);
	if (!t->subs[0]) {
		policy_add_rule(p, root, ACCESS_READ, RULE_SYSTEM, DEFAULT, origin);
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(t->subs) && t->subs[i]; i++) {
			_cleanup_free_ char *sub = path_join(root, t->subs[i]);
			add_canonical(p, sub, ACCESS_READ, RULE_SYSTEM, origin);
		}
	}
	if (t->var)
		if (!strv_contains(p->env_decided, t->var))
			env_put(&p->env, t->var, root, origin);
}

/* The tree a tool's link reaches: the prefix of a bin/ directory (a venv,
 * an install prefix), or the directory the target is in; only the target
 * itself when that would be the home or above it. */
static char *linked_tree(const char *home, const char *target)
{
	const char *name;
	_cleanup_free_ char *dir = path_parent(target, &name);
	const char *base = strrchr(dir, '/');
	if (base && streq(base + 1, "bin")) {
		char *up = path_parent(dir, &name);
		free(dir);
		dir = up;
	}
	return path_is_beneath(home, dir) ? xstrdup(target) : TAKE_PTR(dir);
}

/* A venv's interpreter: pyvenv.cfg's "home = DIR" (the base's bin).
 * Never read through what a run could have put there. */
static char *venv_home(struct policy *p, const char *tree)
{
	_cleanup_free_ char *cfg = path_join(tree, "pyvenv.cfg"), *text = NULL;
	_cleanup_free_ char *at = grant_target(p, cfg, "default: the interpreter pyvenv.cfg names", NULL);
	size_t len = 0;
	if (!at || read_file_at(AT_FDCWD, at, 16384, &text, &len) < 0)
		return NULL;
	for (char *line = text, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line += strspn(line, " \t");
		if (strncmp(line, "home", 4) != 0)
			continue;
		char *v = line + 4 + strspn(line + 4, " \t");
		if (*v != '=')
			continue;
		v += 1 + strspn(v + 1, " \t");
		v[strcspn(v, " \t\r")] = '\0';
		return *v == '/' ? path_join(v, "python") : NULL;
	}
	return NULL;
}

static void add_linked(struct policy *p, const char *link, const char *why, unsigned depth)
{
	_cleanup_free_ char *origin = xstrcat3("default: linked from PATH (", why, ")");
	_cleanup_free_ char *target = grant_target(p, link, origin, NULL);
	if (!target || !path_is_beneath(target, p->user_home) || path_is_beneath(target, p->workspace))
		return;
	_cleanup_free_ char *tree = linked_tree(p->user_home, target);
	if (policy_effect(p, tree) != EFFECT_NONE)
		return;
	policy_add_rule(p, tree, ACCESS_READ, RULE_SYSTEM, SOURCE_DEFAULT_OF("PATH"), origin);
	/* a venv brings its base interpreter, once */
	_cleanup_free_ char *base = depth ? NULL : venv_home(p, tree);
	if (base)
		add_linked(p, base, why, depth + 1);
}

/* Tools installed as symlinks in a PATH directory under the home (pipx,
 * uv tool, ~/.local/bin/x -> ~/opt/x/bin/x): the tree each reaches is
 * read too, so that a script calling the tool finds it working, as the
 * command itself does. Credentials stay hidden by their deeper rules. A
 * bounded number of entries is looked at. */
#define LINKED_MAX 512

/* A PATH directory a run may write (a venv's bin/ in the workspace): its
 * links are not followed, but those that lead out of it to a tree of the
 * home (an interpreter uv or pyenv installed) are noted, so that the run
 * can say what it did not grant, and how to. */
static void decline_linked_trees(struct policy *p, const char *dir, const char *entry, const char *from)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	char buf[DIR_BUF];
	struct dir_iter it = { .fd = fd, .buf = buf };
	const dir_entry *de;
	int err;
	for (unsigned n = 0; n < LINKED_MAX && (de = dir_next(&it, &err)); n++) {
		if (de->d_type != DT_LNK)
			continue;
		/* Only for a note: a link whose text stays in a writable tree
		 * (node_modules/.bin's hundreds, ../pkg/bin/x) is not walked. */
		char text[PATH_MAX];
		ssize_t len = readlinkat(fd, de->d_name, text, sizeof(text) - 1);
		if (len <= 0)
			continue;
		text[len] = '\0';
		_cleanup_free_ char *lexical = text[0] == '/' ? path_normalize(text) : NULL;
		if (!lexical) {
			_cleanup_free_ char *joined = path_join(dir, text);
			lexical = path_normalize(joined);
		}
		if (steer_tree_of(p->writable, lexical))
			continue;
		_cleanup_free_ char *link = path_join(dir, de->d_name);
		struct steer st;
		if (steer_path(p->writable, link, &st) < 0)
			continue;
		if (st.escapes && !st.missing && path_is_beneath(st.target, p->user_home) &&
		    !path_is_beneath(st.target, p->workspace)) {
			_cleanup_free_ char *tree = linked_tree(p->user_home, st.target);
			_cleanup_free_ char *name = path_join(entry, de->d_name);
			_cleanup_free_ char *origin = xasprintf("default: linked from PATH (%s, from %s)", name, from);
			if (policy_effect(p, tree) == EFFECT_NONE)
				note_declined(p, tree, origin, &st);
		}
		steer_free(&st);
	}
}

static void add_linked_trees(struct policy *p, const char *dir, const char *entry, const char *from)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	char buf[DIR_BUF];
	struct dir_iter it = { .fd = fd, .buf = buf };
	const dir_entry *de;
	int err;
	for (unsigned n = 0; n < LINKED_MAX && (de = dir_next(&it, &err)); n++) {
		if (de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)
			continue;
		_cleanup_free_ char *link = path_join(dir, de->d_name);
		_cleanup_free_ char *name = path_join(entry, de->d_name);
		_cleanup_free_ char *why = xstrcat3(name, ", from ", from);
		add_linked(p, link, why, 0);
	}
}

/* The toolchains the command's PATH reaches, and every other PATH
 * directory under the home as that directory alone. Never ".", an empty
 * entry, the home itself or anything above it, nor an entry a run could
 * have steered (grant_target). from says whose PATH it is, for the
 * grants' origins. */
static void add_path_dirs(struct policy *p, char *const *env, const char *from)
{
	const char *path = env_get(env, "PATH");
	if (!path)
		return;
	char *roots[ARRAY_SIZE(toolchains)];
	for (size_t i = 0; i < ARRAY_SIZE(toolchains); i++)
		roots[i] = toolchain_root(p, &toolchains[i], env);
	_cleanup_free_ char *copy = xstrdup(path);
	char *save = NULL;
	for (char *entry = strtok_r(copy, ":", &save); entry; entry = strtok_r(NULL, ":", &save)) {
		if (entry[0] != '/')
			continue;
		_cleanup_free_ char *origin = xasprintf("default: PATH directory %s, from %s", entry, from);
		bool steered;
		_cleanup_free_ char *dir = grant_target(p, entry, origin, &steered);
		if (steered)
			decline_linked_trees(p, entry, entry, from);
		if (!dir || streq(dir, "/") || path_is_beneath(p->user_home, dir))
			continue;

		bool matched = false;
		for (size_t i = 0; i < ARRAY_SIZE(toolchains) && !matched; i++) {
			const struct toolchain *t = &toolchains[i];
			if (!roots[i] || !path_is_beneath(dir, roots[i]))
				continue;
			_cleanup_free_ char *why = xasprintf("PATH has %s, from %s", entry, from);
			add_toolchain(p, t, roots[i], why);
			if (t->companion) {
				size_t c = (size_t)(toolchain_named(t->companion) - toolchains);
				if (roots[c])
					add_toolchain(p, &toolchains[c], roots[c], why);
			}
			matched = true;
		}
		if (!matched) {
			policy_add_rule(p, dir, ACCESS_READ, RULE_SYSTEM, DEFAULT, origin);
			/* only a directory of the user's own: the system's
			 * links (/usr/bin's hundreds) lead where it is read */
			if (path_is_beneath(dir, p->user_home))
				add_linked_trees(p, dir, entry, from);
		}
	}
	for (size_t i = 0; i < ARRAY_SIZE(toolchains); i++)
		free(roots[i]);
}

static void add_home_reads(struct policy *p)
{
	static const char *const git[] = { ".gitconfig", ".config/git" };
	for (size_t i = 0; i < ARRAY_SIZE(git); i++) {
		_cleanup_free_ char *path = path_join(p->user_home, git[i]);
		add_canonical(p, path, ACCESS_READ, RULE_SYSTEM, "default: git configuration");
	}
	for (size_t i = 0; i < ARRAY_SIZE(caches); i++) {
		_cleanup_free_ char *path = path_join(p->user_home, caches[i]);
		add_canonical(p, path, ACCESS_READ, RULE_SYSTEM, "default: package cache");
	}
}

static void add_system(struct policy *p)
{
	for (size_t i = 0; i < ARRAY_SIZE(system_reads); i++)
		add_canonical(p, system_reads[i], ACCESS_READ, RULE_SYSTEM, "default: system");
	for (size_t i = 0; i < ARRAY_SIZE(devices); i++)
		add_canonical(p, devices[i], ACCESS_WRITE, RULE_SYSTEM | RULE_DEVICE, "default: device");
	/* Never the caller's terminal, nor another of the same user's
	 * (escape sequences into another terminal, what the user types next
	 * read): the run has a pty of its own, which the backend grants
	 * (jail/terminal.h). */
#ifdef __APPLE__
	/* macOS: the seatbelt backend has no pty of the run's own, and the
	 * command keeps the caller's terminal, reopened by name. */
	for (int fd = 0; fd <= 2; fd++) {
		char *tty = ttyname(fd);
		if (tty && str_has_prefix(tty, "/dev/ttys"))
			add_canonical(p, tty, ACCESS_WRITE, RULE_SYSTEM | RULE_DEVICE, "default: your terminal");
	}
#endif
	/* With the network on, the resolver configuration may be a link
	 * into /run (systemd-resolved); only that file is granted. */
	if (p->net == NET_ON)
		add_canonical(p, "/etc/resolv.conf", ACCESS_READ, RULE_SYSTEM, "default: resolver (--net on)");
}

/* The home /etc/passwd gives uid, read directly: the common case, at a
 * fraction of what going through NSS costs; NULL sends the caller to
 * getpwuid (users from LDAP and the like). */
static char *passwd_file_home(uid_t uid)
{
	_cleanup_free_ char *text = NULL;
	if (read_file_at(AT_FDCWD, "/etc/passwd", 1 << 20, &text, NULL) < 0)
		return NULL;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		/* name:password:uid:gid:gecos:home:shell */
		char *f[7];
		size_t n = 0;
		for (char *c = line; n < 7; n++) {
			f[n] = c;
			c = strchr(c, ':');
			if (!c)
				break;
			*c++ = '\0';
		}
		if (n < 6)
			continue;
		char *end;
		unsigned long u = strtoul(f[2], &end, 10);
		if (*end == '\0' && *f[2] && u == uid)
			return xstrdup(f[5]);
	}
	return NULL;
}

const char *defaults_passwd_home(uid_t uid)
{
	static bool asked;
	static uid_t asked_for;
	static char *home;
	if (asked && asked_for == uid)
		return home;
	free(home);
	home = NULL;
	_cleanup_free_ char *db_home = passwd_file_home(uid);
	if (!db_home) {
		const struct passwd *pw = getpwuid(uid);
		if (pw && pw->pw_dir)
			db_home = xstrdup(pw->pw_dir);
	}
	if (db_home && db_home[0] == '/')
		(void)path_canonical(db_home, &home);
	asked = true;
	asked_for = uid;
	return home;
}


void defaults_add_reads(struct policy *p, char *const *env, const char *from)
{
	list_home(p->user_home);
	add_system(p);
	add_home_reads(p);
	add_path_dirs(p, env, from);
}

void defaults_add_program(struct policy *p, const char *word, char *const *env, const char *from, const char *known)
{
	_cleanup_free_ char *found = known ? xstrdup(known) : NULL;
	if (!found && (!p->cwd || path_find_program(word, env_get(env, "PATH"), p->cwd, &found) < 0))
		return;
	_cleanup_free_ char *origin = strchr(word, '/') ? xstrdup("the command's program")
							: xasprintf("the command's program ('%s' on %s)", word, from);
	_cleanup_free_ char *target = grant_target(p, found, origin, NULL);
	if (target)
		policy_add_rule(p, target, ACCESS_READ, 0, SOURCE_DEFAULT_OF("the command's program"), origin);
}

void defaults_add_path_reads(struct policy *p, char *const *env, const char *from)
{
	list_home(p->user_home);
	add_path_dirs(p, env, from);
	forget_listings();
}

void defaults_add_hides(struct policy *p)
{
	add_credentials(p, p->user_home);
	if (p->passwd_home && !streq(p->passwd_home, p->user_home))
		add_credentials(p, p->passwd_home);
	if (p->uid == 0)
		add_root_secrets(p);
	/* stockade's own state: trust records, the quarantine, and the
	 * sessions' control sockets, which run commands in a wider jail. No
	 * read shows it (--read ~), and none names it: not a credential the
	 * person may lift by naming it. */
	for (size_t i = 0; p->own_state && p->own_state[i]; i++)
		add_hidden(p, p->own_state[i], RULE_STATE, "default: stockade's own state");
	forget_listings();
}

void defaults_point_caches(struct policy *p)
{
	for (size_t i = 0; i < defaults_n_own_caches; i++) {
		if (strv_contains(p->env_decided, defaults_own_caches[i].var))
			continue;
		_cleanup_free_ char *dir = path_join(p->cache_dir, defaults_own_caches[i].sub);
		env_put(&p->env, defaults_own_caches[i].var, dir, "stockade's own build cache");
	}
}
