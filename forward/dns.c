/* The run's name lookups, answered by stockade: an allowed name's
 * addresses as the host's resolver gives them (A, AAAA), with what is
 * left of their time to live; any other type of an allowed name gets no
 * record (nothing of the run's question leaves: no TXT, no MX); every
 * other name NXDOMAIN at once, recorded with the fix. Nothing the run
 * writes in a query reaches a name server but a name the user allowed,
 * asked for its addresses by stockade's own query. */
#include "forward/relay-internal.h"

#include <unistd.h>

#include "lib/dns.h"
#include "lib/util.h"

static const char *type_name(uint16_t type, char *buf)
{
	switch (type) {
	case DNS_TYPE_A:
		return "A";
	case DNS_TYPE_AAAA:
		return "AAAA";
	case 5:
		return "CNAME";
	case 15:
		return "MX";
	case 16:
		return "TXT";
	case 33:
		return "SRV";
	case 64:
		return "SVCB";
	case 65:
		return "HTTPS";
	case 255:
		return "ANY";
	}
	char num[21];
	stpcpy(stpcpy(buf, "TYPE"), fmt_u64(num, type));
	return buf;
}

static void send_answer(int fd, const struct sockaddr_storage *to, socklen_t to_len, const void *msg, size_t len,
			const struct dns_query *q, int rcode, const struct dns_addrs *a, uint32_t ttl)
{
	uint8_t reply[12 + ALLOW_NAME_MAX * 2 + 8 + RELAY_ADDRS_MAX * 28];
	int n = dns_build_answer(msg, len, q, rcode, a, ttl, reply, sizeof(reply));
	if (n > 0)
		(void)sendto(fd, reply, (size_t)n, MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)to, to_len);
}

/* A name refused, recorded once per name with the rule and the fix. */
static void refused(struct relay *r, const struct dns_query *q, const char *type, const char *rule, const char *fix)
{
	const char *what = q->name[0] ? q->name : q->text[0] ? q->text : "(unreadable name)";
	report_name(r->rep, what, type, "refused: NXDOMAIN", NULL);
	report_denial_ruled(r->rep, "name", report_records_full(r->rep, "name", what) ? "(further names)" : what, "NXDOMAIN",
			    rule, r->source, fix);
}

/* The answer an entry of the cache gives q, the addresses handed out
 * and recorded. */
static void answer_from(struct relay *r, int fd, const struct sockaddr_storage *to, socklen_t to_len, const void *msg,
			size_t len, const struct dns_query *q, const struct rs_entry *e)
{
	char tbuf[32];
	const char *type = type_name(q->type, tbuf);
	uint32_t ttl = rs_ttl_left(e, now_usec());
	send_answer(fd, to, to_len, msg, len, q, e->rcode, &e->addrs, ttl);
	if (e->rcode != DNS_RCODE_NOERROR) {
		report_name(r->rep, q->name, type, e->rcode == DNS_RCODE_NXDOMAIN ? "answered: NXDOMAIN (the host's resolver)"
										: "answered: SERVFAIL (the host's resolver did not answer)",
			    NULL);
		return;
	}
	struct text t = { 0 };
	for (size_t i = 0; i < e->addrs.n; i++) {
		relay_hand(r, q->name, e->addrs.family, e->addrs.addr[i]);
		char ip[48];
		relay_addr_text(e->addrs.family, e->addrs.addr[i], ip, sizeof(ip));
		text_adds(&t, i ? ", " : "");
		text_adds(&t, ip);
	}
	char num[21];
	text_adds(&t, t.n ? " (TTL " : "no address (TTL ");
	text_adds(&t, fmt_u64(num, ttl));
	text_adds(&t, e->from_hosts ? ", /etc/hosts)" : ")");
	_cleanup_free_ char *answer = text_take(&t);
	report_name(r->rep, q->name, type, "answered", answer);
	if (e->n_forbidden) {
		/* An allowed name of this host's own, a link-local or loopback
		 * address: never reached through the relay. */
		_cleanup_free_ char *fix = xstrdup("none: network allow never reaches this host, loopback or link-local "
						   "addresses (a host's service: --connect)");
		report_denial_ruled(r->rep, "name", q->name, "addresses left out",
				    "network allow: a name's loopback, link-local and this host's own addresses are not "
				    "handed out",
				    r->source, fix);
	}
}

static void handle(struct relay *r, int fd, const struct sockaddr_storage *from, socklen_t from_len, const uint8_t *msg,
		   size_t len)
{
	struct dns_query q;
	int k = dns_parse_query(msg, len, &q);
	if (k == -ENOTSUP && len >= DNS_HEADER) {
		/* Another opcode (an update, a notify): not implemented. */
		uint8_t reply[DNS_HEADER] = { msg[0], msg[1], (uint8_t)(0x80 | (msg[2] & 0x79)), 0x80 | DNS_RCODE_NOTIMP };
		(void)sendto(fd, reply, sizeof(reply), MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)from, from_len);
		return;
	}
	if (k < 0) {
		/* A standard query whose question cannot be read (a label
		 * longer than 63 bytes, a name past the message): FORMERR, as
		 * a name server answers it, and nothing asked of anyone. */
		if (len >= DNS_HEADER && !(msg[2] & 0x80) && (msg[2] & 0x78) == 0) {
			uint8_t reply[DNS_HEADER] = { msg[0], msg[1], (uint8_t)(0x80 | (msg[2] & 0x01)), 0x80 | DNS_RCODE_FORMERR };
			(void)sendto(fd, reply, sizeof(reply), MSG_DONTWAIT | MSG_NOSIGNAL, (const struct sockaddr *)from,
				     from_len);
			report_name(r->rep, "(unreadable question)", "", "refused: FORMERR", NULL);
			report_denial_ruled(r->rep, "name", "(unreadable question)", "FORMERR",
					    "network allow: a question that is no host name (a label of 64 bytes or more)",
					    r->source, "none: no option makes it a host name");
		}
		return;
	}
	char tbuf[32];
	const char *type = type_name(q.type, tbuf);
	if (!q.name[0]) {
		/* A label with a byte no host name holds, or one too long:
		 * the shape of data smuggled in a name. */
		send_answer(fd, from, from_len, msg, len, &q, DNS_RCODE_NXDOMAIN, NULL, 0);
		refused(r, &q, type, "network allow: not a host name (letters, digits, '-' and '_' in labels)",
			"none: no option makes it a host name");
		return;
	}
	if (q.class_ != DNS_CLASS_IN || !allow_match(r->p->allow, r->p->n_allow, q.name, 0)) {
		send_answer(fd, from, from_len, msg, len, &q, DNS_RCODE_NXDOMAIN, NULL, 0);
		_cleanup_free_ char *fix = allow_fix_ini(q.name, 0);
		refused(r, &q, type, "network allow: not an allowed name", fix);
		return;
	}
	if (q.type != DNS_TYPE_A && q.type != DNS_TYPE_AAAA) {
		/* An allowed name, asked for another record: none (NOERROR,
		 * no answer), and nothing asked of the host's resolver. */
		send_answer(fd, from, from_len, msg, len, &q, DNS_RCODE_NOERROR, NULL, 0);
		report_name(r->rep, q.name, type, "answered: no record (stockade looks up addresses alone)", NULL);
		return;
	}
	struct rs_entry *e = rs_lookup(r, q.name, q.type);
	if (e && e->state == RS_DONE) {
		answer_from(r, fd, from, from_len, msg, len, &q, e);
		return;
	}
	if (!e || r->n_waits >= RELAY_WAITS_MAX || len > sizeof(r->waits[0].msg)) {
		send_answer(fd, from, from_len, msg, len, &q, DNS_RCODE_SERVFAIL, NULL, 0);
		report_name(r->rep, q.name, type, "answered: SERVFAIL (too many lookups at once)", NULL);
		return;
	}
	r->waits = xgrow(r->waits, r->n_waits, sizeof(*r->waits));
	struct dns_wait *w = &r->waits[r->n_waits++];
	*w = (struct dns_wait){ .fd = fd, .from_len = from_len, .len = len, .q = q };
	memcpy(&w->from, from, from_len);
	memcpy(w->msg, msg, len);
}

void dns_serve(struct relay *r, int fd)
{
	/* A bounded batch: the loop's other sockets get their turn. */
	for (int i = 0; i < 64; i++) {
		uint8_t msg[1024];
		struct sockaddr_storage from;
		socklen_t from_len = sizeof(from);
		ssize_t n = recvfrom(fd, msg, sizeof(msg), MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &from_len);
		if (n < 0)
			return;
		if ((size_t)n > sizeof(msg))
			continue;	/* larger than any question of one name */
		handle(r, fd, &from, from_len, msg, (size_t)n);
	}
}

void dns_answer_waiting(struct relay *r, struct rs_entry *e)
{
	for (size_t i = 0; i < r->n_waits;) {
		struct dns_wait *w = &r->waits[i];
		if (w->q.type != e->type || !streq(w->q.name, e->name)) {
			i++;
			continue;
		}
		answer_from(r, w->fd, &w->from, w->from_len, w->msg, w->len, &w->q, e);
		r->waits[i] = r->waits[--r->n_waits];
	}
}
