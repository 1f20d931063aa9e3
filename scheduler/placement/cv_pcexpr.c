/*
 * cv_pcexpr — evaluating Service Fabric placement-constraint expressions on a
 * node's properties; the parser is pcexpr_parse.c.
 *
 * Evaluation is three-valued so that a node lacking a property never matches
 * through it, negated or not (Service Fabric's cluster description docs:
 * nodes without the property do not match any constraint containing it): a
 * comparison on a missing property is UNKNOWN, !UNKNOWN is UNKNOWN, FALSE &&
 * UNKNOWN is FALSE, TRUE || UNKNOWN is TRUE, and only TRUE matches.
 */
#include "pcexpr_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum { TV_FALSE, TV_TRUE, TV_UNKNOWN } tv_t;

void cv_pcexpr_free(cv_pcexpr_t *e)
{
    if (!e)
        return;
    for (size_t i = 0; i < e->kids.n; i++)
        cv_pcexpr_free(e->kids.v[i]);
    cv_vec_free(&e->kids);
    free(e->name);
    free(e->sval);
    free(e);
}

int cv__pcexpr_int64(const char *s, int64_t *out)
{
    const char *d = s + (*s == '+' || *s == '-');
    if (!*d)
        return 0;
    for (const char *q = d; *q; q++)
        if (*q < '0' || *q > '9')
            return 0;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE)
        return -1;
    *out = (int64_t)v;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Evaluation                                                               */
/* ------------------------------------------------------------------------ */

static tv_t tv_of(bool b)
{
    return b ? TV_TRUE : TV_FALSE;
}

/* Applies `op` to a three-way comparison result (<0, 0, >0). */
static tv_t apply(pc_op_t op, int c)
{
    switch (op) {
    case OP_EQ:
        return tv_of(c == 0);
    case OP_NE:
        return tv_of(c != 0);
    case OP_GT:
        return tv_of(c > 0);
    case OP_GE:
        return tv_of(c >= 0);
    case OP_LT:
        return tv_of(c < 0);
    case OP_LE:
        return tv_of(c <= 0);
    }
    return TV_UNKNOWN;
}

/* Values of types that do not compare are unequal and unordered: == is
 * false, != is true, an ordering is unknown (like a missing property, it
 * never lets the node match, negated or not). */
static tv_t incomparable(pc_op_t op)
{
    if (op == OP_EQ)
        return TV_FALSE;
    if (op == OP_NE)
        return TV_TRUE;
    return TV_UNKNOWN;
}

static int cmp_i64(int64_t a, int64_t b)
{
    return (a > b) - (a < b);
}

static int cmp_double(double a, double b)
{
    return (a > b) - (a < b);
}

/* Reads a node string as a boolean the way Service Fabric manifests spell
 * them ("true", "True", "FALSE"). */
static bool string_bool(const char *s, bool *out)
{
    if (strcasecmp(s, "true") == 0)
        *out = true;
    else if (strcasecmp(s, "false") == 0)
        *out = false;
    else
        return false;
    return true;
}

/*
 * One comparison, typed by the literal: an integer literal compares
 * numerically with an integer (or real) node value or a node string that
 * spells an integer; a boolean literal with a boolean or a string spelling
 * one; a string literal compares bytes with a string node value, and with a
 * typed node value only when the literal spells a value of that type ('5'
 * equals 5, 'true' equals true).
 */
static tv_t compare(const cv_pcexpr_t *e, const json_t *v)
{
    int64_t i;
    bool b;
    if (!v || json_is_null(v))
        return TV_UNKNOWN;
    switch (e->lit) {
    case LIT_INT:
        if (json_is_integer(v))
            return apply(e->op, cmp_i64((int64_t)json_integer_value(v), e->ival));
        if (json_is_real(v))
            return apply(e->op, cmp_double(json_real_value(v), (double)e->ival));
        if (json_is_string(v) && cv__pcexpr_int64(json_string_value(v), &i) == 1)
            return apply(e->op, cmp_i64(i, e->ival));
        return incomparable(e->op);
    case LIT_BOOL:
        if (json_is_boolean(v))
            return apply(e->op, json_is_true(v) != e->bval);
        if (json_is_string(v) && string_bool(json_string_value(v), &b))
            return apply(e->op, b != e->bval);
        return incomparable(e->op);
    case LIT_STR:
        if (json_is_string(v))
            return apply(e->op, strcmp(json_string_value(v), e->sval));
        if (json_is_integer(v) && cv__pcexpr_int64(e->sval, &i) == 1)
            return apply(e->op, cmp_i64((int64_t)json_integer_value(v), i));
        if (json_is_boolean(v) && (e->op == OP_EQ || e->op == OP_NE) && string_bool(e->sval, &b))
            return apply(e->op, json_is_true(v) != b);
        return incomparable(e->op);
    }
    return TV_UNKNOWN;
}

static tv_t eval(const cv_pcexpr_t *e, const json_t *props);

/* Three-valued && (decisive TV_FALSE) or || (decisive TV_TRUE): the first
 * decisive operand settles it; otherwise any unknown operand makes the
 * whole unknown. */
static tv_t eval_chain(const cv_pcexpr_t *e, const json_t *props, tv_t decisive)
{
    tv_t acc = decisive == TV_FALSE ? TV_TRUE : TV_FALSE;
    for (size_t i = 0; i < e->kids.n; i++) {
        tv_t t = eval(e->kids.v[i], props);
        if (t == decisive)
            return decisive;
        if (t == TV_UNKNOWN)
            acc = TV_UNKNOWN;
    }
    return acc;
}

static tv_t eval(const cv_pcexpr_t *e, const json_t *props)
{
    tv_t acc;
    switch (e->kind) {
    case PC_TRUE:
        return TV_TRUE;
    case PC_CMP:
        return compare(e, props ? json_object_get(props, e->name) : NULL);
    case PC_NOT:
        acc = eval(e->kids.v[0], props);
        return acc == TV_UNKNOWN ? TV_UNKNOWN : tv_of(acc == TV_FALSE);
    case PC_AND:
        return eval_chain(e, props, TV_FALSE);
    case PC_OR:
        return eval_chain(e, props, TV_TRUE);
    }
    return TV_UNKNOWN;
}

bool cv_pcexpr_match(const cv_pcexpr_t *e, const json_t *props)
{
    return eval(e, props) == TV_TRUE;
}

/* ------------------------------------------------------------------------ */
/* Introspection                                                            */
/* ------------------------------------------------------------------------ */

static bool names_contain(const json_t *names, const char *name)
{
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
    {
        if (json_is_string(n) && strcmp(json_string_value(n), name) == 0)
            return true;
    }
    return false;
}

/* Each name once, in order of first use; names already in the array (from
 * another expression) are not repeated. */
void cv_pcexpr_properties(const cv_pcexpr_t *e, json_t *names)
{
    if (e->kind == PC_CMP) {
        if (!names_contain(names, e->name))
            json_array_append_new(names, json_string(e->name));
        return;
    }
    for (size_t i = 0; i < e->kids.n; i++)
        cv_pcexpr_properties(e->kids.v[i], names);
}
