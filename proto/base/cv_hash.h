/*
 * cv_hash — the one string hash of Converge: 64-bit FNV-1a.
 *
 * Cheap and well mixed for names; used for hash tables (graph, sync
 * points), idempotency keys and digests. Never a security property.
 */
#ifndef CV_HASH_H
#define CV_HASH_H

#include <stdint.h>

#define CV_HASH_SEED 0xcbf29ce484222325ULL /* the FNV-1a offset basis */

/* Continues hash `h` over the bytes of `s` (NULL counts as ""). */
uint64_t cv_hash_more(uint64_t h, const char *s);

/* cv_hash_more(CV_HASH_SEED, s). */
uint64_t cv_hash_str(const char *s);

#endif
