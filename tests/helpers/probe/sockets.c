/* probe: sockets. */
#include "tests/helpers/probe/probe.h"

/* -------------------------------------------------------------- sockets */

static const struct flag_name family_names[] = {
	{ "inet", AF_INET },   { "inet6", AF_INET6 },	{ "unix", AF_UNIX }, { "netlink", AF_NETLINK },
	{ "packet", AF_PACKET }, { "vsock", AF_VSOCK }, { "alg", AF_ALG },
};
static const struct flag_name type_names[] = {
	{ "stream", SOCK_STREAM }, { "dgram", SOCK_DGRAM }, { "raw", SOCK_RAW },
	{ "seqpacket", SOCK_SEQPACKET }, { "rdm", SOCK_RDM },
};
static const struct flag_name proto_names[] = {
	{ "default", 0 },	 { "tcp", IPPROTO_TCP },   { "udp", IPPROTO_UDP },
	{ "sctp", IPPROTO_SCTP }, { "mptcp", IPPROTO_MPTCP }, { "icmp", IPPROTO_ICMP },
	{ "icmpv6", IPPROTO_ICMPV6 }, { "udplite", IPPROTO_UDPLITE },
	/* netlink protocols */
	{ "route", 0 },		 { "sock_diag", 4 },	   { "audit", 9 },
	{ "generic", 16 },
	/* AF_PACKET's ETH_P_ALL, in network order as socket(2) wants it */
	{ "all", 0x0300 },
};

static long lookup_name(const struct flag_name *t, size_t n, const char *s, const char *what)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(t[i].name, s) == 0)
			return (long)t[i].flag;
	return parse_long(s, what);
}
#define LOOKUP(table, s, what) lookup_name(table, sizeof(table) / sizeof(table[0]), s, what)

int op_socket(char **a)
{
	int family = (int)LOOKUP(family_names, a[0], "family");
	int type = (int)LOOKUP(type_names, a[1], "type");
	int proto = (int)LOOKUP(proto_names, a[2], "protocol");

	return close_if_fd(socket(family, type | SOCK_CLOEXEC, proto));
}

int op_socketpair_dgram(char **a)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errno;
	close(sv[0]);
	close(sv[1]);
	return 0;
}

/* Numeric IPv4 or IPv6 (with %scope) literals only: no name resolution
 * happens in the probe, so a test never depends on a resolver. */
static void parse_inet(const char *host, const char *port, struct sockaddr_storage *ss,
		       socklen_t *ret_len)
{
	struct addrinfo hints, *res;
	int r;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	hints.ai_socktype = SOCK_STREAM;
	r = getaddrinfo(host, port, &hints, &res);
	if (r)
		usage_error("bad address '%s' port '%s': %s", host, port, gai_strerror(r));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*ret_len = res->ai_addrlen;
	freeaddrinfo(res);
}

/* The probe's own socket on the port is closed: said on stdout, and by
 * making the file $PROBE_CLOSED, if set, for a test that takes the port
 * next (so that it comes neither before the probe's bind nor late). */
static void make_closed_file(void)
{
	const char *path = getenv("PROBE_CLOSED");
	int fd = path ? open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644) : -1;
	if (fd >= 0)
		close(fd);
}

static void say_closed(const char *what)
{
	printf("%s closed\n", what);
	fflush(stdout);
	make_closed_file();
}

static void set_timeouts(int fd, double send_seconds, double recv_seconds)
{
	struct timeval tv;

	/* SO_SNDTIMEO bounds a blocking connect() too. */
	tv.tv_sec = (time_t)send_seconds;
	tv.tv_usec = (suseconds_t)((send_seconds - (double)tv.tv_sec) * 1e6);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	tv.tv_sec = (time_t)recv_seconds;
	tv.tv_usec = (suseconds_t)((recv_seconds - (double)tv.tv_sec) * 1e6);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* After a connection: print what the peer says (up to 4 KiB, until it
 * closes or goes quiet), so a test sees which listener it reached. */
static void print_reply(int fd)
{
	char buf[MAX_SOCKET_READ];
	size_t total = 0;

	while (total < sizeof(buf)) {
		ssize_t n = recv(fd, buf + total, sizeof(buf) - total, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		total += (size_t)n;
	}
	emit_bytes(buf, total);
	end_partial_line();
}

static int connect_and_read(const struct sockaddr *sa, socklen_t len)
{
	int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errno;
	set_timeouts(fd, 10, 3);
	if (connect(fd, sa, len) < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	printf("connected\n");
	fflush(stdout);
	print_reply(fd);
	close(fd);
	return 0;
}

int op_connect_tcp(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;

	parse_inet(a[0], a[1], &ss, &len);
	return connect_and_read((struct sockaddr *)&ss, len);
}

static int connect_unix(const char *name, bool abstract)
{
	struct sockaddr_un sun;
	socklen_t len;
	int e;

	if ((e = fill_sockaddr_un(&sun, &len, name, abstract)))
		return e;
	return connect_and_read((struct sockaddr *)&sun, len);
}

int op_connect_unix(char **a) { return connect_unix(a[0], false); }
int op_connect_abstract(char **a) { return connect_unix(a[0], true); }

/* abstract-clients NAME N: a listener of its own on the abstract NAME,
 * and N clients connected to it one after another, each accepted and
 * kept open (every accepted connection shows the listener's name in
 * /proc/net/unix). The errno is the first connect's that failed. */
int op_abstract_clients(char **a)
{
	struct sockaddr_un sun;
	socklen_t len;
	int e;
	long n = parse_long(a[1], "clients");

	if ((e = fill_sockaddr_un(&sun, &len, a[0], true)))
		return e;
	int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sun, len) < 0 || listen(lfd, 16) < 0)
		return errno;
	for (long i = 0; i < n; i++) {
		int c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&sun, len) < 0 || accept4(lfd, NULL, NULL, SOCK_CLOEXEC) < 0) {
			printf("connected %ld\n", i);
			return errno;
		}
	}
	printf("connected %ld\n", n);
	return 0;
}

static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
		return -1;
	if (ss.ss_family == AF_INET)
		return ntohs(((struct sockaddr_in *)&ss)->sin_port);
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return -1;
}

static int bind_socket(const struct sockaddr *sa, socklen_t len, int type, int *ret_fd)
{
	int one = 1;
	int fd = socket(sa->sa_family, type | SOCK_CLOEXEC, 0);

	*ret_fd = -1;
	if (fd < 0)
		return errno;
	if (sa->sa_family != AF_UNIX)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, sa, len) < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	*ret_fd = fd;
	return 0;
}

/* A TCP listener of the probe's own on host:port (port "0": one of the
 * kernel's), with backlog; *ss and *len the address it is bound to. 0 or
 * the errno. */
static int listen_tcp_on(const char *host, const char *port, int backlog, struct sockaddr_storage *ss,
			 socklen_t *len, int *ret_fd)
{
	int e;

	parse_inet(host, port, ss, len);
	if ((e = bind_socket((struct sockaddr *)ss, *len, SOCK_STREAM, ret_fd)))
		return e;
	*len = sizeof(*ss);
	if (listen(*ret_fd, backlog) < 0 || getsockname(*ret_fd, (struct sockaddr *)ss, len) < 0)
		return errno;
	return 0;
}

int op_bind_tcp(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e;

	parse_inet(a[0], a[1], &ss, &len);
	if ((e = bind_socket((struct sockaddr *)&ss, len, SOCK_STREAM, &fd)))
		return e;
	printf("bound %d\n", bound_port(fd));
	close(fd);
	return 0;
}

static volatile sig_atomic_t listen_stopped;

static void stop_listening(int sig)
{
	listen_stopped = 1;
}

/* Accept for the given time, or until SIGTERM; each connection gets
 * "probe\n" and is closed; then the count is printed. */
static int listen_and_count(int fd, double seconds)
{
	double end = now_monotonic() + seconds;
	int accepted = 0;
	struct sigaction sa = { .sa_handler = stop_listening };

	sigaction(SIGTERM, &sa, NULL);
	if (listen(fd, 64) < 0)
		return errno;
	if (bound_port(fd) >= 0)
		printf("listening %d\n", bound_port(fd));
	else
		printf("listening\n");
	fflush(stdout);
	for (;;) {
		double left = end - now_monotonic();
		struct pollfd pfd = { fd, POLLIN, 0 };
		int conn;

		if (left <= 0 || listen_stopped)
			break;
		if (poll(&pfd, 1, (int)(left * 1000) + 1) <= 0)
			continue;
		conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			continue;
		accepted++;
		if (send(conn, "probe\n", 6, MSG_NOSIGNAL) < 0) {
			/* the peer may be gone already; it was still accepted */
		}
		close(conn);
	}
	printf("accepted %d\n", accepted);
	return 0;
}

/* pipe-pingpong N: a byte to a child and back through two pipes, N
 * times; prints the microseconds per round: two wake-ups of a sleeping
 * process, the least a forward adds to a request and its response. For
 * make bench. */
int op_pipe_pingpong(char **a)
{
	long n = parse_long(a[0], "rounds");
	int there[2], back[2];
	char c = 'x';
	struct timespec t0, t1;
	if (pipe(there) < 0 || pipe(back) < 0)
		return errno;
	pid_t pid = fork();
	if (pid < 0)
		return errno;
	if (pid == 0) {
		for (long i = 0; i < n; i++)
			if (read(there[0], &c, 1) != 1 || write(back[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++)
		if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1)
			return EIO;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	waitpid(pid, NULL, 0);
	double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3;
	printf("us per round %.2f\n", us / (double)n);
	return 0;
}

/* connect-cycles HOST N: a listener of its own on HOST, then N rounds of
 * connect, accept, close; prints the microseconds per round. For the
 * supervisor's benchmark. */
int op_connect_cycles(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int lfd, e;

	if ((e = listen_tcp_on(a[0], "0", 128, &ss, &len, &lfd)))
		return e;
	long n = parse_long(a[1], "rounds");
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		int c = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c < 0)
			return errno;
		if (connect(c, (struct sockaddr *)&ss, len) < 0)
			return errno;
		int s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0)
			return errno;
		close(s);
		close(c);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3;
	printf("us per round %.2f\n", us / (double)n);
	close(lfd);
	return 0;
}

/* listen-unbound: listen() on a TCP socket never bound, which binds it
 * to the wildcard address and a port of the kernel's choosing. */
/* listen-unbound [SECONDS]: listen() on a socket never bound (the kernel
 * picks a port on 0.0.0.0, as libuv's uv_listen without a bind); with
 * SECONDS, serves as listen-tcp does, for that long. */
int op_listen_unbound(char **a)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	int e = a[0] ? listen_and_count(fd, parse_seconds(a[0])) : listen(fd, 1) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* bind-twice: binds a TCP socket to 0.0.0.0:0, then again: the kernel
 * answers the second EINVAL (libuv's tcp_bind_error_inval). */
int op_bind_twice(char **a)
{
	(void)a;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	printf("first bind ok\n");
	int e = bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* unix-name PATH: binds a Unix socket to PATH and listens; ok when
 * getsockname names it PATH, byte for byte, and a chmod of that name
 * works (libuv's uv_pipe_getsockname and uv_pipe_chmod). The file is
 * removed again. */
int op_unix_name(char **a)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX }, got;
	socklen_t len = sizeof(got);
	int e = 0;

	if (strlen(a[0]) >= sizeof(sun.sun_path))
		usage_error("unix-name: path too long");
	strcpy(sun.sun_path, a[0]);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&got, &len) < 0) {
		e = errno;
		close(fd);
		return e;
	}
	printf("named '%.*s'\n", (int)(len - offsetof(struct sockaddr_un, sun_path)), got.sun_path);
	if (len <= offsetof(struct sockaddr_un, sun_path) || strcmp(got.sun_path, a[0]) != 0)
		e = EXDEV; /* another name than the one given */
	else if (chmod(got.sun_path, 0666) < 0)
		e = errno;
	unlink(a[0]);
	close(fd);
	return e;
}

/* unix-bind-race GOOD BAD N: a second thread rewrites the sun_path that
 * bind() is reading, between GOOD and BAD, while bind is tried N times;
 * prints how many socket files appeared at each (each is removed again).
 * A checker that approves GOOD and lets the kernel read the address again
 * must not let one appear at BAD where the command may not make files. */
struct unix_race {
	struct sockaddr_un good, bad, shared;
	int stop;
};

static void *unix_race_flipper(void *arg)
{
	struct unix_race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		memcpy(&r->shared, &r->bad, sizeof(r->shared));
		__asm__ volatile("" ::: "memory");
		memcpy(&r->shared, &r->good, sizeof(r->shared));
		__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

int op_unix_bind_race(char **a)
{
	static struct unix_race r;
	long n = parse_long(a[2], "count"), at_good = 0, at_bad = 0, failed = 0;
	struct stat st;
	pthread_t thread;
	int e;

	if (strlen(a[0]) >= sizeof(r.good.sun_path) || strlen(a[1]) >= sizeof(r.bad.sun_path))
		usage_error("unix-bind-race: path too long");
	r.good.sun_family = r.bad.sun_family = AF_UNIX;
	strcpy(r.good.sun_path, a[0]);
	strcpy(r.bad.sun_path, a[1]);
	r.shared = r.good;
	if ((e = pthread_create(&thread, NULL, unix_race_flipper, &r)))
		return e;
	for (long i = 0; i < n; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&r.shared, sizeof(r.shared)) < 0)
			failed++;
		if (lstat(a[1], &st) == 0) {
			at_bad++;
			unlink(a[1]);
		}
		if (lstat(a[0], &st) == 0) {
			at_good++;
			unlink(a[0]);
		}
		if (fd >= 0)
			close(fd);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	printf("made-at-bad %ld\n", at_bad);
	printf("made-at-good %ld\n", at_good);
	printf("failed %ld\n", failed);
	return 0;
}

int op_listen_tcp(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, e;

	parse_inet(a[0], a[1], &ss, &len);
	if ((e = bind_socket((struct sockaddr *)&ss, len, SOCK_STREAM, &fd)))
		return e;
	e = listen_and_count(fd, parse_seconds(a[2]));
	close(fd);
	return e;
}

/* listen-reuseport HOST PORT SECONDS: listen-tcp with SO_REUSEPORT set
 * before the bind: outside, the service whose port a squatter would
 * join; inside, the squatter. */
int op_listen_reuseport(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, e;

	parse_inet(a[0], a[1], &ss, &len);
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0) {
		e = errno;
		close(fd);
		return e;
	}
	e = listen_and_count(fd, parse_seconds(a[2]));
	close(fd);
	return e;
}

static int listen_unix(const char *name, bool abstract, const char *seconds)
{
	struct sockaddr_un sun;
	socklen_t len;
	int fd, e;

	if ((e = fill_sockaddr_un(&sun, &len, name, abstract)))
		return e;
	if ((e = bind_socket((struct sockaddr *)&sun, len, SOCK_STREAM, &fd)))
		return e;
	e = listen_and_count(fd, parse_seconds(seconds));
	close(fd);
	return e;
}

int op_listen_unix(char **a) { return listen_unix(a[0], false, a[1]); }
int op_listen_abstract(char **a) { return listen_unix(a[0], true, a[1]); }

int op_udp_send(char **a)
{
	struct sockaddr_storage ss;
	struct pollfd pfd;
	socklen_t len;
	char buf[MAX_SOCKET_READ];
	ssize_t n;
	int fd;

	parse_inet(a[0], a[1], &ss, &len);
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	n = sendto(fd, "probe\n", 6, 0, (struct sockaddr *)&ss, len);
	if (n < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	printf("sent %zd\n", n);
	fflush(stdout);
	/* A reply, if the peer sends one (netpeer does), within a second. */
	pfd = (struct pollfd){ fd, POLLIN, 0 };
	if (poll(&pfd, 1, 1000) > 0) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n > 0) {
			emit_bytes(buf, (size_t)n);
			end_partial_line();
		}
	}
	close(fd);
	return 0;
}

/* TCP Fast Open: the data-carrying send connects implicitly, which is the
 * point: it never passes through connect(2). */
enum fastopen_call { FASTOPEN_SENDTO, FASTOPEN_SENDMSG, FASTOPEN_SENDMMSG };

static int fastopen(char **a, enum fastopen_call call)
{
	struct sockaddr_storage ss;
	char data[] = "probe\n";
	struct iovec iov = { data, 6 };
	socklen_t len;
	ssize_t n;
	int fd;

	parse_inet(a[0], a[1], &ss, &len);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, IPPROTO_TCP);
	if (fd < 0)
		return errno;
	set_timeouts(fd, 10, 3);
	if (call == FASTOPEN_SENDTO) {
		n = sendto(fd, data, 6, MSG_FASTOPEN | MSG_NOSIGNAL, (struct sockaddr *)&ss, len);
	} else {
		struct msghdr msg;
		memset(&msg, 0, sizeof(msg));
		msg.msg_name = &ss;
		msg.msg_namelen = len;
		msg.msg_iov = &iov;
		msg.msg_iovlen = 1;
		if (call == FASTOPEN_SENDMSG) {
			n = sendmsg(fd, &msg, MSG_FASTOPEN | MSG_NOSIGNAL);
		} else {
			struct mmsghdr mm;
			memset(&mm, 0, sizeof(mm));
			mm.msg_hdr = msg;
			n = sendmmsg(fd, &mm, 1, MSG_FASTOPEN | MSG_NOSIGNAL);
			if (n == 1)
				n = mm.msg_len;
		}
	}
	if (n < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	printf("sent %zd\n", n);
	fflush(stdout);
	print_reply(fd);
	close(fd);
	return 0;
}

int op_fastopen(char **a) { return fastopen(a, FASTOPEN_SENDTO); }
int op_sendmsg_fastopen(char **a) { return fastopen(a, FASTOPEN_SENDMSG); }
int op_sendmmsg_fastopen(char **a) { return fastopen(a, FASTOPEN_SENDMMSG); }

/* connect-race: a second thread rewrites the sockaddr that connect() is
 * reading, between address 1 and address 2, as fast as it can. A checker
 * that reads the address, approves it, and lets the kernel read it again
 * (seccomp notify CONTINUE) loses this race some of the time. */
struct race {
	struct sockaddr_storage addr1, addr2, shared;
	socklen_t len;
	int stop;
};

static void *race_flipper(void *arg)
{
	struct race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		memcpy(&r->shared, &r->addr2, r->len);
		/* keep the compiler from dropping the store above as dead */
		__asm__ volatile("" ::: "memory");
		memcpy(&r->shared, &r->addr1, r->len);
		__asm__ volatile("" ::: "memory");
	}
	return NULL;
}

static void map_v4_to_v6(struct sockaddr_storage *ss)
{
	struct sockaddr_in v4 = *(struct sockaddr_in *)ss;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	v6->sin6_family = AF_INET6;
	v6->sin6_port = v4.sin_port;
	v6->sin6_addr.s6_addr[10] = 0xff;
	v6->sin6_addr.s6_addr[11] = 0xff;
	memcpy(&v6->sin6_addr.s6_addr[12], &v4.sin_addr, 4);
}

static bool same_inet(const struct sockaddr_storage *x, const struct sockaddr_storage *y)
{
	if (x->ss_family != y->ss_family)
		return false;
	if (x->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const void *)x, *b = (const void *)y;
		return a->sin_port == b->sin_port && a->sin_addr.s_addr == b->sin_addr.s_addr;
	}
	if (x->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const void *)x, *b = (const void *)y;
		return a->sin6_port == b->sin6_port &&
		       memcmp(&a->sin6_addr, &b->sin6_addr, sizeof(a->sin6_addr)) == 0;
	}
	return false;
}

int op_connect_race(char **a)
{
	static struct race r;
	long attempts = parse_long(a[4], "count");
	long to1 = 0, to2 = 0, failed = 0;
	socklen_t len1, len2;
	pthread_t thread;
	int e;

	parse_inet(a[0], a[1], &r.addr1, &len1);
	parse_inet(a[2], a[3], &r.addr2, &len2);
	/* One socket family for both: a v4 address meets a v6 one as
	 * ::ffff:a.b.c.d. */
	if (r.addr1.ss_family != r.addr2.ss_family) {
		if (r.addr1.ss_family == AF_INET)
			map_v4_to_v6(&r.addr1);
		else
			map_v4_to_v6(&r.addr2);
	}
	r.len = r.addr1.ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
	memcpy(&r.shared, &r.addr1, r.len);
	if ((e = pthread_create(&thread, NULL, race_flipper, &r)))
		return e;
	for (long i = 0; i < attempts; i++) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		int fd = socket(r.addr1.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0) {
			failed++;
			continue;
		}
		set_timeouts(fd, 1, 1);
		if (connect(fd, (struct sockaddr *)&r.shared, r.len) == 0 &&
		    getpeername(fd, (struct sockaddr *)&peer, &plen) == 0) {
			if (same_inet(&peer, &r.addr2))
				to2++;
			else if (same_inet(&peer, &r.addr1))
				to1++;
			else
				failed++; /* a torn address: neither */
		} else {
			failed++;
		}
		close(fd);
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	printf("connected-to-2 %ld\n", to2);
	printf("connected-to-1 %ld\n", to1);
	printf("failed %ld\n", failed);
	return 0;
}

/* thread-server HOST: a second thread binds HOST:0, listens, connects to
 * itself and exchanges a line, while the main thread only waits: the
 * supervisor must decide calls made by any thread, not only a process's
 * main one (tornado's, a Java server's). */
struct thread_server {
	struct sockaddr_storage ss;
	socklen_t len;
	int err;
};

static void *thread_server_run(void *arg)
{
	struct thread_server *t = arg;
	int lfd, c = -1, s = -1;
	char buf[8] = "";

	if ((t->err = bind_socket((struct sockaddr *)&t->ss, t->len, SOCK_STREAM, &lfd)))
		return NULL;
	t->len = sizeof(t->ss);
	if (listen(lfd, 4) < 0 || getsockname(lfd, (struct sockaddr *)&t->ss, &t->len) < 0 ||
	    (c = socket(t->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 ||
	    connect(c, (struct sockaddr *)&t->ss, t->len) < 0 ||
	    (s = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) < 0 || send(s, "hi\n", 3, MSG_NOSIGNAL) != 3 ||
	    recv(c, buf, sizeof(buf) - 1, 0) != 3)
		t->err = errno ? errno : EIO;
	if (s >= 0)
		close(s);
	if (c >= 0)
		close(c);
	close(lfd);
	return NULL;
}

int op_thread_server(char **a)
{
	struct thread_server t = { 0 };
	pthread_t thread;
	int e;

	parse_inet(a[0], "0", &t.ss, &t.len);
	if ((e = pthread_create(&thread, NULL, thread_server_run, &t)))
		return e;
	pthread_join(thread, NULL);
	if (!t.err)
		printf("served from a second thread\n");
	return t.err;
}

/* resolve NAME: getaddrinfo(NAME) as any program asks (the C library's
 * resolver, /etc/resolv.conf, nsswitch); prints "resolved" or "gai
 * EAI_...", then "ms N", the time it took. The lookup itself is the thing
 * tried: its answer is data, so the result is ok either way. */
int op_resolve(char **a)
{
	static const struct { int code; const char *name; } codes[] = {
		{ EAI_NONAME, "EAI_NONAME" }, { EAI_AGAIN, "EAI_AGAIN" }, { EAI_FAIL, "EAI_FAIL" },
		{ EAI_SYSTEM, "EAI_SYSTEM" }, { EAI_NODATA, "EAI_NODATA" }, { EAI_ADDRFAMILY, "EAI_ADDRFAMILY" },
	};
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
	double t0 = now_monotonic();
	int r = getaddrinfo(a[0], "80", &hints, &res);
	double ms = (now_monotonic() - t0) * 1000;
	const char *name = "EAI_OTHER";

	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (codes[i].code == r)
			name = codes[i].name;
	if (r == 0) {
		printf("resolved\n");
		freeaddrinfo(res);
	} else {
		printf("gai %s\n", name);
	}
	printf("ms %.0f\n", ms);
	return 0;
}

/* cycles HOST PORT N: N rounds of connect, read until the peer closes
 * (listen-tcp's "probe\n"), close; prints the microseconds per round. For
 * make bench: a connect-request-response cycle, plain or forwarded. */
int op_cycles(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	char buf[64];
	long n = parse_long(a[2], "rounds");
	struct timespec t0, t1;

	parse_inet(a[0], a[1], &ss, &len);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return errno;
		if (connect(fd, (struct sockaddr *)&ss, len) < 0) {
			int e = errno;
			close(fd);
			return e;
		}
		while (recv(fd, buf, sizeof(buf), 0) > 0)
			;
		close(fd);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / 1e3;
	printf("us per round %.2f\n", us / (double)n);
	return 0;
}

/* relay PORT TPORT [THOST]: the least a forward can be, for make bench's
 * floor: a listener on 127.0.0.1:PORT, and for each connection, one at a
 * time, a connection to THOST:TPORT (127.0.0.1) with the bytes copied both ways by
 * blocking reads and writes until both sides are done. No poll of other
 * connections, no pool, no check: what any forwarder pays at least. */
int op_relay(char **a)
{
	struct sockaddr_storage ls, ts;
	socklen_t llen, tlen;
	int lfd, e;
	static char buf[1 << 16];

	parse_inet("127.0.0.1", a[0], &ls, &llen);
	parse_inet(a[2] ? a[2] : "127.0.0.1", a[1], &ts, &tlen);
	if ((e = bind_socket((struct sockaddr *)&ls, llen, SOCK_STREAM, &lfd)))
		return e;
	if (listen(lfd, 128) < 0)
		return errno;
	printf("listening %d\n", bound_port(lfd));
	fflush(stdout);
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			return errno;
		int t = socket(ts.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (t < 0 || connect(t, (struct sockaddr *)&ts, tlen) < 0) {
			close(c);
			if (t >= 0)
				close(t);
			continue;
		}
		struct pollfd p[2] = { { .fd = c, .events = POLLIN }, { .fd = t, .events = POLLIN } };
		int open_ways = 2;
		while (open_ways) {
			if (poll(p, 2, -1) < 0)
				break;
			for (int i = 0; i < 2; i++) {
				if (!p[i].revents)
					continue;
				ssize_t n = recv(p[i].fd, buf, sizeof(buf), 0);
				int to = p[1 - i].fd;
				if (n <= 0) {
					(void)shutdown(to, SHUT_WR);
					p[i].fd = -1;
					open_ways--;
				} else if (send(to, buf, (size_t)n, MSG_NOSIGNAL) != n) {
					open_ways = 0;
				}
			}
		}
		close(c);
		close(t);
	}
}

/* sink HOST PORT: accepts one connection and reads it to its end;
 * prints the bytes. blast HOST PORT MIB: sends MIB mebibytes and prints
 * the rate once the sink has all of it (it closes). For make bench. */
int op_sink(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int lfd, e;
	static char buf[1 << 20];
	unsigned long long total = 0;

	if ((e = listen_tcp_on(a[0], a[1], 4, &ss, &len, &lfd)))
		return e;
	printf("listening %d\n", bound_port(lfd));
	fflush(stdout);
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0)
			break;
		total += (unsigned long long)n;
	}
	printf("received %llu\n", total);
	close(fd);
	close(lfd);
	return 0;
}

int op_blast(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	static char buf[1 << 20];
	long mib = parse_long(a[2], "MiB");
	struct timespec t0, t1;

	parse_inet(a[0], a[1], &ss, &len);
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&ss, len) < 0)
		return errno;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < mib; i++) {
		size_t off = 0;
		while (off < sizeof(buf)) {
			ssize_t n = send(fd, buf + off, sizeof(buf) - off, MSG_NOSIGNAL);
			if (n < 0)
				return errno;
			off += (size_t)n;
		}
	}
	shutdown(fd, SHUT_WR);
	while (recv(fd, buf, sizeof(buf), 0) > 0)
		;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("MB/s %.0f\n", (double)mib * 1048576.0 / 1e6 / s);
	close(fd);
	return 0;
}

/* unix-cycle PATH: what libuv's pipe tests do, twice: unlink PATH (its
 * result ignored), bind and listen there, chmod the socket by the name
 * getsockname() gives (uv_pipe_chmod), connect to it by PATH, close;
 * then unlink it (ignored again). Prints "sockname NAME" each round. */
int op_unix_cycle(char **a)
{
	for (int round = 0; round < 2; round++) {
		struct sockaddr_un sun, got;
		socklen_t len, glen = sizeof(got);
		struct stat st;
		int fd, c, e;

		(void)unlink(a[0]);
		if ((e = fill_sockaddr_un(&sun, &len, a[0], false)))
			return e;
		if ((e = bind_socket((struct sockaddr *)&sun, len, SOCK_STREAM, &fd)))
			return e;
		memset(&got, 0, sizeof(got));
		if (listen(fd, 4) < 0 || getsockname(fd, (struct sockaddr *)&got, &glen) < 0)
			goto fail;
		printf("sockname %s\n", got.sun_path);
		fflush(stdout);
		if (chmod(got.sun_path, 0700) < 0 || stat(got.sun_path, &st) < 0)
			goto fail;
		if ((st.st_mode & 0777) != 0700) {
			close(fd);
			return EIO;
		}
		c = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (c < 0 || connect(c, (struct sockaddr *)&sun, len) < 0) {
			e = errno;
			if (c >= 0)
				close(c);
			close(fd);
			return e;
		}
		close(c);
		close(fd);
		continue;
	fail:
		e = errno;
		close(fd);
		return e;
	}
	(void)unlink(a[0]);
	return 0;
}

/* ------------------------------------------------------------------ UDP */

static int udp_socket_bound(const struct sockaddr_storage *ss, socklen_t len, int *ret_fd)
{
	int fd = socket(ss->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (bind(fd, (const struct sockaddr *)ss, len) < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	set_timeouts(fd, 3, 3);
	*ret_fd = fd;
	return 0;
}

/* One datagram from fd to (to, len) by the call named: sendto, sendmsg,
 * sendmmsg, or connect then send. */
static int send_one(int fd, const char *how, const struct sockaddr_storage *to, socklen_t len, const char *data)
{
	struct iovec iov = { (void *)data, strlen(data) };
	struct msghdr msg;
	memset(&msg, 0, sizeof(msg));
	msg.msg_name = (void *)to;
	msg.msg_namelen = len;
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	ssize_t n;
	if (strcmp(how, "sendto") == 0)
		n = sendto(fd, data, strlen(data), 0, (const struct sockaddr *)to, len);
	else if (strcmp(how, "sendmsg") == 0)
		n = sendmsg(fd, &msg, 0);
	else if (strcmp(how, "sendmmsg") == 0) {
		struct mmsghdr mm[2];
		memset(mm, 0, sizeof(mm));
		mm[0].msg_hdr = msg;
		mm[1].msg_hdr = msg;
		n = sendmmsg(fd, mm, 2, 0);
		if (n == 2 && mm[0].msg_len == strlen(data) && mm[1].msg_len == strlen(data))
			n = (ssize_t)strlen(data);
		else if (n >= 0)
			return EPROTO;
	} else if (strcmp(how, "connect") == 0) {
		if (connect(fd, (const struct sockaddr *)to, len) < 0)
			return errno;
		n = send(fd, data, strlen(data), 0);
	} else
		usage_error("unknown way to send '%s' (sendto, sendmsg, sendmmsg, connect)", how);
	if (n < 0)
		return errno;
	return n == (ssize_t)strlen(data) ? 0 : EPROTO;
}

static int recv_is(int fd, const char *want, struct sockaddr_storage *ret_from, socklen_t *ret_len)
{
	char buf[256];
	socklen_t fl = sizeof(*ret_from);
	ssize_t n = recvfrom(fd, buf, sizeof(buf) - 1, 0, (struct sockaddr *)ret_from, &fl);
	if (n < 0)
		return errno;
	buf[n] = '\0';
	*ret_len = fl;
	return strcmp(buf, want) == 0 ? 0 : EPROTO;
}

/* udp-exchange HOST HOW: a server and a client of this process on HOST,
 * a datagram each way (the client's by HOW, the reply by sendto). */
int op_udp_exchange(char **a)
{
	struct sockaddr_storage ss, from;
	socklen_t len, fl;
	int srv, cli, e;

	parse_inet(a[0], "0", &ss, &len);
	if ((e = udp_socket_bound(&ss, len, &srv)))
		return e;
	len = sizeof(ss);
	getsockname(srv, (struct sockaddr *)&ss, &len);
	cli = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (cli < 0)
		return errno;
	set_timeouts(cli, 3, 3);
	if ((e = send_one(cli, a[1], &ss, len, "ping")) || (e = recv_is(srv, "ping", &from, &fl)))
		return e;
	if (strcmp(a[1], "sendmmsg") == 0 && (e = recv_is(srv, "ping", &from, &fl)))
		return e;
	if (sendto(srv, "pong", 4, 0, (struct sockaddr *)&from, fl) != 4)
		return errno;
	if ((e = recv_is(cli, "pong", &from, &fl)))
		return e;
	printf("exchanged\n");
	return 0;
}

/* udp-send-how HOW HOST PORT: one datagram to HOST PORT by HOW. */
/* udp-send-alone HOST PORT [recverr|connect]: one datagram from a new
 * socket (with IP_RECVERR or IPV6_RECVERR first, or connected first, when
 * asked), the port the socket has after it (a datagram the kernel sent
 * gave it one, an autobind: "port 0" says none was sent), and what the
 * kernel said of it within half a second: the error queued (recverr), the
 * error a connected socket's recv gets, or SO_ERROR. */
int op_udp_send_alone(char **a)
{
	struct sockaddr_storage ss, me;
	socklen_t len, mlen = sizeof(me);
	int one = 1;
	bool recverr = a[2] && strcmp(a[2], "recverr") == 0, connected = a[2] && strcmp(a[2], "connect") == 0;

	parse_inet(a[0], a[1], &ss, &len);
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if (recverr && (ss.ss_family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof(one))
						: setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof(one))) < 0)
		return errno;
	if (connected && connect(fd, (struct sockaddr *)&ss, len) < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	ssize_t n = connected ? send(fd, "probe\n", 6, 0) : sendto(fd, "probe\n", 6, 0, (struct sockaddr *)&ss, len);
	if (n < 0) {
		int e = errno;
		close(fd);
		return e;
	}
	if (getsockname(fd, (struct sockaddr *)&me, &mlen) < 0)
		return errno;
	printf("sent %zd\nport %u\n", n,
	       ntohs(me.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&me)->sin6_port : ((struct sockaddr_in *)&me)->sin_port));
	struct pollfd pfd = { .fd = fd, .events = connected ? POLLIN : 0 };
	int said = 0;
	if (poll(&pfd, 1, 500) > 0) {
		char buf[64], control[512];
		struct iovec iov = { buf, sizeof(buf) };
		struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = control, .msg_controllen = sizeof(control) };
		if (recverr && recvmsg(fd, &msg, MSG_ERRQUEUE | MSG_DONTWAIT) >= 0) {
			for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
				if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR) ||
				    (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR))
					said = (int)((struct sock_extended_err *)CMSG_DATA(c))->ee_errno;
		} else if (connected && recv(fd, buf, sizeof(buf), MSG_DONTWAIT) < 0)
			said = errno;
		else {
			socklen_t elen = sizeof(said);
			(void)getsockopt(fd, SOL_SOCKET, SO_ERROR, &said, &elen);
		}
	}
	printf("the kernel said %s\n", said ? errno_name(said) : "nothing");
	close(fd);
	return 0;
}

int op_udp_send_how(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	parse_inet(a[1], a[2], &ss, &len);
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	int e = send_one(fd, a[0], &ss, len, "probe\n");
	close(fd);
	return e;
}

/* udp-mmsg HOST FIRST SECOND: one sendmmsg of two datagrams, each to a
 * receiver of this process's own on HOST ("own") or to PORT on HOST.
 * Prints what sendmmsg returned, each message's msg_len, and how many
 * datagrams the own receiver got within half a second; -1 is the errno
 * line. */
int op_udp_mmsg(char **a)
{
	struct sockaddr_storage own, to[2];
	socklen_t own_len, len[2];
	int rcv, e;

	parse_inet(a[0], "0", &own, &own_len);
	if ((e = udp_socket_bound(&own, own_len, &rcv)))
		return e;
	own_len = sizeof(own);
	if (getsockname(rcv, (struct sockaddr *)&own, &own_len) < 0)
		return errno;
	for (int i = 0; i < 2; i++) {
		if (strcmp(a[1 + i], "own") == 0) {
			to[i] = own;
			len[i] = own_len;
		} else
			parse_inet(a[0], a[1 + i], &to[i], &len[i]);
	}
	int fd = socket(own.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	struct iovec iov[2] = { { "first", 5 }, { "second", 6 } };
	struct mmsghdr mm[2];
	memset(mm, 0, sizeof(mm));
	for (int i = 0; i < 2; i++) {
		mm[i].msg_hdr.msg_name = &to[i];
		mm[i].msg_hdr.msg_namelen = len[i];
		mm[i].msg_hdr.msg_iov = &iov[i];
		mm[i].msg_hdr.msg_iovlen = 1;
	}
	int n = sendmmsg(fd, mm, 2, 0);
	e = n < 0 ? errno : 0;
	printf("sendmmsg returned %d\nmsg_len %u %u\n", n, mm[0].msg_len, mm[1].msg_len);
	int got = 0;
	char buf[64];
	struct pollfd pfd = { .fd = rcv, .events = POLLIN };
	while (poll(&pfd, 1, 500) > 0) {
		ssize_t r = recv(rcv, buf, sizeof(buf) - 1, MSG_DONTWAIT);
		if (r < 0)
			break;
		buf[r] = '\0';
		printf("own received %s\n", buf);
		got++;
	}
	printf("own received %d\n", got);
	close(fd);
	close(rcv);
	return e;
}

/* dgram-pair: a Unix datagram socketpair, a datagram each way. */
int op_dgram_pair(char **a)
{
	int sv[2];
	char buf[8];
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errno;
	if (send(sv[0], "ping", 4, 0) != 4 || recv(sv[1], buf, sizeof(buf), 0) != 4 ||
	    send(sv[1], "pong", 4, 0) != 4 || recv(sv[0], buf, sizeof(buf), 0) != 4)
		return errno ? errno : EPROTO;
	printf("exchanged\n");
	return 0;
}

/* udp-race HOST1 PORT1 HOST2 PORT2 N: N sendto()s to HOST1 PORT1 while a
 * second thread rewrites the address to HOST2 PORT2 and back as fast as
 * it can (THREATS 39). Prints how many were sent and refused. */
int op_udp_race(char **a)
{
	static struct race r;
	long n = parse_long(a[4], "count"), sent = 0, refused = 0;
	socklen_t len1, len2;
	pthread_t thread;
	int e;

	parse_inet(a[0], a[1], &r.addr1, &len1);
	parse_inet(a[2], a[3], &r.addr2, &len2);
	if (r.addr1.ss_family != r.addr2.ss_family)
		usage_error("both addresses of one family");
	/* PORT1 0: a socket of this process's own, on HOST1. */
	int own = -1;
	if (strcmp(a[1], "0") == 0) {
		if ((e = udp_socket_bound(&r.addr1, len1, &own)))
			return e;
		len1 = sizeof(r.addr1);
		getsockname(own, (struct sockaddr *)&r.addr1, &len1);
	}
	r.len = len1;
	memcpy(&r.shared, &r.addr1, r.len);
	int fd = socket(r.addr1.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	if ((e = pthread_create(&thread, NULL, race_flipper, &r)))
		return e;
	for (long i = 0; i < n; i++) {
		if (sendto(fd, "race", 4, 0, (struct sockaddr *)&r.shared, r.len) == 4)
			sent++;
		else
			refused++;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(thread, NULL);
	printf("sent %ld refused %ld\n", sent, refused);
	close(fd);
	if (own >= 0)
		close(own);
	return 0;
}

/* udp-pingpong HOST N HOW: N round trips between two sockets of this
 * process, each way by sendto with an address (HOW sendto) or on
 * connected sockets (HOW connected); prints microseconds per datagram. */
int op_udp_pingpong(char **a)
{
	struct sockaddr_storage sa, sb;
	socklen_t la, lb;
	int x, y, e;
	bool connected = strcmp(a[2], "connected") == 0;
	long n = parse_long(a[1], "rounds");
	char buf[64];

	parse_inet(a[0], "0", &sa, &la);
	sb = sa;
	lb = la;
	if ((e = udp_socket_bound(&sa, la, &x)) || (e = udp_socket_bound(&sb, lb, &y)))
		return e;
	la = sizeof(sa);
	lb = sizeof(sb);
	getsockname(x, (struct sockaddr *)&sa, &la);
	getsockname(y, (struct sockaddr *)&sb, &lb);
	if (connected && (connect(x, (struct sockaddr *)&sb, lb) < 0 || connect(y, (struct sockaddr *)&sa, la) < 0))
		return errno;
	double t0 = now_monotonic();
	for (long i = 0; i < n; i++) {
		ssize_t s1 = connected ? send(x, "ping", 4, 0) : sendto(x, "ping", 4, 0, (struct sockaddr *)&sb, lb);
		if (s1 != 4 || recv(y, buf, sizeof(buf), 0) != 4)
			return errno ? errno : EPROTO;
		ssize_t s2 = connected ? send(y, "pong", 4, 0) : sendto(y, "pong", 4, 0, (struct sockaddr *)&sa, la);
		if (s2 != 4 || recv(x, buf, sizeof(buf), 0) != 4)
			return errno ? errno : EPROTO;
	}
	double us = (now_monotonic() - t0) * 1e6;
	printf("us per datagram %.2f\n", us / (double)(2 * n));
	return 0;
}

/* bind-udp HOST PORT: a UDP socket with SO_REUSEADDR and SO_REUSEPORT
 * bound there (which would share an outside socket's port); prints the
 * port it has (PORT 0: one nobody holds now). */
int op_bind_udp(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int on = 1;
	parse_inet(a[0], a[1], &ss, &len);
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on));
	int e = bind(fd, (struct sockaddr *)&ss, len) < 0 ? errno : 0;
	if (!e)
		printf("bound %d\n", bound_port(fd));
	close(fd);
	return e;
}

/* ip-options HOP: IP_OPTIONS with a loose source route through HOP on a
 * UDP socket (a datagram or SYN would go to HOP first). */
int op_ip_options(char **a)
{
	unsigned char opt[8] = { 0x83 /* LSRR */, 7, 4, 0, 0, 0, 0, 0 /* end */ };
	struct in_addr hop;
	if (inet_pton(AF_INET, a[0], &hop) != 1)
		usage_error("bad IPv4 address '%s'", a[0]);
	memcpy(opt + 3, &hop, 4);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	int e = setsockopt(fd, IPPROTO_IP, IP_OPTIONS, opt, sizeof(opt)) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* ipv6-rthdr SEGMENT: a segment routing header (type 4, which needs no
 * privilege) naming SEGMENT on a UDP socket of IPv6: its datagrams and
 * SYNs would go to SEGMENT first, whatever address they name. */
int op_ipv6_rthdr(char **a)
{
	unsigned char srh[8 + 16] = { 0, 2, 4, 0, 0, 0, 0, 0 };
	if (inet_pton(AF_INET6, a[0], srh + 8) != 1)
		usage_error("bad IPv6 address '%s'", a[0]);
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	int e = setsockopt(fd, IPPROTO_IPV6, 57 /* IPV6_RTHDR */, srh, sizeof(srh)) < 0 ? errno : 0;
	close(fd);
	return e;
}

/* unix-dgram-sendto PATH: a datagram from a Unix datagram socketpair to
 * the socket file PATH (socket() of a Unix datagram may be refused; a
 * socketpair never is). */
int op_unix_dgram_sendto(char **a)
{
	struct sockaddr_un sun;
	socklen_t len;
	int sv[2], e;
	if ((e = fill_sockaddr_un(&sun, &len, a[0], false)))
		return e;
	if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0)
		return errno;
	e = sendto(sv[0], "probe\n", 6, 0, (struct sockaddr *)&sun, len) < 0 ? errno : 0;
	close(sv[0]);
	close(sv[1]);
	return e;
}

/* connect-spray HOST PORT SECONDS: connects again and again for SECONDS
 * (a listener outside comes and goes there), sending "x" on each
 * connection made; prints how many were made, refused by the kernel
 * (nobody there) and refused otherwise. */
int op_connect_spray(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	long seconds = parse_long(a[2], "seconds");
	long made = 0, nobody = 0, refused = 0;
	struct timespec t0, t;

	parse_inet(a[0], a[1], &ss, &len);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			return errno;
		if (connect(fd, (struct sockaddr *)&ss, len) == 0) {
			made++;
			(void)send(fd, "x", 1, MSG_NOSIGNAL);
		} else if (errno == ECONNREFUSED)
			nobody++;
		else
			refused++;
		close(fd);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while (t.tv_sec - t0.tv_sec < seconds);
	printf("made %ld\nnobody %ld\nrefused %ld\n", made, nobody, refused);
	return 0;
}

/* connect-deferred HOST PORT SECONDS: a listener of its own on HOST:PORT,
 * and a connect to it with TCP_FASTOPEN_CONNECT and TCP_FASTOPEN_NO_COOKIE,
 * which the kernel answers at once, sending no SYN until the first write;
 * then the listener is closed and, SECONDS later, "deferred" sent: its
 * SYN goes to whatever listens on the port by then. The errno is the
 * send's. */
int op_connect_deferred(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int lfd, e, on = 1;

	long seconds = parse_long(a[2], "seconds");
	if ((e = listen_tcp_on(a[0], a[1], 8, &ss, &len, &lfd)))
		return e;
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &on, sizeof(on)) < 0 ||
	    setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_NO_COOKIE, &on, sizeof(on)) < 0)
		return errno;
	if (connect(fd, (struct sockaddr *)&ss, len) < 0)
		return errno;
	printf("connected\n");
	close(lfd);
	say_closed("listener");
	sleep((unsigned)seconds);
	if (send(fd, "deferred\n", 9, MSG_NOSIGNAL) < 0)
		return errno;
	printf("sent\n");
	close(fd);
	return 0;
}

/* udp-held HOST PORT cork|more: a receiver of its own on HOST:PORT, and
 * a datagram to it held back in another socket (UDP_CORK, or MSG_MORE
 * with its address); then the receiver is closed and, two seconds later,
 * the datagram let go (the uncork, or a send() naming no address): the
 * kernel sends it then, to whatever has the port by then. */
int op_udp_held(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, off = 0, rfd;
	bool cork = strcmp(a[2], "cork") == 0;

	parse_inet(a[0], a[1], &ss, &len);
	rfd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (rfd < 0 || fd < 0 || setsockopt(rfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(rfd, (struct sockaddr *)&ss, len) < 0)
		return errno;
	if (cork && setsockopt(fd, IPPROTO_UDP, UDP_CORK, &one, sizeof(one)) < 0)
		return errno;
	if (sendto(fd, "held-", 5, cork ? 0 : MSG_MORE, (struct sockaddr *)&ss, len) < 0)
		return errno;
	printf("held\n");
	close(rfd);
	say_closed("receiver");
	sleep(2);
	if (cork ? setsockopt(fd, IPPROTO_UDP, UDP_CORK, &off, sizeof(off)) < 0 : send(fd, "back\n", 5, 0) < 0)
		return errno;
	printf("let go\n");
	close(fd);
	return 0;
}

/* send-killed: a blocking sendmsg on a Unix stream socket whose buffer
 * is full, by a child killed while it waits; then the peer reads all
 * there is. A send whose caller is gone never happens: "marker 0". */
int op_send_killed(char **a)
{
	int sv[2], small = 4096;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 ||
	    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)) < 0)
		return errno;
	char fill[4096];
	memset(fill, 'f', sizeof(fill));
	while (send(sv[0], fill, sizeof(fill), MSG_DONTWAIT) > 0)
		;
	if (errno != EAGAIN)
		return errno;
	pid_t child = fork();
	if (child < 0)
		return errno;
	if (child == 0) {
		struct iovec iov = { .iov_base = "MARKER", .iov_len = 6 };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
		(void)sendmsg(sv[0], &m, 0);
		_exit(0);
	}
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	kill(child, SIGKILL);
	int status;
	waitpid(child, &status, 0);
	printf("killed %s\n", WIFSIGNALED(status) ? "while it waited" : "no: it had sent");
	size_t seen = 0, got = 0;
	char buf[4096];
	for (int round = 0; round < 3; round++) {
		ssize_t n;
		while ((n = recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
			got += (size_t)n;
			for (ssize_t i = 0; i < n; i++)
				seen += buf[i] == 'M';
		}
		nanosleep(&ts, NULL);
	}
	printf("read %zu\nmarker %zu\n", got, seen);
	return 0;
}

/* The crowd of connect-armed: blocking connects to an abstract Unix
 * listener of the probe's own whose queue is full (listen(0), one
 * connection in it), each from a thread of its own, waiting until the
 * listener takes one, two seconds after the TCP connect began (past the
 * kernel's first retransmission of its SYN). Where that connect waits
 * too, its TCP listener is closed meanwhile, by the thread that lets the
 * crowd in. */
struct crowd {
	struct sockaddr_un sun;
	socklen_t len;
	int lfd;
	int tcp[2];		/* the TCP listener and the connection filling it */
};

static void *crowd_member(void *arg)
{
	const struct crowd *c = arg;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		(void)connect(fd, (const struct sockaddr *)&c->sun, c->len);
	return NULL;
}

static void *crowd_door(void *arg)
{
	const struct crowd *c = arg;
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	close(c->tcp[0]);
	close(c->tcp[1]);
	make_closed_file();
	sleep(2);
	(void)accept4(c->lfd, NULL, NULL, SOCK_CLOEXEC);
	return NULL;
}

static int gather_crowd(struct crowd *c, long n)
{
	int e;
	char name[64];
	snprintf(name, sizeof(name), "stockade-probe-crowd-%d", (int)getpid());
	if ((e = fill_sockaddr_un(&c->sun, &c->len, name, true)))
		return e;
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int fill = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->lfd < 0 || fill < 0 || bind(c->lfd, (struct sockaddr *)&c->sun, c->len) < 0 || listen(c->lfd, 0) < 0 ||
	    connect(fill, (struct sockaddr *)&c->sun, c->len) < 0)
		return errno;
	pthread_t t;
	for (long i = 0; i < n; i++)
		if ((e = pthread_create(&t, NULL, crowd_member, c)))
			return e;
	/* Until every one of them waits. */
	struct timespec ts = { 0, 300 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	printf("crowd of %ld waiting\n", n);
	return 0;
}

/* connect-armed HOST PORT SECONDS [CROWD]: a listener of its own on
 * HOST:PORT with the shortest queue (listen(0)), one connection to fill
 * it, and a non-blocking connect whose SYN the full queue drops; then the
 * listener is closed and the last connect waited for, up to SECONDS: the
 * kernel sends its SYN again a second later, to whatever listens on the
 * port then. Made, it sends "armed" there. With CROWD, CROWD other
 * connects wait meanwhile (struct crowd), made first. Prints whether it
 * was left in progress; the errno is the last connect's outcome. */
int op_connect_armed(char **a)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int lfd, e;

	long seconds = parse_long(a[2], "seconds");
	long n_crowd = a[3] ? parse_long(a[3], "crowd") : 0;
	struct crowd crowd = { .lfd = -1 };
	if (n_crowd && (e = gather_crowd(&crowd, n_crowd)))
		return e;
	if ((e = listen_tcp_on(a[0], a[1], 0, &ss, &len, &lfd)))
		return e;
	int fill = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fill < 0 || connect(fill, (struct sockaddr *)&ss, len) < 0)
		return errno;
	int armed = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (armed < 0)
		return errno;
	crowd.tcp[0] = lfd;
	crowd.tcp[1] = fill;
	pthread_t door;
	if (n_crowd && (e = pthread_create(&door, NULL, crowd_door, &crowd)))
		return e;
	if (connect(armed, (struct sockaddr *)&ss, len) == 0)
		return EISCONN;
	if (errno != EINPROGRESS)
		return errno;
	struct tcp_info ti;
	socklen_t tl = sizeof(ti);
	if (getsockopt(armed, IPPROTO_TCP, TCP_INFO, &ti, &tl) < 0)
		return errno;
	printf("%s\n", ti.tcpi_state == TCP_SYN_SENT ? "in progress" : "made at once");
	if (!n_crowd) {
		close(lfd);
		close(fill);
		say_closed("listener");
	} else {
		printf("listener closed\n");
		fflush(stdout);
	}
	struct pollfd p = { .fd = armed, .events = POLLOUT };
	if (poll(&p, 1, (int)seconds * 1000) <= 0)
		return ETIMEDOUT;
	int err = 0;
	socklen_t el = sizeof(err);
	if (getsockopt(armed, SOL_SOCKET, SO_ERROR, &err, &el) < 0)
		return errno;
	if (err)
		return err;
	(void)send(armed, "armed\n", 6, MSG_NOSIGNAL);
	printf("made\n");
	close(armed);
	return 0;
}

/* session-hello PATH: a session's control socket (SOCK_SEQPACKET) said
 * hello to; prints the answer's type ("hello", or "error" with its
 * message) and reports connect's errno, or EPROTO for an answer other
 * than hello. */
int op_session_hello(char **a)
{
	struct sockaddr_un sun;
	socklen_t len;
	int e;

	if ((e = fill_sockaddr_un(&sun, &len, a[0], false)))
		return e;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sun, len) < 0)
		return errno;
	static const char hello[] = "hello\0version=1";
	if (send(fd, hello, sizeof(hello), MSG_NOSIGNAL) < 0)
		return errno;
	char buf[4096];
	ssize_t n = recv(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return n < 0 ? errno : EPIPE;
	buf[n] = '\0';
	printf("answer %s", buf);
	for (ssize_t i = (ssize_t)strlen(buf) + 1; i < n; i += (ssize_t)strlen(buf + i) + 1)
		printf(" %s", buf + i);
	printf("\n");
	return strcmp(buf, "hello") == 0 ? 0 : EPROTO;
}
