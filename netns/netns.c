/* rtnetlink over libmnl: build a request, send it, wait for its ACK. No
 * `ip` command and no SIOCSIFFLAGS ioctl: netlink is what the kernel's own
 * tools use, and its answer is a plain errno we can hand up. */
#include "netns/netns.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <net/if.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include <libmnl/libmnl.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "lib/util.h"
#include "policy/report.h"

/* The kernel registers lo first in every network namespace, so it always
 * gets this index (LOOPBACK_IFINDEX in include/net/net_namespace.h). */
#define LOOPBACK_IFINDEX 1

struct nlmsghdr *netns_build_link_flags(void *buf, size_t size, int ifindex, unsigned flags, unsigned seq)
{
	if (!buf || size < mnl_nlmsg_size(sizeof(struct ifinfomsg)))
		return NULL;

	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	nlh->nlmsg_seq = seq;

	/* ifi_change names the flags to touch, ifi_flags their new value:
	 * only those change, everything else about the link stays. */
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = ifindex;
	ifi->ifi_flags = flags;
	ifi->ifi_change = flags;
	return nlh;
}

struct nlmsghdr *netns_build_link_up(void *buf, size_t size, int ifindex, unsigned seq)
{
	return netns_build_link_flags(buf, size, ifindex, IFF_UP, seq);
}

int netns_send(const struct nlmsghdr *req)
{
	if (!req || req->nlmsg_len < NLMSG_HDRLEN)
		return -EINVAL;
	/* SOCK_CLOEXEC: the command exec'd later must not inherit a socket
	 * with CAP_NET_ADMIN over the namespace baked into its credentials.
	 * A plain socket, bound to the port the kernel picks: the jail's
	 * init writes nothing of the memory it shares with stockade until
	 * it must (each page written a copy, and a fault). */
	_cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return -errno;
	struct sockaddr_nl any = { .nl_family = AF_NETLINK };
	if (bind(fd, (struct sockaddr *)&any, sizeof(any)) < 0)
		return -errno;
	return netns_send_all_fd(fd, req, req->nlmsg_len, 1);
}

int netns_send_all_fd(int fd, const void *reqs, size_t len, size_t n)
{
	struct sockaddr_nl self;
	socklen_t self_len = sizeof(self);
	if (getsockname(fd, (struct sockaddr *)&self, &self_len) < 0)
		return -errno;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	ssize_t sent = sendto(fd, reqs, len, 0, (struct sockaddr *)&kernel, sizeof(kernel));
	if (sent < 0)
		return -errno;
	if ((size_t)sent != len)
		return -EIO;
	/* The ACKs, one a datagram: a header and the request's header, or
	 * on a failure the request itself and the kernel's message, a few
	 * hundred bytes at most. On the stack: the jail's init allocates
	 * nothing. */
	union {
		struct nlmsghdr h;
		char bytes[2048];
	} buf;
	int first = 0;
	for (size_t acked = 0; acked < n;) {
		ssize_t got = recv(fd, buf.bytes, sizeof(buf.bytes), 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
		int left = (int)got;
		for (const struct nlmsghdr *h = &buf.h; mnl_nlmsg_ok(h, left); h = mnl_nlmsg_next(h, &left)) {
			/* Only the kernel's answers to this socket count. */
			if (h->nlmsg_pid != self.nl_pid || h->nlmsg_type != NLMSG_ERROR)
				continue;
			if (h->nlmsg_len < NLMSG_HDRLEN + sizeof(struct nlmsgerr))
				return -EPROTO;
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(h);
			if (e->error && !first)
				first = e->error < 0 ? e->error : -e->error;
			acked++;
		}
	}
	return first;
}

int netns_loopback_up(void)
{
	/* In a fresh network namespace lo is the first device the kernel
	 * registers there, index 1, and the only one: asked for by index. */
	union {
		struct nlmsghdr nlh;
		char bytes[NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct ifinfomsg))];
	} buf;
	/* A fixed sequence number is enough: the socket is ours alone and
	 * lives for this one request. */
	struct nlmsghdr *req = netns_build_link_up(&buf, sizeof(buf), LOOPBACK_IFINDEX, 1);
	if (!req)
		return -EINVAL;
	return netns_send(req);
}

struct nlmsghdr *netns_build_local_address(void *buf, size_t size, int family, const void *addr, unsigned seq)
{
	size_t alen = family == AF_INET ? 4 : 16;
	if (!buf || size < mnl_nlmsg_size(sizeof(struct ifaddrmsg)) + 2 * MNL_ALIGN(MNL_ATTR_HDRLEN + alen))
		return NULL;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_NEWADDR;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
	nlh->nlmsg_seq = seq;
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (uint8_t)family;
	ifa->ifa_prefixlen = family == AF_INET ? 32 : 128;
	ifa->ifa_scope = RT_SCOPE_HOST;
	ifa->ifa_index = LOOPBACK_IFINDEX;
	/* usable at once: nothing else is on this loopback to clash with */
	ifa->ifa_flags = family == AF_INET6 ? IFA_F_NODAD : 0;
	if (family == AF_INET)
		mnl_attr_put(nlh, IFA_LOCAL, alen, addr);
	mnl_attr_put(nlh, IFA_ADDRESS, alen, addr);
	return nlh;
}

int netns_loopback_add_address(int family, const void *addr)
{
	union {
		struct nlmsghdr nlh;
		char bytes[256];
	} buf;
	struct nlmsghdr *req = netns_build_local_address(&buf, sizeof(buf), family, addr, 1);
	if (!req)
		return -EINVAL;
	int r = netns_send(req);
	/* a second --connect to the same address, another port */
	return r == -EEXIST ? 0 : r;
}

void netns_print(FILE *f, const struct nlmsghdr *req)
{
	mnl_nlmsg_fprintf(f, req, req->nlmsg_len, sizeof(struct ifinfomsg));
}

void netns_describe(enum net_mode net, struct report *rep)
{
	if (net == NET_LOOPBACK)
		report_enforced(rep, "network loopback: a network namespace whose own lo is up");
	if (net == NET_LOOPBACK) {
		report_enforced(rep, "name lookups: answered at once (NXDOMAIN) by the jail's own responder on 127.0.0.1:53, each name recorded");
		report_enforced(rep, "connects and datagrams to addresses outside the jail: routed to a veth pair that leads nowhere, answered at once (ENETUNREACH), each address recorded");
	}
	else if (net == NET_OFF)
		report_enforced(rep, "network off: a network namespace with nothing up");
	if (net == NET_ALLOW) {
		report_enforced(rep, "network allow: a network namespace whose own lo is up; each TCP connection to an allowed "
				     "port lands on a listener of the jail's network (a routing rule per port to a table whose "
				     "one route is local), whatever its address, handed to stockade's relay");
		report_enforced(rep, "connects to other ports and datagrams to addresses outside the jail: routed to a veth "
				     "pair that leads nowhere, answered at once (ENETUNREACH), each address recorded");
	}
}
