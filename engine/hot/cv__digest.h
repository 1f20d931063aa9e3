/*
 * cv__digest — the message digests Heat's digest function offers through
 * Python's hashlib: md5, sha1, sha224, sha256, sha384 and sha512, one-shot
 * over a buffer, as lowercase hex. Self-contained (no OpenSSL is linked);
 * checked against the test vectors of RFC 1321, RFC 3174 and FIPS 180-4
 * (RFC 6234).
 */
#ifndef CV__DIGEST_H
#define CV__DIGEST_H

#include <stddef.h>

/* The longest digest in hex, with its terminating NUL: sha512's. */
#define CV__DIGEST_HEX_MAX (2 * 64 + 1)

/* Writes the digest of `data` under `algorithm` (lowercase name, as
 * above) to `hex` as lowercase hex. Returns 0, or -1 when the algorithm
 * is not one of these. */
int cv__digest_hex(const char *algorithm, const void *data, size_t len,
                   char hex[CV__DIGEST_HEX_MAX]);

#endif
