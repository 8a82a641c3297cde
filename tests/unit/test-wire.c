/* wire: the session protocol's messages (lib/wire.c). A table of packets,
 * each parsed or refused; what parses is made again byte for byte; a
 * message with descriptors through a real SOCK_SEQPACKET pair, and one
 * cut short refused with its descriptors closed. */
#include "lib/wire.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/util.h"
#include "tests/tap.h"

#define P(s) s, sizeof(s) - 1

static void test_parse(void)
{
	static const struct {
		const char *what;
		const char *bytes;
		size_t len;
		bool good;
		size_t n;
	} cases[] = {
		{ "a hello", P("hello\0version=1\0"), true, 1 },
		{ "a type alone", P("stop\0"), true, 0 },
		{ "a value with '=' and spaces", P("exec\0env=A=B C\0"), true, 1 },
		{ "an empty value", P("exec\0arg=\0"), true, 1 },
		{ "repeated keys", P("exec\0arg=a\0arg=b\0arg=c\0"), true, 3 },
		{ "bytes of every kind in a value", P("exec\0arg=\x01\xff\n\x1b[31m\0"), true, 1 },
		{ "nothing", "", 0, false, 0 },
		{ "no NUL at the end", P("hello"), false, 0 },
		{ "an empty type", P("\0version=1\0"), false, 0 },
		{ "a type of upper case", P("HELLO\0"), false, 0 },
		{ "a type with a digit", P("hello1\0"), false, 0 },
		{ "a field without '='", P("exec\0noequals\0"), false, 0 },
		{ "an empty key", P("exec\0=v\0"), false, 0 },
		{ "a key with a space", P("exec\0a b=v\0"), false, 0 },
		{ "an empty field", P("exec\0\0"), false, 0 },
		{ "a key of 33 letters", P("exec\0abcdefghijklmnopqrstuvwxyzabcdefg=1\0"), false, 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct wire_msg m;
		int r = wire_parse(cases[i].bytes, cases[i].len, &m);
		if (!cases[i].good) {
			ok(r == -EBADMSG && !m.buf && !m.f, "%s: refused (EBADMSG), nothing kept", cases[i].what);
			continue;
		}
		if (!ok(r == 0 && m.n == cases[i].n, "%s: parses, %zu field(s)", cases[i].what, cases[i].n))
			continue;
		struct wire_out o = { 0 };
		wire_begin(&o, m.type);
		for (size_t k = 0; k < m.n; k++)
			wire_add(&o, m.f[k].key, m.f[k].value);
		ok(o.len == cases[i].len && memcmp(o.buf, cases[i].bytes, o.len) == 0, "%s: made again byte for byte",
		   cases[i].what);
		wire_out_free(&o);
		wire_msg_free(&m);
	}
	char *big = xcalloc(WIRE_MAX + 2, 1);
	memcpy(big, "exec", 4);
	ok(wire_parse(big, WIRE_MAX + 1, &(struct wire_msg){ 0 }) == -EBADMSG, "a message over WIRE_MAX is refused");
	free(big);
}

static void test_get(void)
{
	struct wire_msg m;
	is_int(wire_parse(P("exec\0id=42\0arg=a\0neg=-3\0arg=b\0huge=99999999999999999999\0word=x1\0"), &m), 0,
	       "a message with numbers parses");
	long v = 0;
	ok(wire_get_long(&m, "id", 0, LONG_MAX, &v) == 0 && v == 42, "id=42 reads as 42");
	ok(wire_get_long(&m, "neg", 0, 10, &v) == -EINVAL, "a number below the range is refused");
	ok(wire_get_long(&m, "huge", 0, LONG_MAX, &v) == -EINVAL, "a number too big for a long is refused");
	ok(wire_get_long(&m, "word", 0, 10, &v) == -EINVAL, "a number with letters is refused");
	ok(wire_get_long(&m, "none", 0, 10, &v) == -EINVAL, "a missing number is refused");
	char **args = wire_get_all(&m, "arg");
	ok(args[0] && streq(args[0], "a") && args[1] && streq(args[1], "b") && !args[2], "the repeated args, in order");
	free(args);
	is_str(wire_get(&m, "arg"), "a", "wire_get gives the first");
	wire_msg_free(&m);
}

static void test_socket(void)
{
	int sv[2];
	if (!ok(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0, "a SOCK_SEQPACKET pair"))
		return;
	int p[2];
	(void)!pipe2(p, O_CLOEXEC);
	struct wire_out o = { 0 };
	wire_begin(&o, "started");
	wire_add_long(&o, "pid", 77);
	is_int(wire_send(sv[0], &o, &p[1], 1), 0, "a message with a descriptor is sent");
	struct wire_msg m;
	int fds[WIRE_MAX_FDS];
	size_t n = 0;
	is_int(wire_recv(sv[1], &m, fds, WIRE_MAX_FDS, &n), 0, "and received");
	ok(n == 1 && (fcntl(fds[0], F_GETFD) & FD_CLOEXEC), "with its descriptor, close-on-exec");
	ok(n == 1 && write(fds[0], "x", 1) == 1, "the descriptor is the pipe's write end");
	is_str(wire_get(&m, "pid"), "77", "its field");
	if (n)
		close(fds[0]);
	wire_msg_free(&m);
	/* More descriptors than the reader takes: refused, all closed. */
	int many[3] = { p[1], p[1], p[1] };
	(void)wire_send(sv[0], &o, many, 3);
	is_int(wire_recv(sv[1], &m, fds, 2, &n), -EBADMSG, "more descriptors than asked for: refused");
	ok(n == 0, "and none handed back");
	/* A packet that is no message. */
	(void)!send(sv[0], "no-nul", 6, 0);
	is_int(wire_recv(sv[1], &m, fds, WIRE_MAX_FDS, &n), -EBADMSG, "a packet that is no message is refused");
	close(sv[0]);
	is_int(wire_recv(sv[1], &m, fds, WIRE_MAX_FDS, &n), -EPIPE, "the peer gone: EPIPE");
	close(sv[1]);
	close(p[0]);
	close(p[1]);
	wire_out_free(&o);
}

int main(void)
{
	test_parse();
	test_get();
	test_socket();
	return tap_done();
}
