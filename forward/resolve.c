/* The host's resolver, for the allowed names alone, asked without
 * blocking stockade's loop: /etc/hosts first (as "hosts: files dns"
 * does), then the name servers of /etc/resolv.conf in its order, with
 * its timeout and attempts, over UDP and over TCP for an answer that did
 * not fit. Each answer is kept for its time to live and no longer (a
 * negative one for its SOA's, a minute at most), and handed to the run
 * with what is left of it. Only A and AAAA questions of allowed names
 * ever leave: nothing the run writes reaches a name server but a name
 * the user allowed. */
#include "forward/relay-internal.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <sys/random.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/util.h"

#define RESOLV_CONF "/etc/resolv.conf"
#define HOSTS_FILE "/etc/hosts"
#define RESOLV_TIMEOUT_DEFAULT 5	/* seconds: glibc's RES_TIMEOUT */
#define RESOLV_ATTEMPTS_DEFAULT 2	/* glibc's RES_DFLRETRY */
#define RESOLV_TTL_MAX (24u * 3600)
#define TCP_ANSWER_MAX (65535 + 2)

static void add_server(struct relay *r, const char *text)
{
	if (r->n_servers >= RELAY_SERVERS_MAX)
		return;
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV, .ai_socktype = SOCK_DGRAM };
	struct addrinfo *ai = NULL;
	if (getaddrinfo(text, "53", &hints, &ai) != 0 || !ai)
		return;
	if (ai->ai_addrlen <= sizeof(r->servers[0].addr)) {
		memcpy(&r->servers[r->n_servers].addr, ai->ai_addr, ai->ai_addrlen);
		r->servers[r->n_servers++].len = ai->ai_addrlen;
	}
	freeaddrinfo(ai);
}

/* resolv.conf as the C library reads it: nameserver lines (three at
 * most), options timeout:N and attempts:N; none at all is 127.0.0.1. */
static void configure(struct relay *r)
{
	if (r->configured)
		return;
	r->configured = true;
	r->timeout_usec = RESOLV_TIMEOUT_DEFAULT * 1000000u;
	r->attempts = RESOLV_ATTEMPTS_DEFAULT;
	_cleanup_free_ char *text = NULL;
	if (read_file_at(AT_FDCWD, RESOLV_CONF, 1 << 16, &text, NULL) == 0) {
		char *save = NULL;
		for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *save2 = NULL;
			char *word = strtok_r(line, " \t\r", &save2);
			if (!word || word[0] == '#' || word[0] == ';')
				continue;
			if (streq(word, "nameserver")) {
				char *addr = strtok_r(NULL, " \t\r", &save2);
				if (addr)
					add_server(r, addr);
			} else if (streq(word, "options")) {
				for (char *o = strtok_r(NULL, " \t\r", &save2); o; o = strtok_r(NULL, " \t\r", &save2)) {
					unsigned long v = 0;
					if (str_has_prefix(o, "timeout:") && (v = strtoul(o + 8, NULL, 10)) >= 1 && v <= 30)
						r->timeout_usec = (unsigned)v * 1000000u;
					else if (str_has_prefix(o, "attempts:") && (v = strtoul(o + 9, NULL, 10)) >= 1 && v <= 5)
						r->attempts = (unsigned)v;
				}
			}
		}
	}
	if (!r->n_servers)
		add_server(r, "127.0.0.1");
}

uint32_t rs_ttl_left(const struct rs_entry *e, unsigned long long now)
{
	if (e->expires <= now)
		return 0;
	unsigned long long s = (e->expires - now + 999999) / 1000000;
	return s > RESOLV_TTL_MAX ? RESOLV_TTL_MAX : (uint32_t)s;
}

static void entry_close(struct rs_entry *e)
{
	if (e->fd >= 0)
		close(e->fd);
	e->fd = -1;
	free(e->in);
	e->in = NULL;
	e->in_have = 0;
}

/* An entry's UDP socket, its answer read: kept for the server's next
 * question where there is room. */
static void entry_idle(struct relay *r, struct rs_entry *e)
{
	if (e->fd >= 0 && !e->tcp && r->n_idle[e->server] < RELAY_IDLE_MAX) {
		r->idle[e->server][r->n_idle[e->server]++] = e->fd;
		e->fd = -1;
	}
	entry_close(e);
}

static void unpend(struct relay *r, struct rs_entry *e)
{
	for (size_t i = 0; i < r->n_pending; i++)
		if (r->pending[i] == e) {
			r->pending[i] = r->pending[--r->n_pending];
			return;
		}
}

/* The addresses a connection may go to, of those the answer gave. */
static void keep_allowed(struct relay *r, struct rs_entry *e, const struct dns_addrs *a)
{
	e->addrs = (struct dns_addrs){ .family = a->family, .ttl = a->ttl };
	e->n_forbidden = 0;
	for (size_t i = 0; i < a->n; i++) {
		if (relay_forbidden(r, a->family, a->addr[i])) {
			e->n_forbidden++;
			continue;
		}
		memcpy(e->addrs.addr[e->addrs.n++], a->addr[i], 16);
	}
}

/* Answered (or failed): kept for ttl seconds; what waits on it goes on,
 * unless the caller is rs_lookup's, which has the answer at once. */
static void settle(struct relay *r, struct rs_entry *e, int rcode, const struct dns_addrs *a, uint32_t ttl, bool notify)
{
	if (a && rcode != DNS_RCODE_SERVFAIL)
		entry_idle(r, e);
	else
		entry_close(e);
	unpend(r, e);
	unsigned long long now = now_usec();
	e->state = RS_DONE;
	e->rcode = rcode;
	if (a)
		keep_allowed(r, e, a);
	else
		e->addrs = (struct dns_addrs){ .family = e->type == DNS_TYPE_A ? AF_INET : AF_INET6 };
	if (ttl > RESOLV_TTL_MAX)
		ttl = RESOLV_TTL_MAX;
	e->expires = now + (unsigned long long)ttl * 1000000;
	if (notify)
		relay_resolved(r, e);
}

static void finish(struct relay *r, struct rs_entry *e, int rcode, const struct dns_addrs *a, uint32_t ttl)
{
	settle(r, e, rcode, a, ttl, true);
}

/* /etc/hosts, for name: true when it names it (its addresses of the
 * entry's type into a, maybe none). */
static bool from_hosts(const char *name, uint16_t type, struct dns_addrs *a)
{
	_cleanup_free_ char *text = NULL;
	if (read_file_at(AT_FDCWD, HOSTS_FILE, 1 << 20, &text, NULL) < 0)
		return false;
	int family = type == DNS_TYPE_A ? AF_INET : AF_INET6;
	*a = (struct dns_addrs){ .family = family };
	bool named = false;
	char *save = NULL;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *save2 = NULL;
		char *addr = strtok_r(line, " \t\r", &save2);
		if (!addr)
			continue;
		bool here = false;
		for (char *n = strtok_r(NULL, " \t\r", &save2); n && !here; n = strtok_r(NULL, " \t\r", &save2)) {
			char norm[ALLOW_NAME_MAX + 1];
			here = allow_name_normalize(n, norm) == 0 && streq(norm, name);
		}
		if (!here)
			continue;
		named = true;
		uint8_t buf[16] = { 0 };
		if (inet_pton(family, addr, buf) == 1 && a->n < RELAY_ADDRS_MAX)
			memcpy(a->addr[a->n++], buf, 16);
	}
	return named;
}

/* The next try: the next server (each tried in turn, attempts times),
 * over UDP from a port of the kernel's choosing and a fresh id. False
 * when none is left. */
static bool send_try(struct relay *r, struct rs_entry *e)
{
	unsigned long long now = now_usec();
	while (e->tries < r->attempts * r->n_servers) {
		e->server = e->tries % r->n_servers;
		const struct rs_server *s = &r->servers[e->server];
		e->tries++;
		entry_close(e);
		e->tcp = e->tcp_sent = false;
		uint16_t id;
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = (uint16_t)(now ^ (now >> 16));
		e->id = id;
		int n = dns_build_query(e->name, e->type, id, e->query + 2, sizeof(e->query) - 2);
		if (n < 0)
			return false;
		e->query_len = (size_t)n;
		/* Connected: the kernel takes datagrams from that server
		 * alone, and the id and question are checked besides. One
		 * kept from an earlier answer saves making another; a late
		 * answer to that earlier question waiting on it is not this
		 * one's (its id and question differ). */
		int fd = r->n_idle[e->server] ? r->idle[e->server][--r->n_idle[e->server]] : -1;
		if (fd < 0 && (fd = socket(s->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) >= 0 &&
		    connect(fd, (const struct sockaddr *)&s->addr, s->len) < 0) {
			close(fd);
			fd = -1;
		}
		if (fd < 0)
			continue;
		if (send(fd, e->query + 2, e->query_len, 0) < 0) {
			close(fd);
			continue;
		}
		e->fd = fd;
		e->deadline = now + r->timeout_usec;
		return true;
	}
	return false;
}

/* The same question over TCP to the server that said its answer did
 * not fit. */
static bool send_tcp(struct relay *r, struct rs_entry *e)
{
	const struct rs_server *s = &r->servers[e->server];
	entry_close(e);
	int fd = socket(s->addr.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return false;
	if (connect(fd, (const struct sockaddr *)&s->addr, s->len) < 0 && errno != EINPROGRESS) {
		close(fd);
		return false;
	}
	e->fd = fd;
	e->tcp = true;
	e->tcp_sent = false;
	e->in = xmalloc(TCP_ANSWER_MAX);
	e->in_have = 0;
	e->deadline = now_usec() + r->timeout_usec;
	return true;
}

static struct rs_entry *find(struct relay *r, const char *name, uint16_t type)
{
	for (size_t i = 0; i < r->n_entries; i++)
		if (r->entries[i].type == type && streq(r->entries[i].name, name))
			return &r->entries[i];
	return NULL;
}

struct rs_entry *rs_find(struct relay *r, const char *name, uint16_t type)
{
	struct rs_entry *e = find(r, name, type);
	return e && (e->state == RS_PENDING || e->expires > now_usec()) ? e : NULL;
}

/* A slot for a new entry: a free one, or an answer that has expired, or
 * the one that expires first. The entries never move (an entry's
 * answer reaches queries and connections that may ask for another): all
 * of them are allocated at once, untouched pages costing nothing. */
static struct rs_entry *slot(struct relay *r, unsigned long long now)
{
	if (!r->entries)
		r->entries = xcalloc(RELAY_ENTRIES_MAX, sizeof(*r->entries));
	if (r->n_entries < RELAY_ENTRIES_MAX)
		return &r->entries[r->n_entries++];
	struct rs_entry *best = NULL;
	for (size_t i = 0; i < r->n_entries; i++) {
		struct rs_entry *e = &r->entries[i];
		if (e->state != RS_DONE)
			continue;
		if (!best || e->expires < best->expires)
			best = e;
		if (e->expires <= now)
			break;
	}
	return best;
}

struct rs_entry *rs_lookup(struct relay *r, const char *name, uint16_t type)
{
	unsigned long long now = now_usec();
	struct rs_entry *e = find(r, name, type);
	if (e && (e->state == RS_PENDING || e->expires > now))
		return e;
	if (r->n_pending >= RELAY_PENDING_MAX || (!e && !(e = slot(r, now))))
		return NULL;
	configure(r);
	*e = (struct rs_entry){ .type = type, .state = RS_PENDING, .fd = -1, .asked = now };
	memcpy(e->name, name, strlen(name) + 1);
	struct dns_addrs a;
	if (from_hosts(name, type, &a)) {
		/* The hosts file is read again at the next look-up: no TTL. */
		e->from_hosts = true;
		settle(r, e, DNS_RCODE_NOERROR, &a, 0, false);
		return e;
	}
	r->pending[r->n_pending++] = e;
	if (!send_try(r, e))
		settle(r, e, DNS_RCODE_SERVFAIL, NULL, 0, false);
	return e;
}

size_t rs_pollfds(const struct relay *r, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n_pending && n < max; i++) {
		const struct rs_entry *e = r->pending[i];
		if (e->fd >= 0)
			fds[n++] = (struct pollfd){ .fd = e->fd, .events = e->tcp && !e->tcp_sent ? POLLOUT : POLLIN };
	}
	return n;
}

/* An answer to the question: finished, or the next server asked where
 * this one failed. */
static void answered(struct relay *r, struct rs_entry *e, const struct dns_result *res)
{
	if (res->rcode == DNS_RCODE_NOERROR || res->rcode == DNS_RCODE_NXDOMAIN) {
		finish(r, e, res->rcode, &res->addrs, res->addrs.n ? res->addrs.ttl : res->ttl);
		return;
	}
	/* SERVFAIL, REFUSED, ...: the next server, as the C library does. */
	if (!send_try(r, e))
		finish(r, e, DNS_RCODE_SERVFAIL, NULL, 0);
}

static void read_udp(struct relay *r, struct rs_entry *e)
{
	for (;;) {
		uint8_t buf[4096];
		ssize_t n = recv(e->fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return;
			/* ECONNREFUSED: nobody at that server; the next. */
			if (!send_try(r, e))
				finish(r, e, DNS_RCODE_SERVFAIL, NULL, 0);
			return;
		}
		struct dns_result res;
		int k = dns_parse_response(buf, (size_t)n, e->name, e->type, e->id, &res);
		if (k == -EINVAL)
			continue;	/* not the answer to this question: still waiting */
		if (k == -EAGAIN) {
			if (!send_tcp(r, e) && !send_try(r, e))
				finish(r, e, DNS_RCODE_SERVFAIL, NULL, 0);
			return;
		}
		answered(r, e, &res);
		return;
	}
}

static void tcp_io(struct relay *r, struct rs_entry *e, short revents)
{
	if (!e->tcp_sent) {
		if (!(revents & (POLLOUT | POLLERR | POLLHUP)))
			return;
		e->query[0] = (uint8_t)(e->query_len >> 8);
		e->query[1] = (uint8_t)e->query_len;
		ssize_t n = send(e->fd, e->query, e->query_len + 2, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n != (ssize_t)(e->query_len + 2)) {
			if (!send_try(r, e))
				finish(r, e, DNS_RCODE_SERVFAIL, NULL, 0);
			return;
		}
		e->tcp_sent = true;
		return;
	}
	ssize_t n = recv(e->fd, e->in + e->in_have, TCP_ANSWER_MAX - e->in_have, MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		if (!send_try(r, e))
			finish(r, e, DNS_RCODE_SERVFAIL, NULL, 0);
		return;
	}
	e->in_have += (size_t)n;
	if (e->in_have < 2)
		return;
	size_t want = (size_t)e->in[0] << 8 | e->in[1];
	if (e->in_have < want + 2)
		return;
	struct dns_result res;
	if (dns_parse_response(e->in + 2, want, e->name, e->type, e->id, &res) < 0) {
		if (!send_try(r, e))
			finish(r, e, DNS_RCODE_SERVFAIL, NULL, 0);
		return;
	}
	answered(r, e, &res);
}

void rs_ready(struct relay *r, const struct pollfd *fds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!fds[i].revents)
			continue;
		for (size_t k = 0; k < r->n_pending; k++) {
			struct rs_entry *e = r->pending[k];
			if (e->fd != fds[i].fd)
				continue;
			if (e->tcp)
				tcp_io(r, e, fds[i].revents);
			else
				read_udp(r, e);
			break;
		}
	}
}

unsigned long long rs_tick(struct relay *r, unsigned long long now)
{
	unsigned long long next = 0;
	/* From the last: one that finishes leaves its place to one looked
	 * at already. */
	for (size_t i = r->n_pending; i-- > 0;) {
		struct rs_entry *e = r->pending[i];
		if (e->deadline <= now && !send_try(r, e))
			finish(r, e, DNS_RCODE_SERVFAIL, NULL, 0);
		if (e->state == RS_PENDING && (!next || e->deadline < next))
			next = e->deadline;
	}
	return next;
}

void rs_free(struct relay *r)
{
	for (size_t i = 0; i < r->n_entries; i++)
		entry_close(&r->entries[i]);
	for (size_t s = 0; s < RELAY_SERVERS_MAX; s++)
		for (size_t i = 0; i < r->n_idle[s]; i++)
			close(r->idle[s][i]);
	free(r->entries);
	r->entries = NULL;
	r->n_entries = 0;
}
