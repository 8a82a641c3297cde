#include "lib/util.h"

#ifdef __linux__
#include <malloc.h>
#endif
#include <time.h>

_Noreturn void out_of_memory(void)
{
	static const char msg[] = "stockade: out of memory\n";
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(125);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		out_of_memory();
	return p;
}

void *xreallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;
	if (__builtin_mul_overflow(n ? n : 1, size ? size : 1, &bytes))
		out_of_memory();
	p = realloc(p, bytes);
	if (!p)
		out_of_memory();
	return p;
}

void *xgrow(void *p, size_t n, size_t size)
{
	if (n & (n - 1))
		return p;	/* not a power of two: there is room */
	return xreallocarray(p, n ? 2 * n : 1, size);
}

char *xstrdup(const char *s)
{
	char *d = strdup(s);
	if (!d)
		out_of_memory();
	return d;
}

char *xstrndup(const char *s, size_t n)
{
	char *d = strndup(s, n);
	if (!d)
		out_of_memory();
	return d;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		out_of_memory();
	va_end(ap);
	return s;
}

const char *fmt_u64(char buf[static 21], uint64_t v)
{
	char *p = buf + 20;
	*p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while (v /= 10);
	return p;
}

const char *fmt_x64(char buf[static 17], uint64_t v)
{
	for (int i = 15; i >= 0; i--, v >>= 4)
		buf[i] = "0123456789abcdef"[v & 0xf];
	buf[16] = '\0';
	return buf;
}

char *xstrcat3(const char *a, const char *b, const char *c)
{
	size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
	char *s = xmalloc(la + lb + lc + 1);
	memcpy(s, a, la);
	memcpy(s + la, b, lb);
	memcpy(s + la + lb, c, lc + 1);
	return s;
}

char **strv_new(void)
{
	return xcalloc(1, sizeof(char *));
}

size_t strv_length(char *const *v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

/* gcc's -fanalyzer loses the string once the vector is reallocated
 * (malloc_usable_size is opaque to it) and calls it leaked: make analyze. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wanalyzer-malloc-leak"
#endif
void strv_push(char ***v, char *s)
{
	size_t n = strv_length(*v);
	/* Doubled when full, however the vector was made: malloc knows
	 * its size. */
#ifdef __linux__
	if ((n + 2) * sizeof(char *) > malloc_usable_size(*v))	/* 0 for NULL */
		*v = xreallocarray(*v, 2 * (n + 2), sizeof(char *));
#else
	/* macOS's C library has no malloc_usable_size (malloc_size is
	 * its own header's): grown every time, as realloc allows. */
	*v = xreallocarray(*v, n + 2, sizeof(char *));
#endif
	(*v)[n] = s;
	(*v)[n + 1] = NULL;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

void strv_add(char ***v, const char *s)
{
	strv_push(v, xstrdup(s));
}

bool strv_contains(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (streq(v[i], s))
			return true;
	return false;
}

void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

bool str_has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

bool str_has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

unsigned long long now_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000;
}

void text_add(struct text *t, const char *s, size_t n)
{
	if (t->n + n + 1 > t->cap) {
		t->cap = (t->n + n + 1) * 2;
		t->s = xrealloc(t->s, t->cap);
	}
	memcpy(t->s + t->n, s, n);
	t->n += n;
	t->s[t->n] = '\0';
}

void text_addc(struct text *t, char c)
{
	text_add(t, &c, 1);
}

void text_adds(struct text *t, const char *s)
{
	text_add(t, s, strlen(s));
}

char *text_take(struct text *t)
{
	if (!t->s)
		return xstrdup("");
	char *s = t->s;
	*t = (struct text){ 0 };
	return s;
}

uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}
