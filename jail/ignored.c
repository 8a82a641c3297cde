#include "jail/ignored.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include "jail/git.h"
#include "jail/say-policy.h"
#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/env.h"

/* git's output is read up to this: far beyond a workspace's list of
 * ignored entries (10,000 files under several folders is 300 KiB). */
#define IGNORED_MAX (64u << 20)

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

/* Up to this many names in each line of what was hidden and kept. */
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

int ignored_hide(struct policy *p, struct report *rep)
{
	if (!p->hide_ignored)
		return 0;
	_cleanup_free_ char *at = source_text(&p->hide_ignored_source);
	const char *git = git_find();
	if (!git) {
		log_error("cannot hide what git ignores (%s): git is not in /usr/bin or /bin", at);
		return -ENOENT;
	}
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	int status = 0;
	char *args[] = { "ls-files", "--others", "--ignored", "--exclude-standard", "--directory", "-z", NULL };
	/* the user's home, for the user's excludes file */
	int r = git_run(git, p->workspace, p->user_home, -1, args, IGNORED_MAX, &out, &len, NULL, &status);
	if (r < 0) {
		log_error("cannot ask git what it ignores in '%s' (%s): %s", p->workspace, at, strerror(-r));
		return r;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* Not a working tree (or one git will not read): there is
		 * nothing git ignores here. Said, since it was asked for. */
		say_note_once(p, rep, "hide-ignored (%s): '%s' is not a git working tree git will read: nothing hidden", at,
			      p->workspace);
		return 0;
	}
	_cleanup_strv_ char **from = run_from(p);
	struct text hidden = { 0 }, kept = { 0 };
	size_t n_hidden = 0, n_kept = 0;
	for (size_t off = 0; off < len;) {
		const char *entry = out + off;
		size_t el = strnlen(entry, len - off);
		off += el + 1;
		if (el == 0)
			continue;
		/* A folder that holds nothing but what git ignores is listed
		 * with the entries in it (old/, then old/__pycache__/, in
		 * order): those are what the patterns name, each hidden or
		 * kept on its own, and the folder is neither. */
		const char *next = off < len ? out + off : "";
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
	_cleanup_free_ char *hid = named_list(&hidden, n_hidden);
	_cleanup_free_ char *kept_text = named_list(&kept, n_kept);
	if (n_hidden)
		log_note("hide-ignored (%s): hid %zu %s git ignores: %s", at, n_hidden, n_hidden == 1 ? "entry" : "entries", hid);
	else
		log_note("hide-ignored (%s): git ignores nothing here but toolchains' own trees: nothing hidden", at);
	if (n_kept)
		log_note("hide-ignored: kept %s", kept_text);
	return 0;
}
