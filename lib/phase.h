/* Phase marks: where a start-up's time goes, for make bench alone.
 *
 * Built with -DSTOCKADE_PHASES (make bench builds such a stockade beside
 * the real one, as $(BUILD)/tools/stockade-phases), phase_mark(name)
 * writes one line, "NAME NANOSECONDS\n" on CLOCK_MONOTONIC, to descriptor
 * PHASE_FD, which the bench opens on a file before it starts stockade
 * (tests/helpers/benchrun -p). A name "who:what" is a mark of another
 * process of the run (the jail's init, the command's process, the
 * keeper); a plain name is stockade's own. Each mark ends the phase
 * named: the time since the mark before it in the same process.
 *
 * In every other build phase_mark is nothing at all: the stockade a user
 * runs has no such descriptor, no switch and no cost. */
#pragma once

#ifdef STOCKADE_PHASES
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* High enough to be clear of what stockade opens itself; under the usual
 * RLIMIT_NOFILE of 1024. */
#define PHASE_FD 1000

static inline void phase_mark(const char *name)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	unsigned long long ns = (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
	/* No stdio: marks are made between fork and exec, and past the
	 * seccomp filter (write is on its allowlist). */
	char line[96], digits[24];
	size_t n = strnlen(name, 64), d = 0;
	memcpy(line, name, n);
	line[n++] = ' ';
	do
		digits[d++] = (char)('0' + ns % 10);
	while ((ns /= 10) && d < sizeof(digits));
	while (d)
		line[n++] = digits[--d];
	line[n++] = '\n';
	/* One write, so that the run's processes' lines never mix (the file
	 * is opened O_APPEND). A descriptor the bench did not give: EBADF,
	 * nothing done. */
	(void)!write(PHASE_FD, line, n);
}

/* The first mark, at main: the phase from the bench's fork to it (exec,
 * the loader, libc's start). The descriptor is closed at every exec from
 * here on (the guard's git, the command): only stockade's processes mark. */
static inline void phase_start(const char *name)
{
	(void)fcntl(PHASE_FD, F_SETFD, FD_CLOEXEC);
	phase_mark(name);
}
#else
#define phase_mark(name) ((void)0)
#define phase_start(name) ((void)0)
#endif
