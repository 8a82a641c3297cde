/* The messages about building the policy (jail/say.h has the rest), in
 * a file of its own because macOS builds it too. */
#pragma once

#include "policy/build.h"

void say_policy_failure(const struct policy_failure *f);
#include "lib/util.h"
#include "policy/report.h"

/* The hide targets that did not exist, the credentials a rule of yours
 * lifted and the --publish that other hosts reach, one note each, said
 * once (say_note_once). */
void say_skipped(const struct policy *p, struct report *rep);

/* A note that comes of the host or the settings and would be the same
 * on every run (a hide target that does not exist, a part of the policy
 * this host leaves out, the backend auto falls back to): said once while
 * it stays the same (by its text, remembered in the state directory),
 * every time with -v, never with -q (which counts as said); always in the
 * report's notes. True when it was said now. */
bool say_note_once(const struct policy *p, struct report *rep, const char *fmt, ...) _printf_(3, 4);
/* The same, said once by key rather than by its whole text (a line with
 * counts in it, the same in what matters when its key is). */
bool say_note_once_keyed(const struct policy *p, struct report *rep, const char *key, const char *fmt, ...)
	_printf_(4, 5);
/* Why a directory is not private, for err (EPERM: mode or owner), or
 * strerror(err). */
const char *say_private_reason(int err, const char *what);
