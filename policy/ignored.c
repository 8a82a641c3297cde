/* hide-ignored in the build: the entries git ignores (a fact jail/ found
 * by asking git), each hidden unless it is a toolchain's own tree, and
 * what was hidden and kept, for jail/ to say. */
#include "policy/ignored.h"

#include <sys/stat.h>

#include "lib/compat.h"
#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/env.h"

/* The places the command's programs run from: its program as PATH finds
 * it (.venv/bin/python, before the link to the system's Python is
 * followed) and where that leads, and every directory of its PATH (an
 * activated virtualenv's bin/, node_modules/.bin). Absolute, normalised. */
static char **run_from(const struct policy *p)
{
	char **v = strv_new();
	const char *path_env = env_get(p->env.envp, "PATH");
	_cleanup_free_ char *found = NULL;
	if (p->argv && p->argv[0] && path_find_program(p->argv[0], path_env, p->cwd, &found) == 0 && found[0] == '/')
		strv_push(&v, path_normalize(found));
	if (p->program)
		strv_add(&v, p->program);
	for (const char *d = path_env; d && *d;) {
		const char *end = str_chrnul(d, ':');
		if (d[0] == '/') {
			_cleanup_free_ char *dir = xstrndup(d, (size_t)(end - d));
			strv_push(&v, path_normalize(dir));
		}
		d = *end ? end + 1 : end;
	}
	return v;
}

/* Why an entry git ignores stays, or NULL: a toolchain's own tree, which
 * the command runs from or its tools read back (hiding a virtualenv
 * turned .venv/bin/python into the system's Python; a hidden __pycache__
 * is a PermissionError when pytest collects the folder around it). */
static const char *kept_because(const char *path, const struct stat *st, char *const *from)
{
	/* what holds the program or a PATH folder, and a program of its
	 * own in a PATH folder; not all that lies beneath one (a PATH with
	 * the workspace in it would keep everything) */
	_cleanup_free_ char *parent = path_parent(path, NULL);
	for (size_t i = 0; from && from[i]; i++)
		if (path_is_beneath(from[i], path) || (!S_ISDIR(st->st_mode) && parent && streq(parent, from[i])))
			return "the command runs from it";
	if (!S_ISDIR(st->st_mode))
		return NULL;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	if (streq(base, "__pycache__"))
		return "Python's byte-code";
	if (streq(base, "node_modules"))
		return "Node's packages";
	_cleanup_free_ char *cfg = path_join(path, "pyvenv.cfg");
	_cleanup_free_ char *tag = path_join(path, "CACHEDIR.TAG");
	struct stat sub;
	if (lstat(cfg, &sub) == 0 && S_ISREG(sub.st_mode))
		return "a virtualenv";
	if (lstat(tag, &sub) == 0 && S_ISREG(sub.st_mode))
		return "a cache its tool marked with CACHEDIR.TAG";
	return NULL;
}

/* Up to this many names in each list of what was hidden and kept. */
#define NAMED_MAX 6

static void name_one(struct text *t, size_t *n, const char *rel, bool dir, const char *why)
{
	if (++*n > NAMED_MAX)
		return;
	if (*n > 1)
		text_adds(t, ", ");
	text_adds(t, rel);
	if (dir && !str_has_suffix(rel, "/"))
		text_addc(t, '/');
	if (why) {
		text_adds(t, " (");
		text_adds(t, why);
		text_addc(t, ')');
	}
}

static char *named_list(struct text *t, size_t n)
{
	if (n > NAMED_MAX) {
		_cleanup_free_ char *more = xasprintf(" and %zu more", n - NAMED_MAX);
		text_adds(t, more);
	}
	return text_take(t);
}

void policy_hide_ignored(struct policy *p, const char *list, size_t len)
{
	_cleanup_strv_ char **from = run_from(p);
	struct text hidden = { 0 }, kept = { 0 };
	size_t n_hidden = 0, n_kept = 0;
	for (size_t off = 0; off < len;) {
		const char *entry = list + off;
		size_t el = strnlen(entry, len - off);
		off += el + 1;
		if (el == 0)
			continue;
		/* A folder that holds nothing but what git ignores is listed
		 * with the entries in it (old/, then old/__pycache__/, in
		 * order): those are what the patterns name, each hidden or
		 * kept on its own, and the folder is neither. */
		const char *next = off < len ? list + off : "";
		if (entry[el - 1] == '/' && strncmp(next, entry, el) == 0)
			continue;
		_cleanup_free_ char *rel = xstrndup(entry, el);
		_cleanup_free_ char *joined = path_join(p->workspace, rel);
		_cleanup_free_ char *path = path_normalize(joined);
		/* A symlink is left alone: hiding its name hides nothing, and
		 * what it points at has rules of its own. */
		struct stat st;
		if (lstat(path, &st) < 0 || S_ISLNK(st.st_mode))
			continue;
		const char *why = kept_because(path, &st, from);
		if (why) {
			name_one(&kept, &n_kept, rel, S_ISDIR(st.st_mode), why);
			continue;
		}
		policy_add_rule_new(p, path, ACCESS_HIDE, p->hide_ignored_source);
		name_one(&hidden, &n_hidden, rel, S_ISDIR(st.st_mode), NULL);
	}
	policy_sort(p);
	p->ignored.asked = true;
	p->ignored.n_hidden = n_hidden;
	p->ignored.hidden = named_list(&hidden, n_hidden);
	p->ignored.n_kept = n_kept;
	p->ignored.kept = named_list(&kept, n_kept);
}
