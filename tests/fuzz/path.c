/* libFuzzer: the path canonicaliser's pure part (path_normalize) and the
 * helpers every rule goes through. The input is one path. Invariants: the
 * result is normal (no "//", no "." or ".." component, no trailing slash
 * but the root's), normalising it again changes nothing, an absolute path
 * stays absolute and never climbs above "/", and a path is beneath its
 * parent. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/path.h"
#include "lib/util.h"

static void check_normal(const char *n)
{
	size_t len = strlen(n);
	if (strstr(n, "//") || strstr(n, "/./") || strstr(n, "/../") || (len > 1 && n[len - 1] == '/'))
		abort();
	if ((len >= 2 && streq(n + len - 2, "/.")) || (len >= 3 && streq(n + len - 3, "/..")))
		abort();
	if (n[0] == '/' && (str_has_prefix(n, "/../") || streq(n, "/..")))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 4096)
		return 0;
	char *in = malloc(size + 1);
	memcpy(in, data, size);
	in[size] = '\0';
	if (strlen(in) != size || size == 0) {	/* a NUL inside: not a path */
		free(in);
		return 0;
	}
	char *n = path_normalize(in);
	if (n) {
		check_normal(n);
		char *again = path_normalize(n);
		if (!again || !streq(again, n))
			abort();
		free(again);
		if (in[0] == '/' && n[0] != '/')
			abort();
		if (n[0] == '/') {
			const char *name = NULL;
			char *parent = path_parent(n, &name);
			if (parent && !path_is_beneath(n, parent))
				abort();
			if (parent && path_depth(parent) + (streq(n, "/") ? 0 : 1) != path_depth(n))
				abort();
			free(parent);
			if (!path_is_beneath(n, n) || !path_is_beneath(n, "/"))
				abort();
		}
		free(n);
	}
	free(in);
	return 0;
}
