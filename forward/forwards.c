#include "forward/forward.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/hostaddr.h"
#include "lib/log.h"
#include "lib/util.h"

/* One batch from init, into the pool of the family it is tagged with:
 * 0, or -errno. */
static int pool_take_batch(struct socket_pool *pl)
{
	char tag = 0;
	int fds[FACTORY_BATCH];
	int n = fd_recv_n(pl->sock, &tag, fds, FACTORY_BATCH);
	pl->asked = false;
	if (n < 0)
		return n;
	size_t k = tag == '6';
	for (int i = 0; i < n; i++)
		pl->fds[k][pl->n[k]++] = fds[i];
	return n ? 0 : -EMFILE;
}

static int pool_ask(struct socket_pool *pl, size_t k)
{
	if (send(pl->sock, k ? "6" : "4", 1, MSG_NOSIGNAL) != 1)
		return -errno;
	pl->asked = true;
	return 0;
}

/* A socket of the jail's network: from the pool, which is then filled
 * again ahead of the next connection (init answers while the forward
 * goes on); asked for and waited on only when the pool is empty. */
static int socket_from_init(void *data, int family)
{
	struct socket_pool *pl = data;
	size_t k = family == AF_INET6;
	while (!pl->n[k]) {
		/* A batch on its way is taken first, whichever family it is. */
		int r = pl->asked ? 0 : pool_ask(pl, k);
		if (r == 0)
			r = pool_take_batch(pl);
		if (r < 0)
			return r;
	}
	int fd = pl->fds[k][--pl->n[k]];
	if (!pl->n[k] && !pl->asked)
		(void)pool_ask(pl, k);
	return fd;
}

static int add_publish(struct forwards *f, const struct net_grant *g, enum backend backend)
{
	_cleanup_free_ char *text = net_grant_text(g);
	struct net_addr host, target;
	if (net_addr_from_text(g->host, g->port, &host) < 0) {
		log_error("cannot publish '%s': not a numeric address", text);
		return -1;
	}
	/* The run's listener, on the loopback of the family asked for: a
	 * server on 0.0.0.0, :: or 127.0.0.1 takes 127.0.0.1. */
	net_addr_from_text(host.family == AF_INET6 ? "::1" : "127.0.0.1", g->jail_port, &target);
	/* The landlock backend shares the host's loopback: a listener of the
	 * run on that port is the host's already. */
	if (backend == BACKEND_LANDLOCK && net_addr_is_loopback(&host) && g->port == g->jail_port)
		return 0;
	/* Another address of the host, the same port: the run's own server
	 * on 0.0.0.0 or :: (bound to the loopback device by the supervisor)
	 * or on 127.0.0.1 shares that port with stockade's listener, which
	 * therefore listens on the interface of that address alone. 0.0.0.0
	 * or :: is no one interface's: refused. */
	unsigned ifindex = 0;
	if (backend == BACKEND_LANDLOCK && g->port == g->jail_port) {
		if (net_addr_is_wildcard(&host)) {
			log_error("cannot publish '%s' on the landlock backend: the run shares the host's ports, so "
				  "stockade cannot listen on port %u of every address while the run serves it",
				  text, (unsigned)g->port);
			log_hint("--publish ADDRESS:%u for the address of one interface, or --publish %s:%u:OTHER_PORT "
				 "with the server on OTHER_PORT",
				 (unsigned)g->port, host.family == AF_INET6 ? "[::]" : "0.0.0.0", (unsigned)g->port);
			return -1;
		}
		ifindex = host_address_ifindex(&host);
	}
	int fd = forward_listen_here(&host, ifindex);
	if (fd < 0) {
		char where[INET6_ADDRSTRLEN + 16];
		net_addr_format(&host, where, sizeof(where));
		log_error("cannot publish on '%s' (--publish %s): %s", where, text, strerror(-fd));
		return -1;
	}
	if (!f->fw)
		f->fw = forward_new();
	f->published = xgrow(f->published, f->n_published, sizeof(*f->published));
	f->published[f->n_published++] = fd;
	if (backend == BACKEND_NAMESPACES)
		forward_add(f->fw, fd, &target, FORWARD_EITHER_LOOPBACK, socket_from_init, &f->pool);
	else
		forward_add(f->fw, fd, &target, FORWARD_EITHER_LOOPBACK, forward_socket_here, NULL);
	return 0;
}

int forwards_begin(struct forwards *f, const struct policy *p, enum backend backend)
{
	*f = (struct forwards){ .pool.sock = -1, .factory_child = -1 };
	bool publish = false;
	for (size_t i = 0; i < p->n_grants; i++)
		publish |= p->grants[i].kind == GRANT_PUBLISH;
	if (publish && backend == BACKEND_NAMESPACES) {
		int sv[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
			log_error("cannot make the socket for --publish: %m");
			return -1;
		}
		f->pool.sock = sv[0];
		f->factory_child = sv[1];
	}
	for (size_t i = 0; i < p->n_grants; i++) {
		const struct net_grant *g = &p->grants[i];
		if (g->kind == GRANT_PUBLISH && add_publish(f, g, backend) < 0)
			return -1;
		if (g->kind != GRANT_CONNECT)
			continue;
		_cleanup_free_ char *what = net_grant_text(g);
		if (p->net == NET_OFF) {
			log_error("cannot give '--connect %s': the network is off", what);
			log_hint("--net loopback with --connect gives the command that one service");
			return -1;
		}
		if (backend != BACKEND_NAMESPACES)
			continue;
		/* The namespace jail: a listener at the same address inside,
		 * carried to the service. Its loopback is the only network
		 * there: another address is made its own, on lo. */
		struct net_addr a;
		_cleanup_free_ char *text = net_grant_text(g);
		if (net_addr_from_text(g->host, g->port, &a) < 0) {
			log_error("cannot give '--connect %s': not a numeric address or localhost", text);
			return -1;
		}
		if (net_addr_is_wildcard(&a)) {
			log_error("cannot give '--connect %s': an address to connect to, not 0.0.0.0 or ::", text);
			return -1;
		}
		/* With --net on the jail has the host's network already;
		 * network allow's jail has its loopback alone, as loopback's
		 * (the address a local route of lo, looked up before the
		 * allowed ports' rules). */
		if (p->net != NET_LOOPBACK && p->net != NET_ALLOW)
			continue;
		f->listens = xgrow(f->listens, f->n_listens, sizeof(*f->listens));
		f->listen_targets = xgrow(f->listen_targets, f->n_listens, sizeof(*f->listen_targets));
		struct child_listen *l = &f->listens[f->n_listens];
		l->len = net_addr_to_sockaddr(&a, &l->addr);
		l->add_address = !net_addr_is_loopback(&a);
		f->listen_targets[f->n_listens++] = a;
	}
	return 0;
}

int forwards_take_listens(struct forwards *f, int sock)
{
	for (size_t i = 0; i < f->n_listens; i++) {
		int fd = -1;
		int r = fd_recv(sock, &fd);
		if (r < 0)
			return r;
		if (!f->fw)
			f->fw = forward_new();
		forward_add(f->fw, fd, &f->listen_targets[i], 0, forward_socket_here, NULL);
	}
	return 0;
}

void forwards_end(struct forwards *f)
{
	forward_free(f->fw);
	if (f->pool.sock >= 0)
		close(f->pool.sock);
	for (size_t k = 0; k < 2; k++)
		for (size_t i = 0; i < f->pool.n[k]; i++)
			close(f->pool.fds[k][i]);
	if (f->factory_child >= 0)
		close(f->factory_child);
	free(f->listens);
	free(f->listen_targets);
	free(f->published);
	*f = (struct forwards){ .pool.sock = -1, .factory_child = -1 };
}
