/* The network namespace module: the rtnetlink requests that set up a fresh
 * network namespace (today only "bring lo up", for network mode loopback),
 * built into a caller's buffer with libmnl and sent by one small function.
 * Nothing here prints except netns_print, which writes where it is told. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "policy/policy.h"

struct nlmsghdr;
struct report;


/* Builds an RTM_NEWLINK request that sets IFF_UP on interface ifindex into
 * buf (size bytes; MNL_SOCKET_BUFFER_SIZE is plenty), with
 * NLM_F_REQUEST|NLM_F_ACK and the given sequence number. Pure: no system
 * call. Returns the nlmsghdr inside buf, or NULL if size is too small. */
struct nlmsghdr *netns_build_link_up(void *buf, size_t size, int ifindex, unsigned seq);

/* Sends one request on a NETLINK_ROUTE socket and waits for its ACK;
 * returns 0, or -errno from the kernel's NLMSG_ERROR (-EPERM without
 * CAP_NET_ADMIN over the namespace, -ENODEV for an unknown ifindex) or
 * from the socket calls (netns_send_all_fd's ACK reading, on a socket of
 * its own). */
int netns_send(const struct nlmsghdr *req);
/* Requests laid back to back in reqs (len bytes, each NLMSG_ALIGNed, each
 * asking for an ACK), sent at once on a NETLINK_ROUTE socket of another
 * network namespace (the jail's, opened by its init), which the caller
 * keeps; waits for all n ACKs. 0, or the first -errno: the kernel goes on
 * past a request that fails, answering each. */
int netns_send_all_fd(int fd, const void *reqs, size_t len, size_t n);

/* Brings lo up in the current network namespace. 0 or -errno. */
int netns_loopback_up(void);

/* --connect to an address that is not loopback, in the jail's network
 * namespace: the address made the jail's own, on lo (host scope), so
 * that a connect to it reaches the listener init binds there and
 * stockade carries to the real one; it never takes the way out. The
 * request (pure), and sending it: 0 or -errno. */
struct nlmsghdr *netns_build_local_address(void *buf, size_t size, int family, const void *addr, unsigned seq);
int netns_loopback_add_address(int family, const void *addr);

/* The name responder (responder.c). In the jail's init, after lo is up:
 * a UDP socket bound to 127.0.0.1:53 of the jail's network namespace,
 * for stockade to serve from outside. The descriptor, or -errno. */
int netns_responder_open(void);
/* The answer to one DNS query: NXDOMAIN for its one question, FORMERR for
 * a question it cannot read; the question's name (as text) into name.
 * Pure. The reply's length, or -EINVAL for what is not a standard query
 * (no answer is sent), -ENOSPC. */
int netns_dns_refusal(const void *query, size_t len, void *reply, size_t size, char *name, size_t name_size);
/* Answers every query waiting on the responder's socket and records each
 * name asked in the report, with the network mode's source (where
 * loopback was chosen). 0, or -errno from the socket. */
int netns_responder_serve(int fd, const char *source, struct report *rep);
/* Where the jail's resolver configuration is covered, so that lookups go
 * to the responder: an empty file makes the C libraries ask 127.0.0.1. */
#define NETNS_RESOLV_CONF "/etc/resolv.conf"

/* The way out that leads nowhere (outside.c), in network mode loopback:
 * a veth pair of the jail's own, the default routes on one end, a packet
 * socket on the other for stockade to read. In the jail's init, cheaply:
 * a NETLINK_ROUTE socket and an unbound packet socket of the jail's
 * network namespace, handed to stockade; stockade then makes the pair
 * through them while init builds the root (its owner's capabilities over
 * the jail's user namespace are enough). 0 or -errno (-EOPNOTSUPP where
 * the kernel has no veth). */
int netns_outside_sockets(int *ret_netlink, int *ret_packet);
/* Its two ends' names, as the jail sees them. */
#define NETNS_OUTSIDE_ROUTE "stockade0"
#define NETNS_OUTSIDE_TAP "stockade1"
int netns_outside_make(int netlink, int packet);
/* In stockade: makes it (netns_outside_make), or, where it cannot be
 * made, closes *packet (-1) and names the gap in the report: a connect
 * out still fails at once, unrecorded. */
void netns_outside_begin(int *packet, int netlink, struct report *rep);
/* Closes the packet socket (-1: none) without waiting for its last
 * close, which a child of stockade's makes. */
void netns_outside_release(int packet, int refusals);
struct nlmsghdr *netns_build_veth(void *buf, size_t size, const char *name, int index, const char *peer,
				  int peer_index, unsigned seq);
/* RTM_NEWLINK setting flags (and only those) on ifindex. */
struct nlmsghdr *netns_build_link_flags(void *buf, size_t size, int ifindex, unsigned flags, unsigned seq);

/* Where a packet the jail sent out was going. */
struct netns_attempt {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[16];
	uint16_t port;
	bool datagram;		/* UDP; else a TCP connection's SYN */
};
/* The answer to one frame read from the pair's far end: an ICMP (ICMPv6)
 * "network unreachable" back to the jail, quoting it, for a TCP SYN or a
 * UDP datagram, with where it was going in *ret. Pure. The reply's
 * length, or -EINVAL for a frame that gets no answer (ICMP, TCP past its
 * SYN, a fragment, what is not IP), -ENOSPC. */
int netns_outside_answer(const void *frame, size_t len, void *reply, size_t size, struct netns_attempt *ret);
/* Answers every frame waiting on the socket and records each address in
 * the report, with the network mode's source. 0, or -errno. */
int netns_outside_serve(int fd, const char *source, struct report *rep);

/* The look-out on the jail's loopback, in network mode loopback: a
 * packet socket on its lo that keeps only the TCP resets the kernel
 * answers a connect with when nothing listens (filtered in the kernel;
 * lo's sends are ignored), for stockade to read. In the jail's init, the
 * socket alone, hooked to nothing (netns_refusals_socket: the descriptor
 * or -errno); in stockade, its filter and its bind to lo, while init
 * builds the root (netns_refusals_bind: 0 or -errno, the socket closed
 * and -1 then). */
int netns_refusals_socket(void);
int netns_refusals_bind(int *fd);
/* Where the connect such a reset answers went (its source address and
 * port), from one frame. Pure. 0, or -EINVAL for any other frame. */
int netns_refused_parse(const void *frame, size_t len, struct netns_attempt *ret);
/* Whether /proc/net/tcp or tcp6 text shows a listener on port for addr
 * (the address itself, a wildcard, IPv4's mapped form). Pure. */
bool netns_host_listens(const char *text, int family, const uint8_t *addr, uint16_t port);
/* Reads every reset waiting, and records each loopback address and port
 * the host serves (asked of stockade's own /proc/net/tcp and tcp6, the
 * host's) as a refused connect with its --connect: nothing in the jail
 * listened there, the host's service would have; allowing: in network
 * allow's words (--net on is no fix there: it takes --allow's place).
 * 0, or -errno. */
/* published: the run's own --publish ports (the host's side and the
 * jail's), none of which is recorded: a reset there is stockade's forward
 * reaching a server not listening yet, and the host's listener on such a
 * port is the run's own, which --connect would not give. */
int netns_refusals_serve(int fd, const char *source, struct report *rep, bool allowing, const struct policy *published);
/* Network allow (allow.c): every TCP connection to one of the allowed
 * ports lands on a listener of the jail's own network, whatever its
 * address, through a routing rule per port and family (TCP, that
 * destination port: table NETNS_ALLOW_TABLE) and that table's one route,
 * local for every address. Pure builders, and in the jail's init (which
 * has CAP_NET_ADMIN over its network namespace) the requests sent: 0 or
 * -errno (IPv6's skipped where the kernel has none). */
#define NETNS_ALLOW_TABLE 100
struct nlmsghdr *netns_build_allow_rule(void *buf, size_t size, int family, unsigned short port, unsigned seq);
struct nlmsghdr *netns_build_allow_route(void *buf, size_t size, int family, unsigned seq);
int netns_allow_routes(const unsigned short *ports, size_t n);
/* A listener on 0.0.0.0 or :: (IPv6 alone) and port: the descriptor or
 * -errno. */
int netns_allow_listen(int family, unsigned short port);

/* What a record of the way out says of one attempt in a mode that is not
 * loopback (network allow): the rule and the fix, allocated. */
typedef void (*netns_outside_words_fn)(void *data, const struct netns_attempt *a, char **ret_rule, char **ret_fix);
/* netns_outside_serve, with the words of words() (NULL: loopback's). */
int netns_outside_serve_with(int fd, const char *source, struct report *rep, netns_outside_words_fn words, void *data);

/* Prints a request for explain and golden tests (mnl_nlmsg_fprintf). */
void netns_print(FILE *f, const struct nlmsghdr *req);

/* What the network namespace enforces of the network mode (on: none of
 * its own, the host's network), into the report. */
void netns_describe(enum net_mode net, struct report *rep);
