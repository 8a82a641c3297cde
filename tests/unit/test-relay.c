/* forward/ (the relay): the readers of a connection's first bytes (a TLS ClientHello's
 * server name, an HTTP request's Host) against well-formed and hostile
 * input, byte by byte as TCP may deliver it; the DNS messages stockade
 * reads and writes; the addresses a connection never goes to. Pure: no
 * socket. */
#include "forward/forward.h"

#include <arpa/inet.h>

#include "lib/util.h"
#include "tests/tap.h"

/* ---- ClientHellos, built ---- */

struct buf {
	uint8_t b[80000];
	size_t n;
};

static void put(struct buf *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put8(struct buf *b, unsigned v)
{
	b->b[b->n++] = (uint8_t)v;
}

static void put16(struct buf *b, unsigned v)
{
	put8(b, v >> 8);
	put8(b, v);
}

static void put24(struct buf *b, unsigned v)
{
	put8(b, v >> 16);
	put16(b, v & 0xffff);
}

/* An extension: type and body. */
static void ext(struct buf *e, unsigned type, const void *body, size_t n)
{
	put16(e, type);
	put16(e, (unsigned)n);
	put(e, body, n);
}

/* A server_name extension with the given host names. */
static void sni(struct buf *e, const char *const *names, size_t n_names)
{
	struct buf list = { .n = 0 };
	for (size_t i = 0; i < n_names; i++) {
		put8(&list, 0);
		put16(&list, (unsigned)strlen(names[i]));
		put(&list, names[i], strlen(names[i]));
	}
	struct buf body = { .n = 0 };
	put16(&body, (unsigned)list.n);
	put(&body, list.b, list.n);
	ext(e, 0, body.b, body.n);
}

/* A ClientHello handshake message around the extensions (NULL: none at
 * all), its records fragment bytes each. */
static void hello(struct buf *out, const struct buf *exts, size_t fragment)
{
	struct buf body = { .n = 0 };
	put16(&body, 0x0303);
	for (int i = 0; i < 32; i++)
		put8(&body, i);
	put8(&body, 32);
	for (int i = 0; i < 32; i++)
		put8(&body, 0xee);
	put16(&body, 4);
	put16(&body, 0x1301);
	put16(&body, 0x1302);
	put8(&body, 1);
	put8(&body, 0);
	if (exts) {
		put16(&body, (unsigned)exts->n);
		put(&body, exts->b, exts->n);
	}
	struct buf hs = { .n = 0 };
	put8(&hs, 1);
	put24(&hs, (unsigned)body.n);
	put(&hs, body.b, body.n);
	out->n = 0;
	for (size_t at = 0; at < hs.n; at += fragment) {
		size_t k = hs.n - at < fragment ? hs.n - at : fragment;
		put8(out, 22);
		put16(out, 0x0301);
		put16(out, (unsigned)k);
		put(out, hs.b + at, k);
	}
}

static struct relay_sniffed sniffed(const struct buf *b)
{
	struct relay_sniffed s;
	relay_sniff(b->b, b->n, &s);
	return s;
}

/* Every prefix of b asks for more; the whole says what it says. */
static bool more_until_whole(const struct buf *b)
{
	for (size_t n = 0; n < b->n; n++) {
		struct relay_sniffed s;
		relay_sniff(b->b, n, &s);
		if (s.kind != SNIFF_MORE || s.need <= n || s.need > b->n)
			return false;
	}
	return true;
}

static void test_tls(void)
{
	static struct buf e, h;
	const char *one[] = { "Registry.NPMjs.org" };
	e.n = 0;
	ext(&e, 0x0a0a, "", 0);	/* GREASE, as Chrome sends */
	sni(&e, one, 1);
	ext(&e, 0x002b, "\x04\x03\x04\x03\x03", 5);
	ext(&e, 0xfafa, "\0", 1);
	hello(&h, &e, 16384);
	struct relay_sniffed s = sniffed(&h);
	ok(s.kind == SNIFF_TLS && streq(s.name, "registry.npmjs.org"), "a ClientHello: its server name, lowercase (GREASE extensions passed over)");
	ok(more_until_whole(&h), "each of its %zu prefixes asks for more bytes (TCP delivers it in pieces)", h.n);

	hello(&h, &e, 7);
	s = sniffed(&h);
	ok(s.kind == SNIFF_TLS && streq(s.name, "registry.npmjs.org"), "the same in records of 7 bytes each (%zu bytes)", h.n);
	ok(more_until_whole(&h), "and each prefix of those asks for more");

	hello(&h, NULL, 16384);
	s = sniffed(&h);
	ok(s.kind == SNIFF_TLS && !s.name[0], "a ClientHello without extensions: TLS, no name");
	e.n = 0;
	ext(&e, 0x000d, "\x00\x02\x04\x03", 4);
	hello(&h, &e, 16384);
	s = sniffed(&h);
	ok(s.kind == SNIFF_TLS && !s.name[0], "a ClientHello without a server_name: TLS, no name");

	/* Hostile. */
	struct {
		const char *what, *why;
	} cases[] = {
		{ "two server_name extensions", "two server_name" },
		{ "two host names in one server_name", "two host names" },
		{ "an encrypted ClientHello (ECH)", "encrypted ClientHello" },
		{ "ECH's older draft (encrypted_server_name)", "encrypted ClientHello" },
		{ "a server name that is an address", "not a host name" },
		{ "a server name with a NUL", "not a host name" },
		{ "a server name with a trailing dot and junk", "not a host name" },
		{ "an extension twice", "an extension twice" },
		{ "a server_name list longer than its extension", "does not add up" },
	};
	const char *two[] = { "a.example", "b.example" };
	const char *addr[] = { "10.0.0.1" };
	const char *a[] = { "a.example" };
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		e.n = 0;
		switch (i) {
		case 0:
			sni(&e, a, 1);
			sni(&e, a + 0, 1);
			break;
		case 1:
			sni(&e, two, 2);
			break;
		case 2:
			sni(&e, a, 1);
			ext(&e, 0xfe0d, "\0\0\1\0\1", 5);
			break;
		case 3:
			sni(&e, a, 1);
			ext(&e, 0xffce, "\0", 1);
			break;
		case 4:
			sni(&e, addr, 1);
			break;
		case 5: {
			struct buf body = { .n = 0 };
			put16(&body, 12);
			put8(&body, 0);
			put16(&body, 9);
			put(&body, "a.ex\0mple", 9);
			ext(&e, 0, body.b, body.n);
			break;
		}
		case 6: {
			const char *junk[] = { "a.example.. " };
			sni(&e, junk, 1);
			break;
		}
		case 7:
			ext(&e, 0x0010, "\0\0", 2);
			ext(&e, 0x0010, "\0\0", 2);
			break;
		case 8: {
			struct buf body = { .n = 0 };
			put16(&body, 200);
			put8(&body, 0);
			put16(&body, 9);
			put(&body, "a.example", 9);
			ext(&e, 0, body.b, body.n);
			break;
		}
		}
		hello(&h, &e, 16384);
		s = sniffed(&h);
		ok(s.kind == SNIFF_BAD && s.why && strstr(s.why, cases[i].why), "refused: %s", cases[i].what);
		if (s.kind == SNIFF_BAD && !strstr(s.why, cases[i].why))
			diag("why: %s", s.why);
	}

	/* Lengths that lie. */
	e.n = 0;
	sni(&e, a, 1);
	hello(&h, &e, 16384);
	struct buf bad = h;
	bad.b[3] = 0x40, bad.b[4] = 0x01;	/* a record of 16385 bytes */
	s = sniffed(&bad);
	ok(s.kind == SNIFF_BAD, "a record longer than 16 KiB: refused");
	bad = h;
	bad.b[3] = 0, bad.b[4] = 0;
	s = sniffed(&bad);
	ok(s.kind == SNIFF_BAD, "an empty handshake record: refused");
	bad = h;
	bad.b[6] = 0xff;	/* the handshake's length: 16 MiB */
	s = sniffed(&bad);
	ok(s.kind == SNIFF_BAD, "a ClientHello claiming 16 MiB: refused, not waited for");
	bad = h;
	bad.b[5] = 2;	/* a ServerHello */
	s = sniffed(&bad);
	ok(s.kind == SNIFF_BAD, "a handshake that is not a ClientHello: refused");
	bad = h;
	bad.b[1] = 2;
	s = sniffed(&bad);
	ok(s.kind == SNIFF_BAD, "a record of SSL 2's version: refused");
	/* The extensions' length past the hello's end. */
	bad = h;
	size_t ext_len_at = 5 + 4 + 2 + 32 + 1 + 32 + 2 + 4 + 1 + 1;
	bad.b[ext_len_at] = 0x7f;
	s = sniffed(&bad);
	ok(s.kind == SNIFF_BAD, "extensions longer than the ClientHello: refused");
	/* An alert record in the middle of a fragmented hello. */
	hello(&h, &e, 20);
	bad = h;
	bad.b[25] = 21;
	s = sniffed(&bad);
	ok(s.kind == SNIFF_BAD, "another record type before the ClientHello is whole: refused");
	/* A huge hello: past what the relay reads. */
	e.n = 0;
	sni(&e, a, 1);
	static uint8_t pad[40000];
	ext(&e, 0x0015, pad, 30000);
	ext(&e, 0x0016, pad, 10000);
	hello(&h, &e, 16384);
	s = sniffed(&h);
	ok(s.kind == SNIFF_BAD, "a ClientHello of %zu bytes: refused", h.n);
	/* Records of one byte: past the peek's bound, refused, not waited for. */
	e.n = 0;
	sni(&e, a, 1);
	ext(&e, 0x0015, pad, 12000);
	hello(&h, &e, 1);
	relay_sniff(h.b, RELAY_PEEK_MAX, &s);
	ok(s.kind == SNIFF_BAD, "a hello in one-byte records longer than the peek: refused at %u bytes", RELAY_PEEK_MAX);
	/* A name of 254 bytes. */
	char longname[300];
	memset(longname, 'a', 254);
	for (int i = 60; i < 254; i += 61)
		longname[i] = '.';
	longname[254] = '\0';
	const char *ln[] = { longname };
	e.n = 0;
	sni(&e, ln, 1);
	hello(&h, &e, 16384);
	s = sniffed(&h);
	ok(s.kind == SNIFF_BAD, "a server name of 254 bytes: refused");
}

/* ClientHellos real clients sent (tests/fuzz/sniff/, the fuzzer's seeds). */
static void test_real_clients(void)
{
	static const struct {
		const char *file, *name;
	} clients[] = {
		{ "tests/fuzz/sniff/tls-curl", "registry.example" },
		{ "tests/fuzz/sniff/tls-openssl", "files.pythonhosted.example" },
		{ "tests/fuzz/sniff/tls-python", "pypi.example" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(clients); i++) {
		static struct buf b;
		FILE *f = fopen(clients[i].file, "rb");
		b.n = f ? fread(b.b, 1, sizeof(b.b), f) : 0;
		if (f)
			fclose(f);
		struct relay_sniffed s = sniffed(&b);
		ok(s.kind == SNIFF_TLS && streq(s.name, clients[i].name), "%s's ClientHello (%zu bytes): %s", clients[i].file,
		   b.n, clients[i].name);
		ok(more_until_whole(&b), "  each of its prefixes asks for more");
	}
}

/* The SSLv2 form of a ClientHello (OpenSSL's servers still take it for
 * TLS 1.2) says no server name: refused, never passed on its address;
 * bytes with the top bit set that are not one are another protocol. */
static void test_sslv2(void)
{
	static const uint8_t v2[] = { 0x80, 0x1f, 0x01, 0x03, 0x03, 0x00, 0x06, 0x00, 0x00, 0x00, 0x10,
				      0xc0, 0x2f, 0x00, 0x00, 0x9c, 0x00, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	struct relay_sniffed s;
	relay_sniff(v2, sizeof(v2), &s);
	ok(s.kind == SNIFF_BAD && strstr(s.why, "SSLv2"), "an SSLv2-format ClientHello is refused, and says so");
	relay_sniff(v2, 2, &s);
	ok(s.kind == SNIFF_MORE && s.need == 3, "  its first two bytes ask for the third");
	static const uint8_t other[] = { 0x81, 0x05, 0x02, 'x' };
	relay_sniff(other, sizeof(other), &s);
	ok(s.kind == SNIFF_OTHER, "a top bit set and another message type: another protocol");
}

static struct relay_sniffed http(const char *text)
{
	struct relay_sniffed s;
	relay_sniff(text, strlen(text), &s);
	return s;
}

static void test_http(void)
{
	struct relay_sniffed s = http("GET / HTTP/1.1\r\nHost: Example.COM\r\nAccept: */*\r\n\r\n");
	ok(s.kind == SNIFF_HTTP && streq(s.name, "example.com") && s.port == 0, "GET with Host: its name");
	s = http("GET /x HTTP/1.1\r\nhOsT:example.com:8080 \r\n\r\n");
	ok(s.kind == SNIFF_HTTP && streq(s.name, "example.com") && s.port == 8080, "Host in any case, with a port, no space");
	s = http("GET http://example.com/a HTTP/1.1\r\nHost: example.com\r\n\r\n");
	ok(s.kind == SNIFF_HTTP && streq(s.name, "example.com"), "an absolute target that agrees with Host");
	s = http("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
	ok(s.kind == SNIFF_HTTP && streq(s.name, "example.com") && s.port == 443, "CONNECT: its target's name");
	s = http("GET / HTTP/1.0\r\n\r\n");
	ok(s.kind == SNIFF_HTTP && !s.name[0], "HTTP/1.0 without Host: HTTP, no name");
	s = http("GET / HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n");
	ok(s.kind == SNIFF_HTTP && !s.name[0] && s.literal, "Host an address: no name");
	s = http("GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n");
	ok(s.kind == SNIFF_HTTP && !s.name[0] && s.literal && s.port == 80, "Host an IPv6 address: no name");
	const char *whole = "POST /upload HTTP/1.1\r\nHost: a.example\r\nContent-Length: 3\r\n\r\nabc";
	bool more = true;
	for (size_t n = 0; n < strlen(whole) - 3; n++) {
		struct relay_sniffed p;
		relay_sniff(whole, n, &p);
		more = more && p.kind == SNIFF_MORE;
	}
	ok(more, "each prefix of a request's head asks for more");

	struct {
		const char *text, *why;
	} bad[] = {
		{ "GET / HTTP/1.1\r\nHost: a.example\r\nHost: b.example\r\n\r\n", "two Host" },
		{ "GET http://b.example/ HTTP/1.1\r\nHost: a.example\r\n\r\n", "another host" },
		{ "GET http://user@a.example/ HTTP/1.1\r\nHost: a.example\r\n\r\n", "absolute target" },
		{ "CONNECT b.example:443 HTTP/1.1\r\nHost: a.example\r\n\r\n", "another host" },
		{ "CONNECT b.example HTTP/1.1\r\n\r\n", "CONNECT" },
		{ "GET / HTTP/1.1\r\nHost : a.example\r\n\r\n", "field name" },
		{ "GET / HTTP/1.1\r\nX: y\r\n Host: b.example\r\n\r\n", "folded" },
		{ "GET / HTTP/1.1\r\nHost: a.example\rb.example\r\n\r\n", "CRLF" },
		{ "GET / HTTP/1.1\r\nHost: a.example\x01\r\n\r\n", "control byte" },
		{ "GET / HTTP/1.1\r\nHost: a.ex ample\r\n\r\n", "Host" },
		{ "GET / HTTP/1.1\r\nHost: a.example:99999\r\n\r\n", "Host" },
		{ "GET / HTTP/1.1\r\nHost: a.example:\r\n\r\n", "Host" },
		{ "GET / HTTP/2.0\r\nHost: a.example\r\n\r\n", "request line" },
		{ "GET  / HTTP/1.1\r\nHost: a.example\r\n\r\n", "request line" },
		{ "GET /\x01 HTTP/1.1\r\nHost: a.example\r\n\r\n", "request target" },
		{ "GET\t/ HTTP/1.1\r\nHost: b.example\r\n\r\n", "request line" },
		{ "GET / HTTP/1.1 \r\nHost: b.example\r\n\r\n", "request line" },
		{ "GET / http/1.1\r\nHost: b.example\r\n\r\n", "request line" },
		{ "GET /\r\nHost: b.example\r\n\r\n", "HTTP/0.9" },
		{ "GET\r\n\r\n", "request line" },
		{ "FOO / HTTP/1.1\rHost: b.example\r\n\r\n", "request line" },
		{ "GET / HTTP/1.1\nHost: a.example\rHost: b.example\n\n", "CR" },
		{ "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "h2c" },
		{ "pri * HTTP/2.0\r\n\r\nSM\r\n\r\n", "h2c" },
		{ "\r\nGET / HTTP/1.1\r\nHost: a.example\r\nhost: b.example\r\n\r\n", "two Host" },
		{ "connect b.example:443 HTTP/1.1\r\nHost: a.example\r\n\r\n", "another host" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		s = http(bad[i].text);
		ok(s.kind == SNIFF_BAD && strstr(s.why, bad[i].why), "refused: %.*s...", 40, bad[i].text);
		if (s.kind != SNIFF_BAD || !strstr(s.why, bad[i].why))
			diag("kind %d, why %s", s.kind, s.why ? s.why : "-");
	}
	/* A head that never ends: refused at its bound. */
	static char head[RELAY_HEAD_MAX + 64];
	strcpy(head, "GET / HTTP/1.1\r\nX: ");
	memset(head + strlen(head), 'a', RELAY_HEAD_MAX);
	s = http(head);
	ok(s.kind == SNIFF_BAD, "a head longer than %u bytes: refused", RELAY_HEAD_MAX);
	s = http("SSH-2.0-OpenSSH_9.2\r\n");
	ok(s.kind == SNIFF_OTHER, "an ssh banner: another protocol");
	s = http("\x80\x2e\x01\x03\x01");
	ok(s.kind == SNIFF_BAD, "SSL 2's hello: no other protocol, a ClientHello without a server name (test_sslv2)");
	s = http("ABCDEFGHIJKLMNOPQRSTUVWXYZ / HTTP/1.1\r\nHost: b.example\r\n\r\n");
	ok(s.kind == SNIFF_HTTP && streq(s.name, "b.example"), "a method of any length is a method: its Host read");

	/* What a lenient server reads as a request (RFC 9112 2.2, 3) is
	 * read as one here: its Host, never another protocol's bytes. */
	struct {
		const char *text, *name, *what;
	} lenient[] = {
		{ "\r\nGET / HTTP/1.1\r\nHost: b.example\r\n\r\n", "b.example", "an empty line before it" },
		{ "\r\n\n\r\n GET / HTTP/1.1\r\nHost: b.example\r\n\r\n", "b.example", "empty lines and a space before it" },
		{ "GET / HTTP/1.1\nHost: b.example\n\n", "b.example", "bare LF" },
		{ "GET / HTTP/1.1\r\nHost: b.example\n\r\n", "b.example", "CRLF and LF mixed" },
		{ "get / HTTP/1.1\r\nHost: b.example\r\n\r\n", "b.example", "a lowercase method" },
		{ "gEt / HTTP/1.0\r\nHost: b.example\r\n\r\n", "b.example", "a mixed-case method, HTTP/1.0" },
		{ "X-CUSTOM / HTTP/1.1\r\nHost: b.example\r\n\r\n", "b.example", "a method no server knows" },
		{ "connect b.example:443 HTTP/1.1\r\n\r\n", "b.example", "a lowercase CONNECT: its target" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(lenient); i++) {
		s = http(lenient[i].text);
		ok(s.kind == SNIFF_HTTP && streq(s.name, lenient[i].name), "read as HTTP, its Host: %s", lenient[i].what);
		if (s.kind != SNIFF_HTTP)
			diag("kind %d, why %s", s.kind, s.why ? s.why : "-");
		/* And each prefix asks for more: never read as another
		 * protocol (which would go on its address alone). */
		bool prefixes = true;
		for (size_t n = 0; n < strlen(lenient[i].text) - 1; n++) {
			struct relay_sniffed p;
			relay_sniff(lenient[i].text, n, &p);
			prefixes = prefixes && p.kind == SNIFF_MORE;
		}
		ok(prefixes, "  each of its prefixes asks for more");
	}
	/* A request's start, the rest held back: more, however long the
	 * wait (the relay refuses it at its bound, never passes it on). */
	s = http("GET /x HTTP/1.1\r\nX: y\r\n");
	ok(s.kind == SNIFF_MORE, "a head not whole: more");
	s = http("\r\n");
	ok(s.kind == SNIFF_MORE, "an empty line before a request: more");
	s = http("G");
	ok(s.kind == SNIFF_MORE, "one letter: more");
	/* Another protocol: a first line no server takes for a request. */
	s = http("SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n");
	ok(s.kind == SNIFF_OTHER, "an ssh banner with a comment: another protocol");
	s = http("*1\r\n$4\r\nPING\r\n");
	ok(s.kind == SNIFF_OTHER, "a Redis command: another protocol");
	s = http("EHLO client.example\r\n");
	ok(s.kind == SNIFF_OTHER, "an SMTP command: another protocol");
	s = http("GET/ HTTP/1.1\r\n");
	ok(s.kind == SNIFF_OTHER, "a token ended by no space: another protocol");
}

/* ---- DNS ---- */

static size_t query(uint8_t *b, const char *name, uint16_t type)
{
	int n = dns_build_query(name, type, 0x1234, b, 512);
	return n > 0 ? (size_t)n : 0;
}

static void test_dns(void)
{
	uint8_t q[512], a[1024];
	size_t qn = query(q, "registry.npmjs.org", DNS_TYPE_A);
	struct dns_query dq;
	ok(qn > 0 && dns_parse_query(q, qn, &dq) == 0 && streq(dq.name, "registry.npmjs.org") && dq.type == DNS_TYPE_A &&
		   dq.id == 0x1234 && dq.rd,
	   "a query, built and read back");
	/* Mixed case, as 0x20 randomisation sends it. */
	size_t mn = query(q, "ReGiStRy.NpMjS.OrG", DNS_TYPE_AAAA);
	ok(mn && dns_parse_query(q, mn, &dq) == 0 && streq(dq.name, "registry.npmjs.org") && dq.type == DNS_TYPE_AAAA,
	   "a query in mixed case: the name compared in lowercase");

	/* A long label of data: no host name. */
	uint8_t t[512] = { 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0 };
	size_t at = 12;
	t[at++] = 5;
	memcpy(t + at, "a\x01\xff.b", 5);
	at += 5;
	t[at++] = 7;
	memcpy(t + at, "example", 7);
	at += 7;
	t[at++] = 0;
	t[at++] = 0, t[at++] = 16, t[at++] = 0, t[at++] = 1;
	ok(dns_parse_query(t, at, &dq) == 0 && !dq.name[0] && dq.type == 16, "a TXT query with bytes no host name holds: read, no name");
	ok(dns_parse_query(t, 11, &dq) < 0, "a query shorter than its header: none");
	t[2] |= 0x80;
	ok(dns_parse_query(t, at, &dq) < 0, "a response: not a query");
	t[2] = 0x28;	/* opcode 5, an update */
	ok(dns_parse_query(t, at, &dq) == -ENOTSUP, "an update: NOTIMP");

	/* The answer. */
	qn = query(q, "a.example", DNS_TYPE_A);
	dns_parse_query(q, qn, &dq);
	struct dns_addrs addrs = { .family = AF_INET, .n = 2, .ttl = 30 };
	inet_pton(AF_INET, "10.203.0.2", addrs.addr[0]);
	inet_pton(AF_INET, "10.203.0.3", addrs.addr[1]);
	int n = dns_build_answer(q, qn, &dq, DNS_RCODE_NOERROR, &addrs, 7, a, sizeof(a));
	struct dns_result res;
	ok(n > 0 && dns_parse_response(a, (size_t)n, "a.example", DNS_TYPE_A, 0x1234, &res) == 0 && res.rcode == 0 &&
		   res.addrs.n == 2 && res.ttl == 7 && memcmp(res.addrs.addr[1], addrs.addr[1], 4) == 0,
	   "an answer of two addresses with TTL 7, read back");
	ok(dns_parse_response(a, (size_t)n, "b.example", DNS_TYPE_A, 0x1234, &res) == -EINVAL,
	   "an answer to another question: not ours");
	ok(dns_parse_response(a, (size_t)n, "a.example", DNS_TYPE_A, 0x1235, &res) == -EINVAL, "an answer with another id: not ours");
	ok(dns_parse_response(a, (size_t)n, "a.example", DNS_TYPE_AAAA, 0x1234, &res) == -EINVAL, "an answer of another type: not ours");
	ok(dns_build_answer(q, qn, &dq, DNS_RCODE_NOERROR, &addrs, 7, a, 40) == -ENOSPC, "an answer too large for its buffer: refused");
	n = dns_build_answer(q, qn, &dq, DNS_RCODE_NXDOMAIN, NULL, 0, a, sizeof(a));
	ok(n == (int)qn && (a[3] & 0x0f) == 3 && a[2] & 0x80, "NXDOMAIN: the question alone");
	a[2] |= 0x02;
	ok(dns_parse_response(a, (size_t)n, "a.example", DNS_TYPE_A, 0x1234, &res) == -EAGAIN, "a truncated answer: ask again over TCP");

	/* A CNAME chain, compressed, and the least TTL. */
	uint8_t r[512];
	size_t rn = query(r, "www.example.com", DNS_TYPE_A);
	r[2] = 0x81, r[3] = 0x80, r[7] = 3;
	uint8_t rrs[] = {
		0xc0, 12, 0, 5, 0, 1, 0, 0, 1, 0, 0, 6, 3, 'c', 'd', 'n', 0xc0, 16,	/* www -> cdn.example.com, TTL 256 */
		0xc0, (uint8_t)(rn + 12), 0, 5, 0, 1, 0, 0, 0, 60, 0, 5, 2, 'e', '1', 0xc0, 24, /* cdn -> e1.com, TTL 60 */
		2, 'e', '1', 3, 'c', 'o', 'm', 0, 0, 1, 0, 1, 0, 0, 0, 90, 0, 4, 10, 1, 2, 3, /* e1.com A, TTL 90 */
	};
	memcpy(r + rn, rrs, sizeof(rrs));
	ok(dns_parse_response(r, rn + sizeof(rrs), "www.example.com", DNS_TYPE_A, 0x1234, &res) == 0 && res.addrs.n == 1 &&
		   res.ttl == 60 && res.addrs.addr[0][3] == 3,
	   "a CNAME chain, compressed: the address at its end, the least TTL (%u)", res.ttl);
	/* A compression loop. */
	uint8_t loop[] = { 0x12, 0x34, 0x81, 0x80, 0, 1, 0, 1, 0, 0, 0, 0, 1, 'a', 0, 0, 1, 0, 1,
			   0xc0, 19, 0, 1, 0, 1, 0, 0, 0, 1, 0, 4, 1, 2, 3, 4 };
	ok(dns_parse_response(loop, sizeof(loop), "a", DNS_TYPE_A, 0x1234, &res) == -EINVAL, "a compression loop: refused");
	/* A record that claims more data than the message holds. */
	size_t bn = query(r, "a.example", DNS_TYPE_A);
	r[2] = 0x81, r[3] = 0x80, r[7] = 1;
	uint8_t over[] = { 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 1, 0xff, 0xff, 1, 2, 3, 4 };
	memcpy(r + bn, over, sizeof(over));
	ok(dns_parse_response(r, bn + sizeof(over), "a.example", DNS_TYPE_A, 0x1234, &res) == -EINVAL,
	   "a record longer than the message: refused");
	/* NXDOMAIN with an SOA: the negative TTL, bounded. */
	bn = query(r, "nope.example", DNS_TYPE_A);
	r[2] = 0x81, r[3] = 0x83, r[9] = 1;
	uint8_t soa[] = { 0xc0, 17, 0, 6, 0, 1, 0, 0, 0x0e, 0x10, 0, 24, 0xc0, 17, 0xc0, 17, 0, 0, 0, 1, 0, 0, 0, 1, 0,
			  0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 30 };
	memcpy(r + bn, soa, sizeof(soa));
	ok(dns_parse_response(r, bn + sizeof(soa), "nope.example", DNS_TYPE_A, 0x1234, &res) == 0 && res.rcode == 3 &&
		   res.ttl == 30,
	   "NXDOMAIN with an SOA: kept for its MINIMUM (%u)", res.ttl);
}

static void test_addresses(void)
{
	static const struct {
		const char *addr;
		bool special;
	} cases[] = {
		{ "127.0.0.1", true }, { "127.1.2.3", true }, { "0.0.0.0", true }, { "169.254.169.254", true },
		{ "224.0.0.1", true }, { "255.255.255.255", true }, { "::1", true }, { "::", true },
		{ "::ffff:127.0.0.1", true }, { "::ffff:169.254.169.254", true }, { "fe80::1", true }, { "ff02::1", true },
		{ "10.203.0.2", false }, { "192.168.1.1", false }, { "93.184.216.34", false }, { "2606:4700::1", false },
		{ "::ffff:93.184.216.34", false }, { "fd00::1", false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		uint8_t a[16] = { 0 };
		int family = strchr(cases[i].addr, ':') ? AF_INET6 : AF_INET;
		inet_pton(family, cases[i].addr, a);
		ok(relay_address_special(family, a) == cases[i].special, "%s: %s", cases[i].addr,
		   cases[i].special ? "never reached" : "may be reached");
	}
}

int main(void)
{
	test_tls();
	test_real_clients();
	test_sslv2();
	test_http();
	test_dns();
	test_addresses();
	return tap_done();
}
