#include "jail/explain.h"

#include "lib/log.h"
#include "lib/util.h"

static void print_rule(FILE *f, const struct policy *p, const struct rule *r)
{
	const struct rule *w = policy_rule_for(p, r->path);
	fprintf(f, "  %-8s %s  (%s)%s\n", access_name(r->access), r->path, r->origin,
		w != r && streq(w->path, r->path) ? " [overridden on this path]" : "");
}

static void print_env(FILE *f, const struct env *e)
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

void explain_print(FILE *f, const struct policy *p, const struct plan *pl, const char *why, const struct report *rep)
{
	fprintf(f, "workspace: %s\nbackend: %s (%s)\nnetwork: %s\nhome: %s%s\ntmp: %s\n", p->workspace,
		backend_name(pl->backend), why, net_mode_name(p->net), pl->places.home,
		p->home ? " (kept, --home)" : " (fresh, removed after the run)", pl->places.tmpdir);
	for (size_t i = 0; i < p->n_grants; i++) {
		_cleanup_free_ char *text = net_grant_text(&p->grants[i]);
		_cleanup_free_ char *src = source_text(&p->grants[i].source);
		fprintf(f, "%s: %s  (%s)\n", p->grants[i].kind == GRANT_PUBLISH ? "publish" : "connect", text, src);
	}
	if (p->argv)
		fprintf(f, "program: %s\n", p->program ? p->program : "(not found)");
	fputs("path rules (the deepest wins; on one path hide > protect > read > write):\n", f);
	for (size_t i = 0; i < p->n_rules; i++)
		print_rule(f, p, &p->rules[i]);
	fputs("the backend's own places (made for each run, gone after it):\n", f);
	for (size_t i = 0; i < pl->places.n_rules; i++)
		fprintf(f, "  %-8s %s  (%s)\n", access_name(pl->places.rules[i].access), pl->places.rules[i].path,
			pl->places.rules[i].origin);
	if (pl->backend == BACKEND_NAMESPACES)
		mount_plan_print(f, &pl->mounts);
	if (pl->backend != BACKEND_NONE) {
		if (pl->landlock.abi)
			landlock_plan_print(f, &pl->landlock);
		seccomp_plan_print(f, &pl->seccomp);
	}
	print_env(f, &pl->places.env);
	fputs("enforced:\n", f);
	for (size_t i = 0; rep->enforced[i]; i++)
		fprintf(f, "  %s\n", rep->enforced[i]);
	fputs("unenforced:\n", f);
	for (size_t i = 0; i < rep->n_gaps; i++)
		fprintf(f, "  %s: %s\n", rep->gaps[i].what, rep->gaps[i].why);
}

int explain(struct run *r)
{
	struct plan pl;
	plan_init(&pl, r->backend);
	places_plan(r->p, pl.backend, r->environ, &pl.places);
	int e = plan_filter(&pl, r->p, r->h);
	if (e < 0) {
		log_error("cannot build the seccomp filter: %s", strerror(-e));
		plan_free(&pl);
		return 125;
	}
	plan_mounts(&pl, r->p);
	e = plan_landlock(&pl, r->p, r->h);
	if (e < 0) {
		log_error("cannot plan the Landlock rules: %s", strerror(-e));
		plan_free(&pl);
		return 125;
	}
	plan_describe(&pl, r->p, r->h, false, r->rep);
	explain_print(stdout, r->p, &pl, r->why, r->rep);
	plan_free(&pl);
	return fflush(stdout) == 0 ? 0 : 125;
}
