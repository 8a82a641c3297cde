/* Messages of NUL-separated fields (stockade.1, SESSIONS, the protocol):
 * one message is one packet of a SOCK_SEQPACKET Unix socket, its fields
 * separated by NUL bytes and ended by one: the message's type first, then
 * KEY=VALUE fields, a key repeated where it says so (arg, env).
 * Descriptors come with a message (SCM_RIGHTS). Parsing is pure and
 * checks everything (tests/fuzz/wire.c); sending and receiving are thin.
 *
 * The same messages pass between `stockade session exec` (or any client
 * that speaks them) and the session's holder, and between the holder and
 * the jail's zygote. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* The version a hello carries; a holder refuses any other. */
#define WIRE_VERSION 1
/* The largest message either side sends or takes: an environment of
 * 100 KiB and a long command line fit. */
#define WIRE_MAX (256 * 1024)
/* The most descriptors one message carries. */
#define WIRE_MAX_FDS 4

struct wire_field {
	const char *key;
	const char *value;
};

struct wire_msg {
	const char *type;
	struct wire_field *f;
	size_t n;
	char *buf;		/* the packet, owned: every string points into it */
};

/* Parses len bytes. Every field ends with NUL, the type is a word of
 * [a-z-], every other field is KEY=VALUE with KEY a word of [a-z-]
 * (a value may hold any byte but NUL). 0, or -EBADMSG with *ret empty. */
int wire_parse(const char *buf, size_t len, struct wire_msg *ret);
void wire_msg_free(struct wire_msg *m);
/* The first value of key, or NULL. */
const char *wire_get(const struct wire_msg *m, const char *key);
/* A number field: 0 and *ret, or -EINVAL (missing, or not a number in
 * [min, max]). */
int wire_get_long(const struct wire_msg *m, const char *key, long min, long max, long *ret);
/* The values of key in order, NULL-terminated (the strings are m's). */
char **wire_get_all(const struct wire_msg *m, const char *key);

struct wire_out {
	char *buf;
	size_t len, cap;
};

void wire_begin(struct wire_out *o, const char *type);
void wire_add(struct wire_out *o, const char *key, const char *value);
void wire_add_long(struct wire_out *o, const char *key, long value);
void wire_out_free(struct wire_out *o);

/* One message, with n descriptors. 0, -EMSGSIZE over WIRE_MAX, or -errno
 * (EPIPE when the peer is gone; never SIGPIPE). */
int wire_send(int sock, const struct wire_out *o, const int *fds, size_t n);
/* One message and its descriptors (O_CLOEXEC; *ret_n of them, at most
 * max). 0, -EPIPE at EOF, -EBADMSG for a message that does not parse or
 * was cut short (its descriptors closed), or -errno. */
int wire_recv(int sock, struct wire_msg *ret, int *fds, size_t max, size_t *ret_n);
