#include "supervise/supervise.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <libmnl/libmnl.h>
#include <linux/inet_diag.h>
#include <linux/sock_diag.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "jail/caps.h"
#include "supervise/netaddr.h"
#include "lib/path.h"
#include "lib/util.h"

/* What the supervisor answers when it refuses: not ECONNREFUSED, so that
 * "refused" and "nobody listening" can be told apart. */
#define REFUSED EACCES

struct pending {
	uint64_t id;
	int fd;			/* our copy of the command's socket */
	int flags;		/* its status flags before we made it non-blocking */
	int retry_unix;		/* a Unix connect to a full backlog: try again */
	struct sockaddr_storage addr;
	socklen_t len;
	char what[160];
};

struct abstract_name {
	char name[108];
	size_t len;
	ino_t inode;
};

struct supervisor {
	const struct policy *p;
	int listener;
	struct report *rep;
	struct mnl_socket *diag;
	unsigned diag_seq;
	struct net_addr *host;
	size_t n_host;
	ino_t *bound;		/* inet sockets the run bound: their listeners are its own */
	size_t n_bound;
	ino_t *reuseport;	/* those of them that share their port (SO_REUSEPORT) */
	size_t n_reuseport;
	struct abstract_name *abstracts;
	size_t n_abstracts;
	struct pending *pending;
	size_t n_pending;
	bool drops_caps;	/* root: effective set emptied while acting for the command */
	struct caps caps_on, caps_off;
	bool broken;
};

/* ---- answering ---- */

static void respond(struct supervisor *sv, uint64_t id, int err)
{
	struct seccomp_notif_resp r = { .id = id, .error = err ? -err : 0, .val = 0 };
	/* ENOENT: the caller is gone (killed while it waited). */
	(void)ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

static bool id_valid(const struct supervisor *sv, uint64_t id)
{
	return ioctl(sv->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

static void refuse(struct supervisor *sv, uint64_t id, const char *kind, const char *what, int err)
{
	report_denial(sv->rep, kind, what, strerrorname_np(err) ? strerrorname_np(err) : "?");
	respond(sv, id, err);
}

/* stockade acts for the command with the command's privileges: a root
 * stockade's capabilities (DAC override, binding ports below 1024) stay
 * out of it. */
static void act_as_command(struct supervisor *sv, bool on)
{
	if (sv->drops_caps)
		(void)caps_set(on ? &sv->caps_off : &sv->caps_on);
}

/* ---- what is local, and whose listener ---- */

static void load_host_addresses(struct supervisor *sv)
{
	free(sv->host);
	sv->host = NULL;
	sv->n_host = 0;
	struct ifaddrs *ifa = NULL;
	if (getifaddrs(&ifa) < 0)
		return;
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6))
			continue;
		struct net_addr a;
		size_t len = i->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		if (net_addr_parse(i->ifa_addr, len, &a) < 0)
			continue;
		sv->host = xgrow(sv->host, sv->n_host, sizeof(*sv->host));
		sv->host[sv->n_host++] = a;
	}
	freeifaddrs(ifa);
}

static bool is_host_address(struct supervisor *sv, const struct net_addr *a)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < sv->n_host; i++)
			if (net_addr_same_ip(&sv->host[i], a))
				return true;
		/* An address added since stockade started: look once more. */
		if (pass == 0)
			load_host_addresses(sv);
	}
	return false;
}

/* 127/8, ::1, 0.0.0.0, :: (connecting there reaches this host), and every
 * address of this host's interfaces. */
static bool is_local(struct supervisor *sv, const struct net_addr *a)
{
	return net_addr_is_loopback(a) || net_addr_is_wildcard(a) || is_host_address(sv, a);
}

static bool run_bound(const struct supervisor *sv, ino_t inode)
{
	for (size_t i = 0; i < sv->n_bound; i++)
		if (sv->bound[i] == inode)
			return true;
	return false;
}

struct listener_scan {
	unsigned short port;
	struct net_addr dst;
	struct supervisor *sv;
	bool foreign;
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

static int scan_listener(const struct nlmsghdr *nlh, void *data)
{
	struct listener_scan *s = data;
	const struct inet_diag_msg *m = mnl_nlmsg_get_payload(nlh);
	if (ntohs(m->id.idiag_sport) != s->port)
		return MNL_CB_OK;
	bool v6only = false;
	const struct nlattr *attr;
	mnl_attr_for_each(attr, nlh, sizeof(*m)) {
		if (mnl_attr_get_type(attr) == INET_DIAG_SKV6ONLY)
			v6only = mnl_attr_get_u8(attr);
	}
	if (takes(m, v6only, &s->dst) && !run_bound(s->sv, m->idiag_inode))
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
	if (mnl_socket_bind(sv->diag, 0, MNL_SOCKET_AUTOPID) < 0) {
		int e = errno ? -errno : -EIO;
		mnl_socket_close(sv->diag);
		sv->diag = NULL;
		return e;
	}
	return 0;
}

/* Dumps the TCP listeners of one family (sock_diag) and notes whether one
 * that is not the run's own would take a connection to s->dst. */
static int scan_family(struct supervisor *sv, int family, struct listener_scan *s)
{
	static char buf[32768];
	int r = diag_open(sv);
	if (r < 0)
		return r;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = ++sv->diag_seq;
	struct inet_diag_req_v2 *req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = (uint8_t)family;
	req->sdiag_protocol = IPPROTO_TCP;
	req->idiag_states = 1u << TCP_LISTEN;
	if (mnl_socket_sendto(sv->diag, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	unsigned portid = mnl_socket_get_portid(sv->diag);
	for (;;) {
		ssize_t n = mnl_socket_recvfrom(sv->diag, buf, sizeof(buf));
		if (n < 0)
			return errno == EINTR ? -EAGAIN : -errno;
		r = mnl_cb_run(buf, (size_t)n, sv->diag_seq, portid, scan_listener, s);
		if (r < 0)
			return errno ? -errno : -EIO;
		if (r == MNL_CB_STOP)
			return 0;
	}
}

static bool is_reuseport(const struct supervisor *sv, ino_t inode)
{
	for (size_t i = 0; i < sv->n_reuseport; i++)
		if (sv->reuseport[i] == inode)
			return true;
	return false;
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

/* Asks the kernel which socket would take a connection to dst: the same
 * look-up an arriving SYN gets, wildcard and dual-stack listeners
 * included. 0 with *ret_inode, -ENOENT when no socket would, -errno. */
static int exact_listener(struct supervisor *sv, const struct net_addr *dst, ino_t *ret_inode)
{
	static char buf[8192];
	int r = diag_open(sv);
	if (r < 0)
		return r;
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = ++sv->diag_seq;
	struct inet_diag_req_v2 *req = mnl_nlmsg_put_extra_header(nlh, sizeof(*req));
	req->sdiag_family = (uint8_t)dst->family;
	req->sdiag_protocol = IPPROTO_TCP;
	req->idiag_states = ~0u;
	/* The socket's own side is src: the listener's address and port;
	 * the peer (dst) is a client on the same address. */
	req->id.idiag_sport = htons(dst->port);
	req->id.idiag_dport = 0;
	if (dst->family == AF_INET) {
		memcpy(req->id.idiag_src, &dst->v4, 4);
		memcpy(req->id.idiag_dst, &dst->v4, 4);
	} else {
		memcpy(req->id.idiag_src, &dst->v6, 16);
		memcpy(req->id.idiag_dst, &dst->v6, 16);
	}
	req->id.idiag_cookie[0] = INET_DIAG_NOCOOKIE;
	req->id.idiag_cookie[1] = INET_DIAG_NOCOOKIE;
	if (mnl_socket_sendto(sv->diag, nlh, nlh->nlmsg_len) < 0)
		return -errno;
	struct exact x = { 0 };
	unsigned portid = mnl_socket_get_portid(sv->diag);
	ssize_t n = mnl_socket_recvfrom(sv->diag, buf, sizeof(buf));
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

/* -1 when a listener that is not the run's own would take the connection,
 * 0 when none would, -errno when stockade cannot tell. */
static int foreign_listener(struct supervisor *sv, const struct net_addr *dst)
{
	struct listener_scan s = { .port = dst->port, .dst = *dst, .sv = sv };
	/* Connecting to 0.0.0.0 or :: reaches the loopback of its family. */
	if (net_addr_is_wildcard(&s.dst)) {
		if (s.dst.family == AF_INET)
			s.dst.v4.s_addr = htonl(INADDR_LOOPBACK);
		else
			s.dst.v6 = in6addr_loopback;
	}
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
		return 0;
	r = scan_family(sv, AF_INET, &s);
	if (r == 0)
		r = scan_family(sv, AF_INET6, &s);
	if (r < 0)
		return r;
	return s.foreign ? -1 : 0;
}

/* The inode of the abstract socket bound to name now, from
 * /proc/net/unix; 0 when there is none. */
static ino_t abstract_owner(const struct net_addr *a)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/net/unix", "re");
	if (!f)
		return 0;
	char line[512];
	ino_t found = 0;
	while (!found && fgets(line, sizeof(line), f)) {
		unsigned long inode;
		char path[256] = "";
		if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %255s", &inode, path) < 2)
			continue;
		/* /proc shows an abstract name as '@' and its NULs as '@'. */
		if (path[0] != '@' || strlen(path + 1) != a->path_len)
			continue;
		bool same = true;
		for (size_t i = 0; i < a->path_len && same; i++)
			same = path[1 + i] == (a->path[i] ? a->path[i] : '@');
		if (same)
			found = inode;
	}
	return found;
}

static bool run_abstract(const struct supervisor *sv, const struct net_addr *a, ino_t owner)
{
	for (size_t i = 0; i < sv->n_abstracts; i++) {
		const struct abstract_name *n = &sv->abstracts[i];
		if (n->len == a->path_len && memcmp(n->name, a->path, n->len) == 0 && n->inode == owner)
			return true;
	}
	return false;
}

static void remember_abstract(struct supervisor *sv, int fd)
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

/* ---- Unix socket files ---- */

/* Opens, as the command would find it, the directory a relative path of
 * the command starts from. */
static int open_cwd(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/cwd", (int)pid);
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

static int fd_path(int fd, char *buf, size_t size)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* ---- carrying calls out ---- */

static void finish(struct supervisor *sv, struct pending *pd, int err)
{
	if (!(pd->flags & O_NONBLOCK))
		(void)fcntl(pd->fd, F_SETFL, pd->flags);
	respond(sv, pd->id, err);
	close(pd->fd);
}

/* connect() on our copy of the socket. A blocking socket is made
 * non-blocking for the call, so that stockade never waits on one connect;
 * the command still waits, and gets the result once the connect has
 * finished. */
static void start_connect(struct supervisor *sv, uint64_t id, int fd, const void *addr, socklen_t len,
			  bool unix_path, const char *what)
{
	int flags = fcntl(fd, F_GETFL);
	if (flags < 0) {
		respond(sv, id, errno);
		return;
	}
	bool blocking = !(flags & O_NONBLOCK);
	if (blocking)
		(void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	act_as_command(sv, true);
	int r = connect(fd, addr, len);
	int err = r < 0 ? errno : 0;
	act_as_command(sv, false);
	if (blocking && (err == EINPROGRESS || (err == EAGAIN && !unix_path))) {
		int keep = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (keep >= 0) {
			sv->pending = xgrow(sv->pending, sv->n_pending, sizeof(*sv->pending));
			struct pending *pd = &sv->pending[sv->n_pending++];
			*pd = (struct pending){ .id = id, .fd = keep, .flags = flags, .len = len };
			snprintf(pd->what, sizeof(pd->what), "%s", what);
			return;
		}
		err = errno;
	}
	if (blocking && err == EAGAIN && unix_path) {
		/* A full backlog: a blocking connect would wait for room. */
		int keep = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (keep >= 0 && len <= sizeof(struct sockaddr_storage)) {
			sv->pending = xgrow(sv->pending, sv->n_pending, sizeof(*sv->pending));
			struct pending *pd = &sv->pending[sv->n_pending++];
			*pd = (struct pending){ .id = id, .fd = keep, .flags = flags, .len = len, .retry_unix = 1 };
			memcpy(&pd->addr, addr, len);
			snprintf(pd->what, sizeof(pd->what), "%s", what);
			return;
		}
	}
	if (blocking)
		(void)fcntl(fd, F_SETFL, flags);
	respond(sv, id, err);
}

static void do_connect(struct supervisor *sv, uint64_t id, pid_t pid, int fd, const struct sockaddr_storage *ss,
		       socklen_t len, const struct net_addr *a)
{
	const struct policy *p = sv->p;
	char what[160];
	net_addr_format(a, what, sizeof(what));

	switch (a->family) {
	case AF_INET:
	case AF_INET6: {
		struct net_addr d = *a;
		net_addr_unmap(&d);
		if (p->net == NET_OFF) {
			refuse(sv, id, "connect", what, REFUSED);
			return;
		}
		if (p->net == NET_LOOPBACK) {
			if (!is_local(sv, &d)) {
				refuse(sv, id, "connect", what, REFUSED);
				return;
			}
			int f = foreign_listener(sv, &d);
			if (f != 0) {
				/* Another's listener, or stockade cannot tell. */
				if (f != -1)
					sv->broken = true;
				refuse(sv, id, "connect", what, REFUSED);
				return;
			}
		}
		start_connect(sv, id, fd, ss, len, false, what);
		return;
	}
	case AF_UNIX:
		if (a->unnamed) {
			start_connect(sv, id, fd, ss, len, false, what);
			return;
		}
		if (a->abstract) {
			/* Only a name a process of this run bound: the host's
			 * D-Bus, X11 or containerd shim are never reached. */
			if (!run_abstract(sv, a, abstract_owner(a))) {
				refuse(sv, id, "connect", what, REFUSED);
				return;
			}
			start_connect(sv, id, fd, ss, len, true, what);
			return;
		} else {
			/* Resolved by stockade where the command would find it,
			 * checked against the policy, and connected through
			 * the pinned descriptor: a symlink swapped in after the
			 * check redirects nothing. */
			_cleanup_close_ int cwd = a->path[0] == '/' ? -1 : open_cwd(pid);
			if (a->path[0] != '/' && cwd < 0) {
				refuse(sv, id, "connect", what, REFUSED);
				return;
			}
			_cleanup_close_ int target = openat(a->path[0] == '/' ? AT_FDCWD : cwd, a->path, O_PATH | O_CLOEXEC);
			if (target < 0) {
				/* What the kernel would say: no such socket. */
				respond(sv, id, errno == ENOENT || errno == ENOTDIR ? errno : REFUSED);
				return;
			}
			char real[4096];
			struct stat st;
			if (fd_path(target, real, sizeof(real)) < 0 || fstat(target, &st) < 0 ||
			    policy_effect(p, real) == EFFECT_NONE) {
				refuse(sv, id, "connect", what, REFUSED);
				return;
			}
			if (!S_ISSOCK(st.st_mode)) {
				respond(sv, id, ECONNREFUSED);
				return;
			}
			struct sockaddr_un pinned = { .sun_family = AF_UNIX };
			snprintf(pinned.sun_path, sizeof(pinned.sun_path), "/proc/self/fd/%d", target);
			start_connect(sv, id, fd, &pinned, sizeof(pinned), true, what);
			return;
		}
	default:
		start_connect(sv, id, fd, ss, len, false, what);
		return;
	}
}

static void perform_bind(struct supervisor *sv, uint64_t id, int fd, const void *addr, socklen_t len)
{
	act_as_command(sv, true);
	int r = bind(fd, addr, len);
	int err = r < 0 ? errno : 0;
	act_as_command(sv, false);
	respond(sv, id, err);
}

static void do_bind(struct supervisor *sv, uint64_t id, pid_t pid, int fd, const struct sockaddr_storage *ss,
		    socklen_t len, const struct net_addr *a)
{
	const struct policy *p = sv->p;
	char what[160];
	net_addr_format(a, what, sizeof(what));

	switch (a->family) {
	case AF_INET:
	case AF_INET6: {
		struct net_addr d = *a;
		net_addr_unmap(&d);
		if (p->net == NET_OFF || (p->net == NET_LOOPBACK && !net_addr_is_loopback(&d) && !net_addr_is_wildcard(&d))) {
			refuse(sv, id, "bind", what, REFUSED);
			return;
		}
		act_as_command(sv, true);
		int r = bind(fd, (const struct sockaddr *)ss, len);
		int err = r < 0 ? errno : 0;
		act_as_command(sv, false);
		struct stat st;
		/* Its listener, if it becomes one, is the run's own. */
		if (r == 0 && fstat(fd, &st) == 0) {
			sv->bound = xgrow(sv->bound, sv->n_bound, sizeof(*sv->bound));
			sv->bound[sv->n_bound++] = st.st_ino;
			int on = 0;
			socklen_t ol = sizeof(on);
			if (getsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, &ol) == 0 && on) {
				sv->reuseport = xgrow(sv->reuseport, sv->n_reuseport, sizeof(*sv->reuseport));
				sv->reuseport[sv->n_reuseport++] = st.st_ino;
			}
		}
		respond(sv, id, err);
		return;
	}
	case AF_UNIX:
		if (a->unnamed || a->abstract) {
			act_as_command(sv, true);
			int r = bind(fd, (const struct sockaddr *)ss, len);
			int err = r < 0 ? errno : 0;
			act_as_command(sv, false);
			if (r == 0)
				remember_abstract(sv, fd);
			respond(sv, id, err);
			return;
		} else {
			/* The socket file is made where the policy lets the
			 * command write, through the pinned directory. */
			_cleanup_free_ char *copy = xstrdup(a->path);
			char *slash = strrchr(copy, '/');
			const char *name = slash ? slash + 1 : copy;
			const char *dir = slash ? (slash == copy ? "/" : copy) : ".";
			if (slash && slash != copy)
				*slash = '\0';
			_cleanup_close_ int cwd = dir[0] == '/' ? -1 : open_cwd(pid);
			_cleanup_close_ int parent =
				openat(dir[0] == '/' ? AT_FDCWD : cwd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
			char real[4096];
			if (parent < 0) {
				respond(sv, id, errno == ENOENT || errno == ENOTDIR ? errno : REFUSED);
				return;
			}
			if (!*name || strchr(name, '/') || fd_path(parent, real, sizeof(real)) < 0) {
				refuse(sv, id, "bind", what, REFUSED);
				return;
			}
			_cleanup_free_ char *full = path_join(real, name);
			if (policy_effect(p, real) != EFFECT_WRITE || policy_effect(p, full) != EFFECT_WRITE) {
				refuse(sv, id, "bind", what, REFUSED);
				return;
			}
			struct sockaddr_un pinned = { .sun_family = AF_UNIX };
			int n = snprintf(pinned.sun_path, sizeof(pinned.sun_path), "/proc/self/fd/%d/%s", parent, name);
			if (n < 0 || (size_t)n >= sizeof(pinned.sun_path)) {
				respond(sv, id, ENAMETOOLONG);
				return;
			}
			perform_bind(sv, id, fd, &pinned, sizeof(pinned));
			return;
		}
	default:
		perform_bind(sv, id, fd, (const struct sockaddr *)ss, len);
		return;
	}
}

/* With loopback, a server listens on a loopback address it bound, never
 * on 0.0.0.0, ::, an address of the LAN, or a port listen() would pick
 * for an unbound socket: it must not serve the network. */
static void do_listen(struct supervisor *sv, uint64_t id, int fd, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		respond(sv, id, errno);
		return;
	}
	struct net_addr a;
	if (net_addr_parse(&ss, len, &a) == 0 && (a.family == AF_INET || a.family == AF_INET6)) {
		struct net_addr d = a;
		net_addr_unmap(&d);
		if (!net_addr_is_loopback(&d) || d.port == 0) {
			char what[160];
			net_addr_format(&a, what, sizeof(what));
			refuse(sv, id, "listen", what, REFUSED);
			return;
		}
	}
	int r = listen(fd, backlog);
	respond(sv, id, r < 0 ? errno : 0);
}

/* ---- the notification ---- */

bool supervisor_handles(const struct supervisor *sv, int nr)
{
	return nr == SYS_connect || nr == SYS_bind || nr == SYS_listen;
}

void supervisor_handle(struct supervisor *sv, const struct seccomp_notif *req)
{
	int nr = req->data.nr;
	const char *kind = nr == SYS_connect ? "connect" : nr == SYS_bind ? "bind" : "listen";
	uint64_t id = req->id;
	pid_t pid = (pid_t)req->pid;

	/* The pidfd first; the notification is checked still valid once
	 * the address is read too: the caller was alive all along, so the
	 * pid was not reused in between and the memory read was its own. */
	_cleanup_close_ int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		respond(sv, id, REFUSED);
		return;
	}
	struct sockaddr_storage ss = { 0 };
	socklen_t len = 0;
	if (nr != SYS_listen) {
		/* The address, copied once; every decision is on this copy. */
		len = (socklen_t)req->data.args[2];
		if (len > sizeof(ss)) {
			respond(sv, id, EINVAL);
			return;
		}
		if (len > 0) {
			struct iovec local = { .iov_base = &ss, .iov_len = len };
			struct iovec remote = { .iov_base = (void *)(uintptr_t)req->data.args[1], .iov_len = len };
			ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
			if (n != (ssize_t)len) {
				respond(sv, id, n < 0 && errno == EFAULT ? EFAULT : REFUSED);
				return;
			}
		}
	}
	if (!id_valid(sv, id))
		return;
	_cleanup_close_ int fd = (int)syscall(SYS_pidfd_getfd, pidfd, (int)req->data.args[0], 0);
	if (fd < 0) {
		if (errno == EBADF) {
			respond(sv, id, EBADF);
			return;
		}
		/* Yama, or a kernel without pidfd_getfd: stockade cannot act
		 * for the command, so it refuses. */
		sv->broken = true;
		refuse(sv, id, kind, "(the socket could not be taken)", REFUSED);
		return;
	}
	if (nr == SYS_listen) {
		do_listen(sv, id, fd, (int)req->data.args[1]);
		return;
	}
	struct net_addr a;
	int r = net_addr_parse(&ss, len, &a);
	if (r < 0) {
		respond(sv, id, -r);
		return;
	}
	if (nr == SYS_connect)
		do_connect(sv, id, pid, fd, &ss, len, &a);
	else
		do_bind(sv, id, pid, fd, &ss, len, &a);
}

size_t supervisor_pollfds(const struct supervisor *sv, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sv->n_pending && n < max; i++)
		fds[n++] = (struct pollfd){ .fd = sv->pending[i].fd, .events = POLLOUT };
	return n;
}

void supervisor_ready(struct supervisor *sv, const struct pollfd *fds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!fds[i].revents && !(i < sv->n_pending && sv->pending[i].retry_unix))
			continue;
		size_t k;
		for (k = 0; k < sv->n_pending && sv->pending[k].fd != fds[i].fd; k++)
			;
		if (k == sv->n_pending)
			continue;
		struct pending *pd = &sv->pending[k];
		int err = 0;
		if (pd->retry_unix) {
			act_as_command(sv, true);
			int r = connect(pd->fd, (struct sockaddr *)&pd->addr, pd->len);
			err = r < 0 ? errno : 0;
			act_as_command(sv, false);
			if (err == EAGAIN && id_valid(sv, pd->id))
				continue;	/* still no room: on the next round */
		} else {
			socklen_t el = sizeof(err);
			if (getsockopt(pd->fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
				err = errno;
		}
		finish(sv, pd, err);
		sv->pending[k] = sv->pending[--sv->n_pending];
	}
}

void supervisor_drain(struct supervisor *sv)
{
	for (size_t i = 0; i < sv->n_pending; i++)
		finish(sv, &sv->pending[i], EINTR);
	sv->n_pending = 0;
}

bool supervisor_whole_run(const struct supervisor *sv)
{
	return !sv->broken;
}

struct supervisor *supervisor_new(const struct policy *p, int listener, struct report *rep)
{
	struct supervisor *sv = xcalloc(1, sizeof(*sv));
	sv->p = p;
	sv->listener = listener;
	sv->rep = rep;
	/* The host's addresses and the sock_diag socket come at the first
	 * connect or bind that needs them. */
	if (caps_get(&sv->caps_on) == 0 && caps_effective(&sv->caps_on, CAP_DAC_OVERRIDE)) {
		sv->drops_caps = true;
		sv->caps_off = sv->caps_on;
		for (size_t i = 0; i < ARRAY_SIZE(sv->caps_off.d); i++)
			sv->caps_off.d[i].effective = 0;
	}
	return sv;
}

void supervisor_free(struct supervisor *sv)
{
	if (!sv)
		return;
	for (size_t i = 0; i < sv->n_pending; i++)
		close(sv->pending[i].fd);
	free(sv->pending);
	if (sv->diag)
		mnl_socket_close(sv->diag);
	free(sv->host);
	free(sv->bound);
	free(sv->reuseport);
	free(sv->abstracts);
	free(sv);
}
