/* The messages about building the policy (jail/say.h has the rest), in
 * a file of its own because macOS builds it too. */
#pragma once

#include "policy/build.h"

void say_policy_failure(const struct policy_failure *f);
/* The hide targets that did not exist, one note each. */
void say_skipped(const struct policy *p);
/* Why a directory is not private, for err (EPERM: mode or owner), or
 * strerror(err). */
const char *say_private_reason(int err, const char *what);
