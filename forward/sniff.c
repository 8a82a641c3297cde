/* The first bytes of a connection, read for the name it carries: a TLS
 * ClientHello's server name (RFC 8446 4.1.2, RFC 6066 3), nothing
 * decrypted, or an HTTP/1 request's Host (RFC 9112 3.2). Pure: the
 * command shapes these bytes, so every length is checked against what
 * holds it, every count bounded, and what a server would read two ways
 * (two server names, two Hosts, an absolute target that says another
 * host, an encrypted ClientHello, the SSLv2 form of one) is refused
 * rather than guessed at. */
#include "forward/forward.h"

#include <stdint.h>
#include <string.h>

#define TLS_HANDSHAKE 22
#define TLS_CLIENT_HELLO 1
#define TLS_RECORD_HEADER 5
#define TLS_RECORD_MAX 16384	/* a TLSPlaintext fragment's limit (RFC 8446 5.1) */
#define SSL2_CLIENT_HELLO 1	/* SSL2_MT_CLIENT_HELLO */
#define EXT_SERVER_NAME 0x0000
#define EXT_ECH 0xfe0d		/* encrypted_client_hello (draft-ietf-tls-esni) */
#define EXT_ECH_OLD 0xffce	/* encrypted_server_name, its older draft */

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void bad(struct relay_sniffed *r, const char *why)
{
	*r = (struct relay_sniffed){ .kind = SNIFF_BAD, .why = why };
}

static void more(struct relay_sniffed *r, size_t need)
{
	/* Records of a byte each would make a ClientHello six times its
	 * size: what is past the peek's bound is refused, not waited for. */
	if (need > RELAY_PEEK_MAX) {
		bad(r, "a first message spread over more bytes than the relay reads");
		return;
	}
	*r = (struct relay_sniffed){ .kind = SNIFF_MORE, .need = need };
}

/* A name as written in a server name or a Host: a host name, which the
 * allow list compares (an address has none). True when it is one. */
static bool take_name(const uint8_t *p, size_t n, struct relay_sniffed *r)
{
	char text[ALLOW_NAME_MAX + 2];
	if (n == 0 || n > ALLOW_NAME_MAX + 1)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == 0)
			return false;
		text[i] = (char)p[i];
	}
	text[n] = '\0';
	return allow_name_normalize(text, r->name) == 0;
}

/* ---- TLS ---- */

/* The handshake bytes of the records in buf, joined into hs (at most
 * RELAY_HELLO_MAX): how many, or -1 with r said (more, or bad). Records
 * of another type before the ClientHello is whole are refused: a server
 * reads no alert or data before it. */
static long join_records(const uint8_t *b, size_t len, uint8_t *hs, struct relay_sniffed *r)
{
	size_t at = 0, got = 0;
	size_t want = 0;	/* the ClientHello's length with its header, once known */
	for (;;) {
		if (want && got >= want)
			return (long)got;
		if (at + TLS_RECORD_HEADER > len) {
			more(r, at + TLS_RECORD_HEADER);
			return -1;
		}
		const uint8_t *h = b + at;
		if (h[0] != TLS_HANDSHAKE) {
			bad(r, "a TLS record that is not a handshake before the ClientHello is whole");
			return -1;
		}
		if (h[1] != 3 || h[2] > 4) {
			bad(r, "a TLS record of no version this relay knows");
			return -1;
		}
		size_t frag = get16(h + 3);
		if (frag == 0 || frag > TLS_RECORD_MAX) {
			bad(r, frag ? "a TLS record longer than 16 KiB" : "an empty TLS handshake record");
			return -1;
		}
		if (at + TLS_RECORD_HEADER + frag > len) {
			more(r, at + TLS_RECORD_HEADER + frag);
			return -1;
		}
		if (got + frag > RELAY_HELLO_MAX + 4) {
			bad(r, "a ClientHello longer than the relay reads");
			return -1;
		}
		memcpy(hs + got, h + TLS_RECORD_HEADER, frag);
		got += frag;
		at += TLS_RECORD_HEADER + frag;
		if (!want && got >= 4) {
			if (hs[0] != TLS_CLIENT_HELLO) {
				bad(r, "a TLS handshake that does not begin with a ClientHello");
				return -1;
			}
			want = 4 + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3]);
			if (want > RELAY_HELLO_MAX + 4) {
				bad(r, "a ClientHello longer than the relay reads");
				return -1;
			}
		}
	}
}

/* The server_name extension's body: one host_name, nothing else. */
static void server_name(const uint8_t *p, size_t n, struct relay_sniffed *r)
{
	if (n < 2 || get16(p) != n - 2) {
		bad(r, "a server_name extension whose length does not add up");
		return;
	}
	size_t at = 2;
	bool seen = false;
	while (at < n) {
		if (at + 3 > n) {
			bad(r, "a server_name entry cut short");
			return;
		}
		uint8_t type = p[at];
		size_t len = get16(p + at + 1);
		at += 3;
		if (at + len > n) {
			bad(r, "a server_name entry longer than its list");
			return;
		}
		if (type == 0) {
			/* RFC 6066: one name of a type; two would be read as
			 * either by a server. */
			if (seen) {
				bad(r, "two host names in one server_name extension");
				return;
			}
			seen = true;
			if (!take_name(p + at, len, r)) {
				bad(r, "a server name that is not a host name (RFC 6066: no address, no trailing dot)");
				return;
			}
		}
		at += len;
	}
	if (!seen) {
		bad(r, "a server_name extension without a host name");
		return;
	}
	r->kind = SNIFF_TLS;
}

static void client_hello(const uint8_t *m, size_t len, struct relay_sniffed *r)
{
	/* legacy_version, random, session id, cipher suites, compression
	 * methods, then the extensions. */
	size_t at = 2 + 32;
	if (at + 1 > len)
		goto short_;
	size_t sid = m[at];
	if (sid > 32) {
		bad(r, "a ClientHello's session id longer than 32 bytes");
		return;
	}
	at += 1 + sid;
	if (at + 2 > len)
		goto short_;
	size_t suites = get16(m + at);
	if (suites < 2 || suites % 2) {
		bad(r, "a ClientHello's cipher suites of an odd or empty length");
		return;
	}
	at += 2 + suites;
	if (at + 1 > len)
		goto short_;
	size_t comp = m[at];
	if (comp < 1) {
		bad(r, "a ClientHello without a compression method");
		return;
	}
	at += 1 + comp;
	if (at > len)
		goto short_;
	*r = (struct relay_sniffed){ .kind = SNIFF_TLS };
	if (at == len)
		return;	/* no extension at all: no name */
	if (at + 2 > len)
		goto short_;
	size_t exts = get16(m + at);
	at += 2;
	if (at + exts != len) {
		bad(r, "a ClientHello whose extensions do not end where it does");
		return;
	}
	bool named = false;
	/* Each type once (RFC 8446 4.2): a second server_name would be
	 * read by one server and not by another. 65536 bits of types. */
	uint8_t seen[8192] = { 0 };
	while (at < len) {
		if (at + 4 > len)
			goto short_;
		uint16_t type = get16(m + at);
		size_t elen = get16(m + at + 2);
		at += 4;
		if (at + elen > len) {
			bad(r, "a ClientHello extension longer than the ClientHello");
			return;
		}
		if (seen[type >> 3] & (1u << (type & 7))) {
			bad(r, type == EXT_SERVER_NAME ? "two server_name extensions in one ClientHello"
						       : "an extension twice in one ClientHello");
			return;
		}
		seen[type >> 3] |= (uint8_t)(1u << (type & 7));
		if (type == EXT_ECH || type == EXT_ECH_OLD) {
			/* The name that counts is inside, encrypted for the
			 * server at the outer name: a front for any other. */
			bad(r, "an encrypted ClientHello (ECH): the server name that counts is hidden inside it");
			return;
		}
		if (type == EXT_SERVER_NAME) {
			struct relay_sniffed named_r;
			server_name(m + at, elen, &named_r);
			if (named_r.kind == SNIFF_BAD) {
				*r = named_r;
				return;
			}
			memcpy(r->name, named_r.name, sizeof(r->name));
			named = true;
		}
		at += elen;
	}
	r->kind = SNIFF_TLS;
	if (!named)
		r->name[0] = '\0';
	return;
short_:
	bad(r, "a ClientHello cut short");
}

static void sniff_tls(const uint8_t *b, size_t len, struct relay_sniffed *r)
{
	/* What the records carry, joined: RELAY_HELLO_MAX and the header,
	 * and one record's worth beyond, which join_records never fills. */
	uint8_t hs[RELAY_HELLO_MAX + 4 + TLS_RECORD_MAX];
	long got = join_records(b, len, hs, r);
	if (got < 0)
		return;
	size_t body = (size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3];
	client_hello(hs + 4, body, r);
}

/* ---- HTTP/1 ---- */

static bool tchar(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("!#$%&'*+-.^_`|~", c);
}

static bool ieq(const uint8_t *p, size_t n, const char *s)
{
	if (strlen(s) != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = p[i];
		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c - 'A' + 'a');
		if (c != (uint8_t)s[i])
			return false;
	}
	return true;
}

/* host[:port] or [v6][:port]: the name (an address gives none, with
 * *ret_literal) and the port (0: none). False for what is neither. */
static bool authority(const uint8_t *p, size_t n, struct relay_sniffed *r, unsigned short *ret_port, bool *ret_literal)
{
	*ret_port = 0;
	*ret_literal = false;
	size_t host_end = n;
	if (n && p[0] == '[') {
		const uint8_t *close = memchr(p, ']', n);
		if (!close)
			return false;
		*ret_literal = true;
		host_end = (size_t)(close - p) + 1;
	} else {
		const uint8_t *colon = memchr(p, ':', n);
		if (colon)
			host_end = (size_t)(colon - p);
	}
	if (host_end < n) {
		if (p[host_end] != ':' || host_end + 1 == n || n - host_end - 1 > 5)
			return false;
		unsigned long v = 0;
		for (size_t i = host_end + 1; i < n; i++) {
			if (p[i] < '0' || p[i] > '9')
				return false;
			v = v * 10 + (unsigned long)(p[i] - '0');
		}
		if (v == 0 || v > 65535)
			return false;
		*ret_port = (unsigned short)v;
	}
	if (*ret_literal)
		return true;
	if (host_end == 0)
		return false;
	/* An IPv4 literal is no name either. */
	bool digits = true;
	for (size_t i = 0; i < host_end; i++)
		digits = digits && ((p[i] >= '0' && p[i] <= '9') || p[i] == '.');
	if (digits) {
		*ret_literal = true;
		return true;
	}
	return take_name(p, host_end, r);
}

/* Bytes a lenient server skips before a request line, or takes for the
 * space between its words (RFC 9112 2.2, 3: empty lines before it; SP,
 * HTAB, VT, FF, bare CR between words). */
static bool http_space(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}

/* The methods a server knows, in any case: a first line that starts with
 * one is a request line, HTTP/1.x or not. */
static bool http_method(const uint8_t *p, size_t n)
{
	static const char *const known[] = { "get", "head", "post", "put", "delete", "connect", "options", "trace",
					     "patch", "pri" };
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (ieq(p, n, known[i]))
			return true;
	return false;
}

static bool has_http_slash(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i + 5 <= n; i++)
		if (ieq(p + i, 5, "http/"))
			return true;
	return false;
}

/* The next line of b from at: its length without a CR before its LF,
 * the offset past its LF. False when no LF is there yet. */
static bool next_line(const uint8_t *b, size_t len, size_t at, size_t *ret_len, size_t *ret_next)
{
	const uint8_t *lf = memchr(b + at, '\n', len - at);
	if (!lf)
		return false;
	size_t n = (size_t)(lf - (b + at));
	*ret_next = at + n + 1;
	if (n && b[at + n - 1] == '\r')
		n--;
	*ret_len = n;
	return true;
}

/* An HTTP/1 request from b: what a lenient server would take for one
 * (empty lines before it, bare LF for CRLF, a method in any case) is
 * read as one, and read strictly: what such a server could read another
 * way than this reader is refused, never passed on as another protocol.
 * Only a first line that is no request line at all (an ssh banner) is
 * another protocol. */
static void sniff_http(const uint8_t *b, size_t len, struct relay_sniffed *r)
{
	/* Empty lines, and whitespace, before the request line. */
	size_t start = 0;
	while (start < len && (http_space(b[start]) || b[start] == '\n'))
		start++;
	if (start == len) {
		if (len >= RELAY_HEAD_MAX)
			bad(r, "an HTTP request head longer than the relay reads");
		else
			more(r, len + 1);
		return;
	}
	/* The method: a token, ended by a space. Anything else ending it
	 * (GET/, SSH-2.0-x\n is still a token) is no request line. */
	size_t at = start;
	while (at < len && tchar(b[at]))
		at++;
	if (at == start || (at < len && !http_space(b[at]) && b[at] != '\n')) {
		*r = (struct relay_sniffed){ .kind = SNIFF_OTHER };
		return;
	}
	/* The first line, whole: what it says decides. */
	size_t line, at_line;
	if (!next_line(b, len, start, &line, &at_line)) {
		if (len >= RELAY_HEAD_MAX)
			bad(r, "an HTTP request head longer than the relay reads");
		else
			more(r, len + 1);
		return;
	}
	const uint8_t *l = b + start;
	size_t mlen = at - start;
	if (!http_method(l, mlen) && !has_http_slash(l, line)) {
		/* Neither a method a server knows nor a version: a banner
		 * (ssh's), a command of another protocol. */
		*r = (struct relay_sniffed){ .kind = SNIFF_OTHER };
		return;
	}
	if (ieq(l, mlen, "pri") && has_http_slash(l, line)) {
		bad(r, "HTTP/2 with prior knowledge (h2c): its host is in a compressed HEADERS frame the relay does not "
		       "read");
		return;
	}
	/* The head, whole: up to the empty line. */
	size_t head = at_line;
	for (;;) {
		size_t n, next;
		if (!next_line(b, len, head, &n, &next)) {
			if (len >= RELAY_HEAD_MAX)
				bad(r, "an HTTP request head longer than the relay reads");
			else
				more(r, len + 1);
			return;
		}
		head = next;
		if (n == 0)
			break;
		if (head - start > RELAY_HEAD_MAX) {
			bad(r, "an HTTP request head longer than the relay reads");
			return;
		}
	}
	/* The request line: method SP target SP HTTP/1.x, nothing looser. */
	if (at == start + line || l[mlen] != ' ') {
		bad(r, "an HTTP request line that is not METHOD TARGET HTTP/1.x");
		return;
	}
	const uint8_t *target = l + mlen + 1;
	const uint8_t *sp = memchr(target, ' ', line - mlen - 1);
	if (!sp || line - (size_t)(sp + 1 - l) != 8 || memcmp(sp + 1, "HTTP/1.", 7) != 0 ||
	    (sp[8] != '0' && sp[8] != '1')) {
		bad(r, "an HTTP request line that is not METHOD TARGET HTTP/1.x (HTTP/0.9 and HTTP/2 name no host the relay "
		       "reads)");
		return;
	}
	bool connect = ieq(l, mlen, "connect");
	size_t tlen = (size_t)(sp - target);
	for (size_t i = 0; i < tlen; i++)
		if (target[i] <= 0x20 || target[i] >= 0x7f) {
			bad(r, "an HTTP request target with a space or a control byte");
			return;
		}
	/* What the target names, where it names a host: CONNECT's
	 * authority, or an absolute URI's (a proxy's form, which a server
	 * obeys over Host). */
	struct relay_sniffed named = { .kind = SNIFF_HTTP };
	bool target_names = false, target_literal = false;
	unsigned short target_port = 0;
	if (connect) {
		if (!authority(target, tlen, &named, &target_port, &target_literal) || !target_port) {
			bad(r, "a CONNECT whose target is not HOST:PORT");
			return;
		}
		target_names = true;
	} else if (tlen >= 7 && (ieq(target, 7, "http://") || (tlen >= 8 && ieq(target, 8, "https://")))) {
		size_t skip = ieq(target, 7, "http://") ? 7 : 8;
		const uint8_t *a = target + skip;
		size_t alen = tlen - skip;
		const uint8_t *slash = memchr(a, '/', alen);
		const uint8_t *q = memchr(a, '?', alen);
		if (slash && (!q || slash < q))
			alen = (size_t)(slash - a);
		else if (q)
			alen = (size_t)(q - a);
		if (memchr(a, '@', alen) || !authority(a, alen, &named, &target_port, &target_literal)) {
			bad(r, "an HTTP request's absolute target without a plain host");
			return;
		}
		target_names = true;
	}
	/* The fields: name ":" value, no folding; Host once. Each ends at
	 * its LF (a CR before it dropped): a CR anywhere else is refused,
	 * as one server would end the line there and another would not. */
	bool host_seen = false, host_literal = false;
	unsigned short host_port = 0;
	struct relay_sniffed host = { .kind = SNIFF_HTTP };
	for (;;) {
		size_t ll, next;
		(void)next_line(b, head, at_line, &ll, &next);
		const uint8_t *f = b + at_line;
		at_line = next;
		if (ll == 0)
			break;
		if (memchr(f, '\r', ll)) {
			bad(r, "an HTTP field line with a CR not before its LF (CRLF)");
			return;
		}
		if (f[0] == ' ' || f[0] == '\t') {
			bad(r, "an HTTP field folded onto a second line");
			return;
		}
		const uint8_t *colon = memchr(f, ':', ll);
		if (!colon || colon == f) {
			bad(r, "an HTTP field line without a name and a colon");
			return;
		}
		size_t nl = (size_t)(colon - f);
		for (size_t i = 0; i < nl; i++)
			if (!tchar(f[i])) {
				bad(r, "an HTTP field name with a space or a byte a name cannot hold");
				return;
			}
		for (size_t i = nl + 1; i < ll; i++)
			if ((f[i] < 0x20 && f[i] != '\t') || f[i] == 0x7f) {
				bad(r, "an HTTP field value with a control byte");
				return;
			}
		if (!ieq(f, nl, "host"))
			continue;
		if (host_seen) {
			bad(r, "two Host fields in one HTTP request");
			return;
		}
		host_seen = true;
		const uint8_t *v = colon + 1;
		size_t vl = ll - nl - 1;
		while (vl && (*v == ' ' || *v == '\t'))
			v++, vl--;
		while (vl && (v[vl - 1] == ' ' || v[vl - 1] == '\t'))
			vl--;
		if (!authority(v, vl, &host, &host_port, &host_literal)) {
			bad(r, "an HTTP Host that is not HOST[:PORT]");
			return;
		}
	}
	if (target_names) {
		/* Both say a host: they must say the same one. */
		if (host_seen && (host_literal != target_literal || strcmp(host.name, named.name) != 0)) {
			bad(r, "an HTTP request whose target names another host than its Host field");
			return;
		}
		*r = named;
		r->port = target_port;
		r->literal = target_literal;
		return;
	}
	*r = host;
	r->port = host_port;
	r->literal = host_literal;
	if (!host_seen)
		r->name[0] = '\0';
}

void relay_sniff(const void *buf, size_t len, struct relay_sniffed *ret)
{
	const uint8_t *b = buf;
	if (len == 0) {
		more(ret, 1);
		return;
	}
	if (b[0] == TLS_HANDSHAKE) {
		sniff_tls(b, len, ret);
		return;
	}
	/* The SSLv2 form of a ClientHello (a two-byte record header with
	 * its top bit set, then message type 1), which OpenSSL's servers
	 * still read to begin TLS 1.2: it has no extensions, so no server
	 * name, and the server's default site would answer. */
	if (b[0] & 0x80) {
		if (len < 3)
			more(ret, 3);
		else if (b[2] == SSL2_CLIENT_HELLO)
			bad(ret, "an SSLv2-format ClientHello: it carries no server name, and the server's default site would "
				 "answer");
		else
			*ret = (struct relay_sniffed){ .kind = SNIFF_OTHER };
		return;
	}
	sniff_http(b, len, ret);
}
