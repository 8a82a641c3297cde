#include "lib/dns.h"

#include <stdint.h>

size_t dns_question_name(const void *msg, size_t len, char *name, size_t size)
{
	const uint8_t *q = msg;
	if (size == 0)
		return 0;
	name[0] = '\0';
	/* A response, or something else than a standard query. */
	if (len < DNS_HEADER || (q[2] & 0x80) || (q[2] & 0x78) != 0 || (q[4] << 8 | q[5]) != 1)
		return 0;
	size_t at = DNS_HEADER, out = 0;
	while (at < len) {
		size_t label = q[at++];
		if (label == 0) {
			if (out == 0 && size > 1)
				name[out++] = '.';
			name[out < size ? out : size - 1] = '\0';
			return at;
		}
		if (label > 63 || at + label > len)
			break;
		if (out && out + 1 < size)
			name[out++] = '.';
		for (size_t i = 0; i < label; i++) {
			uint8_t c = q[at + i];
			if (c > 0x20 && c < 0x7f && c != '.' && c != '\\') {
				if (out + 1 < size)
					name[out++] = (char)c;
			} else if (out + 4 < size) {
				name[out++] = '\\';
				name[out++] = (char)('0' + c / 100);
				name[out++] = (char)('0' + c / 10 % 10);
				name[out++] = (char)('0' + c % 10);
			}
		}
		at += label;
		name[out < size ? out : size - 1] = '\0';
	}
	name[0] = '\0';
	return 0;
}
