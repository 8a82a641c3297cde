#include "lib/util.h"

#ifdef __linux__
#include <malloc.h>
#endif
#include <signal.h>
#include <time.h>

_Noreturn void out_of_memory(void)
{
	static const char msg[] = "stockade: out of memory\n";
	(void)!write(STDERR_FILENO, msg, sizeof(msg) - 1);
	_exit(EXIT_STOCKADE);
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

char **strv_copy(char *const *v)
{
	if (!v)
		return NULL;
	size_t n = strv_length(v);
	char **c = xcalloc(n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

bool strv_equal(char *const *a, char *const *b)
{
	size_t i = 0;
	for (; a && a[i] && b && b[i]; i++)
		if (!streq(a[i], b[i]))
			return false;
	return !(a && a[i]) && !(b && b[i]);
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

size_t utf8_char_len(const unsigned char *p)
{
	size_t n;
	unsigned min;
	if (p[0] < 0x80)
		return 1;
	else if ((p[0] & 0xe0) == 0xc0)
		n = 2, min = 0x80;
	else if ((p[0] & 0xf0) == 0xe0)
		n = 3, min = 0x800;
	else if ((p[0] & 0xf8) == 0xf0)
		n = 4, min = 0x10000;
	else
		return 0;
	unsigned cp = p[0] & (0x7f >> n);
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

/* The character at p as it is shown, into out (at most 16 bytes); how
 * many bytes of p it took, in *ret_used. */
static size_t visible_unit(const unsigned char *p, char out[static 17], size_t *ret_used)
{
	static const char hex[] = "0123456789abcdef";
	size_t n = utf8_char_len(p);
	/* A C1 control (U+0080-U+009F: 8-bit CSI, OSC) or a bidirectional
	 * embedding, override or isolate (U+202A-U+202E, U+2066-U+2069),
	 * which reorders what follows it on the screen. */
	bool hidden = (n == 2 && p[0] == 0xc2 && p[1] < 0xa0) ||
		      (n == 3 && p[0] == 0xe2 && ((p[1] == 0x80 && p[2] >= 0xaa && p[2] <= 0xae) ||
						  (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)));
	if (n > 1 && !hidden) {
		memcpy(out, p, n);
		*ret_used = n;
		return n;
	}
	if (n == 0)
		n = 1;	/* not UTF-8: the one byte */
	*ret_used = n;
	if (n == 1 && *p >= 0x20 && *p < 0x7f && *p != '\\') {
		out[0] = (char)*p;
		return 1;
	}
	if (n == 1 && (*p == '\n' || *p == '\r' || *p == '\t' || *p == '\\')) {
		out[0] = '\\';
		out[1] = *p == '\n' ? 'n' : *p == '\r' ? 'r' : *p == '\t' ? 't' : '\\';
		return 2;
	}
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		out[len++] = '\\';
		out[len++] = 'x';
		out[len++] = hex[p[i] >> 4];
		out[len++] = hex[p[i] & 15];
	}
	return len;
}

size_t str_visible_into(char *dst, size_t cap, const char *s)
{
	size_t len = 0;
	if (!cap)
		return 0;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		char unit[17];
		size_t used, n = visible_unit(p, unit, &used);
		if (len + n + 1 > cap)
			break;
		memcpy(dst + len, unit, n);
		len += n;
		p += used;
	}
	dst[len] = '\0';
	return len;
}

char *str_visible(const char *s)
{
	struct text t = { 0 };
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		char unit[17];
		size_t used, n = visible_unit(p, unit, &used);
		text_add(&t, unit, n);
		p += used;
	}
	return text_take(&t);
}

bool str_is_visible(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		char unit[17];
		size_t used, n = visible_unit(p, unit, &used);
		if (n != used || memcmp(unit, p, n) != 0)
			return false;
		p += used;
	}
	return true;
}

void fputs_visible(const char *s, FILE *f)
{
	if (str_is_visible(s ? s : "")) {
		fputs(s ? s : "", f);
		return;
	}
	_cleanup_free_ char *v = str_visible(s);
	fputs(v, f);
}

unsigned long long now_usec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000;
}

unsigned long signals_ignored(void)
{
	unsigned long ign = 0;
	for (int sig = 1; sig < 32; sig++) {
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			ign |= SIGNAL_BIT(sig);
	}
	return ign;
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
