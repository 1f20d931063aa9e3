#include "cv_hash.h"

#define FNV_PRIME 0x100000001b3ULL

uint64_t cv_hash_more(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * FNV_PRIME;
    return h;
}

uint64_t cv_hash_str(const char *s)
{
    return cv_hash_more(CV_HASH_SEED, s);
}
