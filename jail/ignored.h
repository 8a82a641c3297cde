/* hide-ignored: the entries git ignores in the workspace, hidden. git is
 * asked once, outside the jail and before it, with hooks, fsmonitor and
 * external commands switched off, from /usr/bin or /bin (never the
 * caller's PATH, which may lead into the workspace), in an environment
 * of its own. */
#pragma once

#include "policy/policy.h"

/* Adds a hide rule for each ignored entry (an ignored directory is one
 * entry) when p->hide_ignored. 0, or -errno once said; a workspace that
 * is not in a git working tree hides nothing, with a note. */
struct report;
int ignored_hide(struct policy *p, struct report *rep);
