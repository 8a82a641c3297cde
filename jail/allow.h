/* Network allow, as each backend carries it out: the relay stockade
 * serves (forward/), the ports the namespace jail's init listens on and
 * what it hands over, and the hooks the landlock backend's supervisor
 * calls. A run in another mode makes none of it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "netns/netns.h"
#include "policy/policy.h"
#include "policy/report.h"
#include "forward/forward.h"
#include "supervise/supervise.h"

/* The allowed ports, at most: a port each, 443 and 80 for a name without
 * one. */
#define ALLOWING_PORTS_MAX 64

struct allowing {
	struct relay *relay;	/* NULL: not network allow */
	unsigned short ports[ALLOWING_PORTS_MAX];
	size_t n_ports;
};

/* Before the command starts: the relay, for network allow. 0, or -1 with
 * the message said. */
int allowing_begin(struct allowing *a, const struct policy *p, struct report *rep);
/* The namespace jail: the responder's socket init bound (the relay
 * answers it: *fd then -1), and the listeners init sends after
 * --connect's, one per port and family (none where the kernel has no
 * IPv6). */
void allowing_take_responder(struct allowing *a, int *fd);
int allowing_take_listens(struct allowing *a, int sock);
/* The landlock backend: the supervisor carries the run's connections
 * out and its lookups to the relay. */
void allowing_supervise(struct allowing *a, struct supervisor *sv);
/* The words of the namespace jail's way out, for network allow. */
void allowing_outside_words(void *data, const struct netns_attempt *at, char **ret_rule, char **ret_fix);
/* The run is over: the relay's last records. */
void allowing_finish(struct allowing *a);
void allowing_end(struct allowing *a);
