/* libFuzzer: the supervisor's sockaddr parser, on the bytes a command
 * hands to connect or bind. Invariants: a parse that succeeds gives a
 * family it knows and a Unix path within sun_path, formatting never
 * overruns, unmapping is idempotent and keeps loopback loopback. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "supervise/supervise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct net_addr a;
	if (net_addr_parse(data, size, &a) < 0)
		return 0;
	if (a.family == AF_UNIX && a.path_len > sizeof(((struct sockaddr_un *)0)->sun_path))
		abort();
	char buf[160];
	net_addr_format(&a, buf, sizeof(buf));
	if (!memchr(buf, '\0', sizeof(buf)))
		abort();
	bool loop = net_addr_is_loopback(&a);
	struct net_addr u = a;
	net_addr_unmap(&u);
	struct net_addr twice = u;
	net_addr_unmap(&twice);
	if (memcmp(&u, &twice, sizeof(u)) != 0)
		abort();
	if (loop && !net_addr_is_loopback(&u))
		abort();
	if (net_addr_is_loopback(&u) && net_addr_is_wildcard(&u))
		abort();
	return 0;
}
