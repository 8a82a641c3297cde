/* SHA-256 (FIPS 180-4), for naming contents: what `stockade trust`
 * records is a file's exact bytes by their hash. */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;		/* bytes hashed so far */
	unsigned char block[64];
	size_t fill;
};

void sha256_init(struct sha256 *s);
void sha256_add(struct sha256 *s, const void *data, size_t n);
void sha256_end(struct sha256 *s, unsigned char out[static 32]);
/* The hash of data as 64 lowercase hex digits and a NUL. */
void sha256_hex(const void *data, size_t n, char out[static 65]);
