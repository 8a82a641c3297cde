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
