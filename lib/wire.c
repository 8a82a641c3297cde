#include "lib/wire.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/util.h"

static bool is_word(const char *s, size_t n)
{
	if (n == 0 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || s[i] == '-'))
			return false;
	return true;
}

int wire_parse(const char *buf, size_t len, struct wire_msg *ret)
{
	*ret = (struct wire_msg){ 0 };
	if (len == 0 || len > WIRE_MAX || buf[len - 1] != '\0')
		return -EBADMSG;
	char *copy = xmalloc(len);
	memcpy(copy, buf, len);
	struct wire_msg m = { .buf = copy };
	size_t at = 0;
	bool first = true;
	while (at < len) {
		const char *s = copy + at;
		size_t n = strlen(s);
		at += n + 1;
		if (first) {
			if (!is_word(s, n))
				goto bad;
			m.type = s;
			first = false;
			continue;
		}
		const char *eq = memchr(s, '=', n);
		if (!eq || !is_word(s, (size_t)(eq - s)))
			goto bad;
		copy[eq - copy] = '\0';
		m.f = xgrow(m.f, m.n, sizeof(*m.f));
		m.f[m.n++] = (struct wire_field){ .key = s, .value = eq + 1 };
	}
	*ret = m;
	return 0;
bad:
	free(m.f);
	free(copy);
	return -EBADMSG;
}

void wire_msg_free(struct wire_msg *m)
{
	free(m->f);
	free(m->buf);
	*m = (struct wire_msg){ 0 };
}

const char *wire_get(const struct wire_msg *m, const char *key)
{
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->f[i].key, key) == 0)
			return m->f[i].value;
	return NULL;
}

int wire_get_long(const struct wire_msg *m, const char *key, long min, long max, long *ret)
{
	const char *v = wire_get(m, key);
	if (!v || !*v)
		return -EINVAL;
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (errno || *end || n < min || n > max)
		return -EINVAL;
	*ret = n;
	return 0;
}

char **wire_get_all(const struct wire_msg *m, const char *key)
{
	size_t k = 0;
	char **v = xcalloc(m->n + 1, sizeof(*v));
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->f[i].key, key) == 0)
			v[k++] = (char *)m->f[i].value;
	return v;
}

static void put(struct wire_out *o, const char *s, size_t n)
{
	if (o->len + n > o->cap) {
		o->cap = o->cap ? o->cap : 256;
		while (o->len + n > o->cap)
			o->cap *= 2;
		o->buf = xrealloc(o->buf, o->cap);
	}
	memcpy(o->buf + o->len, s, n);
	o->len += n;
}

void wire_begin(struct wire_out *o, const char *type)
{
	o->len = 0;
	put(o, type, strlen(type) + 1);
}

void wire_add(struct wire_out *o, const char *key, const char *value)
{
	put(o, key, strlen(key));
	put(o, "=", 1);
	put(o, value, strlen(value) + 1);
}

void wire_add_long(struct wire_out *o, const char *key, long value)
{
	char num[24];
	snprintf(num, sizeof(num), "%ld", value);
	wire_add(o, key, num);
}

void wire_out_free(struct wire_out *o)
{
	free(o->buf);
	*o = (struct wire_out){ 0 };
}

int wire_send(int sock, const struct wire_out *o, const int *fds, size_t n)
{
	if (o->len > WIRE_MAX || n > WIRE_MAX_FDS)
		return -EMSGSIZE;
	struct iovec iov = { .iov_base = o->buf, .iov_len = o->len };
	union {
		char buf[CMSG_SPACE(sizeof(int) * WIRE_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n) {
		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	ssize_t w;
	do
		w = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w < 0)
		return -errno;
	return (size_t)w == o->len ? 0 : -EIO;
}

int wire_recv(int sock, struct wire_msg *ret, int *fds, size_t max, size_t *ret_n)
{
	*ret = (struct wire_msg){ 0 };
	*ret_n = 0;
	char *buf = xmalloc(WIRE_MAX);
	struct iovec iov = { .iov_base = buf, .iov_len = WIRE_MAX };
	union {
		char buf[CMSG_SPACE(sizeof(int) * WIRE_MAX_FDS)];
		struct cmsghdr align;
	} u;
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	ssize_t r;
	do
		r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	int e = r < 0 ? -errno : r == 0 ? -EPIPE : 0;
	/* Every descriptor that came is ours to keep or to close. */
	size_t got = 0;
	int in[WIRE_MAX_FDS * 2];
	for (struct cmsghdr *c = r >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k && got < ARRAY_SIZE(in); i++)
			memcpy(&in[got++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
	}
	if (!e && (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		e = -EBADMSG;
	if (!e && got > max)
		e = -EBADMSG;
	if (!e)
		e = wire_parse(buf, (size_t)r, ret);
	free(buf);
	if (e) {
		for (size_t i = 0; i < got; i++)
			close(in[i]);
		return e;
	}
	memcpy(fds, in, got * sizeof(int));
	*ret_n = got;
	return 0;
}
