/*
 * mesos_internal — the constraint tree shared by the parser (mesos_parse.c)
 * and the judge (cv_mesos.c). Not a public surface: only those two files
 * include it.
 */
#ifndef CV_MESOS_INTERNAL_H
#define CV_MESOS_INTERNAL_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

#include "cv_mesos.h"

/* Room for the text of a number or boolean attribute value. */
#define CV__MESOS_VALUE_TEXT_MAX 64

typedef enum {
    MOP_UNIQUE,
    MOP_MAXPER,
    MOP_CLUSTER,
    MOP_LIKE,
    MOP_UNLIKE,
    MOP_GROUPBY,
    MOP_AND,
    MOP_OR
} mop_t;

typedef enum { MP_NONE, MP_STRING, MP_SET, MP_SCALAR, MP_RANGE } mparam_t;

/* Indexed by mop_t: the operator names as written and shown. */
extern const char *const cv__mesos_op_name[];

struct cv_mconstraint {
    mop_t op;
    char *attr;
    mparam_t param;
    char *str;  /* MP_STRING */
    char **set; /* MP_SET */
    size_t nset;
    double scalar; /* MP_SCALAR; MAXPER's n */
    double lo, hi; /* MP_RANGE */
    regex_t re;    /* LIKE, UNLIKE */
    bool has_re;
    cv_mconstraint_t **kids; /* MOP_AND, MOP_OR */
    size_t nkids;
    char *text; /* cv_mconstraint_text() */
};

#endif
