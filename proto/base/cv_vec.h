/*
 * cv_vec — the growable array of the whole tree, typed by the element it
 * holds. A vector type is declared once for its element:
 *
 *     typedef CV_VEC(cv_rc_op_t) cv_rc_ops_t;
 *     cv_rc_ops_t ops = {0};
 *     if (cv_vec_push(&ops, op) != 0) ... CV_ENOMEM
 *     for (size_t i = 0; i < ops.n; i++) ... ops.v[i]
 *     cv_vec_free(&ops);
 *
 * The element type comes from the vector's `v`, so pushing a value of
 * another type is a compile error, and sizes are never written by hand.
 * Growth doubles the capacity (n pushes cost O(n) copies in all); a failed
 * growth leaves the vector as it was. The macros evaluate the vector
 * argument more than once: pass a plain pointer. Pure.
 */
#ifndef CV_VEC_H
#define CV_VEC_H

#include "cv_error.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A vector of T: its elements v[0] .. v[n - 1], room for cap; a zeroed one
 * ({0}) is empty. */
#define CV_VEC(T)                                                                                  \
    struct {                                                                                       \
        T *v;                                                                                      \
        size_t n, cap;                                                                             \
    }

/* Makes room for `more` elements past n; 0 or CV_ENOMEM. */
#define cv_vec_reserve(a, more)                                                                    \
    ((more) <= (a)->cap - (a)->n                                                                   \
         ? 0                                                                                       \
         : cv__vec_grow(&(a)->v, &(a)->cap, (a)->n, (more), sizeof(*(a)->v)))

/* Appends the value (an expression of the element type, a compound
 * literal included); 0 or CV_ENOMEM. */
#define cv_vec_push(a, ...)                                                                        \
    (cv_vec_reserve((a), 1) != 0 ? CV_ENOMEM : ((a)->v[(a)->n++] = (__VA_ARGS__), 0))

/* Appends a zeroed element and returns its address, or NULL when out of
 * memory: for elements filled field by field. */
#define cv_vec_add(a)                                                                              \
    (cv_vec_reserve((a), 1) != 0 ? NULL : memset(&(a)->v[(a)->n++], 0, sizeof(*(a)->v)))

/* Frees the elements' array (not what they point to) and empties it. */
#define cv_vec_free(a) (free((a)->v), (a)->v = NULL, (a)->n = (a)->cap = 0)

/* The grower behind cv_vec_reserve: `*items` (any T *) gets room for n +
 * more elements of `size` bytes. Not called directly. */
int cv__vec_grow(void *items, size_t *cap, size_t n, size_t more, size_t size);

#endif
