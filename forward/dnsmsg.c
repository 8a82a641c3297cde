/* DNS messages, the few stockade reads and writes (RFC 1035 4.1): the
 * run's query, the answer it gets, stockade's own query to the host's
 * name server and that server's response. Pure: both the run and a name
 * server shape these bytes, so every offset is checked against the
 * message, a compressed name is followed a bounded number of times, and
 * a response is taken only for the very question asked. */
#include "forward/forward.h"

#include <arpa/inet.h>
#include <string.h>

#include "lib/dns.h"
#include "lib/util.h"

#define DNS_TYPE_CNAME 5
#define DNS_TYPE_SOA 6
/* A negative answer is kept no longer than this (RFC 2308 suggests
 * hours; a run that waits for a name to appear should see it soon). */
#define DNS_NEGATIVE_TTL_MAX 60
/* How many CNAMEs a chain may take. */
#define DNS_CHAIN_MAX 8

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* The name at off, compression followed (forward or backward, at most
 * 64 jumps), as lowercase text without its last dot ("" for the root)
 * into out (ALLOW_NAME_MAX + 1); *ret_next past it where it lies. False
 * for what is no name, or one with a byte a host name cannot hold (it
 * then matches no name of ours). */
static bool read_name(const uint8_t *m, size_t len, size_t off, char *out, size_t *ret_next, bool *ret_plain)
{
	size_t o = 0, at = off;
	int jumps = 0;
	bool jumped = false;
	bool plain = true;
	for (;;) {
		if (at >= len)
			return false;
		uint8_t l = m[at];
		if ((l & 0xc0) == 0xc0) {
			if (at + 1 >= len || ++jumps > 64)
				return false;
			if (!jumped)
				*ret_next = at + 2;
			jumped = true;
			at = (size_t)(l & 0x3f) << 8 | m[at + 1];
			continue;
		}
		if (l & 0xc0)
			return false;
		at++;
		if (l == 0)
			break;
		if (at + l > len)
			return false;
		if (o && o < ALLOW_NAME_MAX + 1)
			out[o++] = '.';
		for (size_t i = 0; i < l; i++) {
			uint8_t c = m[at + i];
			if (c >= 'A' && c <= 'Z')
				c = (uint8_t)(c - 'A' + 'a');
			if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
				plain = false;
			if (o >= ALLOW_NAME_MAX)
				return false;
			out[o++] = (char)c;
		}
		at += l;
	}
	if (!jumped)
		*ret_next = at;
	out[o] = '\0';
	*ret_plain = plain;
	return true;
}

int dns_parse_query(const void *msg, size_t len, struct dns_query *ret)
{
	const uint8_t *m = msg;
	*ret = (struct dns_query){ 0 };
	if (len < DNS_HEADER || (m[2] & 0x80))
		return -EINVAL;
	ret->id = get16(m);
	ret->rd = m[2] & 0x01;
	if ((m[2] & 0x78) != 0)
		return -ENOTSUP;
	if (get16(m + 4) != 1)
		return -EINVAL;
	size_t end = dns_question_name(m, len, ret->text, sizeof(ret->text));
	if (!end || end + 4 > len)
		return -EINVAL;
	ret->type = get16(m + end);
	ret->class_ = get16(m + end + 2);
	ret->question_end = end + 4;
	/* The name as the allow list compares it: a host name, or none. */
	char raw[ALLOW_NAME_MAX + 1];
	size_t next;
	bool plain;
	if (!read_name(m, len, DNS_HEADER, raw, &next, &plain) || !plain || next != end ||
	    allow_name_normalize(raw, ret->name) < 0)
		ret->name[0] = '\0';
	return 0;
}

int dns_build_answer(const void *query, size_t len, const struct dns_query *q, int rcode, const struct dns_addrs *a,
		     uint32_t ttl, void *reply, size_t size)
{
	uint8_t *r = reply;
	size_t n = q->question_end;
	if (n > len || n < DNS_HEADER)
		return -EINVAL;
	size_t rlen = a && rcode == DNS_RCODE_NOERROR ? (a->family == AF_INET ? 4 : 16) : 0;
	size_t count = rlen ? a->n : 0;
	if (n + count * (12 + rlen) > size)
		return -ENOSPC;
	memcpy(r, query, n);
	/* QR, the opcode as asked (standard), RD as asked, RA; no
	 * authority, no additional record (an EDNS query's OPT goes). */
	r[2] = (uint8_t)(0x80 | (q->rd ? 0x01 : 0));
	r[3] = (uint8_t)(0x80 | (rcode & 0x0f));
	put16(r + 4, 1);
	put16(r + 6, (uint16_t)count);
	put16(r + 8, 0);
	put16(r + 10, 0);
	for (size_t i = 0; i < count; i++) {
		uint8_t *rr = r + n;
		put16(rr, 0xc000 | DNS_HEADER);	/* the question's name */
		put16(rr + 2, a->family == AF_INET ? DNS_TYPE_A : DNS_TYPE_AAAA);
		put16(rr + 4, DNS_CLASS_IN);
		put32(rr + 6, ttl);
		put16(rr + 10, (uint16_t)rlen);
		memcpy(rr + 12, a->addr[i], rlen);
		n += 12 + rlen;
	}
	return (int)n;
}

int dns_build_query(const char *name, uint16_t type, uint16_t id, void *buf, size_t size)
{
	uint8_t *b = buf;
	size_t nl = strlen(name);
	size_t n = DNS_HEADER + nl + 2 + 4;
	if (n > size || nl > ALLOW_NAME_MAX)
		return -ENOSPC;
	memset(b, 0, DNS_HEADER);
	put16(b, id);
	b[2] = 0x01;	/* RD */
	put16(b + 4, 1);
	size_t at = DNS_HEADER;
	const char *p = name;
	while (*p) {
		const char *dot = strchr(p, '.');
		size_t l = dot ? (size_t)(dot - p) : strlen(p);
		if (l == 0 || l > 63)
			return -EINVAL;
		b[at++] = (uint8_t)l;
		memcpy(b + at, p, l);
		at += l;
		p += l + (dot ? 1 : 0);
	}
	b[at++] = 0;
	put16(b + at, type);
	put16(b + at + 2, DNS_CLASS_IN);
	return (int)(at + 4);
}

struct rr {
	char owner[ALLOW_NAME_MAX + 1];
	bool plain;
	uint16_t type, class_;
	uint32_t ttl;
	size_t rdata, rdlen;	/* where its data lies in the message */
};

/* The record at *at: false for what is none. */
static bool read_rr(const uint8_t *m, size_t len, size_t *at, struct rr *ret)
{
	size_t next;
	if (!read_name(m, len, *at, ret->owner, &next, &ret->plain) || next + 10 > len)
		return false;
	ret->type = get16(m + next);
	ret->class_ = get16(m + next + 2);
	ret->ttl = get32(m + next + 4);
	/* RFC 2181 8: a TTL with its top bit set is 0. */
	if (ret->ttl & 0x80000000u)
		ret->ttl = 0;
	ret->rdlen = get16(m + next + 8);
	ret->rdata = next + 10;
	if (ret->rdata + ret->rdlen > len)
		return false;
	*at = ret->rdata + ret->rdlen;
	return true;
}

int dns_parse_response(const void *msg, size_t len, const char *name, uint16_t type, uint16_t id,
		       struct dns_result *ret)
{
	const uint8_t *m = msg;
	*ret = (struct dns_result){ .addrs.family = type == DNS_TYPE_A ? AF_INET : AF_INET6 };
	if (len < DNS_HEADER || get16(m) != id || !(m[2] & 0x80) || (m[2] & 0x78) != 0)
		return -EINVAL;
	if (get16(m + 4) != 1)
		return -EINVAL;
	char qname[ALLOW_NAME_MAX + 1];
	size_t at;
	bool plain;
	if (!read_name(m, len, DNS_HEADER, qname, &at, &plain) || at + 4 > len || !streq(qname, name) ||
	    get16(m + at) != type || get16(m + at + 2) != DNS_CLASS_IN)
		return -EINVAL;
	at += 4;
	if (m[2] & 0x02)
		return -EAGAIN;
	ret->rcode = m[3] & 0x0f;
	size_t an = get16(m + 6), ns = get16(m + 8);
	/* The answer section, then the authority's SOA for a negative one. */
	struct rr answers[64];
	size_t n_answers = 0;
	for (size_t i = 0; i < an; i++) {
		struct rr rr;
		if (!read_rr(m, len, &at, &rr))
			return -EINVAL;
		if (n_answers < ARRAY_SIZE(answers) && rr.class_ == DNS_CLASS_IN)
			answers[n_answers++] = rr;
	}
	uint32_t soa_ttl = 0;
	bool soa = false;
	for (size_t i = 0; i < ns; i++) {
		struct rr rr;
		if (!read_rr(m, len, &at, &rr))
			break;	/* the answer stands without it */
		if (rr.type == DNS_TYPE_SOA && rr.rdlen >= 22) {
			/* Its MINIMUM is the last 4 bytes of its data. */
			uint32_t minimum = get32(m + rr.rdata + rr.rdlen - 4);
			soa_ttl = rr.ttl < minimum ? rr.ttl : minimum;
			soa = true;
		}
	}
	if (ret->rcode != DNS_RCODE_NOERROR && ret->rcode != DNS_RCODE_NXDOMAIN)
		return 0;
	/* From the name asked along its CNAMEs, the least TTL on the way. */
	char current[ALLOW_NAME_MAX + 1];
	memcpy(current, name, strlen(name) + 1);
	uint32_t ttl = UINT32_MAX;
	for (int hop = 0; hop <= DNS_CHAIN_MAX; hop++) {
		bool moved = false;
		for (size_t i = 0; i < n_answers && !moved; i++) {
			const struct rr *rr = &answers[i];
			if (rr->type != DNS_TYPE_CNAME || !rr->plain || !streq(rr->owner, current))
				continue;
			size_t next;
			char target[ALLOW_NAME_MAX + 1];
			if (!read_name(m, len, rr->rdata, target, &next, &plain) || !plain)
				return -EINVAL;
			memcpy(current, target, strlen(target) + 1);
			ttl = rr->ttl < ttl ? rr->ttl : ttl;
			moved = true;
		}
		if (!moved)
			break;
	}
	size_t rdlen = type == DNS_TYPE_A ? 4 : 16;
	for (size_t i = 0; i < n_answers; i++) {
		const struct rr *rr = &answers[i];
		if (rr->type != type || !rr->plain || !streq(rr->owner, current) || rr->rdlen != rdlen)
			continue;
		if (ret->addrs.n < RELAY_ADDRS_MAX) {
			memcpy(ret->addrs.addr[ret->addrs.n++], m + rr->rdata, rdlen);
			ttl = rr->ttl < ttl ? rr->ttl : ttl;
		}
	}
	if (ret->addrs.n) {
		ret->ttl = ret->addrs.ttl = ttl;
		return 0;
	}
	/* NXDOMAIN, or a name without addresses of the type (NODATA):
	 * kept as long as its SOA says, never long; without one, not kept. */
	ret->ttl = soa ? (soa_ttl < DNS_NEGATIVE_TTL_MAX ? soa_ttl : DNS_NEGATIVE_TTL_MAX) : 0;
	return 0;
}
