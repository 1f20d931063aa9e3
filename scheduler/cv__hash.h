/* Internal to the scheduler: the string hash its open-addressing tables share. */
#ifndef CV__HASH_H
#define CV__HASH_H

#include <stdint.h>

/* FNV-1a: cheap, and good enough for linear probing on names. */
uint64_t cv__hash_str(const char *s);

#endif
