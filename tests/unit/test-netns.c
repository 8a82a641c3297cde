/* netns: the RTM_NEWLINK request as a golden file, the buffer bound, and
 * the real kernel: a fresh user+network namespace where lo starts down,
 * is brought up by netns_loopback_up(), and then carries TCP and UDP. */
#include "netns/netns.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <libmnl/libmnl.h>
#include <linux/rtnetlink.h>

#include "lib/fd.h"
#include "lib/util.h"
#include "tests/golden.h"
#include "tests/tap.h"

#define GOLDEN_LINK_UP "tests/golden/netns-link-up.txt"
/* The size the request takes: a netlink header and an ifinfomsg. */
#define LINK_UP_SIZE (NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct ifinfomsg)))

static void test_golden(void)
{
	_cleanup_free_ char *buf = xmalloc(MNL_SOCKET_BUFFER_SIZE);
	struct nlmsghdr *req = netns_build_link_up(buf, MNL_SOCKET_BUFFER_SIZE, 1, 1234);
	if (!ok(req == (struct nlmsghdr *)buf, "link-up request built at the start of the buffer"))
		return;

	/* The fields, so that a wrong golden file cannot be blessed unseen. */
	is_int(req->nlmsg_len, LINK_UP_SIZE, "request length is header + ifinfomsg");
	is_int(req->nlmsg_type, RTM_NEWLINK, "type RTM_NEWLINK");
	is_int(req->nlmsg_flags, NLM_F_REQUEST | NLM_F_ACK, "flags REQUEST|ACK");
	is_int(req->nlmsg_seq, 1234, "sequence number");
	is_int(req->nlmsg_pid, 0, "port id left to the kernel");
	const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(req);
	ok(ifi->ifi_family == AF_UNSPEC && ifi->ifi_index == 1 && ifi->ifi_flags == IFF_UP &&
	   ifi->ifi_change == IFF_UP && ifi->ifi_type == 0,
	   "ifinfomsg: AF_UNSPEC, index 1, flags and change IFF_UP");

	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!ok(f != NULL, "open_memstream"))
		return;
	netns_print(f, req);
	fclose(f);
	_cleanup_free_ char *got = text;

	golden_check(GOLDEN_LINK_UP, got, len, "netns_print");
}

static void test_buffer_bounds(void)
{
	unsigned char buf[LINK_UP_SIZE + 16];

	ok(netns_build_link_up(buf, 0, 1, 1) == NULL, "size 0 gives NULL");
	ok(netns_build_link_up(buf, NLMSG_HDRLEN, 1, 1) == NULL, "room for the header alone gives NULL");
	ok(netns_build_link_up(buf, LINK_UP_SIZE - 1, 1, 1) == NULL, "one byte short gives NULL");

	memset(buf, 0xa5, sizeof(buf));
	struct nlmsghdr *req = netns_build_link_up(buf, LINK_UP_SIZE, 1, 1);
	ok(req != NULL, "exactly %zu bytes is enough", (size_t)LINK_UP_SIZE);
	bool untouched = true;
	for (size_t i = LINK_UP_SIZE; i < sizeof(buf); i++)
		untouched &= buf[i] == 0xa5;
	ok(untouched, "nothing written past the request");
}

/* ---- real kernel, in a child with its own user and network namespace ---- */

struct report {
	int32_t pass;
	int64_t got, want;
	char what[200];
};

static int report_fd = -1;
static int reports_sent;

_printf_(4, 5) static bool report(bool pass, long long got, long long want, const char *fmt, ...)
{
	struct report rep = { .pass = pass, .got = got, .want = want };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rep.what, sizeof(rep.what), fmt, ap);
	va_end(ap);
	/* One write of less than PIPE_BUF: the parent reads whole records. */
	if (write_all(report_fd, &rep, sizeof(rep)) < 0)
		_exit(3);
	reports_sent++;
	return pass;
}

#define report_int(got, want, ...)                                             \
	({                                                                     \
		long long g__ = (got), w__ = (want);                           \
		report(g__ == w__, g__, w__, __VA_ARGS__);                     \
	})

static int write_proc(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	return write_all(fd, text, strlen(text));
}

static int enter_namespaces(uid_t uid, gid_t gid)
{
	if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0)
		return -errno;
	/* setgroups must be denied before an unprivileged gid_map write. */
	int r = write_proc("/proc/self/setgroups", "deny");
	if (r < 0)
		return r;
	_cleanup_free_ char *umap = xasprintf("0 %u 1", (unsigned)uid);
	_cleanup_free_ char *gmap = xasprintf("0 %u 1", (unsigned)gid);
	r = write_proc("/proc/self/uid_map", umap);
	if (r < 0)
		return r;
	return write_proc("/proc/self/gid_map", gmap);
}

/* lo's interface flags in the current namespace, or -errno. */
static int lo_flags(void)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct ifreq ifr = { 0 };
	strncpy(ifr.ifr_name, "lo", sizeof(ifr.ifr_name) - 1);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	return ifr.ifr_flags & 0xffff;
}

static struct sockaddr_in loopback_addr(in_port_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = port };
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sin;
}

/* Waits until fd is readable, so that a missing packet fails the test
 * instead of hanging it. */
static int wait_readable(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int n = poll(&pfd, 1, 5000);
	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

/* A listener on 127.0.0.1, port 0, accepts a connection from ourselves and
 * a byte crosses it. 0 or -errno. */
static int tcp_roundtrip(void)
{
	_cleanup_close_ int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0)
		return -errno;
	struct sockaddr_in sin = loopback_addr(0);
	socklen_t slen = sizeof(sin);
	if (bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(lfd, 1) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&sin, &slen) < 0)
		return -errno;

	_cleanup_close_ int cfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (cfd < 0)
		return -errno;
	if (connect(cfd, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		return -errno;
	int r = wait_readable(lfd);
	if (r < 0)
		return r;
	_cleanup_close_ int afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (afd < 0)
		return -errno;
	r = write_all(cfd, "x", 1);
	if (r < 0)
		return r;
	r = wait_readable(afd);
	if (r < 0)
		return r;
	char c = 0;
	ssize_t n = read(afd, &c, 1);
	if (n < 0)
		return -errno;
	return n == 1 && c == 'x' ? 0 : -EPROTO;
}

/* A datagram sent to our own socket on 127.0.0.1 arrives. 0 or -errno. */
static int udp_roundtrip(void)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in sin = loopback_addr(0);
	socklen_t slen = sizeof(sin);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sin, &slen) < 0)
		return -errno;
	static const char msg[] = "stockade";
	if (sendto(fd, msg, sizeof(msg), 0, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		return -errno;
	int r = wait_readable(fd);
	if (r < 0)
		return r;
	char got[sizeof(msg) + 1];
	ssize_t n = recv(fd, got, sizeof(got), 0);
	if (n < 0)
		return -errno;
	return n == (ssize_t)sizeof(msg) && memcmp(got, msg, sizeof(msg)) == 0 ? 0 : -EPROTO;
}

/* A datagram to 127.0.0.1 before lo is up: the probe that must fail before
 * and work after, so the "after" proves netns_loopback_up did it. */
static int udp_send_probe(void)
{
	_cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in sin = loopback_addr(htons(9));
	if (sendto(fd, "x", 1, 0, (struct sockaddr *)&sin, sizeof(sin)) < 0)
		return -errno;
	return 0;
}

static int drop_effective_cap(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	if (syscall(SYS_capget, &hdr, data) < 0)
		return -errno;
	data[cap / 32].effective &= ~(1u << (cap % 32));
	if (syscall(SYS_capset, &hdr, data) < 0)
		return -errno;
	return 0;
}

static int send_link_up(int ifindex)
{
	unsigned char buf[LINK_UP_SIZE] __attribute__((aligned(4)));
	struct nlmsghdr *req = netns_build_link_up(buf, sizeof(buf), ifindex, 42);
	if (!req)
		return -EINVAL;
	return netns_send(req);
}

/* Must match the number of report() calls a successful child makes. */
#define KERNEL_REPORTS 17

static _Noreturn void kernel_child(uid_t uid, gid_t gid)
{
	/* A kernel that never answers fails the test; it does not hang it. */
	alarm(30);

	int r = enter_namespaces(uid, gid);
	if (!report_int(r, 0, "unshare user+net namespaces and map uid %u gid %u to 0", (unsigned)uid,
			(unsigned)gid))
		_exit(1);

	int flags = lo_flags();
	report(flags >= 0 && !(flags & IFF_UP), flags, 0, "lo is down in a fresh network namespace");
	report_int(udp_send_probe(), -ENETUNREACH, "127.0.0.1 unreachable while lo is down");

	report_int(netns_loopback_up(), 0, "netns_loopback_up() succeeds");
	flags = lo_flags();
	report(flags >= 0 && (flags & IFF_UP), flags, IFF_UP, "lo is up afterwards");
	report_int(tcp_roundtrip(), 0, "TCP listener on 127.0.0.1:0 accepts a connection from itself");
	report_int(udp_roundtrip(), 0, "UDP datagram to itself on 127.0.0.1 arrives");
	report_int(netns_loopback_up(), 0, "netns_loopback_up() again is harmless");
	report_int(send_link_up(99999), -ENODEV, "link up on ifindex 99999 gives -ENODEV");

	/* The way out, its seven requests in one send: made, its two ends
	 * there; made again, the first request's answer (the veth exists)
	 * is what comes back, not a later one's. The look-out binds to lo
	 * from the descriptor alone. */
	int nl = -1, pkt = -1;
	report_int(netns_outside_sockets(&nl, &pkt), 0, "the way out's netlink and packet sockets");
	report_int(netns_outside_make(nl, pkt), 0, "the way out is made in one batch of requests");
	report(if_nametoindex(NETNS_OUTSIDE_ROUTE) > 0 && if_nametoindex(NETNS_OUTSIDE_TAP) > 0,
	       (long long)if_nametoindex(NETNS_OUTSIDE_TAP), 3, "both of its ends exist");
	int pkt2 = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	report_int(netns_outside_make(nl, pkt2), -EEXIST, "made again: the veth's own EEXIST, the batch's first answer");
	if (pkt2 >= 0)
		close(pkt2);
	int rf = netns_refusals_socket();
	report(rf >= 0, rf, 0, "the look-out's bare packet socket");
	report_int(netns_refusals_bind(&rf), 0, "its filter set and bound to lo from the descriptor");
	if (rf >= 0)
		close(rf);
	int none = -1;
	report_int(netns_refusals_bind(&none), -EBADF, "no socket to bind: -EBADF");
	if (nl >= 0)
		close(nl);
	if (pkt >= 0)
		close(pkt);

	/* The errno jail/ falls back on: without CAP_NET_ADMIN over the
	 * namespace the kernel answers EPERM, and it must reach the caller. */
	r = drop_effective_cap(CAP_NET_ADMIN);
	if (r < 0)
		report_int(r, 0, "drop CAP_NET_ADMIN");
	else
		report_int(netns_loopback_up(), -EPERM, "without CAP_NET_ADMIN the request gives -EPERM");

	_exit(0);
}

static void test_kernel(void)
{
	int fds[2];
	if (!ok(pipe2(fds, O_CLOEXEC) == 0, "pipe for the child's reports"))
		return;
	uid_t uid = getuid();
	gid_t gid = getgid();

	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		ok(false, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		close(fds[0]);
		report_fd = fds[1];
		kernel_child(uid, gid);
	}
	close(fds[1]);

	int received = 0;
	for (;;) {
		struct report rep;
		size_t n = 0;
		int r = read_all(fds[0], &rep, sizeof(rep), &n);
		if (r < 0 || n != sizeof(rep))
			break;
		rep.what[sizeof(rep.what) - 1] = '\0';
		received++;
		if (!ok(rep.pass, "%s", rep.what))
			diag("  got %lld (%s), want %lld", (long long)rep.got,
			     rep.got < 0 ? strerror((int)-rep.got) : "-", (long long)rep.want);
	}
	close(fds[0]);

	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "namespace child exits 0"))
		diag("  status 0x%x%s", (unsigned)status,
		     WIFSIGNALED(status) ? " (killed by a signal)" : "");
	is_int(received, KERNEL_REPORTS, "the child reported every check");
}

/* Network allow's routes, in a fresh namespace: a connection to an
 * allowed port, whatever its address, lands on the listener of its family
 * with that address as its own; another port, and UDP to the allowed one,
 * still find no route. */
#define ALLOW_REPORTS 8

static int connect_to(int family, const char *addr, unsigned short port, int type)
{
	struct sockaddr_storage ss = { .ss_family = (sa_family_t)family };
	socklen_t len;
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;
		in->sin_port = htons(port);
		inet_pton(AF_INET, addr, &in->sin_addr);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
		in6->sin6_port = htons(port);
		inet_pton(AF_INET6, addr, &in6->sin6_addr);
		len = sizeof(*in6);
	}
	int fd = socket(family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int r = type == SOCK_DGRAM ? (int)sendto(fd, "x", 1, 0, (struct sockaddr *)&ss, len)
				   : connect(fd, (struct sockaddr *)&ss, len);
	if (r < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

/* Connects to addr:port; the listener takes it, its own address addr. */
static int lands(int lfd, int family, const char *addr, unsigned short port)
{
	_cleanup_close_ int c = connect_to(family, addr, port, SOCK_STREAM);
	if (c < 0)
		return c;
	int r = wait_readable(lfd);
	if (r < 0)
		return r;
	_cleanup_close_ int a = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (a < 0)
		return -errno;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(a, (struct sockaddr *)&ss, &len) < 0)
		return -errno;
	char got[INET6_ADDRSTRLEN] = "";
	const void *ip = family == AF_INET ? (const void *)&((struct sockaddr_in *)&ss)->sin_addr
					   : (const void *)&((struct sockaddr_in6 *)&ss)->sin6_addr;
	inet_ntop(family, ip, got, sizeof(got));
	return strcmp(got, addr) == 0 ? 0 : -EPROTO;
}

static _Noreturn void allow_child(uid_t uid, gid_t gid)
{
	alarm(30);
	int r = enter_namespaces(uid, gid);
	if (!report_int(r, 0, "allow: unshare user+net namespaces") || !report_int(netns_loopback_up(), 0, "allow: lo up"))
		_exit(1);
	const unsigned short ports[] = { 8443 };
	report_int(netns_allow_routes(ports, 1), 0, "allow: the routes for port 8443");
	_cleanup_close_ int l4 = netns_allow_listen(AF_INET, 8443);
	_cleanup_close_ int l6 = netns_allow_listen(AF_INET6, 8443);
	report(l4 >= 0 && l6 >= 0, l4 < 0 ? l4 : l6, 0, "allow: a listener of each family on 8443");
	report_int(lands(l4, AF_INET, "203.0.113.9", 8443), 0, "allow: 203.0.113.9:8443 lands on the listener, its address its own");
	report_int(lands(l6, AF_INET6, "2001:db8::9", 8443), 0, "allow: [2001:db8::9]:8443 lands on the IPv6 listener");
	report_int(connect_to(AF_INET, "203.0.113.9", 8444, SOCK_STREAM), -ENETUNREACH, "allow: another port has no route");
	report_int(connect_to(AF_INET, "203.0.113.9", 8443, SOCK_DGRAM), -ENETUNREACH, "allow: UDP to the allowed port has no route");
	_exit(0);
}

static void run_child(void (*child)(uid_t, gid_t), int want_reports, const char *what)
{
	int fds[2];
	if (!ok(pipe2(fds, O_CLOEXEC) == 0, "pipe for the child's reports"))
		return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		report_fd = fds[1];
		reports_sent = 0;
		child(getuid(), getgid());
	}
	close(fds[1]);
	int received = 0;
	for (;;) {
		struct report rep;
		size_t n = 0;
		if (read_all(fds[0], &rep, sizeof(rep), &n) < 0 || n != sizeof(rep))
			break;
		rep.what[sizeof(rep.what) - 1] = '\0';
		received++;
		if (!ok(rep.pass, "%s", rep.what))
			diag("  got %lld (%s), want %lld", (long long)rep.got, rep.got < 0 ? strerror((int)-rep.got) : "-",
			     (long long)rep.want);
	}
	close(fds[0]);
	int status = 0;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	ok(pid > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: the child exits 0", what);
	is_int(received, want_reports, "%s: the child reported every check", what);
}

static void test_allow(void)
{
	/* The builders: the attributes the kernel reads. */
	char buf[256] __attribute__((aligned(8)));
	struct nlmsghdr *rule = netns_build_allow_rule(buf, sizeof(buf), AF_INET6, 22, 7);
	ok(rule && rule->nlmsg_type == RTM_NEWRULE && rule->nlmsg_seq == 7, "allow: a rule is an RTM_NEWRULE");
	ok(netns_build_allow_rule(buf, 16, AF_INET, 22, 1) == NULL, "allow: a buffer too small gives NULL");
	struct nlmsghdr *route = netns_build_allow_route(buf, sizeof(buf), AF_INET, 8);
	struct rtmsg *rt = route ? mnl_nlmsg_get_payload(route) : NULL;
	ok(rt && rt->rtm_type == RTN_LOCAL && rt->rtm_dst_len == 0 && rt->rtm_table == NETNS_ALLOW_TABLE,
	   "allow: the route is local, for every address, in its own table");
	run_child(allow_child, ALLOW_REPORTS, "allow");
}

/* The responder's answers: a question as the C library sends it (id,
 * RD, one question for "Stockade.example." type A class IN). */
static void test_responder(void)
{
	static const uint8_t query[] = {
		0x12, 0x34, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		8, 'S', 't', 'o', 'c', 'k', 'a', 'd', 'e', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 0,
		0x00, 0x01, 0x00, 0x01,
	};
	uint8_t reply[512];
	char name[256];
	int n = netns_dns_refusal(query, sizeof(query), reply, sizeof(reply), name, sizeof(name));
	is_int(n, (int)sizeof(query), "the answer is the header and the question");
	is_str(name, "Stockade.example", "the name asked, as text");
	ok(reply[0] == 0x12 && reply[1] == 0x34, "the query's id");
	ok(reply[2] == 0x81, "a response, RD as asked");
	ok((reply[3] & 0x0f) == 3, "NXDOMAIN");
	ok(reply[5] == 1 && reply[7] == 0 && reply[9] == 0 && reply[11] == 0, "one question, no records");
	ok(memcmp(reply + 12, query + 12, sizeof(query) - 12) == 0, "the question as asked");

	/* A label with a dot and a control byte in it: escaped, as dig does. */
	uint8_t odd[] = { 0, 1, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'a', '.', '\n', 0, 0, 1, 0, 1 };
	n = netns_dns_refusal(odd, sizeof(odd), reply, sizeof(reply), name, sizeof(name));
	ok(n > 0 && strcmp(name, "a\\046\\010") == 0, "a dot and a newline in a label are escaped (got '%s')", name);

	/* A question cut short: FORMERR, and no name. */
	n = netns_dns_refusal(query, 20, reply, sizeof(reply), name, sizeof(name));
	ok(n == 12 && (reply[3] & 0x0f) == 1 && name[0] == '\0', "a torn question: FORMERR with the header only");
	/* A label running past the end, a compression pointer. */
	uint8_t ptr[] = { 0, 1, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 0x0c, 0, 1, 0, 1 };
	n = netns_dns_refusal(ptr, sizeof(ptr), reply, sizeof(reply), name, sizeof(name));
	ok(n == 12 && (reply[3] & 0x0f) == 1, "a compressed question name: FORMERR");
	/* A response or another opcode is not answered (no loop between two
	 * responders). */
	uint8_t resp[sizeof(query)];
	memcpy(resp, query, sizeof(query));
	resp[2] |= 0x80;
	is_int(netns_dns_refusal(resp, sizeof(resp), reply, sizeof(reply), name, sizeof(name)), -EINVAL,
	       "a response is not answered");
	resp[2] = 0x28; /* opcode 5, UPDATE */
	is_int(netns_dns_refusal(resp, sizeof(resp), reply, sizeof(reply), name, sizeof(name)), -EINVAL,
	       "an UPDATE is not answered");
	is_int(netns_dns_refusal(query, 11, reply, sizeof(reply), name, sizeof(name)), -EINVAL, "shorter than a header");
	is_int(netns_dns_refusal(query, sizeof(query), reply, 20, name, sizeof(name)), -ENOSPC, "a reply buffer too small");
	/* The root itself. */
	uint8_t root[] = { 0, 1, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1 };
	n = netns_dns_refusal(root, sizeof(root), reply, sizeof(reply), name, sizeof(name));
	ok(n == (int)sizeof(root) && strcmp(name, ".") == 0, "the root is '.'");
}


/* ---- the way out that leads nowhere: the answer to one frame ---- */

static uint16_t csum(const uint8_t *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 0xa }, mac_b[6] = { 2, 0, 0, 0, 0, 0xb };

/* An Ethernet frame from mac_a to mac_b holding an IPv4 packet from
 * 169.254.83.1 to 10.203.0.2 with a TCP header (flags) or a UDP one. */
static size_t frame4(uint8_t *f, uint8_t proto, uint8_t tcp_flags, uint16_t frag)
{
	memset(f, 0, 128);
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	f[12] = 0x08;
	uint8_t *ip = f + 14;
	size_t t = proto == IPPROTO_TCP ? 20 : 8;
	ip[0] = 0x45;
	ip[2] = 0;
	ip[3] = (uint8_t)(20 + t);
	ip[6] = (uint8_t)(frag >> 8);
	ip[7] = (uint8_t)frag;
	ip[8] = 64;
	ip[9] = proto;
	memcpy(ip + 12, (uint8_t[]){ 169, 254, 83, 1 }, 4);
	memcpy(ip + 16, (uint8_t[]){ 10, 203, 0, 2 }, 4);
	ip[20] = 0xc3;	/* source port 50000 */
	ip[21] = 0x50;
	ip[23] = 7;	/* destination port 7 */
	if (proto == IPPROTO_TCP)
		ip[20 + 13] = tcp_flags;
	return 14 + 20 + t;
}

static size_t frame6(uint8_t *f)
{
	memset(f, 0, 128);
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	uint8_t *ip = f + 14;
	ip[0] = 0x60;
	ip[5] = 20;
	ip[6] = IPPROTO_TCP;
	ip[7] = 64;
	ip[8] = 0xfd;
	ip[23] = 1;
	ip[24] = 0xfd;
	ip[25] = 0x00;
	ip[39] = 2;
	ip[40 + 3] = 80;
	ip[40 + 13] = 0x02;
	return 14 + 40 + 20;
}

static void test_outside(void)
{
	uint8_t f[128], r[1536];
	struct netns_attempt a;
	size_t n = frame4(f, IPPROTO_TCP, 0x02, 0);
	int m = netns_outside_answer(f, n, r, sizeof(r), &a);
	is_int(m, 14 + 20 + 8 + 20 + 8, "a TCP SYN out: an ICMP error quoting its IP header and 8 bytes");
	ok(a.family == AF_INET && a.port == 7 && !a.datagram && memcmp(a.addr, (uint8_t[]){ 10, 203, 0, 2 }, 4) == 0,
	   "where it was going: 10.203.0.2, port 7, a connection");
	ok(memcmp(r, mac_a, 6) == 0 && memcmp(r + 6, mac_b, 6) == 0 && r[12] == 0x08 && r[13] == 0,
	   "the frame goes back to the end it came from");
	const uint8_t *ip = r + 14;
	ok(ip[0] == 0x45 && ip[9] == IPPROTO_ICMP && memcmp(ip + 12, f + 14 + 16, 4) == 0 && memcmp(ip + 16, f + 14 + 12, 4) == 0,
	   "from the address it was going to, to the jail");
	is_int(csum(ip, 20, 0), 0xffff, "the IP header's checksum holds");
	ok(ip[20] == 3 && ip[21] == 0, "ICMP destination unreachable, network unreachable: ENETUNREACH");
	is_int(csum(ip + 20, (size_t)m - 14 - 20, 0), 0xffff, "the ICMP checksum holds");
	ok(memcmp(ip + 28, f + 14, 28) == 0, "it quotes the packet, its ports with it");

	n = frame4(f, IPPROTO_UDP, 0, 0);
	m = netns_outside_answer(f, n, r, sizeof(r), &a);
	ok(m > 0 && a.datagram && a.port == 7, "a UDP datagram out: answered, a datagram");

	n = frame6(f);
	m = netns_outside_answer(f, n, r, sizeof(r), &a);
	is_int(m, 14 + 40 + 8 + 40 + 20, "a TCP SYN over IPv6: an ICMPv6 error quoting the whole packet");
	ok(a.family == AF_INET6 && a.port == 80 && a.addr[0] == 0xfd && a.addr[15] == 2, "where it was going, over IPv6");
	ip = r + 14;
	ok(r[12] == 0x86 && r[13] == 0xdd && ip[6] == IPPROTO_ICMPV6 && ip[40] == 1 && ip[41] == 0,
	   "ICMPv6 destination unreachable, no route: ENETUNREACH");
	ok(memcmp(ip + 8, f + 14 + 24, 16) == 0 && memcmp(ip + 24, f + 14 + 8, 16) == 0, "addresses swapped");
	uint32_t pseudo = csum(ip + 8, 32, 0) + (uint32_t)(m - 14 - 40) + IPPROTO_ICMPV6;
	is_int(csum(ip + 40, (size_t)m - 14 - 40, pseudo), 0xffff, "the ICMPv6 checksum holds, with its pseudo-header");

	n = frame4(f, IPPROTO_TCP, 0x12, 0);
	is_int(netns_outside_answer(f, n, r, sizeof(r), &a), -EINVAL, "a SYN-ACK gets no answer: only what opens");
	n = frame4(f, IPPROTO_TCP, 0x10, 0);
	is_int(netns_outside_answer(f, n, r, sizeof(r), &a), -EINVAL, "nor a segment past the SYN");
	n = frame4(f, IPPROTO_ICMP, 0, 0);
	is_int(netns_outside_answer(f, n, r, sizeof(r), &a), -EINVAL, "ICMP gets none: never an error for an error");
	n = frame4(f, IPPROTO_UDP, 0, 0x0010);
	is_int(netns_outside_answer(f, n, r, sizeof(r), &a), -EINVAL, "nor a later fragment, which has no ports");
	n = frame4(f, IPPROTO_TCP, 0x02, 0);
	f[14 + 3] = 200;	/* a total length past the frame */
	is_int(netns_outside_answer(f, n, r, sizeof(r), &a), -EINVAL, "nor a packet longer than its frame");
	n = frame4(f, IPPROTO_TCP, 0x02, 0);
	f[12] = 0x08;
	f[13] = 0x06;	/* ARP */
	is_int(netns_outside_answer(f, n, r, sizeof(r), &a), -EINVAL, "nor what is not IP");
	is_int(netns_outside_answer(f, 20, r, sizeof(r), &a), -EINVAL, "nor a short frame");
	n = frame4(f, IPPROTO_TCP, 0x02, 0);
	is_int(netns_outside_answer(f, n, r, 40, &a), -ENOSPC, "a reply buffer too small: ENOSPC, nothing written past it");
}

/* The look-out on lo: the reset a connect to a port nobody listens on
 * gets, and the host's listeners as /proc/net/tcp{,6} print them. */
static void test_refusals(void)
{
	uint8_t f[128];
	struct netns_attempt a;
	size_t n = frame4(f, IPPROTO_TCP, 0x14, 0);
	is_int(netns_refused_parse(f, n, &a), 0, "a RST-ACK with sequence 0: a connect nobody listened for");
	ok(a.family == AF_INET && a.port == 50000 && memcmp(a.addr, (uint8_t[]){ 169, 254, 83, 1 }, 4) == 0,
	   "where the connect went: the reset's source address and port");
	n = frame4(f, IPPROTO_TCP, 0x04, 0);
	is_int(netns_refused_parse(f, n, &a), -EINVAL, "a RST alone (a connection torn down): not one");
	n = frame4(f, IPPROTO_TCP, 0x14, 0);
	f[14 + 20 + 7] = 1;	/* a sequence number: a connection's reset */
	is_int(netns_refused_parse(f, n, &a), -EINVAL, "a RST-ACK of a connection (its sequence number): not one");
	n = frame6(f);
	f[14 + 40 + 13] = 0x14;
	is_int(netns_refused_parse(f, n, &a), 0, "over IPv6 too");
	ok(a.family == AF_INET6 && a.addr[0] == 0xfd && a.addr[15] == 1, "its source address, IPv6");

	const char *tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
			  "   0: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   116        0 1 1\n"
			  "   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 2 1\n"
			  "   2: 0100007F:1F90 0100007F:A000 01 00000000:00000000 00:00000000 00000000     0        0 3 1\n";
	const uint8_t lo4[4] = { 127, 0, 0, 1 }, lo4b[4] = { 127, 0, 0, 2 };
	ok(netns_host_listens(tcp, AF_INET, lo4, 5432), "127.0.0.1:5432 listening");
	ok(!netns_host_listens(tcp, AF_INET, lo4b, 5432), "not on 127.0.0.2:5432");
	ok(netns_host_listens(tcp, AF_INET, lo4b, 22), "0.0.0.0:22 listens on every address");
	ok(!netns_host_listens(tcp, AF_INET, lo4, 8080), "an established connection is no listener");
	const char *tcp6 = "  sl  local_address                         remote_address                        st\n"
			   "   0: 00000000000000000000000001000000:1F40 00000000000000000000000000000000:0000 0A 0 0 0\n"
			   "   1: 0000000000000000FFFF00000100007F:0050 00000000000000000000000000000000:0000 0A 0 0 0\n";
	const uint8_t lo6[16] = { [15] = 1 };
	ok(netns_host_listens(tcp6, AF_INET6, lo6, 8000), "[::1]:8000 listening");
	ok(!netns_host_listens(tcp6, AF_INET6, lo6, 80), "a mapped IPv4 listener is not ::1's");
	ok(netns_host_listens(tcp6, AF_INET, lo4, 80), "::ffff:127.0.0.1:80 listens for 127.0.0.1:80");
}

int main(void)
{
	test_refusals();
	test_outside();
	test_responder();
	test_golden();
	test_buffer_bounds();
	test_kernel();
	test_allow();
	return tap_done();
}
