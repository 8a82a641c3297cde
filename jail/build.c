#include "jail/build.h"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <pwd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "policy/env.h"
#include "policy/handoff.h"
#include "lib/fs.h"
#include "lib/path.h"
#include "lib/fd.h"
#include "lib/util.h"

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
static const struct {
	const char *var;
	const char *sub;
} own_caches[] = {
	{ "XDG_CACHE_HOME", "xdg" },
	{ "GOCACHE", "go-build" },
	{ "CCACHE_DIR", "ccache" },
	{ "npm_config_cache", "npm" },
};

/* The names in the caller's home, read once: most of the paths the
 * defaults name there (caches, toolchains, credentials) do not exist,
 * and one directory read answers for all of them. */
static char **home_entries;
static const char *home_listed;

static int strp_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_home(const char *home)
{
	strv_free(home_entries);
	home_entries = NULL;
	home_listed = home;
	DIR *d = opendir(home);
	if (!d)
		return;
	home_entries = strv_new();
	struct dirent *de;
	while ((de = readdir(d)))
		strv_add(&home_entries, de->d_name);
	closedir(d);
	qsort(home_entries, strv_length(home_entries), sizeof(char *), strp_cmp);
}

/* False when path lies in the home under a name the home does not have. */
static bool may_exist(const char *path)
{
	if (!home_entries || !home_listed || !path_is_beneath(path, home_listed) || streq(path, home_listed))
		return true;
	const char *rest = path_below(path, home_listed);
	_cleanup_free_ char *first = xstrndup(rest, strcspn(rest, "/"));
	return bsearch(&first, home_entries, strv_length(home_entries), sizeof(char *), strp_cmp) != NULL;
}

#define FAIL(r, ...)                                                           \
	do {                                                                   \
		*ret_error = xasprintf(__VA_ARGS__);                           \
		return (r);                                                    \
	} while (0)

static void note(struct policy *p, char *msg)
{
	if (!p->notes)
		p->notes = strv_new();
	strv_push(&p->notes, msg);
}

/* Adds a rule on a path that is canonicalised first; a missing path is
 * skipped. */
static void add_canonical(struct policy *p, const char *path, enum access a, unsigned flags,
			  const char *origin)
{
	_cleanup_free_ char *c = NULL;
	if (!may_exist(path) || path_canonical(path, &c) < 0)
		return;
	policy_add_rule(p, c, a, flags, origin);
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
	policy_add_rule(p, path, ACCESS_HIDE, flags, origin);
	_cleanup_free_ char *c = NULL;
	if (path_canonical(path, &c) < 0 || streq(c, path))
		return;
	_cleanup_free_ char *why = xasprintf("%s, the target of %s", origin, path);
	policy_add_rule(p, c, ACCESS_HIDE, flags, why);
}

static const char *user_var(char *const *environ, const char *name)
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
		policy_add_rule(p, "/root", ACCESS_HIDE, RULE_SYSTEM, "default: root's home (run as root)");
}

static const struct toolchain *toolchain_named(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(toolchains); i++)
		if (streq(toolchains[i].name, name))
			return &toolchains[i];
	return NULL;
}

/* The root of a toolchain for this user: where its variable says, or
 * its place in the home. Canonical, or NULL when it does not exist. */
static char *toolchain_root(const struct toolchain *t, const char *home, char *const *environ)
{
	const char *var = t->var ? user_var(environ, t->var) : NULL;
	_cleanup_free_ char *path = var ? xstrdup(var) : path_join(home, t->root);
	char *c = NULL;
	if (!may_exist(path) || path_canonical(path, &c) < 0)
		return NULL;
	return c;
}

static void add_toolchain(struct policy *p, const struct toolchain *t, const char *root,
			  char *const *environ, const char *why)
{
	_cleanup_free_ char *origin = xasprintf("default: toolchain %s (%s)", t->name, why);
	if (!t->subs[0]) {
		policy_add_rule(p, root, ACCESS_READ, RULE_SYSTEM, origin);
	} else {
		for (size_t i = 0; i < ARRAY_SIZE(t->subs) && t->subs[i]; i++) {
			_cleanup_free_ char *sub = path_join(root, t->subs[i]);
			add_canonical(p, sub, ACCESS_READ, RULE_SYSTEM, origin);
		}
	}
	if (t->var)
		env_put(p, t->var, root, origin);
}

/* The toolchains the command's PATH reaches, and every other PATH
 * directory under the home as that directory alone. Never ".", an empty
 * entry, the home itself or anything above it. */
static void add_path_dirs(struct policy *p, char *const *environ)
{
	const char *path = env_get(p->envp, "PATH");
	if (!path)
		return;
	char *roots[ARRAY_SIZE(toolchains)];
	for (size_t i = 0; i < ARRAY_SIZE(toolchains); i++)
		roots[i] = toolchain_root(&toolchains[i], p->user_home, environ);
	_cleanup_free_ char *copy = xstrdup(path);
	char *save = NULL;
	for (char *entry = strtok_r(copy, ":", &save); entry; entry = strtok_r(NULL, ":", &save)) {
		if (entry[0] != '/')
			continue;
		_cleanup_free_ char *dir = NULL;
		if (path_canonical(entry, &dir) < 0)
			continue;
		if (streq(dir, "/") || path_is_beneath(p->user_home, dir))
			continue;

		bool matched = false;
		for (size_t i = 0; i < ARRAY_SIZE(toolchains) && !matched; i++) {
			const struct toolchain *t = &toolchains[i];
			if (!roots[i] || !path_is_beneath(dir, roots[i]))
				continue;
			_cleanup_free_ char *why = xasprintf("PATH has %s", entry);
			add_toolchain(p, t, roots[i], environ, why);
			if (t->companion) {
				size_t c = (size_t)(toolchain_named(t->companion) - toolchains);
				if (roots[c])
					add_toolchain(p, &toolchains[c], roots[c], environ, why);
			}
			matched = true;
		}
		if (!matched) {
			_cleanup_free_ char *origin = xstrcat3("default: PATH directory ", entry, "");
			policy_add_rule(p, dir, ACCESS_READ, RULE_SYSTEM, origin);
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
	/* The caller's own terminal, so a program can reopen it; never the
	 * others of the same user (escape sequences into another terminal). */
	for (int fd = 0; fd <= 2; fd++) {
		char *tty = ttyname(fd);
		if (tty && str_has_prefix(tty, "/dev/pts/"))
			add_canonical(p, tty, ACCESS_WRITE, RULE_SYSTEM | RULE_DEVICE, "default: your terminal");
	}
	/* With the network on, the resolver configuration may be a link
	 * into /run (systemd-resolved); only that file is granted. */
	if (p->net == NET_ON)
		add_canonical(p, "/etc/resolv.conf", ACCESS_READ, RULE_SYSTEM, "default: resolver (--net on)");
}

static int add_user_rules(struct policy *p, const struct options *o, const char *cwd,
			  char **ret_error)
{
	for (size_t i = 0; i < o->n_rules; i++) {
		const struct cli_rule *cr = &o->rules[i];
		if (str_has_control(cr->path))
			FAIL(-EINVAL, "invalid %s '%s' on the command line: the path has a control character",
			     cr->option, cr->path);
		if (str_empty(cr->path))
			FAIL(-EINVAL, "invalid %s '' on the command line: empty path", cr->option);
		_cleanup_free_ char *abs = NULL;
		if (str_has_prefix(cr->path, "~/") || streq(cr->path, "~"))
			abs = path_join(p->user_home, cr->path + 1);
		else
			abs = cr->path[0] == '/' ? xstrdup(cr->path) : path_join(cwd, cr->path);
		_cleanup_free_ char *canon = NULL;
		int r = path_canonical(abs, &canon);
		_cleanup_free_ char *origin = xasprintf("%s on the command line", cr->option);
		if (r < 0) {
			if (cr->access == ACCESS_HIDE) {
				note(p, xasprintf("%s '%s' does not exist: skipped", cr->option, cr->path));
				continue;
			}
			FAIL(r, "cannot %s '%s' on the command line: %s", cr->option + 2, cr->path, strerror(-r));
		}
		policy_add_rule(p, canon, cr->access, 0, origin);
	}
	return 0;
}

static bool is_tmpfs(const char *path)
{
	struct statfs sfs;
	return statfs(path, &sfs) == 0 && sfs.f_type == TMPFS_MAGIC;
}

/* Where a run's fresh home and tmp go: where TMPDIR says, when you set it;
 * otherwise on a tmpfs (the namespace jail's are tmpfs too), which makes
 * and removes them at a tenth of what a journalled file system costs. */
static char *run_base(char *const *environ, uid_t uid)
{
	char buf[21];
	const char *id = fmt_u64(buf, uid);
	const char *tmp = user_var(environ, "TMPDIR");
	if (tmp)
		return xstrcat3(tmp, "/stockade-", id);
	const char *runtime = user_var(environ, "XDG_RUNTIME_DIR");
	if (runtime && is_tmpfs(runtime))
		return path_join(runtime, "stockade");
	return xstrcat3(is_tmpfs("/dev/shm") ? "/dev/shm" : "/tmp", "/stockade-", id);
}

static int make_run_dirs(struct policy *p, const struct options *o, char *const *environ,
			 enum backend backend, char **ret_error)
{
	_cleanup_free_ char *base = run_base(environ, p->uid);
	int r = mkdir_private(base, p->uid);
	if (r < 0)
		FAIL(r, "cannot use '%s' for the run's private directories: %s", base,
		     r == -EPERM ? "not a private directory of yours" : strerror(-r));
	_cleanup_free_ char *tmpl = path_join(base, "run-XXXXXX");
	if (!mkdtemp(tmpl))
		FAIL(-errno, "cannot create a run directory in '%s': %m", base);
	p->run_dir = TAKE_PTR(tmpl);
	/* The namespace jail's /tmp and home are tmpfs of its own, and the
	 * run directory is where its new root is mounted. */
	bool ns = backend == BACKEND_NAMESPACES;
	p->tmpdir = ns ? xstrdup("/tmp") : path_join(p->run_dir, "tmp");
	if (!ns && mkdir(p->tmpdir, 0700) < 0)
		FAIL(-errno, "cannot create '%s': %m", p->tmpdir);

	if (o->home) {
		_cleanup_free_ char *abs = o->home[0] == '/' ? xstrdup(o->home) : path_join(p->cwd, o->home);
		if (str_has_control(abs))
			FAIL(-EINVAL, "invalid --home '%s': the path has a control character", o->home);
		r = mkdir_private(abs, p->uid);
		if (r < 0)
			FAIL(r, "cannot use --home '%s': %s", o->home,
			     r == -EPERM ? "not a private directory of yours (mode 0700, owned by you)" : strerror(-r));
		r = path_canonical(abs, &p->home);
		if (r < 0)
			FAIL(r, "cannot use --home '%s': %s", o->home, strerror(-r));
		if (path_is_beneath(p->user_home, p->home))
			FAIL(-EINVAL, "refusing --home '%s': it is your home or holds it", o->home);
		p->keep_home = true;
	} else if (ns) {
		p->home = xstrdup(p->user_home);
	} else {
		p->home = path_join(p->run_dir, "home");
		if (mkdir(p->home, 0700) < 0)
			FAIL(-errno, "cannot create '%s': %m", p->home);
	}
	return 0;
}

static int make_own_dirs(struct policy *p, char *const *environ, char **ret_error)
{
	const char *xdg_cache = user_var(environ, "XDG_CACHE_HOME");
	const char *xdg_state = user_var(environ, "XDG_STATE_HOME");
	p->cache_dir = xdg_cache ? path_join(xdg_cache, "stockade") : path_join(p->user_home, ".cache/stockade");
	p->state_dir = xdg_state ? path_join(xdg_state, "stockade")
				 : path_join(p->user_home, ".local/state/stockade");
	bool fresh = access(p->cache_dir, F_OK) < 0;
	int r = mkdir_private(p->cache_dir, p->uid);
	if (r < 0)
		FAIL(r, "cannot use the cache directory '%s': %s", p->cache_dir,
		     r == -EPERM ? "not a private directory of yours" : strerror(-r));
	r = mkdir_private(p->state_dir, p->uid);
	if (r < 0)
		FAIL(r, "cannot use the state directory '%s': %s", p->state_dir,
		     r == -EPERM ? "not a private directory of yours" : strerror(-r));
	for (size_t i = 0; fresh && i < ARRAY_SIZE(own_caches); i++) {
		_cleanup_free_ char *dir = path_join(p->cache_dir, own_caches[i].sub);
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			FAIL(-errno, "cannot create '%s': %m", dir);
	}
	return 0;
}

static void set_jail_env(struct policy *p, const struct options *o)
{
	struct {
		const char *name;
		char *value;
	} vars[] = {
		{ "HOME", xstrdup(p->home) },
		{ "TMPDIR", xstrdup(p->tmpdir) },
		{ "XDG_CONFIG_HOME", path_join(p->home, ".config") },
		{ "XDG_DATA_HOME", path_join(p->home, ".local/share") },
		{ "XDG_STATE_HOME", path_join(p->home, ".local/state") },
		{ "XDG_RUNTIME_DIR", NULL },
		{ "PWD", xstrdup(p->cwd) },
		{ "OLDPWD", NULL },
	};
	for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
		if (!env_user_decided(o->env_ops, o->n_env_ops, vars[i].name))
			env_put(p, vars[i].name, vars[i].value, "points into the jail");
		free(vars[i].value);
	}
	/* Programs that read TMP or TEMP find the private tmp too. */
	static const char *const tmp_vars[] = { "TMP", "TEMP", "TEMPDIR" };
	for (size_t i = 0; i < ARRAY_SIZE(tmp_vars); i++)
		if (env_get(p->envp, tmp_vars[i]) && !env_user_decided(o->env_ops, o->n_env_ops, tmp_vars[i]))
			env_put(p, tmp_vars[i], p->tmpdir, "points into the jail");
	for (size_t i = 0; i < ARRAY_SIZE(own_caches); i++) {
		if (env_user_decided(o->env_ops, o->n_env_ops, own_caches[i].var))
			continue;
		_cleanup_free_ char *dir = path_join(p->cache_dir, own_caches[i].sub);
		env_put(p, own_caches[i].var, dir, "stockade's own build cache");
	}
}

/* The home /etc/passwd gives uid, read directly: the common case, at a
 * fraction of what going through NSS costs; NULL sends the caller to
 * getpwuid (users from LDAP and the like). */
static char *home_from_passwd_file(uid_t uid)
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

static int check_workspace(const struct policy *p, const char *passwd_home, char **ret_error)
{
	const char *why = NULL;
	if (streq(p->workspace, "/"))
		why = "it is the root directory";
	else if (path_is_beneath(p->user_home, p->workspace) ||
		 (passwd_home && path_is_beneath(passwd_home, p->workspace)))
		why = "it is your home or holds it";
	if (why)
		FAIL(-EINVAL, "refusing to use '%s' as the workspace: %s\n"
			      "hint: run stockade in a project directory, or pass --workspace DIR",
		     p->workspace, why);
	return 0;
}

/* stockade's own binary and state must not be writable from the jail: a
 * command that could replace them would run outside it next time. */
/* Writable from the jail: effect write, and not a fresh tmpfs that only
 * has the path's name. */
static bool jail_writes(const struct policy *p, const char *path)
{
	const struct rule *r = policy_rule_for(p, path);
	return r && !(r->flags & RULE_TMPFS) && policy_effect(p, path) == EFFECT_WRITE;
}

static int check_own_files(const struct policy *p, char **ret_error)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0)
		self[n] = '\0';
	if (n > 0 && jail_writes(p, self))
		FAIL(-EPERM, "refusing to run: stockade itself ('%s') would be writable from the jail\n"
			     "hint: install stockade outside the workspace (make install), or choose another --workspace",
		     self);
	if (jail_writes(p, p->state_dir))
		FAIL(-EPERM, "refusing to run: stockade's state directory '%s' would be writable from the jail",
		     p->state_dir);
	return 0;
}

int policy_build(const struct options *o, char *const *environ, enum backend backend,
		 struct policy *p, char **ret_error)
{
	*ret_error = NULL;
	policy_init(p);
	p->uid = getuid();
	p->gid = getgid();
	p->net = o->net;
	p->backend = o->backend;
	p->mode = o->mode;
	int r;

	_cleanup_free_ char *passwd_home = NULL;
	_cleanup_free_ char *db_home = home_from_passwd_file(p->uid);
	if (!db_home) {
		const struct passwd *pw = getpwuid(p->uid);
		if (pw && pw->pw_dir)
			db_home = xstrdup(pw->pw_dir);
	}
	if (db_home && db_home[0] == '/')
		(void)path_canonical(db_home, &passwd_home);
	const char *home_env = user_var(environ, "HOME");
	if (home_env && path_canonical(home_env, &p->user_home) < 0)
		p->user_home = NULL;
	if (!p->user_home && passwd_home)
		p->user_home = xstrdup(passwd_home);
	if (!p->user_home)
		FAIL(-ENOENT, "cannot find your home directory: HOME is unset and the user database has none");

	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	if (!cwd)
		FAIL(-errno, "cannot find the current directory: %m");
	if (o->workspace) {
		if (str_has_control(o->workspace))
			FAIL(-EINVAL, "invalid --workspace '%s': the path has a control character", o->workspace);
		_cleanup_free_ char *abs = o->workspace[0] == '/' ? xstrdup(o->workspace) : path_join(cwd, o->workspace);
		r = path_canonical(abs, &p->workspace);
		if (r < 0)
			FAIL(r, "cannot use --workspace '%s': %s", o->workspace, strerror(-r));
		struct stat st;
		if (stat(p->workspace, &st) < 0 || !S_ISDIR(st.st_mode))
			FAIL(-ENOTDIR, "cannot use --workspace '%s': not a directory", o->workspace);
		p->cwd = xstrdup(p->workspace);
	} else {
		r = path_canonical(cwd, &p->workspace);
		if (r < 0)
			FAIL(r, "cannot resolve the current directory '%s': %s", cwd, strerror(-r));
		p->cwd = xstrdup(p->workspace);
	}
	r = check_workspace(p, passwd_home, ret_error);
	if (r < 0)
		return r;

	list_home(p->user_home);
	r = make_run_dirs(p, o, environ, backend, ret_error);
	if (r < 0)
		return r;
	r = make_own_dirs(p, environ, ret_error);
	if (r < 0)
		return r;

	env_begin(p, environ, o->env_ops, o->n_env_ops);
	set_jail_env(p, o);

	add_system(p);
	add_home_reads(p);
	add_path_dirs(p, environ);
	policy_add_rule(p, p->workspace, ACCESS_WRITE, 0, "workspace");
	if (backend == BACKEND_NAMESPACES) {
		policy_add_rule(p, "/tmp", ACCESS_WRITE, RULE_TMPFS, "private /tmp (tmpfs)");
		if (!p->keep_home)
			policy_add_rule(p, p->home, ACCESS_WRITE, RULE_TMPFS, "fresh home (tmpfs)");
		/* The jail's own devpts and /dev/shm. */
		policy_add_rule(p, "/dev/pts", ACCESS_WRITE, RULE_SYSTEM | RULE_DEVICE, "default: the jail's devpts");
		policy_add_rule(p, "/dev/shm", ACCESS_WRITE, RULE_SYSTEM, "default: the jail's /dev/shm");
	} else {
		policy_add_rule(p, p->tmpdir, ACCESS_WRITE, 0, "private tmp (TMPDIR)");
	}
	if (p->keep_home || backend != BACKEND_NAMESPACES)
		policy_add_rule(p, p->home, ACCESS_WRITE, 0, p->keep_home ? "home (--home)" : "fresh home");
	policy_add_rule(p, p->cache_dir, ACCESS_WRITE, 0, "stockade's own build caches");

	add_credentials(p, p->user_home);
	if (passwd_home && !streq(passwd_home, p->user_home))
		add_credentials(p, passwd_home);
	if (p->uid == 0)
		add_root_secrets(p);

	/* Trust hand-offs, existing or not: read-only for the command,
	 * kept by the guard where a mechanism cannot forbid the change. */
	_cleanup_strv_ char **handoffs = NULL;
	r = handoffs_list(&(struct handoff_scan){ .workspace = p->workspace, .user_home = p->user_home }, &handoffs);
	if (r < 0)
		FAIL(r, "cannot look for trust hand-offs in '%s': %s", p->workspace, strerror(-r));
	for (size_t i = 0; handoffs && handoffs[i]; i++) {
		_cleanup_free_ char *path = path_join(p->workspace, handoffs[i]);
		policy_add_rule(p, path, ACCESS_PROTECT, RULE_HANDOFF | RULE_BENEATH,
				"default: trust hand-off");
	}

	r = add_user_rules(p, o, cwd, ret_error);
	if (r < 0)
		return r;

	if (o->argv && o->argv[0]) {
		p->argv = strv_new();
		for (size_t i = 0; o->argv[i]; i++)
			strv_add(&p->argv, o->argv[i]);
		r = path_find_program(o->argv[0], env_get(p->envp, "PATH"), p->cwd, &p->program);
		p->program_error = -r;
		if (r == 0) {
			/* The program the command names runs wherever it lies. */
			_cleanup_free_ char *canon = NULL;
			if (path_canonical(p->program, &canon) == 0)
				policy_add_rule(p, canon, ACCESS_READ, 0, "the command's program");
		}
		/* A program that cannot be found or run is the caller's to
		 * report with 126 or 127, before anything starts. */
	}

	r = check_own_files(p, ret_error);
	if (r < 0)
		return r;
	policy_sort(p);
	return 0;
}

/* Creates dir/rel's parents and a symlink at rel, one component at a time
 * and never through a symlink: a kept --home is writable by earlier runs,
 * which may have planted links to send these writes elsewhere. */
static int link_beneath(int dirfd, const char *rel, const char *target)
{
	_cleanup_free_ char *copy = xstrdup(rel);
	_cleanup_close_ int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return -errno;
	char *save = NULL;
	char *comp = strtok_r(copy, "/", &save);
	while (comp) {
		char *next = strtok_r(NULL, "/", &save);
		if (!next)
			return symlinkat(target, fd, comp) < 0 && errno != EEXIST ? -errno : 0;
		if (mkdirat(fd, comp, 0700) < 0 && errno != EEXIST)
			return -errno;
		int sub = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			return -errno;
		close(fd);
		fd = sub;
		comp = next;
	}
	return 0;
}

int policy_populate_home(const struct policy *p, char **ret_error)
{
	*ret_error = NULL;
	_cleanup_close_ int home = open(p->home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (home < 0)
		FAIL(-errno, "cannot open the home '%s': %m", p->home);
	const char *linked[64];
	size_t n_linked = 0;
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *r = &p->rules[i];
		if (r->access != ACCESS_READ || !(r->flags & RULE_SYSTEM) ||
		    !path_is_beneath(r->path, p->user_home) || streq(r->path, p->user_home))
			continue;
		/* Rules are sorted shallow first: a deeper one under a link
		 * already made is reached through it. */
		bool covered = false;
		for (size_t j = 0; j < n_linked && !covered; j++)
			covered = path_is_beneath(r->path, linked[j]);
		if (covered)
			continue;
		int q = link_beneath(home, path_below(r->path, p->user_home), r->path);
		if (q < 0 && q != -ELOOP && q != -ENOTDIR)
			FAIL(q, "cannot link '%s' into the home '%s': %s", r->path, p->home, strerror(-q));
		if (n_linked < ARRAY_SIZE(linked))
			linked[n_linked++] = r->path;
	}
	return 0;
}

void policy_remove_run_dir(const struct policy *p)
{
	if (p->run_dir)
		(void)rm_rf(p->run_dir);
}
