/* stockade's own places: its state (trust records, the quarantine, the
 * sessions' sockets) and its build caches, where a stockade of the user
 * finds them, and the check that keeps them and its binary out of what a
 * run may change. */
#include "policy/own.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/defaults.h"
#include "policy/steer.h"

/* The state directory as it really is, resolved before it is used: its
 * existing part canonical, the rest as written. A symlink on the way the
 * jail could change (one lying in a tree it may write) is refused: the
 * next run would take its baseline from wherever the link then points,
 * and the guard's undo from an empty one. */
int own_resolve_state(struct policy *p, struct policy_failure *f)
{
	_cleanup_free_ char *norm = path_normalize(p->state_dir);
	/* each prefix of the path as written, from the top (with no rule
	 * yet, as where the state directory is found first, nothing is
	 * writable and no link can be refused) */
	for (char *slash = strchr(norm + 1, '/'); policy_n_all(p);
	     slash = strchr(slash + 1, '/')) {
		if (slash)
			*slash = '\0';
		struct stat st;
		bool link = lstat(norm, &st) == 0 && S_ISLNK(st.st_mode);
		if (link) {
			_cleanup_free_ char *where = path_parent(norm, NULL);
			_cleanup_free_ char *canon_where = NULL;
			if (where && path_canonical(where, &canon_where) == 0 &&
			    policy_effect(p, canon_where) == EFFECT_WRITE)
				return policy_fail(f, POLICY_STATE_LINK, EPERM, norm, NULL);
		}
		if (slash)
			*slash = '/';
		if (!slash)
			break;
	}
	/* the longest part that exists, canonical; the rest as written */
	_cleanup_free_ char *head = xstrdup(norm);
	const char *tail = "";
	_cleanup_free_ char *canon = NULL;
	while (path_canonical(head, &canon) < 0) {
		char *slash = strrchr(head, '/');
		if (!slash || slash == head) {
			canon = xstrdup("/");
			break;
		}
		*slash = '\0';
		tail = norm + (slash - head) + 1;
	}
	free(p->state_dir);
	p->state_dir = *tail ? path_join(canon, tail) : TAKE_PTR(canon);
	return 0;
}

/* stockade's own binary and state must not be writable from the jail: a
 * command that could replace them would run outside it next time. */
int own_check(struct policy *p, struct policy_failure *f)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0)
		self[n] = '\0';
	if (n > 0 && policy_effect(p, self) == EFFECT_WRITE)
		return policy_fail(f, POLICY_SELF_WRITABLE, EPERM, self, NULL);
	int r = own_resolve_state(p, f);
	if (r < 0)
		return r;
	/* Not this stockade's state alone: a run that could make or change
	 * the one a later stockade finds (with no XDG_STATE_HOME, or another)
	 * would plant trust records that stockade takes as the person's. */
	_cleanup_strv_ char **trees = steer_trees(p);
	for (size_t i = 0; p->own_state[i] && r == 0; i++) {
		struct steer st;
		const char *place = i == 0 ? p->state_dir : p->own_state[i];
		if (steer_path(trees, place, &st) < 0)
			continue;
		const char *in = NULL;	/* a tree the run writes in it */
		for (size_t k = 0; trees[k] && !in; k++)
			if (path_is_beneath(trees[k], st.target))
				in = trees[k];
		if (steer_steerable(&st) || in) {
			r = policy_fail(f, POLICY_STATE_WRITABLE, EPERM, place, NULL);
			f->tree = xstrdup(in ? in : st.tree ? st.tree : st.target);
		}
		steer_free(&st);
	}
	return r;
}

static bool held_by(const char *path, const char *dir)
{
	_cleanup_free_ char *canon = NULL;
	return path_is_beneath(path, dir) || (path_canonical(path, &canon) == 0 && path_is_beneath(canon, dir));
}

bool own_held_by(const struct policy *p, const char *dir)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		self[n] = '\0';
		if (path_is_beneath(self, dir))
			return true;
	}
	if (p->state_dir && held_by(p->state_dir, dir))
		return true;
	for (size_t i = 0; p->own_state && p->own_state[i]; i++)
		if (held_by(p->own_state[i], dir))
			return true;
	return false;
}

/* The guard's quarantine, the trust records, the gaps said: in
 * XDG_STATE_HOME; the caches in XDG_CACHE_HOME. A run nested in another
 * jail (already under no_new_privs: stockade's, bwrap's) often cannot
 * write them there: its home is read-only. It then keeps them in its TMPDIR,
 * which the outer jail made for it and removes with it: nothing of the
 * outer run's state is read or written, and nothing the inner run keeps
 * outlives the outer one, so no later run, outer or not, takes a trust
 * record or an unenforced-said checksum a jailed command could have
 * planted. The outer run's own state directory stays where the command
 * cannot write it (own_check, in the outer run). */
static bool nested_unwritable(const char *dir)
{
#ifdef __linux__
	return proc_self_status("NoNewPrivs") > 0 && !dir_could_write(dir);
#else
	(void)dir;
	return false;
#endif
}

static char *nested_dir(const struct policy *p, char *const *environ, const char *what)
{
	const char *tmp = defaults_user_var(environ, "TMPDIR");
	char buf[21];
	_cleanup_free_ char *base = xstrcat3(tmp ? tmp : "/tmp", "/stockade-", fmt_u64(buf, p->uid));
	return path_join(base, what);
}

/* stockade's own build caches (GOCACHE, ccache's, npm's, XDG_CACHE_HOME),
 * one set per workspace: what a run in one project writes there, no build
 * of another project reads. The name says which workspace (its last
 * component) and keeps two of the same name apart (a hash of its path). */
char *own_cache_dir(const struct policy *p, char *const *environ)
{
	const char *xdg_cache = defaults_user_var(environ, "XDG_CACHE_HOME");
	_cleanup_free_ char *root =
		xdg_cache ? path_join(xdg_cache, "stockade") : path_join(p->user_home, ".cache/stockade");
	/* Nested where the caches cannot be written: in TMPDIR, as the
	 * state (own_state_dir), for this run alone. */
	if (nested_unwritable(root)) {
		free(root);
		root = nested_dir(p, environ, "cache");
	}
	uint64_t h = fnv1a(FNV_INIT, p->workspace, strlen(p->workspace));
	const char *base = strrchr(p->workspace, '/');
	base = base && base[1] ? base + 1 : "root";
	char name[33];
	size_t n = 0;
	for (; *base && n < sizeof(name) - 1; base++)
		name[n++] = (*base >= 'a' && *base <= 'z') || (*base >= 'A' && *base <= 'Z') ||
					    (*base >= '0' && *base <= '9') || *base == '.' || *base == '-' || *base == '_'
				    ? *base
				    : '_';
	name[n] = '\0';
	if (name[0] == '.')
		name[0] = '_';	/* never a hidden name, nor ".." */
	char hex[17];
	return xasprintf("%s/ws/%s-%s", root, name, fmt_x64(hex, h));
}

/* Every place a stockade of this user keeps its state: this run's
 * first (own_state_dir), then the default one in each home, and the
 * sessions' sockets in the runtime directory. */
char **own_state_places(const struct policy *p, char *const *environ)
{
	char **v = strv_new();
	strv_add(&v, p->state_dir);
	const char *homes[] = { p->user_home, p->passwd_home };
	for (size_t i = 0; i < ARRAY_SIZE(homes); i++) {
		_cleanup_free_ char *dir = homes[i] ? path_join(homes[i], ".local/state/stockade") : NULL;
		if (dir && !strv_contains(v, dir))
			strv_add(&v, dir);
	}
	const char *runtime = defaults_user_var(environ, "XDG_RUNTIME_DIR");
	if (runtime)
		strv_push(&v, path_join(runtime, "stockade"));
	return v;
}

char *own_state_dir(const struct policy *p, char *const *environ)
{
	const char *xdg_state = defaults_user_var(environ, "XDG_STATE_HOME");
	char *dir = xdg_state ? path_join(xdg_state, "stockade") : path_join(p->user_home, ".local/state/stockade");
	if (nested_unwritable(dir)) {
		free(dir);
		dir = nested_dir(p, environ, "state");
	}
	return dir;
}
