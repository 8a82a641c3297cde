/* The sends: sendto with an address, sendmsg and sendmmsg, on the
 * landlock backend with loopback. A datagram's address travels with each
 * send, behind a pointer the filter cannot read and a second thread can
 * rewrite; and the descriptor the call names can be swapped for another
 * socket (dup2) between any check and the kernel's. So nothing here is
 * answered with CONTINUE: stockade copies the message once (address,
 * data, control), decides on its copy, and sends it itself on its own
 * copy of the socket (pidfd_getfd), answering with the count. A stream
 * socket's send goes the same way (its address is ignored or refused by
 * the kernel; its descriptors, SCM_RIGHTS, are taken and passed on). */
#include "supervise/internal.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "lib/dns.h"
#include "lib/util.h"
#include "policy/allow.h"

/* The kernel's own limits: SCM_MAX_FD descriptors in one message, and
 * what fits a control buffer stockade reads (the kernel allows
 * optmem_max, 20 KiB or more; no message a program sends needs more). */
#define FDS_MAX 253
#define CONTROL_MAX 4096
#ifndef UIO_MAXIOV
#define UIO_MAXIOV 1024
#endif
#define MMSG_MAX 1024

struct outgoing {
	struct sockaddr_storage name;
	socklen_t namelen;
	/* read as cmsghdrs: aligned as they are */
	char control[CONTROL_MAX] __attribute__((aligned(__alignof__(struct cmsghdr))));
	size_t controllen;
	int fds[FDS_MAX + 1];	/* ours (and a pinned socket file): closed once sent */
	size_t n_fds;
	size_t len;		/* bytes of data, in sv->send_buf */
};

static void outgoing_close(struct outgoing *o)
{
	for (size_t i = 0; i < o->n_fds; i++)
		close(o->fds[i]);
	o->n_fds = 0;
}

static int read_remote(pid_t pid, void *dst, uint64_t src, size_t len)
{
	return sv_read_mem(pid, src, dst, len) ? 0 : EFAULT;
}

/* The data the iovecs name, into sv->send_buf: a stream's send may be
 * cut short (a short write, which stream callers loop on); a message
 * that does not fit is too long, as the kernel would say of most. */
static int read_data(struct supervisor *sv, pid_t pid, uint64_t iov_at, size_t n_iov, bool stream, size_t *ret_len)
{
	if (n_iov > UIO_MAXIOV)
		return EMSGSIZE;
	_cleanup_free_ struct iovec *riov = xcalloc(n_iov ? n_iov : 1, sizeof(*riov));
	int err = read_remote(pid, riov, iov_at, n_iov * sizeof(*riov));
	if (err)
		return err;
	size_t total = 0, used = 0;
	for (; used < n_iov && total < SEND_MAX; used++) {
		size_t room = SEND_MAX - total;
		if (riov[used].iov_len > room) {
			if (!stream)
				return EMSGSIZE;
			riov[used].iov_len = room;
		}
		total += riov[used].iov_len;
	}
	for (size_t i = used; i < n_iov; i++)
		if (riov[i].iov_len && !stream)
			return EMSGSIZE;
	if (!sv->send_buf)
		sv->send_buf = xmalloc(SEND_MAX);
	*ret_len = total;
	if (total == 0)
		return 0;
	struct iovec local = { .iov_base = sv->send_buf, .iov_len = total };
	ssize_t n = process_vm_readv(pid, &local, 1, riov, used, 0);
	return n == (ssize_t)total ? 0 : EFAULT;
}

/* The control messages: descriptors passed (SCM_RIGHTS) become stockade's
 * own copies of them; credentials (SCM_CREDENTIALS) cannot be claimed for
 * another process; source routes (IP_RETOPTS, IPv6 routing headers) send
 * a datagram to a first hop other than its address. */
static int take_control(int pidfd, struct outgoing *o, const char **ret_why)
{
	struct msghdr m = { .msg_control = o->control, .msg_controllen = o->controllen };
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_len < CMSG_LEN(0))
			return EINVAL;
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			int *v = (int *)CMSG_DATA(c);
			for (size_t i = 0; i < n; i++) {
				if (o->n_fds == FDS_MAX)
					return EINVAL;
				int theirs;
				memcpy(&theirs, &v[i], sizeof(theirs));
				int mine = (int)syscall(SYS_pidfd_getfd, pidfd, theirs, 0);
				if (mine < 0)
					return errno == EBADF ? EBADF : SV_REFUSED;
				o->fds[o->n_fds++] = mine;
				memcpy(&v[i], &mine, sizeof(mine));
			}
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS) {
			*ret_why = "credentials (SCM_CREDENTIALS) cannot be sent on the command's behalf";
			return EPERM;
		} else if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RETOPTS) ||
			   (c->cmsg_level == IPPROTO_IPV6 && (c->cmsg_type == IPV6_RTHDR || c->cmsg_type == 5 /* IPV6_2292RTHDR */))) {
			*ret_why = "a source route sends a datagram to a first hop other than its address";
			return EPERM;
		}
	}
	return 0;
}

/* One message of the command's, copied: name, control and data. */
static int take_message(struct supervisor *sv, pid_t pid, int pidfd, const struct msghdr *m, bool stream,
			struct outgoing *o, const char **ret_why)
{
	o->namelen = 0;
	o->controllen = 0;
	o->n_fds = 0;
	o->len = 0;
	if (m->msg_name && m->msg_namelen) {
		/* As the kernel: a longer name is cut to a sockaddr_storage. */
		o->namelen = m->msg_namelen > sizeof(o->name) ? sizeof(o->name) : m->msg_namelen;
		int err = read_remote(pid, &o->name, (uint64_t)(uintptr_t)m->msg_name, o->namelen);
		if (err)
			return err;
	}
	if (m->msg_control && m->msg_controllen) {
		if (m->msg_controllen > CONTROL_MAX)
			return ENOBUFS;
		o->controllen = m->msg_controllen;
		int err = read_remote(pid, o->control, (uint64_t)(uintptr_t)m->msg_control, o->controllen);
		if (!err)
			err = take_control(pidfd, o, ret_why);
		if (err)
			return err;
	}
	return read_data(sv, pid, (uint64_t)(uintptr_t)m->msg_iov, m->msg_iovlen, stream, &o->len);
}

static int socket_int(int fd, int opt)
{
	int v = -1;
	socklen_t len = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, opt, &v, &len) == 0 ? v : -1;
}

/* A name as the kernel reads it for this socket's family: a UDP socket
 * of IPv4 takes AF_UNSPEC for AF_INET; one of IPv6 takes AF_UNSPEC for
 * no name at all (udp_sendmsg, udpv6_sendmsg). */
static void kernel_reading(int family, struct outgoing *o)
{
	if (o->namelen < sizeof(sa_family_t) || o->name.ss_family != AF_UNSPEC)
		return;
	if (family == AF_INET)
		o->name.ss_family = AF_INET;
	else if (family == AF_INET6)
		o->namelen = 0;
}

/* A query to a name server, refused: the name it asked about goes in the
 * report too, as the namespace jail's responder records it. */
static void name_refused(struct supervisor *sv, const struct outgoing *o, int err)
{
	char name[256];
	if (!dns_question_name(sv->send_buf, o->len, name, sizeof(name)))
		return;
	_cleanup_free_ char *source = source_text(&sv->p->net_source);
	bool full = report_records_full(sv->rep, "name", name);
	/* The narrowest grant that answers it, as the namespace jail's
	 * responder says: that one name (network allow), else the network. */
	char norm[ALLOW_NAME_MAX + 1];
	_cleanup_free_ char *fix = !full && allow_name_normalize(name, norm) == 0
					   ? allow_name_fix(norm, 0)
					   : xstrdup(ALLOW_NET_FIX);
	report_denial_ruled(sv->rep, "name", full ? "(further names)" : name,
			    strerrorname_np(err) ? strerrorname_np(err) : "?",
			    "network loopback: no name server is reachable (a lookup is a way out)", source, fix);
}

/* A datagram held back, by MSG_MORE with its address or by UDP_CORK
 * (do_setsockopt): the kernel keeps it, with the address checked now,
 * and sends it with the next send() that names no address, which stays
 * in the kernel, or at the uncork: to whatever has the port by then (a
 * program outside the run that bound it since the run's socket
 * closed). Refused, and named. */
void sv_refuse_held_back(struct supervisor *sv, const char *kind, const char *what)
{
	report_denial_ruled(sv->rep, kind, what, "EPERM",
			    "a datagram held back leaves later, without its address checked again, to whatever has the port then",
			    "built in: the supervisor (landlock backend, network loopback)",
			    ALLOW_NET_FIX);
}

/* Decides on the copy of a message: 0 to send it (its name perhaps
 * replaced by a pinned path), SEND_LOST to count it sent and send
 * nothing (struct sv_verdict's lost), the errno to answer with, or -1
 * when it was answered. */
#define SEND_LOST (-2)
static int decide(struct supervisor *sv, uint64_t id, pid_t pid, int fd, int type, int family, int flags,
		  struct outgoing *o)
{
	kernel_reading(family, o);
	/* No name: the socket's peer, checked when it connected. A stream
	 * or seqpacket socket's name is ignored (TCP, Unix seqpacket) or
	 * refused (Unix streams) by the kernel: sent as given, on stockade's
	 * copy of that very socket. */
	if (o->namelen == 0 || type != SOCK_DGRAM || (family != AF_INET && family != AF_INET6 && family != AF_UNIX))
		return 0;
	struct net_addr a;
	int r = net_addr_parse(&o->name, o->namelen, &a);
	if (r < 0)
		return -r;
	struct sv_query q = sv_query_of(sv, SV_SEND, &a);
	q.datagram = (a.family == AF_INET || a.family == AF_INET6) && type == SOCK_DGRAM;
	/* Larger than a UDP datagram can be: what the kernel answers first,
	 * wherever it was going (libuv's udp_dgram_too_big). */
	if (q.datagram && o->len > 65535 - 8 - (family == AF_INET6 ? 0 : 20))
		return EMSGSIZE;
	if (q.datagram && (flags & MSG_MORE)) {
		char where[160];
		net_addr_format(&a, where, sizeof(where));
		_cleanup_free_ char *what = xstrcat3(where, " with ", "MSG_MORE");
		sv_refuse_held_back(sv, "send", what);
		return EPERM;
	}
	struct sv_verdict v;
	if (!sv_names_socket_file(&a)) {
		if (sv_decided(sv, id, &q, fd, "send", &v)) {
			/* network allow: a query goes to stockade's resolver. */
			if (v.resolver && !sv_relay_datagram(sv, fd, &o->name, &o->namelen))
				return SV_REFUSED;
			return v.lost ? SEND_LOST : 0;
		}
		if (q.datagram && a.port == 53 && v.outcome == SV_REFUSE)
			name_refused(sv, o, v.err);
		return -1;
	}
	/* A socket file: resolved where the command would find it, sent to
	 * through the pinned descriptor. */
	char real[4096];
	int target = sv_resolve_socket_file(sv, pid, &a, &q, real);
	if (!sv_decided(sv, id, &q, fd, "send", NULL)) {
		if (target >= 0)
			close(target);
		return -1;
	}
	struct sockaddr_un *pinned = (struct sockaddr_un *)&o->name;
	char num[21];
	memset(pinned, 0, sizeof(*pinned));
	pinned->sun_family = AF_UNIX;
	stpcpy(stpcpy(pinned->sun_path, "/proc/self/fd/"), fmt_u64(num, (uint64_t)target));
	o->namelen = sizeof(*pinned);
	/* Kept open with the message: a later descriptor of that number
	 * must not take its place. */
	o->fds[o->n_fds++] = target;
	return 0;
}

/* Sends the copy on stockade's copy of the socket, never waiting and
 * never taking a SIGPIPE itself. The count, or -errno. */
static ssize_t send_copy(struct supervisor *sv, int fd, struct outgoing *o, int flags)
{
	struct iovec iov = { .iov_base = sv->send_buf, .iov_len = o->len };
	struct msghdr m = {
		.msg_name = o->namelen ? &o->name : NULL,
		.msg_namelen = o->namelen,
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = o->controllen ? o->control : NULL,
		.msg_controllen = o->controllen,
	};
	ssize_t n = sendmsg(fd, &m, flags | MSG_DONTWAIT | MSG_NOSIGNAL);
	return n < 0 ? -errno : n;
}

/* EPIPE on a stream: the command gets the SIGPIPE its own send would
 * have raised, unless it asked for none. */
static void broken_pipe(int pidfd, int flags)
{
	if (!(flags & MSG_NOSIGNAL))
		(void)syscall(SYS_pidfd_send_signal, pidfd, SIGPIPE, NULL, 0);
}

static bool blocking(int fd, int flags)
{
	int fl = fcntl(fd, F_GETFL);
	return !(flags & MSG_DONTWAIT) && fl >= 0 && !(fl & O_NONBLOCK);
}

/* A blocking socket with no room: the message waits in stockade until
 * the socket can take it; the command waits for the answer. */
static void wait_for_room(struct supervisor *sv, uint64_t id, pid_t pid, int fd, struct outgoing *o, int flags,
			  uint64_t msg_len_at, bool count_messages)
{
	int keep = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (keep < 0) {
		outgoing_close(o);
		sv_respond(sv, id, EAGAIN);
		return;
	}
	sv->sends = xgrow(sv->sends, sv->n_sends, sizeof(*sv->sends));
	struct pending_send *ps = &sv->sends[sv->n_sends++];
	*ps = (struct pending_send){ .id = id, .fd = keep, .pid = pid, .flags = flags & ~MSG_NOSIGNAL,
				     .msg_len_at = msg_len_at, .count_messages = count_messages,
				     .nosignal = flags & MSG_NOSIGNAL };
	ps->iov = (struct iovec){ .iov_base = xmalloc(o->len ? o->len : 1), .iov_len = o->len };
	memcpy(ps->iov.iov_base, sv->send_buf, o->len);
	ps->msg.msg_iov = &ps->iov;
	ps->msg.msg_iovlen = 1;
	if (o->namelen) {
		ps->msg.msg_name = xmalloc(o->namelen);
		memcpy(ps->msg.msg_name, &o->name, o->namelen);
		ps->msg.msg_namelen = o->namelen;
	}
	if (o->controllen) {
		ps->msg.msg_control = xmalloc(o->controllen);
		memcpy(ps->msg.msg_control, o->control, o->controllen);
		ps->msg.msg_controllen = o->controllen;
	}
	ps->fds = o->n_fds ? xmalloc(o->n_fds * sizeof(int)) : NULL;
	if (o->n_fds)
		memcpy(ps->fds, o->fds, o->n_fds * sizeof(int));
	ps->n_fds = o->n_fds;
	o->n_fds = 0;	/* the pending send owns them now */
}

static void pending_free(struct pending_send *ps)
{
	close(ps->fd);
	for (size_t i = 0; i < ps->n_fds; i++)
		close(ps->fds[i]);
	free(ps->fds);
	free(ps->iov.iov_base);
	free(ps->msg.msg_name);
	free(ps->msg.msg_control);
}

static void write_msg_len(pid_t pid, uint64_t at, unsigned len)
{
	struct iovec local = { .iov_base = &len, .iov_len = sizeof(len) };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)at, .iov_len = sizeof(len) };
	(void)process_vm_writev(pid, &local, 1, &remote, 1, 0);
}

/* The command's struct mmsghdr, as this architecture lays it out. */
struct remote_mmsghdr {
	struct msghdr hdr;
	unsigned len;
};

void sv_send(struct supervisor *sv, const struct seccomp_notif *req, int pidfd, int fd)
{
	uint64_t id = req->id;
	pid_t pid = (pid_t)req->pid;
	int nr = req->data.nr;
	/* The socket's kind, once for every message of the call. */
	int type = socket_int(fd, SO_TYPE), family = socket_int(fd, SO_DOMAIN);
	bool stream = type == SOCK_STREAM;
	_cleanup_free_ struct outgoing *o = xcalloc(1, sizeof(*o));
	_cleanup_free_ struct remote_mmsghdr *mm = NULL;
	size_t n_msgs = 1;
	int flags;
	const char *why = NULL;
	int err = 0;

	if (nr == SYS_sendto) {
		flags = (int)req->data.args[3];
		struct iovec iov = { .iov_base = (void *)(uintptr_t)req->data.args[1], .iov_len = req->data.args[2] };
		struct msghdr m = { .msg_name = (void *)(uintptr_t)req->data.args[4],
				    .msg_namelen = (socklen_t)req->data.args[5] };
		/* sendto's address, unlike sendmsg's, must fit. */
		if (m.msg_name && req->data.args[5] > sizeof(struct sockaddr_storage)) {
			sv_respond(sv, id, EINVAL);
			return;
		}
		/* One iovec of the command's: read as data through a local
		 * copy of it. */
		size_t len = iov.iov_len;
		if (len > SEND_MAX && !stream) {
			sv_respond(sv, id, EMSGSIZE);
			return;
		}
		if (len > SEND_MAX)
			len = SEND_MAX;
		if (!sv->send_buf)
			sv->send_buf = xmalloc(SEND_MAX);
		if (m.msg_name && m.msg_namelen)
			err = read_remote(pid, &o->name, (uint64_t)(uintptr_t)m.msg_name, m.msg_namelen);
		o->namelen = m.msg_name ? m.msg_namelen : 0;
		if (!err)
			err = read_remote(pid, sv->send_buf, (uint64_t)(uintptr_t)iov.iov_base, len);
		o->len = len;
	} else if (nr == SYS_sendmsg) {
		flags = (int)req->data.args[2];
		struct msghdr m;
		err = read_remote(pid, &m, req->data.args[1], sizeof(m));
		if (!err)
			err = take_message(sv, pid, pidfd, &m, stream, o, &why);
	} else {
		flags = (int)req->data.args[3];
		n_msgs = (size_t)(unsigned)req->data.args[2];
		if (n_msgs > MMSG_MAX)
			n_msgs = MMSG_MAX;
		if (n_msgs == 0) {
			sv_respond_value(sv, id, 0);
			return;
		}
		mm = xcalloc(n_msgs, sizeof(*mm));
		err = read_remote(pid, mm, req->data.args[1], n_msgs * sizeof(*mm));
	}
	/* TCP Fast Open connects inside a send (the filter refuses it where
	 * it can read the flags; these calls all come here). */
	if (flags & MSG_FASTOPEN) {
		outgoing_close(o);
		report_denial_ruled(sv->rep, "syscall", nr == SYS_sendto ? "sendto" : nr == SYS_sendmsg ? "sendmsg" : "sendmmsg",
				    "EPERM", "refused by the system call table: MSG_FASTOPEN connects without connect()",
				    "built in: the seccomp allowlist", ALLOW_NET_FIX);
		sv_respond(sv, id, EPERM);
		return;
	}
	/* Everything read comes from the caller's own memory: it was alive
	 * throughout, its notification still waiting. */
	if (!sv_id_valid(sv, id)) {
		outgoing_close(o);
		return;
	}
	if (err) {
		outgoing_close(o);
		if (why)
			sv_refuse(sv, id, "send", why, err);
		else
			sv_respond(sv, id, err);
		return;
	}

	size_t sent = 0;
	for (size_t i = 0; i < n_msgs; i++) {
		if (mm && (err = take_message(sv, pid, pidfd, &mm[i].hdr, stream, o, &why)) != 0)
			break;
		/* Read from the caller's memory while it still waits (its pid
		 * not reused since). */
		if (mm && !sv_id_valid(sv, id)) {
			outgoing_close(o);
			return;
		}
		/* Once some were sent, a refusal that decide() answers
		 * gives sendmmsg their count (respond(), supervise.c). */
		sv->mmsg_id = id;
		sv->mmsg_sent = (int64_t)sent;
		int d = decide(sv, id, pid, fd, type, family, flags, o);
		sv->mmsg_sent = 0;
		if (d == -1) {
			/* answered and reported already: a refused message
			 * ends the call, sendmmsg's earlier ones sent and
			 * counted */
			outgoing_close(o);
			return;
		}
		if (d > 0) {
			err = d;
			break;
		}
		ssize_t n = d == SEND_LOST ? (ssize_t)o->len : send_copy(sv, fd, o, flags);
		if (n == -EAGAIN && sent == 0 && blocking(fd, flags)) {
			wait_for_room(sv, id, pid, fd, o, flags,
				      mm ? req->data.args[1] + offsetof(struct remote_mmsghdr, len) : 0, mm != NULL);
			return;
		}
		outgoing_close(o);
		if (n < 0) {
			err = (int)-n;
			if (err == EPIPE)
				broken_pipe(pidfd, flags);
			break;
		}
		/* A UDP socket that sent is bound now (an autobind, or its own
		 * bind): replies to it are to the run. */
		if (type == SOCK_DGRAM && d != SEND_LOST)
			sv_remember_bound(sv, fd);
		if (!mm) {
			sv_respond_value(sv, id, n);
			return;
		}
		write_msg_len(pid, req->data.args[1] + i * sizeof(*mm) + offsetof(struct remote_mmsghdr, len),
			      (unsigned)n);
		sent++;
	}
	outgoing_close(o);
	if (sent)
		sv_respond_value(sv, id, (int64_t)sent);
	else if (why)
		sv_refuse(sv, id, "send", why, err);
	else
		sv_respond(sv, id, err);
}

size_t sv_send_pollfds(const struct supervisor *sv, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sv->n_sends && n < max; i++)
		fds[n++] = (struct pollfd){ .fd = sv->sends[i].fd, .events = POLLOUT };
	return n;
}

void sv_send_ready(struct supervisor *sv, const struct pollfd *fds, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (!fds[i].revents)
			continue;
		size_t k;
		for (k = 0; k < sv->n_sends && sv->sends[k].fd != fds[i].fd; k++)
			;
		if (k == sv->n_sends)
			continue;
		struct pending_send *ps = &sv->sends[k];
		/* A caller gone meanwhile (killed while it waited) is owed
		 * nothing, and its thread id, which the SIGPIPE and the
		 * count below go to, may be another process's by now. */
		if (!sv_id_valid(sv, ps->id)) {
			pending_free(ps);
			sv->sends[k] = sv->sends[--sv->n_sends];
			continue;
		}
		ssize_t r = sendmsg(ps->fd, &ps->msg, ps->flags | MSG_DONTWAIT | MSG_NOSIGNAL);
		if (r < 0 && errno == EAGAIN)
			continue;	/* taken by another writer: the next round */
		if (r < 0) {
			int e = errno;
			if (e == EPIPE && !ps->nosignal)
				(void)kill(ps->pid, SIGPIPE);
			sv_respond(sv, ps->id, e);
		} else {
			if (ps->msg_len_at)
				write_msg_len(ps->pid, ps->msg_len_at, (unsigned)r);
			sv_respond_value(sv, ps->id, ps->count_messages ? 1 : r);
		}
		pending_free(ps);
		sv->sends[k] = sv->sends[--sv->n_sends];
	}
}

void sv_send_drain(struct supervisor *sv)
{
	for (size_t i = 0; i < sv->n_sends; i++) {
		sv_respond(sv, sv->sends[i].id, EINTR);
		pending_free(&sv->sends[i]);
	}
	sv->n_sends = 0;
}
