/* libFuzzer: the namespace jail's answer to a frame its way out carries
 * (netns/outside.c), on bytes the command shapes. Invariants: an answer
 * fits the buffer it was given and is an ICMP or ICMPv6 error sent back
 * to the frame's source, quoting only bytes of the frame; a frame too
 * short for an answer gets none; a reply buffer too small is refused,
 * never overrun. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "netns/netns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t reply[1536 + 16];
	memset(reply, 0xa5, sizeof(reply));
	struct netns_attempt a;
	int n = netns_outside_answer(data, size, reply, 1536, &a);
	for (size_t i = 1536; i < sizeof(reply); i++)
		if (reply[i] != 0xa5)
			abort();
	if (n < 0)
		return 0;
	if ((size_t)n > 1536 || size < 14 + 20 + 8)
		abort();
	if (memcmp(reply, data + 6, 6) != 0 || memcmp(reply + 12, data + 12, 2) != 0)
		abort();
	if (a.family == AF_INET) {
		if (reply[14 + 9] != 1 || reply[14 + 20] != 3 || memcmp(reply + 14 + 16, data + 14 + 12, 4) != 0)
			abort();
	} else if (a.family == AF_INET6) {
		if (reply[14 + 6] != 58 || reply[14 + 40] != 1 || memcmp(reply + 14 + 24, data + 14 + 8, 16) != 0)
			abort();
	} else {
		abort();
	}
	/* A small buffer: refused, and nothing written past it. */
	uint8_t small[64 + 16];
	memset(small, 0xa5, sizeof(small));
	if (netns_outside_answer(data, size, small, 64, &a) >= 0 && n > 64)
		abort();
	for (size_t i = 64; i < sizeof(small); i++)
		if (small[i] != 0xa5)
			abort();
	return 0;
}
