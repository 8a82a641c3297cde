/* Socket addresses as stockade sees them (the supervisor's copies of
 * the command's, a forward's ends): parsed from a sockaddr's bytes,
 * classified, printed. Pure, but for net_connect_outcome. */
#pragma once

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/un.h>

struct net_addr {
	int family;		/* AF_INET, AF_INET6, AF_UNIX, AF_UNSPEC, or another */
	union {
		struct in_addr v4;
		struct in6_addr v6;
	};
	unsigned short port;	/* host order */
	unsigned scope;		/* IPv6 scope id */
	bool abstract;		/* AF_UNIX: an abstract name */
	bool unnamed;		/* AF_UNIX: no name at all (autobind) */
	char path[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	size_t path_len;	/* bytes of path (an abstract name may hold NULs) */
};

/* Parses len bytes of a sockaddr; -EINVAL when they cannot be one of the
 * family they claim (the kernel would refuse them too), -EAFNOSUPPORT for
 * an empty buffer. */
int net_addr_parse(const void *buf, size_t len, struct net_addr *ret);

/* An IPv4-mapped or -compatible IPv6 address becomes the IPv4 address it
 * carries, so that every spelling of 127.0.0.1 gets the same verdict. */
void net_addr_unmap(struct net_addr *a);

bool net_addr_is_loopback(const struct net_addr *a);	/* 127/8, ::1 */
bool net_addr_is_wildcard(const struct net_addr *a);	/* 0.0.0.0, :: */
/* 0.0.0.0 and :: become the loopback of their family: where a connect or
 * a datagram to them goes. */
void net_addr_wildcard_to_loopback(struct net_addr *a);
bool net_addr_same_ip(const struct net_addr *a, const struct net_addr *b);

/* "127.0.0.1:5432", "[::1]:80", "unix:/run/docker.sock", "unix:@name". */
void net_addr_format(const struct net_addr *a, char *buf, size_t size);
/* An inet address as a sockaddr: its length, or 0 for another family. */
socklen_t net_addr_to_sockaddr(const struct net_addr *a, struct sockaddr_storage *ss);
/* A numeric address and a port ("localhost" is 127.0.0.1): 0 or -EINVAL. */
int net_addr_from_text(const char *host, unsigned short port, struct net_addr *ret);

/* Where a non-blocking connect of TCP socket fd that answered EINPROGRESS
 * stands, asked once: 0 made, EINPROGRESS still under way, or the error
 * it ended with. On loopback the handshake is over by the time connect
 * returns, as a rule, and one TCP_INFO says so. */
int net_connect_outcome(int fd);
