/* hide-ignored: what git ignores in the workspace, asked of git once,
 * outside the jail and before it, with hooks, fsmonitor and external
 * commands switched off, from /usr/bin or /bin (never the caller's PATH,
 * which may lead into the workspace), in an environment of its own. The
 * answer is a fact the policy's build is given (policy_facts); the build
 * hides what it lists (policy/ignored.h), and this says what it did. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "policy/policy.h"

/* git's answer, kept for the builds of one run (the [command] sections
 * and trust may build the policy more than once). */
struct ignored_answer {
	bool asked;
	char *workspace;
	int result;		/* 0, or 1: no working tree */
	char *out;
	size_t len;
};

/* policy_facts's ignored, with data an ignored_answer. */
int ignored_ask(void *data, const char *workspace, const char *user_home, const char **ret, size_t *ret_len);
void ignored_answer_free(struct ignored_answer *a);

/* What hide-ignored hid and kept (the notes), or that the workspace is
 * no working tree. */
struct report;
void ignored_say(const struct policy *p, struct report *rep);
