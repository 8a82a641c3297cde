#include "jail/sbverbs.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "jail/explain-policy.h"
#include "jail/say-policy.h"
#include "lib/fs.h"
#include "lib/log.h"
#include "lib/path.h"
#include "lib/util.h"
#include "policy/env.h"
#include "seatbelt/seatbelt.h"

/* The run's own home and tmp: a folder made for the run in the caller's
 * TMPDIR (on macOS a per-user folder under /var/folders), removed after
 * it. Explain names the folder by its template: its name is chosen when
 * it is made. */
struct sb_places {
	char *run_dir;
	char *home;
	char *tmpdir;
	struct rule v[2];
	struct rule_list rules;	/* over v: the policy's places, until places_done */
	struct policy *policy;
	struct env env;
};

/* Part of p from now on (p->places), until places_done: pl must not move. */
static void places_for(struct policy *p, char *const *environ, const char *run_dir, struct sb_places *pl)
{
	*pl = (struct sb_places){ .run_dir = xstrdup(run_dir), .policy = p };
	pl->rules.v = pl->v;
	p->places = &pl->rules;
	pl->tmpdir = path_join(run_dir, "tmp");
	pl->home = p->home ? xstrdup(p->home) : path_join(run_dir, "home");
	pl->v[pl->rules.n++] = (struct rule){ .path = pl->tmpdir, .access = ACCESS_WRITE, .flags = RULE_FRESH,
					      .origin = (char *)"private tmp (TMPDIR)" };
	if (!p->home)
		pl->v[pl->rules.n++] = (struct rule){ .path = pl->home, .access = ACCESS_WRITE, .flags = RULE_FRESH,
						      .origin = (char *)"fresh home" };
	env_copy(&pl->env, &p->env);
	env_point_into_jail(&pl->env, pl->home, pl->tmpdir, p->cwd, p->env_decided);
}

static void places_done(struct sb_places *pl)
{
	if (pl->policy->places == &pl->rules)
		pl->policy->places = NULL;
	free(pl->run_dir);
	free(pl->home);
	free(pl->tmpdir);
	env_free(&pl->env);
}

static char *run_template(char *const *environ)
{
	const char *tmp = env_get(environ, "TMPDIR");
	_cleanup_free_ char *base = path_normalize(tmp && path_is_absolute(tmp) ? tmp : "/tmp");
	return path_join(base, "stockade-run-XXXXXX");
}

static int plan_or_say(const struct policy *p, struct seatbelt_plan *sp)
{
	int e = seatbelt_plan(p, sp);
	if (e == -EINVAL) {
		/* Its control characters escaped by the line itself (\n). */
		log_error("cannot write the path '%s' in a Seatbelt profile: it holds a control character", sp->bad_path);
		log_hint("SBPL has no spelling for it that sandbox-exec and the kernel agree on; rename it, or run elsewhere");
		return -EINVAL;
	}
	return e;
}

int sbverb_explain(struct policy *p, char *const *environ, const char *why)
{
	_cleanup_free_ char *tmpl = run_template(environ);
	struct sb_places pl;
	places_for(p, environ, tmpl, &pl);
	struct seatbelt_plan sp;
	int status = EXIT_STOCKADE;
	if (plan_or_say(p, &sp) < 0)
		goto out;
	struct report rep;
	report_init(&rep);
	seatbelt_describe(p, &rep);
	explain_print_head(stdout, p, BACKEND_SEATBELT, why, pl.home, pl.tmpdir);
	explain_print_rules(stdout, p);
	seatbelt_plan_print(stdout, &sp);
	explain_print_env(stdout, &pl.env);
	explain_print_report(stdout, &rep);
	report_free(&rep);
	status = fflush(stdout) == 0 ? 0 : EXIT_STOCKADE;
out:
	seatbelt_plan_free(&sp);
	places_done(&pl);
	return status;
}

int sbverb_doctor(bool json, FILE *f)
{
	struct policy p;
	policy_init(&p);
	struct report rep;
	report_init(&rep);
	seatbelt_describe(&p, &rep);
	bool present = access("/usr/bin/sandbox-exec", X_OK) == 0;
	if (json) {
		fprintf(f, "{\"backend\": \"seatbelt\", \"sandbox_exec\": %s, \"enforced\": [", present ? "true" : "false");
		for (size_t i = 0; rep.enforced[i]; i++) {
			fputs(i ? ", " : "", f);
			json_string(f, rep.enforced[i]);
		}
		fputs("], \"unenforced\": [", f);
		for (size_t i = 0; i < rep.n_gaps; i++) {
			fputs(i ? ", {\"what\": " : "{\"what\": ", f);
			json_string(f, rep.gaps[i].what);
			fputs(", \"why\": ", f);
			json_string(f, rep.gaps[i].why);
			fputs("}", f);
		}
		fputs("]}\n", f);
	} else {
		fprintf(f, "backend: seatbelt (%s)\n",
			present ? "/usr/bin/sandbox-exec runs an SBPL profile rendered from the policy"
				: "/usr/bin/sandbox-exec is missing: nothing can confine a command here");
		fputs("with the default policy (network loopback):\n", f);
		explain_print_report(f, &rep);
	}
	report_free(&rep);
	policy_free(&p);
	return present ? 0 : -ENOENT;
}

#ifdef __APPLE__
#include <dirent.h>

/* Removes what the run left in its folder, never following a symlink
 * out of it (the command could have made any). */
static void remove_at(int dfd, const char *name)
{
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return;
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	for (struct dirent *de; (de = readdir(d));)
		if (!streq(de->d_name, ".") && !streq(de->d_name, ".."))
			remove_at(dirfd(d), de->d_name);
	closedir(d);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

int sbverb_run(struct policy *p, char *const *environ, struct report *rep)
{
	_cleanup_free_ char *tmpl = run_template(environ);
	if (!mkdtemp(tmpl)) {
		log_error("cannot make the run's folder '%s': %s", tmpl, strerror(errno));
		return EXIT_STOCKADE;
	}
	/* The sandbox sees the path the kernel resolved: /var/folders is
	 * /private/var/folders. */
	_cleanup_free_ char *run_dir = NULL;
	int e = path_canonical(tmpl, &run_dir);
	struct sb_places pl;
	places_for(p, environ, e == 0 ? run_dir : tmpl, &pl);
	struct seatbelt_plan sp = { 0 };
	int status = EXIT_STOCKADE;
	if (mkdir(pl.tmpdir, 0700) < 0 || (!p->home && mkdir(pl.home, 0700) < 0)) {
		log_error("cannot make the run's home and tmp in '%s': %s", pl.run_dir, strerror(errno));
		goto out;
	}
	if (p->home && (e = mkdir_private(p->home, p->uid)) < 0) {
		log_error("cannot use --home '%s': %s", p->home, say_private_reason(-e, "not a private directory of yours"));
		goto out;
	}
	if (plan_or_say(p, &sp) < 0)
		goto out;
	seatbelt_describe(p, rep);
	int err = 0;
	const char *what = NULL;
	status = seatbelt_run(&sp, pl.run_dir, p->program, p->argv, pl.env.envp, &err, &what);
	if (what)
		log_error("cannot %s: %s", what, strerror(err));
	if (status < EXIT_STOCKADE || status > EXIT_NOT_FOUND) {
		rep->exited = true;
		rep->exit_code = status > 128 ? 0 : status;
		rep->signal = status > 128 ? status - 128 : 0;
	}
out:
	seatbelt_plan_free(&sp);
	{
		_cleanup_free_ char *parent = path_parent(pl.run_dir, NULL);
		const char *name = strrchr(pl.run_dir, '/') + 1;
		int pfd = parent ? open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
		if (pfd >= 0) {
			remove_at(pfd, name);
			close(pfd);
		}
	}
	places_done(&pl);
	return status;
}
#else
int sbverb_run(struct policy *p, char *const *environ, struct report *rep)
{
	rep->backend = backend_name(BACKEND_SEATBELT);
	rep->network = net_mode_name(p->net);
	report_gap(rep, "everything", "Seatbelt runs on macOS only: the command did not run");
	log_error("cannot run with --backend seatbelt: Seatbelt runs on macOS only (/usr/bin/sandbox-exec), and this is not macOS");
	log_hint("stockade explain --backend seatbelt prints the profile a Mac would run; here, --backend auto picks namespaces or landlock");
	return EXIT_STOCKADE;
}
#endif
