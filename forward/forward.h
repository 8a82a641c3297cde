/* --publish and --connect, one mechanism: the forwards stockade serves
 * (forward.c: a listener on one side, a connection made for each one it
 * accepts on the other, the bytes spliced between), and how each backend
 * sets them up (forwards.c: the host's listeners for --publish, the
 * namespace jail's init's sockets and its --connect listeners). */
#pragma once

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "lib/netaddr.h"
#include "policy/policy.h"
#include "policy/report.h"

struct forward;
/* A non-blocking socket of family, made where the forward's target is
 * (the jail's network namespace, or here): the descriptor or -errno. */
typedef int (*forward_socket_fn)(void *data, int family);
struct forward *forward_new(void);
void forward_free(struct forward *fw);
/* A socket made here (for a target in stockade's own network). */
int forward_socket_here(void *data, int family);
/* Listens here on a (IPv6 alone for an IPv6 address): the descriptor or
 * -errno. */
int forward_listen_here(const struct net_addr *a);
/* A loopback target refused on its family's loopback is tried on the
 * other's (a server on [::1] alone, or 127.0.0.1 alone). */
#define FORWARD_EITHER_LOOPBACK (1u << 0)
/* Each connection listen_fd accepts is carried to target, through a
 * socket make_socket gives. The forward owns listen_fd. */
void forward_add(struct forward *fw, int listen_fd, const struct net_addr *target, unsigned flags,
		 forward_socket_fn make_socket, void *data);
size_t forward_pollfds(const struct forward *fw, struct pollfd *fds, size_t max);
void forward_ready(struct forward *fw, const struct pollfd *fds, size_t n);

/* ---- set up per backend (forwards.c) ---- */

/* A listener for --connect that the namespace jail's init binds in the
 * jail's network namespace and hands over. */
struct child_listen {
	struct sockaddr_storage addr;
	socklen_t len;
	bool add_address;	/* not loopback: made the jail's own first */
};

/* How many sockets of the jail's network init makes for --publish at a
 * time (forwards.c keeps them until connections come). */
#define FACTORY_BATCH 8

/* Sockets of the jail's network, made by its init ahead of the
 * connections --publish forwards: [0] IPv4, [1] IPv6. */
struct socket_pool {
	int sock;		/* to init (the factory); -1 */
	int fds[2][FACTORY_BATCH];
	size_t n[2];
	bool asked;		/* a batch is on its way */
};

struct forwards {
	struct forward *fw;	/* NULL: nothing to forward */
	struct socket_pool pool;	/* the namespace jail's, for --publish */
	int factory_child;	/* init's end, until the clone */
	struct child_listen *listens;	/* --connect: what init binds in the jail */
	struct net_addr *listen_targets;	/* and where each goes on the host */
	size_t n_listens;
};

/* Before the command starts: the host's listeners for --publish (0, or
 * -1 with the message said), the factory and --connect's listeners for
 * the namespace jail. */
int forwards_begin(struct forwards *f, const struct policy *p, enum backend backend);
/* The namespace jail: --connect's listeners, as init sends them. */
int forwards_take_listens(struct forwards *f, int sock);
void forwards_end(struct forwards *f);
