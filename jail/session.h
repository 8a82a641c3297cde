/* stockade session start | exec | list | stop, and --session ID
 * (stockade.1, SESSIONS). start forks the holder (holder.h), which builds
 * the jail as a run does and serves the session's control socket; exec is
 * a client of that socket that hands over its own descriptors, relays a
 * pty where its stdin is a terminal, forwards its signals and ends with
 * the command's status. */
#pragma once

#include "jail/cli.h"

struct holder;

/* How `session start` builds the jail: main.c's run, with the holder. */
typedef int (*session_run_fn)(const struct options *o, unsigned long long start_us, struct holder *h);

int session_verb(const struct options *o, unsigned long long start_us, session_run_fn run);
