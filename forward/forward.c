/* Forwards: a listener on one side, a connection made for each one it
 * accepts to a target on the other side, and the bytes relayed between
 * the two with splice(2) through a pipe each way, never copied through
 * stockade's memory. --publish listens on the host and reaches the run's
 * listener inside; --connect (the namespace jail) listens inside and
 * reaches the host's service. Where the other side's socket comes from is
 * the caller's: a socket made here, or one the jail's init made in the
 * jail's network namespace. Nothing here blocks. */
#include "forward/forward.h"

#include <fcntl.h>
#include <unistd.h>

#include "lib/pump.h"
#include "lib/util.h"

#define FORWARD_MAX_CONNS 128

struct fconn {
	int client;		/* accepted */
	int target;		/* made for it */
	size_t listener;	/* whose */
	bool connecting;
	bool tried_other;	/* the other family's loopback, after a refusal */
	struct pump up;		/* client to target */
	struct pump down;	/* target to client */
};

struct flistener {
	int fd;
	struct net_addr target;
	forward_socket_fn make_socket;
	void *data;
	bool either_loopback;	/* refused on one family's loopback: the other's */
};

struct forward {
	struct flistener *listeners;
	size_t n_listeners;
	struct pump_spares spares;
	struct fconn *conns;
	size_t n_conns;
	unsigned long long accepted;
};

struct forward *forward_new(void)
{
	return xcalloc(1, sizeof(struct forward));
}

int forward_socket_here(void *data, int family)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	return fd < 0 ? -errno : fd;
}

int forward_listen_here(const struct net_addr *a, unsigned ifindex)
{
	struct sockaddr_storage ss;
	socklen_t len = net_addr_to_sockaddr(a, &ss);
	if (!len)
		return -EAFNOSUPPORT;
	int fd = socket(a->family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	int one = 1;
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (a->family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	int index = (int)ifindex;
	if ((ifindex && setsockopt(fd, SOL_SOCKET, SO_BINDTOIFINDEX, &index, sizeof(index)) < 0) ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

void forward_add(struct forward *fw, int listen_fd, const struct net_addr *target, unsigned flags,
		 forward_socket_fn make_socket, void *data)
{
	(void)fcntl(listen_fd, F_SETFL, fcntl(listen_fd, F_GETFL) | O_NONBLOCK);
	fw->listeners = xgrow(fw->listeners, fw->n_listeners, sizeof(*fw->listeners));
	fw->listeners[fw->n_listeners++] = (struct flistener){
		.fd = listen_fd,
		.target = *target,
		.make_socket = make_socket,
		.data = data,
		.either_loopback = (flags & FORWARD_EITHER_LOOPBACK) && net_addr_is_loopback(target),
	};
}

static void conn_close(struct forward *fw, size_t k)
{
	struct fconn *c = &fw->conns[k];
	close(c->client);
	if (c->target >= 0)
		close(c->target);
	pump_close(&c->up, &fw->spares);
	pump_close(&c->down, &fw->spares);
	fw->conns[k] = fw->conns[--fw->n_conns];
}

/* The loopback of the other family, for a target that may listen on
 * either (Vite's "localhost" is [::1] with a recent Node). */
static struct net_addr other_loopback(const struct net_addr *a)
{
	struct net_addr o;
	net_addr_from_text(a->family == AF_INET ? "::1" : "127.0.0.1", a->port, &o);
	return o;
}

/* A socket connecting to `to`: the descriptor, with *ret_connecting when
 * the handshake is still going; -errno (ECONNREFUSED: nobody listens). */
static int start_target(const struct flistener *l, const struct net_addr *to, bool *ret_connecting)
{
	struct sockaddr_storage ss;
	socklen_t len = net_addr_to_sockaddr(to, &ss);
	if (!len)
		return -EAFNOSUPPORT;
	int fd = l->make_socket(l->data, to->family);
	if (fd < 0)
		return fd;
	int err = connect(fd, (struct sockaddr *)&ss, len) < 0 ? errno : 0;
	/* Asked at once, a connect on loopback is made (a round of the loop
	 * saved) or refused. */
	if (err == EINPROGRESS)
		err = net_connect_outcome(fd);
	*ret_connecting = err == EINPROGRESS;
	if (err && err != EINPROGRESS) {
		close(fd);
		return -err;
	}
	return fd;
}

static void accept_one(struct forward *fw, struct flistener *l)
{
	int client = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (client < 0)
		return;
	fw->accepted++;
	struct fconn c = { .client = client, .target = -1, .listener = (size_t)(l - fw->listeners),
			   .up.pipe = { -1, -1 }, .down.pipe = { -1, -1 } };
	c.target = start_target(l, &l->target, &c.connecting);
	if (c.target == -ECONNREFUSED && l->either_loopback) {
		struct net_addr other = other_loopback(&l->target);
		c.target = start_target(l, &other, &c.connecting);
		c.tried_other = true;
	}
	if (c.target < 0 || pump_open(&c.up, &fw->spares) < 0 || pump_open(&c.down, &fw->spares) < 0) {
		/* Nobody listens there: the client sees its connection closed. */
		pump_close(&c.up, &fw->spares);
		pump_close(&c.down, &fw->spares);
		close(client);
		if (c.target >= 0)
			close(c.target);
		return;
	}
	fw->conns = xgrow(fw->conns, fw->n_conns, sizeof(*fw->conns));
	fw->conns[fw->n_conns++] = c;
}

size_t forward_pollfds(const struct forward *fw, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < fw->n_listeners && n < max; i++)
		if (fw->n_conns < FORWARD_MAX_CONNS)
			fds[n++] = (struct pollfd){ .fd = fw->listeners[i].fd, .events = POLLIN };
	for (size_t i = 0; i < fw->n_conns && n + 2 <= max; i++) {
		const struct fconn *c = &fw->conns[i];
		if (c->connecting) {
			fds[n++] = (struct pollfd){ .fd = c->target, .events = POLLOUT };
			continue;
		}
		short ce = pump_src_events(&c->up) | pump_dst_events(&c->down);
		short te = pump_src_events(&c->down) | pump_dst_events(&c->up);
		fds[n++] = (struct pollfd){ .fd = c->client, .events = ce };
		fds[n++] = (struct pollfd){ .fd = c->target, .events = te };
	}
	return n;
}

void forward_ready(struct forward *fw, const struct pollfd *fds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!fds[i].revents)
			continue;
		for (size_t k = 0; k < fw->n_listeners; k++)
			if (fw->listeners[k].fd == fds[i].fd)
				accept_one(fw, &fw->listeners[k]);
	}
	/* Each connection that any of its descriptors woke: pumped where
	 * poll said a socket is ready, so that no call answers EAGAIN. */
	for (size_t k = 0; k < fw->n_conns;) {
		struct fconn *c = &fw->conns[k];
		short client_ready = 0, target_ready = 0;
		for (size_t i = 0; i < n; i++) {
			if (fds[i].fd == c->client)
				client_ready |= fds[i].revents;
			else if (fds[i].fd == c->target)
				target_ready |= fds[i].revents;
		}
		if (!client_ready && !target_ready) {
			k++;
			continue;
		}
		if (c->connecting) {
			int err = 0;
			socklen_t el = sizeof(err);
			if (getsockopt(c->target, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
				err = errno;
			const struct flistener *l = &fw->listeners[c->listener];
			if (err == ECONNREFUSED && l->either_loopback && !c->tried_other) {
				/* Nobody on this family's loopback: the other's. */
				struct net_addr other = other_loopback(&l->target);
				close(c->target);
				c->tried_other = true;
				c->target = start_target(l, &other, &c->connecting);
				if (c->target < 0) {
					c->target = -1;
					conn_close(fw, k);
					continue;
				}
				if (c->connecting) {
					k++;
					continue;
				}
			} else if (err) {
				conn_close(fw, k);
				continue;
			}
			c->connecting = false;
			/* What the client sent meanwhile, and a target that
			 * takes it. */
			client_ready |= POLLIN;
			target_ready |= POLLOUT;
		}
		/* A reset of a socket whose bytes have all been read: the
		 * connection is over (poll would say so again and again). */
		if (((client_ready & POLLERR) && c->up.eof) || ((target_ready & POLLERR) && c->down.eof)) {
			conn_close(fw, k);
			continue;
		}
		if (!pump_move(&c->up, c->client, c->target, client_ready, target_ready & PUMP_READY_OUT) ||
		    !pump_move(&c->down, c->target, c->client, target_ready, client_ready & PUMP_READY_OUT)) {
			conn_close(fw, k);
			continue;
		}
		pump_pass_end(&c->up, &c->down, c->target);
		pump_pass_end(&c->down, &c->up, c->client);
		if (c->up.shut && c->down.shut) {
			conn_close(fw, k);
			continue;
		}
		k++;
	}
}

void forward_free(struct forward *fw)
{
	if (!fw)
		return;
	while (fw->n_conns)
		conn_close(fw, 0);
	for (size_t i = 0; i < fw->n_listeners; i++)
		close(fw->listeners[i].fd);
	pump_spares_free(&fw->spares);
	free(fw->listeners);
	free(fw->conns);
	free(fw);
}
