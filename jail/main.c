/* stockade: the verbs. A run builds its policy first, before any process
 * of it exists, then picks the backend the host fits, and hands both to
 * run.c (or explain.c). */
#include <malloc.h>
#include <stdio.h>
#include <sys/stat.h>

#include "jail/cli.h"
#include "jail/config.h"
#include "jail/explain.h"
#include "jail/fit.h"
#include "jail/ignored.h"
#include "jail/keeper.h"
#include "jail/quarantine.h"
#include "jail/reported.h"
#include "jail/run.h"
#include "jail/say.h"
#include "jail/session.h"
#include "jail/sbverbs.h"
#include "jail/why.h"
#include "lib/log.h"
#include "lib/phase.h"
#include "lib/util.h"
#include "policy/build.h"
#include "policy/carried.h"
#include "policy/report.h"

extern char **environ;

/* A backend this host cannot use at all: never tried. */
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

/* The trust hand-offs as the guard's index knows them (nothing begun,
 * nothing written), into the policy, for explain. */
static int add_listed_handoffs(struct policy *p)
{
	struct guard_options areas[RUN_GUARD_AREAS];
	size_t n = run_guard_areas(p, NULL, areas);
	for (size_t i = 0; i < n; i++) {
		_cleanup_strv_ char **handoffs = NULL;
		int e = guard_list_handoffs(&areas[i], &handoffs);
		if (e < 0) {
			log_error("cannot look for the trust hand-offs of '%s': %s", areas[i].workspace, strerror(-e));
			return e;
		}
		policy_add_handoffs(p, areas[i].workspace, handoffs);
	}
	return 0;
}

static int run_jailed(const struct options *o, unsigned long long start_us, struct report *rep, struct holder *holder)
{
	/* 1. The policy, from its layers: the built-in defaults, the
	 *    settings files (the user's, the workspace's, the profile, the
	 *    matching [command] sections), then the command line. Nothing
	 *    is made and no process started. */
	/* Inside a run, why answers from the run's own policy. */
	const char *carried = o->command == CMD_WHY ? getenv(POLICY_CARRIED_ENV) : NULL;
	if (carried && *carried)
		return why_in_run(carried, o->why_target);
	struct policy p;
	struct run_config rc;
	/* git's list of what it ignores, asked once for the run's builds */
	_cleanup_(ignored_answer_free) struct ignored_answer ignored = { 0 };
	const struct policy_facts facts = { .ignored = ignored_ask, .data = &ignored };
	int e = config_policy(o, environ, &facts, &rc, &p);
	phase_mark("config_policy");
	if (e) {
		config_free(&rc);
		return e;
	}
	ignored_say(&p, rep);
	say_skipped(&p, rep);
	phase_mark("ignored");
	if (o->command == CMD_WHY) {
		/* With the places of the backend a run would get: its fresh
		 * home and tmp, as inside the run. */
		struct host wh;
		host_probe(&wh, HOST_CHEAP);
		const char *ignored_why = NULL;
		struct places pl;
		places_plan(&p, fit_choose(&p, &wh, &ignored_why), environ, &pl);
		int st = add_listed_handoffs(&p) < 0 ? EXIT_STOCKADE : why_verb(&p, o->why_target);
		places_remove(&pl);
		policy_free(&p);
		config_free(&rc);
		return st;
	}

	/* 2. What this host can enforce, and the backend that fits. */
	struct host h;
	host_probe(&h, HOST_CHEAP);
	phase_mark("host_probe");
	struct run r = {
		.p = &p,
		.h = &h,
		.environ = environ,
		.start_us = start_us,
		.rep = rep,
		.holder = holder,
		.rc = &rc,
	};
	r.backend = fit_choose(&p, &h, &r.why);
	r.may_fall_back = p.backend == BACKEND_AUTO && r.backend == BACKEND_NAMESPACES;

	int status = EXIT_STOCKADE;
	/* 3. Seatbelt: its profile printed on any system, with the trust
	 *    hand-offs as the guard's index knows them (the profile refuses
	 *    writes to each, existing or not); a run on macOS only (the
	 *    macOS build has its own main). */
	if (r.backend == BACKEND_SEATBELT) {
		if (add_listed_handoffs(&p) < 0)
			goto out;
		if (o->command == CMD_EXPLAIN) {
			status = sbverb_explain(&p, environ, r.why);
		} else if (!p.program) {
			say_cannot_run(&p, o);
			status = exit_exec_failed(p.program_error);
		} else {
			status = sbverb_run(&p, environ, rep);
		}
		goto out;
	}
	/* 3. explain: the plans, printed, with the trust hand-offs as the
	 *    guard's index knows them. */
	if (o->command == CMD_EXPLAIN) {
		if (add_listed_handoffs(&p) < 0)
			goto out;
		if (refuse_unusable(r.backend, &h, r.why) < 0) {
			status = EXIT_STOCKADE;
			goto out;
		}
		/* the settings files first, then the plans */
		r.explain_detail = o->json ? 2 : o->verbosity > 0 ? 1 : 0;
		if (!o->json)
			config_print(stdout, &rc, o, &p);
		status = explain(&r);
		goto out;
	}
	/* 4. A program that cannot be found or run is said before anything
	 *    starts, with the status a shell would give. */
	if (!p.program && !holder) {
		say_cannot_run(&p, o);
		status = exit_exec_failed(p.program_error);
		goto out;
	}
	if (refuse_unusable(r.backend, &h, r.why) < 0)
		goto out;
	/* 4b. The namespace jail binds the hand-offs that exist read-only:
	 *     those of the guard's baseline, begun here for it (the landlock
	 *     backend begins it later, with no use for them before). */
	if (r.backend == BACKEND_NAMESPACES) {
		if (run_begin_guard(&r) < 0) {
			status = run_end_guard(&r, EXIT_STOCKADE);
			goto out;
		}
		struct guard_options areas[RUN_GUARD_AREAS];
		run_guard_areas(&p, NULL, areas);
		for (size_t i = 0; i < r.n_guards; i++)
			policy_add_handoffs(&p, areas[i].workspace, guard_handoffs(r.guards[i]));
		phase_mark("guard_begin");
	}
	/* 5. The run, on its backend; the guard ended. */
	status = run_command(&r);
	phase_mark("run_command");
	/* 6. What was refused, in one line when the command failed. */
	if (status != 0 && rep->n_denials && !holder) {
		_cleanup_free_ char *line = report_denials_line(rep);
		if (line)
			log_warn("refused: %s", line);
	}
	/* and what its words name that the jail cannot read, which it does
	 * not see refused (ENOENT, or Landlock's EACCES); not where the
	 * jail failed before the command ran */
	if (status != 0 && rep->exited && !holder) {
		_cleanup_strv_ char **named = say_unreadable_named(&p, rep, p.argv, p.cwd, NULL);
		for (size_t i = 0; named[i]; i++)
			log_hint("%s", named[i]);
	}
out:
	host_free(&h);
	policy_free(&p);
	config_free(&rc);
	phase_mark("free");
	return status;
}

struct jailed {
	const struct options *o;
	unsigned long long start_us;
	struct holder *holder;
};

static int jailed(void *data, struct report *rep)
{
	const struct jailed *j = data;
	return run_jailed(j->o, j->start_us, rep, j->holder);
}

/* A run, with its report (jail/reported.h); a session's holder's run,
 * whose command is its zygote. */
static int run_held(const struct options *o, unsigned long long start_us, struct holder *holder)
{
	struct jailed j = { o, start_us, holder };
	bool reported = o->report && o->command != CMD_EXPLAIN && o->command != CMD_WHY;
	return run_reported(reported ? o->report : NULL, jailed, &j);
}

static int run(const struct options *o, unsigned long long start_us)
{
	return run_held(o, start_us, NULL);
}

int main(int argc, char **argv)
{
	phase_start("exec");
	/* The heap is never given back before the end: a run's directory
	 * listings (32 KiB each) and plans come and go, and memory handed
	 * back is faulted in again when it is asked for anew (each fault
	 * some 11 us on a host whose page faults are dear). */
	(void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
	unsigned long long start = now_usec();
	struct options o;
	_cleanup_free_ char *err = NULL;
	if (cli_parse(argc, argv, &o, &err) < 0) {
		log_error("%s", err);
		log_hint("%s", o.usage_hint ? o.usage_hint : "see stockade --help");
		options_free(&o);
		return EXIT_STOCKADE;
	}
	log_verbosity = o.verbosity;
	phase_mark("cli");

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
			status = EXIT_STOCKADE;
		host_free(&h);
		break;
	}
	case CMD_QUARANTINE: {
		/* what the guard set aside: only the state directory counts */
		_cleanup_free_ char *state = NULL;
		struct policy_failure pf;
		if (policy_find_state_dir(environ, &state, &pf) < 0) {
			say_policy_failure(&pf);
			policy_failure_free(&pf);
			status = EXIT_STOCKADE;
			break;
		}
		status = quarantine_verb(state, o.argv, o.restore_as);
		break;
	}
	case CMD_TRUST:
		status = config_trust_verb(&o, environ);
		break;
	case CMD_SESSION_START:
	case CMD_SESSION_EXEC:
	case CMD_SESSION_LIST:
	case CMD_SESSION_STOP:
		status = session_verb(&o, start, run_held);
		break;
	case CMD_RUN:
	case CMD_EXPLAIN:
	case CMD_WHY:
		/* --backend seatbelt: explain prints its profile on any system;
		 * a run is refused off macOS (run_jailed) */
		status = run(&o, start);
		break;
	}
	options_free(&o);
	keeper_reap();
	phase_mark("main_end");
	return status;
}
