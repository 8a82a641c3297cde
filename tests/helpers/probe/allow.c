/* The ops make bench times network allow with: an HTTP server that reads
 * a request's head and answers, its clients (a request per connection),
 * and lookups of many names. */
#include "probe.h"

static int tcp_connect(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *ai = NULL;
	if (getaddrinfo(host, port, &hints, &ai) != 0 || !ai)
		return -EINVAL;
	int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int e = fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ? errno : 0;
	freeaddrinfo(ai);
	if (e) {
		if (fd >= 0)
			close(fd);
		return -e;
	}
	return fd;
}

/* http-serve HOST PORT: for each connection, the request's head read to
 * its empty line, a short response, the connection closed. For ever. */
int op_http_serve(char **a)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV }, *ai = NULL;
	if (getaddrinfo(a[0], a[1], &hints, &ai) != 0 || !ai)
		return EINVAL;
	int lfd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int one = 1;
	(void)setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (lfd < 0 || bind(lfd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(lfd, 128) < 0)
		return errno;
	freeaddrinfo(ai);
	printf("listening\n");
	fflush(stdout);
	static const char reply[] = "HTTP/1.0 200 OK\r\nContent-Length: 3\r\n\r\nok\n";
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (c < 0)
			continue;
		char buf[4096];
		size_t have = 0;
		for (;;) {
			ssize_t n = recv(c, buf + have, sizeof(buf) - 1 - have, 0);
			if (n <= 0)
				break;
			have += (size_t)n;
			buf[have] = '\0';
			if (strstr(buf, "\r\n\r\n") || have == sizeof(buf) - 1)
				break;
		}
		(void)send(c, reply, sizeof(reply) - 1, MSG_NOSIGNAL);
		close(c);
	}
}

/* http-cycles HOST PORT NAME N: N rounds of connect, a GET with Host NAME,
 * the response read to its end, close; prints the microseconds per round. */
int op_http_cycles(char **a)
{
	long n = parse_long(a[3], "rounds");
	char req[512];
	int len = snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", a[2]);
	double t0 = now_monotonic();
	for (long i = 0; i < n; i++) {
		int fd = tcp_connect(a[0], a[1]);
		if (fd < 0)
			return -fd;
		if (send(fd, req, (size_t)len, MSG_NOSIGNAL) != len) {
			close(fd);
			return errno;
		}
		char buf[256];
		while (recv(fd, buf, sizeof(buf), 0) > 0)
			;
		close(fd);
	}
	printf("us per round %.2f\n", (now_monotonic() - t0) * 1e6 / (double)n);
	return 0;
}

/* resolve-many SUFFIX N: getaddrinfo (IPv4) of N names never asked before
 * (I-PID.SUFFIX), or with "same" instead of N's names, of SUFFIX itself N
 * times; prints the microseconds per lookup. */
int op_resolve_many(char **a)
{
	long n = parse_long(a[1], "lookups");
	bool same = a[2] && strcmp(a[2], "same") == 0;
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *res = NULL;
	double t0 = now_monotonic();
	for (long i = 0; i < n; i++) {
		char name[300];
		if (same)
			snprintf(name, sizeof(name), "%s", a[0]);
		else
			snprintf(name, sizeof(name), "%ld-%d.%s", i, (int)getpid(), a[0]);
		int r = getaddrinfo(name, "443", &hints, &res);
		if (r != 0) {
			printf("gai %s: %s\n", name, gai_strerror(r));
			return EINVAL;
		}
		freeaddrinfo(res);
	}
	printf("us per lookup %.1f\n", (now_monotonic() - t0) * 1e6 / (double)n);
	return 0;
}
