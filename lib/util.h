/* Small helpers shared by every module: scoped cleanup, allocation that
 * cannot fail, strings and string vectors, numbers as text. Nothing here
 * prints, and nothing here knows of stockade. */
#pragma once

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_strv_ _cleanup_(strv_freep)
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _unused_ __attribute__((unused))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Hand a descriptor or pointer over to the caller: the cleanup no longer
 * sees it. */
#define TAKE_FD(fd)                                                            \
	({                                                                     \
		int _fd_ = (fd);                                               \
		(fd) = -1;                                                     \
		_fd_;                                                          \
	})
#define TAKE_PTR(p)                                                            \
	({                                                                     \
		__typeof__(p) _p_ = (p);                                       \
		(p) = NULL;                                                    \
		_p_;                                                           \
	})

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline bool streq(const char *a, const char *b)
{
	return strcmp(a, b) == 0;
}

static inline bool str_empty(const char *s)
{
	return !s || !*s;
}

/* The statuses stockade ends with besides the command's own (stockade.1,
 * EXIT STATUS; 128+N: signal N ended the command). */
enum {
	/* The command ran, and the guard could not undo all it changed in
	 * the trust hand-offs: what is left is said, and the next run names
	 * it. Not the command's 0, whatever the command's status was (the
	 * report keeps the command's own). */
	EXIT_UNDO_FAILED = 122,
	EXIT_STOCKADE = 125,	/* stockade failed or refused (said), and the command did not run */
	EXIT_CANNOT_RUN = 126,	/* the command is not executable */
	EXIT_NOT_FOUND = 127,	/* the command was not found */
};

/* 127 or 126, as a shell says: the program's exec failed with err. */
static inline int exit_exec_failed(int err)
{
	return err == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_RUN;
}

/* Allocation failure ends stockade with EXIT_STOCKADE: a half-built
 * policy is never applied. Says so and exits: what the x-functions do
 * when memory runs out. */
_Noreturn void out_of_memory(void);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
void *xreallocarray(void *p, size_t n, size_t size);
/* Room for element n of an array of n, grown only through here: its
 * capacity is the power of two at or above n, doubled when n reaches it,
 * so the caller keeps no capacity. Growing by one instead left a freed
 * copy of every size in malloc's per-thread cache: 16 KiB of a run's
 * heap for the mount plan alone. */
void *xgrow(void *p, size_t n, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) _printf_(1, 2);
/* Numbers as text without the printf family: one call of it maps about
 * 200 KiB of libc that a run otherwise leaves alone (a program that calls
 * snprintf once holds 1030-1130 KiB of libc, 810-860 without), and each
 * run's peak memory is stockade's cost beside the command. Errors and
 * reports may use printf; a run's own path should not. fmt_u64 returns
 * where the digits start in buf; fmt_x64 writes 16 digits. */
const char *fmt_u64(char buf[static 21], uint64_t v);
/* FNV-1a over n bytes, from FNV_INIT or a hash so far: names and
 * checksums of stockade's own state, never a defence against an
 * adversary who chooses the input. */
#define FNV_INIT 0xcbf29ce484222325ULL
uint64_t fnv1a(uint64_t h, const void *data, size_t n);
const char *fmt_x64(char buf[static 17], uint64_t v);
/* a, b and c end to end: the joins a run makes by the hundred (paths,
 * NAME=value), without a trip through printf. */
char *xstrcat3(const char *a, const char *b, const char *c);

/* A NULL-terminated vector of owned strings. */
/* Text built up in memory, NUL-terminated once anything is in it. */
struct text {
	char *s;
	size_t n, cap;
};
void text_add(struct text *t, const char *s, size_t n);
void text_addc(struct text *t, char c);
void text_adds(struct text *t, const char *s);
/* The text, "" when nothing was added; t is empty again. */
char *text_take(struct text *t);

char **strv_new(void);
size_t strv_length(char *const *v);
void strv_push(char ***v, char *s);	/* takes ownership of s */
void strv_add(char ***v, const char *s);	/* copies s */
bool strv_contains(char *const *v, const char *s);
/* Each string copied; NULL for NULL. */
char **strv_copy(char *const *v);
/* The same strings in the same order (NULL as the empty vector). */
bool strv_equal(char *const *a, char *const *b);
void strv_free(char **v);
static inline void strv_freep(char ***v)
{
	strv_free(*v);
}

/* The length of the UTF-8 character at p (1 for ASCII), or 0 where p
 * starts no valid one (a stray byte, an overlong form, a surrogate). */
size_t utf8_char_len(const unsigned char *p);
/* s as a terminal can show it without acting on it: each control
 * character (C0, DEL, C1, the bidirectional overrides), each backslash
 * and each byte that is not valid UTF-8 written visibly: \n, \r, \t,
 * \\, \x1b. A name from disk can hold any of them; every line stockade
 * prints passes through here. str_visible_into writes at most cap bytes
 * with its NUL, cut at a whole escape, and returns the length. */
size_t str_visible_into(char *dst, size_t cap, const char *s);
char *str_visible(const char *s);
bool str_is_visible(const char *s);
void fputs_visible(const char *s, FILE *f);
bool str_has_prefix(const char *s, const char *prefix);
bool str_has_suffix(const char *s, const char *suffix);
bool str_has_control(const char *s);

/* Monotonic clock in microseconds. */
unsigned long long now_usec(void);

/* The standard signals (1 to 31) this process ignores, bit N-1 for
 * signal N as /proc's SigIgn: what an exec leaves ignored. */
#define SIGNAL_BIT(sig) (1UL << ((sig) - 1))
unsigned long signals_ignored(void);
