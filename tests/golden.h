/* Golden files for the unit tests: tests/golden/NAME in the source tree
 * (STOCKADE_SRCDIR, else the current directory), compared byte for byte;
 * STOCKADE_REGEN_GOLDEN=1 rewrites it for review instead. */
#pragma once

#include <fcntl.h>
#include <stdbool.h>

#include "lib/fd.h"
#include "lib/util.h"
#include "tests/tap.h"

static inline void diag_text(const char *label, const char *text)
{
	diag("%s:", label);
	for (const char *p = text; *p;) {
		size_t n = strcspn(p, "\n");
		diag("  %.*s", (int)n, p);
		p += n + (p[n] == '\n');
	}
}

/* text with every from replaced by to: a temporary path, a random name,
 * an id, by a word the golden file can hold. */
static inline char *golden_replace(const char *text, const char *from, const char *to)
{
	size_t nf = strlen(from), nt = strlen(to), n = 0;
	for (const char *p = strstr(text, from); nf && p; p = strstr(p + nf, from))
		n++;
	char *out = xmalloc(strlen(text) + n * nt + 1), *w = out;
	for (const char *p = text;;) {
		const char *hit = nf ? strstr(p, from) : NULL;
		if (!hit) {
			strcpy(w, p);
			break;
		}
		memcpy(w, p, (size_t)(hit - p));
		w += hit - p;
		memcpy(w, to, nt);
		w += nt;
		p = hit + nf;
	}
	return out;
}

/* text without the lines that hold needle: what differs from host to
 * host (a merged-usr link) leaves the golden file. */
static inline char *golden_drop_lines(const char *text, const char *needle)
{
	char *out = xmalloc(strlen(text) + 1), *w = out;
	for (const char *p = text; *p;) {
		const char *end = strchrnul(p, '\n');
		size_t n = (size_t)(end - p) + (*end ? 1 : 0);
		_cleanup_free_ char *line = xstrndup(p, n);
		if (!strstr(line, needle)) {
			memcpy(w, p, n);
			w += n;
		}
		p += n;
	}
	*w = '\0';
	return out;
}

/* One test: got (len bytes) is the golden file NAME, said as WHAT. */
static inline void golden_check(const char *name, const char *got, size_t len, const char *what)
{
	const char *srcdir = getenv("STOCKADE_SRCDIR");
	_cleanup_free_ char *path = xasprintf("%s/%s", str_empty(srcdir) ? "." : srcdir, name);
	const char *regen = getenv("STOCKADE_REGEN_GOLDEN");
	if (regen && streq(regen, "1")) {
		_cleanup_fclose_ FILE *out = fopen(path, "we");
		bool written = out && fwrite(got, 1, len, out) == len && fflush(out) == 0;
		diag("STOCKADE_REGEN_GOLDEN=1: wrote %s, review it before committing", path);
		ok(written, "regenerated %s", name);
		return;
	}
	_cleanup_free_ char *want = NULL;
	size_t want_len = 0;
	int r = read_file_at(AT_FDCWD, path, 64 * 1024, &want, &want_len);
	if (!ok(r == 0, "read %s", path)) {
		diag("%s (set STOCKADE_SRCDIR to the source tree)", strerror(-r));
		return;
	}
	if (!ok(want_len == len && memcmp(want, got, len) == 0, "%s matches %s", what, name)) {
		diag_text("got", got);
		diag_text("want", want);
	}
}
