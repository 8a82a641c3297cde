/* Network allow on the landlock backend: what the supervisor carries to
 * stockade's relay (struct sv_relay). A TCP connect off this host to an
 * allowed port is made, on stockade's copy of the command's socket, to
 * the relay's listener on loopback, which is told where the command
 * asked to go; the relay reads the name the connection carries and
 * decides. A datagram to port 53 goes to stockade's resolver socket
 * instead of the name server the run's resolv.conf names; the C
 * libraries take an answer only from the server they asked (glibc's
 * res_ourserver_p, musl, c-ares compare the address a reply came from),
 * so a receive that asks where a datagram came from (recvfrom with an
 * address: the filter sends those alone, with allow) is made by the
 * supervisor on such a socket, and a reply of stockade's given the
 * address the command sent its query to. Any other receive goes on to
 * the kernel as made. */
#include "supervise/internal.h"

#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "lib/util.h"

/* The sockets whose queries went to stockade's resolver, by inode, with
 * the address the command gave: at most this many (the oldest goes). */
#define SV_RESOLVED_MAX 256
/* The most a supervised receive reads: a DNS message's limit. */
#define SV_RECV_MAX 65536

void supervisor_set_relay(struct supervisor *sv, const struct sv_relay *relay)
{
	sv->relay = *relay;
	sv->has_relay = true;
}

static int socket_family(int fd)
{
	int family = AF_UNSPEC;
	socklen_t len = sizeof(family);
	return getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &family, &len) == 0 ? family : AF_UNSPEC;
}

/* The relay's socket (listener, or resolver) for a socket of family; an
 * IPv6 socket takes the IPv4 one's mapped form where the host has no ::1. */
static int relay_address(struct supervisor *sv, bool resolver, int family, struct sockaddr_storage *ret,
			 socklen_t *ret_len)
{
	if (!sv->has_relay)
		return -ENOSYS;
	int (*get)(void *, int, struct sockaddr_storage *, socklen_t *) = resolver ? sv->relay.resolver : sv->relay.listener;
	int e = get(sv->relay.data, family, ret, ret_len);
	if (e == 0 || family != AF_INET6)
		return e;
	struct sockaddr_storage v4;
	socklen_t v4_len;
	if ((e = get(sv->relay.data, AF_INET, &v4, &v4_len)) < 0)
		return e;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ret;
	*in6 = (struct sockaddr_in6){ .sin6_family = AF_INET6, .sin6_port = ((struct sockaddr_in *)&v4)->sin_port };
	in6->sin6_addr.s6_addr[10] = in6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(in6->sin6_addr.s6_addr + 12, &((struct sockaddr_in *)&v4)->sin_addr, 4);
	*ret_len = sizeof(*in6);
	return 0;
}

static void remember_resolved(struct supervisor *sv, int fd, const struct sockaddr_storage *given, socklen_t len)
{
	struct stat st;
	if (fstat(fd, &st) < 0 || len > sizeof(struct sockaddr_storage))
		return;
	for (size_t i = 0; i < sv->n_resolved; i++)
		if (sv->resolved[i].inode == st.st_ino) {
			memcpy(&sv->resolved[i].given, given, len);
			sv->resolved[i].len = len;
			return;
		}
	if (sv->n_resolved >= SV_RESOLVED_MAX)
		memmove(sv->resolved, sv->resolved + 1, --sv->n_resolved * sizeof(*sv->resolved));
	sv->resolved = xgrow(sv->resolved, sv->n_resolved, sizeof(*sv->resolved));
	struct sv_resolved *r = &sv->resolved[sv->n_resolved++];
	*r = (struct sv_resolved){ .inode = st.st_ino, .len = len };
	memcpy(&r->given, given, len);
}

void sv_relay_connect(struct supervisor *sv, uint64_t id, int *fd, const struct sockaddr_storage *ss, socklen_t len,
		      bool resolver)
{
	struct sockaddr_storage to;
	socklen_t to_len;
	int family = socket_family(*fd);
	if (relay_address(sv, resolver, family, &to, &to_len) < 0) {
		sv->broken = true;
		sv_refuse(sv, id, "connect", "(stockade's relay is not there)", SV_REFUSED);
		return;
	}
	if (resolver) {
		/* The query and its answer: stockade's resolver is the peer,
		 * which the kernel then filters replies by. */
		int err = connect(*fd, (struct sockaddr *)&to, to_len) < 0 ? errno : 0;
		if (!err) {
			remember_resolved(sv, *fd, ss, len);
			sv_remember_bound(sv, *fd);
		}
		sv_respond(sv, id, err);
		return;
	}
	/* The relay is told before it can accept (it is served by this
	 * same loop, after this): by the address the kernel gives the
	 * socket for this connect. */
	struct sv_local from;
	sv_start_relayed_connect(sv, id, fd, &to, to_len, &from);
	if (from.len)
		sv->relay.expect(sv->relay.data, (struct sockaddr *)&from.addr, from.len, (const struct sockaddr *)ss, len);
}

bool sv_relay_datagram(struct supervisor *sv, int fd, struct sockaddr_storage *name, socklen_t *name_len)
{
	struct sockaddr_storage to;
	socklen_t to_len;
	int family = socket_family(fd);
	if (relay_address(sv, true, family, &to, &to_len) < 0)
		return false;
	remember_resolved(sv, fd, name, *name_len);
	memcpy(name, &to, to_len);
	*name_len = to_len;
	return true;
}

/* ---- receives ---- */

static const struct sv_resolved *resolved_of(const struct supervisor *sv, int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return NULL;
	for (size_t i = 0; i < sv->n_resolved; i++)
		if (sv->resolved[i].inode == st.st_ino)
			return &sv->resolved[i];
	return NULL;
}

static bool same_address(const struct sockaddr_storage *a, socklen_t al, const struct sockaddr_storage *b, socklen_t bl)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;
		return al >= sizeof(*x) && bl >= sizeof(*y) && x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;
		return al >= sizeof(*x) && bl >= sizeof(*y) && x->sin6_port == y->sin6_port &&
		       memcmp(&x->sin6_addr, &y->sin6_addr, 16) == 0;
	}
	return false;
}

/* Makes the receive for the caller: 0 answered, -EAGAIN nothing there
 * yet (a blocking caller waits). */
static int receive(struct supervisor *sv, uint64_t id, pid_t pid, int fd, const uint64_t *args, const struct sv_resolved *rs)
{
	size_t want = (size_t)args[2] < SV_RECV_MAX ? (size_t)args[2] : SV_RECV_MAX;
	int flags = (int)args[3];
	_cleanup_free_ uint8_t *buf = xmalloc(want ? want : 1);
	struct sockaddr_storage from;
	socklen_t from_len = sizeof(from);
	ssize_t n = recvfrom(fd, buf, want, (flags & (MSG_PEEK | MSG_TRUNC | MSG_WAITALL)) | MSG_DONTWAIT,
			     (struct sockaddr *)&from, &from_len);
	if (n < 0) {
		if (errno == EAGAIN && !(flags & MSG_DONTWAIT) && !(fcntl(fd, F_GETFL) & O_NONBLOCK))
			return -EAGAIN;
		sv_respond(sv, id, errno);
		return 0;
	}
	/* A reply of stockade's resolver: from the server the query was
	 * sent to, as far as the command can tell. */
	struct sockaddr_storage ours;
	socklen_t ours_len;
	if (relay_address(sv, true, from.ss_family, &ours, &ours_len) == 0 && same_address(&from, from_len, &ours, ours_len)) {
		memcpy(&from, &rs->given, rs->len);
		from_len = rs->len;
	}
	/* Its data, its address (cut to the room given, the length the
	 * whole one's, as the kernel does), then the count. */
	size_t copy = (size_t)n < want ? (size_t)n : want;
	struct iovec local[3], remote[3];
	size_t k = 0;
	if (copy) {
		local[k] = (struct iovec){ .iov_base = buf, .iov_len = copy };
		remote[k++] = (struct iovec){ .iov_base = (void *)(uintptr_t)args[1], .iov_len = copy };
	}
	socklen_t room = 0;
	if (args[4] && args[5]) {
		if (!sv_read_mem(pid, args[5], &room, sizeof(room))) {
			sv_respond(sv, id, EFAULT);
			return 0;
		}
		size_t give = room < from_len ? room : from_len;
		if (give) {
			local[k] = (struct iovec){ .iov_base = &from, .iov_len = give };
			remote[k++] = (struct iovec){ .iov_base = (void *)(uintptr_t)args[4], .iov_len = give };
		}
		local[k] = (struct iovec){ .iov_base = &from_len, .iov_len = sizeof(from_len) };
		remote[k++] = (struct iovec){ .iov_base = (void *)(uintptr_t)args[5], .iov_len = sizeof(from_len) };
	}
	/* Still the caller's memory: it waits for this answer. */
	if (!sv_id_valid(sv, id))
		return 0;
	ssize_t total = 0;
	for (size_t i = 0; i < k; i++)
		total += (ssize_t)local[i].iov_len;
	if (k && process_vm_writev(pid, local, k, remote, k, 0) != total) {
		sv_respond(sv, id, EFAULT);
		return 0;
	}
	sv_respond_value(sv, id, n);
	return 0;
}

void sv_recvfrom(struct supervisor *sv, const struct seccomp_notif *req)
{
	int flags = (int)req->data.args[3];
	/* An error queue's messages: the kernel's, as made. */
	if (flags & MSG_ERRQUEUE) {
		sv_continue(sv, req->id);
		return;
	}
	int fd = sv_caller_fd(sv, req, (int)req->data.args[0]);
	if (fd < 0) {
		/* Gone (nobody waits), or no descriptor there (the kernel
		 * says so as it would); else the kernel's to make. */
		if (errno == EBADF)
			sv_respond(sv, req->id, EBADF);
		else if (errno != ESRCH)
			sv_continue(sv, req->id);
		return;
	}
	const struct sv_resolved *rs = resolved_of(sv, fd);
	if (!rs) {
		close(fd);
		sv_continue(sv, req->id);
		return;
	}
	uint64_t args[6];
	for (int i = 0; i < 6; i++)
		args[i] = req->data.args[i];
	if (receive(sv, req->id, (pid_t)req->pid, fd, args, rs) == 0) {
		close(fd);
		return;
	}
	/* A blocking receive with nothing there: waited for here, as long
	 * as its SO_RCVTIMEO says (0: for ever), the caller held. */
	struct timeval tv = { 0 };
	socklen_t tl = sizeof(tv);
	(void)getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &tl);
	unsigned long long wait = (unsigned long long)tv.tv_sec * 1000000 + (unsigned long long)tv.tv_usec;
	sv->recvs = xgrow(sv->recvs, sv->n_recvs, sizeof(*sv->recvs));
	sv->recvs[sv->n_recvs++] = (struct pending_recv){ .id = req->id, .fd = fd, .pid = (pid_t)req->pid,
							   .deadline = wait ? now_usec() + wait : 0 };
	memcpy(sv->recvs[sv->n_recvs - 1].args, args, sizeof(args));
}

size_t sv_recv_pollfds(const struct supervisor *sv, struct pollfd *fds, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < sv->n_recvs && n < max; i++)
		fds[n++] = (struct pollfd){ .fd = sv->recvs[i].fd, .events = POLLIN };
	return n;
}

void sv_recv_ready(struct supervisor *sv, const struct pollfd *fds, size_t n)
{
	unsigned long long now = now_usec();
	for (size_t k = sv->n_recvs; k-- > 0;) {
		struct pending_recv *pr = &sv->recvs[k];
		short revents = 0;
		for (size_t i = 0; i < n; i++)
			if (fds[i].fd == pr->fd)
				revents |= fds[i].revents;
		bool done = true;
		if (!sv_id_valid(sv, pr->id))
			;	/* the caller is gone */
		else if (revents) {
			const struct sv_resolved *rs = resolved_of(sv, pr->fd);
			done = !rs || receive(sv, pr->id, pr->pid, pr->fd, pr->args, rs) == 0;
			if (!rs)
				sv_respond(sv, pr->id, EAGAIN);
		} else if (pr->deadline && now >= pr->deadline) {
			sv_respond(sv, pr->id, EAGAIN);
		} else {
			done = false;
		}
		if (!done)
			continue;
		close(pr->fd);
		sv->recvs[k] = sv->recvs[--sv->n_recvs];
	}
}

void sv_relay_free(struct supervisor *sv)
{
	for (size_t i = 0; i < sv->n_recvs; i++) {
		sv_respond(sv, sv->recvs[i].id, EINTR);
		close(sv->recvs[i].fd);
	}
	free(sv->recvs);
	sv->recvs = NULL;
	sv->n_recvs = 0;
	free(sv->resolved);
	sv->resolved = NULL;
	sv->n_resolved = 0;
}
