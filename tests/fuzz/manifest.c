/* libFuzzer: the guard's manifest reader, on what a damaged or hostile
 * state file could hold (its checksum passed). Invariants: it never reads
 * past the input, and what it accepts it can write back and read again to
 * the same entries. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guard/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rbuf r = { .p = (const char *)data, .n = size };
	struct baseline b = { 0 };
	if (manifest_parse(r, &b) == 0) {
		struct wbuf w = { 0 };
		manifest_render(&b, &w);
		struct baseline again = { 0 };
		/* the content: past the magic, short of the checksum */
		size_t head = strlen(MANIFEST_MAGIC), tail = 8;
		if (w.n < head + tail ||
		    manifest_parse((struct rbuf){ .p = w.p + head, .n = w.n - head - tail }, &again) < 0 || again.n != b.n)
			abort();
		baseline_free(&again);
		free(w.p);
	}
	baseline_free(&b);
	return 0;
}
