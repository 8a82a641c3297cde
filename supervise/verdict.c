/* The supervisor's decisions, on a copy of the address and the facts
 * stockade can find out about it. Nothing here touches the system. */
#include "supervise/supervise.h"

#include "lib/path.h"
#include "lib/util.h"
#include "policy/allow.h"

/* The policy's one answer, as every backend asks it (policy.h). */
static bool allows(const struct sv_query *q, enum path_op op, const char *path)
{
	return policy_allows(q->policy, op, path);
}

static struct sv_verdict allow(void)
{
	return (struct sv_verdict){ .outcome = SV_ALLOW };
}

static struct sv_verdict refuse(void)
{
	return (struct sv_verdict){ .outcome = SV_REFUSE, .err = SV_REFUSED };
}

/* A datagram nobody would receive, to a port that could not be held:
 * answered as sent and never sent (struct sv_verdict's lost). */
static struct sv_verdict lost(void)
{
	return (struct sv_verdict){ .outcome = SV_ALLOW, .lost = true };
}

/* Off this host with loopback: refused as the namespace jail's network,
 * and a host with no route, answer it (a client falls back to another
 * address on ENETUNREACH, where EACCES could end it). */
static struct sv_verdict unreachable(void)
{
	return (struct sv_verdict){ .outcome = SV_REFUSE, .err = ENETUNREACH };
}

/* Refused because stockade could not tell. */
static struct sv_verdict undecided(void)
{
	struct sv_verdict v = refuse();
	v.undecided = true;
	return v;
}

static struct sv_verdict answer(int err)
{
	return (struct sv_verdict){ .outcome = SV_ANSWER, .err = err };
}

/* Loopback's rules for the run's own network: with allow too, which
 * adds the relay for what leaves this host and changes nothing else. */
static bool loopback_rules(enum net_mode net)
{
	return net == NET_LOOPBACK || net == NET_ALLOW;
}

/* 127/8, ::1, 0.0.0.0, :: (connecting there reaches this host), and every
 * address of this host's interfaces. */
static bool is_local(const struct sv_facts *f, const struct net_addr *a)
{
	return net_addr_is_loopback(a) || net_addr_is_wildcard(a) || f->host_address(f->data, a);
}

/* A path the supervisor could not resolve where the command would find
 * it: what the kernel would say where that is plain (no such file), a
 * refusal otherwise. */
static struct sv_verdict unresolved(int err)
{
	return err == ENOENT || err == ENOTDIR ? answer(err) : refuse();
}

/* --connect HOST:PORT: the one service of the host the run may reach,
 * whoever listens there. localhost is 127.0.0.1 and ::1. */
static bool connect_granted(const struct sv_query *q, const struct net_addr *d)
{
	for (size_t i = 0; q->policy && i < q->policy->n_grants; i++) {
		const struct net_grant *g = &q->policy->grants[i];
		if (g->kind != GRANT_CONNECT || g->port != d->port)
			continue;
		struct net_addr a;
		if (streq(g->host, "localhost")) {
			if (net_addr_is_loopback(d) && (d->family == AF_INET6 || ntohl(d->v4.s_addr) == INADDR_LOOPBACK))
				return true;
			continue;
		}
		if (net_addr_from_text(g->host, g->port, &a) == 0) {
			net_addr_unmap(&a);
			if (net_addr_same_ip(&a, d))
				return true;
		}
	}
	return false;
}

/* --connect unix:PATH: that socket file, named as the grant names it or
 * found where the grant's path leads. */
static bool unix_granted(const struct sv_query *q)
{
	for (size_t i = 0; q->policy && i < q->policy->n_grants; i++) {
		const struct net_grant *g = &q->policy->grants[i];
		if (g->kind == GRANT_CONNECT_UNIX && (streq(g->path, q->path_real) || streq(g->path, q->addr.path)))
			return true;
	}
	return false;
}

static struct sv_verdict decide_connect(const struct sv_query *q, const struct sv_facts *f)
{
	const struct net_addr *a = &q->addr;
	switch (a->family) {
	case AF_INET:
	case AF_INET6: {
		struct net_addr d = *a;
		net_addr_unmap(&d);
		if (q->net == NET_OFF)
			return refuse();
		/* --connect names a TCP service (the namespace jail forwards
		 * streams): a datagram never rides on it. */
		if (q->net == NET_ON || (!q->datagram && connect_granted(q, &d)))
			return allow();
		/* allow: every datagram to port 53, wherever the run's
		 * resolv.conf says its name server is (127.0.0.53, a LAN's),
		 * goes to stockade's, which answers it; a connection out to
		 * an allowed port, to the relay. No other datagram leaves
		 * (QUIC, a resolver of the command's own choosing). */
		if (q->net == NET_ALLOW && q->datagram && d.port == 53) {
			struct sv_verdict v = allow();
			v.resolver = true;
			return v;
		}
		if (q->net == NET_ALLOW && !is_local(f, &d)) {
			if (q->datagram || q->call != SV_CONNECT || !q->policy ||
			    !allow_has_port(q->policy->allow, q->policy->n_allow, d.port))
				return unreachable();
			struct sv_verdict v = allow();
			v.relay = true;
			return v;
		}
		if (!is_local(f, &d))
			return unreachable();
		if (q->datagram) {
			/* Only to a socket of the run's: to one outside the
			 * run is a way out (127.0.0.53 answers DNS queries). */
			int r = f->receiver(f->data, &d);
			if (r < 0)
				return undecided();
			if (r != SV_LISTENER_NONE)
				return r == SV_LISTENER_RUN ? allow() : refuse();
			/* A port nobody has bound: held by stockade first, so
			 * that a socket bound there after the check takes
			 * nothing, and the kernel answers as outside. */
			if (f->hold(f->data, &d, q->call == SV_CONNECT))
				return allow();
			if (q->call == SV_SEND && !f->asks_errors(f->data))
				return lost();
			return refuse();
		}
		int owner = f->listener(f->data, &d);
		if (owner < 0)
			return undecided();
		if (owner == SV_LISTENER_OTHER)
			return refuse();
		struct sv_verdict v = allow();
		v.recheck = owner == SV_LISTENER_NONE;
		return v;
	}
	case AF_UNIX:
		if (a->unnamed)
			return allow();
		/* Only a name a process of this run bound: the host's D-Bus,
		 * X11 or containerd shim are never reached. */
		if (a->abstract)
			return f->run_abstract(f->data, a) ? allow() : refuse();
		if (q->path_err)
			return unresolved(q->path_err);
		if (!q->path_real)
			return refuse();
		if (!q->path_is_socket)
			return allows(q, PATH_OP_CONNECT, q->path_real) ? answer(ECONNREFUSED) : refuse();
		/* A socket file is reached when a socket of this run is bound
		 * to it, or --connect unix:PATH names it; never because its
		 * directory is granted: the user's tmux, ssh-agent or Docker
		 * socket in a tree the run may read or write stays theirs. */
		if (unix_granted(q) || f->run_socket_file(f->data, q->path_dev, q->path_ino))
			return allow();
		return refuse();
	default:
		/* socket() gave this family: the filter decides families. */
		return allow();
	}
}

/* A port a socket outside the run listens on is refused as the kernel
 * refuses it without SO_REUSEPORT and SO_REUSEADDR (EADDRINUSE: a server
 * that tries the next port goes on), so the run never joins an outside
 * service's port group and takes its connections. Port 0 is the
 * kernel's to pick, and it never picks a port in use. */
static struct sv_verdict squatting(const struct net_addr *d, const struct sv_facts *f, bool *ret_held)
{
	*ret_held = false;
	if (d->port == 0)
		return allow();
	int held = f->held_outside(f->data, d);
	if (held < 0) {
		struct sv_verdict v = refuse();
		v.undecided = true;
		*ret_held = true;
		return v;
	}
	*ret_held = held > 0;
	return held > 0 ? (struct sv_verdict){ .outcome = SV_REFUSE, .err = EADDRINUSE } : allow();
}

static struct sv_verdict decide_bind(const struct sv_query *q, const struct sv_facts *f)
{
	const struct net_addr *a = &q->addr;
	switch (a->family) {
	case AF_INET:
	case AF_INET6: {
		struct net_addr d = *a;
		net_addr_unmap(&d);
		if (q->net == NET_OFF)
			return refuse();
		/* Not an address of this host: the kernel would answer
		 * EADDRNOTAVAIL, and nothing is served (libuv's tests expect
		 * it). An address of the host's interfaces would serve the
		 * LAN: refused. */
		if (loopback_rules(q->net) && !net_addr_is_loopback(&d) && !net_addr_is_wildcard(&d))
			return f->host_address(f->data, &d) ? refuse() : answer(EADDRNOTAVAIL);
		bool held;
		struct sv_verdict v = squatting(&d, f, &held);
		if (held)
			return v;
		/* 0.0.0.0 and :: with loopback: bound to the loopback device,
		 * so the server answers this host on every local address (a
		 * dual-stack :: keeps both 127.0.0.1 and ::1, which a client
		 * of Node's listen() expects) and nobody on the LAN. */
		v.on_loopback = loopback_rules(q->net) && net_addr_is_wildcard(&d);
		return v;
	}
	case AF_UNIX: {
		if (a->unnamed || a->abstract)
			return allow();
		if (q->path_err)
			return unresolved(q->path_err);
		if (!q->path_real || str_empty(q->path_name))
			return refuse();
		/* The socket file is made where the policy lets the command
		 * write. */
		_cleanup_free_ char *full = path_join(q->path_real, q->path_name);
		if (allows(q, PATH_OP_BIND, q->path_real) && allows(q, PATH_OP_BIND, full))
			return allow();
		/* A new name directly in the host's /tmp (libuv's tests bind
		 * /tmp/uv-test-sock): made by the supervisor and removed when
		 * the run ends. Never in a directory beneath it, where the
		 * user's tmux, ssh-agent and X11 sockets live. */
		if (streq(q->path_real, SV_HOST_TMP) && !strchr(q->path_name, '/') && !streq(q->path_name, ".") &&
		    !streq(q->path_name, "..")) {
			struct sv_verdict v = allow();
			v.in_host_tmp = true;
			return v;
		}
		return refuse();
	}
	default:
		return allow();
	}
}

/* With loopback, a server listens on a loopback address it bound, or on
 * 0.0.0.0 or :: bound to the loopback device, never on an address of the
 * LAN or a port listen() would pick for an unbound socket: it must not
 * serve the network. Nor on a port an outside socket has begun to listen
 * on since the bind. */
static struct sv_verdict decide_listen(const struct sv_query *q, const struct sv_facts *f)
{
	if (!loopback_rules(q->net) || (q->addr.family != AF_INET && q->addr.family != AF_INET6) || q->datagram)
		return allow();
	struct net_addr d = q->addr;
	net_addr_unmap(&d);
	/* Never bound: listen() binds it to a port the kernel picks, on
	 * 0.0.0.0 or :: (libuv's uv_listen without a bind); bound to the
	 * loopback device first, as a bind to those is. */
	if (d.port == 0 && net_addr_is_wildcard(&d)) {
		struct sv_verdict v = allow();
		v.on_loopback = !q->loopback_device;
		return v;
	}
	bool local = net_addr_is_loopback(&d) || (net_addr_is_wildcard(&d) && q->loopback_device);
	if (!local || d.port == 0)
		return refuse();
	bool held;
	return squatting(&d, f, &held);
}

struct sv_verdict supervise_verdict(const struct sv_query *q, const struct sv_facts *facts)
{
	switch (q->call) {
	case SV_CONNECT:
	case SV_SEND:
		/* A datagram's address is its connect: the same rule. */
		return decide_connect(q, facts);
	case SV_BIND:
		return decide_bind(q, facts);
	case SV_LISTEN:
		return decide_listen(q, facts);
	}
	return refuse();
}
