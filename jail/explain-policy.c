#include "jail/explain-policy.h"

#include "lib/path.h"
#include "lib/util.h"
#include "policy/allow.h"

static void print_rule(FILE *f, const struct policy *p, const struct rule *r)
{
	const struct rule *w = policy_rule_for(p, r->path);
	_cleanup_free_ char *path = str_visible(r->path), *origin = str_visible(r->origin);
	fprintf(f, "  %-8s %s  (%s)%s\n", access_name(r->access), path, origin,
		w != r && streq(w->path, r->path) ? " [overridden on this path]" : "");
}

void explain_print_head(FILE *f, const struct policy *p, enum backend backend, const char *why, const char *home,
			const char *tmpdir)
{
	_cleanup_free_ char *ws = str_visible(p->workspace), *vhome = str_visible(home), *vtmp = str_visible(tmpdir);
	fprintf(f, "workspace: %s\nbackend: %s (%s)\nnetwork: %s\nhome: %s%s\ntmp: %s\n", ws, backend_name(backend), why,
		net_mode_name(p->net), vhome, p->home ? " (kept, --home)" : " (fresh, removed after the run)", vtmp);
	for (size_t i = 0; i < p->n_grants; i++) {
		_cleanup_free_ char *text = net_grant_text(&p->grants[i]);
		_cleanup_free_ char *src = source_text(&p->grants[i].source);
		fprintf(f, "%s: %s  (%s)\n", p->grants[i].kind == GRANT_PUBLISH ? "publish" : "connect", text, src);
	}
	for (size_t i = 0; i < p->n_allow; i++) {
		_cleanup_free_ char *text = allow_entry_text(&p->allow[i]);
		_cleanup_free_ char *src = source_text(&p->allow[i].source);
		fprintf(f, "allow: %s%s  (%s%s%s)\n", text, p->allow[i].port ? "" : " (ports 443 and 80)", src,
			p->allow[i].list ? ", from " : "", p->allow[i].list ? p->allow[i].list : "");
	}
	if (p->net == NET_ALLOW && !p->n_allow)
		fputs("allow: (no name: every lookup answers NXDOMAIN)\n", f);
	if (p->argv) {
		_cleanup_free_ char *program = p->program ? str_visible(p->program) : NULL;
		fprintf(f, "program: %s\n", program ? program : "(not found)");
	}
	/* As written, not in bytes: the share of memory is the host's. */
	const struct limits *lim = &p->limits;
	_cleanup_free_ char *procs_src = source_text(&lim->max_procs_source);
	_cleanup_free_ char *mem_src = source_text(&lim->memory_source);
	_cleanup_free_ char *tmp_src = source_text(&lim->tmp_size_source);
	char num[21], num2[21];
	fprintf(f, "limits: processes %lu (%s); memory %s%s (%s); tmpfs %s%s (%s)\n", lim->max_procs, procs_src,
		lim->memory.bytes ? fmt_u64(num, lim->memory.bytes) : fmt_u64(num, lim->memory.percent),
		lim->memory.bytes ? " bytes" : "% of memory", mem_src,
		lim->tmp_size.bytes ? fmt_u64(num2, lim->tmp_size.bytes) : fmt_u64(num2, lim->tmp_size.percent),
		lim->tmp_size.bytes ? " bytes" : "% of memory", tmp_src);
}

void explain_print_rules(FILE *f, const struct policy *p)
{
	const struct rule *places = p->places ? p->places->v : NULL;
	size_t n_places = p->places ? p->places->n : 0;
	fputs("path rules (the deepest wins; on one path hide > protect > read > write):\n", f);
	for (size_t i = 0; i < p->n_rules; i++)
		print_rule(f, p, &p->rules[i]);
	fputs("the backend's own places (made for each run, gone after it):\n", f);
	for (size_t i = 0; i < n_places; i++) {
		_cleanup_free_ char *path = str_visible(places[i].path), *origin = str_visible(places[i].origin);
		fprintf(f, "  %-8s %s  (%s)\n", access_name(places[i].access), path, origin);
	}
}

void explain_print_env(FILE *f, const struct env *e)
{
	fputs("environment changes:\n", f);
	for (size_t i = 0; i < e->n_changes; i++) {
		const struct env_change *c = &e->changes[i];
		_cleanup_free_ char *name = str_visible(c->name), *why = str_visible(c->why);
		_cleanup_free_ char *value = c->value ? str_visible(c->value) : NULL;
		if (value)
			fprintf(f, "  %s=%s  (%s)\n", name, value, why);
		else
			fprintf(f, "  -%s  (removed: %s)\n", name, why);
	}
}

void explain_print_report(FILE *f, const struct report *rep)
{
	fputs("enforced:\n", f);
	for (size_t i = 0; rep->enforced[i]; i++) {
		fputs("  ", f);
		fputs_visible(rep->enforced[i], f);
		fputc('\n', f);
	}
	fputs("unenforced:\n", f);
	for (size_t i = 0; i < rep->n_gaps; i++) {
		_cleanup_free_ char *what = str_visible(rep->gaps[i].what), *why = str_visible(rep->gaps[i].why);
		fprintf(f, "  %s: %s\n", what, why);
	}
}

/* Up to this many paths a line, in the summary. */
#define SUMMARY_PATHS 4

/* The paths of one access and origin, from v[from] on, marked done. */
static void summary_paths(FILE *f, const char *access, const char *origin, const struct rule *v, size_t n,
			  size_t from, bool *done)
{
	size_t count = 0;
	for (size_t j = from; j < n; j++) {
		if (done[j] || !streq(access_name(v[j].access), access) || !streq(v[j].origin ? v[j].origin : "?", origin))
			continue;
		done[j] = true;
		if (count++ < SUMMARY_PATHS) {
			fputc(' ', f);
			fputs_visible(v[j].path, f);
		}
	}
	if (count > SUMMARY_PATHS)
		fprintf(f, " (and %zu more)", count - SUMMARY_PATHS);
}

/* stockade's own state, hidden where nothing the run reads holds it:
 * a rule of every run that changes nothing in this one (explain -v
 * lists it). */
static bool moot(const struct policy *p, const struct rule *r)
{
	if (!p || !(r->flags & RULE_STATE))
		return false;
	_cleanup_free_ char *parent = path_parent(r->path, NULL);
	return parent && policy_effect(p, parent) == EFFECT_NONE;
}

/* A line an origin: its first access's paths, then each other access's
 * (a hide and the reads beneath it that one default renders). p, for
 * the policy's own rules: those moot in the run are left out. */
static void summarise(FILE *f, const struct rule *v, size_t n, const struct policy *p)
{
	_cleanup_free_ bool *done = xcalloc(n + 1, sizeof(bool));
	for (size_t i = 0; i < n; i++)
		done[i] = moot(p, &v[i]);
	for (size_t i = 0; i < n; i++) {
		if (done[i])
			continue;
		const char *origin = v[i].origin ? v[i].origin : "?";
		_cleanup_free_ char *vorigin = str_visible(origin);
		fprintf(f, "  %-8s %s:", access_name(v[i].access), vorigin);
		summary_paths(f, access_name(v[i].access), origin, v, n, i, done);
		for (size_t j = i + 1; j < n; j++) {
			if (done[j] || !streq(v[j].origin ? v[j].origin : "?", origin))
				continue;
			fprintf(f, "; %s:", access_name(v[j].access));
			summary_paths(f, access_name(v[j].access), origin, v, n, j, done);
		}
		fputc('\n', f);
	}
}

void explain_print_rules_summary(FILE *f, const struct policy *p)
{
	const struct rule *places = p->places ? p->places->v : NULL;
	size_t n_places = p->places ? p->places->n : 0;
	fprintf(f, "path rules: %zu (the deepest wins; explain -v lists each, with the mounts, Landlock rules and "
		   "seccomp filter):\n", p->n_rules);
	summarise(f, p->rules, p->n_rules, p);
	fputs("the backend's own places:\n", f);
	summarise(f, places, n_places, NULL);
}

static void json_rules(FILE *f, const char *name, const struct rule *v, size_t n)
{
	fprintf(f, ",\n  \"%s\": [", name);
	for (size_t i = 0; i < n; i++) {
		fputs(i ? ",\n    {\"path\": " : "\n    {\"path\": ", f);
		json_string(f, v[i].path);
		fputs(", \"access\": ", f);
		json_string(f, access_name(v[i].access));
		fputs(", \"origin\": ", f);
		json_string(f, v[i].origin ? v[i].origin : "?");
		_cleanup_free_ char *src = source_text(&v[i].source);
		fputs(", \"source\": ", f);
		json_string(f, src);
		fprintf(f, ", \"handoff\": %s}", v[i].flags & RULE_HANDOFF ? "true" : "false");
	}
	fputs(n ? "\n  ]" : "]", f);
}

void explain_json_policy(FILE *f, const struct policy *p, enum backend backend, const char *why, const char *home,
			 const char *tmpdir, const struct env *env, const struct report *rep)
{
	fputs("  \"workspace\": ", f);
	json_string(f, p->workspace);
	fputs(",\n  \"backend\": ", f);
	json_string(f, backend_name(backend));
	fputs(",\n  \"why\": ", f);
	json_string(f, why);
	fputs(",\n  \"network\": ", f);
	json_string(f, net_mode_name(p->net));
	_cleanup_free_ char *net_src = source_text(&p->net_source);
	fputs(",\n  \"network_source\": ", f);
	json_string(f, net_src);
	fputs(",\n  \"home\": ", f);
	json_string(f, home);
	fprintf(f, ",\n  \"home_kept\": %s,\n  \"tmp\": ", p->home ? "true" : "false");
	json_string(f, tmpdir);
	fputs(",\n  \"program\": ", f);
	if (p->program)
		json_string(f, p->program);
	else
		fputs("null", f);
	fputs(",\n  \"grants\": [", f);
	for (size_t i = 0; i < p->n_grants; i++) {
		_cleanup_free_ char *text = net_grant_text(&p->grants[i]);
		_cleanup_free_ char *src = source_text(&p->grants[i].source);
		fputs(i ? ", {\"kind\": " : "{\"kind\": ", f);
		json_string(f, p->grants[i].kind == GRANT_PUBLISH ? "publish" : "connect");
		fputs(", \"what\": ", f);
		json_string(f, text);
		fputs(", \"source\": ", f);
		json_string(f, src);
		fputc('}', f);
	}
	fputc(']', f);
	if (p->n_allow || p->net == NET_ALLOW) {
		fputs(",\n  \"allow\": [", f);
		for (size_t i = 0; i < p->n_allow; i++) {
			_cleanup_free_ char *text = allow_entry_text(&p->allow[i]);
			_cleanup_free_ char *src = source_text(&p->allow[i].source);
			fputs(i ? ", {\"name\": " : "{\"name\": ", f);
			json_string(f, text);
			fputs(", \"list\": ", f);
			if (p->allow[i].list)
				json_string(f, p->allow[i].list);
			else
				fputs("null", f);
			fputs(", \"source\": ", f);
			json_string(f, src);
			fputc('}', f);
		}
		fputc(']', f);
	}
	const struct limits *lim = &p->limits;
	fprintf(f, ",\n  \"limits\": {\"max_procs\": %lu, \"memory\": {\"bytes\": %llu, \"percent\": %u}, "
		   "\"tmp_size\": {\"bytes\": %llu, \"percent\": %u}}",
		lim->max_procs, (unsigned long long)lim->memory.bytes, lim->memory.percent,
		(unsigned long long)lim->tmp_size.bytes, lim->tmp_size.percent);
	json_rules(f, "rules", p->rules, p->n_rules);
	json_rules(f, "places", p->places ? p->places->v : NULL, p->places ? p->places->n : 0);
	fputs(",\n  \"environment_changes\": [", f);
	for (size_t i = 0; i < env->n_changes; i++) {
		const struct env_change *c = &env->changes[i];
		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
		json_string(f, c->name);
		fputs(", \"value\": ", f);
		if (c->value)
			json_string(f, c->value);
		else
			fputs("null", f);
		fputs(", \"why\": ", f);
		json_string(f, c->why);
		fputc('}', f);
	}
	fputs(env->n_changes ? "\n  ]" : "]", f);
	fputs(",\n  \"enforced\": [", f);
	for (size_t i = 0; rep->enforced[i]; i++) {
		if (i)
			fputs(", ", f);
		json_string(f, rep->enforced[i]);
	}
	fputs("],\n  \"unenforced\": [", f);
	for (size_t i = 0; i < rep->n_gaps; i++) {
		fputs(i ? ", {\"what\": " : "{\"what\": ", f);
		json_string(f, rep->gaps[i].what);
		fputs(", \"why\": ", f);
		json_string(f, rep->gaps[i].why);
		fputc('}', f);
	}
	fputc(']', f);
}
