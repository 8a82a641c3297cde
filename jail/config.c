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

static int build(const struct layers *ls, const struct options *o, char *const *environ, struct policy *p)
{
	struct policy_failure pf;
	int e = policy_build(ls->v, ls->n, o->argv, environ, p, &pf);
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

/* The program, where the final policy lets the run write its tree: the
 * sections that matched would lend their grants to what the run can
 * replace. They are taken back, and said so in explain. */
static bool program_writable(const struct policy *p)
{
	if (!p->program)
		return false;
	_cleanup_free_ char *canon = NULL;
	if (path_canonical(p->program, &canon) < 0)
		return false;
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].access == ACCESS_WRITE && path_is_beneath(canon, p->rules[i].path))
			return true;
	return false;
}

/* The files in effect: the jail must not be able to change one. Those in
 * the workspace are hand-offs the guard keeps; one that any other tree
 * the run may write holds is refused. */
static int keep_files(const struct run_config *rc, struct policy *p)
{
	for (size_t i = 0; i < rc->files.n; i++) {
		const char *path = rc->files.v[i].path;
		strv_add(&p->files, path);
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

static void say_widenings(const struct policy *p)
{
	_cleanup_strv_ char **files = strv_new();
	for (size_t i = 0; i < p->n_widenings; i++) {
		const struct widening *w = &p->widenings[i];
		log_error("%s line %u: %s: '%s' widens the jail (before it: %s), and the file is not trusted", w->source.file,
			  w->source.line, w->source.key, w->value, w->before);
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
		return 125;
	int e = build(&ls, o, environ, p);
	layers_free(&ls);
	if (e < 0)
		return 125;
	conf_matches_free(&rc->matches);
	/* The [command] sections are matched against the policy without
	 * them: whether the program lies in a tree the run may write. */
	if (!any_commands(&rc->files))
		return 0;
	conf_match_commands(&rc->files, o->argv, env_get(environ, "PATH"), p->cwd, p, &rc->matches);
	if (!rc->matches.n || !rc->matches.v[0].matched)
		return 0;
	struct policy with;
	if (make_layers(rc, o, true, &ls) < 0) {
		policy_free(p);
		return 125;
	}
	e = build(&ls, o, environ, &with);
	layers_free(&ls);
	if (e < 0) {
		policy_free(p);
		return 125;
	}
	if (program_writable(&with)) {
		for (size_t i = 0; i < rc->matches.n && rc->matches.v[i].matched; i++) {
			rc->matches.v[i].matched = false;
			free(rc->matches.v[i].why);
			rc->matches.v[i].why = xstrdup("it matched, but with it the run could write its own program: not taken");
		}
		policy_free(&with);
	} else {
		policy_free(p);
		*p = with;
	}
	return 0;
}

int config_policy(const struct options *o, char *const *environ, struct run_config *rc, struct policy *p)
{
	*rc = (struct run_config){ 0 };
	policy_init(p);
	struct policy_failure pf;
	if (policy_find_state_dir(environ, &rc->state_dir, &pf) < 0) {
		say_policy_failure(&pf);
		policy_failure_free(&pf);
		return 125;
	}
	_cleanup_free_ char *cwd = getcwd(NULL, 0);
	const char *workspace = o->layer.workspace ? o->layer.workspace : cwd ? cwd : ".";
	struct conf_error ce;
	if (conf_find(workspace, o->config, environ, &rc->files, &ce) < 0) {
		say_conf_error(&ce);
		conf_error_free(&ce);
		return 125;
	}
	/* Trust matters only to a file that widens something: the others
	 * are built as untrusted, and their hash never made. */
	for (size_t i = 0; i < rc->files.n; i++)
		rc->files.v[i].trusted = rc->files.v[i].origin == CONF_USER;
	int e = build_all(o, environ, rc, p);
	if (e)
		return e;
	if (p->n_widenings) {
		bool more = false;
		for (size_t i = 0; i < rc->files.n; i++) {
			struct conf_file *f = &rc->files.v[i];
			if (!f->trusted && conf_trust_check(rc->state_dir, f))
				f->trusted = more = true;
		}
		if (more) {
			policy_free(p);
			if ((e = build_all(o, environ, rc, p)))
				return e;
		}
	}
	if (p->n_widenings) {
		say_widenings(p);
		policy_free(p);
		return 125;
	}
	if (keep_files(rc, p) < 0) {
		policy_free(p);
		return 125;
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

void config_print(FILE *f, struct run_config *rc, const struct options *o, const struct policy *p)
{
	/* A file that widened nothing was never looked up: for explain, it is. */
	for (size_t i = 0; i < rc->files.n; i++)
		if (!rc->files.v[i].trusted)
			rc->files.v[i].trusted = conf_trust_check(rc->state_dir, &rc->files.v[i]);
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
		return 125;
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
	return fflush(stdout) == 0 ? 0 : 125;
}

int config_trust_verb(const struct options *o, char *const *environ)
{
	_cleanup_free_ char *state_dir = NULL;
	struct policy_failure pf;
	if (policy_find_state_dir(environ, &state_dir, &pf) < 0) {
		say_policy_failure(&pf);
		policy_failure_free(&pf);
		return 125;
	}
	if (o->trust_list)
		return trust_list(state_dir);
	int r;
	_cleanup_free_ char *path = NULL;
	if (o->revoke) {
		if ((r = conf_file_path(o->revoke, &path)) < 0) {
			log_error("cannot resolve '%s': %s", o->revoke, strerror(-r));
			return 125;
		}
		r = conf_trust_revoke(state_dir, path);
		if (r < 0) {
			log_error("cannot revoke '%s': %s", path, r == -ENOENT ? "it is not trusted" : strerror(-r));
			return 125;
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
			return 125;
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
		return 125;
	}
	/* A file stockade cannot read as a whole is never trusted. */
	struct conf_file f;
	if (conf_read(path, CONF_OPTION, &f, &ce) < 0) {
		say_conf_error(&ce);
		conf_error_free(&ce);
		return 125;
	}
	r = conf_trust_record(state_dir, &f);
	if (r < 0)
		log_error("cannot record the trust of '%s' in '%s/trust': %s", path, state_dir, strerror(-r));
	else
		log_note("trusted '%s' as it is now (sha256:%.16s); an edit needs trusting again", path, conf_file_hash(&f));
	conf_file_free(&f);
	return r < 0 ? 125 : 0;
}
