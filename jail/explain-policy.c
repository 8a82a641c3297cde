#include "jail/explain-policy.h"

#include "lib/util.h"

static void print_rule(FILE *f, const struct policy *p, const struct rule *r)
{
	const struct rule *w = policy_rule_for(p, r->path);
	fprintf(f, "  %-8s %s  (%s)%s\n", access_name(r->access), r->path, r->origin,
		w != r && streq(w->path, r->path) ? " [overridden on this path]" : "");
}

void explain_print_head(FILE *f, const struct policy *p, enum backend backend, const char *why, const char *home,
			const char *tmpdir)
{
	fprintf(f, "workspace: %s\nbackend: %s (%s)\nnetwork: %s\nhome: %s%s\ntmp: %s\n", p->workspace,
		backend_name(backend), why, net_mode_name(p->net), home,
		p->home ? " (kept, --home)" : " (fresh, removed after the run)", tmpdir);
	for (size_t i = 0; i < p->n_grants; i++) {
		_cleanup_free_ char *text = net_grant_text(&p->grants[i]);
		_cleanup_free_ char *src = source_text(&p->grants[i].source);
		fprintf(f, "%s: %s  (%s)\n", p->grants[i].kind == GRANT_PUBLISH ? "publish" : "connect", text, src);
	}
	if (p->argv)
		fprintf(f, "program: %s\n", p->program ? p->program : "(not found)");
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

void explain_print_rules(FILE *f, const struct policy *p, const struct rule *places, size_t n_places)
{
	fputs("path rules (the deepest wins; on one path hide > protect > read > write):\n", f);
	for (size_t i = 0; i < p->n_rules; i++)
		print_rule(f, p, &p->rules[i]);
	fputs("the backend's own places (made for each run, gone after it):\n", f);
	for (size_t i = 0; i < n_places; i++)
		fprintf(f, "  %-8s %s  (%s)\n", access_name(places[i].access), places[i].path, places[i].origin);
}

void explain_print_env(FILE *f, const struct env *e)
{
	fputs("environment changes:\n", f);
	for (size_t i = 0; i < e->n_changes; i++) {
		const struct env_change *c = &e->changes[i];
		if (c->value)
			fprintf(f, "  %s=%s  (%s)\n", c->name, c->value, c->why);
		else
			fprintf(f, "  -%s  (removed: %s)\n", c->name, c->why);
	}
}

void explain_print_report(FILE *f, const struct report *rep)
{
	fputs("enforced:\n", f);
	for (size_t i = 0; rep->enforced[i]; i++)
		fprintf(f, "  %s\n", rep->enforced[i]);
	fputs("unenforced:\n", f);
	for (size_t i = 0; i < rep->n_gaps; i++)
		fprintf(f, "  %s: %s\n", rep->gaps[i].what, rep->gaps[i].why);
}
