/* The command line, parsed into options; nothing is resolved here. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "policy/env.h"
#include "policy/policy.h"

enum command {
	CMD_RUN,
	CMD_DOCTOR,
	CMD_EXPLAIN,
	CMD_TRUST,
	CMD_HELP,
	CMD_VERSION,
};

struct cli_rule {
	char *path;		/* as given */
	enum access access;
	const char *option;	/* "--read", ... */
};

struct options {
	enum command command;
	char *workspace;
	struct cli_rule *rules;
	size_t n_rules;
	enum net_mode net;
	bool net_given;
	enum backend backend;
	enum run_mode mode;
	struct env_op *env_ops;
	size_t n_env_ops;
	char *home;
	char *report;
	char *config;
	char *profile;
	bool hide_ignored;
	int verbosity;		/* -1 quiet, 0, 1 verbose */
	bool json;
	char **argv;		/* the command, NULL-terminated; may be empty */
};

/* Parses argv; on a usage error returns -EINVAL with a message for the
 * user in *ret_error. */
int cli_parse(int argc, char **argv, struct options *o, char **ret_error);
void options_free(struct options *o);
void cli_usage(FILE *f);
