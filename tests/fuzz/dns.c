/* libFuzzer: the DNS questions stockade reads (lib/dns.c), from the
 * namespace jail's responder and the landlock backend's refused
 * datagrams, on bytes the command shapes; and the responder's answer
 * (netns/responder.c). Invariants: the name is a NUL-terminated string
 * that fits its buffer, of printable ASCII only; the offset past it lies
 * within the message; an answer fits its buffer and copies the query's
 * id; a buffer too small is refused, never overrun. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/dns.h"
#include "netns/netns.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[64 + 8];
	memset(name, 0x5a, sizeof(name));
	size_t end = dns_question_name(data, size, name, 64);
	for (size_t i = 64; i < sizeof(name); i++)
		if (name[i] != 0x5a)
			abort();
	size_t len = strnlen(name, 64);
	if (len == 64 || end > size || (end && end <= DNS_HEADER))
		abort();
	for (size_t i = 0; i < len; i++)
		if (name[i] <= 0x20 || name[i] >= 0x7f)
			abort();
	uint8_t reply[512 + 16];
	memset(reply, 0xa5, sizeof(reply));
	int n = netns_dns_refusal(data, size, reply, 512, name, 64);
	for (size_t i = 512; i < sizeof(reply); i++)
		if (reply[i] != 0xa5)
			abort();
	if (n >= 0 && ((size_t)n > 512 || (size_t)n < DNS_HEADER || memcmp(reply, data, 2) != 0))
		abort();
	return 0;
}
