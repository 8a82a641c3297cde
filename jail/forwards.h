/* --publish and --connect, as each backend carries them out: the
 * forwards stockade serves (supervise/forward.c), and what the namespace
 * jail's init binds for them. */
#pragma once

#include <stddef.h>

#include "jail/child.h"
#include "policy/policy.h"
#include "supervise/supervise.h"

struct forwards {
	struct forward *fw;	/* NULL: nothing to forward */
	int factory;		/* the namespace jail: init's end makes sockets there; -1 */
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
