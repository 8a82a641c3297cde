/* The run's connections out, past the point where they are taken: the
 * address the command asked for, its first bytes peeked (never read:
 * what the server gets is what the command sent) until they say a name
 * or a bounded wait is over, the decision, the connection stockade makes
 * to that address, and the bytes relayed. A connection leaves when:
 *   - it carries a name (a TLS server name, an HTTP Host or absolute
 *     target) that the allow list holds on its port, and the address
 *     asked for is one the host's resolver gives that name (one handed
 *     out to the run, or found when the connection named it): a name
 *     carried to another name's address (domain fronting on a shared
 *     front end, an address the command picked) is refused;
 *   - it carries none (ssh) and the address asked for was handed out
 *     for a name allowed on that port. A ClientHello or an HTTP request
 *     must carry one: without it the server's default site answers, on
 *     an address names share perhaps one not allowed. Bytes that could begin a ClientHello or an HTTP request
 *     and do not say a name within the bound are refused: only a
 *     connection whose command sent nothing goes on its address.
 * Everything else is reset before a byte of it leaves, and recorded
 * with the rule and the fix. A server that speaks first (ssh's banner) is
 * reached before the decision when the address alone would allow it: its
 * bytes reach the command while the command's own wait for the decision. */
#include "forward/relay-internal.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include "lib/util.h"

static void set_lowat(struct rconn *c, int bytes)
{
	if (c->lowat == bytes || (bytes == 1 && !c->lowat))
		return;
	(void)setsockopt(c->client, SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes));
	c->lowat = bytes;
}

static void where(const struct rconn *c, char *buf, size_t size)
{
	relay_addr_port_text(c->family, c->dest, c->port, buf, size);
}

static void conn_remove(struct relay *r, size_t k)
{
	struct rconn *c = &r->conns[k];
	if (c->client >= 0)
		close(c->client);
	if (c->target >= 0)
		close(c->target);
	pump_close(&c->up, &r->spares);
	pump_close(&c->down, &r->spares);
	r->conns[k] = r->conns[--r->n_conns];
}

/* Ended after it was allowed: its record, with its bytes. */
static void conn_end(struct relay *r, size_t k)
{
	struct rconn *c = &r->conns[k];
	char at[64];
	where(c, at, sizeof(at));
	report_connection(r->rep, c->name[0] ? c->name : NULL, at, "allowed", c->how, c->up.moved, c->down.moved);
	conn_remove(r, k);
}

/* Refused: reset (SO_LINGER 0), so that the command sees its connection
 * fail before any byte of it left; recorded with the rule and the fix. */
static void conn_refuse(struct relay *r, size_t k, const char *why, const char *fix)
{
	struct rconn *c = &r->conns[k];
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	(void)setsockopt(c->client, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	char at[64];
	where(c, at, sizeof(at));
	report_connection(r->rep, c->name[0] ? c->name : NULL, at, "refused", why, 0, c->down.moved);
	_cleanup_free_ char *what = c->name[0] ? xasprintf("%s:%u at %s", c->name, c->port, at) : xstrdup(at);
	_cleanup_free_ char *rule = xstrcat3("network allow: ", why, "");
	report_denial_ruled(r->rep, "connect", report_records_full(r->rep, "connect", what) ? "(further connections)" : what,
			    "reset", rule, r->source, fix);
	conn_remove(r, k);
}

/* The first allowed name the address was handed out for, on the port. */
static const char *name_for_address(const struct relay *r, const struct rconn *c)
{
	size_t n = c->family == AF_INET ? 4 : 16;
	for (size_t i = r->n_handed; i-- > 0;) {
		const struct handed *h = &r->handed[i];
		if (h->family == c->family && memcmp(h->addr, c->dest, n) == 0 &&
		    allow_match(r->p->allow, r->p->n_allow, h->name, c->port))
			return h->name;
	}
	return NULL;
}

/* The connection out, to the address asked for. 0, or -errno. */
static int start_target(struct relay *r, struct rconn *c)
{
	if (c->target >= 0)
		return 0;
	struct sockaddr_storage ss = { .ss_family = (sa_family_t)c->to_family };
	socklen_t len;
	if (c->to_family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_port = htons(c->port);
		memcpy(&in->sin_addr, c->to, 4);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_port = htons(c->port);
		memcpy(&in6->sin6_addr, c->to, 16);
		len = sizeof(*in6);
	}
	int fd = socket(c->to_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(fd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
		int e = -errno;
		close(fd);
		return e;
	}
	if ((c->up.pipe[0] < 0 && pump_open(&c->up, &r->spares) < 0) ||
	    (c->down.pipe[0] < 0 && pump_open(&c->down, &r->spares) < 0)) {
		close(fd);
		return -EMFILE;
	}
	c->target = fd;
	c->target_ready = false;
	return 0;
}

/* The name's other addresses, handed out or found for it: where the one
 * asked for cannot be reached (a host without IPv6 given an AAAA), the
 * connection goes to those, as a client trying the name's next address
 * would. */
static void find_alternatives(const struct relay *r, struct rconn *c)
{
	c->n_alts = 0;
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < r->n_handed && c->n_alts < RELAY_ALTS_MAX; i++) {
			const struct handed *h = &r->handed[i];
			/* The same family first. */
			if ((h->family == c->family) != (pass == 0) || !streq(h->name, c->name))
				continue;
			if (h->family == c->family && memcmp(h->addr, c->dest, h->family == AF_INET ? 4 : 16) == 0)
				continue;
			c->alt_family[c->n_alts] = h->family;
			memcpy(c->alt[c->n_alts++], h->addr, 16);
		}
}

/* The next address to try, when nothing moved yet either way: true. */
static bool try_next(struct relay *r, struct rconn *c)
{
	if (!c->n_alts || c->up.moved || c->down.moved || c->up.queued || c->down.queued)
		return false;
	if (c->target >= 0)
		close(c->target);
	c->target = -1;
	c->target_ready = false;
	c->to_family = c->alt_family[0];
	memcpy(c->to, c->alt[0], 16);
	memmove(c->alt_family, c->alt_family + 1, --c->n_alts * sizeof(c->alt_family[0]));
	memmove(c->alt, c->alt + 1, c->n_alts * sizeof(c->alt[0]));
	return start_target(r, c) == 0 || try_next(r, c);
}

static void allow(struct relay *r, size_t k, const char *name, const char *how)
{
	struct rconn *c = &r->conns[k];
	if (name && name != c->name)
		snprintf(c->name, sizeof(c->name), "%s", name);
	c->how = how;
	c->allowed = true;
	set_lowat(c, 1);
	find_alternatives(r, c);
	int e = start_target(r, c);
	if (e < 0 && try_next(r, c))
		e = 0;
	if (e < 0) {
		_cleanup_free_ char *why = xasprintf("cannot connect out: %s", strerror(-e));
		conn_refuse(r, k, why, "none: the host itself cannot reach it");
		return;
	}
	c->state = c->target_ready ? RC_RELAY : RC_CONNECT;
}

/* A connection with no name of its own: decided on its address. */
static void decide_address(struct relay *r, size_t k, const char *how)
{
	struct rconn *c = &r->conns[k];
	const char *name = name_for_address(r, c);
	if (name) {
		allow(r, k, name, how);
		return;
	}
	char num[21];
	_cleanup_free_ char *why = xstrcat3("an address no allowed name was looked up for (", how, "), on port ");
	_cleanup_free_ char *full = xstrcat3(why, fmt_u64(num, c->port), "");
	conn_refuse(r, k, full,
		    "none: an address is never allowed alone; allow the name the command means to reach, looked up by it "
		    "(--allow NAME), or --net on");
}

/* Does the entry's answer (or what was handed out) hold the address? */
static bool name_has_address(struct relay *r, const struct rconn *c, const struct rs_entry *e)
{
	if (relay_handed_for(r, c->name, c->family, c->dest))
		return true;
	if (!e || e->state != RS_DONE || e->rcode != DNS_RCODE_NOERROR)
		return false;
	size_t n = c->family == AF_INET ? 4 : 16;
	bool found = false;
	for (size_t i = 0; i < e->addrs.n; i++) {
		relay_hand(r, c->name, e->addrs.family, e->addrs.addr[i]);
		found = found || memcmp(e->addrs.addr[i], c->dest, n) == 0;
	}
	return found;
}

static void mismatch(struct relay *r, size_t k)
{
	struct rconn *c = &r->conns[k];
	char ip[48];
	relay_addr_text(c->family, c->dest, ip, sizeof(ip));
	_cleanup_free_ char *why = xasprintf("%s %s sent to %s, which is not an address of that name (another name's, or "
					     "one the command chose)",
					     c->how, c->name, ip);
	conn_refuse(r, k, why,
		    "none: the name a connection carries must be the name its address was looked up for (stockade.1, "
		    "NETWORK: domain fronting)");
}

/* A connection that names name: allowed on its port, and at an address
 * of that name's. */
static void decide_named(struct relay *r, size_t k)
{
	struct rconn *c = &r->conns[k];
	if (!allow_match(r->p->allow, r->p->n_allow, c->name, c->port)) {
		_cleanup_free_ char *why = xasprintf("%s %s is not allowed on port %u", c->how, c->name, c->port);
		_cleanup_free_ char *fix = allow_fix_ini(c->name, c->port);
		conn_refuse(r, k, why, fix);
		return;
	}
	if (relay_handed_for(r, c->name, c->family, c->dest)) {
		allow(r, k, NULL, c->how);
		return;
	}
	/* Not handed out for it: the name's addresses, as the host's
	 * resolver gives them now. */
	uint16_t type = c->family == AF_INET ? DNS_TYPE_A : DNS_TYPE_AAAA;
	struct rs_entry *e = rs_lookup(r, c->name, type);
	if (e && e->state == RS_PENDING) {
		c->state = RC_RESOLVE;
		c->deadline = now_usec() + RELAY_FIRST_WAIT_USEC;
		return;
	}
	if (name_has_address(r, c, e))
		allow(r, k, NULL, c->how);
	else
		mismatch(r, k);
}

/* The first bytes, peeked: decided when they say enough. */
static void sniff(struct relay *r, size_t k, short revents)
{
	struct rconn *c = &r->conns[k];
	uint8_t buf[RELAY_PEEK_MAX];
	ssize_t n = recv(c->client, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	bool ended = n <= 0 || (revents & (POLLRDHUP | POLLHUP | POLLERR));
	if (n <= 0) {
		/* Done before a byte. Reached early (a server that speaks
		 * first, its bytes still on their way back): decided on its
		 * address, the end passed on. Otherwise there is nothing to
		 * send anywhere. */
		if (c->early && n == 0)
			decide_address(r, k, "address: nothing sent");
		else
			conn_remove(r, k);
		return;
	}
	struct relay_sniffed s;
	relay_sniff(buf, (size_t)n, &s);
	switch (s.kind) {
	case SNIFF_MORE:
		/* Bytes that could begin a ClientHello or an HTTP request
		 * (a lenient server's reading of one) say a name, or are
		 * refused: never passed on as another protocol's, whatever
		 * the server would make of the rest. */
		c->first_bytes = true;
		if (ended) {
			conn_refuse(r, k, "a first message cut short: it ended before it said a name",
				    "none: no client sends that (stockade.1, NETWORK)");
			return;
		}
		/* Woken again only once that many bytes are there. */
		set_lowat(c, (int)s.need);
		return;
	case SNIFF_BAD:
		conn_refuse(r, k, s.why, "none: no client sends that (stockade.1, NETWORK)");
		return;
	case SNIFF_OTHER:
		decide_address(r, k, "address: neither TLS nor HTTP");
		return;
	case SNIFF_TLS:
	case SNIFF_HTTP:
		if (!s.name[0] && name_for_address(r, c)) {
			/* What answers it is the server's default site, which
			 * on an address names share may be one not allowed.
			 * (At an address no name was looked up for, that is
			 * what decide_address refuses it for.) */
			if (s.kind == SNIFF_TLS)
				conn_refuse(r, k, "a ClientHello without a server name: the server's default site would answer",
					    "none: send the server name (SNI), as every current TLS client does");
			else
				conn_refuse(r, k,
					    s.literal ? "an HTTP request whose Host is an address, not a name"
						      : "an HTTP request without a Host (HTTP/1.0): the server's default site would "
							"answer",
					    "none: send the name in Host (every HTTP/1.1 client does)");
			return;
		}
		if (!s.name[0]) {
			decide_address(r, k, s.kind == SNIFF_TLS ? "address: a ClientHello without a server name"
								 : "address: an HTTP request without a host name");
			return;
		}
		memcpy(c->name, s.name, sizeof(c->name));
		c->how = s.kind == SNIFF_TLS ? "TLS server name" : "HTTP Host";
		decide_named(r, k);
		return;
	}
}

void conn_accept(struct relay *r, size_t listener)
{
	int lfd = r->listeners[listener].fd;
	for (int i = 0; i < 32 && r->n_conns < RELAY_CONNS_MAX; i++) {
		struct sockaddr_storage peer;
		socklen_t peer_len = sizeof(peer);
		int fd = accept4(lfd, (struct sockaddr *)&peer, &peer_len, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			return;
		/* Where the command asked to go: the connection's own address
		 * (the namespace jail's), or what the supervisor said
		 * (the landlock backend's). */
		struct sockaddr_storage dest;
		socklen_t dest_len = sizeof(dest);
		bool found = false;
		if (r->listeners[listener].here) {
			for (size_t x = 0; x < r->n_expects && !found; x++) {
				struct expect *e = &r->expects[x];
				if (e->from_len != peer_len || memcmp(&e->from, &peer, peer_len) != 0)
					continue;
				memcpy(&dest, &e->dest, e->dest_len);
				dest_len = e->dest_len;
				r->expects[x] = r->expects[--r->n_expects];
				found = true;
			}
		} else {
			found = getsockname(fd, (struct sockaddr *)&dest, &dest_len) == 0;
		}
		if (!found) {
			/* Not the run's: only the supervisor sends here. */
			close(fd);
			continue;
		}
		struct rconn c = { .client = fd, .target = -1, .state = RC_FIRST, .up.pipe = { -1, -1 },
				   .down.pipe = { -1, -1 }, .how = "address",
				   .deadline = now_usec() + RELAY_FIRST_WAIT_USEC };
		static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
		if (dest.ss_family == AF_INET) {
			const struct sockaddr_in *in = (const struct sockaddr_in *)&dest;
			c.family = AF_INET;
			memcpy(c.dest, &in->sin_addr, 4);
			c.port = ntohs(in->sin_port);
		} else if (dest.ss_family == AF_INET6) {
			const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&dest;
			c.port = ntohs(in6->sin6_port);
			if (memcmp(&in6->sin6_addr, mapped, 12) == 0) {
				c.family = AF_INET;
				memcpy(c.dest, in6->sin6_addr.s6_addr + 12, 4);
			} else {
				c.family = AF_INET6;
				memcpy(c.dest, &in6->sin6_addr, 16);
			}
		} else {
			close(fd);
			continue;
		}
		c.to_family = c.family;
		memcpy(c.to, c.dest, 16);
		r->conns = xgrow(r->conns, r->n_conns, sizeof(*r->conns));
		size_t k = r->n_conns++;
		r->conns[k] = c;
		if (!allow_has_port(r->p->allow, r->p->n_allow, c.port)) {
			conn_refuse(r, k, "not a port of an allowed name", "none: allow the name on that port (--allow NAME:PORT)");
			continue;
		}
		if (relay_forbidden(r, c.family, c.dest)) {
			conn_refuse(r, k, "an address of this host, loopback or link-local: never reached through network allow",
				    "--connect HOST:PORT gives one service of this host");
			continue;
		}
		/* An address handed out for a name allowed on the port:
		 * reached at once, so that a server that speaks first is
		 * heard while the command's first bytes are awaited. */
		struct rconn *cc = &r->conns[k];
		if (name_for_address(r, cc) && start_target(r, cc) == 0)
			cc->early = true;
		/* A client that spoke at once (an HTTP request, a ClientHello
		 * sent with the connect) is read now, a round of the loop
		 * saved. */
		sniff(r, k, 0);
	}
}

size_t conn_pollfds(const struct relay *r, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < r->n_conns && n + 2 <= max; i++) {
		const struct rconn *c = &r->conns[i];
		short ce = 0, te = 0;
		if (c->state == RC_FIRST)
			ce |= POLLIN | POLLRDHUP;
		if (c->target >= 0 && !c->target_ready)
			te |= POLLOUT;
		if (c->target >= 0 && c->target_ready) {
			/* Back to the command, from the start; out, once allowed. */
			te |= pump_src_events(&c->down);
			ce |= pump_dst_events(&c->down);
			if (c->allowed) {
				ce |= pump_src_events(&c->up);
				te |= pump_dst_events(&c->up);
			}
		}
		fds[n++] = (struct pollfd){ .fd = c->client, .events = ce };
		if (c->target >= 0)
			fds[n++] = (struct pollfd){ .fd = c->target, .events = te };
	}
	return n;
}

/* The connection out is made (or failed). False when the connection is
 * gone. */
static bool target_made(struct relay *r, size_t k)
{
	struct rconn *c = &r->conns[k];
	int err = 0;
	socklen_t el = sizeof(err);
	if (getsockopt(c->target, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
		err = errno;
	if (err == EINPROGRESS || err == EALREADY)
		return true;
	if (err) {
		if (!c->allowed && c->early) {
			/* Tried early: the decision tries again, and says. */
			close(c->target);
			c->target = -1;
			c->early = false;
			pump_close(&c->up, &r->spares);
			pump_close(&c->down, &r->spares);
			return true;
		}
		if (c->allowed && try_next(r, c))
			return true;
		_cleanup_free_ char *why = xasprintf("cannot connect out: %s", strerror(err));
		conn_refuse(r, k, why, "none: the host itself cannot reach it");
		return false;
	}
	c->target_ready = true;
	if (c->state == RC_CONNECT)
		c->state = RC_RELAY;
	return true;
}

void conn_ready(struct relay *r, const struct pollfd *fds, size_t n)
{
	for (size_t k = r->n_conns; k-- > 0;) {
		struct rconn *c = &r->conns[k];
		short cr = 0, tr = 0;
		for (size_t i = 0; i < n; i++) {
			if (fds[i].fd == c->client)
				cr |= fds[i].revents;
			else if (c->target >= 0 && fds[i].fd == c->target)
				tr |= fds[i].revents;
		}
		if (!cr && !tr)
			continue;
		if (c->target >= 0 && !c->target_ready && tr) {
			if (!target_made(r, k))
				continue;
			c = &r->conns[k];
			if (c->target_ready) {
				tr |= POLLOUT;
				cr |= c->allowed ? POLLIN : 0;
			}
		}
		if (c->state == RC_FIRST && (cr & (POLLIN | POLLRDHUP | POLLHUP | POLLERR))) {
			size_t before = r->n_conns;
			sniff(r, k, cr);
			/* Refused, ended or decided: what it was is gone, or
			 * on; this round is over for it. */
			if (r->n_conns != before || k >= r->n_conns)
				continue;
			c = &r->conns[k];
			if (c->state == RC_FIRST || c->state == RC_RESOLVE)
				cr &= (short)~(POLLIN | POLLRDHUP);
		}
		if (c->target < 0 || !c->target_ready)
			continue;
		if ((cr & POLLERR) && c->up.eof) {
			conn_end(r, k);
			continue;
		}
		if ((tr & POLLERR) && c->down.eof) {
			conn_end(r, k);
			continue;
		}
		bool ok = pump_move(&c->down, c->target, c->client, tr, cr & PUMP_READY_OUT);
		if (ok && c->allowed)
			ok = pump_move(&c->up, c->client, c->target, cr, tr & PUMP_READY_OUT);
		if (!ok) {
			conn_end(r, k);
			continue;
		}
		if (c->allowed)
			pump_pass_end(&c->up, &c->down, c->target);
		pump_pass_end(&c->down, &c->up, c->client);
		if (c->up.shut && c->down.shut)
			conn_end(r, k);
	}
}

void conn_resolved(struct relay *r, struct rs_entry *e)
{
	for (size_t k = r->n_conns; k-- > 0;) {
		struct rconn *c = &r->conns[k];
		if (c->state != RC_RESOLVE || !streq(c->name, e->name) ||
		    e->type != (c->family == AF_INET ? DNS_TYPE_A : DNS_TYPE_AAAA))
			continue;
		c->state = RC_FIRST;
		if (name_has_address(r, c, e))
			allow(r, k, NULL, c->how);
		else
			mismatch(r, k);
	}
}

unsigned long long conn_tick(struct relay *r, unsigned long long now)
{
	unsigned long long next = 0;
	for (size_t k = r->n_conns; k-- > 0;) {
		struct rconn *c = &r->conns[k];
		if ((c->state != RC_FIRST && c->state != RC_RESOLVE) || !c->deadline)
			continue;
		if (c->deadline > now) {
			if (!next || c->deadline < next)
				next = c->deadline;
			continue;
		}
		if (c->state == RC_RESOLVE) {
			conn_refuse(r, k, "the name it carries could not be looked up in time", "none: the host's resolver did not answer");
			continue;
		}
		/* Nothing within the wait: a server that speaks first, or a
		 * client that waits; decided on its address. */
		c->deadline = 0;
		if (c->first_bytes) {
			/* Bytes came, and said no name: a first message held
			 * back past its bound (a Host sent later would reach
			 * the server as the connection's). */
			conn_refuse(r, k, "a first message not whole within 10 s: it said no name",
				    "none: no client sends that (stockade.1, NETWORK)");
			continue;
		}
		if (c->name[0])
			decide_named(r, k);
		else
			decide_address(r, k, "address: no first bytes within 10 s");
	}
	return next;
}

void conn_close_all(struct relay *r)
{
	while (r->n_conns) {
		struct rconn *c = &r->conns[r->n_conns - 1];
		if (c->allowed)
			conn_end(r, r->n_conns - 1);
		else
			conn_remove(r, r->n_conns - 1);
	}
}
