/* This host's own addresses, as its interfaces have them now: what a
 * connection to "the host" reaches. The supervisor's and the relay's
 * view of them both come from here. */
#pragma once

#include <stddef.h>
#include <sys/socket.h>

/* Every IPv4 and IPv6 address of the host's interfaces, each with its
 * family's own size copied in (the rest zero), in *out (the caller frees
 * it): how many, or 0 with *out NULL when they cannot be read. */
size_t host_addresses(struct sockaddr_storage **out);

struct net_addr;
/* The index of the interface that holds the address a (an IPv4 or IPv6
 * address of this host), or 0 when none does or they cannot be read. */
unsigned host_address_ifindex(const struct net_addr *a);
