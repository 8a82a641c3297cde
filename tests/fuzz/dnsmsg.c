/* libFuzzer: the DNS messages of network allow (forward/dnsmsg.c): the
 * run's query and the answer stockade builds for it, on bytes the
 * command shapes, and a name server's response, on bytes a server (or
 * one who forges its datagrams) shapes. Invariants: a query's name is
 * empty or a host name as the allow list compares it; an answer fits
 * its buffer, copies the query's id and is read back as an answer to
 * that very question; a response is taken only for the question asked
 * (the name compared with the one of the input's own question), with
 * at most RELAY_ADDRS_MAX addresses of the family asked for. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "forward/forward.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dns_query q;
	if (dns_parse_query(data, size, &q) == 0) {
		char norm[ALLOW_NAME_MAX + 1];
		size_t n = strnlen(q.name, sizeof(q.name));
		if (n == sizeof(q.name) || (n && (allow_name_normalize(q.name, norm) < 0 || strcmp(norm, q.name) != 0)))
			abort();
		if (q.question_end > size)
			abort();
		struct dns_addrs a = { .family = AF_INET6, .n = 3, .ttl = 5 };
		memset(a.addr, 0x20, sizeof(a.addr));
		uint8_t reply[600 + 16];
		memset(reply, 0xa5, sizeof(reply));
		int r = dns_build_answer(data, size, &q, 0, &a, 5, reply, 600);
		for (size_t i = 600; i < sizeof(reply); i++)
			if (reply[i] != 0xa5)
				abort();
		if (r >= 0 && ((size_t)r > 600 || memcmp(reply, data, 2) != 0))
			abort();
		if (r > 0 && n && q.type == 28 && q.class_ == DNS_CLASS_IN) {
			struct dns_result res;
			uint16_t id = (uint16_t)(data[0] << 8 | data[1]);
			if (dns_parse_response(reply, (size_t)r, q.name, 28, id, &res) != 0 || res.addrs.n != 3 || res.ttl != 5)
				abort();
		}
	}
	/* As a response to a question of the input's own. */
	if (size > 12) {
		struct dns_result res;
		char name[ALLOW_NAME_MAX + 1] = "a.example";
		struct dns_query own;
		if (dns_parse_query(data, size, &own) == 0 && own.name[0])
			memcpy(name, own.name, sizeof(name));
		uint16_t id = (uint16_t)(data[0] << 8 | data[1]);
		for (int t = 0; t < 2; t++) {
			uint16_t type = t ? 28 : 1;
			int r = dns_parse_response(data, size, name, type, id, &res);
			if (r == 0 && (res.addrs.n > RELAY_ADDRS_MAX || res.addrs.family != (type == 1 ? AF_INET : AF_INET6)))
				abort();
		}
	}
	return 0;
}
