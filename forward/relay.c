/* The relay: its sockets, its one place in stockade's loop, and what it
 * knows of the names it handed out. */
#include "forward/relay-internal.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <unistd.h>

#include "lib/hostaddr.h"
#include "lib/util.h"

struct relay *relay_new(const struct policy *p, struct report *rep)
{
	struct relay *r = xcalloc(1, sizeof(*r));
	r->p = p;
	r->rep = rep;
	r->source = source_text(&p->net_source);
	r->responder = -1;
	r->resolver[0].fd = r->resolver[1].fd = -1;
	r->here[0].fd = r->here[1].fd = -1;
	r->addr_watch = -1;
	rep->allowlist = true;
	return r;
}

void relay_free(struct relay *r)
{
	if (!r)
		return;
	conn_close_all(r);
	rs_free(r);
	pump_spares_free(&r->spares);
	if (r->responder >= 0)
		close(r->responder);
	for (int i = 0; i < 2; i++)
		if (r->resolver[i].fd >= 0)
			close(r->resolver[i].fd);
	for (size_t i = 0; i < r->n_listeners; i++)
		close(r->listeners[i].fd);
	free(r->listeners);
	for (size_t i = 0; i < r->n_handed; i++)
		free(r->handed[i].name);
	free(r->handed);
	free(r->waits);
	free(r->expects);
	free(r->conns);
	free(r->host);
	if (r->addr_watch >= 0)
		close(r->addr_watch);
	free(r->source);
	free(r);
}

void relay_add_responder(struct relay *r, int fd)
{
	if (r->responder >= 0)
		close(r->responder);
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	r->responder = fd;
}

static void add_listener(struct relay *r, int fd, bool here)
{
	(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	r->listeners = xgrow(r->listeners, r->n_listeners, sizeof(*r->listeners));
	r->listeners[r->n_listeners++] = (struct rlistener){ .fd = fd, .here = here };
}

void relay_add_listener(struct relay *r, int fd)
{
	add_listener(r, fd, false);
}

/* A socket of stockade's on this host's loopback, of family and type: its
 * descriptor and address, or -errno. */
static int loopback_socket(int family, int type, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	int fd = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_storage ss = { .ss_family = (sa_family_t)family };
	socklen_t len;
	if (family == AF_INET) {
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(struct sockaddr_in);
	} else {
		int one = 1;
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
		len = sizeof(struct sockaddr_in6);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || (type == SOCK_STREAM && listen(fd, 128) < 0) ||
	    getsockname(fd, (struct sockaddr *)ret, ret_len) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

/* The socket k keeps on this host's loopback, of family and type, made at
 * the first ask: its address in ret; 1 when it was made now, 0 when it was
 * kept, or -errno. */
static int kept_socket(struct kept_socket *k, int family, int type, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	int made = 0;
	if (k->fd < 0) {
		k->len = sizeof(k->addr);
		int fd = loopback_socket(family, type, &k->addr, &k->len);
		if (fd < 0)
			return fd;
		k->fd = fd;
		made = 1;
	}
	memcpy(ret, &k->addr, k->len);
	*ret_len = k->len;
	return made;
}

int relay_resolver_address(struct relay *r, int family, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	int made = kept_socket(&r->resolver[family == AF_INET6], family, SOCK_DGRAM, ret, ret_len);
	return made < 0 ? made : 0;
}

int relay_listener_address(struct relay *r, int family, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	struct kept_socket *k = &r->here[family == AF_INET6];
	int made = kept_socket(k, family, SOCK_STREAM, ret, ret_len);
	if (made > 0)
		add_listener(r, k->fd, true);
	return made < 0 ? made : 0;
}

void relay_expect(struct relay *r, const struct sockaddr *from, socklen_t from_len, const struct sockaddr *dest,
		  socklen_t dest_len)
{
	if (from_len > sizeof(struct sockaddr_storage) || dest_len > sizeof(struct sockaddr_storage))
		return;
	/* The oldest goes first: one that never came (its command gave up). */
	if (r->n_expects >= RELAY_EXPECT_MAX)
		memmove(r->expects, r->expects + 1, --r->n_expects * sizeof(*r->expects));
	r->expects = xgrow(r->expects, r->n_expects, sizeof(*r->expects));
	struct expect *x = &r->expects[r->n_expects++];
	*x = (struct expect){ .from_len = from_len, .dest_len = dest_len };
	memcpy(&x->from, from, from_len);
	memcpy(&x->dest, dest, dest_len);
}

void relay_addr_text(int family, const uint8_t *addr, char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	inet_ntop(family, addr, ip, sizeof(ip));
	snprintf(buf, size, "%s", ip);
}

void relay_addr_port_text(int family, const uint8_t *addr, unsigned short port, char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN] = "?";
	inet_ntop(family, addr, ip, sizeof(ip));
	snprintf(buf, size, family == AF_INET6 ? "[%s]:%u" : "%s:%u", ip, port);
}

void relay_hand(struct relay *r, const char *name, int family, const uint8_t *addr)
{
	if (relay_handed_for(r, name, family, addr))
		return;
	if (r->n_handed >= RELAY_HANDED_MAX) {
		/* The oldest is forgotten: a connection to it is decided by
		 * its name again, looked up again. */
		free(r->handed[0].name);
		memmove(r->handed, r->handed + 1, --r->n_handed * sizeof(*r->handed));
	}
	r->handed = xgrow(r->handed, r->n_handed, sizeof(*r->handed));
	struct handed *h = &r->handed[r->n_handed++];
	*h = (struct handed){ .name = xstrdup(name), .family = family };
	memcpy(h->addr, addr, family == AF_INET ? 4 : 16);
}

bool relay_handed_for(const struct relay *r, const char *name, int family, const uint8_t *addr)
{
	size_t n = family == AF_INET ? 4 : 16;
	for (size_t i = 0; i < r->n_handed; i++) {
		const struct handed *h = &r->handed[i];
		if (h->family == family && memcmp(h->addr, addr, n) == 0 && streq(h->name, name))
			return true;
	}
	return false;
}

const char *relay_name_of(const struct relay *r, int family, const void *addr)
{
	size_t n = family == AF_INET ? 4 : 16;
	for (size_t i = r->n_handed; i-- > 0;) {
		const struct handed *h = &r->handed[i];
		if (h->family == family && memcmp(h->addr, addr, n) == 0)
			return h->name;
	}
	return NULL;
}

void relay_resolved(struct relay *r, struct rs_entry *e)
{
	dns_answer_waiting(r, e);
	conn_resolved(r, e);
}

size_t relay_pollfds(const struct relay *r, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	if (r->responder >= 0 && n < max)
		fds[n++] = (struct pollfd){ .fd = r->responder, .events = POLLIN };
	for (int i = 0; i < 2; i++)
		if (r->resolver[i].fd >= 0 && n < max)
			fds[n++] = (struct pollfd){ .fd = r->resolver[i].fd, .events = POLLIN };
	if (r->n_conns < RELAY_CONNS_MAX)
		for (size_t i = 0; i < r->n_listeners && n < max; i++)
			fds[n++] = (struct pollfd){ .fd = r->listeners[i].fd, .events = POLLIN };
	n += rs_pollfds(r, fds + n, max - n);
	n += conn_pollfds(r, fds + n, max - n);
	return n;
}

void relay_ready(struct relay *r, const struct pollfd *fds, size_t n)
{
	size_t at = 0;
	for (; at < n; at++) {
		int fd = fds[at].fd;
		if (!fds[at].revents)
			continue;
		if (fd == r->responder || fd == r->resolver[0].fd || fd == r->resolver[1].fd) {
			dns_serve(r, fd);
			continue;
		}
		for (size_t k = 0; k < r->n_listeners; k++)
			if (r->listeners[k].fd == fd)
				conn_accept(r, k);
	}
	rs_ready(r, fds, n);
	conn_ready(r, fds, n);
	unsigned long long now = now_usec();
	(void)rs_tick(r, now);
	(void)conn_tick(r, now);
}

int relay_timeout_ms(const struct relay *r)
{
	unsigned long long next = 0;
	for (size_t i = 0; i < r->n_pending; i++)
		if (!next || r->pending[i]->deadline < next)
			next = r->pending[i]->deadline;
	for (size_t i = 0; i < r->n_conns; i++)
		if (r->conns[i].state != RC_RELAY && r->conns[i].deadline && (!next || r->conns[i].deadline < next))
			next = r->conns[i].deadline;
	if (!next)
		return -1;
	unsigned long long now = now_usec();
	return next <= now ? 0 : (int)((next - now + 999) / 1000);
}

void relay_finish(struct relay *r)
{
	conn_close_all(r);
}

/* ---- addresses a connection out never goes to ---- */

/* This host's addresses, read again whenever they changed: a socket of
 * the address groups says so (each change one message), drained before
 * each look. */
static void read_host_addresses(struct relay *r)
{
	if (r->addr_watch < 0 && !r->host_read) {
		int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
		struct sockaddr_nl nl = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR };
		if (fd >= 0 && bind(fd, (struct sockaddr *)&nl, sizeof(nl)) < 0) {
			close(fd);
			fd = -1;
		}
		r->addr_watch = fd;
	}
	char buf[4096];
	bool changed = false;
	/* Without the socket, every look reads them again. */
	if (r->addr_watch < 0)
		changed = true;
	while (r->addr_watch >= 0 && recv(r->addr_watch, buf, sizeof(buf), MSG_DONTWAIT) != -1)
		changed = true;
	if (r->addr_watch >= 0 && errno == ENOBUFS)
		changed = true;	/* messages lost: something changed */
	if (r->host_read && !changed)
		return;
	r->host_read = true;
	free(r->host);
	r->n_host = host_addresses(&r->host);
}

static bool host_address(struct relay *r, int family, const uint8_t *addr)
{
	read_host_addresses(r);
	for (size_t i = 0; i < r->n_host; i++) {
		const struct sockaddr_storage *s = &r->host[i];
		if (s->ss_family != family)
			continue;
		const void *a = family == AF_INET ? (const void *)&((const struct sockaddr_in *)s)->sin_addr
						  : (const void *)&((const struct sockaddr_in6 *)s)->sin6_addr;
		if (memcmp(a, addr, family == AF_INET ? 4 : 16) == 0)
			return true;
	}
	return false;
}

bool relay_forbidden(struct relay *r, int family, const uint8_t *a)
{
	if (relay_address_special(family, a))
		return true;
	/* A v4-mapped form is the IPv4 address it carries. */
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	if (family == AF_INET6 && memcmp(a, mapped, 12) == 0)
		return host_address(r, AF_INET, a + 12);
	return host_address(r, family, a);
}

bool relay_address_special(int family, const uint8_t *a)
{
	if (family == AF_INET)
		/* 0/8 (this network), 127/8, 169.254/16, 224/4 and above. */
		return a[0] == 0 || a[0] == 127 || (a[0] == 169 && a[1] == 254) || a[0] >= 224;
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t zero[15] = { 0 };
	/* ::, ::1, a v4-mapped or -compatible form (decided as the IPv4
	 * address it carries), fe80::/10, multicast. */
	if (memcmp(a, zero, 15) == 0)
		return true;
	if (memcmp(a, mapped, 12) == 0 || memcmp(a, zero, 12) == 0)
		return relay_address_special(AF_INET, a + 12);
	return (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) || a[0] == 0xff;
}

void relay_describe(const struct policy *p, enum backend backend, struct report *rep)
{
	if (p->net != NET_ALLOW)
		return;
	struct text t = { 0 };
	for (size_t i = 0; i < p->n_allow; i++) {
		_cleanup_free_ char *e = allow_entry_text(&p->allow[i]);
		text_adds(&t, i ? ", " : "");
		text_adds(&t, e);
	}
	_cleanup_free_ char *names = text_take(&t);
	_cleanup_free_ char *line = xstrcat3("network allow: the names ", *names ? names : "(none)",
					     " (ports 443 and 80 unless one is named), and the run's own loopback");
	report_enforced(rep, line);
	report_enforced(rep, backend == BACKEND_NAMESPACES
				     ? "name lookups: answered by stockade on the jail's 127.0.0.1:53, an allowed name's addresses "
				       "as the host's resolver gives them (A and AAAA, with their TTL), every other name NXDOMAIN, "
				       "each name recorded"
				     : "name lookups: every datagram to port 53 answered by stockade, an allowed name's addresses "
				       "as the host's resolver gives them (A and AAAA, with their TTL), every other name NXDOMAIN, "
				       "each name recorded");
	report_enforced(rep, "connections out: to an allowed port only, each taken by stockade, its TLS server name or "
			     "HTTP Host read and checked against the allow list and the address it was looked up for, then "
			     "made by stockade and relayed; without a name, only to an address handed out for an allowed "
			     "name on that port");
	report_enforced(rep, "datagrams out (UDP, QUIC): refused, each address recorded");
}
