/* libFuzzer: the session protocol's reader (lib/wire.c), on bytes any
 * client of the user's may send the holder. Invariants: a message that
 * parses has a type of [a-z-] and fields whose keys are too, every
 * string lies within the copy, and the values read back are exactly what
 * wire_begin and wire_add make of them again; one that does not parse
 * leaves nothing behind. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/util.h"
#include "lib/wire.h"

static void check_word(const char *s)
{
	if (!*s)
		abort();
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || *s == '-'))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wire_msg m;
	if (wire_parse((const char *)data, size, &m) < 0) {
		if (m.buf || m.f || m.n || m.type)
			abort();
		return 0;
	}
	check_word(m.type);
	struct wire_out o = { 0 };
	wire_begin(&o, m.type);
	for (size_t i = 0; i < m.n; i++) {
		check_word(m.f[i].key);
		if (m.f[i].key < m.buf || m.f[i].value >= m.buf + size)
			abort();
		wire_add(&o, m.f[i].key, m.f[i].value);
	}
	/* What parsed is what it says, byte for byte. */
	if (o.len != size || memcmp(o.buf, data, size) != 0)
		abort();
	long v;
	(void)wire_get_long(&m, "id", 0, LONG_MAX, &v);
	char **all = wire_get_all(&m, "arg");
	free(all);
	wire_out_free(&o);
	wire_msg_free(&m);
	return 0;
}
