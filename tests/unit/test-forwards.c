/* --publish and --connect: their values parsed (every form, and each
 * refusal with its reason), what forwards_begin makes of them on each
 * backend (a host listener only where the run's port is not the host's
 * already; --connect's listeners for the namespace jail; a connect with
 * the network off refused), and the forward itself, in this process on
 * 127.0.0.1 alone: bytes both ways, each side's end carried to the other,
 * a target nobody listens on closing the client, the connection gone
 * once both ends are. */
#include "forward/forward.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/fd.h"
#include "lib/hostaddr.h"
#include "lib/util.h"
#include "policy/report.h"
#include "supervise/supervise.h"
#include "tests/tap.h"

static void test_parse(void)
{
	static const struct {
		enum grant_kind kind;
		const char *spec;
		enum grant_kind got;
		const char *host;
		unsigned port, jail_port;
		const char *path;
		const char *text;
	} good[] = {
		{ GRANT_PUBLISH, "8080", GRANT_PUBLISH, "127.0.0.1", 8080, 8080, NULL, "127.0.0.1:8080" },
		{ GRANT_PUBLISH, "8080:80", GRANT_PUBLISH, "127.0.0.1", 8080, 80, NULL, "127.0.0.1:8080 -> the run's port 80" },
		{ GRANT_PUBLISH, "127.0.0.2:9000", GRANT_PUBLISH, "127.0.0.2", 9000, 9000, NULL, "127.0.0.2:9000" },
		{ GRANT_PUBLISH, "0.0.0.0:1:65535", GRANT_PUBLISH, "0.0.0.0", 1, 65535, NULL, "0.0.0.0:1 -> the run's port 65535" },
		{ GRANT_PUBLISH, "[::1]:8080:80", GRANT_PUBLISH, "::1", 8080, 80, NULL, "[::1]:8080 -> the run's port 80" },
		{ GRANT_PUBLISH, "[::]:443", GRANT_PUBLISH, "::", 443, 443, NULL, "[::]:443" },
		{ GRANT_PUBLISH, "localhost:3000", GRANT_PUBLISH, "localhost", 3000, 3000, NULL, "localhost:3000" },
		{ GRANT_PUBLISH, "08080", GRANT_PUBLISH, "127.0.0.1", 8080, 8080, NULL, "127.0.0.1:8080" },
		{ GRANT_CONNECT, "127.0.0.1:5432", GRANT_CONNECT, "127.0.0.1", 5432, 0, NULL, "127.0.0.1:5432" },
		{ GRANT_CONNECT, "localhost:6379", GRANT_CONNECT, "localhost", 6379, 0, NULL, "localhost:6379" },
		{ GRANT_CONNECT, "[::1]:5432", GRANT_CONNECT, "::1", 5432, 0, NULL, "[::1]:5432" },
		{ GRANT_CONNECT, "10.0.0.5:80", GRANT_CONNECT, "10.0.0.5", 80, 0, NULL, "10.0.0.5:80" },
		{ GRANT_CONNECT, "unix:/run/pg.sock", GRANT_CONNECT_UNIX, NULL, 0, 0, "/run/pg.sock", "unix:/run/pg.sock" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		struct net_grant g;
		const char *why = "unset";
		int r = net_grant_parse(good[i].kind, good[i].spec, &g, &why);
		_cleanup_free_ char *text = r == 0 ? net_grant_text(&g) : NULL;
		bool same = r == 0 && !why && g.kind == good[i].got && g.port == good[i].port &&
			    g.jail_port == good[i].jail_port &&
			    (good[i].host ? g.host && streq(g.host, good[i].host) : !g.host) &&
			    (good[i].path ? g.path && streq(g.path, good[i].path) : !g.path);
		if (!ok(same, "%s '%s': parsed", good[i].kind == GRANT_PUBLISH ? "--publish" : "--connect", good[i].spec))
			diag("r %d why %s host %s port %u jail_port %u", r, why ? why : "-", g.host ? g.host : "-", g.port,
			     g.jail_port);
		is_str(text, good[i].text, "'%s' reads back as '%s'", good[i].spec, good[i].text);
		net_grant_free(&g);
	}

#define USE_PUBLISH "use [HOST_ADDR:]PORT[:JAIL_PORT], ports 1 to 65535"
#define USE_CONNECT "use HOST:PORT or unix:PATH, ports 1 to 65535"
#define BRACKETS "an IPv6 address goes in brackets: [::1]:PORT"
#define NUMERIC "the host must be a numeric address or localhost"
	static const struct {
		enum grant_kind kind;
		const char *spec;
		const char *why;
	} bad[] = {
		{ GRANT_PUBLISH, "", USE_PUBLISH },
		{ GRANT_PUBLISH, "0", USE_PUBLISH },
		{ GRANT_PUBLISH, "65536", USE_PUBLISH },
		{ GRANT_PUBLISH, "123456", USE_PUBLISH },
		{ GRANT_PUBLISH, "80a", USE_PUBLISH },
		{ GRANT_PUBLISH, "8080:", USE_PUBLISH },
		{ GRANT_PUBLISH, "8080:0", USE_PUBLISH },
		{ GRANT_PUBLISH, "8080:80:1", USE_PUBLISH },
		{ GRANT_PUBLISH, "127.0.0.1:", USE_PUBLISH },
		{ GRANT_PUBLISH, "[::1]8080", USE_PUBLISH },
		{ GRANT_PUBLISH, "[::1", USE_PUBLISH },
		{ GRANT_PUBLISH, "::1:8080", BRACKETS },
		{ GRANT_PUBLISH, "::1:8080:80", BRACKETS },
		{ GRANT_PUBLISH, "unix:/x", USE_PUBLISH },
		{ GRANT_PUBLISH, "example.com:80", NUMERIC },
		{ GRANT_PUBLISH, "[example.com]:80", NUMERIC },
		{ GRANT_PUBLISH, "1.2.3.4.5:80", NUMERIC },
		{ GRANT_CONNECT, "5432", USE_CONNECT },
		{ GRANT_CONNECT, "::1:5432", BRACKETS },
		{ GRANT_CONNECT, "fe80::1:5432", BRACKETS },
		{ GRANT_CONNECT, "127.0.0.1:0", USE_CONNECT },
		{ GRANT_CONNECT, "127.0.0.1:70000", USE_CONNECT },
		{ GRANT_CONNECT, "127.0.0.1:80:81", USE_CONNECT },
		{ GRANT_CONNECT, "127.0.0.1:", USE_CONNECT },
		{ GRANT_CONNECT, "db:5432", NUMERIC },
		{ GRANT_CONNECT, ":5432", NUMERIC },
		{ GRANT_CONNECT, "unix:run/pg.sock", "a socket path must be absolute" },
		{ GRANT_CONNECT, "unix:", "a socket path must be absolute" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		struct net_grant g;
		const char *why = NULL;
		int r = net_grant_parse(bad[i].kind, bad[i].spec, &g, &why);
		is_int(r, -EINVAL, "%s '%s': refused", bad[i].kind == GRANT_PUBLISH ? "--publish" : "--connect", bad[i].spec);
		is_str(why, bad[i].why, "'%s': %s", bad[i].spec, bad[i].why);
		net_grant_free(&g);
	}
}

/* A port of 127.0.0.1 nobody listens on now: one the kernel gave, let go. */
static unsigned short free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		diag("free_port: %m");
	close(fd);
	return ntohs(sa.sin_port);
}

/* A blocking listener on 127.0.0.1, its port in *ret_port. */
static int listener(unsigned short *ret_port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		diag("listener: %m");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*ret_port = ntohs(sa.sin_port);
	return fd;
}

static int connect_to(unsigned short port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = -errno;
		if (fd >= 0)
			close(fd);
		return e;
	}
	struct timeval tv = { .tv_sec = 5 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

static void add_grant(struct policy *p, enum grant_kind kind, const char *spec)
{
	struct net_grant g;
	const char *why;
	if (net_grant_parse(kind, spec, &g, &why) < 0) {
		diag("cannot parse %s: %s", spec, why);
		return;
	}
	p->grants = xgrow(p->grants, p->n_grants, sizeof(*p->grants));
	p->grants[p->n_grants++] = g;
}

static void test_begin(void)
{
	struct policy p;
	struct forwards f;
	char spec[64];
	unsigned short port = free_port(), other = free_port();

	/* The landlock backend shares the host's loopback: the run's own
	 * listener on that port is the host's already. */
	policy_init(&p);
	snprintf(spec, sizeof(spec), "%u", port);
	add_grant(&p, GRANT_PUBLISH, spec);
	is_int(forwards_begin(&f, &p, BACKEND_LANDLOCK), 0, "landlock --publish PORT: 0");
	ok(!f.fw && f.pool.sock == -1 && f.factory_child == -1 && f.n_listens == 0, "landlock --publish PORT: nothing to forward");
	int c = connect_to(port);
	is_int(c, -ECONNREFUSED, "landlock --publish PORT: no listener of stockade's on it");
	if (c >= 0)
		close(c);
	forwards_end(&f);
	policy_free(&p);

	/* Another port inside: a listener on the host's. */
	policy_init(&p);
	snprintf(spec, sizeof(spec), "127.0.0.1:%u:%u", port, other);
	add_grant(&p, GRANT_PUBLISH, spec);
	is_int(forwards_begin(&f, &p, BACKEND_LANDLOCK), 0, "landlock --publish PORT:JAIL_PORT: 0");
	ok(f.fw != NULL && f.pool.sock == -1, "landlock --publish PORT:JAIL_PORT: a forward, no socket factory");
	ok(f.n_published == 1 && f.published[0] >= 0, "and its listener is told (the supervisor's own, not another's)");
	struct pollfd fds[8];
	is_int(f.fw ? forward_pollfds(f.fw, fds, ARRAY_SIZE(fds)) : 0, 1, "one listener polled");
	c = connect_to(port);
	ok(c >= 0, "landlock --publish PORT:JAIL_PORT: 127.0.0.1:PORT listens");
	if (c >= 0)
		close(c);
	forwards_end(&f);
	ok(f.fw == NULL && f.n_published == 0, "forwards_end: forgotten");

	c = connect_to(port);
	is_int(c, -ECONNREFUSED, "forwards_end: its listener closed");
	if (c >= 0)
		close(c);

	/* Every address, the run's own port: stockade cannot listen there
	 * while the run serves it. */
	policy_free(&p);
	policy_init(&p);
	snprintf(spec, sizeof(spec), "0.0.0.0:%u", port);
	add_grant(&p, GRANT_PUBLISH, spec);
	is_int(forwards_begin(&f, &p, BACKEND_LANDLOCK), -1, "landlock --publish 0.0.0.0:PORT: refused");
	forwards_end(&f);
	struct net_addr lo, none;
	net_addr_from_text("127.0.0.1", 0, &lo);
	net_addr_from_text("203.0.113.77", 0, &none);
	is_int((int)host_address_ifindex(&lo), (int)if_nametoindex("lo"), "127.0.0.1 is lo's");
	is_int((int)host_address_ifindex(&none), 0, "203.0.113.77 is no interface's");

	/* A port the host uses already: refused, said on stderr. */
	unsigned short taken;
	int busy = listener(&taken);
	policy_free(&p);
	policy_init(&p);
	snprintf(spec, sizeof(spec), "%u:%u", taken, other);
	add_grant(&p, GRANT_PUBLISH, spec);
	is_int(forwards_begin(&f, &p, BACKEND_LANDLOCK), -1, "--publish on a port in use: -1");
	forwards_end(&f);
	close(busy);
	policy_free(&p);

	/* The namespace jail: a socket factory for --publish, even on the
	 * same port (the jail's loopback is its own). */
	policy_init(&p);
	snprintf(spec, sizeof(spec), "%u", port);
	add_grant(&p, GRANT_PUBLISH, spec);
	is_int(forwards_begin(&f, &p, BACKEND_NAMESPACES), 0, "namespaces --publish PORT: 0");
	ok(f.fw != NULL && f.pool.sock >= 0 && f.factory_child >= 0, "namespaces --publish: a forward, and the factory's socket pair");
	c = connect_to(port);
	ok(c >= 0, "namespaces --publish PORT: the host listens on it");
	if (c >= 0)
		close(c);
	forwards_end(&f);
	ok(f.pool.sock == -1 && f.factory_child == -1, "forwards_end: the factory's sockets closed");
	policy_free(&p);

	/* --connect: listeners inside for the namespace jail on --net
	 * loopback, another address made the jail's own. */
	policy_init(&p);
	p.net = NET_LOOPBACK;
	add_grant(&p, GRANT_CONNECT, "127.0.0.1:5432");
	add_grant(&p, GRANT_CONNECT, "10.9.8.7:80");
	add_grant(&p, GRANT_CONNECT, "localhost:6379");
	add_grant(&p, GRANT_CONNECT, "unix:/run/x.sock");
	is_int(forwards_begin(&f, &p, BACKEND_NAMESPACES), 0, "namespaces --connect: 0");
	is_int(f.n_listens, 3, "namespaces --connect: three listeners for init to bind (not the unix one)");
	ok(!f.fw, "no forward until init sends them");
	if (f.n_listens == 3) {
		const struct sockaddr_in *a0 = (const struct sockaddr_in *)&f.listens[0].addr;
		const struct sockaddr_in *a1 = (const struct sockaddr_in *)&f.listens[1].addr;
		const struct sockaddr_in *a2 = (const struct sockaddr_in *)&f.listens[2].addr;
		ok(a0->sin_family == AF_INET && ntohs(a0->sin_port) == 5432 && ntohl(a0->sin_addr.s_addr) == INADDR_LOOPBACK &&
		   f.listens[0].len == sizeof(struct sockaddr_in) && !f.listens[0].add_address,
		   "127.0.0.1:5432: bound inside as it is, on lo already");
		ok(ntohs(a1->sin_port) == 80 && ntohl(a1->sin_addr.s_addr) == 0x0a090807 && f.listens[1].add_address,
		   "10.9.8.7:80: the address made the jail's own first");
		ok(ntohs(a2->sin_port) == 6379 && ntohl(a2->sin_addr.s_addr) == INADDR_LOOPBACK && !f.listens[2].add_address,
		   "localhost: 127.0.0.1");
		ok(f.listen_targets[1].family == AF_INET && f.listen_targets[1].port == 80, "each carried to the same address on the host");
	}
	forwards_end(&f);
	ok(f.listens == NULL && f.n_listens == 0, "forwards_end: the listens freed");

	/* The same on the landlock backend, or with --net on: nothing to
	 * bind, the host's network is the run's. */
	is_int(forwards_begin(&f, &p, BACKEND_LANDLOCK), 0, "landlock --connect: 0");
	is_int(f.n_listens, 0, "landlock --connect: nothing to bind");
	forwards_end(&f);
	p.net = NET_ON;
	is_int(forwards_begin(&f, &p, BACKEND_NAMESPACES), 0, "namespaces --net on --connect: 0");
	is_int(f.n_listens, 0, "--net on: nothing to bind");
	forwards_end(&f);
	p.net = NET_OFF;
	is_int(forwards_begin(&f, &p, BACKEND_NAMESPACES), -1, "--connect with the network off: refused");
	forwards_end(&f);
	policy_free(&p);

	policy_init(&p);
	add_grant(&p, GRANT_CONNECT, "0.0.0.0:80");
	is_int(forwards_begin(&f, &p, BACKEND_NAMESPACES), -1, "--connect 0.0.0.0:80 in the namespace jail: refused");
	forwards_end(&f);
	policy_free(&p);
}

/* ---- the forward, running in a thread of its own ---- */

struct pumping {
	struct forward *fw;
	atomic_bool stop;
};

static void pump_round(struct forward *fw, int timeout_ms)
{
	struct pollfd fds[64];
	size_t n = forward_pollfds(fw, fds, ARRAY_SIZE(fds));
	if (poll(fds, n, timeout_ms) > 0)
		forward_ready(fw, fds, n);
}

static void *pump_thread(void *arg)
{
	struct pumping *pm = arg;
	while (!atomic_load(&pm->stop))
		pump_round(pm->fw, 20);
	return NULL;
}

#define UP_BYTES (3u << 20)

/* The service: reads what comes until its end, then answers with how
 * many bytes and their sum, and closes. */
struct service {
	int listen_fd;
	unsigned long long got;
	unsigned sum;
	bool eof;
};

static void *service_thread(void *arg)
{
	struct service *s = arg;
	int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct timeval tv = { .tv_sec = 5 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	unsigned char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n == 0) {
			s->eof = true;
			break;
		}
		if (n < 0)
			break;
		for (ssize_t i = 0; i < n; i++)
			s->sum += buf[i];
		s->got += (unsigned long long)n;
	}
	char reply[64];
	int len = snprintf(reply, sizeof(reply), "got %llu sum %u", s->got, s->sum);
	(void)write_all(fd, reply, (size_t)len);
	close(fd);
	return NULL;
}

static ssize_t read_until_end(int fd, char *buf, size_t size)
{
	size_t got = 0;
	while (got < size) {
		ssize_t n = read(fd, buf + got, size - got);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (ssize_t)got;
}

static void test_forward(void)
{
	unsigned short target_port;
	struct service s = { .listen_fd = listener(&target_port) };
	struct net_addr here, target;
	net_addr_from_text("127.0.0.1", 0, &here);
	net_addr_from_text("127.0.0.1", target_port, &target);
	int lfd = forward_listen_here(&here, 0);
	ok(lfd >= 0, "forward_listen_here(127.0.0.1:0): listening");
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	getsockname(lfd, (struct sockaddr *)&sa, &len);
	unsigned short fw_port = ntohs(sa.sin_port);
	ok((fcntl(lfd, F_GETFD) & FD_CLOEXEC) && (fcntl(lfd, F_GETFL) & O_NONBLOCK), "its socket: close-on-exec, non-blocking");

	struct pumping pm = { .fw = forward_new() };
	forward_add(pm.fw, lfd, &target, 0, forward_socket_here, NULL);
	pthread_t pt, st;
	pthread_create(&pt, NULL, pump_thread, &pm);
	pthread_create(&st, NULL, service_thread, &s);

	int c = connect_to(fw_port);
	ok(c >= 0, "a client connects to the forward");
	unsigned char *data = xmalloc(UP_BYTES);
	unsigned sum = 0;
	for (size_t i = 0; i < UP_BYTES; i++) {
		data[i] = (unsigned char)(i * 2654435761u >> 13);
		sum += data[i];
	}
	is_int(c >= 0 ? write_all(c, data, UP_BYTES) : -1, 0, "3 MiB written to it");
	free(data);
	/* Our end: carried to the service, which answers once it sees it. */
	ok(c >= 0 && shutdown(c, SHUT_WR) == 0, "the client ends its side");
	char reply[128] = "";
	ssize_t n = c >= 0 ? read_until_end(c, reply, sizeof(reply) - 1) : -1;
	reply[n > 0 ? n : 0] = '\0';
	char want[64];
	snprintf(want, sizeof(want), "got %u sum %u", UP_BYTES, sum);
	is_str(reply, want, "every byte reached the service, in order, and its answer came back");
	pthread_join(st, NULL);
	ok(s.eof, "the service saw the client's end as an end of file");
	ok(n >= 0, "and the client the service's close as its end (read returned 0)");
	if (c >= 0)
		close(c);

	/* A second connection, the answer before the question: down first. */
	s.got = 0;
	s.sum = 0;
	s.eof = false;
	int c2 = connect_to(fw_port);
	int srv = accept4(s.listen_fd, NULL, NULL, SOCK_CLOEXEC);
	ok(c2 >= 0 && srv >= 0, "a second connection, carried to a second accept");
	ok(srv >= 0 && write_all(srv, "banner\n", 7) == 0, "the service speaks first");
	char banner[16] = "";
	n = c2 >= 0 ? read(c2, banner, 7) : -1;
	banner[n > 0 ? n : 0] = '\0';
	is_str(banner, "banner\n", "the client reads it");
	ok(c2 >= 0 && write_all(c2, "ping", 4) == 0, "the client answers");
	char ping[8] = "";
	n = srv >= 0 ? read(srv, ping, 4) : -1;
	ping[n > 0 ? n : 0] = '\0';
	is_str(ping, "ping", "the service reads it");
	/* The service ends its side first: the client sees the end, and
	 * may still send. */
	ok(srv >= 0 && shutdown(srv, SHUT_WR) == 0, "the service ends its side");
	char end[4];
	is_int(c2 >= 0 ? read(c2, end, sizeof(end)) : -1, 0, "the client reads its end");
	ok(c2 >= 0 && write_all(c2, "late", 4) == 0, "and still sends");
	n = srv >= 0 ? read(srv, ping, 4) : -1;
	ping[n > 0 ? n : 0] = '\0';
	is_str(ping, "late", "which arrives after the service's end");
	if (c2 >= 0)
		close(c2);
	struct timeval tv = { .tv_sec = 5 };
	if (srv >= 0)
		setsockopt(srv, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	is_int(srv >= 0 ? read(srv, end, sizeof(end)) : -1, 0, "the client's close: the service's end of file");
	if (srv >= 0)
		close(srv);

	atomic_store(&pm.stop, true);
	pthread_join(pt, NULL);
	struct pollfd fds[8];
	size_t left = forward_pollfds(pm.fw, fds, ARRAY_SIZE(fds));
	for (int i = 0; i < 50 && left != 1; i++) {
		pump_round(pm.fw, 20);
		left = forward_pollfds(pm.fw, fds, ARRAY_SIZE(fds));
	}
	is_int(left, 1, "both connections over: the listener alone is polled");

	/* A target nobody listens on: the client's connection closed. */
	close(s.listen_fd);
	int c3 = connect_to(fw_port);
	ok(c3 >= 0, "a client connects while the target is gone");
	for (int i = 0; i < 5; i++)
		pump_round(pm.fw, 20);
	is_int(c3 >= 0 ? read(c3, end, sizeof(end)) : -1, 0, "its connection closed: the target refused");
	is_int(forward_pollfds(pm.fw, fds, ARRAY_SIZE(fds)), 1, "and nothing of it kept");
	if (c3 >= 0)
		close(c3);
	forward_free(pm.fw);
	int c4 = connect_to(fw_port);
	is_int(c4, -ECONNREFUSED, "forward_free: its listener closed");
	if (c4 >= 0)
		close(c4);
}

int main(void)
{
	test_parse();
	test_begin();
	test_forward();
	return tap_done();
}
