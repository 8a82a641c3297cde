/* A tiny TAP producer for the unit tests: ok/not ok lines, a plan at the
 * end, exit status 1 when anything failed, 77 when the test skips. */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_count, tap_failed;

static inline void tap_vok(int cond, const char *fmt, va_list ap)
{
	tap_count++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

__attribute__((format(printf, 2, 3))) static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tap_vok(cond, fmt, ap);
	va_end(ap);
	return cond;
}

#define is_int(got, want, ...)                                                 \
	({                                                                     \
		long long g_ = (long long)(got), w_ = (long long)(want);       \
		int r_ = ok(g_ == w_, __VA_ARGS__);                            \
		if (!r_)                                                       \
			printf("#   got %lld, want %lld\n", g_, w_);           \
		r_;                                                            \
	})

#define is_str(got, want, ...)                                                 \
	({                                                                     \
		const char *g_ = (got), *w_ = (want);                          \
		int r_ = ok(g_ && w_ ? strcmp(g_, w_) == 0 : g_ == w_, __VA_ARGS__); \
		if (!r_)                                                       \
			printf("#   got '%s', want '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
		r_;                                                            \
	})

__attribute__((format(printf, 1, 2))) static inline void diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

static inline void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	exit(77);
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_count);
	return tap_failed ? 1 : 0;
}
