/* stockade: the command line, the order of operations, and every message
 * the user sees. */
#include <stdio.h>
#include <sys/stat.h>

#include "jail/build.h"
#include "jail/cgroup.h"
#include "jail/cli.h"
#include "jail/fit.h"
#include "guard/guard.h"
#include "lib/log.h"
#include "policy/policy.h"
#include "policy/report.h"
#include "jail/run.h"
#include "seccomp/seccomp.h"
#include "lib/util.h"
#include "landlock/landlock.h"
#include "mount/mount.h"

extern char **environ;

/* Options whose mechanism comes in a later part: refused, never ignored. */
static int refuse_unbuilt(const struct options *o)
{
	const char *what = NULL;
	if (o->command == CMD_TRUST)
		what = "'stockade trust': stockade.ini files are not read yet";
	else if (o->config)
		what = "--config: stockade.ini files are not read yet";
	else if (o->profile)
		what = "--profile: stockade.ini files are not read yet";
	else if (o->hide_ignored)
		what = "--hide-ignored is not built yet";
	else if (o->backend == BACKEND_SEATBELT)
		what = "--backend seatbelt: Seatbelt runs on macOS only";
	if (!what)
		return 0;
	log_error("%s", what);
	return -EOPNOTSUPP;
}

static void print_rules(FILE *f, const struct policy *p)
{
	fputs("path rules (the deepest wins; on one path hide > protect > read > write):\n", f);
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct rule *r = &p->rules[i];
		const struct rule *w = policy_rule_for(p, r->path);
		fprintf(f, "  %-8s %s  (%s)%s\n", access_name(r->access), r->path, r->origin,
			w != r && streq(w->path, r->path) ? " [overridden on this path]" : "");
	}
}

static void print_env(FILE *f, const struct policy *p)
{
	fputs("environment changes:\n", f);
	for (size_t i = 0; i < p->n_env_changes; i++) {
		const struct env_change *c = &p->env_changes[i];
		if (c->value)
			fprintf(f, "  %s=%s  (%s)\n", c->name, c->value, c->why);
		else
			fprintf(f, "  -%s  (removed: %s)\n", c->name, c->why);
	}
}

static void print_report_lines(FILE *f, const struct report *rep)
{
	fputs("enforced:\n", f);
	for (size_t i = 0; rep->enforced[i]; i++)
		fprintf(f, "  %s\n", rep->enforced[i]);
	fputs("unenforced:\n", f);
	for (size_t i = 0; i < rep->n_gaps; i++)
		fprintf(f, "  %s: %s\n", rep->gaps[i].what, rep->gaps[i].why);
}

static void say_guard_changes(const struct guard_report *gr, struct report *rep)
{
	for (size_t i = 0; i < gr->n_changes; i++) {
		const struct guard_change *c = &gr->changes[i];
		const char *kind = guard_change_kind_name(c->kind);
		if (c->quarantined)
			log_error("undid a change to trust hand-off '%s' (%s): the new content is in '%s'",
				  c->path, kind, c->quarantined);
		else
			log_error("undid a change to trust hand-off '%s' (%s)", c->path, kind);
		report_denial(rep, "handoff", c->path, kind);
	}
}

static int write_report(const struct options *o, const struct report *rep)
{
	if (!o->report)
		return 0;
	int r = report_write(rep, o->report);
	if (r < 0)
		log_error("cannot write the report '%s': %s", o->report, strerror(-r));
	return r;
}

/* The backend a run starts with. With auto: the namespace jail wherever
 * the host might allow it (whether it does is found by trying, and a
 * refusal falls back), else the landlock backend. */
static enum backend choose_backend(const struct options *o, const struct host *h, const char **ret_why)
{
	if (o->mode == MODE_OFF) {
		*ret_why = "--mode off";
		return BACKEND_NONE;
	}
	if (o->backend != BACKEND_AUTO) {
		*ret_why = "chosen with --backend";
		return o->backend;
	}
	return fit_auto(h, ret_why);
}

static int refuse_unusable(enum backend backend, const struct host *h, const char *why)
{
	if (backend == BACKEND_NONE && !streq(why, "--mode off")) {
		log_error("nothing on this host can confine the command: %s", why);
		log_hint("stockade doctor says what this host can enforce; --mode off runs the command without a jail, on purpose");
		return -EOPNOTSUPP;
	}
	if (backend == BACKEND_LANDLOCK && h->landlock_abi == 0) {
		log_error("cannot use the landlock backend: Landlock is not enforced here (%s)",
			  strerrorname_np(h->landlock_err));
		log_hint("boot with lsm=...,landlock");
		return -EOPNOTSUPP;
	}
	return 0;
}

/* Everything a run plans for one backend: the policy and its renderings. */
struct attempt {
	struct policy p;
	struct landlock_plan ll;
	struct mount_plan mounts;
	struct seccomp_plan sc;
	struct sock_fprog bpf;
	struct early *early;	/* the landlock backend's command process, started ahead */
	bool built;
};

static void attempt_free(struct attempt *a)
{
	run_early_abort(a->early);
	if (a->built) {
		policy_remove_run_dir(&a->p);
		policy_free(&a->p);
	}
	landlock_plan_free(&a->ll);
	mount_plan_free(&a->mounts);
	seccomp_plan_free(&a->sc);
	seccomp_bpf_free(&a->bpf);
	*a = (struct attempt){ 0 };
}

/* The seccomp filter depends only on the command line and the host: it
 * can be had before the policy is built. */
static int plan_filter(const struct options *o, const struct host *h, enum backend backend, struct attempt *a)
{
	seccomp_plan(backend, o->net, h->landlock_abi, &a->sc);
	int r = seccomp_build(&a->sc, &a->bpf);
	if (r < 0)
		log_error("cannot build the seccomp filter: %s", strerror(-r));
	return r;
}

static int plan_policy(const struct options *o, enum backend backend, struct attempt *a)
{
	_cleanup_free_ char *err = NULL;
	int r = policy_build(o, environ, backend, &a->p, &err);
	a->built = true;
	if (r < 0)
		log_error("%s", err);
	return r;
}

/* How the backend renders the policy. After the guard has begun: what it
 * undoes of a killed run must not be in the mounts. */
static int plan_renderings(const struct options *o, const struct host *h, enum backend backend,
			   struct attempt *a, struct report *rep)
{
	int r;
	if (backend == BACKEND_NONE)
		return 0;
	if (h->landlock_abi > 0) {
		/* In the namespace jail the mounts hide and protect; Landlock
		 * on top grants each tree whole. */
		r = landlock_plan(&a->p, h->landlock_abi, backend == BACKEND_NAMESPACES ? LANDLOCK_PLAN_NO_CARVE | LANDLOCK_PLAN_LIST_ROOT : 0,
				  &a->ll);
		if (r < 0) {
			log_error("cannot plan the Landlock rules: %s", strerror(-r));
			return r;
		}
	}
	if (backend == BACKEND_NAMESPACES)
		mount_plan(&a->p, &a->mounts);
	if (!a->bpf.filter) {
		r = plan_filter(o, h, backend, a);
		if (r < 0)
			return r;
	}
	if (!strv_contains(rep->supervises, "refused system calls"))
		strv_add(&rep->supervises, "refused system calls");
	if (backend == BACKEND_LANDLOCK && !strv_contains(rep->supervises, "connect")) {
		strv_add(&rep->supervises, "connect");
		strv_add(&rep->supervises, "bind");
		strv_add(&rep->supervises, "unix socket paths");
		if (a->p.net == NET_LOOPBACK)
			strv_add(&rep->supervises, "listen");
	}
	return 0;
}

static void explain(const struct attempt *a, enum backend backend, const char *why, const struct report *rep)
{
	const struct policy *p = &a->p;
	printf("workspace: %s\nbackend: %s (%s)\nnetwork: %s\nhome: %s%s\ntmp: %s\n", p->workspace,
	       backend_name(backend), why, net_mode_name(p->net), p->home,
	       p->keep_home ? " (kept, --home)" : " (fresh, removed after the run)", p->tmpdir);
	if (p->argv)
		printf("program: %s\n", p->program ? p->program : "(not found)");
	print_rules(stdout, p);
	if (backend == BACKEND_NAMESPACES)
		mount_plan_print(stdout, &a->mounts);
	if (backend != BACKEND_NONE) {
		if (a->ll.abi)
			landlock_plan_print(stdout, &a->ll);
		seccomp_plan_print(stdout, &a->sc);
	}
	print_env(stdout, p);
	print_report_lines(stdout, rep);
}

/* Before the run plans its mounts: a run whose stockade was killed is
 * undone here first. */
static int begin_guard(const struct policy *p, struct guard **ret, struct report *rep)
{
	struct guard_options go = {
		.workspace = p->workspace,
		.state_dir = p->state_dir,
		.user_home = p->user_home,
	};
	struct guard_report gr = { 0 };
	int r = guard_begin(&go, ret, &gr);
	say_guard_changes(&gr, rep);
	for (size_t i = 0; gr.unguarded && gr.unguarded[i]; i++) {
		_cleanup_free_ char *what = xasprintf("trust hand-off '%s'", gr.unguarded[i]);
		report_gap(rep, what, "over the guard's size cap: a change is quarantined but the old content cannot be restored");
		log_note("unenforced: %s: over the guard's size cap", what);
	}
	guard_report_free(&gr);
	if (r < 0)
		log_error("cannot keep the trust hand-offs of '%s': %s", p->workspace, strerror(-r));
	return r;
}

static int run(const struct options *o, unsigned long long start_us)
{
	struct report rep;
	report_init(&rep);
	struct attempt a = { 0 };
	struct run_cgroup cg = RUN_CGROUP_INIT;
	struct guard *guard = NULL;
	int status = 125;
	struct host h;
	host_probe(&h, HOST_CHEAP);

	const char *why;
	enum backend backend = choose_backend(o, &h, &why);
	bool may_fall_back = o->backend == BACKEND_AUTO && backend == BACKEND_NAMESPACES;

	for (;;) {
		if (backend == BACKEND_LANDLOCK && rep.fallback && h.landlock_abi == 0) {
			log_error("nothing on this host can confine the command: %s, and Landlock is not enforced here (%s)",
				  rep.fallback, strerrorname_np(h.landlock_err));
			log_hint("stockade doctor says what this host can enforce; --mode off runs the command without a jail, on purpose");
			status = 125;
			goto out;
		}
		if (refuse_unusable(backend, &h, why) < 0) {
			status = 125;
			goto out;
		}
		/* The landlock backend's command process is started first:
		 * its fork and its filter overlap the planning below. */
		if (backend != BACKEND_NAMESPACES && o->command == CMD_RUN) {
			if (backend == BACKEND_LANDLOCK && plan_filter(o, &h, backend, &a) < 0) {
				status = 125;
				goto out;
			}
			/* Only the landlock backend needs a cgroup to take
			 * everything down with it (the namespace jail has its pid
			 * namespace); made first, so that the command's process
			 * is born in it rather than moved there. */
			if (backend == BACKEND_LANDLOCK && !cg.dir && cgroup_create(&cg) == 0 && cgroup_watch(&cg) < 0)
				cgroup_release(&cg);
			int r = run_early_start(backend == BACKEND_LANDLOCK ? &a.bpf : NULL, &cg, &a.early);
			if (r < 0) {
				log_error("cannot fork: %s", strerror(-r));
				status = 125;
				goto out;
			}
		}
		if (plan_policy(o, backend, &a) < 0) {
			status = 125;
			goto out;
		}
		if (backend != BACKEND_NONE && o->command == CMD_RUN && !guard &&
		    begin_guard(&a.p, &guard, &rep) < 0) {
			status = 125;
			goto out;
		}
		if (plan_renderings(o, &h, backend, &a, &rep) < 0) {
			status = 125;
			goto out;
		}
		for (size_t i = 0; a.p.notes && a.p.notes[i]; i++)
			log_note("%s", a.p.notes[i]);

		fit_report(&h, &a.p, backend, cg.dir != NULL, &rep);

		if (o->command == CMD_EXPLAIN) {
			explain(&a, backend, why, &rep);
			status = 0;
			goto out;
		}
		if (!a.p.program) {
			int e = a.p.program_error;
			log_error("cannot run '%s': %s", a.p.argv[0], strerror(e));
			status = e == ENOENT ? 127 : 126;
			goto out;
		}
		if (o->mode == MODE_REQUIRED && rep.n_gaps) {
			for (size_t i = 0; i < rep.n_gaps; i++)
				log_error("unenforced here: %s: %s", rep.gaps[i].what, rep.gaps[i].why);
			log_error("refusing to run with --mode required: %zu part(s) of the policy are unenforced here",
				  rep.n_gaps);
			goto out;
		}
		if (backend != BACKEND_NONE)
			for (size_t i = 0; i < rep.n_gaps; i++)
				log_note("unenforced: %s: %s", rep.gaps[i].what, rep.gaps[i].why);
		log_info("backend %s (%s), network %s, %zu Landlock rules, %zu mounts", backend_name(backend), why,
			 net_mode_name(a.p.net), a.ll.n_rules, a.mounts.n_entries);

		if (backend == BACKEND_LANDLOCK) {
			_cleanup_free_ char *err = NULL;
			if (policy_populate_home(&a.p, &err) < 0) {
				log_error("%s", err);
				goto out;
			}
		}

		struct run_setup setup = {
			.p = &a.p,
			.backend = backend,
			.may_fall_back = may_fall_back,
			.jail = backend != BACKEND_NONE,
			.landlock = a.ll.abi ? &a.ll : NULL,
			.mounts = &a.mounts,
			.bpf = backend != BACKEND_NONE ? &a.bpf : NULL,
			.seccomp = &a.sc,
			.cgroup = &cg,
			.early = a.early,
			.start_us = start_us,
		};
		status = run_command(&setup, &rep);
		if (a.early) {
			run_early_release(a.early);
			a.early = NULL;
		}
		if (status != RUN_FALLBACK)
			break;
		/* The host refused the namespace jail: the landlock backend,
		 * said in one line and in the report. */
		log_note("the namespace jail is not available here (%s): using the landlock backend", rep.fallback);
		attempt_free(&a);
		report_reset_plan(&rep);
		backend = BACKEND_LANDLOCK;
		why = "fallback from namespaces";
		may_fall_back = false;
		status = 125;
	}

	if (guard) {
		struct guard_report gr = { 0 };
		int r = guard_end(guard, &gr);
		say_guard_changes(&gr, &rep);
		guard_report_free(&gr);
		if (r < 0)
			log_error("cannot undo changes to the trust hand-offs of '%s': %s", a.p.workspace, strerror(-r));
		guard_free(guard);
		guard = NULL;
	}
	if (status != 0 && rep.n_denials) {
		_cleanup_free_ char *line = report_denials_line(&rep);
		if (line)
			log_note("refused: %s", line);
	}

out:
	if (guard)
		guard_free(guard);
	cgroup_release(&cg);
	if (o->command != CMD_EXPLAIN && write_report(o, &rep) < 0 && status == 0)
		status = 125;
	attempt_free(&a);
	report_free(&rep);
	return status;
}

int main(int argc, char **argv)
{
	unsigned long long start = now_usec();
	struct options o;
	_cleanup_free_ char *err = NULL;
	if (cli_parse(argc, argv, &o, &err) < 0) {
		log_error("%s", err);
		log_hint("see stockade --help");
		options_free(&o);
		return 125;
	}
	log_verbosity = o.verbosity;

	int status = 0;
	switch (o.command) {
	case CMD_HELP:
		cli_usage(stdout);
		break;
	case CMD_VERSION:
		printf("stockade %s\n", STOCKADE_VERSION);
		break;
	case CMD_DOCTOR: {
		struct host h;
		host_probe(&h, HOST_ALL);
		if (doctor_print(&h, o.json, stdout) < 0)
			status = 125;
		host_free(&h);
		break;
	}
	case CMD_TRUST:
	case CMD_RUN:
	case CMD_EXPLAIN:
		if (refuse_unbuilt(&o) < 0) {
			status = 125;
			break;
		}
		status = run(&o, start);
		break;
	}
	options_free(&o);
	return status;
}
