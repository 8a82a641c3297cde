#include "jail/config.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "lib/fd.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/path.h"
#include "jail/say-policy.h"
#include "lib/sha256.h"
#include "lib/util.h"
#include "policy/env.h"
#include "policy/steer.h"

static void say_conf_error(const struct conf_error *e)
{
	if (e->line && e->key)
		log_error("%s line %u: %s: %s", e->file, e->line, e->key, e->msg);
	else if (e->line)
		log_error("%s line %u: %s", e->file, e->line, e->msg);
	else
		log_error("%s: %s", e->file ? e->file : "stockade.ini", e->msg);
}

static const char *origin_name(enum conf_origin o)
{
	switch (o) {
	case CONF_USER:
		return "yours";
	case CONF_WORKSPACE:
		return "the workspace's";
	case CONF_OPTION:
		return "--config";
	}
	return "";
}

void config_free(struct run_config *rc)
{
	conf_matches_free(&rc->matches);
	conf_set_free(&rc->files);
	free(rc->state_dir);
	*rc = (struct run_config){ 0 };
}

/* The layers: each file's [sandbox], then each file's [profile NAME],
 * then the matched [command] sections (m may be NULL), then the command
 * line (a shallow copy: the caller's). */
struct layers {
	struct layer *v;
	size_t n;
	size_t n_own;	/* the first n_own are ours to free */
};

static void layers_push(struct layers *ls, const struct conf_file *f, const struct conf_section *s)
{
	ls->v = xgrow(ls->v, ls->n, sizeof(*ls->v));
	conf_section_layer(f, s, &ls->v[ls->n++]);
	ls->n_own = ls->n;
}

static void layers_free(struct layers *ls)
{
	for (size_t i = 0; i < ls->n_own; i++)
		layer_free(&ls->v[i]);
	free(ls->v);
	*ls = (struct layers){ 0 };
}

static int make_layers(const struct run_config *rc, const struct options *o, bool with_commands, struct layers *ls)
{
	*ls = (struct layers){ 0 };
	for (size_t i = 0; i < rc->files.n; i++) {
		const struct conf_section *s = conf_find_section(&rc->files.v[i], CONF_SANDBOX, NULL);
		if (s)
			layers_push(ls, &rc->files.v[i], s);
	}
	if (o->profile) {
		bool found = false;
		for (size_t i = 0; i < rc->files.n; i++) {
			const struct conf_section *s = conf_find_section(&rc->files.v[i], CONF_PROFILE, o->profile);
			if (s) {
				layers_push(ls, &rc->files.v[i], s);
				found = true;
			}
		}
		if (!found) {
			struct text t = { 0 };
			for (size_t i = 0; i < rc->files.n; i++)
				for (size_t k = 0; k < rc->files.v[i].n; k++)
					if (rc->files.v[i].v[k].kind == CONF_PROFILE) {
						text_adds(&t, t.n ? ", " : "");
						text_adds(&t, rc->files.v[i].v[k].name);
					}
			_cleanup_free_ char *names = text_take(&t);
			if (!rc->files.n)
				log_error("cannot use --profile '%s': no stockade.ini is read here", o->profile);
			else
				log_error("cannot use --profile '%s': no [profile %s] in %s%s%s", o->profile, o->profile,
					  rc->files.v[rc->files.n - 1].path, *names ? "; the profiles are: " : "; it has no profile",
					  names);
			layers_free(ls);
			return -EINVAL;
		}
	}
	for (size_t i = 0; with_commands && i < rc->matches.n && rc->matches.v[i].matched; i++)
		layers_push(ls, rc->matches.v[i].file, rc->matches.v[i].section);
	ls->v = xgrow(ls->v, ls->n, sizeof(*ls->v));
	ls->v[ls->n++] = o->layer;
	return 0;
}

static int build(struct run_config *rc, const struct layers *ls, const struct options *o, char *const *environ,
		 struct policy *p)
{
	struct policy_failure pf;
	int e = policy_build(ls->v, ls->n, o->argv, environ, rc->facts, p, &pf);
	if (e < 0) {
		say_policy_failure(&pf);
		policy_failure_free(&pf);
		policy_free(p);
	}
	return e;
}

static bool any_commands(const struct conf_set *s)
{
	for (size_t i = 0; i < s->n; i++)
		for (size_t k = 0; k < s->v[i].n; k++)
			if (s->v[i].v[k].kind == CONF_COMMAND)
				return true;
	return false;
}

/* The PATH the person set: the caller's environment's, as the user's own
 * file and the command line leave it (what a [command] section's words
 * mean). NULL when none sets one. */
/* The PATH the person set: environ's, with the operations (of all given)
 * of the command line and the user's own file. */
static char *own_path_of(const struct run_config *rc, const struct env_op *all, size_t n_all, char *const *environ)
{
	const char *user = NULL;
	for (size_t i = 0; i < rc->files.n; i++)
		if (rc->files.v[i].origin == CONF_USER)
			user = rc->files.v[i].path;
	_cleanup_free_ struct env_op *ops = NULL;
	size_t n = 0;
	for (size_t k = 0; k < n_all; k++) {
		const struct env_op *op = &all[k];
		if (op->source.kind != SOURCE_OPTION &&
		    !(op->source.kind == SOURCE_FILE && user && op->source.file && streq(op->source.file, user)))
			continue;
		ops = xgrow(ops, n, sizeof(*ops));
		ops[n++] = *op;
	}
	struct env e = { 0 };
	env_begin(&e, environ, ops, n);
	const char *v = env_get(e.envp, "PATH");
	char *r = v ? xstrdup(v) : NULL;
	env_free(&e);
	return r;
}

static char *own_path(const struct run_config *rc, const struct layers *ls, char *const *environ)
{
	_cleanup_free_ struct env_op *ops = NULL;
	size_t n = 0;
	for (size_t i = 0; i < ls->n; i++)
		for (size_t k = 0; k < ls->v[i].n_env_ops; k++) {
			ops = xgrow(ops, n, sizeof(*ops));
			ops[n++] = ls->v[i].env_ops[k];
		}
	return own_path_of(rc, ops, n, environ);
}

int config_exec_layers(const struct run_config *rc, char *const *argv, char *const *caller, const char *final_path,
		       const char *cwd, const struct policy *p, struct layer **ret, size_t *ret_n)
{
	*ret = NULL;
	*ret_n = 0;
	if (!any_commands(&rc->files))
		return 0;
	_cleanup_free_ char *own = own_path_of(rc, p->env_ops, p->n_env_ops, caller);
	struct conf_matches m = { 0 };
	conf_match_commands(&rc->files, argv, own, final_path, cwd, p, &m);
	for (size_t i = 0; i < m.n && m.v[i].matched; i++) {
		*ret = xgrow(*ret, *ret_n, sizeof(**ret));
		conf_section_layer(m.v[i].file, m.v[i].section, &(*ret)[(*ret_n)++]);
	}
	conf_matches_free(&m);
	return 0;
}

/* The files in effect: the jail must not be able to change one. Those in
 * the workspace are hand-offs the guard keeps; one that any other tree
 * the run may write holds is refused. */
static int keep_files(const struct run_config *rc, struct policy *p)
{
	for (size_t i = 0; i < rc->files.n; i++) {
		const char *path = rc->files.v[i].path;
		strv_add(&p->files, path);
		const struct conf_file *cf = &rc->files.v[i];
		p->standings = xgrow(p->standings, p->n_standings, sizeof(*p->standings));
		p->standings[p->n_standings++] = (struct settings_file){
			.path = xstrdup(path),
			.standing = xstrdup(cf->origin == CONF_USER ? "your own settings file"
					    : cf->trusted	       ? "a file you trusted with stockade trust, as it is now"
								       : "a file nobody trusted: only what it narrows applies"),
		};
		if (path_is_beneath(path, p->workspace) && !streq(path, p->workspace)) {
			/* the table names the workspace's own already */
			const char *rel = path_below(path, p->workspace);
			if (streq(rel, "stockade.ini") || streq(rel, ".stockade.ini"))
				continue;
			if (!p->conf_handoffs)
				p->conf_handoffs = strv_new();
			strv_add(&p->conf_handoffs, path_below(path, p->workspace));
			continue;
		}
		if (policy_effect(p, path) == EFFECT_WRITE) {
			log_error("refusing to run: the settings file '%s' would be writable from the jail", path);
			log_hint("keep stockade.ini outside what the run may write, or in the workspace, where the guard keeps it");
			return -EPERM;
		}
	}
	return 0;
}

/* The user's own settings file, there or not, and every directory on
 * the way to it: every later run reads it as the person's word, with no
 * trust asked. A run that could make or change it (a --write of
 * ~/.config, a dotfiles checkout ~/.config links into) is refused, unless
 * what it could write there lies in the workspace alone: then the path is
 * a hand-off, and what appears there the guard's to judge. */
static int keep_user_file(char *const *environ, struct policy *p)
{
	_cleanup_free_ char *path = conf_user_file(environ);
	if (!path)
		return 0;
	struct steer st;
	int r = steer_path(p->writable, path, &st);
	if (r < 0) {
		log_error("refusing to run: cannot tell where your settings file '%s' would be: %s", path, strerror(-r));
		log_hint("make the folders on the way to it plain folders (or links outside what the run may write)");
		return -EINVAL;
	}
	if (!steer_steerable(&st)) {
		steer_free(&st);
		return 0;
	}
	if (!st.escapes && st.tree && streq(st.tree, p->workspace) && path_is_beneath(st.target, p->workspace) &&
	    !streq(st.target, p->workspace)) {
		const char *rel = path_below(st.target, p->workspace);
		if (!streq(rel, "stockade.ini") && !streq(rel, ".stockade.ini") && !strv_contains(p->conf_handoffs, rel)) {
			if (!p->conf_handoffs)
				p->conf_handoffs = strv_new();
			strv_add(&p->conf_handoffs, rel);
		}
		steer_free(&st);
		return 0;
	}
	const char *tree = st.tree ? st.tree : st.target;
	const struct rule *w = policy_rule_for(p, tree);
	_cleanup_free_ char *origin = w ? (w->origin ? xstrdup(w->origin) : source_text(&w->source)) : xstrdup("?");
	struct stat sb;
	bool there = lstat(path, &sb) == 0;
	if (st.link)
		log_error("refusing to run: your own settings file '%s'%s could be %s from the jail: the symlink '%s' on the "
			  "way to it lies in '%s', which the run may write (%s)",
			  path, there ? "" : " (not there yet)", there ? "changed" : "made", st.link, tree, origin);
	else
		log_error("refusing to run: your own settings file '%s'%s could be %s from the jail: the run may write '%s' "
			  "(%s), on the way to it",
			  path, there ? "" : " (not there yet)", there ? "changed" : "made", tree, origin);
	log_hint("let the run write less than '%s', so that '%s' and the folders on the way to it stay out of its reach",
		 tree, path);
	steer_free(&st);
	return -EPERM;
}

static void say_widenings(const struct policy *p)
{
	_cleanup_strv_ char **files = strv_new();
	for (size_t i = 0; i < p->n_widenings; i++) {
		const struct widening *w = &p->widenings[i];
		if (w->what)
			log_error("%s line %u: %s: '%s' widens the jail: %s, and the file is not trusted", w->source.file,
				  w->source.line, w->source.key, w->value, w->what);
		else
			log_error("%s line %u: %s: '%s' widens the jail (before it: %s), and the file is not trusted",
				  w->source.file, w->source.line, w->source.key, w->value, w->before);
		if (!strv_contains(files, w->source.file))
			strv_add(&files, w->source.file);
	}
	for (size_t i = 0; files[i]; i++)
		log_hint("read '%s', then trust it as it is with: stockade trust '%s'", files[i], files[i]);
}

/* The policy from the files as they are trusted now: the layers without
 * the [command] sections, matched against that policy, then with the
 * sections that match. 0, or 125 once said. */
static int build_all(const struct options *o, char *const *environ, struct run_config *rc, struct policy *p)
{
	struct layers ls;
	if (make_layers(rc, o, false, &ls) < 0)
		return EXIT_STOCKADE;
	int e = build(rc, &ls, o, environ, p);
	_cleanup_free_ char *own = e == 0 && any_commands(&rc->files) ? own_path(rc, &ls, environ) : NULL;
	layers_free(&ls);
	if (e < 0)
		return EXIT_STOCKADE;
	conf_matches_free(&rc->matches);
	/* The [command] sections are matched against the policy without
	 * them: the program that will run, found on the command's own PATH
	 * (after every layer's env), whether the way to it lies in a tree the
	 * run may write. */
	if (!any_commands(&rc->files))
		return 0;
	conf_match_commands(&rc->files, o->argv, own, env_get(p->env.envp, "PATH"), p->cwd, p, &rc->matches);
	if (!rc->matches.n || !rc->matches.v[0].matched)
		return 0;
	struct policy with;
	if (make_layers(rc, o, true, &ls) < 0) {
		policy_free(p);
		return EXIT_STOCKADE;
	}
	e = build(rc, &ls, o, environ, &with);
	layers_free(&ls);
	if (e < 0) {
		policy_free(p);
		return EXIT_STOCKADE;
	}
	/* With the sections, their env and writes too: the program that runs
	 * then must be the one they matched, and still out of the run's
	 * reach. Else they are taken back, and said so in explain. */
	_cleanup_free_ char *why_not = conf_recheck_program(o->argv[0], p->program, own, &with);
	if (why_not) {
		for (size_t i = 0; i < rc->matches.n && rc->matches.v[i].matched; i++) {
			rc->matches.v[i].matched = false;
			free(rc->matches.v[i].why);
			rc->matches.v[i].why = xstrcat3("it matched, but ", why_not, ": not taken");
		}
		policy_free(&with);
	} else {
		policy_free(p);
		*p = with;
	}
	return 0;
}

int config_policy(const struct options *o, char *const *environ, const struct policy_facts *facts,
		  struct run_config *rc, struct policy *p)
{
	*rc = (struct run_config){ .facts = facts };
	policy_init(p);
	struct policy_failure pf;
	if (policy_find_state_dir(environ, &rc->state_dir, &pf) < 0) {
		say_policy_failure(&pf);
		policy_failure_free(&pf);
		return EXIT_STOCKADE;
	}
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	const char *workspace = o->layer.workspace ? o->layer.workspace : cwd ? cwd : ".";
	struct conf_error ce;
	if (conf_find(workspace, o->config, environ, &rc->files, &ce) < 0) {
		say_conf_error(&ce);
		conf_error_free(&ce);
		return EXIT_STOCKADE;
	}
	/* Trust, settled before the one build: a file's record looked up
	 * (one open where there is none), its bytes hashed only where there
	 * is one. */
	for (size_t i = 0; i < rc->files.n; i++) {
		struct conf_file *f = &rc->files.v[i];
		f->trusted = f->origin == CONF_USER || conf_trust_check(rc->state_dir, f);
	}
	int e = build_all(o, environ, rc, p);
	if (e)
		return e;
	if (p->n_widenings) {
		say_widenings(p);
		policy_free(p);
		return EXIT_STOCKADE;
	}
	if (keep_files(rc, p) < 0 || keep_user_file(environ, p) < 0) {
		policy_free(p);
		return EXIT_STOCKADE;
	}
	return 0;
}

static const char *section_text(const struct conf_section *s, char buf[static 1], size_t n)
{
	switch (s->kind) {
	case CONF_SANDBOX:
		return "[sandbox]";
	case CONF_PROFILE:
		snprintf(buf, n, "[profile %s]", s->name);
		return buf;
	case CONF_COMMAND:
		snprintf(buf, n, "[command \"%s\"]", s->name);
		return buf;
	}
	return "";
}

static void print_source(FILE *f, const char *what, const char *value, const struct source *s)
{
	_cleanup_free_ char *t = source_text(s);
	fprintf(f, "  %-13s %s  (%s)\n", what, value, t);
}

void config_print(FILE *f, const struct run_config *rc, const struct options *o, const struct policy *p)
{
	fputs("settings files (later ones win):\n", f);
	if (!rc->files.n)
		fputs("  none\n", f);
	for (size_t i = 0; i < rc->files.n; i++) {
		const struct conf_file *cf = &rc->files.v[i];
		fprintf(f, "  %s  (%s; %s)\n", cf->path, origin_name(cf->origin),
			cf->origin == CONF_USER ? "trusted: your own"
			: cf->trusted		 ? "trusted with stockade trust"
						 : "not trusted: what it narrows applies, what it widens is refused");
		char buf[512];
		for (size_t k = 0; k < cf->n; k++) {
			const struct conf_section *s = &cf->v[k];
			const char *taken = s->kind == CONF_SANDBOX ? "taken"
					    : s->kind == CONF_PROFILE ? (o->profile && streq(o->profile, s->name) ? "taken (--profile)"
											     : "not asked for")
								      : NULL;
			if (taken)
				fprintf(f, "    %s line %u: %s\n", section_text(s, buf, sizeof(buf)), s->line, taken);
		}
	}
	for (size_t i = 0; i < rc->matches.n; i++) {
		const struct conf_match *m = &rc->matches.v[i];
		char buf[512];
		fprintf(f, "  %s %s line %u: %s: %s\n", section_text(m->section, buf, sizeof(buf)), m->file->path,
			m->section->line, m->matched ? "matches" : "does not match", m->why);
	}
	fputs("settings:\n", f);
	print_source(f, "network", net_mode_name(p->net), &p->net_source);
	print_source(f, "backend", backend_name(p->backend), &p->backend_source);
	print_source(f, "mode", p->mode == MODE_OFF ? "off" : p->mode == MODE_REQUIRED ? "required" : "auto",
		     &p->mode_source);
	if (p->hide_ignored)
		print_source(f, "hide-ignored", "true", &p->hide_ignored_source);
}

static int trust_list(const char *state_dir)
{
	struct conf_trusted *v = NULL;
	size_t n = 0;
	int r = conf_trust_list(state_dir, &v, &n);
	if (r < 0) {
		log_error("cannot list the trusted files in '%s/trust': %s", state_dir, strerror(-r));
		return EXIT_STOCKADE;
	}
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *text = NULL;
		size_t len = 0;
		const char *state = "trusted";
		if (read_file_at(AT_FDCWD, v[i].path, 1u << 20, &text, &len) < 0) {
			state = "missing";
		} else {
			char now[65];
			sha256_hex(text, len, now);
			if (!streq(now, v[i].hash))
				state = "changed";
		}
		_cleanup_free_ char *path = str_visible(v[i].path);
		printf("%-8s %s  sha256:%.16s\n", state, path, v[i].hash);
	}
	conf_trusted_free(v, n);
	return fflush(stdout) == 0 ? 0 : EXIT_STOCKADE;
}

int config_trust_verb(const struct options *o, char *const *environ)
{
	_cleanup_free_ char *state_dir = NULL;
	struct policy_failure pf;
	if (policy_find_state_dir(environ, &state_dir, &pf) < 0) {
		say_policy_failure(&pf);
		policy_failure_free(&pf);
		return EXIT_STOCKADE;
	}
	if (o->trust_list)
		return trust_list(state_dir);
	int r;
	_cleanup_free_ char *path = NULL;
	if (o->revoke) {
		if ((r = conf_file_path(o->revoke, &path)) < 0) {
			log_error("cannot resolve '%s': %s", o->revoke, strerror(-r));
			return EXIT_STOCKADE;
		}
		r = conf_trust_revoke(state_dir, path);
		if (r < 0) {
			log_error("cannot revoke '%s': %s", path, r == -ENOENT ? "it is not trusted" : strerror(-r));
			return EXIT_STOCKADE;
		}
		log_note("'%s' is no longer trusted", path);
		return 0;
	}
	struct conf_error ce = { 0 };
	if (o->argv[0]) {
		r = conf_file_path(o->argv[0], &path);
	} else {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);
		const char *ws = o->layer.workspace ? o->layer.workspace : cwd ? cwd : ".";
		_cleanup_free_ char *found = NULL;
		r = conf_workspace_file(ws, &found, &ce);
		if (r == -ENOENT) {
			log_error("cannot trust: no stockade.ini or .stockade.ini in '%s'", ws);
			log_hint("name the file: stockade trust FILE");
			return EXIT_STOCKADE;
		}
		if (r == 0)
			r = conf_file_path(found, &path);
	}
	if (r < 0) {
		if (ce.msg)
			say_conf_error(&ce);
		else
			log_error("cannot resolve '%s': %s", o->argv[0] ? o->argv[0] : "stockade.ini", strerror(-r));
		conf_error_free(&ce);
		return EXIT_STOCKADE;
	}
	/* A file stockade cannot read as a whole is never trusted. */
	struct conf_file f;
	if (conf_read(path, CONF_OPTION, &f, &ce) < 0) {
		say_conf_error(&ce);
		conf_error_free(&ce);
		return EXIT_STOCKADE;
	}
	r = conf_trust_record(state_dir, &f);
	if (r < 0)
		log_error("cannot record the trust of '%s' in '%s/trust': %s", path, state_dir, strerror(-r));
	else
		log_note("trusted '%s' as it is now (sha256:%.16s); an edit needs trusting again", path, conf_file_hash(&f));
	conf_file_free(&f);
	return r < 0 ? EXIT_STOCKADE : 0;
}
