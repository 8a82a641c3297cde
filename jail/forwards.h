/* --publish and --connect, as each backend carries them out: the
 * forwards stockade serves (supervise/forward.c), and what the namespace
 * jail's init binds for them. */
#pragma once

#include <stddef.h>

#include "jail/child.h"
#include "policy/policy.h"
#include "supervise/supervise.h"

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
int forwards_begin(struct forwards *f, const struct policy *p, enum backend backend, struct report *rep);
/* The namespace jail: --connect's listeners, as init sends them. */
int forwards_take_listens(struct forwards *f, int sock);
void forwards_end(struct forwards *f);
