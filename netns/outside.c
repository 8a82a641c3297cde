/* The way out that leads nowhere: in network mode loopback the jail's
 * network namespace gets a veth pair of its own, the default routes on
 * one end (stockade0), and stockade reads the other end (stockade1)
 * through a packet socket. A connect or datagram to an address outside
 * the jail goes there instead of failing at the route lookup unseen:
 * stockade records where it was going and answers with an ICMP "network
 * unreachable", so the command sees the ENETUNREACH it saw before, at
 * once. Nothing is ever forwarded: the pair has no other end. Loopback
 * traffic never takes the route, so a loopback connect costs what it
 * did. */
#include "netns/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <net/if.h>
#include <stdint.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/filter.h>
#include <linux/if_addr.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>

#include "lib/fd.h"
#include "lib/util.h"
#include "policy/report.h"

#define ROUTE_END NETNS_OUTSIDE_ROUTE	/* where the default routes point, in the jail */
#define TAP_END NETNS_OUTSIDE_TAP	/* what stockade reads */
/* Their indexes, chosen: in a fresh namespace only lo (1) is taken, and
 * the jail's other end never needs to look them up by name. */
#define ROUTE_INDEX 2
#define TAP_INDEX 3
/* Room for the largest request here, the veth with its peer. */
#define NETNS_REQUEST_SIZE 1024

static const uint8_t jail_v4[4] = { 169, 254, 83, 1 };	/* the jail's own address on the route's end */
static const uint8_t jail_v6[16] = { 0xfd, 0x00, 0x5a, 0xde, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };

static struct nlmsghdr *request(void *buf, uint16_t type, uint16_t flags, unsigned seq)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | flags;
	nlh->nlmsg_seq = seq;
	return nlh;
}

struct nlmsghdr *netns_build_veth(void *buf, size_t size, const char *name, int index, const char *peer,
				  int peer_index, unsigned seq)
{
	if (size < NETNS_REQUEST_SIZE)
		return NULL;
	struct nlmsghdr *nlh = request(buf, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, seq);
	struct ifinfomsg *ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	ifi->ifi_index = index;
	mnl_attr_put_strz(nlh, IFLA_IFNAME, name);
	struct nlattr *info = mnl_attr_nest_start(nlh, IFLA_LINKINFO);
	mnl_attr_put_strz(nlh, IFLA_INFO_KIND, "veth");
	struct nlattr *data = mnl_attr_nest_start(nlh, IFLA_INFO_DATA);
	struct nlattr *p = mnl_attr_nest_start(nlh, VETH_INFO_PEER);
	/* The peer's own ifinfomsg, then its attributes. */
	struct ifinfomsg *pifi = mnl_nlmsg_get_payload_tail(nlh);
	memset(pifi, 0, sizeof(*pifi));
	pifi->ifi_index = peer_index;
	nlh->nlmsg_len += MNL_ALIGN(sizeof(*pifi));
	mnl_attr_put_strz(nlh, IFLA_IFNAME, peer);
	mnl_attr_nest_end(nlh, p);
	mnl_attr_nest_end(nlh, data);
	mnl_attr_nest_end(nlh, info);
	return nlh;
}

static struct nlmsghdr *build_addr(void *buf, int family, int ifindex, unsigned seq)
{
	struct nlmsghdr *nlh = request(buf, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, seq);
	struct ifaddrmsg *ifa = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifa));
	ifa->ifa_family = (uint8_t)family;
	ifa->ifa_prefixlen = family == AF_INET ? 32 : 128;
	ifa->ifa_scope = RT_SCOPE_UNIVERSE;
	ifa->ifa_index = (unsigned)ifindex;
	/* No duplicate address detection: nobody is on the other end, and a
	 * tentative address could not be a source for a second. */
	ifa->ifa_flags = family == AF_INET6 ? IFA_F_NODAD : 0;
	if (family == AF_INET) {
		mnl_attr_put(nlh, IFA_LOCAL, sizeof(jail_v4), jail_v4);
		mnl_attr_put(nlh, IFA_ADDRESS, sizeof(jail_v4), jail_v4);
	} else {
		mnl_attr_put(nlh, IFA_ADDRESS, sizeof(jail_v6), jail_v6);
	}
	return nlh;
}

static struct nlmsghdr *build_default_route(void *buf, int family, int ifindex, unsigned seq)
{
	struct nlmsghdr *nlh = request(buf, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, seq);
	struct rtmsg *rt = mnl_nlmsg_put_extra_header(nlh, sizeof(*rt));
	rt->rtm_family = (uint8_t)family;
	rt->rtm_table = RT_TABLE_MAIN;
	rt->rtm_protocol = RTPROT_BOOT;
	rt->rtm_scope = RT_SCOPE_LINK;
	rt->rtm_type = RTN_UNICAST;
	mnl_attr_put_u32(nlh, RTA_OIF, (uint32_t)ifindex);
	return nlh;
}

int netns_outside_sockets(int *ret_netlink, int *ret_packet)
{
	*ret_netlink = *ret_packet = -1;
	int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
	if (nl < 0 || bind(nl, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = -errno;
		if (nl >= 0)
			close(nl);
		return e;
	}
	/* Protocol 0: hooked to nothing until bound (a bind that moves a
	 * hooked socket waits for an RCU grace period). */
	int pkt = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (pkt < 0) {
		int e = -errno;
		close(nl);
		return e;
	}
	*ret_netlink = nl;
	*ret_packet = pkt;
	return 0;
}

int netns_outside_make(int netlink, int packet)
{
	/* All at once: the veth, both ends up, the addresses and the
	 * default routes (the veth request the largest, with its peer). */
	char buf[2 * NETNS_REQUEST_SIZE] __attribute__((aligned(8)));
	size_t len = 0, n = 0;
	struct nlmsghdr *nlh = netns_build_veth(buf, sizeof(buf), ROUTE_END, ROUTE_INDEX, TAP_END, TAP_INDEX, 1);
#define NEXT(call)                                                                       \
	do {                                                                             \
		if (!nlh)                                                                \
			return -EINVAL;                                                  \
		len += NLMSG_ALIGN(nlh->nlmsg_len);                                      \
		n++;                                                                     \
		if (sizeof(buf) - len < 256) /* the small ones' room */                  \
			return -EINVAL;                                                  \
		nlh = (call);                                                            \
	} while (0)
	/* No ARP or neighbour discovery: the kernel sends each packet at
	 * once, to the end's own address. */
	NEXT(netns_build_link_flags(buf + len, sizeof(buf) - len, ROUTE_INDEX, IFF_UP | IFF_NOARP, 2));
	NEXT(netns_build_link_flags(buf + len, sizeof(buf) - len, TAP_INDEX, IFF_UP | IFF_NOARP, 3));
	NEXT(build_addr(buf + len, AF_INET, ROUTE_INDEX, 4));
	NEXT(build_addr(buf + len, AF_INET6, ROUTE_INDEX, 5));
	NEXT(build_default_route(buf + len, AF_INET, ROUTE_INDEX, 6));
	NEXT(build_default_route(buf + len, AF_INET6, ROUTE_INDEX, 7));
	NEXT(NULL);
#undef NEXT
	int r = netns_send_all_fd(netlink, buf, len, n);
	if (r < 0)
		return r;
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = TAP_INDEX };
	return bind(packet, (struct sockaddr *)&ll, sizeof(ll)) < 0 ? -errno : 0;
}

/* The way out, made through init's
 * sockets; where it cannot be (no veth here), a connect out still fails
 * at once, unrecorded, and the report says so. */
void netns_outside_begin(int *packet, int netlink, struct report *rep)
{
	int e = netlink >= 0 && *packet >= 0 ? netns_outside_make(netlink, *packet) : -EOPNOTSUPP;
	if (e == 0)
		return;
	if (*packet >= 0)
		close(TAKE_FD(*packet));
	_cleanup_free_ char *why = xasprintf("the veth pair they would be read on cannot be made here (%s)",
					     strerrorname_np(-e) ? strerrorname_np(-e) : "?");
	report_gap(rep, "connects to addresses outside the jail: refused, but not recorded", why);
}

/* The last close of a packet socket waits for an RCU grace period (some
 * 10 ms, packet_release's synchronize_net): a child of stockade's holds
 * it and closes it, so that stockade's own exit does not wait. */
void netns_outside_release(int packet, int refusals)
{
	if (packet < 0 && refusals < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		/* Nothing else of stockade's held a moment longer: not the
		 * caller's pipes, not the workspace's locks. */
		int lo = packet < refusals ? packet : refusals, hi = packet < refusals ? refusals : packet;
		if (lo < 0)
			lo = hi;
		if (lo > 0)
			(void)close_range(0, (unsigned)lo - 1, 0);
		if (hi > lo + 1)
			(void)close_range((unsigned)lo + 1, (unsigned)hi - 1, 0);
		(void)close_range((unsigned)hi + 1, ~0u, 0);
		if (packet >= 0)
			close(packet);
		if (refusals >= 0)
			close(refusals);
		_exit(0);
	}
	if (packet >= 0)
		close(packet);
	if (refusals >= 0)
		close(refusals);
}

/* ---- the answer (pure) ---- */

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint32_t sum16(const uint8_t *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += get16(p + i);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

#define ETH_HEADER 14
#define IPV4_HEADER 20
#define IPV6_HEADER 40
#define ICMP_HEADER 8
/* What an ICMPv6 error may quote: the whole error within the minimum MTU. */
#define ICMP6_QUOTE (1280 - IPV6_HEADER - ICMP_HEADER)

/* The transport's destination port and whether this packet opens a
 * connection (a TCP SYN) or is a datagram; false for what is not worth an
 * answer (ICMP, TCP past its SYN, a fragment). */
static bool transport(uint8_t proto, const uint8_t *t, size_t len, struct netns_attempt *a)
{
	if (proto == IPPROTO_TCP && len >= 20) {
		a->port = get16(t + 2);
		a->datagram = false;
		return (t[13] & 0x02) && !(t[13] & 0x10);	/* SYN, not SYN-ACK */
	}
	if (proto == IPPROTO_UDP && len >= 8) {
		a->port = get16(t + 2);
		a->datagram = true;
		return true;
	}
	return false;
}

int netns_outside_answer(const void *frame, size_t len, void *reply, size_t size, struct netns_attempt *ret)
{
	const uint8_t *f = frame;
	uint8_t *r = reply;
	*ret = (struct netns_attempt){ 0 };
	if (len < ETH_HEADER + IPV4_HEADER)
		return -EINVAL;
	uint16_t type = get16(f + 12);
	const uint8_t *ip = f + ETH_HEADER;
	size_t ip_len = len - ETH_HEADER;
	size_t n;
	if (type == ETH_P_IP) {
		size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
		size_t total = get16(ip + 2);
		if ((ip[0] >> 4) != 4 || ihl < IPV4_HEADER || total < ihl || total > ip_len)
			return -EINVAL;
		/* Only a first fragment carries the ports. */
		if ((get16(ip + 6) & 0x1fff) != 0 || !transport(ip[9], ip + ihl, total - ihl, ret))
			return -EINVAL;
		ret->family = AF_INET;
		memcpy(ret->addr, ip + 16, 4);
		size_t quote = ihl + 8;
		n = ETH_HEADER + IPV4_HEADER + ICMP_HEADER + quote;
		if (n > size)
			return -ENOSPC;
		uint8_t *o = r + ETH_HEADER;
		memset(o, 0, IPV4_HEADER + ICMP_HEADER);
		o[0] = 0x45;
		o[1] = 0xc0;
		put16(o + 2, (uint16_t)(IPV4_HEADER + ICMP_HEADER + quote));
		o[8] = 64;
		o[9] = IPPROTO_ICMP;
		memcpy(o + 12, ip + 16, 4);	/* from where it was going */
		memcpy(o + 16, ip + 12, 4);	/* to the jail */
		put16(o + 10, fold(sum16(o, IPV4_HEADER, 0)));
		uint8_t *icmp = o + IPV4_HEADER;
		icmp[0] = 3;	/* destination unreachable */
		/* Network unreachable: ENETUNREACH. A UDP socket takes only a
		 * hard error (the kernel's icmp_err_convert): for a datagram,
		 * "network administratively prohibited", the same errno, which
		 * a connected socket's next call returns at once. */
		icmp[1] = ret->datagram ? 9 : 0;
		memcpy(icmp + ICMP_HEADER, ip, quote);
		put16(icmp + 2, fold(sum16(icmp, ICMP_HEADER + quote, 0)));
	} else if (type == ETH_P_IPV6) {
		if (ip_len < IPV6_HEADER || (ip[0] >> 4) != 6)
			return -EINVAL;
		size_t payload = get16(ip + 4);
		if (IPV6_HEADER + payload > ip_len)
			return -EINVAL;
		/* Extension headers are not followed: what carries one is
		 * not answered, and fails later as it would have. */
		if (!transport(ip[6], ip + IPV6_HEADER, payload, ret))
			return -EINVAL;
		ret->family = AF_INET6;
		memcpy(ret->addr, ip + 24, 16);
		size_t quote = IPV6_HEADER + payload < ICMP6_QUOTE ? IPV6_HEADER + payload : ICMP6_QUOTE;
		n = ETH_HEADER + IPV6_HEADER + ICMP_HEADER + quote;
		if (n > size)
			return -ENOSPC;
		uint8_t *o = r + ETH_HEADER;
		memset(o, 0, IPV6_HEADER + ICMP_HEADER);
		o[0] = 0x60;
		put16(o + 4, (uint16_t)(ICMP_HEADER + quote));
		o[6] = IPPROTO_ICMPV6;
		o[7] = 64;
		memcpy(o + 8, ip + 24, 16);
		memcpy(o + 24, ip + 8, 16);
		uint8_t *icmp = o + IPV6_HEADER;
		icmp[0] = 1;	/* destination unreachable */
		/* No route: ENETUNREACH. A UDP socket takes only a hard error
		 * (icmpv6_err_convert), and IPv6 has none that is
		 * ENETUNREACH: for a datagram, "administratively prohibited"
		 * (EACCES), which a connected socket's next call returns at
		 * once rather than its timeout. */
		icmp[1] = ret->datagram ? 1 : 0;
		memcpy(icmp + ICMP_HEADER, ip, quote);
		/* The pseudo-header: both addresses, the length, the next header. */
		uint32_t sum = sum16(o + 8, 32, 0);
		sum += (uint32_t)(ICMP_HEADER + quote);
		sum += IPPROTO_ICMPV6;
		put16(icmp + 2, fold(sum16(icmp, ICMP_HEADER + quote, sum)));
	} else {
		return -EINVAL;
	}
	/* Back to the end it came from, from the other. */
	memcpy(r, f + 6, 6);
	memcpy(r + 6, f, 6);
	memcpy(r + 12, f + 12, 2);
	return (int)n;
}

/* ---- serving it, in stockade ---- */

int netns_outside_serve(int fd, const char *source, struct report *rep)
{
	return netns_outside_serve_with(fd, source, rep, NULL, NULL);
}

int netns_outside_serve_with(int fd, const char *source, struct report *rep, netns_outside_words_fn words, void *data)
{
	for (;;) {
		uint8_t frame[2048], reply[1536];
		struct sockaddr_ll from;
		socklen_t from_len = sizeof(from);
		ssize_t n = recvfrom(fd, frame, sizeof(frame), MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from,
				     &from_len);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		/* Only what the jail sent, never the answers stockade wrote. */
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		struct netns_attempt a;
		int m = netns_outside_answer(frame, (size_t)n < sizeof(frame) ? (size_t)n : sizeof(frame), reply,
					     sizeof(reply), &a);
		if (m < 0)
			continue;
		(void)send(fd, reply, (size_t)m, MSG_DONTWAIT);
		const char *err = a.datagram && a.family == AF_INET6 ? "EACCES" : "ENETUNREACH";
		char host[INET6_ADDRSTRLEN];
		inet_ntop(a.family, a.addr, host, sizeof(host));
		_cleanup_free_ char *what = a.family == AF_INET6 ? xasprintf("[%s]:%u", host, a.port)
								 : xasprintf("%s:%u", host, a.port);
		const char *kind = a.datagram ? "datagram" : "connect";
		if (words) {
			_cleanup_free_ char *rule = NULL, *fix = NULL;
			words(data, &a, &rule, &fix);
			report_denial_ruled(rep, kind, report_records_full(rep, kind, what) ? "(further addresses)" : what,
					    err, rule, source, fix);
			continue;
		}
		_cleanup_free_ char *fix = a.datagram ? xstrdup("--net on, or in stockade.ini: network = on")
						      : xasprintf("--connect %s (this one service), or --net on", what);
		report_denial_ruled(rep, kind, report_records_full(rep, kind, what) ? "(further addresses)" : what, err,
				    "network loopback: the jail's own loopback only, no route out", source, fix);
	}
}

/* ---- the look-out on the jail's loopback: a connect nobody in the jail
 * listens for, to a port the host serves ---- */

/* What passes the filter: a TCP reset that answers a SYN (RST and ACK,
 * sequence number 0: what the kernel sends when nothing listens), IPv4
 * or IPv6 without extension headers, as lo hands it to a packet socket
 * (behind a 14-byte Ethernet header). Everything else is dropped in the
 * kernel, so the run's own traffic on loopback costs one filter run per
 * packet received and no copy. */
static const struct sock_filter refusal_filter[] = {
	BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 12),			/* 0: ethertype */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IP, 0, 10),	/* 1: else 12 */
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14 + 9),		/* 2: protocol */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 0, 16),	/* 3: else drop */
	BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 14 + 6),		/* 4: fragment offset */
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1fff, 14, 0),	/* 5: a fragment: drop */
	BPF_STMT(BPF_LDX | BPF_B | BPF_MSH, 14),		/* 6: X = IP header length */
	BPF_STMT(BPF_LD | BPF_B | BPF_IND, 14 + 13),		/* 7: TCP flags */
	BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x3f),		/* 8 */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x14, 0, 10),	/* 9: RST|ACK, else drop */
	BPF_STMT(BPF_LD | BPF_W | BPF_IND, 14 + 4),		/* 10: sequence number */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 9, 8),		/* 11: 0: keep, else drop */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, ETH_P_IPV6, 0, 7),	/* 12: else drop */
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14 + 6),		/* 13: next header */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, IPPROTO_TCP, 0, 5),	/* 14: else drop */
	BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 14 + 40 + 13),	/* 15: TCP flags */
	BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x3f),		/* 16 */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x14, 0, 2),	/* 17: RST|ACK, else drop */
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 14 + 40 + 4),	/* 18: sequence number */
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),		/* 19: 0: keep, else drop */
	BPF_STMT(BPF_RET | BPF_K, 0),				/* 20: drop */
	BPF_STMT(BPF_RET | BPF_K, 0xffff),			/* 21: keep */
};

int netns_refusals_socket(void)
{
	/* Protocol 0 until bound, as the way out's (no RCU wait). */
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	return fd < 0 ? -errno : fd;
}

int netns_refusals_bind(int *fd)
{
	if (*fd < 0)
		return -EBADF;
	struct sock_fprog fprog = { .len = ARRAY_SIZE(refusal_filter), .filter = (struct sock_filter *)refusal_filter };
	/* Only what lo receives: its sends are the same packets again, and
	 * copying each one it sends is what a tap costs. The jail's lo,
	 * index 1 of the socket's own namespace, whoever binds it. */
	int one = 1;
	struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = 1 };
	if (setsockopt(*fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) < 0 ||
	    setsockopt(*fd, SOL_SOCKET, SO_ATTACH_FILTER, &fprog, sizeof(fprog)) < 0 ||
	    bind(*fd, (struct sockaddr *)&ll, sizeof(ll)) < 0) {
		int e = -errno;
		close(TAKE_FD(*fd));
		return e;
	}
	return 0;
}

int netns_refused_parse(const void *frame, size_t len, struct netns_attempt *ret)
{
	const uint8_t *f = frame;
	*ret = (struct netns_attempt){ 0 };
	if (len < ETH_HEADER + IPV4_HEADER)
		return -EINVAL;
	const uint8_t *ip = f + ETH_HEADER;
	const uint8_t *t;
	switch (get16(f + 12)) {
	case ETH_P_IP: {
		size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
		if ((ip[0] >> 4) != 4 || ihl < IPV4_HEADER || len < ETH_HEADER + ihl + 20 || ip[9] != IPPROTO_TCP)
			return -EINVAL;
		t = ip + ihl;
		ret->family = AF_INET;
		memcpy(ret->addr, ip + 12, 4);	/* the reset comes from where the connect went */
		break;
	}
	case ETH_P_IPV6:
		if (len < ETH_HEADER + IPV6_HEADER + 20 || (ip[0] >> 4) != 6 || ip[6] != IPPROTO_TCP)
			return -EINVAL;
		t = ip + IPV6_HEADER;
		ret->family = AF_INET6;
		memcpy(ret->addr, ip + 8, 16);
		break;
	default:
		return -EINVAL;
	}
	if ((t[13] & 0x3f) != 0x14 || get16(t + 4) != 0 || get16(t + 6) != 0)
		return -EINVAL;
	ret->port = get16(t);
	return 0;
}

/* One address of /proc/net/tcp{,6}: the kernel prints each 32-bit word
 * of the address as it lies in memory, in hex. */
static bool hex_address(const char *hex, size_t n, uint8_t out[16])
{
	if (n != 8 && n != 32)
		return false;
	for (size_t w = 0; w < n / 8; w++) {
		char word[9];
		memcpy(word, hex + w * 8, 8);
		word[8] = '\0';
		char *end;
		uint32_t v = (uint32_t)strtoul(word, &end, 16);
		if (*end)
			return false;
		memcpy(out + w * 4, &v, 4);
	}
	return true;
}

bool netns_host_listens(const char *text, int family, const uint8_t *addr, uint16_t port)
{
	static const uint8_t any[16], mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		char hex[33];
		unsigned lport, state;
		if (sscanf(line, " %*u: %32[0-9A-Fa-f]:%x %*s %x", hex, &lport, &state) != 3 || state != 0x0A ||
		    lport != port)
			continue;
		uint8_t a[16];
		size_t n = strlen(hex);
		if (!hex_address(hex, n, a))
			continue;
		if (n == 8) {
			if (family == AF_INET && (!memcmp(a, any, 4) || !memcmp(a, addr, 4)))
				return true;
			continue;
		}
		/* IPv6: the address itself, ::, or for an IPv4 target its
		 * mapped form (a dual-stack listener) */
		if (!memcmp(a, any, 16) || (family == AF_INET6 && !memcmp(a, addr, 16)) ||
		    (family == AF_INET && !memcmp(a, mapped, 12) && !memcmp(a + 12, addr, 4)))
			return true;
	}
	return false;
}

static bool host_listens_now(int family, const uint8_t *addr, uint16_t port)
{
	const char *files[] = { "/proc/net/tcp", "/proc/net/tcp6" };
	for (size_t i = family == AF_INET6 ? 1 : 0; i < ARRAY_SIZE(files); i++) {
		_cleanup_free_ char *text = NULL;
		if (read_file_at(AT_FDCWD, files[i], 16u << 20, &text, NULL) == 0 &&
		    netns_host_listens(text, family, addr, port))
			return true;
	}
	return false;
}

/* Is port one of the run's --publish's, on either side? */
static bool published_port(const struct policy *p, uint16_t port)
{
	for (size_t i = 0; p && i < p->n_grants; i++)
		if (p->grants[i].kind == GRANT_PUBLISH && (p->grants[i].port == port || p->grants[i].jail_port == port))
			return true;
	return false;
}

int netns_refusals_serve(int fd, const char *source, struct report *rep, bool allowing, const struct policy *published)
{
	for (;;) {
		uint8_t frame[256];
		ssize_t n = recv(fd, frame, sizeof(frame), MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		struct netns_attempt a;
		if (netns_refused_parse(frame, (size_t)n < sizeof(frame) ? (size_t)n : sizeof(frame), &a) < 0)
			continue;
		static const uint8_t v6_loopback[16] = { [15] = 1 };
		if (a.family == AF_INET ? a.addr[0] != 127 : memcmp(a.addr, v6_loopback, 16) != 0)
			continue;
		if (published_port(published, a.port))
			continue;
		char host[INET6_ADDRSTRLEN];
		inet_ntop(a.family, a.addr, host, sizeof(host));
		_cleanup_free_ char *what = a.family == AF_INET6 ? xasprintf("[%s]:%u", host, a.port)
								 : xasprintf("%s:%u", host, a.port);
		/* Asked of the host once per address: a client that retries is
		 * counted, not looked up again. */
		bool known = false;
		for (size_t i = 0; i < rep->n_denials && !known; i++)
			known = streq(rep->denials[i].kind, "connect") && streq(rep->denials[i].what, what);
		if (known) {
			report_denial(rep, "connect", what, "ECONNREFUSED");
			continue;
		}
		if (report_records_full(rep, "connect", what) || !host_listens_now(a.family, a.addr, a.port))
			continue;
		_cleanup_free_ char *fix = allowing ? xasprintf("--connect %s (this one service)", what)
						    : xasprintf("--connect %s (this one service), or --net on", what);
		report_denial_ruled(rep, "connect", what, "ECONNREFUSED",
				    allowing ? "network allow: the jail's own loopback, where nothing of the run listens on "
					       "that port; the host's service there is not the run's"
					     : "network loopback: the jail's own loopback, where nothing of the run listens on "
					       "that port; the host's service there is not the run's",
				    source, fix);
	}
}
