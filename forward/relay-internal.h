/* The relay's internals, shared by its files. */
#pragma once

#include "forward/forward.h"

#include "lib/pump.h"

/* Bounds, so that a command asking a million names or opening a million
 * connections cannot grow stockade without end. */
#define RELAY_ENTRIES_MAX 1024	/* names and types in the cache */
#define RELAY_PENDING_MAX 256	/* of them on their way at once */
#define RELAY_IDLE_MAX 4	/* idle sockets kept for each name server */
#define RELAY_WAITS_MAX 256	/* queries waiting for the host's answer */
#define RELAY_CONNS_MAX 512	/* connections at once */
#define RELAY_HANDED_MAX 4096	/* addresses handed out, with their names */
#define RELAY_EXPECT_MAX 256	/* the landlock backend's connections on their way */
#define RELAY_SERVERS_MAX 3	/* name servers of resolv.conf, as the C library reads them */
#define RELAY_ALTS_MAX 4	/* a name's other addresses a connection tries */
/* How long a connection's first bytes may take (a ClientHello, a request
 * head) before it is decided on its address alone, or refused. */
#define RELAY_FIRST_WAIT_USEC (10ULL * 1000 * 1000)

/* A name server of the host's (resolv.conf). */
struct rs_server {
	struct sockaddr_storage addr;
	socklen_t len;
};

enum rs_state {
	RS_PENDING,		/* asked, not yet answered */
	RS_DONE,		/* answered (or failed: rcode SERVFAIL) */
};

/* A name and type as the host's resolver answered it, kept for its TTL;
 * while asked, the question on its way. */
struct rs_entry {
	char name[ALLOW_NAME_MAX + 1];
	uint16_t type;
	enum rs_state state;
	int rcode;
	struct dns_addrs addrs;	/* those a connection may go to */
	size_t n_forbidden;	/* addresses the answer held that it may not (this host's, link-local...) */
	unsigned long long expires;	/* monotonic, microseconds */
	unsigned long long asked;	/* when it was asked */
	bool from_hosts;	/* /etc/hosts answered */
	/* on its way */
	int fd;			/* -1: none */
	bool tcp;		/* asked again over TCP (the answer was truncated) */
	bool tcp_sent;
	uint16_t id;
	unsigned tries;
	unsigned server;	/* the server asked now */
	unsigned long long deadline;
	uint8_t query[ALLOW_NAME_MAX + 2 + 16 + 2];	/* with TCP's length in front */
	size_t query_len;
	uint8_t *in;		/* TCP: what came back so far */
	size_t in_have;
};

/* A query of the run's waiting for the host's answer. */
struct dns_wait {
	int fd;			/* the socket it came on, to answer on */
	struct sockaddr_storage from;
	socklen_t from_len;
	uint8_t msg[512];
	size_t len;
	struct dns_query q;
};

/* An address stockade handed out for an allowed name (or found for it
 * when a connection named it): the addresses a connection to that name
 * may go to, for the whole run. */
struct handed {
	char *name;
	int family;
	uint8_t addr[16];
};

/* The landlock backend's: a connection the supervisor sent on its way to
 * the relay's listener, from the command's socket, for dest. */
struct expect {
	struct sockaddr_storage from, dest;
	socklen_t from_len, dest_len;
};

enum rconn_state {
	RC_FIRST,		/* waiting for the first bytes, and reading them */
	RC_RESOLVE,		/* a name to look up before the decision */
	RC_CONNECT,		/* allowed: connecting out */
	RC_RELAY,		/* relaying */
};

struct rconn {
	int client;		/* the command's connection */
	int target;		/* stockade's, out; -1: none yet */
	int family;		/* of the address the command asked for */
	uint8_t dest[16];
	unsigned short port;
	/* where the connection out goes: the address asked for, then, where
	 * that cannot be reached before a byte moved, the name's others */
	int to_family;
	uint8_t to[16];
	int alt_family[RELAY_ALTS_MAX];
	uint8_t alt[RELAY_ALTS_MAX][16];
	size_t n_alts;
	enum rconn_state state;
	bool target_ready;	/* the connection out is made */
	bool early;		/* made before the decision, to an address handed out for a name allowed on
				 * the port (a server that speaks first: ssh's banner flows meanwhile) */
	bool allowed;		/* decided: the command's bytes may flow */
	bool first_bytes;	/* bytes came that could begin TLS or HTTP, and said no name yet */
	int lowat;		/* SO_RCVLOWAT set on the client; 0: the kernel's 1 */
	const char *how;	/* "TLS server name", "HTTP Host", "address" */
	char name[ALLOW_NAME_MAX + 1];	/* the name it carries, or its address's */
	unsigned long long deadline;
	struct pump up, down;
};

/* A socket of stockade's on this host's loopback, made at the first ask, and
 * its address, read once: the landlock backend asks it at every relayed
 * connect and datagram. */
struct kept_socket {
	int fd;			/* -1 until made */
	socklen_t len;
	struct sockaddr_storage addr;
};

/* A socket the command's connections come on. */
struct rlistener {
	int fd;
	bool here;		/* the landlock backend's: the destination is expected */
};

struct relay {
	const struct policy *p;
	struct report *rep;
	char *source;		/* where network allow comes from, for the records */
	/* the resolver */
	bool configured;	/* resolv.conf read */
	struct rs_server servers[RELAY_SERVERS_MAX];
	size_t n_servers;
	unsigned timeout_usec;	/* a try's, resolv.conf's timeout: (5 s) */
	unsigned attempts;	/* tries of each server, resolv.conf's attempts: (2) */
	struct rs_entry *entries;
	size_t n_entries;
	struct rs_entry *pending[RELAY_PENDING_MAX];	/* those on their way */
	size_t n_pending;
	/* sockets connected to each server, idle since their answer came,
	 * for the next question (a fresh id each) */
	int idle[RELAY_SERVERS_MAX][RELAY_IDLE_MAX];
	size_t n_idle[RELAY_SERVERS_MAX];
	struct dns_wait *waits;
	size_t n_waits;
	struct handed *handed;
	size_t n_handed;
	/* sockets the run's queries come on */
	int responder;		/* the namespace jail's 127.0.0.1:53; -1 */
	struct kept_socket resolver[2];	/* the landlock backend's own, IPv4 and IPv6; fd -1 */
	/* connections */
	struct rlistener *listeners;	/* as many as the run was given: two for each port allowed */
	size_t n_listeners;
	struct kept_socket here[2];	/* the landlock backend's listeners, IPv4 and IPv6, among them; fd -1 */
	struct expect *expects;
	size_t n_expects;
	struct rconn *conns;
	size_t n_conns;
	struct pump_spares spares;
	/* this host's addresses, for relay_forbidden */
	bool host_read;
	int addr_watch;		/* changes of them (rtnetlink's address groups); -1 */
	struct sockaddr_storage *host;
	size_t n_host;
};

/* resolve.c: the host's resolver, asked without blocking. */
/* The entry for name and type: a fresh one from the cache (RS_DONE), one
 * on its way (RS_PENDING), or a new question sent now (answered at once
 * by the hosts file, or failed at once: RS_DONE, and nothing else told).
 * NULL when the cache is full of questions on their way. */
struct rs_entry *rs_lookup(struct relay *r, const char *name, uint16_t type);
/* What rs_lookup would give without asking: NULL unless fresh or on its
 * way. */
struct rs_entry *rs_find(struct relay *r, const char *name, uint16_t type);
size_t rs_pollfds(const struct relay *r, struct pollfd *fds, size_t max);
/* Reads what came; for each entry answered, relay_resolved. */
void rs_ready(struct relay *r, const struct pollfd *fds, size_t n);
/* Tries again or gives up on what timed out; the earliest deadline
 * left (0: none). */
unsigned long long rs_tick(struct relay *r, unsigned long long now);
void rs_free(struct relay *r);
/* Remaining seconds of an entry's answer. */
uint32_t rs_ttl_left(const struct rs_entry *e, unsigned long long now);

/* relay.c */
/* An entry was answered: the queries and connections waiting on it go on. */
void relay_resolved(struct relay *r, struct rs_entry *e);
/* addr was handed out for name (or found for it). */
void relay_hand(struct relay *r, const char *name, int family, const uint8_t *addr);
/* Was it handed out for name? */
bool relay_handed_for(const struct relay *r, const char *name, int family, const uint8_t *addr);

/* An address no connection goes to: relay_address_special, or one of
 * this host's own (read once). */
bool relay_forbidden(struct relay *r, int family, const uint8_t *addr);

/* dns.c: the run's queries. */
void dns_serve(struct relay *r, int fd);
/* The queries waiting on e answered. */
void dns_answer_waiting(struct relay *r, struct rs_entry *e);

/* conn.c: the run's connections. */
void conn_accept(struct relay *r, size_t listener);
size_t conn_pollfds(const struct relay *r, struct pollfd *fds, size_t max);
void conn_ready(struct relay *r, const struct pollfd *fds, size_t n);
/* The connections waiting on e's answer go on. */
void conn_resolved(struct relay *r, struct rs_entry *e);
unsigned long long conn_tick(struct relay *r, unsigned long long now);
void conn_close_all(struct relay *r);

/* Addresses as text: "10.0.0.1", "2001:db8::1"; with the port,
 * "10.0.0.1:443", "[2001:db8::1]:443". */
void relay_addr_text(int family, const uint8_t *addr, char *buf, size_t size);
void relay_addr_port_text(int family, const uint8_t *addr, unsigned short port, char *buf, size_t size);
