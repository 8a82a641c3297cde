/* stockade on macOS: the verbs with the seatbelt backend. The policy is
 * built as on Linux (policy/), then rendered as an SBPL profile and run
 * under sandbox-exec (jail/sbverbs.c). What Linux alone has (the
 * namespace jail, Landlock, seccomp, the guard's undo, the quarantine)
 * is refused here by name, never ignored. */
#include <stdio.h>

#include "jail/cli.h"
#include "jail/config.h"
#include "jail/reported.h"
#include "jail/say-policy.h"
#include "jail/sbverbs.h"
#include "jail/why.h"
#include "lib/log.h"
#include "lib/util.h"
#include "policy/build.h"
#include "handoff/handoff.h"
#include "policy/report.h"

extern char **environ;

static const char *unbuilt(const struct options *o)
{
	if (o->command == CMD_SESSION_START || o->command == CMD_SESSION_EXEC || o->command == CMD_SESSION_LIST ||
	    o->command == CMD_SESSION_STOP)
		return "sessions are not built on macOS yet: each command runs in a jail of its own";
	if (o->command == CMD_QUARANTINE)
		return "'stockade quarantine': the guard does not run on macOS, so nothing is ever set aside";
	if (o->hide_ignored)
		return "--hide-ignored is not built on macOS yet";
	if (o->layer.backend_set && o->layer.backend != BACKEND_SEATBELT && o->layer.backend != BACKEND_AUTO)
		return "--backend namespaces and landlock are Linux's: on macOS the backend is seatbelt";
	return NULL;
}

/* The trust hand-offs of the workspace, and of a git directory around
 * it, as they are now (existing or not), looked for here: the guard and
 * its index are Linux's. The profile refuses writes to each. */
static int add_handoffs(struct policy *p)
{
	const char *areas[] = { p->workspace, p->outer_gitdir, p->outer_commondir };
	for (size_t i = 0; i < ARRAY_SIZE(areas); i++) {
		if (!areas[i] || (i == 2 && p->outer_gitdir && streq(areas[i], p->outer_gitdir)))
			continue;
		struct handoff_scan scan = { .workspace = areas[i], .user_home = p->user_home, .gitdir_only = i > 0 };
		_cleanup_strv_ char **rel = NULL;
		int e = handoffs_list(&scan, &rel);
		if (e < 0) {
			log_error("cannot look for the trust hand-offs of '%s': %s", areas[i], strerror(-e));
			return e;
		}
		policy_add_handoffs(p, areas[i], rel);
	}
	return 0;
}

static int run_sandboxed(const struct options *o, struct report *rep)
{
	struct policy p;
	struct run_config rc;
	int status = EXIT_STOCKADE;
	/* the same layers as on Linux: the defaults, the settings files
	 * (stockade.ini, trusted where they widen), the command line */
	int e = config_policy(o, environ, NULL, &rc, &p);
	if (e) {
		config_free(&rc);
		return e;
	}
	say_skipped(&p, rep);
	if (p.hide_ignored) {
		_cleanup_free_ char *at = source_text(&p.hide_ignored_source);
		log_error("cannot hide what git ignores (%s): hide-ignored is not built on macOS yet", at);
	} else if (add_handoffs(&p) < 0) {
		/* said */
	} else if (o->command == CMD_WHY) {
		status = why_verb(&p, o->why_target);
	} else if (p.mode == MODE_OFF) {
		log_error("--mode off is not built on macOS yet");
	} else if (o->command == CMD_EXPLAIN) {
		status = sbverb_explain(&p, environ, "the backend of macOS");
	} else if (!p.program) {
		log_error("cannot run '%s': %s", p.argv[0], strerror(p.program_error));
		status = exit_exec_failed(p.program_error);
	} else {
		status = sbverb_run(&p, environ, rep);
	}
	policy_free(&p);
	config_free(&rc);
	return status;
}

static int sandboxed(void *data, struct report *rep)
{
	return run_sandboxed(data, rep);
}

/* As on Linux: with its report (jail/reported.h). */
static int run(const struct options *o)
{
	return run_reported(o->report && o->command == CMD_RUN ? o->report : NULL, sandboxed, (void *)o);
}

int main(int argc, char **argv)
{
	struct options o;
	_cleanup_free_ char *err = NULL;
	if (cli_parse(argc, argv, &o, &err) < 0) {
		log_error("%s", err);
		log_hint("%s", o.usage_hint ? o.usage_hint : "see stockade --help");
		options_free(&o);
		return EXIT_STOCKADE;
	}
	log_verbosity = o.verbosity;
	int status = 0;
	const char *no = unbuilt(&o);
	if (no && o.command != CMD_HELP && o.command != CMD_VERSION && o.command != CMD_DOCTOR) {
		log_error("%s", no);
		status = EXIT_STOCKADE;
	} else {
		switch (o.command) {
		case CMD_HELP:
			cli_usage(stdout);
			break;
		case CMD_VERSION:
			printf("stockade %s\n", STOCKADE_VERSION);
			break;
		case CMD_DOCTOR:
			status = sbverb_doctor(o.json, stdout) < 0 ? EXIT_STOCKADE : 0;
			break;
		case CMD_TRUST:
			status = config_trust_verb(&o, environ);
			break;
		case CMD_QUARANTINE:
		case CMD_SESSION_START:
		case CMD_SESSION_EXEC:
		case CMD_SESSION_LIST:
		case CMD_SESSION_STOP:
			status = EXIT_STOCKADE;
			break;
		case CMD_RUN:
		case CMD_EXPLAIN:
		case CMD_WHY:
			status = run(&o);
			break;
		}
	}
	options_free(&o);
	return status;
}
