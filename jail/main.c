/* stockade: the command line, the order of operations, and every message
 * the user sees. */
#include <stdio.h>
#include <sys/stat.h>

#include "jail/build.h"
#include "jail/cgroup.h"
#include "jail/cli.h"
#include "jail/fit.h"
#include "jail/guard.h"
#include "jail/log.h"
#include "jail/policy.h"
#include "jail/report.h"
#include "jail/run.h"
#include "jail/seccomp.h"
#include "jail/util.h"
#include "landlock/landlock.h"

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
	else if (o->backend == BACKEND_NAMESPACES)
		what = "--backend namespaces: the namespace jail is not built yet";
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

static int run(const struct options *o, unsigned long long start_us)
{
	struct report rep;
	report_init(&rep);
	struct policy p;
	_cleanup_free_ char *err = NULL;
	int status = 125;
	struct landlock_plan ll = { 0 };
	struct seccomp_plan sc = { 0 };
	struct sock_fprog bpf = { 0 };
	struct run_cgroup cg = RUN_CGROUP_INIT;
	struct guard *guard = NULL;
	struct host h;
	host_probe(&h, HOST_CHEAP);

	int r = policy_build(o, environ, &p, &err);
	if (r < 0) {
		log_error("%s", err);
		goto out;
	}
	for (size_t i = 0; p.notes && p.notes[i]; i++)
		log_note("%s", p.notes[i]);

	enum backend backend = o->backend;
	const char *why = "chosen with --backend";
	if (o->mode == MODE_OFF) {
		backend = BACKEND_NONE;
		why = "--mode off";
	} else if (backend == BACKEND_AUTO) {
		backend = fit_auto(&h, &why);
		if (backend == BACKEND_NONE) {
			log_error("nothing on this host can confine the command: %s", why);
			log_hint("stockade doctor says what this host can enforce; --mode off runs the command without a jail, on purpose");
			goto out;
		}
	} else if (backend == BACKEND_LANDLOCK && h.landlock_abi == 0) {
		log_error("cannot use --backend landlock: Landlock is not enforced here (%s)",
			  strerrorname_np(h.landlock_err));
		log_hint("boot with lsm=...,landlock");
		goto out;
	}
	if (backend == BACKEND_LANDLOCK && p.net == NET_LOOPBACK) {
		log_error("cannot give --net loopback on the landlock backend yet: the connect supervisor is not built");
		log_hint("pass --net off (no network) or --net on (the host's network)");
		goto out;
	}

	if (backend != BACKEND_NONE) {
		if (cgroup_create(&cg) == 0 && cgroup_watch(&cg) < 0)
			cgroup_release(&cg);
	}
	fit_report(&h, &p, backend, cg.dir != NULL, &rep);

	if (backend != BACKEND_NONE) {
		r = landlock_plan(&p, h.landlock_abi, 0, &ll);
		if (r < 0) {
			log_error("cannot plan the Landlock rules: %s", strerror(-r));
			goto out;
		}
		seccomp_plan(backend, p.net, h.landlock_abi, &sc);
		r = seccomp_build(&sc, &bpf);
		if (r < 0) {
			log_error("cannot build the seccomp filter: %s", strerror(-r));
			goto out;
		}
		strv_add(&rep.supervises, "refused system calls");
	}

	if (o->command == CMD_EXPLAIN) {
		printf("workspace: %s\nbackend: %s (%s)\nnetwork: %s\nhome: %s%s\ntmp: %s\n", p.workspace,
		       backend_name(backend), why, net_mode_name(p.net), p.home,
		       p.keep_home ? " (kept, --home)" : " (fresh, removed after the run)", p.tmpdir);
		if (p.argv)
			printf("program: %s\n", p.program ? p.program : "(not found)");
		print_rules(stdout, &p);
		if (backend != BACKEND_NONE) {
			landlock_plan_print(stdout, &ll);
			seccomp_plan_print(stdout, &sc);
		}
		print_env(stdout, &p);
		print_report_lines(stdout, &rep);
		status = 0;
		goto out;
	}

	if (!p.program) {
		int e = p.program_error;
		log_error("cannot run '%s': %s", p.argv[0], strerror(e));
		status = e == ENOENT ? 127 : 126;
		goto out;
	}

	for (size_t i = 0; i < rep.n_gaps; i++) {
		if (o->mode == MODE_REQUIRED)
			log_error("unenforced here: %s: %s", rep.gaps[i].what, rep.gaps[i].why);
		else if (backend != BACKEND_NONE)
			log_note("unenforced: %s: %s", rep.gaps[i].what, rep.gaps[i].why);
	}
	if (o->mode == MODE_REQUIRED && rep.n_gaps) {
		log_error("refusing to run with --mode required: %zu part(s) of the policy are unenforced here", rep.n_gaps);
		goto out;
	}
	log_info("backend %s (%s), network %s, %zu Landlock rules", backend_name(backend), why,
		 net_mode_name(p.net), ll.n_rules);

	struct guard_options go = {
		.workspace = p.workspace,
		.state_dir = p.state_dir,
		.user_home = p.user_home,
	};
	struct guard_report gr = { 0 };
	if (backend != BACKEND_NONE) {
		r = guard_begin(&go, &guard, &gr);
		say_guard_changes(&gr, &rep);
		for (size_t i = 0; gr.unguarded && gr.unguarded[i]; i++) {
			_cleanup_free_ char *what = xasprintf("trust hand-off '%s'", gr.unguarded[i]);
			report_gap(&rep, what, "over the guard's size cap: a change is quarantined but the old content cannot be restored");
			log_note("unenforced: %s: over the guard's size cap", what);
		}
		guard_report_free(&gr);
		if (r < 0) {
			log_error("cannot keep the trust hand-offs of '%s': %s", p.workspace, strerror(-r));
			goto out;
		}
		r = policy_populate_home(&p, &err);
		if (r < 0) {
			log_error("%s", err);
			goto out;
		}
	}

	struct run_setup setup = {
		.p = &p,
		.jail = backend != BACKEND_NONE,
		.landlock = backend != BACKEND_NONE ? &ll : NULL,
		.bpf = backend != BACKEND_NONE ? &bpf : NULL,
		.seccomp = &sc,
		.cgroup = &cg,
		.start_us = start_us,
	};
	status = run_command(&setup, &rep);

	if (guard) {
		r = guard_end(guard, &gr);
		say_guard_changes(&gr, &rep);
		guard_report_free(&gr);
		if (r < 0)
			log_error("cannot undo changes to the trust hand-offs of '%s': %s", p.workspace, strerror(-r));
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
	seccomp_bpf_free(&bpf);
	seccomp_plan_free(&sc);
	landlock_plan_free(&ll);
	if (o->command != CMD_EXPLAIN && write_report(o, &rep) < 0 && status == 0)
		status = 125;
	policy_remove_run_dir(&p);
	policy_free(&p);
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
