/* What stockade carries between the jail and the outside, one mechanism:
 * the forwards of --publish and --connect (forward.c: a listener on one
 * side, a connection made for each one it accepts on the other, the
 * bytes spliced between), how each backend sets them up (forwards.c: the
 * host's listeners for --publish, the namespace jail's init's sockets
 * and its --connect listeners), and network allow's relay (below). */
#pragma once

#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "lib/netaddr.h"
#include "policy/allow.h"
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
/* Listens here on a (IPv6 alone for an IPv6 address), on the interface
 * of index ifindex alone unless it is 0: the descriptor or -errno. */
int forward_listen_here(const struct net_addr *a, unsigned ifindex);
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
	int *published;		/* --publish's listeners here (the forward owns them) */
	size_t n_published;
};

/* Before the command starts: the host's listeners for --publish (0, or
 * -1 with the message said), the factory and --connect's listeners for
 * the namespace jail. */
int forwards_begin(struct forwards *f, const struct policy *p, enum backend backend);
/* The namespace jail: --connect's listeners, as init sends them. */
int forwards_take_listens(struct forwards *f, int sock);
void forwards_end(struct forwards *f);

/* ==== the allowlist's relay (relay.c, conn.c, dns.c, dnsmsg.c, resolve.c, sniff.c) ====
 *
 * The relay of network allow: the run's name lookups answered by stockade
 * (allowed names resolved by the host, the rest NXDOMAIN at once), and
 * each TCP connection out taken from the command, read for the name it
 * carries (a TLS ClientHello's server name, an HTTP request's Host),
 * decided, made by stockade to the name's own address, and relayed. The
 * same code for both backends past the point where a connection or a
 * query is taken: the namespace jail hands over sockets of its network
 * (a listener that every connection to an allowed port lands on, the
 * responder on 127.0.0.1:53), the landlock backend's supervisor connects
 * the command's sockets to this relay's own on loopback. Nothing here
 * blocks: stockade's one loop polls the relay's descriptors. */

/* ---- the first bytes of a connection (sniff.c, pure) ---- */

/* The largest ClientHello read (its handshake message), the largest
 * HTTP request head, and the most bytes peeked for either. */
#define RELAY_HELLO_MAX (32 * 1024)
#define RELAY_HEAD_MAX (16 * 1024)
#define RELAY_PEEK_MAX (64 * 1024)

enum relay_sniff_kind {
	SNIFF_MORE,		/* not enough bytes yet: need at least .need */
	SNIFF_TLS,		/* a ClientHello; name its server name, "" without one */
	SNIFF_HTTP,		/* an HTTP/1 request; name its Host's (or its target's) */
	SNIFF_OTHER,		/* neither: another protocol */
	SNIFF_BAD,		/* what a server could read two ways, or not at all: .why */
};

struct relay_sniffed {
	enum relay_sniff_kind kind;
	char name[ALLOW_NAME_MAX + 1];	/* normalized (policy/allow.h); "" when none */
	unsigned short port;	/* HTTP: the port the Host or target names; 0 none */
	bool literal;		/* HTTP: the Host or target is an address (no name) */
	const char *why;	/* SNIFF_BAD: static text */
	size_t need;		/* SNIFF_MORE */
};

/* Reads len bytes from a connection's start. Pure. */
void relay_sniff(const void *buf, size_t len, struct relay_sniffed *ret);

/* ---- DNS messages (dnsmsg.c, pure) ---- */

#define DNS_TYPE_A 1
#define DNS_TYPE_AAAA 28
#define DNS_CLASS_IN 1
#define DNS_RCODE_NOERROR 0
#define DNS_RCODE_FORMERR 1
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_NOTIMP 4
#define DNS_RCODE_REFUSED 5
/* The addresses one answer holds at most. */
#define RELAY_ADDRS_MAX 16

/* A query as the run asked it. */
struct dns_query {
	uint16_t id;
	uint16_t type, class_;
	bool rd;		/* recursion desired */
	char name[ALLOW_NAME_MAX + 1];	/* normalized; "" when it is no host name */
	char text[ALLOW_NAME_MAX * 4 + 2];	/* as asked, printable (\DDD), for the report */
	size_t question_end;	/* the offset past its question */
};

/* A standard query of one question: 0, -EINVAL for what is none
 * (a response, another opcode, more than one question, a name that
 * cannot be read), -ENOTSUP for what is a query stockade answers
 * NOTIMP to (another opcode). Pure. */
int dns_parse_query(const void *msg, size_t len, struct dns_query *ret);

/* Addresses of one family with their time to live. */
struct dns_addrs {
	int family;		/* AF_INET or AF_INET6 */
	uint8_t addr[RELAY_ADDRS_MAX][16];
	size_t n;
	uint32_t ttl;		/* seconds */
};

/* The answer to query q (the message it came in, len bytes): its question
 * echoed, rcode, and for NOERROR the addresses a (NULL: none, NODATA)
 * with ttl; into reply (size bytes). Its length, or -ENOSPC. Pure. */
int dns_build_answer(const void *query, size_t len, const struct dns_query *q, int rcode, const struct dns_addrs *a,
		     uint32_t ttl, void *reply, size_t size);

/* A query of stockade's own for name and type, with id, into buf: its
 * length, or -ENOSPC. Pure. */
int dns_build_query(const char *name, uint16_t type, uint16_t id, void *buf, size_t size);

/* What a name server answered to a query of ours (name, type, id):
 * its rcode, and for NOERROR the addresses of the type at the end of the
 * CNAME chain from name, with the least TTL on the way (a negative
 * answer's TTL from its SOA, RFC 2308). -EINVAL for what is no answer to
 * that query (another id or question, a malformed message), -EAGAIN for
 * a truncated one (TC: ask again over TCP). Pure. */
struct dns_result {
	int rcode;
	struct dns_addrs addrs;
	uint32_t ttl;		/* of the answer, positive or negative */
};
int dns_parse_response(const void *msg, size_t len, const char *name, uint16_t type, uint16_t id,
		       struct dns_result *ret);

/* ---- the relay ---- */

struct relay;

/* p and rep must outlive it. */
struct relay *relay_new(const struct policy *p, struct report *rep);
void relay_free(struct relay *r);

/* The namespace jail: its responder's socket (127.0.0.1:53 of the jail's
 * network, bound by its init), and a listener of the jail's network that
 * every connection to an allowed port lands on, its destination the
 * connection's own address (getsockname). The relay owns them. */
void relay_add_responder(struct relay *r, int fd);
void relay_add_listener(struct relay *r, int fd);

/* The landlock backend: a socket of stockade's own on this host's
 * loopback for the run's queries (UDP), or for its connections (TCP), of
 * family: 0 and its address, or -errno. Made once, when first asked. */
int relay_resolver_address(struct relay *r, int family, struct sockaddr_storage *ret, socklen_t *ret_len);
int relay_listener_address(struct relay *r, int family, struct sockaddr_storage *ret, socklen_t *ret_len);
/* The connection the command's socket (its local address: from) makes
 * to the relay's listener is the run's to dest, the address the command
 * asked for: said by the supervisor before the relay can accept it. */
void relay_expect(struct relay *r, const struct sockaddr *from, socklen_t from_len, const struct sockaddr *dest,
		  socklen_t dest_len);

/* An allowed name the relay handed out addr for (family, 16 bytes, an
 * IPv4 address in the first 4), for the words of a refusal; NULL. */
const char *relay_name_of(const struct relay *r, int family, const void *addr);

/* stockade's loop: the descriptors to wait on, what they said, and how
 * long poll may wait at most for the relay's timers (-1: no timer). */
size_t relay_pollfds(const struct relay *r, struct pollfd *fds, size_t max);
void relay_ready(struct relay *r, const struct pollfd *fds, size_t n);
int relay_timeout_ms(const struct relay *r);
/* The run is over: what is still relayed ends, each connection and name
 * written into the report. */
void relay_finish(struct relay *r);

/* What network allow enforces here, into the report. */
void relay_describe(const struct policy *p, enum backend backend, struct report *rep);

/* Is the address one a connection out never goes to, whatever name it
 * is handed out for: loopback, the wildcard, link-local (a cloud's
 * metadata service), multicast, broadcast, or a v4-mapped form of one?
 * (This host's own addresses are refused too, by the relay.) family
 * AF_INET: addr's first 4 bytes. Pure. */
bool relay_address_special(int family, const uint8_t *addr);
