#include "jail/explain.h"

#include "jail/explain-policy.h"

#include "lib/log.h"
#include "lib/util.h"

void explain_print(FILE *f, const struct policy *p, const struct plan *pl, const char *why, const struct report *rep)
{
	explain_print_head(f, p, pl->backend, why, pl->places.home, pl->places.tmpdir);
	explain_print_rules(f, p, pl->places.rules, pl->places.n_rules);
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
