/* Seatbelt: the policy rendered as an SBPL profile for macOS's
 * sandbox-exec(1), and the short run of it there. Rendering is pure and
 * runs on any system (stockade explain --backend seatbelt); running is
 * built on macOS only.
 *
 * The profile denies by default. Each path rule, the backend's own
 * places and the base's path grants (seatbelt_base_rules) become allow
 * and deny lines ordered shallow to deep, and on one path weaker before
 * stronger, so that under SBPL's last-match-wins the deepest rule decides
 * as policy_allows_with() does. Every path is written in each spelling
 * macOS has for it (/tmp and /private/tmp, /var, /etc). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "policy/policy.h"
#include "policy/report.h"

struct seatbelt_plan {
	char *profile;		/* the SBPL text */
	/* The rules rendered beside the policy's: its places, then the
	 * base's own path grants. policy_allows() of the policy with these
	 * for its places is what the profile must answer. */
	struct rule *rules;
	size_t n_rules;
	char *bad_path;		/* on -EINVAL: the path SBPL cannot express */
};

/* Renders p (with its places: the fresh home and tmp) as a
 * profile. -EINVAL when a path holds a control character: the path is in
 * ret->bad_path, and no profile is made (a rule is never dropped). */
int seatbelt_plan(const struct policy *p, struct seatbelt_plan *ret);
void seatbelt_plan_free(struct seatbelt_plan *pl);

/* The macOS spellings of path, besides itself: "/private/tmp/x" for
 * "/tmp/x" and the other way round. Returns how many (0 or 1) went in
 * ret[0], which the caller frees. */
size_t seatbelt_other_spelling(const char *path, char **ret);

/* A string as SBPL reads it: quoted, with '"' and '\' escaped. -EINVAL
 * for a control character. */
int seatbelt_quote(const char *s, char **ret);

/* What a run under sandbox-exec enforces and leaves out. */
void seatbelt_describe(const struct policy *p, struct report *rep);

/* explain's part: the profile, as sandbox-exec would get it. */
void seatbelt_plan_print(FILE *f, const struct seatbelt_plan *pl);

#ifdef __APPLE__
/* On macOS: writes the profile to a file of the run's own and runs argv
 * under /usr/bin/sandbox-exec with envp, waits for it, kills what is left
 * in its process group, and returns the exit status stockade ends with
 * (the command's, 128+N, or 125/126/127 with a message said by the
 * caller from *ret_err and *ret_what). */
int seatbelt_run(const struct seatbelt_plan *pl, const char *run_dir, const char *program, char *const *argv,
		 char *const *envp, int *ret_err, const char **ret_what);
#endif
