/* Whose listener: the host's own addresses, the TCP listeners the kernel
 * would hand a connection to (sock_diag over libmnl), and the abstract
 * names and socket files the run bound. */
#include "supervise/internal.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/sysmacros.h>
#include <netinet/tcp.h>
#include <sys/stat.h>

#include "lib/hostaddr.h"
#include "lib/util.h"

static void load_host_addresses(struct supervisor *sv)
{
	free(sv->host);
	sv->host = NULL;
	sv->n_host = 0;
	_cleanup_free_ struct sockaddr_storage *all = NULL;
	size_t n = host_addresses(&all);
	for (size_t i = 0; i < n; i++) {
		struct net_addr a;
		size_t len = all[i].ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		if (net_addr_parse((const struct sockaddr *)&all[i], len, &a) < 0)
			continue;
		sv->host = xgrow(sv->host, sv->n_host, sizeof(*sv->host));
		sv->host[sv->n_host++] = a;
	}
}

bool sv_host_address(struct supervisor *sv, const struct net_addr *a)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sv->n_host; i++)
			if (net_addr_same_ip(&sv->host[i], a))
				return true;
		/* An address added since stockade started: look once more.
		 * With allow, every connection out is an address of no
		 * interface here, and the interfaces are read at most once a
		 * second: an address added in between reaches the relay, which
		 * knows this host's addresses as they change and refuses them. */
		if (pass == 0 && sv->p->net == NET_ALLOW && now_usec() - sv->host_loaded < 1000000)
			break;
		if (pass == 0) {
			load_host_addresses(sv);
			sv->host_loaded = now_usec();
		}
	}
	return false;
}

static bool inode_in(const ino_t *v, size_t n, ino_t inode)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == inode)
			return true;
	return false;
}

static bool run_bound(const struct supervisor *sv, ino_t inode)
{
	return inode_in(sv->bound, sv->n_bound, inode);
}

struct listener_scan {
	unsigned short port;
	struct net_addr dst;
	struct supervisor *sv;
	bool foreign, own;
};

/* Would a listener at (family, addr, v6only) take a connection to dst? */
static bool takes(const struct inet_diag_msg *m, bool v6only, const struct net_addr *dst)
{
	struct net_addr l = { .family = m->idiag_family };
	if (m->idiag_family == AF_INET)
		memcpy(&l.v4, m->id.idiag_src, 4);
	else
		memcpy(&l.v6, m->id.idiag_src, 16);
	if (dst->family == AF_INET) {
		if (l.family == AF_INET)
			return net_addr_is_wildcard(&l) || net_addr_same_ip(&l, dst);
		if (v6only)
			return false;
		if (net_addr_is_wildcard(&l))
			return true;
		net_addr_unmap(&l);
		return net_addr_same_ip(&l, dst);
	}
	return l.family == AF_INET6 && (net_addr_is_wildcard(&l) || net_addr_same_ip(&l, dst));
}

/* A listener's IPV6_V6ONLY, from its sock_diag message. */
static bool v6only_of(const struct nlmsghdr *nlh)
{
	const struct nlattr *attr;
	mnl_attr_for_each(attr, nlh, sizeof(struct inet_diag_msg)) {
		if (mnl_attr_get_type(attr) == INET_DIAG_SKV6ONLY)
			return mnl_attr_get_u8(attr);
	}
	return false;
}

static int scan_listener(const struct nlmsghdr *nlh, void *data)
{
	struct listener_scan *s = data;
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	if (ntohs(m->id.idiag_sport) != s->port)
		return MNL_CB_OK;
	bool v6only = v6only_of(nlh);
	if (!takes(m, v6only, &s->dst))
		return MNL_CB_OK;
	if (run_bound(s->sv, m->idiag_inode))
		s->own = true;
	else
		s->foreign = true;
	return MNL_CB_OK;
}

/* The sock_diag socket, opened at the first question: a run that never
 * connects over inet never pays for it. */
static int diag_open(struct supervisor *sv)
{
	if (sv->diag)
		return 0;
	sv->diag = mnl_socket_open2(NETLINK_SOCK_DIAG, SOCK_CLOEXEC);
	if (!sv->diag)
		return errno ? -errno : -EIO;
	/* Where its answers go: a dump of every listener of a family can be
	 * long. Made with the socket, for a run that asks at all. */
	if (!sv->diag_buf)
		sv->diag_buf = xmalloc(DIAG_BUF);
	if (mnl_socket_bind(sv->diag, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno ? -errno : -EIO;
		mnl_socket_close(sv->diag);
		sv->diag = NULL;
		return e;
	}
	return 0;
}

/* Dumps the TCP listeners of one family (sock_diag), or its UDP sockets
 * (every one: a bound UDP socket receives in any state), each to cb. */
static int dump_sockets(struct supervisor *sv, int family, int protocol, mnl_cb_t cb, void *data)
{
	int r = diag_open(sv);
	char *buf = sv->diag_buf;
	if (r < 0)
		return r;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++sv->diag_seq;
	struct inet_diag_req_v2 *req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = (uint8_t)family;
	req->sdiag_protocol = (uint8_t)protocol;
	req->idiag_states = protocol == IPPROTO_TCP ? 1u << TCP_LISTEN : ~0u;
	if (mnl_socket_sendto(sv->diag, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	unsigned portid = mnl_socket_get_portid(sv->diag);
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(sv->diag, buf, DIAG_BUF);
		if (n < 0)
			return errno == EINTR ? -EAGAIN : -errno;
		r = mnl_cb_run(buf, (size_t)n, sv->diag_seq, portid, cb, data);
		if (r < 0)
			return errno ? -errno : -EIO;
		if (r == MNL_CB_STOP)
			return 0;
	}
}

/* Would a bind to b share its port with a listener at (m, v6only)? Both
 * ways round: a wildcard on either side, the same address, a dual-stack
 * :: and an IPv4 address, a mapped form. A bind to :: counts every
 * listener on the port, whatever IPV6_V6ONLY the run's socket will have. */
static bool shares(const struct inet_diag_msg *m, bool v6only, const struct net_addr *b)
{
	if (takes(m, v6only, b))
		return true;
	if (!net_addr_is_wildcard(b))
		return false;
	if (b->family == AF_INET6)
		return true;
	/* 0.0.0.0: every IPv4 listener, and IPv6 ones that take IPv4. */
	struct net_addr l = { .family = m->idiag_family };
	if (m->idiag_family == AF_INET)
		return true;
	memcpy(&l.v6, m->id.idiag_src, 16);
	if (v6only)
		return false;
	net_addr_unmap(&l);
	return l.family == AF_INET || net_addr_is_wildcard(&l);
}

struct held_scan {
	struct net_addr b;
	struct supervisor *sv;
	bool held;
};

static int scan_held(const struct nlmsghdr *nlh, void *data)
{
	struct held_scan *s = data;
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	if (ntohs(m->id.idiag_sport) != s->b.port || run_bound(s->sv, m->idiag_inode) ||
	    sv_is_hold(s->sv, m->idiag_inode))
		return MNL_CB_OK;
	bool v6only = v6only_of(nlh);
	if (shares(m, v6only, &s->b))
		s->held = true;
	return MNL_CB_OK;
}

int sv_held_outside(struct supervisor *sv, const struct net_addr *b, int protocol)
{
	struct held_scan s = { .b = *b, .sv = sv };
	int r = dump_sockets(sv, AF_INET, protocol, scan_held, &s);
	if (r == 0)
		r = dump_sockets(sv, AF_INET6, protocol, scan_held, &s);
	return r < 0 ? r : s.held;
}

static bool is_reuseport(const struct supervisor *sv, ino_t inode)
{
	return inode_in(sv->reuseport, sv->n_reuseport, inode);
}

struct exact {
	ino_t inode;
	bool found;
};

static int exact_reply(const struct nlmsghdr *nlh, void *data)
{
	struct exact *x = data;
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	x->inode = m->idiag_inode;
	x->found = true;
	return MNL_CB_OK;
}

/* Sends one sock_diag request for a single socket: 0 with its inode,
 * -ENOENT when the kernel finds none, -errno. */
static int exact_socket(struct supervisor *sv, const struct inet_diag_req_v2 *want, ino_t *ret_inode)
{
	int r = diag_open(sv);
	char *buf = sv->diag_buf;
	if (r < 0)
		return r;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++sv->diag_seq;
	struct inet_diag_req_v2 *req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	*req = *want;
	req->id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	req->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (mnl_socket_sendto(sv->diag, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	struct exact x = { 0 };
	unsigned portid = mnl_socket_get_portid(sv->diag);
	ssize_t n = mnl_socket_recvfrom(sv->diag, buf, DIAG_BUF);
	if (n < 0)
		return -errno;
	errno = 0;
	r = mnl_cb_run(buf, (size_t)n, sv->diag_seq, portid, exact_reply, &x);
	if (r < 0)
		return errno ? -errno : -EIO;
	if (!x.found)
		return -ENOENT;
	*ret_inode = x.inode;
	return 0;
}

static void put_ip(__be32 *where, const struct net_addr *a)
{
	if (a->family == AF_INET)
		memcpy(where, &a->v4, 4);
	else
		memcpy(where, &a->v6, 16);
}

/* Asks the kernel which socket would take a connection to dst: the same
 * look-up an arriving SYN gets, wildcard and dual-stack listeners
 * included. 0 with *ret_inode, -ENOENT when no socket would, -errno. */
static int exact_listener(struct supervisor *sv, const struct net_addr *dst, ino_t *ret_inode)
{
	struct inet_diag_req_v2 req = {
		.sdiag_family = (uint8_t)dst->family,
		.sdiag_protocol = IPPROTO_TCP,
		.idiag_states = ~0u,
	};
	/* The socket's own side is src: the listener's address and port;
	 * the peer (dst) is a client on the same address. */
	req.id.idiag_sport = htons(dst->port);
	req.id.idiag_dport = 0;
	put_ip(req.id.idiag_src, dst);
	put_ip(req.id.idiag_dst, dst);
	/* Arriving on the loopback device, as a connection to any local
	 * address does: a listener bound to it (0.0.0.0 with loopback) is
	 * found too. */
	req.id.idiag_if = LOOPBACK_IFINDEX;
	return exact_socket(sv, &req, ret_inode);
}

int sv_foreign_listener(struct supervisor *sv, const struct net_addr *dst)
{
	struct listener_scan s = { .port = dst->port, .dst = *dst, .sv = sv };
	net_addr_wildcard_to_loopback(&s.dst);
	/* The quick way: the one socket the kernel would pick. Only when
	 * that is the run's own and shares its port (SO_REUSEPORT), another
	 * in its group could be picked instead: then every listener is
	 * looked at. */
	ino_t inode = 0;
	int r = exact_listener(sv, &s.dst, &inode);
	if (r == -ENOENT)
		return 0;
	if (r == 0 && !run_bound(sv, inode))
		return -1;
	if (r == 0 && !is_reuseport(sv, inode))
		return 1;
	/* Every listener: does one that is not the run's own take dst? */
	r = dump_sockets(sv, AF_INET, IPPROTO_TCP, scan_listener, &s);
	if (r == 0)
		r = dump_sockets(sv, AF_INET6, IPPROTO_TCP, scan_listener, &s);
	if (r < 0)
		return r;
	return s.foreign ? -1 : s.own ? 1 : 0;
}

/* Which UDP socket would receive a datagram from src to dst: the kernel's
 * own look-up (sock_diag's for one UDP socket is the receive path's,
 * connected sockets, SO_REUSEADDR and dual-stack ones included), on the
 * loopback device as every local datagram arrives. Where that socket is
 * the run's and shares its port (SO_REUSEPORT), another of its group
 * could get the datagram: then every socket on the port is looked at. */
int sv_udp_receiver(struct supervisor *sv, const struct net_addr *dst, const struct net_addr *src)
{
	struct net_addr d = *dst;
	net_addr_wildcard_to_loopback(&d);
	/* The sender's address as the kernel would pick it: the one it is
	 * bound to, else the destination's own (a local address). */
	struct net_addr s = src && src->family == d.family && !net_addr_is_wildcard(src) ? *src : d;
	struct inet_diag_req_v2 req = {
		.sdiag_family = (uint8_t)d.family,
		.sdiag_protocol = IPPROTO_UDP,
		.idiag_states = ~0u,
	};
	/* For UDP, src is the datagram's sender and dst the receiving
	 * socket's address (the kernel's udp_dump_one). */
	put_ip(req.id.idiag_src, &s);
	req.id.idiag_sport = htons(src ? src->port : 0);
	put_ip(req.id.idiag_dst, &d);
	req.id.idiag_dport = htons(d.port);
	req.id.idiag_if = LOOPBACK_IFINDEX;
	ino_t inode = 0;
	int r = exact_socket(sv, &req, &inode);
	if (r == -ENOENT)
		return SV_LISTENER_NONE;
	if (r < 0)
		return r;
	if (!run_bound(sv, inode))
		return SV_LISTENER_OTHER;
	if (!is_reuseport(sv, inode))
		return SV_LISTENER_RUN;
	struct listener_scan scan = { .port = d.port, .dst = d, .sv = sv };
	r = dump_sockets(sv, AF_INET, IPPROTO_UDP, scan_listener, &scan);
	if (r == 0)
		r = dump_sockets(sv, AF_INET6, IPPROTO_UDP, scan_listener, &scan);
	if (r < 0)
		return r;
	return scan.foreign ? SV_LISTENER_OTHER : SV_LISTENER_RUN;
}

/* __SO_ACCEPTCON in /proc/net/unix's flags: a listening socket. */
#define UNIX_LISTENING 0x10000UL

/* The inode of the abstract socket bound to name now, from
 * /proc/net/unix: the one listening there, which takes a connect (every
 * connection it accepted shows the same name); else one bound there; 0
 * when there is none. */
ino_t sv_abstract_owner(const struct net_addr *a)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/net/unix", "re");
	if (!f)
		return 0;
	char line[512];
	ino_t found = 0;
	bool listening = false;
	while (!listening && fgets(line, sizeof(line), f)) {
		unsigned long flags, inode;
		char path[256] = "";
		if (sscanf(line, "%*s %*s %*s %lx %*s %*s %lu %255s", &flags, &inode, path) < 3)
			continue;
		/* /proc shows an abstract name as '@' and its NULs as '@'. */
		if (path[0] != '@' || strlen(path + 1) != a->path_len)
			continue;
		bool same = true;
		for (size_t i = 0; i < a->path_len && same; i++)
			same = path[1 + i] == (a->path[i] ? a->path[i] : '@');
		if (!same)
			continue;
		listening = flags & UNIX_LISTENING;
		if (listening || !found)
			found = inode;
	}
	return found;
}

bool sv_run_abstract(const struct supervisor *sv, const struct net_addr *a, ino_t owner)
{
	for (size_t i = 0; i < sv->n_abstracts; i++) {
		const struct abstract_name *n = &sv->abstracts[i];
		if (n->len == a->path_len && memcmp(n->name, a->path, n->len) == 0 && n->inode == owner)
			return true;
	}
	return false;
}

void sv_remember_abstract(struct supervisor *sv, int fd)
{
	struct sockaddr_un un;
	socklen_t len = sizeof(un);
	struct stat st;
	struct net_addr a;
	if (getsockname(fd, (struct sockaddr *)&un, &len) < 0 || fstat(fd, &st) < 0 ||
	    net_addr_parse(&un, len, &a) < 0 || !a.abstract)
		return;
	sv->abstracts = xgrow(sv->abstracts, sv->n_abstracts, sizeof(*sv->abstracts));
	struct abstract_name *n = &sv->abstracts[sv->n_abstracts++];
	*n = (struct abstract_name){ .len = a.path_len, .inode = st.st_ino };
	memcpy(n->name, a.path, a.path_len);
}

void sv_remember_bound(struct supervisor *sv, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || run_bound(sv, st.st_ino))
		return;
	sv->bound = xgrow(sv->bound, sv->n_bound, sizeof(*sv->bound));
	sv->bound[sv->n_bound++] = st.st_ino;
	int on = 0;
	socklen_t ol = sizeof(on);
	if (getsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, &ol) == 0 && on) {
		sv->reuseport = xgrow(sv->reuseport, sv->n_reuseport, sizeof(*sv->reuseport));
		sv->reuseport[sv->n_reuseport++] = st.st_ino;
	}
}

struct unix_vfs {
	bool found;
	dev_t dev;
	ino_t ino;
};

static int unix_vfs_reply(const struct nlmsghdr *nlh, void *data)
{
	struct unix_vfs *u = data;
	if (nlh->nlmsg_type != SOCK_DIAG_BY_FAMILY)
		return MNL_CB_OK;
	const struct unix_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	const struct nlattr *attr;
	mnl_attr_for_each(attr, nlh, sizeof(*m)) {
		if (mnl_attr_get_type(attr) != UNIX_DIAG_VFS ||
		    mnl_attr_get_payload_len(attr) < sizeof(struct unix_diag_vfs))
			continue;
		const struct unix_diag_vfs *v = mnl_attr_get_payload(attr);
		/* The kernel's own dev_t: 12 bits of major above 20 of minor. */
		u->dev = makedev(v->udiag_vfs_dev >> 20, v->udiag_vfs_dev & 0xfffff);
		u->ino = v->udiag_vfs_ino;
		u->found = true;
	}
	return MNL_CB_OK;
}

/* The socket file a Unix socket (by its inode) is bound to now, from
 * sock_diag: 0, -ENOENT when no such socket is bound to a file, or -errno
 * when stockade cannot tell (no unix_diag in this kernel). */
static int unix_socket_file(struct supervisor *sv, ino_t sock, struct unix_vfs *ret)
{
	*ret = (struct unix_vfs){ 0 };
	int r = diag_open(sv);
	if (r < 0)
		return r;
	char *buf = sv->diag_buf;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++sv->diag_seq;
	struct unix_diag_req *req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = AF_UNIX;
	req->udiag_states = ~0u;
	req->udiag_ino = (unsigned)sock;
	req->udiag_show = UDIAG_SHOW_VFS;
	req->udiag_cookie[0] = req->udiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (mnl_socket_sendto(sv->diag, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	ssize_t n = mnl_socket_recvfrom(sv->diag, buf, DIAG_BUF);
	if (n < 0)
		return -errno;
	r = mnl_cb_run(buf, (size_t)n, sv->diag_seq, mnl_socket_get_portid(sv->diag), unix_vfs_reply, ret);
	if (r < 0)
		return errno == ENOENT ? -ENOENT : errno ? -errno : -EIO;
	return ret->found ? 0 : -ENOENT;
}

void sv_remember_unix(struct supervisor *sv, int fd, int parent, const char *name)
{
	struct stat sock, file;
	if (fstat(fd, &sock) < 0)
		return;
	struct unix_vfs u;
	/* The kernel's word for which file the socket holds; where it has
	 * no unix_diag, the file at the name just bound. */
	if (unix_socket_file(sv, sock.st_ino, &u) < 0) {
		if (fstatat(parent, name, &file, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISSOCK(file.st_mode))
			return;
		u = (struct unix_vfs){ .found = true, .dev = file.st_dev, .ino = file.st_ino };
	}
	sv->unix_bound = xgrow(sv->unix_bound, sv->n_unix_bound, sizeof(*sv->unix_bound));
	sv->unix_bound[sv->n_unix_bound++] = (struct unix_bound){ .dev = u.dev, .ino = u.ino, .sock = sock.st_ino };
}

/* Whether a socket inode is alive, from /proc/net/unix: where unix_diag
 * is missing. */
static bool unix_socket_listed(ino_t sock)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/net/unix", "re");
	char line[512];
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long inode;
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu", &inode) == 1 && inode == sock)
			return true;
	}
	return false;
}

bool sv_run_socket_file(struct supervisor *sv, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < sv->n_unix_bound; i++) {
		const struct unix_bound *b = &sv->unix_bound[i];
		if (b->dev != dev || b->ino != ino)
			continue;
		/* Still that socket's: a socket holds the file it is bound to,
		 * so while it lives no other file has that inode; once it is
		 * gone, the inode may be another's (a socket the user binds
		 * later), which the run never reaches. */
		struct unix_vfs u;
		int r = unix_socket_file(sv, b->sock, &u);
		if (r == 0 && u.dev == dev && u.ino == ino)
			return true;
		if (r < 0 && r != -ENOENT && unix_socket_listed(b->sock))
			return true;
	}
	return false;
}

void supervisor_own_listener(struct supervisor *sv, int fd)
{
	sv_remember_bound(sv, fd);
}
