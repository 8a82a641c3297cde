/* A verb's run with its report: --report opened before anything is made
 * or started (an unwritable one is refused, 125, with nothing run), what
 * stockade says kept in it, and the report written through that
 * descriptor at the end, whatever the command did to the path meanwhile.
 * Linux and macOS alike. */
#pragma once

#include <stdbool.h>

#include "jail/cli.h"
#include "policy/report.h"

/* Runs fn with a report; path: --report's, or NULL. Returns fn's status,
 * or 125 when the report cannot be opened (said). */
int run_reported(const char *path, int (*fn)(void *data, struct report *rep), void *data);
