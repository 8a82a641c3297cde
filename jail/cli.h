/* The command line, parsed into options; nothing is resolved here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "policy/build.h"

enum command {
	CMD_RUN,
	CMD_DOCTOR,
	CMD_EXPLAIN,
	CMD_TRUST,
	CMD_QUARANTINE,
	CMD_WHY,
	CMD_HELP,
	CMD_VERSION,
};

struct options {
	enum command command;
	struct layer layer;	/* the command line, as the last layer of the policy */
	char *report;
	char *config;
	char *profile;
	bool hide_ignored;
	int verbosity;		/* -1 quiet, 0, 1 verbose */
	bool json;
	bool trust_list;	/* stockade trust --list */
	char *revoke;		/* stockade trust --revoke FILE */
	char **argv;		/* the command, NULL-terminated; may be empty */
	char *why_target;	/* stockade why TARGET */
	char *restore_as;	/* stockade quarantine restore ID --as PATH */
};

/* Parses argv; on a usage error returns -EINVAL with a message for the
 * user in *ret_error. */
int cli_parse(int argc, char **argv, struct options *o, char **ret_error);
void options_free(struct options *o);
void cli_usage(FILE *f);
