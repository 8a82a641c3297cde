/* supervise: the socket address parser (every family and every short or
 * malformed buffer the kernel would refuse), the spellings of one address
 * that must get one verdict, and the supervisor's verdict as a table:
 * call, network mode, address and the facts stockade could find out, to
 * allow, refuse (a denial of stockade's) or answer (as the kernel would). */
#include "policy/allow.h"
#include "supervise/supervise.h"

#include <arpa/inet.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>
#include <sys/un.h>

#include "lib/util.h"
#include "tests/tap.h"

static size_t sockaddr_of(const char *spec, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (streq(spec, "unix:")) {
		/* no name at all: the kernel autobinds */
		ss->ss_family = AF_UNIX;
		return offsetof(struct sockaddr_un, sun_path);
	}
	if (str_has_prefix(spec, "unix:@")) {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;
		un->sun_family = AF_UNIX;
		size_t n = strlen(spec + 6);
		memcpy(un->sun_path + 1, spec + 6, n);
		return offsetof(struct sockaddr_un, sun_path) + 1 + n;
	}
	if (str_has_prefix(spec, "unix:")) {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;
		un->sun_family = AF_UNIX;
		size_t n = strlen(spec + 5);
		memcpy(un->sun_path, spec + 5, n);
		return offsetof(struct sockaddr_un, sun_path) + n + 1;
	}
	const char *colon = strrchr(spec, ':');
	_cleanup_free_ char *host = xstrndup(spec, (size_t)(colon - spec));
	unsigned short port = (unsigned short)atoi(colon + 1);
	if (host[0] == '[') {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		host[strlen(host) - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1)
			abort();
		return sizeof(*in6);
	}
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	in->sin_family = AF_INET;
	in->sin_port = htons(port);
	if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
		abort();
	return sizeof(*in);
}

static struct net_addr addr_of(const char *spec)
{
	struct sockaddr_storage ss;
	size_t len = sockaddr_of(spec, &ss);
	struct net_addr a;
	if (net_addr_parse(&ss, len, &a) < 0)
		abort();
	return a;
}

static void test_parse(void)
{
	struct sockaddr_storage ss;
	struct net_addr a;
	char buf[160];

	size_t len = sockaddr_of("127.0.0.1:5432", &ss);
	is_int(net_addr_parse(&ss, len, &a), 0, "an IPv4 address parses");
	ok(a.family == AF_INET && a.port == 5432 && net_addr_is_loopback(&a), "127.0.0.1:5432: inet, port, loopback");
	net_addr_format(&a, buf, sizeof(buf));
	is_str(buf, "127.0.0.1:5432", "and prints as written");
	is_int(net_addr_parse(&ss, len - 1, &a), -EINVAL, "one byte short of a sockaddr_in: EINVAL, as the kernel says");

	len = sockaddr_of("[::1]:80", &ss);
	is_int(net_addr_parse(&ss, len, &a), 0, "an IPv6 address parses");
	ok(a.family == AF_INET6 && a.port == 80 && net_addr_is_loopback(&a), "[::1]:80: inet6, loopback");
	net_addr_format(&a, buf, sizeof(buf));
	is_str(buf, "[::1]:80", "and prints in brackets");
	is_int(net_addr_parse(&ss, len - 1, &a), -EINVAL, "a short sockaddr_in6: EINVAL");
	((struct sockaddr_in6 *)&ss)->sin6_scope_id = 3;
	net_addr_parse(&ss, len, &a);
	net_addr_format(&a, buf, sizeof(buf));
	is_str(buf, "[::1%3]:80", "a scope id prints with the address");

	len = sockaddr_of("unix:/run/docker.sock", &ss);
	is_int(net_addr_parse(&ss, len, &a), 0, "a Unix path parses");
	ok(a.family == AF_UNIX && !a.abstract && !a.unnamed && streq(a.path, "/run/docker.sock"), "its path");
	net_addr_format(&a, buf, sizeof(buf));
	is_str(buf, "unix:/run/docker.sock", "and prints with unix:");

	len = sockaddr_of("unix:@stockade-x", &ss);
	((struct sockaddr_un *)&ss)->sun_path[5] = '\0';	/* an abstract name may hold a NUL */
	is_int(net_addr_parse(&ss, len, &a), 0, "an abstract name parses");
	ok(a.abstract && a.path_len == strlen("stockade-x") && a.path[4] == '\0', "its bytes, the NUL kept, by length");
	net_addr_format(&a, buf, sizeof(buf));
	is_str(buf, "unix:@stoc?ade-x", "a NUL or control byte prints as '?'");

	struct sockaddr_un un = { .sun_family = AF_UNIX };
	is_int(net_addr_parse(&un, offsetof(struct sockaddr_un, sun_path), &a), 0, "a bare family parses");
	ok(a.unnamed, "as an unnamed socket (autobind)");
	is_int(net_addr_parse(&un, sizeof(un) + 1, &a), -EINVAL, "longer than a sockaddr_un: EINVAL");
	memset(un.sun_path, 'a', sizeof(un.sun_path));
	is_int(net_addr_parse(&un, sizeof(un), &a), 0, "a path that fills sun_path without a NUL parses");
	is_int(a.path_len, sizeof(un.sun_path), "to its whole length");
	is_int(net_addr_parse(&un, 1, &a), -EAFNOSUPPORT, "a buffer shorter than a family: EAFNOSUPPORT");
	is_int(net_addr_parse(&un, 0, &a), -EAFNOSUPPORT, "an empty buffer: EAFNOSUPPORT");
	sa_family_t other = AF_PACKET;
	is_int(net_addr_parse(&other, sizeof(other), &a), 0, "another family parses (the filter decides families)");
	net_addr_format(&a, buf, sizeof(buf));
	is_int(a.family, AF_PACKET, "as that family");
}

/* Every spelling of loopback and of "this host" comes to the same
 * address once unmapped. */
static void test_spellings(void)
{
	static const char *const loopback[] = {
		"127.0.0.1:1", "127.1.2.3:1", "[::ffff:127.0.0.1]:1", "[::ffff:7f00:1]:1", "[::127.0.0.1]:1", "[::1]:1",
	};
	for (size_t i = 0; i < ARRAY_SIZE(loopback); i++) {
		struct net_addr a = addr_of(loopback[i]);
		net_addr_unmap(&a);
		ok(net_addr_is_loopback(&a) && !net_addr_is_wildcard(&a), "%s is loopback", loopback[i]);
	}
	static const char *const wildcard[] = { "0.0.0.0:1", "[::]:1", "[::ffff:0.0.0.0]:1" };
	for (size_t i = 0; i < ARRAY_SIZE(wildcard); i++) {
		struct net_addr a = addr_of(wildcard[i]);
		net_addr_unmap(&a);
		ok(net_addr_is_wildcard(&a) && !net_addr_is_loopback(&a), "%s is the wildcard", wildcard[i]);
	}
	struct net_addr v4 = addr_of("10.0.0.7:1"), mapped = addr_of("[::ffff:10.0.0.7]:1");
	ok(!net_addr_same_ip(&v4, &mapped), "10.0.0.7 and its mapped form differ as written");
	net_addr_unmap(&mapped);
	ok(net_addr_same_ip(&v4, &mapped) && mapped.family == AF_INET, "and are the same address once unmapped");
	struct net_addr one = addr_of("[::1]:1"), any6 = addr_of("[::]:1");
	net_addr_unmap(&one);
	net_addr_unmap(&any6);
	ok(one.family == AF_INET6 && any6.family == AF_INET6, "::1 and :: stay IPv6 (neither is v4-compatible)");
	struct net_addr to4 = addr_of("0.0.0.0:53"), to6 = addr_of("[::]:53"), lan = addr_of("10.9.9.9:53");
	net_addr_wildcard_to_loopback(&to4);
	net_addr_wildcard_to_loopback(&to6);
	net_addr_wildcard_to_loopback(&lan);
	ok(net_addr_same_ip(&to4, &(struct net_addr){ .family = AF_INET, .v4.s_addr = htonl(INADDR_LOOPBACK) }) &&
		   net_addr_is_loopback(&to6) && to4.port == 53 && to6.port == 53,
	   "0.0.0.0 and :: go to the loopback of their family, the port kept");
	ok(!net_addr_is_loopback(&lan), "another address stays as it is");
}

/* ---- the verdict as a table ---- */

struct facts {
	bool host;		/* the address is one of this host's */
	int listener;		/* what the listener look-up answers */
	bool own_abstract;	/* the run bound the abstract name */
	int held;		/* a listener outside the run holds the port */
	bool own_socket;	/* a socket of the run is bound to the socket file */
	int receiver;		/* datagrams: whose socket would receive it */
	bool asks_errors;	/* the socket asks for its errors (IP_RECVERR) */
	bool no_hold;		/* the port cannot be held (below 1024, taken since) */
	int asked_hold;		/* what the verdict asked: 1 a hold, 2 a lasting one */
};

static bool fact_host(void *data, const struct net_addr *a)
{
	return ((const struct facts *)data)->host;
}

static int fact_listener(void *data, const struct net_addr *a)
{
	return ((const struct facts *)data)->listener;
}

static bool fact_abstract(void *data, const struct net_addr *a)
{
	return ((const struct facts *)data)->own_abstract;
}

static int fact_held(void *data, const struct net_addr *a)
{
	return ((const struct facts *)data)->held;
}

static bool fact_own_socket(void *data, dev_t dev, ino_t ino)
{
	return ((const struct facts *)data)->own_socket;
}

static int fact_receiver(void *data, const struct net_addr *a)
{
	return ((const struct facts *)data)->receiver;
}

static bool fact_hold(void *data, const struct net_addr *a, bool lasting)
{
	struct facts *f = data;
	f->asked_hold = lasting ? 2 : 1;
	return !f->no_hold;
}

static bool fact_asks_errors(void *data)
{
	return ((const struct facts *)data)->asks_errors;
}

#define ALLOW { SV_ALLOW, 0, false, false, false, false, false, false, false }
#define ALLOW_RECHECK { SV_ALLOW, 0, false, false, false, false, true, false, false }
#define IN_HOST_TMP { SV_ALLOW, 0, false, false, true, false, false, false, false }
#define ALLOW_ON_LOOPBACK { SV_ALLOW, 0, false, true, false, false, false, false, false }
#define LOST { SV_ALLOW, 0, false, false, false, true, false, false, false }
#define REFUSE { SV_REFUSE, SV_REFUSED, false, false, false, false, false, false, false }
#define UNREACHABLE { SV_REFUSE, ENETUNREACH, false, false, false, false, false, false, false }
#define IN_USE { SV_REFUSE, EADDRINUSE, false, false, false, false, false, false, false }
#define UNDECIDED { SV_REFUSE, SV_REFUSED, true, false, false, false, false, false, false }
#define ANSWER(e) { SV_ANSWER, (e), false, false, false, false, false, false, false }
#define OWN SV_LISTENER_RUN
#define NOBODY SV_LISTENER_NONE
#define OTHER SV_LISTENER_OTHER

static const struct row {
	const char *what;
	enum sv_call call;
	enum net_mode net;
	const char *addr;
	struct facts facts;
	int path_err;		/* a Unix path: what resolving it met */
	const char *real;	/* and where it led */
	const char *name;	/* bind: the file's name */
	bool is_socket;
	struct sv_verdict want;
	bool loopback_device;	/* listen: the socket is bound to lo */
	bool datagram;		/* a UDP socket */
	bool recverr;		/* send: the socket asks for its errors */
	int hold;		/* what the verdict must ask: 1 a hold, 2 a lasting one */
} rows[] = {
	/* connect, inet */
	{ "off: loopback is refused", SV_CONNECT, NET_OFF, "127.0.0.1:80", { .listener = OWN }, .want = REFUSE },
	{ "on: a remote host is allowed", SV_CONNECT, NET_ON, "10.1.2.3:443", { 0 }, .want = ALLOW },
	{ "on: another's listener is allowed", SV_CONNECT, NET_ON, "127.0.0.1:5432", { .listener = OTHER }, .want = ALLOW },
	{ "loopback: a remote host is unreachable (ENETUNREACH, as in the namespace jail)", SV_CONNECT, NET_LOOPBACK, "10.1.2.3:443", { 0 }, .want = UNREACHABLE },
	{ "loopback: the run's own listener", SV_CONNECT, NET_LOOPBACK, "127.0.0.1:8080", { .listener = OWN }, .want = ALLOW },
	{ "loopback: nobody listens: allowed, and asked again once made (a host service starting meanwhile)", SV_CONNECT, NET_LOOPBACK, "127.0.0.1:8080", { .listener = NOBODY }, .want = ALLOW_RECHECK },
	{ "loopback: nobody listens on [::1]", SV_CONNECT, NET_LOOPBACK, "[::1]:8080", { .listener = NOBODY }, .want = ALLOW_RECHECK },
	{ "on: nobody listens, nothing asked again", SV_CONNECT, NET_ON, "127.0.0.1:8080", { .listener = NOBODY }, .want = ALLOW },
	{ "loopback: a listener outside the run", SV_CONNECT, NET_LOOPBACK, "127.0.0.1:5432", { .listener = OTHER }, .want = REFUSE },
	{ "loopback: cannot tell whose listener", SV_CONNECT, NET_LOOPBACK, "127.0.0.1:5432", { .listener = -EIO }, .want = UNDECIDED },
	{ "loopback: 127.1.2.3 is local", SV_CONNECT, NET_LOOPBACK, "127.1.2.3:1", { .listener = OTHER }, .want = REFUSE },
	{ "loopback: 0.0.0.0 reaches this host", SV_CONNECT, NET_LOOPBACK, "0.0.0.0:5432", { .listener = OTHER }, .want = REFUSE },
	{ "loopback: :: reaches this host", SV_CONNECT, NET_LOOPBACK, "[::]:5432", { .listener = OWN }, .want = ALLOW },
	{ "loopback: a mapped 127.0.0.1, another's", SV_CONNECT, NET_LOOPBACK, "[::ffff:127.0.0.1]:5432", { .listener = OTHER }, .want = REFUSE },
	{ "loopback: a mapped remote address", SV_CONNECT, NET_LOOPBACK, "[::ffff:10.1.2.3]:443", { 0 }, .want = UNREACHABLE },
	{ "loopback: the host's own LAN address, another's listener", SV_CONNECT, NET_LOOPBACK, "10.9.9.9:22", { .host = true, .listener = OTHER }, .want = REFUSE },
	{ "loopback: the host's own LAN address, the run's listener", SV_CONNECT, NET_LOOPBACK, "10.9.9.9:8080", { .host = true, .listener = OWN }, .want = ALLOW },
	/* connect, unix */
	{ "an unnamed Unix address", SV_CONNECT, NET_OFF, "unix:", { 0 }, .want = ALLOW },
	{ "an abstract name the run bound", SV_CONNECT, NET_OFF, "unix:@run", { .own_abstract = true }, .want = ALLOW },
	{ "an abstract name of the host's", SV_CONNECT, NET_ON, "unix:@/tmp/.X11-unix/X0", { 0 }, .want = REFUSE },
	/* THREATS 49, 50: a socket file is reached when a socket of the
	 * run is bound to it, never because its directory is granted. */
	{ "the run's own socket in the workspace", SV_CONNECT, NET_OFF, "unix:/ws/s", { .own_socket = true }, 0, "/ws/s", NULL, true, ALLOW, false, false, false, 0 },
	{ "THREATS 50: a host socket in the (writable) workspace", SV_CONNECT, NET_OFF, "unix:/ws/s", { 0 }, 0, "/ws/s", NULL, true, REFUSE, false, false, false, 0 },
	{ "THREATS 49: a host socket in a read tree", SV_CONNECT, NET_OFF, "unix:/sys/s", { 0 }, 0, "/sys/s", NULL, true, REFUSE, false, false, false, 0 },
	{ "THREATS 50: the user's tmux socket in the host's /tmp", SV_CONNECT, NET_ON, "unix:/tmp/tmux-1000/default", { 0 }, 0, "/tmp/tmux-1000/default", NULL, true, REFUSE, false, false, false, 0 },
	{ "the run's own socket in the host's /tmp", SV_CONNECT, NET_LOOPBACK, "unix:/tmp/uv-test-sock", { .own_socket = true }, 0, "/tmp/uv-test-sock", NULL, true, ALLOW, false, false, false, 0 },
	{ "THREATS 49: a socket file nowhere granted (the Docker socket)", SV_CONNECT, NET_ON, "unix:/run/docker.sock", { 0 }, 0, "/run/docker.sock", NULL, true, REFUSE, false, false, false, 0 },
	{ "a symlink in the workspace to the Docker socket", SV_CONNECT, NET_ON, "unix:/ws/innocent.sock", { 0 }, 0, "/run/docker.sock", NULL, true, REFUSE, false, false, false, 0 },
	{ "a hidden socket file", SV_CONNECT, NET_ON, "unix:/ws/secret/s", { 0 }, 0, "/ws/secret/s", NULL, true, REFUSE, false, false, false, 0 },
	{ "a file nowhere granted that is no socket", SV_CONNECT, NET_OFF, "unix:/run/file", { 0 }, 0, "/run/file", NULL, false, REFUSE, false, false, false, 0 },
	{ "a granted file that is no socket", SV_CONNECT, NET_OFF, "unix:/ws/file", { 0 }, 0, "/ws/file", NULL, false, ANSWER(ECONNREFUSED), false, false, false, 0 },
	{ "no such socket file", SV_CONNECT, NET_OFF, "unix:/ws/none", { 0 }, ENOENT, NULL, NULL, false, ANSWER(ENOENT), false, false, false, 0 },
	{ "a path through a file", SV_CONNECT, NET_OFF, "unix:/ws/file/x", { 0 }, ENOTDIR, NULL, NULL, false, ANSWER(ENOTDIR), false, false, false, 0 },
	{ "a path stockade cannot resolve", SV_CONNECT, NET_OFF, "unix:/ws/x", { 0 }, EACCES, NULL, NULL, false, REFUSE, false, false, false, 0 },
	/* bind, inet */
	{ "off: a bind is refused", SV_BIND, NET_OFF, "127.0.0.1:0", { 0 }, .want = REFUSE },
	{ "loopback: 127.0.0.1", SV_BIND, NET_LOOPBACK, "127.0.0.1:0", { 0 }, .want = ALLOW },
	{ "loopback: ::1", SV_BIND, NET_LOOPBACK, "[::1]:8080", { 0 }, .want = ALLOW },
	{ "loopback: 0.0.0.0, on the loopback device", SV_BIND, NET_LOOPBACK, "0.0.0.0:8080", { 0 }, .want = ALLOW_ON_LOOPBACK },
	{ "loopback: ::, on the loopback device", SV_BIND, NET_LOOPBACK, "[::]:0", { 0 }, .want = ALLOW_ON_LOOPBACK },
	{ "loopback: a port an outside listener holds (SO_REUSEPORT squatting)", SV_BIND, NET_LOOPBACK, "127.0.0.1:5432", { .held = 1 }, .want = IN_USE },
	{ "loopback: 0.0.0.0 on a port an outside listener holds", SV_BIND, NET_LOOPBACK, "0.0.0.0:5432", { .held = 1 }, .want = IN_USE },
	{ "loopback: cannot tell who holds the port", SV_BIND, NET_LOOPBACK, "[::1]:5432", { .held = -EIO }, .want = UNDECIDED },
	{ "on: a port an outside listener holds", SV_BIND, NET_ON, "[::ffff:127.0.0.1]:5432", { .held = 1 }, .want = IN_USE },
	{ "on: 0.0.0.0 stays 0.0.0.0", SV_BIND, NET_ON, "0.0.0.0:8080", { 0 }, .want = ALLOW },
	{ "loopback: the host's LAN address", SV_BIND, NET_LOOPBACK, "10.9.9.9:8080", { .host = true }, .want = REFUSE },
	{ "loopback: an address of no interface here (the kernel's EADDRNOTAVAIL)", SV_BIND, NET_LOOPBACK, "203.0.113.7:0", { 0 }, .want = ANSWER(EADDRNOTAVAIL) },
	{ "loopback: an IPv6 address of no interface here", SV_BIND, NET_LOOPBACK, "[2001:db8::7]:80", { 0 }, .want = ANSWER(EADDRNOTAVAIL) },
	{ "loopback: a mapped 127.0.0.1", SV_BIND, NET_LOOPBACK, "[::ffff:127.0.0.1]:0", { 0 }, .want = ALLOW },
	{ "on: any address", SV_BIND, NET_ON, "10.9.9.9:8080", { 0 }, .want = ALLOW },
	/* bind, unix */
	{ "an abstract name", SV_BIND, NET_OFF, "unix:@mine", { 0 }, .want = ALLOW },
	{ "a socket file in the workspace", SV_BIND, NET_OFF, "unix:/ws/s", { 0 }, 0, "/ws", "s", false, ALLOW, false, false, false, 0 },
	{ "a socket file in a read tree", SV_BIND, NET_OFF, "unix:/sys/s", { 0 }, 0, "/sys", "s", false, REFUSE, false, false, false, 0 },
	{ "a socket file in a protected place", SV_BIND, NET_OFF, "unix:/ws/.git/s", { 0 }, 0, "/ws/.git", "s", false, REFUSE, false, false, false, 0 },
	{ "a socket file over a hidden name", SV_BIND, NET_OFF, "unix:/ws/secret", { 0 }, 0, "/ws", "secret", false, REFUSE, false, false, false, 0 },
	{ "a directory that does not exist", SV_BIND, NET_OFF, "unix:/ws/none/s", { 0 }, ENOENT, NULL, NULL, false, ANSWER(ENOENT), false, false, false, 0 },
	{ "a name stockade cannot use", SV_BIND, NET_OFF, "unix:/ws/", { 0 }, 0, "/ws", "", false, REFUSE, false, false, false, 0 },
	/* THREATS 51: a new name directly in the host's /tmp is the
	 * supervisor's to make; nothing in a directory beneath it. */
	{ "a new name directly in the host's /tmp", SV_BIND, NET_LOOPBACK, "unix:/tmp/uv-test-sock", { 0 }, 0, "/tmp", "uv-test-sock", false, IN_HOST_TMP, false, false, false, 0 },
	{ "THREATS 51: a name in the user's tmux directory in /tmp", SV_BIND, NET_LOOPBACK, "unix:/tmp/tmux-1000/default", { 0 }, 0, "/tmp/tmux-1000", "default", false, REFUSE, false, false, false, 0 },
	{ "THREATS 51: a name in /tmp/.X11-unix", SV_BIND, NET_OFF, "unix:/tmp/.X11-unix/X1", { 0 }, 0, "/tmp/.X11-unix", "X1", false, REFUSE, false, false, false, 0 },
	{ "/tmp/.. is no name in /tmp", SV_BIND, NET_OFF, "unix:/tmp/..", { 0 }, 0, "/tmp", "..", false, REFUSE, false, false, false, 0 },
	/* listen */
	{ "loopback: on 127.0.0.1:8080", SV_LISTEN, NET_LOOPBACK, "127.0.0.1:8080", { 0 }, .want = ALLOW },
	{ "loopback: on [::1]:8080", SV_LISTEN, NET_LOOPBACK, "[::1]:8080", { 0 }, .want = ALLOW },
	{ "loopback: on 0.0.0.0 (would serve the LAN)", SV_LISTEN, NET_LOOPBACK, "0.0.0.0:8080", { 0 }, .want = REFUSE },
	{ "loopback: on :: (would serve the LAN)", SV_LISTEN, NET_LOOPBACK, "[::]:8080", { 0 }, .want = REFUSE },
	{ "loopback: on 0.0.0.0 bound to lo", SV_LISTEN, NET_LOOPBACK, "0.0.0.0:8080", { 0 }, .want = ALLOW, .loopback_device = true },
	{ "loopback: on :: bound to lo", SV_LISTEN, NET_LOOPBACK, "[::]:8080", { 0 }, .want = ALLOW, .loopback_device = true },
	{ "loopback: on a port an outside listener took since the bind", SV_LISTEN, NET_LOOPBACK, "127.0.0.1:8080", { .held = 1 }, .want = IN_USE },
	{ "loopback: never bound (port 0: listen picks 0.0.0.0), on the loopback device", SV_LISTEN, NET_LOOPBACK, "0.0.0.0:0", { 0 }, .want = ALLOW_ON_LOOPBACK },
	{ "loopback: never bound, [::]:0, on the loopback device", SV_LISTEN, NET_LOOPBACK, "[::]:0", { 0 }, .want = ALLOW_ON_LOOPBACK },
	{ "loopback: never bound, already on the loopback device", SV_LISTEN, NET_LOOPBACK, "0.0.0.0:0", { 0 }, .want = ALLOW, .loopback_device = true },
	{ "loopback: 127.0.0.1 port 0 (not bound by the run)", SV_LISTEN, NET_LOOPBACK, "127.0.0.1:0", { 0 }, .want = REFUSE },
	{ "loopback: a Unix socket", SV_LISTEN, NET_LOOPBACK, "unix:/ws/s", { 0 }, .want = ALLOW },
	{ "on: 0.0.0.0", SV_LISTEN, NET_ON, "0.0.0.0:8080", { 0 }, .want = ALLOW },
	/* UDP (THREATS 39-47): a datagram's address, sent or connected to,
	 * reaches only a socket of the run's, on this host. */
	{ "udp loopback: the run's own socket", SV_SEND, NET_LOOPBACK, "127.0.0.1:5353", { .receiver = SV_LISTENER_RUN }, .want = ALLOW, .datagram = true },
	{ "udp loopback: connect to the run's own socket", SV_CONNECT, NET_LOOPBACK, "[::1]:5353", { .receiver = SV_LISTENER_RUN }, .want = ALLOW, .datagram = true },
	{ "udp loopback: a socket outside the run", SV_SEND, NET_LOOPBACK, "127.0.0.1:5353", { .receiver = SV_LISTENER_OTHER }, .want = REFUSE, .datagram = true },
	{ "udp loopback: the host's resolver (THREATS 46)", SV_SEND, NET_LOOPBACK, "127.0.0.53:53", { .receiver = SV_LISTENER_OTHER }, .want = REFUSE, .datagram = true },
	/* A port nobody has bound: the datagram is answered as sent and
	 * never sent (a socket bound there after the check gets nothing),
	 * unless the sender asks for the ICMP error the kernel would queue. */
	{ "udp loopback: a port nobody has bound, held and sent (the kernel answers ICMP)", SV_SEND, NET_LOOPBACK, "127.0.0.1:9", { .receiver = SV_LISTENER_NONE }, .want = ALLOW, .datagram = true, .hold = 1 },
	{ "udp loopback: a port nobody has bound, IPv6", SV_SEND, NET_LOOPBACK, "[::1]:9", { .receiver = SV_LISTENER_NONE }, .want = ALLOW, .datagram = true, .hold = 1 },
	{ "udp loopback: a port nobody has bound, the sender asking for errors (IP_RECVERR)", SV_SEND, NET_LOOPBACK, "127.0.0.1:9", { .receiver = SV_LISTENER_NONE }, .want = ALLOW, .datagram = true, .recverr = true, .hold = 1 },
	{ "udp loopback: a port that cannot be held, lost as the kernel would lose it", SV_SEND, NET_LOOPBACK, "127.0.0.1:9", { .receiver = SV_LISTENER_NONE, .no_hold = true }, .want = LOST, .datagram = true, .hold = 1 },
	{ "udp loopback: a port that cannot be held, the sender asking for errors", SV_SEND, NET_LOOPBACK, "127.0.0.1:9", { .receiver = SV_LISTENER_NONE, .no_hold = true }, .want = REFUSE, .datagram = true, .recverr = true, .hold = 1 },
	{ "udp loopback: nobody there, a remote host", SV_SEND, NET_LOOPBACK, "10.203.0.2:9", { .receiver = SV_LISTENER_NONE }, .want = UNREACHABLE, .datagram = true },
	{ "udp loopback: connect to a port nobody has bound, held while the run goes on", SV_CONNECT, NET_LOOPBACK, "127.0.0.1:9", { .receiver = SV_LISTENER_NONE }, .want = ALLOW, .datagram = true, .hold = 2 },
	{ "udp loopback: connect to a port that cannot be held", SV_CONNECT, NET_LOOPBACK, "127.0.0.1:9", { .receiver = SV_LISTENER_NONE, .no_hold = true }, .want = REFUSE, .datagram = true, .hold = 2 },
	{ "udp loopback: the run's own socket is not held", SV_SEND, NET_LOOPBACK, "127.0.0.1:5353", { .receiver = SV_LISTENER_RUN }, .want = ALLOW, .datagram = true, .hold = 0 },
	{ "udp loopback: a socket outside the run is not held", SV_CONNECT, NET_LOOPBACK, "127.0.0.1:5353", { .receiver = SV_LISTENER_OTHER }, .want = REFUSE, .datagram = true, .hold = 0 },
	{ "udp loopback: cannot tell whose socket", SV_SEND, NET_LOOPBACK, "127.0.0.1:5353", { .receiver = -EIO }, .want = UNDECIDED, .datagram = true },
	{ "udp loopback: the remote host (THREATS 47)", SV_SEND, NET_LOOPBACK, "10.203.0.2:53", { .receiver = SV_LISTENER_RUN }, .want = UNREACHABLE, .datagram = true },
	{ "udp loopback: a mapped remote address", SV_SEND, NET_LOOPBACK, "[::ffff:10.203.0.2]:53", { .receiver = SV_LISTENER_RUN }, .want = UNREACHABLE, .datagram = true },
	{ "udp loopback: a mapped 127.0.0.1 of the run's (THREATS 41)", SV_SEND, NET_LOOPBACK, "[::ffff:127.0.0.1]:5353", { .receiver = SV_LISTENER_RUN }, .want = ALLOW, .datagram = true },
	{ "udp loopback: the host's LAN address, a socket of the run's", SV_SEND, NET_LOOPBACK, "10.9.9.9:5353", { .host = true, .receiver = SV_LISTENER_RUN }, .want = ALLOW, .datagram = true },
	{ "udp loopback: the host's LAN address, another's", SV_SEND, NET_LOOPBACK, "10.9.9.9:5353", { .host = true, .receiver = SV_LISTENER_OTHER }, .want = REFUSE, .datagram = true },
	{ "udp off: refused", SV_SEND, NET_OFF, "127.0.0.1:5353", { .receiver = SV_LISTENER_RUN }, .want = REFUSE, .datagram = true },
	{ "udp on: anywhere", SV_SEND, NET_ON, "10.203.0.2:53", { .receiver = SV_LISTENER_OTHER }, .want = ALLOW, .datagram = true },
	{ "udp loopback: 0.0.0.0, on the loopback device", SV_BIND, NET_LOOPBACK, "0.0.0.0:5353", { 0 }, .want = ALLOW_ON_LOOPBACK, .datagram = true },
	{ "udp loopback: ::, on the loopback device", SV_BIND, NET_LOOPBACK, "[::]:0", { 0 }, .want = ALLOW_ON_LOOPBACK, .datagram = true },
	{ "udp loopback: the host's LAN address", SV_BIND, NET_LOOPBACK, "10.9.9.9:5353", { .host = true }, .want = REFUSE, .datagram = true },
	{ "udp loopback: a port a socket outside holds (THREATS 64)", SV_BIND, NET_LOOPBACK, "127.0.0.1:5353", { .held = 1 }, .want = IN_USE, .datagram = true },
	{ "udp loopback: a Unix datagram to an abstract name of the host's", SV_SEND, NET_LOOPBACK, "unix:@/tmp/.X11-unix/X0", { 0 }, .want = REFUSE },
	{ "udp loopback: a Unix datagram to a socket file nowhere granted (journald)", SV_SEND, NET_LOOPBACK, "unix:/run/systemd/journal/socket", { 0 }, 0, "/run/systemd/journal/socket", NULL, true, REFUSE, false, false, false, 0 },
	{ "udp loopback: a Unix datagram to the run's own socket file in the workspace", SV_SEND, NET_LOOPBACK, "unix:/ws/s", { .own_socket = true }, 0, "/ws/s", NULL, true, ALLOW, false, false, false, 0 },
	{ "THREATS 49: a Unix datagram to a host's socket file in the workspace", SV_SEND, NET_LOOPBACK, "unix:/ws/s", { 0 }, 0, "/ws/s", NULL, true, REFUSE, false, false, false, 0 },
};

static void test_verdicts(void)
{
	struct policy p;
	policy_init(&p);
	const struct source src = SOURCE_DEFAULT_OF("test");
	policy_add_rule(&p, "/ws", ACCESS_WRITE, 0, src, NULL);
	policy_add_rule(&p, "/ws/.git", ACCESS_PROTECT, 0, src, NULL);
	policy_add_rule(&p, "/ws/secret", ACCESS_HIDE, 0, src, NULL);
	policy_add_rule(&p, "/sys", ACCESS_READ, 0, src, NULL);
	policy_sort(&p);
	for (size_t i = 0; i < ARRAY_SIZE(rows); i++) {
		const struct row *r = &rows[i];
		struct facts f = r->facts;
		f.asks_errors = r->recverr;
		const struct sv_facts facts = {
			.data = &f,
			.host_address = fact_host,
			.listener = fact_listener,
			.run_abstract = fact_abstract,
			.held_outside = fact_held,
			.run_socket_file = fact_own_socket,
			.receiver = fact_receiver,
			.hold = fact_hold,
			.asks_errors = fact_asks_errors,
		};
		struct sv_query q = {
			.call = r->call,
			.net = r->net,
			.policy = &p,
			.addr = addr_of(r->addr),
			.path_err = r->path_err,
			.path_real = r->real,
			.path_name = r->name,
			.path_is_socket = r->is_socket,
			.loopback_device = r->loopback_device,
			.datagram = r->datagram,
		};
		struct sv_verdict v = supervise_verdict(&q, &facts);
		static const char *const call[] = { "connect", "bind", "listen", "send" };
		if (!ok(v.outcome == r->want.outcome && v.err == r->want.err && v.undecided == r->want.undecided &&
			    v.on_loopback == r->want.on_loopback && v.lost == r->want.lost && v.recheck == r->want.recheck &&
			    f.asked_hold == r->hold,
			"%s %s: %s", call[r->call], r->addr, r->what))
			diag("got outcome %d err %d undecided %d on_loopback %d lost %d recheck %d hold %d, want %d %d %d %d %d %d %d",
			     v.outcome, v.err, v.undecided, v.on_loopback, v.lost, v.recheck, f.asked_hold, r->want.outcome,
			     r->want.err, r->want.undecided, r->want.on_loopback, r->want.lost, r->want.recheck, r->hold);
	}

	/* The backend's own places count as the policy's grants: a socket in
	 * the jail's private tmp is the run's to make and reach. */
	struct rule tmp = { .path = (char *)"/run/stockade/tmp", .access = ACCESS_WRITE, .flags = RULE_FRESH };
	struct facts none = { 0 };
	const struct sv_facts facts = { .data = &none, .host_address = fact_host, .listener = fact_listener,
					.run_abstract = fact_abstract, .held_outside = fact_held, .run_socket_file = fact_own_socket };
	struct sv_query q = { .call = SV_BIND, .net = NET_LOOPBACK, .policy = &p, .addr = addr_of("unix:/run/stockade/tmp/s"),
			      .path_real = "/run/stockade/tmp", .path_name = "s" };
	ok(supervise_verdict(&q, &facts).outcome == SV_REFUSE, "bind in the jail's tmp, the places left out: refused");
	const struct rule_list places = { &tmp, 1 };
	p.places = &places;
	ok(supervise_verdict(&q, &facts).outcome == SV_ALLOW, "bind in the jail's tmp, with the places: allowed");
	q.call = SV_CONNECT;
	q.path_real = "/run/stockade/tmp/s";
	q.path_is_socket = true;
	ok(supervise_verdict(&q, &facts).outcome == SV_REFUSE, "connect to a socket there no socket of the run holds: refused");
	struct facts own = { .own_socket = true };
	const struct sv_facts own_facts = { .data = &own, .host_address = fact_host, .listener = fact_listener,
					    .run_abstract = fact_abstract, .held_outside = fact_held,
					    .run_socket_file = fact_own_socket };
	ok(supervise_verdict(&q, &own_facts).outcome == SV_ALLOW, "connect to the run's own socket there: allowed");

	/* --connect unix:PATH: that socket file, by the grant's path or
	 * where it leads, whoever bound it. */
	struct net_grant ugrants[] = { { .kind = GRANT_CONNECT_UNIX, .path = (char *)"/var/run/pg.sock" } };
	p.grants = ugrants;
	p.n_grants = 1;
	struct sv_query uq = { .call = SV_CONNECT, .net = NET_OFF, .policy = &p, .addr = addr_of("unix:/var/run/pg.sock"),
			       .path_real = "/run/pg.sock", .path_is_socket = true };
	ok(supervise_verdict(&uq, &facts).outcome == SV_ALLOW, "--connect unix:/var/run/pg.sock: that path is allowed");
	uq.addr = addr_of("unix:pg.sock");
	uq.path_real = "/var/run/pg.sock";
	ok(supervise_verdict(&uq, &facts).outcome == SV_ALLOW, "and a relative path that leads there");
	uq.addr = addr_of("unix:/var/run/other.sock");
	uq.path_real = "/run/other.sock";
	ok(supervise_verdict(&uq, &facts).outcome == SV_REFUSE, "another socket beside it is refused");
	p.grants = NULL;
	p.n_grants = 0;

	/* --connect: that one service, whoever listens there; nothing else. */
	struct net_grant grants[] = {
		{ .kind = GRANT_CONNECT, .host = (char *)"127.0.0.1", .port = 5432 },
		{ .kind = GRANT_CONNECT, .host = (char *)"localhost", .port = 6379 },
		{ .kind = GRANT_CONNECT, .host = (char *)"10.203.0.2", .port = 7 },
	};
	p.grants = grants;
	p.n_grants = ARRAY_SIZE(grants);
	struct facts other = { .listener = OTHER };
	const struct sv_facts ofacts = { .data = &other, .host_address = fact_host, .listener = fact_listener,
					 .run_abstract = fact_abstract, .held_outside = fact_held, .run_socket_file = fact_own_socket };
	static const struct {
		const char *addr;
		enum sv_outcome want;
	} connects[] = {
		{ "127.0.0.1:5432", SV_ALLOW },	    { "[::ffff:127.0.0.1]:5432", SV_ALLOW },
		{ "127.0.0.1:5433", SV_REFUSE },    { "127.0.0.2:5432", SV_REFUSE },
		{ "[::1]:5432", SV_REFUSE },	    { "127.0.0.1:6379", SV_ALLOW },
		{ "[::1]:6379", SV_ALLOW },	    { "127.0.0.2:6379", SV_REFUSE },
		{ "10.203.0.2:7", SV_ALLOW },	    { "10.203.0.2:8", SV_REFUSE },
	};
	for (size_t i = 0; i < ARRAY_SIZE(connects); i++) {
		struct sv_query cq = { .call = SV_CONNECT, .net = NET_LOOPBACK, .policy = &p, .addr = addr_of(connects[i].addr) };
		ok(supervise_verdict(&cq, &ofacts).outcome == connects[i].want, "--connect 127.0.0.1:5432 localhost:6379 10.203.0.2:7: %s %s",
		   connects[i].addr, connects[i].want == SV_ALLOW ? "allowed" : "refused");
	}
	p.grants = NULL;
	p.n_grants = 0;

	/* network allow: the run's own network as with loopback; off this
	 * host, a TCP connect to an allowed port goes to the relay, every
	 * datagram to port 53 to stockade's resolver, nothing else. */
	const char *why;
	ok(allow_parse("registry.example", SOURCE_OPTION_OF("--allow"), &p.allow, &p.n_allow, &why) == 0 &&
		   allow_parse("git.example:22", SOURCE_OPTION_OF("--allow"), &p.allow, &p.n_allow, &why) == 0,
	   "allow registry.example, git.example:22");
	static const struct {
		const char *what;
		enum sv_call call;
		const char *addr;
		bool datagram;
		struct facts facts;
		enum sv_outcome want;
		int err;
		bool relay, resolver, on_loopback;
	} allows[] = {
		{ "THREATS 77: a remote host on 443: the relay decides", SV_CONNECT, "93.184.216.34:443", false, { 0 }, SV_ALLOW, 0, true, false, false },
		{ "THREATS 77: a remote host on 80: the relay", SV_CONNECT, "[2001:db8::1]:80", false, { 0 }, SV_ALLOW, 0, true, false, false },
		{ "THREATS 77: a remote host on 22 (git.example:22): the relay", SV_CONNECT, "10.1.2.3:22", false, { 0 }, SV_ALLOW, 0, true, false, false },
		{ "THREATS 77: a remote host on a port no name has: unreachable", SV_CONNECT, "10.1.2.3:8443", false, { 0 }, SV_REFUSE, ENETUNREACH, false, false, false },
		{ "THREATS 77: TCP to a name server's port 53: unreachable", SV_CONNECT, "10.1.2.3:53", false, { 0 }, SV_REFUSE, ENETUNREACH, false, false, false },
		{ "THREATS 77: DNS over TLS (853): unreachable", SV_CONNECT, "9.9.9.9:853", false, { 0 }, SV_REFUSE, ENETUNREACH, false, false, false },
		{ "THREATS 77: a datagram to a name server: stockade's resolver", SV_SEND, "10.1.2.3:53", true, { 0 }, SV_ALLOW, 0, false, true, false },
		{ "THREATS 77: a datagram to 127.0.0.53:53: stockade's resolver", SV_SEND, "127.0.0.53:53", true, { .receiver = OTHER }, SV_ALLOW, 0, false, true, false },
		{ "THREATS 77: a UDP connect to a name server: stockade's resolver", SV_CONNECT, "[2001:db8::53]:53", true, { 0 }, SV_ALLOW, 0, false, true, false },
		{ "THREATS 77: QUIC (UDP 443) out: unreachable", SV_SEND, "93.184.216.34:443", true, { 0 }, SV_REFUSE, ENETUNREACH, false, false, false },
		{ "allow: a host's listener on loopback, as with loopback", SV_CONNECT, "127.0.0.1:5432", false, { .listener = OTHER }, SV_REFUSE, SV_REFUSED, false, false, false },
		{ "allow: a host's listener on loopback 443", SV_CONNECT, "127.0.0.1:443", false, { .listener = OTHER }, SV_REFUSE, SV_REFUSED, false, false, false },
		{ "allow: the run's own listener", SV_CONNECT, "127.0.0.1:8080", false, { .listener = OWN }, SV_ALLOW, 0, false, false, false },
		{ "allow: a bind on the LAN, as with loopback", SV_BIND, "10.9.9.9:8080", false, { .host = true }, SV_REFUSE, SV_REFUSED, false, false, false },
		{ "allow: a bind on 0.0.0.0, on the loopback device", SV_BIND, "0.0.0.0:8080", false, { 0 }, SV_ALLOW, 0, false, false, true },
		{ "allow: listen on 0.0.0.0 not bound to lo", SV_LISTEN, "0.0.0.0:8080", false, { 0 }, SV_REFUSE, SV_REFUSED, false, false, false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(allows); i++) {
		struct facts f = allows[i].facts;
		const struct sv_facts af = { .data = &f, .host_address = fact_host, .listener = fact_listener,
					     .run_abstract = fact_abstract, .held_outside = fact_held,
					     .run_socket_file = fact_own_socket, .receiver = fact_receiver, .hold = fact_hold,
					     .asks_errors = fact_asks_errors };
		struct sv_query aq = { .call = allows[i].call, .net = NET_ALLOW, .policy = &p, .addr = addr_of(allows[i].addr),
				       .datagram = allows[i].datagram };
		struct sv_verdict v = supervise_verdict(&aq, &af);
		if (!ok(v.outcome == allows[i].want && v.err == allows[i].err && v.relay == allows[i].relay &&
			    v.resolver == allows[i].resolver && v.on_loopback == allows[i].on_loopback,
			"%s %s", allows[i].what, allows[i].addr))
			diag("got outcome %d err %d relay %d resolver %d on_loopback %d", v.outcome, v.err, v.relay, v.resolver,
			     v.on_loopback);
	}
	policy_free(&p);
}

/* What a call that names a process names: its kind of target and id. */
static void test_process_calls(void)
{
	static const struct {
		int nr;
		uint64_t args[6];
		enum sv_target kind;
		long id;
		bool changes;
	} cases[] = {
		{ SYS_prlimit64, { 4242, 7 }, SV_TARGET_PROCESS, 4242, true },
		/* a pid is an int: the upper half is the kernel's to ignore */
		{ SYS_prlimit64, { 0xffffffff00001234ULL }, SV_TARGET_PROCESS, 0x1234, true },
		{ SYS_prlimit64, { 0xffffffffULL }, SV_TARGET_PROCESS, -1, true },
		{ SYS_sched_getaffinity, { 99 }, SV_TARGET_PROCESS, 99, false },
		{ SYS_sched_setattr, { 5 }, SV_TARGET_PROCESS, 5, true },
		{ SYS_pidfd_open, { 77 }, SV_TARGET_PROCESS, 77, false },
		{ SYS_setpriority, { 0, 12, 5 }, SV_TARGET_PROCESS, 12, true },
		{ SYS_setpriority, { 1, 0, 5 }, SV_TARGET_PGRP, 0, true },
		{ SYS_setpriority, { 2, 1000, 5 }, SV_TARGET_USER, 1000, true },
		{ SYS_setpriority, { 9, 1 }, SV_TARGET_NONE, 1, true },
		{ SYS_getpriority, { 1, 33 }, SV_TARGET_PGRP, 33, false },
		{ SYS_ioprio_set, { 1, 8 }, SV_TARGET_PROCESS, 8, true },
		{ SYS_ioprio_set, { 2, 8 }, SV_TARGET_PGRP, 8, true },
		{ SYS_ioprio_set, { 3, 0 }, SV_TARGET_USER, 0, true },
		{ SYS_ioprio_get, { 0, 8 }, SV_TARGET_NONE, 8, false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sv_process_call c;
		bool is = supervise_process_call(cases[i].nr, cases[i].args, &c);
		ok(is && c.kind == cases[i].kind && c.id == cases[i].id && c.changes == cases[i].changes,
		   "%s(%#llx, %#llx): target %d id %ld", is ? c.name : "?", (unsigned long long)cases[i].args[0],
		   (unsigned long long)cases[i].args[1], is ? (int)c.kind : -1, is ? c.id : 0);
	}
	struct sv_process_call c;
	ok(!supervise_process_call(SYS_kill, (uint64_t[6]){ 1 }, &c), "kill is Landlock's to scope, not one of these");
	ok(!supervise_process_call(SYS_connect, (uint64_t[6]){ 0 }, &c), "nor is connect");
}

/* The notification service's table by call: a family is asked only for
 * the calls it said it may take, in the order the families were added;
 * the first that takes one decides; a call nobody takes is ENOSYS. */
struct fake_family {
	int nr;			/* the only call it may take; -1: every call */
	enum notif_outcome says;
	int err;
	unsigned asked;
};

static bool fake_calls(void *data, int nr)
{
	const struct fake_family *f = data;
	return f->nr < 0 || f->nr == nr;
}

static unsigned fake_keyings;

static bool fake_calls_counted(void *data, int nr)
{
	fake_keyings++;
	return fake_calls(data, nr);
}

static enum notif_outcome fake_take(void *data, const struct seccomp_notif *req, int *ret_err)
{
	struct fake_family *f = data;
	f->asked++;
	*ret_err = f->err;
	return f->says;
}

static void test_notif_keyed(void)
{
	struct fake_family open_watch = { SYS_openat, NOTIF_CONTINUE, 0, 0 };
	struct fake_family connect_net = { SYS_connect, NOTIF_NOT_MINE, 0, 0 };
	struct fake_family connect_done = { SYS_connect, NOTIF_DONE, 0, 0 };
	struct fake_family refused = { -1, NOTIF_ANSWER, EPERM, 0 };
	struct notif_service s;
	notif_service_init(&s, -1);
	notif_service_add(&s, "open", fake_calls_counted, fake_take, &open_watch);
	notif_service_add(&s, "net", fake_calls, fake_take, &connect_net);
	notif_service_add(&s, "connect", fake_calls, fake_take, &connect_done);
	notif_service_add(&s, "refused", NULL, fake_take, &refused);

	struct seccomp_notif req = { 0 };
	int err;
	const char *fam;
	req.data.nr = SYS_connect;
	enum notif_outcome o = notif_dispatch(&s, &req, &err, &fam);
	ok(o == NOTIF_DONE && fam && streq(fam, "connect") && open_watch.asked == 0 && connect_net.asked == 1 &&
		   refused.asked == 0,
	   "connect: the open family is never asked, the net family passes, the connect family takes it");
	req.data.nr = SYS_openat;
	o = notif_dispatch(&s, &req, &err, &fam);
	ok(o == NOTIF_CONTINUE && streq(fam, "open") && open_watch.asked == 1 && connect_net.asked == 1 &&
		   connect_done.asked == 1,
	   "openat: the open family alone is asked, and lets it go on");
	req.data.nr = SYS_ptrace;
	o = notif_dispatch(&s, &req, &err, &fam);
	ok(o == NOTIF_ANSWER && err == EPERM && streq(fam, "refused") && refused.asked == 1,
	   "ptrace: only the family of every call is keyed for it, and answers EPERM");
	unsigned keyings = fake_keyings;
	for (int i = 0; i < 3; i++)
		(void)notif_dispatch(&s, &req, &err, &fam);
	req.data.nr = SYS_openat;
	(void)notif_dispatch(&s, &req, &err, &fam);
	ok(fake_keyings == keyings, "a call keyed once is not keyed again (%u keyings)", fake_keyings);
	ok(open_watch.asked == 2 && refused.asked == 4, "each call asked only its own families");

	/* nobody takes it */
	struct notif_service none;
	notif_service_init(&none, -1);
	notif_service_add(&none, "net", fake_calls, fake_take, &connect_net);
	req.data.nr = SYS_connect;
	o = notif_dispatch(&none, &req, &err, &fam);
	ok(o == NOTIF_ANSWER && err == ENOSYS && fam == NULL, "a call no family takes: ENOSYS");
	req.data.nr = NOTIF_CALLS + 7;
	o = notif_dispatch(&none, &req, &err, &fam);
	ok(o == NOTIF_ANSWER && err == ENOSYS, "a call above the table's keys goes to every family, then ENOSYS");

	/* the supervisor's own families, keyed by what each takes */
	ok(supervise_files_call(SYS_openat) && supervise_files_call(SYS_renameat2) && supervise_files_call(SYS_truncate) &&
		   !supervise_files_call(SYS_connect) && !supervise_files_call(SYS_read),
	   "the files family is keyed for the calls that open, make, remove, rename or truncate a name");
}

int main(void)
{
	test_parse();
	test_spellings();
	test_verdicts();
	test_process_calls();
	test_notif_keyed();
	return tap_done();
}
