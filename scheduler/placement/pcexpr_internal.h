/*
 * pcexpr_internal — the expression tree shared by the parser
 * (pcexpr_parse.c) and the evaluator (cv_pcexpr.c). Not a public surface:
 * only those two files include it.
 */
#ifndef CV_PCEXPR_INTERNAL_H
#define CV_PCEXPR_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cv_base.h"
#include "cv_pcexpr.h"

typedef enum { PC_TRUE, PC_CMP, PC_NOT, PC_AND, PC_OR } pc_kind_t;
typedef enum { OP_EQ, OP_NE, OP_GT, OP_GE, OP_LT, OP_LE } pc_op_t;
typedef enum { LIT_INT, LIT_BOOL, LIT_STR } pc_lit_t;

/* PC_TRUE is the empty expression; and-chains and or-chains are n-ary. */
struct cv_pcexpr {
    pc_kind_t kind;
    /* PC_CMP */
    char *name;
    pc_op_t op;
    pc_lit_t lit;
    int64_t ival;
    bool bval;
    char *sval;
    /* PC_NOT (one child), PC_AND, PC_OR */
    CV_VEC(cv_pcexpr_t *) kids;
};

/* Reads a whole string as a signed 64-bit decimal integer (optional sign).
 * Returns 1 when it is one, 0 when it is not, -1 when it is out of range. */
int cv__pcexpr_int64(const char *s, int64_t *out);

#endif
