/* The supervisor: takes each notification, asks the verdict, and carries
 * the call out on the command's behalf. */
#include "supervise/internal.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <libmnl/libmnl.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "lib/path.h"
#include "lib/util.h"
#include "policy/allow.h"

/* ---- refusing ---- */

static void refuse(struct supervisor *sv, uint64_t id, const char *kind, const char *what, int err)
{
	report_denial(sv->rep, kind, what, strerrorname_np(err) ? strerrorname_np(err) : "?");
	sv_respond(sv, id, err);
}

/* A refusal of the network mode's or of the squatting rule, with the rule,
 * where the mode comes from and what would allow it: --connect names the
 * one service, --net on the whole network. */
void sv_refuse(struct supervisor *sv, uint64_t id, const char *kind, const char *what, int err)
{
	refuse(sv, id, kind, what, err);
}

static void refuse_inet(struct supervisor *sv, uint64_t id, enum sv_call call, bool datagram,
			const struct net_addr *a, const char *what, int err)
{
	const char *kind = call == SV_CONNECT ? "connect" : call == SV_BIND ? "bind" : call == SV_SEND ? "send" : "listen";
	const char *errname = strerrorname_np(err) ? strerrorname_np(err) : "?";
	_cleanup_free_ char *source = source_text(&sv->p->net_source);
	_cleanup_free_ char *rule = NULL, *fix = NULL;
	if (sv->p->net == NET_ALLOW && (call == SV_CONNECT || call == SV_SEND) && err == ENETUNREACH) {
		/* Off this host in network allow: a datagram, or a port no
		 * allowed name has. */
		struct net_addr d = *a;
		net_addr_unmap(&d);
		const char *name = sv->has_relay ? sv->relay.name_of(sv->relay.data, &d) : NULL;
		if (datagram && call == SV_CONNECT) {
			/* A UDP connect sends nothing: refused, so that what its
			 * socket would send later (a send without an address,
			 * which the supervisor never sees) cannot leave, but not
			 * recorded. glibc's getaddrinfo makes one to each address
			 * it sorts, on every lookup; a client that does send
			 * (QUIC) sees ENETUNREACH at once and falls back to TCP. */
			sv_respond(sv, id, err);
			return;
		}
		if (datagram) {
			kind = "datagram";
			rule = xstrdup("network allow: no datagram leaves this host (UDP, QUIC: a client falls back to TCP), "
				       "but the run's lookups, which stockade answers");
			fix = xstrdup("none in network allow: --net on gives the whole network");
		} else {
			rule = xstrdup("network allow: connections out go only to the ports of the allowed names (443 and 80, "
				       "or as named)");
			fix = name ? allow_fix(name, d.port)
				   : xasprintf("none: an address is never allowed alone; allow the name the command looked up on "
					       "that port (--allow NAME:%u)",
					       d.port);
		}
	} else if (err == EADDRINUSE) {
		rule = xstrdup("no squatting: a socket outside the run listens on that address and port");
		fix = xstrdup("none: another port (a server outside the run holds this one)");
	} else if (sv->p->net == NET_OFF && (call == SV_CONNECT || call == SV_SEND)) {
		/* With the network off, a server of the run's own on loopback
		 * is reached with loopback, the default; --connect needs a
		 * network. */
		struct net_addr d = *a;
		net_addr_unmap(&d);
		rule = xasprintf("network %s: no network", net_mode_name(sv->p->net));
		fix = xstrdup(net_addr_is_loopback(&d) ? "--net loopback (the default: servers of the run's own), or in "
							 "stockade.ini: network = loopback"
						       : ALLOW_NET_FIX);
	} else if (datagram && (call == SV_CONNECT || call == SV_SEND)) {
		/* --connect forwards streams: only the whole network lets a
		 * datagram out (a DNS query to 127.0.0.53 is one). */
		rule = xasprintf("network %s: %s", net_mode_name(sv->p->net),
				 "datagrams only to a port a socket of the run has bound, on this host, or one nobody has "
				 "that stockade holds for the run (1024 and above)");
		fix = xstrdup(ALLOW_NET_FIX);
	} else if (call == SV_CONNECT || call == SV_SEND) {
		char host[INET6_ADDRSTRLEN + 8];
		struct net_addr d = *a;
		net_addr_unmap(&d);
		net_addr_format(&d, host, sizeof(host));
		rule = xasprintf("network %s: %s", net_mode_name(sv->p->net), "the run's own listeners on this host only");
		/* --net on is no fix beside --allow: it takes the allow
		 * list's place. */
		fix = sv->p->net == NET_ALLOW ? xasprintf("--connect %s (this one service)", host)
					      : xasprintf("--connect %s (this one service), or --net on", host);
	} else {
		rule = xasprintf("network %s: servers listen on loopback only", net_mode_name(sv->p->net));
		fix = xstrdup(ALLOW_NET_FIX);
	}
	report_denial_ruled(sv->rep, kind, what, errname, rule, source, fix);
	sv_respond(sv, id, err);
}

/* A socket file no socket of the run is bound to: the user's tmux,
 * ssh-agent or Docker socket, wherever it lies. */
static void refuse_socket_file(struct supervisor *sv, uint64_t id, const struct sv_query *q, const char *what, int err)
{
	_cleanup_free_ char *fix = policy_in_own_state(sv->p, q->path_real)
					   ? xstrdup(POLICY_STATE_FIX)
					   : xasprintf("--connect unix:%s (this one socket)", q->path_real);
	report_denial_ruled(sv->rep, "connect", what, strerrorname_np(err) ? strerrorname_np(err) : "?",
			    "a Unix socket file is reached only when a socket of the run is bound to it",
			    "built in: the supervisor (landlock backend)", fix);
	sv_respond(sv, id, err);
}

/* connect or bind, carried out by stockade on its copy of the command's
 * socket with the command's privileges: a root stockade's capabilities
 * (DAC override on a socket file, binding ports below 1024) stay out of
 * it. An inet connect is the exception: the kernel checks no capability
 * for one (a port it binds on the way is of the ephemeral range), so a
 * root stockade makes it as it is, without the two capset calls, each of
 * which makes and replaces a credential. 0 or the errno; a refusal when
 * the capabilities cannot be set aside. */
static int as_command(struct supervisor *sv, int (*call)(int, const struct sockaddr *, socklen_t), int fd,
		      const void *addr, socklen_t len)
{
	sa_family_t family = len >= sizeof(family) ? ((const struct sockaddr *)addr)->sa_family : AF_UNSPEC;
	bool privileged = call != connect || (family != AF_INET && family != AF_INET6);
	if (privileged && sv_acting(sv))
		return SV_REFUSED;
	int err = call(fd, addr, len) < 0 ? errno : 0;
	if (privileged)
		sv_acted(sv);
	return err;
}

/* ---- Unix socket files ---- */

/* Opens, as the command would find it, the directory a relative path of
 * the command starts from. */
static int open_cwd(pid_t pid)
{
	char path[64], num[21];
	stpcpy(stpcpy(stpcpy(path, "/proc/"), fmt_u64(num, (uint64_t)pid)), "/cwd");
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int sv_fd_path(int fd, char *buf, size_t size)
{
	char link[64], num[21];
	stpcpy(stpcpy(link, "/proc/self/fd/"), fmt_u64(num, (uint64_t)fd));
	ssize_t n = readlink(link, buf, size - 1);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

/* ---- carrying calls out ---- */

/* Our copy is closed before the answer: the command's is then never the
 * last, and a connection it closes at once is torn down on its own time,
 * not stockade's. */
/* Our copy of the command's socket disconnected: a SYN in flight is
 * dropped, a connection made is reset before the command sent a byte. */
static void disconnect(int fd)
{
	struct sockaddr unspec = { .sa_family = AF_UNSPEC };
	(void)connect(fd, &unspec, sizeof(unspec));
}

/* What the command is answered for a connect that ended in err: a
 * non-blocking TCP connect that was made answers EINPROGRESS, as the
 * kernel answers it (its handshake done by the time the command polls). */
static int connect_answer(bool inet, int flags, int err)
{
	return inet && (flags & O_NONBLOCK) && err == 0 ? EINPROGRESS : err;
}

static void finish(struct supervisor *sv, struct pending *pd, int err)
{
	if (!(pd->flags & O_NONBLOCK))
		(void)fcntl(pd->fd, F_SETFL, pd->flags);
	close(pd->fd);
	if (pd->pinned >= 0)
		close(pd->pinned);
	sv_respond(sv, pd->id, connect_answer(pd->deadline != 0, pd->flags, err));
}

/* How long a TCP handshake the kernel did not make within the call may
 * take: a SYN that waited in the backlog of a listener whose lock was
 * held is answered within microseconds (milliseconds on a busy machine);
 * one the listener dropped (its queue full) is sent again only after a
 * second (the kernel's first retransmission). */
#define HANDSHAKE_WAIT_USEC 200000ULL

/* A pending TCP connect whose handshake was not made in time, or was
 * made with a listener outside the run: the command's socket is
 * disconnected (a SYN in flight is dropped, a made connection reset
 * before the command could send a byte) and the connect refused. Left
 * to the kernel, a dropped SYN would be sent again, unchecked, to
 * whatever listens on that port a second or a minute later: a service
 * of the host's, once the run's listener has closed. */
static void refuse_handshake(struct supervisor *sv, struct pending *pd, bool late)
{
	disconnect(pd->fd);
	struct net_addr d;
	char what[160] = "?";
	if (net_addr_parse(&pd->addr, pd->len, &d) == 0) {
		net_addr_unmap(&d);
		net_addr_format(&d, what, sizeof(what));
	}
	_cleanup_free_ char *fix = late ? xstrdup("none: a longer listen() backlog, or fewer connects at once")
				: sv->p->net == NET_ALLOW ? xasprintf("--connect %s (this one service)", what)
							  : xasprintf("--connect %s (this one service), or --net on", what);
	report_denial_ruled(sv->rep, "connect", what, "ECONNREFUSED",
			    late ? "a TCP handshake the listener did not take at once (its queue full) is refused, not "
				   "left to finish later with whatever listens on the port then"
				 : "the run's own listeners on this host only",
			    "built in: the supervisor (landlock backend)", fix);
	finish(sv, pd, ECONNREFUSED);
}

/* A TCP connect to a where nobody listened at the check, just made: did
 * a listener outside the run take it (its SYN crossed the loopback within
 * the call)? One reset at once found nobody, and its error is the
 * command's to read. Anything else was taken by a listener that came
 * since the check: the run's own, found listening still, or another. A
 * listener gone again already (a restarted service that accepted the
 * connection and closed its listening socket, keeping the connection)
 * leaves no way to tell whose it was. When stockade cannot tell, taken. */
static bool taken_outside(struct supervisor *sv, int fd, const struct net_addr *a)
{
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &tl) == 0 && ti.tcpi_state == TCP_CLOSE)
		return false;
	struct net_addr d = *a;
	net_addr_unmap(&d);
	/* 1: the run's own listener; 0 (none), -1 (one outside the run) or
	 * -errno. */
	return sv_foreign_listener(sv, &d) <= 0;
}

/* connect() on our copy of the socket, *fd, which is taken (closed, or
 * kept for later: -1 afterwards), as is *pinned (when not NULL), the
 * socket file addr names through /proc/self/fd. A blocking socket is
 * made non-blocking for the call, so that stockade never waits on one
 * connect; the command still waits, and gets the result once the connect
 * has finished. recheck: the address of a TCP connect made where nobody
 * listened (struct sv_verdict's recheck), or NULL. */
static void start_connect(struct supervisor *sv, uint64_t id, int *fd, const void *addr, socklen_t len,
			  bool unix_path, int *pinned, const struct net_addr *recheck, struct sv_local *relayed)
{
	if (relayed)
		relayed->len = 0;
	int flags = fcntl(*fd, F_GETFL);
	if (flags < 0) {
		sv_respond(sv, id, errno);
		return;
	}
	bool blocking = !(flags & O_NONBLOCK);
	if (blocking)
		(void)fcntl(*fd, F_SETFL, flags | O_NONBLOCK);
	bool inet = ((const struct sockaddr *)addr)->sa_family == AF_INET ||
		    ((const struct sockaddr *)addr)->sa_family == AF_INET6;
	int err = as_command(sv, connect, *fd, addr, len);
	/* A non-blocking TCP connect answers 0 only when it sent no SYN:
	 * TCP_FASTOPEN_CONNECT (with TCP_FASTOPEN_NO_COOKIE, or a cookie
	 * cached) defers it to the first write, and so to whatever listens
	 * on the port then, past every check. The option is turned off and
	 * the connect made again, as a plain one. */
	if (inet && err == 0 && net_connect_outcome(*fd) == EINPROGRESS) {
		int off = 0;
		disconnect(*fd);
		(void)setsockopt(*fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &off, sizeof(off));
		err = as_command(sv, connect, *fd, addr, len);
	}
	/* A service of the host's that began to listen since the check took
	 * it: torn down (a reset, before the command could send a byte) and
	 * refused, as the check would have. */
	if (recheck && (err == 0 || err == EINPROGRESS) && taken_outside(sv, *fd, recheck)) {
		disconnect(*fd);
		if (blocking)
			(void)fcntl(*fd, F_SETFL, flags);
		close(*fd);
		*fd = -1;
		char what[160];
		net_addr_format(recheck, what, sizeof(what));
		refuse_inet(sv, id, SV_CONNECT, false, recheck, what, SV_REFUSED);
		return;
	}
	/* The handshake asked at once: on this host's loopback the kernel has
	 * made it by now, or refused it, unless the listener has not taken
	 * the SYN yet. A blocking connect is then answered without a round of
	 * stockade's loop. */
	if ((err == EINPROGRESS && blocking) || (inet && (err == EINPROGRESS || err == 0)))
		err = net_connect_outcome(*fd);
	/* A relayed one: the address the kernel gave it, by which the relay
	 * is told where it goes, read before the socket is given away. */
	if (relayed) {
		relayed->len = sizeof(relayed->addr);
		if (getsockname(*fd, (struct sockaddr *)&relayed->addr, &relayed->len) < 0)
			relayed->len = 0;
	}
	/* A handshake not made (for either kind of caller), or (a Unix
	 * socket) a full backlog that a blocking connect would wait on:
	 * finished later, without stockade waiting. */
	bool later = (inet && err == EINPROGRESS) || (blocking && (err == EINPROGRESS || err == EAGAIN));
	if (later && len <= sizeof(struct sockaddr_storage)) {
		sv->pending = xgrow(sv->pending, sv->n_pending, sizeof(*sv->pending));
		struct pending *pd = &sv->pending[sv->n_pending++];
		*pd = (struct pending){ .id = id, .fd = *fd, .flags = flags, .len = len,
					.retry_unix = unix_path && err == EAGAIN, .pinned = -1,
					.deadline = inet ? now_usec() + HANDSHAKE_WAIT_USEC : 0, .relayed = relayed != NULL };
		memcpy(&pd->addr, addr, len);
		if (pd->retry_unix && pinned) {
			pd->pinned = *pinned;
			*pinned = -1;
		}
		*fd = -1;
		return;
	}
	if (blocking)
		(void)fcntl(*fd, F_SETFL, flags);
	close(*fd);
	*fd = -1;
	sv_respond(sv, id, connect_answer(inet, flags, err));
}

void sv_start_relayed_connect(struct supervisor *sv, uint64_t id, int *fd, const struct sockaddr_storage *to,
			      socklen_t len, struct sv_local *ret_local)
{
	start_connect(sv, id, fd, to, len, false, NULL, NULL, ret_local);
}

/* What the facts are asked about: the supervisor, and the socket the
 * call is made on (its protocol, the address it is bound to). */
struct fact_ctx {
	struct supervisor *sv;
	int fd;
	bool datagram;
};

static bool fact_host_address(void *data, const struct net_addr *a)
{
	return sv_host_address(((struct fact_ctx *)data)->sv, a);
}

static int fact_listener(void *data, const struct net_addr *a)
{
	int r = sv_foreign_listener(((struct fact_ctx *)data)->sv, a);
	return r == -1 ? SV_LISTENER_OTHER : r == 1 ? SV_LISTENER_RUN : r < 0 ? r : SV_LISTENER_NONE;
}

static bool fact_run_abstract(void *data, const struct net_addr *a)
{
	return sv_run_abstract(((struct fact_ctx *)data)->sv, a, sv_abstract_owner(a));
}

static int fact_held_outside(void *data, const struct net_addr *a)
{
	const struct fact_ctx *c = data;
	return sv_held_outside(c->sv, a, c->datagram ? IPPROTO_UDP : IPPROTO_TCP);
}

static int fact_receiver(void *data, const struct net_addr *a)
{
	const struct fact_ctx *c = data;
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct net_addr src;
	bool bound = c->fd >= 0 && getsockname(c->fd, (struct sockaddr *)&ss, &len) == 0 &&
		     net_addr_parse(&ss, len, &src) == 0;
	if (bound)
		net_addr_unmap(&src);
	return sv_udp_receiver(c->sv, a, bound ? &src : NULL);
}

static bool fact_hold(void *data, const struct net_addr *a, bool lasting)
{
	const struct fact_ctx *c = data;
	return sv_hold(c->sv, a, lasting);
}

static bool fact_asks_errors(void *data)
{
	const struct fact_ctx *c = data;
	/* An IPv4 socket has no IPv6 level (ENOPROTOOPT); an IPv6 one has
	 * both, IP_RECVERR for the mapped addresses it sends to. */
	static const int levels[][2] = { { IPPROTO_IP, IP_RECVERR }, { IPPROTO_IPV6, IPV6_RECVERR } };
	for (size_t i = 0; i < ARRAY_SIZE(levels); i++) {
		int on = 0;
		socklen_t len = sizeof(on);
		if (getsockopt(c->fd, levels[i][0], levels[i][1], &on, &len) == 0 && on)
			return true;
	}
	return false;
}

bool sv_is_datagram(int fd)
{
	int type = 0;
	socklen_t len = sizeof(type);
	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_DGRAM;
}

static bool fact_run_socket_file(void *data, dev_t dev, ino_t ino)
{
	const struct fact_ctx *c = data;
	return sv_run_socket_file(c->sv, dev, ino);
}

/* The verdict on q: carried out by the caller when allowed (with what
 * the verdict asks, in ret_v); a refusal reported; an answer of the
 * kernel's given as it would be. */
bool sv_decided(struct supervisor *sv, uint64_t id, const struct sv_query *q, int fd, const char *kind,
		struct sv_verdict *ret_v)
{
	struct fact_ctx ctx = { .sv = sv, .fd = fd, .datagram = q->datagram };
	const struct sv_facts facts = {
		.data = &ctx,
		.host_address = fact_host_address,
		.listener = fact_listener,
		.run_abstract = fact_run_abstract,
		.held_outside = fact_held_outside,
		.run_socket_file = fact_run_socket_file,
		.receiver = fact_receiver,
		.hold = fact_hold,
		.asks_errors = fact_asks_errors,
	};
	struct sv_verdict v = supervise_verdict(q, &facts);
	if (ret_v)
		*ret_v = v;
	if (v.undecided)
		sv->broken = true;
	bool inet = q->addr.family == AF_INET || q->addr.family == AF_INET6;
	/* What is refused, named only then: an allowed call spends nothing
	 * on it. */
	char what[160] = "";
	if (v.outcome == SV_REFUSE)
		net_addr_format(&q->addr, what, sizeof(what));
	if (v.outcome == SV_REFUSE && inet && !v.undecided)
		refuse_inet(sv, id, q->call, q->datagram, &q->addr, what, v.err);
	else if (v.outcome == SV_REFUSE && q->call == SV_CONNECT && q->path_real && q->path_is_socket)
		refuse_socket_file(sv, id, q, what, v.err);
	else if (v.outcome == SV_REFUSE)
		refuse(sv, id, kind, what, v.err);
	else if (v.outcome == SV_ANSWER)
		sv_respond(sv, id, v.err);
	return v.outcome == SV_ALLOW;
}

static bool decided(struct supervisor *sv, uint64_t id, const struct sv_query *q, int fd, const char *kind)
{
	return sv_decided(sv, id, q, fd, kind, NULL);
}

/* Binds the socket to the loopback device: once set, the command cannot
 * change it without CAP_NET_RAW, which it never has. A device the
 * command chose before (an unprivileged stockade cannot replace it) is a
 * refusal. */
static bool on_loopback_device(int fd);

static int to_loopback_device(int fd)
{
	/* Set already (a second bind, which the kernel answers EINVAL):
	 * setting it again would take CAP_NET_RAW. */
	if (on_loopback_device(fd))
		return 0;
	char dev[IFNAMSIZ + 1] = "";
	socklen_t len = sizeof(dev) - 1;
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, &len) < 0 || strcmp(dev, "lo") != 0)
		return SV_REFUSED;
	return 0;
}

static bool on_loopback_device(int fd)
{
	char dev[IFNAMSIZ + 1] = "";
	socklen_t len = sizeof(dev) - 1;
	return getsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, dev, &len) == 0 && strcmp(dev, "lo") == 0;
}

struct sv_query sv_query_of(const struct supervisor *sv, enum sv_call call, const struct net_addr *a)
{
	return (struct sv_query){
		.call = call,
		.net = sv->p->net,
		.policy = sv->p,
		.addr = *a,
	};
}

/* No directory above dir (dir itself included) can be replaced by a
 * process of the run: none of dir's ancestors is writable to it. A path
 * through them reaches what was checked. */
static bool fixed_above(const struct supervisor *sv, const char *dir)
{
	_cleanup_free_ char *up = xstrdup(dir);
	while (!streq(up, "/")) {
		const char *name;
		char *parent = path_parent(up, &name);
		free(up);
		up = parent;
		if (!up || !*up || policy_allows(sv->p, PATH_OP_WRITE, up))
			return false;
	}
	return true;
}

/* A Unix address naming a file: the one kind stockade resolves itself. */
bool sv_names_socket_file(const struct net_addr *a)
{
	return a->family == AF_UNIX && !a->unnamed && !a->abstract;
}

/* A name directly in the host's /tmp that the run made in its own tmp
 * (a socket it bound there, tmp.c): that file, as the run's /tmp holds
 * it, pinned; -1 for any other path. */
static int in_own_tmp(const struct supervisor *sv, pid_t pid, const char *path)
{
	if (!sv->tmp_path)
		return -1;
	_cleanup_free_ char *full = supervise_path_of(pid, AT_FDCWD, path);
	const char *name;
	_cleanup_free_ char *dir = full ? path_parent(full, &name) : NULL;
	if (!dir || !streq(dir, SV_HOST_TMP) || str_empty(name) || strchr(name, '/') || streq(name, ".") ||
	    streq(name, ".."))
		return -1;
	return openat(sv->tmp_fd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
}

int sv_resolve_socket_file(const struct supervisor *sv, pid_t pid, const struct net_addr *a, struct sv_query *q,
			   char *real)
{
	_cleanup_close_ int cwd = a->path[0] == '/' ? -1 : open_cwd(pid);
	/* The run's own /tmp name shadows the host's. */
	int target = in_own_tmp(sv, pid, a->path);
	struct stat st;
	if (target < 0 && a->path[0] != '/' && cwd < 0)
		q->path_err = -cwd;
	else if (target < 0 && (target = openat(a->path[0] == '/' ? AT_FDCWD : cwd, a->path, O_PATH | O_CLOEXEC)) < 0)
		q->path_err = errno;
	else if (sv_fd_path(target, real, 4096) < 0 || fstat(target, &st) < 0)
		q->path_err = EACCES;
	else {
		q->path_real = real;
		q->path_is_socket = S_ISSOCK(st.st_mode);
		q->path_dev = st.st_dev;
		q->path_ino = st.st_ino;
	}
	return target;
}

static void do_connect(struct supervisor *sv, uint64_t id, pid_t pid, int *fd, const struct sockaddr_storage *ss,
		       socklen_t len, const struct net_addr *a)
{
	struct sv_query q = sv_query_of(sv, SV_CONNECT, a);
	bool inet = a->family == AF_INET || a->family == AF_INET6;
	q.datagram = inet && sv_is_datagram(*fd);
	if (!sv_names_socket_file(a)) {
		struct sv_verdict v;
		if (!sv_decided(sv, id, &q, *fd, "connect", &v))
			return;
		if (v.relay || v.resolver) {
			sv_relay_connect(sv, id, fd, ss, len, v.resolver);
			return;
		}
		if (q.datagram) {
			/* A UDP connect never waits. The port it was given
			 * (an autobind) is the run's: replies come there. */
			int err = as_command(sv, connect, *fd, ss, len);
			sv_respond(sv, id, err);
			if (!err)
				sv_remember_bound(sv, *fd);
			return;
		}
		start_connect(sv, id, fd, ss, len, a->family == AF_UNIX && a->abstract, NULL, v.recheck ? a : NULL, NULL);
		return;
	}
	/* A socket file: resolved by stockade where the command would find
	 * it, checked against the policy, and connected through the pinned
	 * descriptor, so that a symlink swapped in after the check redirects
	 * nothing. */
	char real[4096];
	_cleanup_close_ int target = sv_resolve_socket_file(sv, pid, a, &q, real);
	if (!decided(sv, id, &q, *fd, "connect"))
		return;
	struct sockaddr_un pinned = { .sun_family = AF_UNIX };
	char num[21];
	stpcpy(stpcpy(pinned.sun_path, "/proc/self/fd/"), fmt_u64(num, (uint64_t)target));
	start_connect(sv, id, fd, &pinned, sizeof(pinned), true, &target, NULL, NULL);
}

static int perform_bind(struct supervisor *sv, uint64_t id, int fd, const void *addr, socklen_t len)
{
	int err = as_command(sv, bind, fd, addr, len);
	sv_respond(sv, id, err);
	return err;
}

/* bind() to un, relative to the directory dir when it is not -1: stockade
 * works there for the call (it is one thread while the run goes on, and
 * names everything else by absolute paths), so that the name is the bare
 * one the command gave and no path is looked up at all. */
static int bind_named(struct supervisor *sv, int fd, int dir, const struct sockaddr_un *un)
{
	if (dir < 0)
		return as_command(sv, bind, fd, un, sizeof(*un));
	_cleanup_close_ int here = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (here < 0 || fchdir(dir) < 0)
		return SV_REFUSED;
	int err = as_command(sv, bind, fd, un, sizeof(*un));
	if (fchdir(here) < 0)
		sv->broken = true;
	return err;
}

static void do_bind(struct supervisor *sv, uint64_t id, pid_t pid, int fd, const struct sockaddr_storage *ss,
		    socklen_t len, const struct net_addr *a)
{
	struct sv_query q = sv_query_of(sv, SV_BIND, a);
	q.datagram = (a->family == AF_INET || a->family == AF_INET6) && sv_is_datagram(fd);
	if (!sv_names_socket_file(a)) {
		struct sv_verdict v;
		if (!sv_decided(sv, id, &q, fd, "bind", &v))
			return;
		if (v.on_loopback) {
			int err = to_loopback_device(fd);
			if (err) {
				char what[160];
				net_addr_format(a, what, sizeof(what));
				refuse(sv, id, "bind", what, err);
				return;
			}
		}
		/* A port stockade holds for the run is the run's to bind:
		 * let go for the bind, and held again where the run's
		 * socket does not take it. */
		struct sv_hold *released = NULL;
		size_t n_released = q.datagram && a->port ? sv_release_holds(sv, a->port, &released) : 0;
		int err = perform_bind(sv, id, fd, ss, len);
		sv_hold_again(sv, released, n_released);
		if (err)
			return;
		/* Its listener, if it becomes one, is the run's own. */
		if (a->family == AF_INET || a->family == AF_INET6)
			sv_remember_bound(sv, fd);
		else if (a->family == AF_UNIX)
			sv_remember_abstract(sv, fd);
		return;
	}
	/* A socket file: checked where the command would make it, then made
	 * by the kernel for the command itself, so that the socket is named
	 * as the command named it (getsockname, a peer's getpeername, a
	 * chmod of that name: libuv's uv_pipe_chmod), not by a descriptor of
	 * stockade's. The kernel reads the path again, but what it makes is
	 * then checked by the command's own Landlock domain (make-socket
	 * only where the policy lets it write), which the address it finds
	 * cannot escape: a swapped path or symlink makes a socket only where
	 * the command could have made a file anyway. */
	const char *name;
	_cleanup_free_ char *dir = path_parent(a->path, &name);
	if (!dir || !*dir) {
		free(dir);
		dir = xstrdup(".");
	}
	_cleanup_close_ int cwd = dir[0] == '/' ? -1 : open_cwd(pid);
	_cleanup_close_ int parent = -1;
	char real[4096];
	if (dir[0] != '/' && cwd < 0)
		q.path_err = -cwd;
	else if ((parent = openat(dir[0] == '/' ? AT_FDCWD : cwd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		q.path_err = errno;
	else if (sv_fd_path(parent, real, sizeof(real)) < 0)
		q.path_err = EACCES;
	else {
		q.path_real = real;
		q.path_name = name;
	}
	struct sv_verdict v;
	if (!sv_decided(sv, id, &q, fd, "bind", &v))
		return;
	/* A new name directly in the host's /tmp is made in the run's own
	 * tmp (tmp.c): never a listener that programs outside see there. */
	if (v.in_host_tmp && sv->tmp_path) {
		int own = openat(sv->tmp_fd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (own < 0 || strlen(sv->tmp_path) >= sizeof(real)) {
			sv_respond(sv, id, own < 0 ? errno : ENAMETOOLONG);
			if (own >= 0)
				close(own);
			return;
		}
		close(parent);
		parent = own;
		strcpy(real, sv->tmp_path);
	}
	/* The socket's name is what getsockname() gives the command, and
	 * what it chmods (libuv's uv_pipe_chmod), so it is the command's own
	 * where that is safe: a bare name, bound in the pinned directory
	 * itself; an absolute path with no link or dot on the way, where no
	 * process of the run can swap a directory on the way (or the real
	 * path for another spelling of it). The pinned directory's /proc path
	 * otherwise. */
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	char num[21];
	const char *n = fmt_u64(num, (uint64_t)parent);
	_cleanup_free_ char *full = path_join(real, name);
	_cleanup_free_ char *given = a->path[0] == '/' ? path_normalize(a->path) : NULL;
	int in_dir = -1;
	if (a->path[0] != '/' && !strchr(a->path, '/')) {
		stpcpy(un.sun_path, a->path);
		in_dir = parent;
	} else if (fixed_above(sv, real) && strlen(full) < sizeof(un.sun_path))
		stpcpy(un.sun_path, given && streq(given, full) ? a->path : full);
	else if (strlen("/proc/self/fd/") + strlen(n) + 1 + strlen(name) < sizeof(un.sun_path))
		stpcpy(stpcpy(stpcpy(stpcpy(un.sun_path, "/proc/self/fd/"), n), "/"), name);
	else {
		sv_respond(sv, id, ENAMETOOLONG);
		return;
	}
	int err = bind_named(sv, fd, in_dir, &un);
	/* Landlock refuses the command an unlink in /tmp: its own socket
	 * left there by a socket now closed is removed for the bind, as
	 * the unlink before it would have. */
	if (err == EADDRINUSE && v.in_host_tmp && sv_tmp_remove_stale_socket(sv, name))
		err = bind_named(sv, fd, in_dir, &un);
	if (!err) {
		sv_remember_unix(sv, fd, parent, name);
		struct stat st;
		if (v.in_host_tmp && fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			sv_tmp_remember(sv, name, st.st_dev, st.st_ino);
	}
	sv_respond(sv, id, err);
}

static void do_listen(struct supervisor *sv, uint64_t id, int fd, int backlog)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0) {
		sv_respond(sv, id, errno);
		return;
	}
	struct net_addr a;
	if (net_addr_parse(&ss, len, &a) < 0)
		a = (struct net_addr){ .family = AF_UNSPEC };
	struct sv_query q = sv_query_of(sv, SV_LISTEN, &a);
	q.loopback_device = on_loopback_device(fd);
	struct sv_verdict v;
	if (!sv_decided(sv, id, &q, fd, "listen", &v))
		return;
	if (v.on_loopback) {
		int err = to_loopback_device(fd);
		if (err) {
			char what[160];
			net_addr_format(&q.addr, what, sizeof(what));
			refuse(sv, id, "listen", what, err);
			return;
		}
	}
	int r = listen(fd, backlog);
	sv_respond(sv, id, r < 0 ? errno : 0);
	/* Bound by listen() itself: its listener is the run's own. */
	if (r == 0 && v.on_loopback)
		sv_remember_bound(sv, fd);
}

static bool is_send(int nr)
{
	return nr == SYS_sendto || nr == SYS_sendmsg || nr == SYS_sendmmsg;
}

#define IPV6_2292RTHDR_ 5
#define IPV6_2292PKTOPTIONS_ 6

/* setsockopt at the IP, IPv6 and UDP levels (the filter sends only
 * those): a source route is refused, and so is UDP_CORK, which holds a
 * datagram back (sv_refuse_held_back); every other option goes on, its
 * level and name being in registers the command cannot change. */
static void do_setsockopt(struct supervisor *sv, const struct seccomp_notif *req)
{
	int level = (int)req->data.args[1], name = (int)req->data.args[2];
	bool route = (level == IPPROTO_IP && name == IP_OPTIONS) ||
		     (level == IPPROTO_IPV6 && (name == IPV6_RTHDR || name == IPV6_2292RTHDR_ || name == IPV6_2292PKTOPTIONS_));
	bool cork = (level == IPPROTO_UDP || level == IPPROTO_UDPLITE) && name == UDP_CORK;
	if (!route && !cork) {
		sv_continue(sv, req->id);
		return;
	}
	if (route)
		report_denial_ruled(sv->rep, "setsockopt", level == IPPROTO_IP ? "IP_OPTIONS" : "an IPv6 routing header",
				    "EPERM", "a source route sends a SYN or a datagram to a first hop other than the address checked",
				    "built in: the supervisor (landlock backend, network loopback)",
				    ALLOW_NET_FIX);
	else
		sv_refuse_held_back(sv, "setsockopt", "UDP_CORK");
	sv_respond(sv, req->id, EPERM);
}

bool supervisor_handles(const struct supervisor *sv, int nr)
{
	struct sv_process_call c;
	static const uint64_t none[6];
	return nr == SYS_connect || nr == SYS_bind || nr == SYS_listen || is_send(nr) || nr == SYS_setsockopt ||
	       (nr == SYS_recvfrom && sv->p->net == NET_ALLOW) || supervise_process_call(nr, none, &c);
}

void supervisor_handle(struct supervisor *sv, const struct seccomp_notif *req)
{
	int nr = req->data.nr;
	if (nr == SYS_setsockopt) {
		do_setsockopt(sv, req);
		return;
	}
	if (nr == SYS_recvfrom) {
		sv_recvfrom(sv, req);
		return;
	}
	if (nr != SYS_connect && nr != SYS_bind && nr != SYS_listen && !is_send(nr)) {
		char what[96];
		int err = sv_process_call(sv, req, what, sizeof(what));
		if (err) {
			report_denial_ruled(sv->rep, "process", what, strerrorname_np(err) ? strerrorname_np(err) : "?",
					    "a call that names a process goes on only for a process of the run",
					    "built in: the supervisor (landlock backend)",
					    "none: no option allows it (stockade.1, other processes)");
			sv_respond(sv, req->id, err);
		} else
			sv_continue(sv, req->id);
		return;
	}
	const char *kind = nr == SYS_connect ? "connect" : nr == SYS_bind ? "bind" : nr == SYS_listen ? "listen" : "send";
	uint64_t id = req->id;
	pid_t pid = (pid_t)req->pid;

	/* The pidfd first; the notification is checked still valid once
	 * the address is read too: the caller was alive all along, so the
	 * pid was not reused in between and the memory read was its own. */
	bool kept;
	int pidfd = sv_caller_pidfd(sv, pid, &kept);
	if (pidfd < 0) {
		sv_respond(sv, id, SV_REFUSED);
		return;
	}
	struct sockaddr_storage ss = { 0 };
	socklen_t len = 0;
	if (nr == SYS_connect || nr == SYS_bind) {
		/* The address, copied once; every decision is on this copy. */
		len = (socklen_t)req->data.args[2];
		if (len > sizeof(ss)) {
			sv_respond(sv, id, EINVAL);
			return;
		}
		if (!sv_read_mem(pid, req->data.args[1], &ss, len)) {
			sv_respond(sv, id, errno == EFAULT ? EFAULT : SV_REFUSED);
			return;
		}
	}
	if (!sv_id_valid(sv, id))
		return;
	_cleanup_close_ int fd = sv_take_fd(sv, id, pid, kept, (int)req->data.args[0], &pidfd);
	if (fd < 0) {
		if (errno == EBADF) {
			sv_respond(sv, id, EBADF);
			return;
		}
		if (errno == ESRCH) {
			/* The caller is gone: nobody waits for an answer. */
			sv_respond(sv, id, SV_REFUSED);
			return;
		}
		/* Yama, or a kernel without pidfd_getfd: stockade cannot act
		 * for the command, so it refuses. */
		sv->broken = true;
		refuse(sv, id, kind, "(the socket could not be taken)", SV_REFUSED);
		return;
	}
	if (nr == SYS_listen) {
		do_listen(sv, id, fd, (int)req->data.args[1]);
		return;
	}
	if (is_send(nr)) {
		sv_send(sv, req, pidfd, fd);
		return;
	}
	/* As the kernel reads it: an IPv4 socket binds AF_UNSPEC with
	 * INADDR_ANY as 0.0.0.0 (inet_bind), which must meet the rules of
	 * 0.0.0.0 (the loopback device, no squatting). */
	if (nr == SYS_bind && len >= sizeof(struct sockaddr_in) && ss.ss_family == AF_UNSPEC &&
	    ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_ANY)) {
		int family = -1;
		socklen_t fl = sizeof(family);
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &family, &fl) == 0 && family == AF_INET)
			ss.ss_family = AF_INET;
	}
	struct net_addr a;
	int r = net_addr_parse(&ss, len, &a);
	if (r < 0) {
		sv_respond(sv, id, -r);
		return;
	}
	if (nr == SYS_connect)
		do_connect(sv, id, pid, &fd, &ss, len, &a);
	else
		do_bind(sv, id, pid, fd, &ss, len, &a);
}

size_t supervisor_pollfds(const struct supervisor *sv, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sv->n_pending && n < max; i++)
		fds[n++] = (struct pollfd){ .fd = sv->pending[i].fd, .events = POLLOUT };
	n += sv_send_pollfds(sv, fds + n, max - n);
	return n + sv_recv_pollfds(sv, fds + n, max - n);
}

/* A pending TCP connect whose handshake is made (or has failed): with the
 * listener the SYN waited for, unless the kernel sent it again meanwhile
 * to one that has the port now. A listener outside the run, or none any
 * more (one that accepted the connection and closed, as a restarting
 * service does), cannot be told from one outside: refused. */
static void finish_handshake(struct supervisor *sv, struct pending *pd)
{
	int err = 0;
	socklen_t el = sizeof(err);
	if (getsockopt(pd->fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
		err = errno;
	struct net_addr d;
	if (err == 0 && pd->deadline && !pd->relayed && net_addr_parse(&pd->addr, pd->len, &d) == 0) {
		net_addr_unmap(&d);
		if (sv_foreign_listener(sv, &d) <= 0) {
			refuse_handshake(sv, pd, false);
			return;
		}
	}
	finish(sv, pd, err);
}

/* One pending connect, each round, with what poll said of it (0: not
 * given to poll, or nothing): true when it is answered. */
static bool pending_ready(struct supervisor *sv, struct pending *pd, short revents, unsigned long long *now)
{
	if (pd->retry_unix) {
		/* An abstract name is looked up again at each try: the run's
		 * socket that had it may have closed since the check, and
		 * another program's bound it. (A socket file is tried through
		 * its pinned descriptor: the same.) */
		struct net_addr na;
		int err;
		if (pd->pinned < 0 && net_addr_parse(&pd->addr, pd->len, &na) == 0 && na.abstract &&
		    !sv_run_abstract(sv, &na, sv_abstract_owner(&na)))
			err = ECONNREFUSED;
		else
			err = as_command(sv, connect, pd->fd, &pd->addr, pd->len);
		if (err == EAGAIN && sv_id_valid(sv, pd->id))
			return false;	/* still no room: on the next round */
		finish(sv, pd, err);
		return true;
	}
	if (!revents) {
		if (!pd->deadline || (*now ? *now : (*now = now_usec())) < pd->deadline)
			return false;
		/* Its time is up: made meanwhile (poll was not given it, or
		 * it was made since), or not, and refused. */
		if (net_connect_outcome(pd->fd) == EINPROGRESS) {
			refuse_handshake(sv, pd, true);
			return true;
		}
	}
	finish_handshake(sv, pd);
	return true;
}

void supervisor_ready(struct supervisor *sv, const struct pollfd *fds, size_t n)
{
	/* The connects' descriptors come first, in order, then the sends'. */
	size_t n_connects = sv->n_pending < n ? sv->n_pending : n;
	sv_send_ready(sv, fds + n_connects, n - n_connects);
	if (sv->n_recvs)
		sv_recv_ready(sv, fds + n_connects, n - n_connects);
	/* Every one, given to poll or not (it takes so many): a handshake
	 * left past its deadline would be sent again by the kernel. From the
	 * last, so that an answered one's place takes one looked at already
	 * and fds[k] is still pending[k]'s. */
	unsigned long long now = 0;
	for (size_t k = sv->n_pending; k-- > 0;) {
		short revents = k < n_connects && fds[k].fd == sv->pending[k].fd ? fds[k].revents : 0;
		if (pending_ready(sv, &sv->pending[k], revents, &now))
			sv->pending[k] = sv->pending[--sv->n_pending];
	}
}

void supervisor_drain(struct supervisor *sv)
{
	for (size_t i = 0; i < sv->n_pending; i++)
		finish(sv, &sv->pending[i], EINTR);
	sv->n_pending = 0;
	sv_tmp_remove_made(sv);
	sv_send_drain(sv);
	sv_relay_free(sv);
}

bool supervisor_whole_run(const struct supervisor *sv)
{
	return !sv->broken;
}

void supervisor_set_root(struct supervisor *sv, pid_t root)
{
	sv->root = root;
}

struct supervisor *supervisor_new(const struct policy *p, int listener, struct report *rep)
{
	struct supervisor *sv = xcalloc(1, sizeof(*sv));
	sv->p = p;
	sv->listener = listener;
	sv->rep = rep;
	sv->record_fd = -1;
	sv->root = getpid();
	sv->tmp_fd = open(SV_HOST_TMP, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	sv->pty_watch = -1;
	/* The host's addresses and the sock_diag socket come at the first
	 * connect or bind that needs them. */
	cap_t own = cap_get_proc();
	cap_flag_value_t dac = CAP_CLEAR;
	if (own && cap_get_flag(own, CAP_DAC_OVERRIDE, CAP_EFFECTIVE, &dac) == 0 && dac == CAP_SET) {
		sv->caps_own = own;
		sv->caps_acting = cap_dup(own);
		if (!sv->caps_acting || cap_clear_flag(sv->caps_acting, CAP_EFFECTIVE) < 0) {
			/* Without a set to act with, stockade would act as root:
			 * it does not act at all. */
			cap_free(sv->caps_acting);
			sv->caps_acting = NULL;
			sv->broken = true;
		}
		own = NULL;
	}
	cap_free(own);
	return sv;
}

void supervisor_free(struct supervisor *sv)
{
	if (!sv)
		return;
	for (size_t i = 0; i < sv->n_pending; i++) {
		close(sv->pending[i].fd);
		if (sv->pending[i].pinned >= 0)
			close(sv->pending[i].pinned);
	}
	free(sv->pending);
	sv_send_drain(sv);
	sv_relay_free(sv);
	free(sv->sends);
	free(sv->send_buf);
	if (sv->diag)
		mnl_socket_close(sv->diag);
	free(sv->diag_buf);
	free(sv->host);
	free(sv->bound);
	free(sv->reuseport);
	cap_free(sv->caps_acting);
	cap_free(sv->caps_own);
	sv_pidfds_free(sv);
	free(sv->abstracts);
	free(sv->unix_bound);
	sv_holds_free(sv);
	sv_ptys_free(sv);
	sv_files_free(sv);
	sv_tmp_remove_made(sv);
	if (sv->tmp_fd >= 0)
		close(sv->tmp_fd);
	free(sv->tmp_path);
	free(sv);
}

void supervise_describe(enum net_mode net, bool pidfd_getfd, struct report *rep)
{
	report_enforced(rep, "unix sockets: the supervisor connects only to socket files a socket of the run is bound to, those --connect unix:PATH names, and abstract names the run bound");
	report_enforced(rep, "file modes, owners, extended attributes and times (chmod, chown, setxattr, utimes), which Landlock has no right for: "
			     "the supervisor changes them only where the run may write, never on a device node");
	report_enforced(rep, "the host's /tmp: Landlock grants the command nothing there (no read, write, unlink or listing of your entries); "
			     "the supervisor makes the tmpfile() and mkstemp() files and the sockets the run names directly in /tmp in the run's own tmp "
			     "(its TMPDIR), which no program outside the run sees and which goes with the run; a connect to /tmp/NAME reaches the run's own socket NAME");
	report_gap(rep, "the host's /tmp",
		   "the names and metadata (stat) of your entries there are visible to the run");
	if (net == NET_ALLOW) {
		report_enforced(rep, "network allow: the supervisor allows local addresses as with loopback; a TCP connect off this host to an allowed port is made to stockade's relay on loopback, which decides it; every datagram to port 53 goes to stockade's resolver, and a reply of its own is given the address the query was sent to (recvfrom with an address, on those sockets alone); every other datagram off this host is refused");
		report_enforced(rep, "udp loopback: a datagram (sendto or sendmsg with an address, or a connect) reaches only a port a socket of the run has bound, on this host; source routes and datagrams held back (UDP_CORK, MSG_MORE) refused");
	}
	if (net == NET_LOOPBACK) {
		report_enforced(rep, "network loopback: the supervisor allows local addresses only, to the run's own listeners or to ports nobody listens on; servers listen on loopback only (0.0.0.0 and :: bound to the loopback device)");
		report_enforced(rep, "udp loopback: a datagram (sendto or sendmsg with an address, or a connect) reaches only a port a socket of the run has bound, on this host; the supervisor sends it itself; to a port nobody has bound, it holds the port for the run first (binds it, with a socket that takes nothing) and the kernel answers as outside, below 1024 it answers as sent and sends nothing; source routes and datagrams held back (UDP_CORK, MSG_MORE) refused");
	}
	if (net != NET_OFF)
		report_enforced(rep, "no squatting: a bind on an address and port a socket outside the run listens on is refused (EADDRINUSE), SO_REUSEPORT or not");
	if (!pidfd_getfd)
		report_gap(rep, "network and unix sockets",
			   "Yama's ptrace_scope refuses pidfd_getfd here: the supervisor cannot act for the command, so it refuses every connect and bind");
	report_enforced(rep, "other processes: a limit, priority, scheduler, affinity, I/O priority or pidfd of a process outside the run (stockade included) is refused; of every process of the user, refused");
	report_enforced(rep, "ptys: a program makes its own from /dev/ptmx, the supervisor opening each slave (TIOCGPTPEER); no /dev/pts name is granted, so the user's other terminals stay out of reach");
	report_gap(rep, "ptys",
		   "the host's devpts: the run may take as many ptys as kernel.pty.max allows, which your terminals share, until it ends");
	static const char *const decides[] = { "connect", "bind", "unix socket paths", "calls naming a process",
					       "pty slaves" };
	for (size_t i = 0; i < ARRAY_SIZE(decides); i++)
		if (!strv_contains(rep->supervises, decides[i]))
			strv_add(&rep->supervises, decides[i]);
	static const char *const loopback[] = { "listen", "IP options" };
	for (size_t i = 0; (net == NET_LOOPBACK || net == NET_ALLOW) && i < ARRAY_SIZE(loopback); i++)
		if (!strv_contains(rep->supervises, loopback[i]))
			strv_add(&rep->supervises, loopback[i]);
	if (net != NET_ON && !strv_contains(rep->supervises, "sends with an address"))
		strv_add(&rep->supervises, "sends with an address");
	if (net == NET_ALLOW && !strv_contains(rep->supervises, "receives with an address"))
		strv_add(&rep->supervises, "receives with an address");
	if (net == NET_ON)
		report_gap(rep, "unix datagrams",
			   "with --net on, a send with an address goes to the kernel unchecked (checking it would put every UDP datagram through the supervisor): a Unix datagram socketpair can send to a socket file of the host's");
}
