/* Why an access is allowed or refused: the rule that governs it, where
 * that rule comes from, and the smallest change that would allow it.
 * `stockade why` prints it; the report's denials carry it. why_path reads
 * the policy and nothing else. */
#pragma once

#include <stdbool.h>

#include "policy/policy.h"

enum why_want {
	WANT_READ,
	WANT_WRITE,
};

struct why {
	bool allowed;
	const char *what;	/* what the rule does there: "hidden", "read-only", ... */
	char *rule;		/* the governing rule as explain prints it, or NULL: nothing grants it */
	char *source;		/* where it comes from */
	char *fix;		/* the option and the stockade.ini line that would allow it; NULL when
				 * allowed, or why nothing can */
	char *note;		/* a built-in grant that would have given it, not given, and why; or NULL */
};

/* A path the command wants to read or write (absolute, canonical where
 * it exists), under the policy and its places. */
void why_path(const struct policy *p, const char *path, enum why_want want, struct why *ret);
/* Its fix made to work as given, by a look at the filesystem (the one
 * part of why that reads more than the policy): a path not made yet
 * gets the deepest folder on its way that exists; what the user cannot
 * do outside the jail either gets no option; nor a --write stockade
 * refuses, of what holds its own state or itself. */
void why_fix_for_real(const struct policy *p, const char *path, enum why_want want, struct why *w);

/* A TCP connection to HOST:PORT ([v6]:PORT, a literal or localhost): what
 * the network mode says. -EINVAL when target cannot be read as one. */
int why_connect(const struct policy *p, const char *target, struct why *ret);

/* A connect to the Unix socket file at path (absolute; as given, and
 * canonical where it exists): allowed where --connect unix:PATH names it;
 * otherwise only to a socket the run itself binds there. */
void why_unix(const struct policy *p, const char *given, const char *path, struct why *ret);

void why_free(struct why *w);
