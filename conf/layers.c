/* Which files a run reads, and which of their [command] sections match
 * its command. */
#include "conf/conf.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "lib/fs.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/env.h"
#include "policy/steer.h"

static const char *const workspace_names[] = { "stockade.ini", ".stockade.ini" };

static int find_error(struct conf_error *err, const char *file, char *msg)
{
	*err = (struct conf_error){ .file = xstrdup(file), .msg = msg };
	return -EINVAL;
}

int conf_workspace_file(const char *workspace, char **ret, struct conf_error *err)
{
	*ret = NULL;
	*err = (struct conf_error){ 0 };
	char *found = NULL;
	for (size_t i = 0; i < ARRAY_SIZE(workspace_names); i++) {
		_cleanup_free_ char *path = path_join(workspace, workspace_names[i]);
		struct stat st;
		if (lstat(path, &st) < 0)
			continue;
		if (found) {
			_cleanup_free_ char *first = TAKE_PTR(found);
			return find_error(err, path,
					  xasprintf("two stockade files in one workspace ('%s' too): keep one", first));
		}
		found = TAKE_PTR(path);
	}
	if (!found)
		return -ENOENT;
	*ret = found;
	return 0;
}

char *conf_user_file(char *const *environ)
{
	const char *xdg = env_get(environ, "XDG_CONFIG_HOME");
	if (xdg && xdg[0] == '/')
		return path_join(xdg, "stockade/stockade.ini");
	const char *home = env_get(environ, "HOME");
	if (!home || home[0] != '/')
		return NULL;
	return path_join(home, ".config/stockade/stockade.ini");
}

static int add_file(struct conf_set *s, const char *path, enum conf_origin origin, struct conf_error *err)
{
	struct conf_file f;
	int r = conf_read(path, origin, &f, err);
	if (r < 0)
		return r;
	s->v = xgrow(s->v, s->n, sizeof(*s->v));
	s->v[s->n++] = f;
	return 0;
}

int conf_file_path(const char *path, char **ret)
{
	const char *name = NULL;
	_cleanup_free_ char *parent = path_parent(path, &name);
	if (!parent || !name || !*name)
		return -EINVAL;
	_cleanup_free_ char *canon = NULL;
	int r = path_canonical(parent[0] ? parent : ".", &canon);
	if (r < 0)
		return r;
	*ret = path_join(canon, name);
	return 0;
}

static int find_files(const char *workspace, const char *config, char *const *environ, struct conf_set *ret,
		      struct conf_error *err)
{
	*err = (struct conf_error){ 0 };
	int r;
	_cleanup_free_ char *user = conf_user_file(environ);
	_cleanup_free_ char *user_canon = NULL;
	struct stat st;
	if (user && lstat(user, &st) == 0) {
		if ((r = conf_file_path(user, &user_canon)) < 0)
			return find_error(err, user, xasprintf("cannot resolve its folder: %s", strerror(-r)));
		if ((r = add_file(ret, user_canon, CONF_USER, err)) < 0)
			return r;
	}
	_cleanup_free_ char *project = NULL;
	enum conf_origin origin = CONF_WORKSPACE;
	if (config) {
		_cleanup_free_ char *canon = NULL;
		if ((r = conf_file_path(config, &canon)) < 0)
			return find_error(err, config, xasprintf("cannot read it: %s", strerror(-r)));
		project = TAKE_PTR(canon);
		origin = CONF_OPTION;
	} else {
		_cleanup_free_ char *found = NULL;
		r = conf_workspace_file(workspace, &found, err);
		if (r == -ENOENT)
			return 0;
		if (r < 0)
			return r;
		/* canonical, as a trust record and the sources name it */
		if ((r = conf_file_path(found, &project)) < 0)
			return find_error(err, found, xasprintf("cannot resolve its folder: %s", strerror(-r)));
	}
	/* The user's file named again with --config is read once, as the
	 * user's. */
	if (user_canon && streq(user_canon, project))
		return 0;
	return add_file(ret, project, origin, err);
}

int conf_find(const char *workspace, const char *config, char *const *environ, struct conf_set *ret,
	      struct conf_error *err)
{
	*ret = (struct conf_set){ 0 };
	int r = find_files(workspace, config, environ, ret, err);
	if (r < 0)
		conf_set_free(ret);
	return r;
}

void conf_set_free(struct conf_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		conf_file_free(&s->v[i]);
	free(s->v);
	*s = (struct conf_set){ 0 };
}

/* The words of a reason, end to end: made for every section of every
 * run, and without printf, which a run otherwise leaves unmapped. */
static char *words(const char *const *v)
{
	struct text t = { 0 };
	for (size_t i = 0; v[i]; i++)
		text_adds(&t, v[i]);
	return text_take(&t);
}

#define WHY(...) words((const char *const[]){ __VA_ARGS__, NULL })

static void add_match(struct conf_matches *m, const struct conf_file *f, const struct conf_section *s, bool matched,
		      char *why)
{
	m->v = xgrow(m->v, m->n, sizeof(*m->v));
	m->v[m->n++] = (struct conf_match){ .file = f, .section = s, .matched = matched, .why = why };
}

static int match_cmp(const void *a, const void *b)
{
	const struct conf_match *x = a, *y = b;
	/* the matched ones first, in the order they apply */
	if (x->matched != y->matched)
		return x->matched ? -1 : 1;
	size_t nx = strv_length(x->section->words), ny = strv_length(y->section->words);
	if (x->matched && nx != ny)
		return nx < ny ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->section < y->section ? -1 : x->section > y->section;
}

/* The file a program word names, found as execvp would, and its
 * identity. */
static int find_program(const char *word, const char *path_env, const char *cwd, char **ret, struct stat *ret_st)
{
	int r = path_find_program(word, path_env, cwd, ret);
	if (r < 0)
		return r;
	if (stat(*ret, ret_st) < 0) {
		r = -errno;
		free(*ret);
		*ret = NULL;
	}
	return r;
}

/* Why the program found at found (canonical: program) must match no
 * section, or NULL: it was reached through a tree the run may write (it
 * or a link on the way to it could have been put there by a run), or in
 * a PATH entry the person's own PATH does not lead to. */
static char *unmatchable(const char *word, const char *found, const char *program, const char *own_path,
			 const char *cwd, const struct policy *p)
{
	struct steer st;
	if (steer_path(p->writable, found, &st) < 0)
		return WHY("the program '", found, "' cannot be resolved");
	char *why = NULL;
	if (steer_steerable(&st)) {
		const char *tree = st.tree ? st.tree : "?";
		const struct rule *r = policy_rule_for(p, tree);
		const char *origin = r && r->origin ? r->origin : "a write rule";
		why = st.link ? WHY("the program '", program, "' is reached through the link '", st.link, "' in '", tree,
				    "', which the run may write (", origin, ")")
			      : WHY("the program '", program, "' lies in '", tree, "', which the run may write (", origin, ")");
	}
	steer_free(&st);
	if (why)
		return why;
	/* Found in an entry of the command's PATH that yours does not lead
	 * to: a file other than yours put it there. */
	_cleanup_free_ char *own = NULL;
	if (!strchr(word, '/') && (path_find_program(word, own_path, cwd, &own) < 0 || !streq(own, found)))
		return WHY("the command's PATH finds '", word, "' at '", found, "', yours ",
			   own ? "at '" : "nowhere", own ? own : "", own ? "'" : "",
			   ": a settings file other than yours set that PATH entry");
	return NULL;
}

void conf_match_commands(const struct conf_set *files, char *const *argv, const char *own_path,
			 const char *final_path, const char *cwd, const struct policy *p, struct conf_matches *ret)
{
	*ret = (struct conf_matches){ 0 };
	_cleanup_free_ char *found = NULL, *program = NULL, *planted = NULL;
	struct stat pst;
	int perr = argv && argv[0] ? find_program(argv[0], final_path, cwd, &found, &pst) : -ENOENT;
	if (perr == 0)
		perr = path_canonical(found, &program);
	bool looked = false;
	for (size_t i = 0; i < files->n; i++) {
		const struct conf_file *f = &files->v[i];
		for (size_t k = 0; k < f->n; k++) {
			const struct conf_section *s = &f->v[k];
			if (s->kind != CONF_COMMAND)
				continue;
			if (!argv || !argv[0]) {
				add_match(ret, f, s, false, WHY("no command is given"));
				continue;
			}
			if (perr < 0) {
				add_match(ret, f, s, false,
					  WHY("the command's program '", argv[0], "' is not found: ", strerror(-perr)));
				continue;
			}
			/* The words first: they cost nothing to compare, and a
			 * section whose words differ needs no look on PATH. */
			size_t w = 1;
			while (s->words[w] && argv[w] && streq(s->words[w], argv[w]))
				w++;
			if (s->words[w]) {
				char num[21];
				const char *n = fmt_u64(num, w + 1);
				add_match(ret, f, s, false,
					  argv[w] ? WHY("word ", n, " is '", argv[w], "', not '", s->words[w], "'")
						  : WHY("the command has no word ", n, " ('", s->words[w], "')"));
				continue;
			}
			/* A word with a slash names a file: relative to the
			 * file's folder, never to wherever the run starts. A bare
			 * word is found on your own PATH: the program you mean.
			 * The same file as the program that will run (its device
			 * and inode, whatever links led to it) matches. */
			_cleanup_free_ char *want = NULL;
			_cleanup_free_ char *word_path = strchr(s->words[0], '/') && s->words[0][0] != '/'
								 ? path_join(f->dir, s->words[0])
								 : NULL;
			struct stat wst;
			int r = find_program(word_path ? word_path : s->words[0], own_path, cwd, &want, &wst);
			if (r < 0) {
				add_match(ret, f, s, false, WHY("'", s->words[0], "' is not found on PATH: ", strerror(-r)));
				continue;
			}
			if (wst.st_dev != pst.st_dev || wst.st_ino != pst.st_ino) {
				add_match(ret, f, s, false,
					  WHY("'", s->words[0], "' is '", want, "', the command's program is '", program, "'"));
				continue;
			}
			if (!looked) {
				planted = unmatchable(argv[0], found, program, own_path, cwd, p);
				looked = true;
			}
			if (planted) {
				/* It could have been put there by a run, or by a
				 * file that is not yours: a section must not lend
				 * its grants to it. */
				add_match(ret, f, s, false, xstrdup(planted));
				continue;
			}
			add_match(ret, f, s, true,
				  WHY("the program is '", program, s->words[1] ? "' and the words follow" : "'"));
		}
	}
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(*ret->v), match_cmp);
}

char *conf_recheck_program(const char *word, const char *expected, const char *own_path, const struct policy *p)
{
	_cleanup_free_ char *found = NULL, *program = NULL;
	struct stat now, before;
	int r = find_program(word, env_get(p->env.envp, "PATH"), p->cwd, &found, &now);
	if (r == 0)
		r = path_canonical(found, &program);
	if (r < 0)
		return WHY("with them, the command's program '", word, "' is not found: ", strerror(-r));
	if (!expected || stat(expected, &before) < 0 || before.st_dev != now.st_dev || before.st_ino != now.st_ino)
		return WHY("with them, the program that would run is '", program, "', not '", expected ? expected : "?", "'");
	return unmatchable(word, found, program, own_path, p->cwd, p);
}

void conf_matches_free(struct conf_matches *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].why);
	free(m->v);
	*m = (struct conf_matches){ 0 };
}
