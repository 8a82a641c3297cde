#include "jail/allow.h"

#include <arpa/inet.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/log.h"
#include "lib/util.h"
#include "policy/allow.h"

int allowing_begin(struct allowing *a, const struct policy *p, struct report *rep)
{
	*a = (struct allowing){ 0 };
	if (p->net != NET_ALLOW)
		return 0;
	unsigned short ports[ALLOWING_PORTS_MAX + 1];
	size_t n = allow_ports(p->allow, p->n_allow, ports, ARRAY_SIZE(ports));
	if (n > ALLOWING_PORTS_MAX) {
		log_error("cannot give network allow more than %d ports", ALLOWING_PORTS_MAX);
		return -1;
	}
	memcpy(a->ports, ports, n * sizeof(ports[0]));
	a->n_ports = n;
	a->relay = relay_new(p, rep);
	return 0;
}

void allowing_take_responder(struct allowing *a, int *fd)
{
	if (!a->relay || *fd < 0)
		return;
	relay_add_responder(a->relay, TAKE_FD(*fd));
}

int allowing_take_listens(struct allowing *a, int sock)
{
	for (size_t i = 0; a->relay && i < a->n_ports * 2; i++) {
		int fd = -1;
		int r = fd_recv(sock, &fd);
		if (r < 0)
			return r;
		if (fd >= 0)
			relay_add_listener(a->relay, fd);
	}
	return 0;
}

static int hook_listener(void *data, int family, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	return relay_listener_address(data, family, ret, ret_len);
}

static int hook_resolver(void *data, int family, struct sockaddr_storage *ret, socklen_t *ret_len)
{
	return relay_resolver_address(data, family, ret, ret_len);
}

static void hook_expect(void *data, const struct sockaddr *from, socklen_t from_len, const struct sockaddr *dest,
			socklen_t dest_len)
{
	relay_expect(data, from, from_len, dest, dest_len);
}

static const char *hook_name_of(void *data, const struct net_addr *na)
{
	return relay_name_of(data, na->family, na->family == AF_INET ? (const void *)&na->v4 : (const void *)&na->v6);
}

void allowing_supervise(struct allowing *a, struct supervisor *sv)
{
	if (!a->relay || !sv)
		return;
	struct sv_relay hooks = { .data = a->relay, .listener = hook_listener, .resolver = hook_resolver,
				  .expect = hook_expect, .name_of = hook_name_of };
	supervisor_set_relay(sv, &hooks);
}

void allowing_outside_words(void *data, const struct netns_attempt *at, char **ret_rule, char **ret_fix)
{
	const struct allowing *a = data;
	if (at->datagram) {
		*ret_rule = xstrdup("network allow: no datagram leaves the jail (UDP, QUIC: a client falls back to TCP), but "
				    "the run's lookups, which stockade answers on 127.0.0.1:53");
		*ret_fix = xstrdup("none in network allow: --net on gives the whole network");
		return;
	}
	*ret_rule = xstrdup("network allow: connections out go only to the ports of the allowed names (443 and 80, or as "
			    "named)");
	const char *name = a->relay ? relay_name_of(a->relay, at->family, at->addr) : NULL;
	*ret_fix = name ? allow_fix(name, at->port)
			: xasprintf("none: an address is never allowed alone; allow the name the command looked up on that "
				    "port (--allow NAME:%u)",
				    at->port);
}

void allowing_finish(struct allowing *a)
{
	if (a->relay)
		relay_finish(a->relay);
}

void allowing_end(struct allowing *a)
{
	relay_free(a->relay);
	*a = (struct allowing){ 0 };
}
