#include "cv_vec.h"

#include <stdint.h>

/* The first allocation, in elements: small, since many vectors stay small
 * (a graph node's predecessors and successors); doubling soon catches up. */
#define MIN_CAP 2

/* `items` is the address of the vector's T * field. Its value is copied in
 * and out with memcpy rather than read through a void ** (which would read
 * a T * through another pointer type); every object pointer has the
 * representation of void * on the platforms POSIX allows. */
int cv__vec_grow(void *items, size_t *cap, size_t n, size_t more, size_t size)
{
    if (more > SIZE_MAX / size / 2 - n)
        return CV_ENOMEM;
    size_t need = n + more, grown = *cap ? *cap : MIN_CAP;
    while (grown < need)
        grown *= 2;
    void *old, *v;
    memcpy(&old, items, sizeof(old));
    v = realloc(old, grown * size);
    if (!v)
        return CV_ENOMEM;
    memcpy(items, &v, sizeof(v));
    *cap = grown;
    return 0;
}
