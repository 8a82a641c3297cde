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
	CMD_SESSION_START,
	CMD_SESSION_EXEC,	/* session exec ID -- COMMAND, or --session ID -- COMMAND */
	CMD_SESSION_LIST,
	CMD_SESSION_STOP,
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
	char *session_id;	/* session exec and stop: the session; --session ID */
	char *session_name;	/* session start --name NAME */
	unsigned idle_s;	/* session start --idle: seconds, 0 never */
	/* session exec: an option other than -q, -v, --report, --env NAME=VALUE,
	 * --unset, and what narrows (--hide, --read, --net: the holder checks
	 * that they do), which only the session's start may give, with its
	 * value (NULL: none) */
	char *session_refused;
	char *usage_hint;	/* a usage error's own fix (NULL: see --help) */
	/* A run whose command is a word of stockade's own (session, doctor,
	 * why...) after options: the line with that word first, as it
	 * works, for the hint should no program of that name be found. */
	char *verb_first;
	char *restore_as;	/* stockade quarantine restore ID --as PATH */
};

/* "30m", "2h", "90s", "600" (seconds), "0" (never). */
int session_parse_idle(const char *s, unsigned *ret);
/* The default idle timeout of a session. */
#define SESSION_IDLE_DEFAULT (60 * 60)

/* Parses argv; on a usage error returns -EINVAL with a message for the
 * user in *ret_error. */
int cli_parse(int argc, char **argv, struct options *o, char **ret_error);
void options_free(struct options *o);
void cli_usage(FILE *f);
