#include "lib/netaddr.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>

int net_addr_parse(const void *buf, size_t len, struct net_addr *ret)
{
	*ret = (struct net_addr){ .family = AF_UNSPEC };
	if (len < sizeof(sa_family_t))
		return -EAFNOSUPPORT;
	sa_family_t family;
	memcpy(&family, buf, sizeof(family));
	ret->family = family;
	switch (family) {
	case AF_INET: {
		struct sockaddr_in in;
		if (len < sizeof(in))
			return -EINVAL;
		memcpy(&in, buf, sizeof(in));
		ret->v4 = in.sin_addr;
		ret->port = ntohs(in.sin_port);
		return 0;
	}
	case AF_INET6: {
		struct sockaddr_in6 in6;
		if (len < sizeof(in6))
			return -EINVAL;
		memcpy(&in6, buf, sizeof(in6));
		ret->v6 = in6.sin6_addr;
		ret->port = ntohs(in6.sin6_port);
		ret->scope = in6.sin6_scope_id;
		return 0;
	}
	case AF_UNIX: {
		size_t n = len - offsetof(struct sockaddr_un, sun_path);
		if (len > sizeof(struct sockaddr_un))
			return -EINVAL;
		if (len <= offsetof(struct sockaddr_un, sun_path)) {
			ret->unnamed = true;
			return 0;
		}
		const char *p = (const char *)buf + offsetof(struct sockaddr_un, sun_path);
		if (p[0] == '\0') {
			ret->abstract = true;
			ret->path_len = n - 1;
			memcpy(ret->path, p + 1, n - 1);
		} else {
			/* A path ends at its first NUL, as for the kernel. */
			ret->path_len = strnlen(p, n);
			memcpy(ret->path, p, ret->path_len);
		}
		ret->path[ret->path_len] = '\0';
		return 0;
	}
	default:
		return 0;
	}
}

void net_addr_unmap(struct net_addr *a)
{
	if (a->family != AF_INET6)
		return;
	const uint8_t *b = a->v6.s6_addr;
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t zero[12] = { 0 };
	bool is_mapped = memcmp(b, mapped, 12) == 0;
	/* ::a.b.c.d, deprecated but still routed to a.b.c.d by some stacks;
	 * :: and ::1 themselves are not. */
	bool is_compat = memcmp(b, zero, 12) == 0 && (b[12] | b[13]) != 0;
	if (!is_mapped && !is_compat)
		return;
	struct in_addr v4;
	memcpy(&v4, b + 12, 4);
	a->family = AF_INET;
	a->v4 = v4;
	a->scope = 0;
}

bool net_addr_is_loopback(const struct net_addr *a)
{
	if (a->family == AF_INET)
		return (ntohl(a->v4.s_addr) >> 24) == 127;
	if (a->family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&a->v6);
	return false;
}

bool net_addr_is_wildcard(const struct net_addr *a)
{
	if (a->family == AF_INET)
		return a->v4.s_addr == htonl(INADDR_ANY);
	if (a->family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&a->v6);
	return false;
}

void net_addr_wildcard_to_loopback(struct net_addr *a)
{
	if (!net_addr_is_wildcard(a))
		return;
	if (a->family == AF_INET)
		a->v4.s_addr = htonl(INADDR_LOOPBACK);
	else
		a->v6 = in6addr_loopback;
}

bool net_addr_same_ip(const struct net_addr *a, const struct net_addr *b)
{
	if (a->family != b->family)
		return false;
	if (a->family == AF_INET)
		return a->v4.s_addr == b->v4.s_addr;
	if (a->family == AF_INET6)
		return memcmp(&a->v6, &b->v6, sizeof(a->v6)) == 0;
	return false;
}

void net_addr_format(const struct net_addr *a, char *buf, size_t size)
{
	char ip[INET6_ADDRSTRLEN];
	switch (a->family) {
	case AF_INET:
		inet_ntop(AF_INET, &a->v4, ip, sizeof(ip));
		snprintf(buf, size, "%s:%u", ip, a->port);
		break;
	case AF_INET6:
		inet_ntop(AF_INET6, &a->v6, ip, sizeof(ip));
		if (a->scope)
			snprintf(buf, size, "[%s%%%u]:%u", ip, a->scope, a->port);
		else
			snprintf(buf, size, "[%s]:%u", ip, a->port);
		break;
	case AF_UNIX:
		if (a->unnamed) {
			snprintf(buf, size, "unix:(unnamed)");
		} else {
			/* Bytes the terminal could take for an escape become '?'. */
			char clean[sizeof(a->path)];
			for (size_t i = 0; i <= a->path_len; i++)
				clean[i] = i == a->path_len ? '\0'
					   : ((unsigned char)a->path[i] < 0x20 || a->path[i] == 0x7f) ? '?'
												: a->path[i];
			snprintf(buf, size, "unix:%s%s", a->abstract ? "@" : "", clean);
		}
		break;
	case AF_UNSPEC:
		snprintf(buf, size, "unspec");
		break;
	default:
		snprintf(buf, size, "family %d", a->family);
	}
}

socklen_t net_addr_to_sockaddr(const struct net_addr *a, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (a->family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;
		in->sin_family = AF_INET;
		in->sin_port = htons(a->port);
		in->sin_addr = a->v4;
		return sizeof(*in);
	}
	if (a->family == AF_INET6) {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(a->port);
		in6->sin6_addr = a->v6;
		in6->sin6_scope_id = a->scope;
		return sizeof(*in6);
	}
	return 0;
}

int net_addr_from_text(const char *host, unsigned short port, struct net_addr *ret)
{
	*ret = (struct net_addr){ .family = AF_INET, .port = port };
	if (strcmp(host, "localhost") == 0) {
		ret->v4.s_addr = htonl(INADDR_LOOPBACK);
		return 0;
	}
	if (inet_pton(AF_INET, host, &ret->v4) == 1)
		return 0;
	ret->family = AF_INET6;
	if (inet_pton(AF_INET6, host, &ret->v6) == 1)
		return 0;
	return -EINVAL;
}

int net_connect_outcome(int fd)
{
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) < 0)
		return errno;
	/* Made; or made, and the peer has said all it will. */
	if (ti.tcpi_state == TCP_ESTABLISHED || ti.tcpi_state == TCP_CLOSE_WAIT)
		return 0;
	if (ti.tcpi_state == TCP_SYN_SENT)
		return EINPROGRESS;
	/* Refused or reset: the error, which this read clears. */
	int err = 0;
	socklen_t el = sizeof(err);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
		return errno;
	return err;
}
