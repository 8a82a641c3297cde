/* libFuzzer: the reader of a connection's first bytes (forward/sniff.c), a
 * TLS ClientHello's server name or an HTTP request's Host, on bytes the
 * command shapes. Invariants: the answer is one of its kinds; a name is
 * a NUL-terminated host name as the allow list compares it (lowercase,
 * labels of letters, digits, '-' and '_'); MORE asks for more bytes than
 * were given and no more than the relay peeks; a refusal says why; each
 * prefix of an input that read as a name asks for more or is refused,
 * never reads as another name (a ClientHello in pieces is read once it
 * is whole, and as what it is whole); a prefix read as another protocol
 * is the start of nothing else (bytes a lenient server reads as a
 * request, HTTP/1 or TLS, are read as one from the first). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "forward/forward.h"

static void check(const struct relay_sniffed *s, size_t size)
{
	switch (s->kind) {
	case SNIFF_MORE:
		if (s->need <= size || s->need > RELAY_PEEK_MAX)
			abort();
		break;
	case SNIFF_BAD:
		if (!s->why || !*s->why)
			abort();
		break;
	case SNIFF_TLS:
	case SNIFF_HTTP: {
		size_t n = strnlen(s->name, sizeof(s->name));
		if (n == sizeof(s->name))
			abort();
		char norm[ALLOW_NAME_MAX + 1];
		if (n && (allow_name_normalize(s->name, norm) < 0 || strcmp(norm, s->name) != 0))
			abort();
		break;
	}
	case SNIFF_OTHER:
		break;
	default:
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct relay_sniffed s;
	relay_sniff(data, size, &s);
	check(&s, size);
	if ((s.kind == SNIFF_TLS || s.kind == SNIFF_HTTP) && s.name[0]) {
		/* Every shorter prefix: more, refused, or (HTTP: a head is
		 * whole at its empty line) the same name. */
		for (size_t n = size > 64 ? size - 64 : 0; n < size; n++) {
			struct relay_sniffed p;
			relay_sniff(data, n, &p);
			check(&p, n);
			if ((p.kind == SNIFF_TLS || p.kind == SNIFF_HTTP) && p.name[0] && strcmp(p.name, s.name) != 0)
				abort();
		}
	}
	if (s.kind != SNIFF_OTHER) {
		/* Another protocol's bytes go on their address alone: a
		 * prefix read so must stay so, or a request's start (an
		 * empty line, a lowercase method) would pass for one. */
		for (size_t n = size > 64 ? size - 64 : 0; n < size; n++) {
			struct relay_sniffed p;
			relay_sniff(data, n, &p);
			if (p.kind == SNIFF_OTHER)
				abort();
		}
	}
	return 0;
}
