/* A run's settings files: found, read, trusted or not, turned into the
 * layers of its policy in their order (the user's file, the workspace's
 * or --config, the profile, the matching [command] sections, the command
 * line), and the policy built from them; the verb stockade trust. */
#pragma once

#include <stdio.h>

#include "conf/conf.h"
#include "jail/cli.h"
#include "policy/build.h"

struct run_config {
	struct conf_set files;
	struct conf_matches matches;
	char *state_dir;
	/* what the builds are given (policy_facts), the caller's; NULL: none */
	const struct policy_facts *facts;
};

/* Builds p from the files and the command line, with the facts given
 * (NULL: none). 0, or the exit status (125) once what failed has been
 * said; p is then freed. */
int config_policy(const struct options *o, char *const *environ, const struct policy_facts *facts,
		  struct run_config *rc, struct policy *p);
void config_free(struct run_config *rc);

/* A session's command (argv, its caller's environment and PATH after
 * the session's scrub, its cwd): the [command] sections of the session's
 * files that match it, as layers (which point into rc: free each with
 * layer_free, and the array). Matched as a run's are, against the
 * session's policy p. */
int config_exec_layers(const struct run_config *rc, char *const *argv, char *const *caller, const char *final_path,
		       const char *cwd, const struct policy *p, struct layer **ret, size_t *ret_n);

/* For explain: the files read and whether each is trusted, the sections
 * taken, the [command] sections and why each matched or did not, and
 * where the settings came from. */
void config_print(FILE *f, const struct run_config *rc, const struct options *o, const struct policy *p);

/* stockade trust [FILE] | --list | --revoke FILE: the exit status. */
int config_trust_verb(const struct options *o, char *const *environ);
