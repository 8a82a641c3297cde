/* Messages to the user, made at the top: "stockade: <action> '<object>':
 * <reason>", lowercase, no full stop; a second line may start "hint:". */
#pragma once

#include "lib/util.h"

extern int log_verbosity;	/* -1 quiet, 0 normal, 1 verbose */

void log_error(const char *fmt, ...) _printf_(1, 2);
void log_hint(const char *fmt, ...) _printf_(1, 2);
/* Said even with -q, and not an error: what the user must see. */
void log_warn(const char *fmt, ...) _printf_(1, 2);
/* Said unless -q. */
void log_note(const char *fmt, ...) _printf_(1, 2);
/* Said with -v. */
void log_info(const char *fmt, ...) _printf_(1, 2);

/* Every error and hint line, as said (without its newline), also handed
 * to fn; NULL stops it. */
void log_tap_set(void (*fn)(const char *line, void *data), void *data);
