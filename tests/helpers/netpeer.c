/* netpeer: a listener that counts who reached it, for the network tests.
 *
 *     netpeer tcp ADDR PORT COUNTFILE
 *     netpeer udp ADDR PORT COUNTFILE
 *     netpeer unix PATH COUNTFILE
 *     netpeer abstract NAME COUNTFILE
 *
 * It listens, writes "0" to COUNTFILE, prints "port N" (tcp and udp: the
 * real port, so PORT may be 0) and then "ready" on stdout. Then, until
 * SIGTERM or SIGINT: each accepted connection (each datagram, for udp)
 * increments the count, which is written to COUNTFILE (a temporary file
 * renamed over it, so a reader never sees a partial number) before the
 * peer gets "netpeer\n" and the connection is closed. A test compares the
 * count before and after: the oracle that a refused connect really never
 * arrived. A unix socket file is removed on exit.
 *
 * Addresses are numeric (IPv4, IPv6, with %scope). Errors: exit 125. */

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define EXIT_SETUP 125

static volatile sig_atomic_t stopping;
static const char *count_file;
static const char *unix_path;

__attribute__((noreturn, format(printf, 1, 2))) static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("netpeer: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_SETUP);
}

static void on_stop(int sig)
{
	stopping = 1;
}

/* Wait until fd is readable or a stop signal came. The stop signals stay
 * blocked except inside ppoll(), so one arriving between the check of
 * "stopping" and the wait cannot be lost. */
static bool wait_readable(int fd)
{
	sigset_t unblocked;
	struct pollfd pfd = { fd, POLLIN, 0 };

	sigemptyset(&unblocked);
	while (!stopping) {
		if (ppoll(&pfd, 1, NULL, &unblocked) > 0)
			return true;
		if (errno != EINTR)
			die("cannot wait: %s", strerror(errno));
	}
	return false;
}

static void write_count(unsigned long count)
{
	char tmp[4096], buf[32];
	int fd, len;

	snprintf(tmp, sizeof(tmp), "%s.tmp", count_file);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("cannot write '%s': %s", tmp, strerror(errno));
	len = snprintf(buf, sizeof(buf), "%lu\n", count);
	if (write(fd, buf, (size_t)len) != len || close(fd) < 0)
		die("cannot write '%s': %s", tmp, strerror(errno));
	if (rename(tmp, count_file) < 0)
		die("cannot rename '%s' to '%s': %s", tmp, count_file, strerror(errno));
}

static int inet_socket(const char *addr, const char *port, int type)
{
	struct addrinfo hints, *res;
	int one = 1, fd, r;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	hints.ai_socktype = type;
	r = getaddrinfo(addr, port, &hints, &res);
	if (r)
		die("bad address '%s' port '%s': %s", addr, port, gai_strerror(r));
	fd = socket(res->ai_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("cannot make a socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, res->ai_addr, res->ai_addrlen) < 0)
		die("cannot bind '%s' port '%s': %s", addr, port, strerror(errno));
	freeaddrinfo(res);
	return fd;
}

static int unix_socket(const char *name, bool abstract)
{
	struct sockaddr_un sun;
	size_t len = strlen(name);
	struct stat st;
	int fd;

	if (len + 1 > sizeof(sun.sun_path))
		die("name too long: '%s'", name);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path + (abstract ? 1 : 0), name, len);
	/* A stale socket of an earlier run; never anything else. */
	if (!abstract && lstat(name, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(name);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("cannot make a socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sun,
		 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + 1)) < 0)
		die("cannot bind '%s%s': %s", abstract ? "@" : "", name, strerror(errno));
	if (!abstract)
		unix_path = name;
	return fd;
}

static void print_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int port = -1;

	if (getsockname(fd, (struct sockaddr *)&ss, &len) == 0) {
		if (ss.ss_family == AF_INET)
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		else if (ss.ss_family == AF_INET6)
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	}
	printf("port %d\n", port);
}

static void serve_stream(int fd)
{
	unsigned long count = 0;

	if (listen(fd, 128) < 0)
		die("cannot listen: %s", strerror(errno));
	printf("ready\n");
	fflush(stdout);
	while (wait_readable(fd)) {
		int conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (conn < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED || errno == EMFILE ||
			    errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				continue;
			die("cannot accept: %s", strerror(errno));
		}
		/* Count first: a client that got the reply finds it counted. */
		write_count(++count);
		if (send(conn, "netpeer\n", 8, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
			/* the client may be gone already; it still arrived */
		}
		close(conn);
	}
}

static void serve_datagrams(int fd)
{
	unsigned long count = 0;

	printf("ready\n");
	fflush(stdout);
	while (wait_readable(fd)) {
		struct sockaddr_storage from;
		socklen_t from_len = sizeof(from);
		char buf[65536];
		ssize_t n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&from,
				     &from_len);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			die("cannot receive: %s", strerror(errno));
		}
		write_count(++count);
		sendto(fd, "netpeer\n", 8, MSG_DONTWAIT, (struct sockaddr *)&from, from_len);
	}
}

static void usage(void)
{
	die("usage: netpeer tcp|udp ADDR PORT COUNTFILE | netpeer unix|abstract NAME COUNTFILE");
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t stop_signals;
	bool datagram = false;
	int fd;

	if (argc < 2)
		usage();
	if ((strcmp(argv[1], "tcp") == 0 || strcmp(argv[1], "udp") == 0) && argc == 5) {
		datagram = argv[1][0] == 'u';
		fd = inet_socket(argv[2], argv[3], datagram ? SOCK_DGRAM : SOCK_STREAM);
		count_file = argv[4];
	} else if ((strcmp(argv[1], "unix") == 0 || strcmp(argv[1], "abstract") == 0) && argc == 4) {
		fd = unix_socket(argv[2], argv[1][0] == 'a');
		count_file = argv[3];
	} else {
		usage();
	}

	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	sigprocmask(SIG_BLOCK, &stop_signals, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	write_count(0);
	if (argv[1][0] == 't' || datagram)
		print_port(fd);
	if (datagram)
		serve_datagrams(fd);
	else
		serve_stream(fd);

	close(fd);
	if (unix_path)
		unlink(unix_path);
	return 0;
}
