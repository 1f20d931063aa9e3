/*
 * mesos_parse — reading BCS/Mesos constraints from their JSON form
 * (cv_mesos.h; the operators and their semantics are described in
 * cv_mesos.c). Every refusal names the JSON path of the offending element:
 * "svc.json: constraints.and[1].or[0][1]: unknown operator 'LIKES' (...)".
 * Building also writes each constraint's text for elimination sequences.
 */
#include "mesos_internal.h"

#include "cv_base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_NESTING 32
#define PATH_MAX_LEN 512

static int oom(char *errstr, size_t errstr_size)
{
    return cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
}

/* Formats a JSON path; a path longer than the buffer is cut, which only
 * shortens an error message. */
static void path_fmt(char *dst, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void path_fmt(char *dst, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(dst, size, fmt, ap);
    va_end(ap);
}

/* Reads a whole string as a signed decimal integer. */
static bool text_integer(const char *s, long long *out)
{
    char *end;
    if (!*s)
        return false;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

/* An integer parameter: a JSON integer, an integral real (the BCS
 * document's scalars are floating point: 2.0 is 2), or a string spelling an integer. */
static bool json_as_integer(const json_t *v, long long *out)
{
    if (json_is_integer(v)) {
        *out = (long long)json_integer_value(v);
        return true;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (!(d >= -9007199254740992.0 && d <= 9007199254740992.0) || (double)(long long)d != d)
            return false;
        *out = (long long)d;
        return true;
    }
    return json_is_string(v) && text_integer(json_string_value(v), out);
}

/* ------------------------------------------------------------------------ */
/* Parsing                                                                  */
/* ------------------------------------------------------------------------ */

typedef struct mparser {
    char *errstr;
    size_t errstr_size;
} mparser_t;

static int parse_node(mparser_t *mp, const json_t *spec, const char *path, int depth,
                      cv_mconstraint_t **out);

/* "hostname UNIQUE", "rack MAXPER 2", "IDC LIKE sh.*", "IDC CLUSTER {sz,cd}",
 * "port CLUSTER [10-20]", "and(a, b)": Mesos' own text forms of set and range. */
static int build_text(mparser_t *mp, cv_mconstraint_t *c)
{
    cv_buf_t b = {0};
    if (c->op == MOP_AND || c->op == MOP_OR) {
        cv_buf_puts(&b, cv__mesos_op_name[c->op]);
        cv_buf_puts(&b, "(");
        for (size_t i = 0; i < c->nkids; i++) {
            if (i)
                cv_buf_puts(&b, ", ");
            cv_buf_puts(&b, c->kids[i]->text);
        }
        cv_buf_puts(&b, ")");
    } else {
        cv_buf_puts(&b, c->attr);
        cv_buf_puts(&b, " ");
        cv_buf_puts(&b, cv__mesos_op_name[c->op]);
        switch (c->param) {
        case MP_STRING:
            cv_buf_puts(&b, " ");
            cv_buf_puts(&b, c->str);
            break;
        case MP_SET:
            cv_buf_puts(&b, " {");
            for (size_t i = 0; i < c->nset; i++) {
                if (i)
                    cv_buf_puts(&b, ",");
                cv_buf_puts(&b, c->set[i]);
            }
            cv_buf_puts(&b, "}");
            break;
        case MP_SCALAR:
            cv_buf_puts(&b, " ");
            cv_buf_printf(&b, "%.15g", c->scalar);
            break;
        case MP_RANGE:
            cv_buf_puts(&b, " [");
            cv_buf_printf(&b, "%.15g", c->lo);
            cv_buf_puts(&b, "-");
            cv_buf_printf(&b, "%.15g", c->hi);
            cv_buf_puts(&b, "]");
            break;
        case MP_NONE:
            break;
        }
    }
    c->text = cv_buf_take(&b);
    return c->text ? 0 : oom(mp->errstr, mp->errstr_size);
}

static int bad(mparser_t *mp, const char *path, const char *problem, const char *detail)
{
    return cv_seterr(mp->errstr, mp->errstr_size, CV_EVALIDATE, "%s: %s%s", path, problem,
                     detail ? detail : "");
}

static int parse_set(mparser_t *mp, cv_mconstraint_t *c, const json_t *arr, const char *path)
{
    if (json_array_size(arr) == 0)
        return bad(mp, path, "a set needs at least one value", NULL);
    if (!(c->set = calloc(json_array_size(arr), sizeof(*c->set))))
        return oom(mp->errstr, mp->errstr_size);
    size_t i;
    const json_t *v;
    json_array_foreach(arr, i, v)
    {
        if (!json_is_string(v)) {
            char where[PATH_MAX_LEN];
            path_fmt(where, sizeof(where), "%s[%zu]", path, i);
            return bad(mp, where, "a set holds strings", NULL);
        }
        if (!(c->set[c->nset] = strdup(json_string_value(v))))
            return oom(mp->errstr, mp->errstr_size);
        c->nset++;
    }
    c->param = MP_SET;
    return 0;
}

static bool range_bound(const json_t *v, double *out)
{
    long long n;
    if (!json_as_integer(v, &n))
        return false;
    *out = (double)n;
    return true;
}

/* A range: {"begin": lo, "end": hi} or a two-integer array. Returns 1 when
 * `p` is a well-formed range, 0 when it is not a range at all. */
static int parse_range(mparser_t *mp, cv_mconstraint_t *c, const json_t *p, const char *path)
{
    const json_t *lo, *hi;
    if (json_is_object(p)) {
        lo = json_object_get(p, "begin");
        hi = json_object_get(p, "end");
        if (!lo || !hi || json_object_size(p) != 2)
            return 0;
    } else if (json_is_array(p) && json_array_size(p) == 2) {
        lo = json_array_get(p, 0);
        hi = json_array_get(p, 1);
        long long ignored;
        if (!json_as_integer(lo, &ignored) || !json_as_integer(hi, &ignored))
            return 0;
    } else {
        return 0;
    }
    if (!range_bound(lo, &c->lo) || !range_bound(hi, &c->hi))
        return bad(mp, path, "a range is bounded by integers", NULL);
    if (c->lo > c->hi)
        return bad(mp, path, "a range's begin is above its end", NULL);
    c->param = MP_RANGE;
    return 1;
}

static int parse_cluster_param(mparser_t *mp, cv_mconstraint_t *c, const json_t *p,
                               const char *path)
{
    if (json_is_string(p)) {
        c->param = MP_STRING;
        return (c->str = strdup(json_string_value(p))) ? 0 : oom(mp->errstr, mp->errstr_size);
    }
    if (json_is_number(p)) {
        c->param = MP_SCALAR;
        c->scalar = json_number_value(p);
        return 0;
    }
    int rc = parse_range(mp, c, p, path);
    if (rc != 0)
        return rc < 0 ? rc : 0;
    if (json_is_object(p) && json_object_size(p) == 1 && json_is_array(json_object_get(p, "set")))
        return parse_set(mp, c, json_object_get(p, "set"), path);
    if (json_is_array(p))
        return parse_set(mp, c, p, path);
    return bad(mp, path,
               "CLUSTER takes a string, a set of strings, a number or a range "
               "({\"begin\": lo, \"end\": hi})",
               NULL);
}

static int compile_regex(mparser_t *mp, cv_mconstraint_t *c, const json_t *p, const char *path)
{
    if (!json_is_string(p))
        return bad(mp, path, cv__mesos_op_name[c->op], " takes a regular expression (a string)");
    if (!(c->str = strdup(json_string_value(p))))
        return oom(mp->errstr, mp->errstr_size);
    c->param = MP_STRING;
    char why[256];
    if (cv_regex_compile(&c->re, c->str, REG_EXTENDED, why, sizeof(why)) != 0)
        return cv_seterr(mp->errstr, mp->errstr_size, CV_EVALIDATE,
                         "%s: invalid regular expression '%s': %s", path, c->str, why);
    c->has_re = true;
    return 0;
}

/* The parameter of a leaf; `p` is NULL when the leaf has none. */
static int parse_param(mparser_t *mp, cv_mconstraint_t *c, const json_t *p, const char *path)
{
    char where[PATH_MAX_LEN];
    path_fmt(where, sizeof(where), "%s[2]", path);
    long long n;
    switch (c->op) {
    case MOP_UNIQUE:
        return p ? bad(mp, where, "UNIQUE takes no parameter", NULL) : 0;
    case MOP_MAXPER:
        if (!p || !json_as_integer(p, &n) || n < 1)
            return bad(mp, p ? where : path, "MAXPER takes a positive integer", NULL);
        c->param = MP_SCALAR;
        c->scalar = (double)n;
        return 0;
    case MOP_CLUSTER:
        if (!p)
            return bad(mp, path, "CLUSTER takes a value, a set or a range", NULL);
        return parse_cluster_param(mp, c, p, where);
    case MOP_LIKE:
    case MOP_UNLIKE:
        if (!p)
            return bad(mp, path, cv__mesos_op_name[c->op], " takes a regular expression");
        return compile_regex(mp, c, p, where);
    case MOP_GROUPBY: {
        if (!p)
            return 0;
        if (!json_is_array(p))
            return bad(mp, where, "GROUPBY takes a set of values, or none", NULL);
        int rc = parse_set(mp, c, p, where);
        for (size_t i = 0; rc == 0 && i < c->nset; i++)
            for (size_t j = 0; j < i; j++)
                if (strcmp(c->set[i], c->set[j]) == 0)
                    return cv_seterr(mp->errstr, mp->errstr_size, CV_EVALIDATE,
                                     "%s[%zu]: GROUPBY lists '%s' twice", where, i, c->set[i]);
        return rc;
    }
    case MOP_AND:
    case MOP_OR:
        break;
    }
    return 0;
}

static int parse_leaf(mparser_t *mp, const json_t *spec, const char *path, cv_mconstraint_t *c)
{
    size_t n = json_array_size(spec);
    if (n < 2 || n > 3)
        return bad(mp, path,
                   "a constraint is [attribute, OPERATOR] or [attribute, OPERATOR, "
                   "parameter]",
                   NULL);
    const json_t *attr = json_array_get(spec, 0), *op = json_array_get(spec, 1);
    char where[PATH_MAX_LEN];
    if (!json_is_string(attr) || !*json_string_value(attr)) {
        path_fmt(where, sizeof(where), "%s[0]", path);
        return bad(mp, where, "the attribute must be a non-empty string", NULL);
    }
    path_fmt(where, sizeof(where), "%s[1]", path);
    if (!json_is_string(op))
        return bad(mp, where, "the operator must be a string", NULL);
    bool known = false;
    for (int i = MOP_UNIQUE; i <= MOP_GROUPBY; i++) {
        if (strcasecmp(json_string_value(op), cv__mesos_op_name[i]) == 0) {
            c->op = (mop_t)i;
            known = true;
        }
    }
    if (!known)
        return cv_seterr(mp->errstr, mp->errstr_size, CV_EVALIDATE,
                         "%s: unknown operator '%s' (expected UNIQUE, MAXPER, CLUSTER, LIKE, "
                         "UNLIKE or GROUPBY)",
                         where, json_string_value(op));
    if (!(c->attr = strdup(json_string_value(attr))))
        return oom(mp->errstr, mp->errstr_size);
    return parse_param(mp, c, n == 3 ? json_array_get(spec, 2) : NULL, path);
}

static int parse_group(mparser_t *mp, const json_t *spec, const char *path, int depth,
                       cv_mconstraint_t *c)
{
    const char *key = NULL;
    const json_t *list = NULL;
    if (json_object_size(spec) == 1) {
        void *iter = json_object_iter((json_t *)spec);
        key = json_object_iter_key(iter);
        list = json_object_iter_value(iter);
    }
    if (!key || (strcasecmp(key, "and") != 0 && strcasecmp(key, "or") != 0))
        return bad(mp, path, "a combination is {\"and\": [..]} or {\"or\": [..]}", NULL);
    c->op = strcasecmp(key, "and") == 0 ? MOP_AND : MOP_OR;
    char where[PATH_MAX_LEN];
    path_fmt(where, sizeof(where), "%s.%s", path, key);
    if (depth > MAX_NESTING)
        return cv_seterr(mp->errstr, mp->errstr_size, CV_ETOOBIG,
                         "%s: and/or nested deeper than %d", where, MAX_NESTING);
    if (!json_is_array(list) || json_array_size(list) == 0)
        return bad(mp, where, "expected a non-empty list of constraints", NULL);
    if (!(c->kids = calloc(json_array_size(list), sizeof(*c->kids))))
        return oom(mp->errstr, mp->errstr_size);
    size_t i;
    const json_t *kid;
    json_array_foreach(list, i, kid)
    {
        char kid_path[PATH_MAX_LEN];
        path_fmt(kid_path, sizeof(kid_path), "%s[%zu]", where, i);
        int rc = parse_node(mp, kid, kid_path, depth, &c->kids[c->nkids]);
        if (rc < 0)
            return rc;
        c->nkids++;
    }
    return 0;
}

/* `depth` is the number of and/or levels around `spec`. */
static int parse_node(mparser_t *mp, const json_t *spec, const char *path, int depth,
                      cv_mconstraint_t **out)
{
    cv_mconstraint_t *c = calloc(1, sizeof(*c));
    if (!c)
        return oom(mp->errstr, mp->errstr_size);
    int rc;
    if (json_is_array(spec))
        rc = parse_leaf(mp, spec, path, c);
    else if (json_is_object(spec))
        rc = parse_group(mp, spec, path, depth + 1, c);
    else
        rc = bad(mp, path, "expected a constraint list or an {\"and\"/\"or\": [..]} object", NULL);
    if (rc == 0)
        rc = build_text(mp, c);
    if (rc < 0) {
        cv_mconstraint_free(c);
        return rc;
    }
    *out = c;
    return 0;
}

int cv_mconstraint_parse(const json_t *spec, const char *where, cv_mconstraint_t **out,
                         char *errstr, size_t errstr_size)
{
    mparser_t mp = {.errstr = errstr, .errstr_size = errstr_size};
    *out = NULL;
    return parse_node(&mp, spec, where ? where : "constraints", 0, out);
}
