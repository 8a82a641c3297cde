/* Ports the supervisor holds for the run: a datagram (or a UDP connect)
 * to a local port nobody has bound. Outside the jail the kernel would
 * drop it and answer with an ICMP port unreachable (ECONNREFUSED to a
 * connected socket, an error queued for one asking with IP_RECVERR). To
 * let the kernel answer so while no socket bound there later can take
 * what the run sends, stockade binds that address and port itself first,
 * with a socket connected to itself: the kernel's look-up never hands it
 * a datagram from anyone else, so it takes none, and while it is open
 * nobody else can bind the port (it sets no SO_REUSEADDR or
 * SO_REUSEPORT). The run could have bound the port itself: a hold gives
 * it nothing it could not have. */
#include "supervise/internal.h"

#include <sys/stat.h>

#include "lib/util.h"

/* More than a test suite sends to; each is one descriptor of stockade's. */
#define HOLDS_MAX 256

static int hold_socket(const struct net_addr *d, ino_t *ret_inode)
{
	struct sockaddr_storage ss;
	socklen_t len = net_addr_to_sockaddr(d, &ss);
	if (!len)
		return -1;
	_cleanup_close_ int fd = socket(d->family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	struct stat st;
	if (fd < 0 || bind(fd, (struct sockaddr *)&ss, len) < 0 || connect(fd, (struct sockaddr *)&ss, len) < 0 ||
	    fstat(fd, &st) < 0)
		return -1;
	*ret_inode = st.st_ino;
	return TAKE_FD(fd);
}

static struct sv_hold *find(struct supervisor *sv, const struct net_addr *d)
{
	for (size_t i = 0; i < sv->n_holds; i++)
		if (sv->holds[i].addr.port == d->port && net_addr_same_ip(&sv->holds[i].addr, d))
			return &sv->holds[i];
	return NULL;
}

static void drop(struct supervisor *sv, size_t i)
{
	close(sv->holds[i].fd);
	memmove(&sv->holds[i], &sv->holds[i + 1], (sv->n_holds - i - 1) * sizeof(*sv->holds));
	sv->n_holds--;
}

bool sv_hold(struct supervisor *sv, const struct net_addr *a, bool lasting)
{
	struct net_addr d = *a;
	net_addr_unmap(&d);
	net_addr_wildcard_to_loopback(&d);
	struct sv_hold *h = find(sv, &d);
	if (h) {
		h->lasting |= lasting;
		return true;
	}
	/* Full: the oldest held for a datagram alone goes (that datagram
	 * is answered already; the next one is decided again). One held
	 * for a connected socket stays while the run goes on: its later
	 * datagrams go straight to the kernel. */
	if (sv->n_holds == HOLDS_MAX) {
		size_t i = 0;
		while (i < sv->n_holds && sv->holds[i].lasting)
			i++;
		if (i == sv->n_holds)
			return false;
		drop(sv, i);
	}
	/* With the command's privileges: a root stockade holds no port
	 * below 1024, where the command could not bind (a resolver started
	 * during the run must find 53 free). */
	ino_t inode = 0;
	if (sv_acting(sv) != 0)
		return false;
	int fd = hold_socket(&d, &inode);
	sv_acted(sv);
	if (fd < 0)
		return false;
	sv->holds = xgrow(sv->holds, sv->n_holds, sizeof(*sv->holds));
	sv->holds[sv->n_holds++] = (struct sv_hold){ .addr = d, .fd = fd, .inode = inode, .lasting = lasting };
	return true;
}

bool sv_is_hold(const struct supervisor *sv, ino_t inode)
{
	for (size_t i = 0; i < sv->n_holds; i++)
		if (sv->holds[i].inode == inode)
			return true;
	return false;
}

size_t sv_release_holds(struct supervisor *sv, unsigned short port, struct sv_hold **ret)
{
	*ret = NULL;
	size_t n = 0, kept = 0;
	for (size_t i = 0; i < sv->n_holds; i++) {
		struct sv_hold h = sv->holds[i];
		if (h.addr.port != port) {
			sv->holds[kept++] = h;
			continue;
		}
		close(h.fd);
		h.fd = -1;
		*ret = xgrow(*ret, n, sizeof(**ret));
		(*ret)[n++] = h;
	}
	sv->n_holds = kept;
	return n;
}

void sv_hold_again(struct supervisor *sv, struct sv_hold *released, size_t n)
{
	/* Where the run's own socket now takes the port, the hold cannot
	 * be made again (EADDRINUSE), and is not needed: that socket
	 * receives what the run sends there. */
	for (size_t i = 0; i < n; i++)
		(void)sv_hold(sv, &released[i].addr, released[i].lasting);
	free(released);
}

void sv_holds_free(struct supervisor *sv)
{
	for (size_t i = 0; i < sv->n_holds; i++)
		close(sv->holds[i].fd);
	free(sv->holds);
	sv->holds = NULL;
	sv->n_holds = 0;
}
