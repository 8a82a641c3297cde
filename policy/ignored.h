/* hide-ignored: the entries git ignores in the workspace, hidden. Which
 * entries those are is a fact the build is given (jail/ asks git, once,
 * outside the jail and before it: policy/build.h's policy_facts); what
 * to make of them is the policy's. */
#pragma once

#include <stddef.h>

#include "policy/policy.h"

/* Adds a hide rule for each entry of git's list (`git ls-files --others
 * --ignored --exclude-standard --directory -z`: NUL-separated, len
 * bytes), but a symlink and a toolchain's own tree (a virtualenv,
 * node_modules, __pycache__, a CACHEDIR.TAG cache, what the command's
 * program or a PATH folder lies in), and records what it hid and kept in
 * p->ignored. */
void policy_hide_ignored(struct policy *p, const char *list, size_t len);
