#include "jail/explain.h"

#include "jail/explain-policy.h"

#include "lib/log.h"
#include "lib/util.h"

void explain_print(FILE *f, const struct policy *p, const struct plan *pl, const char *why, const struct report *rep)
{
	explain_print_head(f, p, pl->backend, why, pl->places.home, pl->places.tmpdir);
	explain_print_rules(f, p);
	if (pl->backend == BACKEND_NAMESPACES)
		mount_plan_print(f, &pl->mounts);
	if (pl->backend != BACKEND_NONE) {
		if (pl->landlock.abi)
			landlock_plan_print(f, &pl->landlock);
		seccomp_plan_print(f, &pl->seccomp);
	}
	explain_print_env(f, &pl->places.env);
	explain_print_report(f, rep);
}

void explain_summary(FILE *f, const struct policy *p, const struct plan *pl, const char *why, const struct report *rep)
{
	explain_print_head(f, p, pl->backend, why, pl->places.home, pl->places.tmpdir);
	explain_print_rules_summary(f, p);
	fprintf(f, "plans: %zu mounts, %zu Landlock rules, %zu seccomp rows; %zu environment changes (explain -v)\n",
		pl->backend == BACKEND_NAMESPACES ? pl->mounts.n_entries : 0, pl->landlock.n_rules, pl->seccomp.n_rules,
		pl->places.env.n_changes);
	explain_print_report(f, rep);
	fputs("explain -v prints every rule and plan; explain --json the same as JSON\n", f);
}

/* A module's own print of its plan, as one JSON string. */
static void json_plan(FILE *f, const char *name, void (*print)(FILE *, const void *), const void *plan)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (m) {
		print(m, plan);
		fclose(m);
	}
	fprintf(f, ",\n  \"%s\": ", name);
	json_string(f, buf ? buf : "");
	free(buf);
}

static void print_mounts(FILE *f, const void *plan)
{
	mount_plan_print(f, plan);
}

static void print_landlock(FILE *f, const void *plan)
{
	landlock_plan_print(f, plan);
}

static void print_seccomp(FILE *f, const void *plan)
{
	seccomp_plan_print(f, plan);
}

void explain_json(FILE *f, const struct policy *p, const struct plan *pl, const char *why, const struct report *rep)
{
	fputs("{\n", f);
	explain_json_policy(f, p, pl->backend, why, pl->places.home, pl->places.tmpdir, &pl->places.env, rep);
	if (pl->backend == BACKEND_NAMESPACES)
		json_plan(f, "mounts", print_mounts, &pl->mounts);
	if (pl->backend != BACKEND_NONE) {
		if (pl->landlock.abi)
			json_plan(f, "landlock", print_landlock, &pl->landlock);
		json_plan(f, "seccomp", print_seccomp, &pl->seccomp);
	}
	fputs("\n}\n", f);
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
		return EXIT_STOCKADE;
	}
	plan_mounts(&pl, r->p);
	e = plan_landlock(&pl, r->p, r->h);
	if (e < 0) {
		log_error("cannot plan the Landlock rules: %s", strerror(-e));
		plan_free(&pl);
		return EXIT_STOCKADE;
	}
	plan_describe(&pl, r->p, r->h, false, r->rep);
	if (r->explain_detail == 2)
		explain_json(stdout, r->p, &pl, r->why, r->rep);
	else if (r->explain_detail == 1)
		explain_print(stdout, r->p, &pl, r->why, r->rep);
	else
		explain_summary(stdout, r->p, &pl, r->why, r->rep);
	plan_free(&pl);
	return fflush(stdout) == 0 ? 0 : EXIT_STOCKADE;
}
