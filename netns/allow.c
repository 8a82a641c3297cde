/* Network allow in the namespace jail: every TCP connection to an allowed
 * port lands on a listener of the jail's own network, whatever address it
 * was going to, and stockade (forward/) takes it from there. No netfilter:
 * a routing rule per port sends those connections to a table whose one
 * route is local for every address (the kernel's "AnyIP": a local route
 * makes an address the namespace's own), so a listener on 0.0.0.0 or ::
 * and that port accepts them, each with the address it was going to as
 * its own (getsockname). Other ports and UDP keep the main table's
 * routes, to the way out that leads nowhere (outside.c); loopback and
 * the jail's own addresses stay in the local table, looked up first.
 * IPv4 takes two more steps: the route's source is 127.0.0.1 (IPv4 sends
 * only from an address a device has), and the listener is transparent
 * (IP_TRANSPARENT: it answers from the address the command asked for,
 * which no device has). The command, without capabilities, binds no port
 * below 1024; a port of its own that is also an allowed port is
 * stockade's in the jail. */
#include "netns/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/fib_rules.h>
#include <linux/rtnetlink.h>

#include "lib/util.h"

#define LOOPBACK_IFINDEX 1
/* Before the main table's rule (32766), after the local table's (0). */
#define ALLOW_RULE_PRIORITY 100
#define ALLOW_REQUEST_SIZE 256

struct nlmsghdr *netns_build_allow_rule(void *buf, size_t size, int family, unsigned short port, unsigned seq)
{
	if (size < ALLOW_REQUEST_SIZE)
		return NULL;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWRULE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	nlh->nlmsg_seq = seq;
	struct fib_rule_hdr *frh = mnl_nlmsg_put_extra_header(nlh, sizeof(*frh));
	frh->family = (uint8_t)family;
	frh->action = FR_ACT_TO_TBL;
	frh->table = NETNS_ALLOW_TABLE;
	mnl_attr_put_u32(nlh, FRA_TABLE, NETNS_ALLOW_TABLE);
	mnl_attr_put_u32(nlh, FRA_PRIORITY, ALLOW_RULE_PRIORITY);
	mnl_attr_put_u8(nlh, FRA_IP_PROTO, IPPROTO_TCP);
	struct fib_rule_port_range range = { .start = port, .end = port };
	mnl_attr_put(nlh, FRA_DPORT_RANGE, sizeof(range), &range);
	return nlh;
}

struct nlmsghdr *netns_build_allow_route(void *buf, size_t size, int family, unsigned seq)
{
	if (size < ALLOW_REQUEST_SIZE)
		return NULL;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWROUTE;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	nlh->nlmsg_seq = seq;
	struct rtmsg *rt = mnl_nlmsg_put_extra_header(nlh, sizeof(*rt));
	rt->rtm_family = (uint8_t)family;
	rt->rtm_dst_len = 0;	/* every address */
	rt->rtm_table = NETNS_ALLOW_TABLE;
	rt->rtm_protocol = RTPROT_BOOT;
	rt->rtm_scope = RT_SCOPE_HOST;
	rt->rtm_type = RTN_LOCAL;
	mnl_attr_put_u32(nlh, RTA_OIF, LOOPBACK_IFINDEX);
	/* IPv4 sends a packet only from an address of a device (the
	 * route's own destination, which the kernel would pick, is none):
	 * the command's side of such a connection is 127.0.0.1. */
	if (family == AF_INET)
		mnl_attr_put_u32(nlh, RTA_PREFSRC, htonl(INADDR_LOOPBACK));
	return nlh;
}

int netns_allow_routes(const unsigned short *ports, size_t n)
{
	char buf[ALLOW_REQUEST_SIZE] __attribute__((aligned(8)));
	unsigned seq = 1;
	for (int f = 0; f < 2; f++) {
		int family = f ? AF_INET6 : AF_INET;
		int r = netns_send(netns_build_allow_route(buf, sizeof(buf), family, seq++));
		/* A kernel without IPv6: IPv4's alone. */
		if (f && r == -EAFNOSUPPORT)
			return 0;
		if (r < 0)
			return r;
		for (size_t i = 0; i < n; i++)
			if ((r = netns_send(netns_build_allow_rule(buf, sizeof(buf), family, ports[i], seq++))) < 0)
				return r;
	}
	return 0;
}

int netns_allow_listen(int family, unsigned short port)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_storage ss = { .ss_family = (sa_family_t)family };
	socklen_t len;
	int one = 1;
	if (family == AF_INET) {
		/* Its answers go from the address the command asked for,
		 * which no device has: transparent (init has CAP_NET_ADMIN
		 * over the jail's network namespace). */
		if (setsockopt(fd, IPPROTO_IP, IP_TRANSPARENT, &one, sizeof(one)) < 0) {
			int e = -errno;
			close(fd);
			return e;
		}
		((struct sockaddr_in *)&ss)->sin_port = htons(port);
		len = sizeof(struct sockaddr_in);
	} else {
		/* The IPv4 connections are the other listener's. */
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
		len = sizeof(struct sockaddr_in6);
	}
	if (bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 128) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}
