/* The namespace jail's name responder. With loopback the jail has no
 * route to any resolver: a lookup would wait for timeouts and retries
 * (npm spent 70 s on getaddrinfo's EAI_AGAIN) and nobody would say why.
 * So the jail's init binds 127.0.0.1:53 in the jail's network namespace,
 * hands the socket to stockade outside, and /etc/resolv.conf is covered
 * by an empty file (the C libraries then ask 127.0.0.1). stockade answers
 * every question at once with NXDOMAIN (a name that does not exist: no
 * resolver retries it, unlike SERVFAIL or REFUSED, which read as
 * "try again") and records the name it was asked. */
#include "netns/netns.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/dns.h"
#include "lib/util.h"
#include "policy/allow.h"
#include "policy/report.h"

#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_FORMERR 1

int netns_responder_open(void)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(53),
				   .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

int netns_dns_refusal(const void *query, size_t len, void *reply, size_t size, char *name, size_t name_size)
{
	const uint8_t *q = query;
	uint8_t *r = reply;
	if (name_size == 0 || len < DNS_HEADER || size < DNS_HEADER)
		return -EINVAL;
	/* A response, or something else than a standard query: not ours to
	 * answer. */
	if ((q[2] & 0x80) || (q[2] & 0x78) != 0)
		return -EINVAL;
	size_t end = dns_question_name(q, len, name, name_size);
	bool whole = end && end + 4 <= len;
	size_t n = whole ? end + 4 : DNS_HEADER;
	if (n > size)
		return -ENOSPC;
	memcpy(r, q, n);
	/* QR, the opcode and RD as asked; RA set; no answer, authority or
	 * additional records. A question stockade cannot read is a FORMERR. */
	r[2] = (uint8_t)(0x80 | (q[2] & 0x01));
	r[3] = (uint8_t)(0x80 | (whole ? DNS_RCODE_NXDOMAIN : DNS_RCODE_FORMERR));
	r[4] = 0;
	r[5] = whole ? 1 : 0;
	memset(r + 6, 0, 6);
	if (!whole)
		name[0] = '\0';
	return (int)n;
}

int netns_responder_serve(int fd, const char *source, struct report *rep)
{
	for (;;) {
		uint8_t q[512], r[512];
		char name[256];
		struct sockaddr_storage from;
		socklen_t from_len = sizeof(from);
		ssize_t n = recvfrom(fd, q, sizeof(q), MSG_DONTWAIT | MSG_TRUNC, (struct sockaddr *)&from, &from_len);
		if (n < 0)
			return errno == EAGAIN || errno == EINTR ? 0 : -errno;
		int m = netns_dns_refusal(q, (size_t)n < sizeof(q) ? (size_t)n : sizeof(q), r, sizeof(r), name,
					  sizeof(name));
		if (m < 0)
			continue;
		(void)sendto(fd, r, (size_t)m, MSG_DONTWAIT, (struct sockaddr *)&from, from_len);
		const char *what = *name ? name : "(unreadable question)";
		bool full = report_records_full(rep, "name", what);
		/* The narrowest grant that answers it: that one name (network
		 * allow), else the host's network. */
		char norm[ALLOW_NAME_MAX + 1];
		_cleanup_free_ char *fix = !full && *name && allow_name_normalize(name, norm) == 0
						   ? allow_name_fix(norm, 0)
						   : xstrdup(ALLOW_NET_FIX);
		report_denial_ruled(rep, "name", full ? "(further names)" : what, "NXDOMAIN",
				    "network loopback: names are answered by the jail's own responder", source, fix);
	}
}
