/*
 * cv_mesos — BCS/Mesos-style attribute constraints, after the Mesos
 * scheduling document of BCS (Tencent's BlueKing Container Service).
 *
 * A constraint is an attribute, an operator and an optional parameter (the
 * BCS document's 属性, 算法, 参数), or an "and" / "or" of constraints. This file
 * judges one more replica on one node; mesos_parse.c reads the JSON form.
 *
 * Operators and the parameters they take:
 *   UNIQUE            none       no two replicas on nodes sharing a value
 *   MAXPER  n         scalar     at most n replicas per value (n a positive
 *                                integer, or a string spelling one)
 *   CLUSTER v         string     the value equals v
 *                     set        the value is one of the set
 *                     scalar     the value equals it numerically
 *                     range      lo <= value <= hi numerically
 *   LIKE re           string     the whole value matches the POSIX ERE
 *   UNLIKE re         string     the whole value does not match it
 *   GROUPBY [values]  set / none an even spread over the values (the BCS
 *                                document gives the set form; without one,
 *                                the values the eligible and placed nodes
 *                                have)
 *
 * Parameter forms: a string; a set is an array of strings; a scalar is a
 * number; a range is {"begin": lo, "end": hi} or a two-element array of
 * integers (numbers or strings spelling them, ["10", "20"]). For CLUSTER a
 * two-integer array is therefore a range; {"set": [..]} says "set" explicitly
 * (for integers over a range the two readings agree anyway). GROUPBY reads
 * any array as a set. The BCS document names no numeric GROUPBY parameter,
 * so "GROUPBY 3" is refused rather than guessed at.
 *
 * Attribute values are compared as text (an integer attribute 5 equals the
 * string "5"; booleans are "true" / "false"), or as numbers for scalar and
 * range parameters. "hostname", Mesos' built-in attribute, falls back to the
 * node's NodeName property when the node has no "hostname" attribute.
 *
 * A node lacking the attribute:
 *   CLUSTER, LIKE, GROUPBY  refuse it: it has no value to be in the range,
 *                           match the pattern or belong to a group.
 *   UNLIKE                  allows it: the BCS document defines UNLIKE as
 *                           LIKE negated (LIKE取反), and a missing value
 *                           does not match the pattern.
 *   UNIQUE, MAXPER          refuse it: without a value, uniqueness and the
 *                           per-value count cannot be established, and
 *                           allowing it would let every replica pile onto
 *                           unlabelled nodes, defeating the spread the
 *                           constraint was written for (Marathon does the
 *                           same). Placed replicas on such nodes count for
 *                           no value.
 */
#include "mesos_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_TEXT_MAX CV__MESOS_VALUE_TEXT_MAX

const char *const cv__mesos_op_name[] = {"UNIQUE", "MAXPER",  "CLUSTER", "LIKE",
                                         "UNLIKE", "GROUPBY", "and",     "or"};

void cv_mconstraint_free(cv_mconstraint_t *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->nkids; i++)
        cv_mconstraint_free(c->kids[i]);
    free(c->kids);
    for (size_t i = 0; i < c->nset; i++)
        free(c->set[i]);
    free(c->set);
    if (c->has_re)
        regfree(&c->re);
    free(c->attr);
    free(c->str);
    free(c->text);
    free(c);
}

/* Reads a whole string as a finite number. */
static bool text_number(const char *s, double *out)
{
    char *end;
    if (!*s)
        return false;
    errno = 0;
    double d = strtod(s, &end);
    if (*end || errno == ERANGE || !isfinite(d))
        return false;
    *out = d;
    return true;
}

/* ------------------------------------------------------------------------ */
/* Attribute values                                                         */
/* ------------------------------------------------------------------------ */

static const json_t *attr_value(const json_t *node, const char *attr)
{
    if (!node)
        return NULL;
    const json_t *v = json_object_get(node, attr);
    if (!v && strcmp(attr, "hostname") == 0)
        v = json_object_get(node, "NodeName");
    return v;
}

/* The text form of a node's attribute, or NULL when the node lacks it (null,
 * objects and arrays have no text form and count as lacking it). `buf` holds
 * the text of a number or boolean. */
static const char *attr_text(const json_t *node, const char *attr, char *buf, size_t size)
{
    const json_t *v = attr_value(node, attr);
    if (json_is_string(v))
        return json_string_value(v);
    if (json_is_integer(v))
        snprintf(buf, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
    else if (json_is_real(v))
        snprintf(buf, size, "%.17g", json_real_value(v));
    else if (json_is_boolean(v))
        snprintf(buf, size, "%s", json_is_true(v) ? "true" : "false");
    else
        return NULL;
    return buf;
}

static bool attr_number(const json_t *node, const char *attr, double *out)
{
    const json_t *v = attr_value(node, attr);
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    return json_is_string(v) && text_number(json_string_value(v), out);
}

/* How many placed replicas sit on nodes whose attribute reads `value`. */
static size_t count_placed(const cv_mconstraint_t *c, const cv_mesos_ctx_t *ctx, const char *value)
{
    size_t n = 0;
    char buf[VALUE_TEXT_MAX];
    for (size_t i = 0; i < ctx->nplaced; i++) {
        const char *t = attr_text(ctx->placed[i], c->attr, buf, sizeof(buf));
        if (t && strcmp(t, value) == 0)
            n++;
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* GROUPBY                                                                  */
/* ------------------------------------------------------------------------ */

/* Appends the node's value to `groups` unless already there. */
static void add_group(json_t *groups, const json_t *node, const char *attr)
{
    char buf[VALUE_TEXT_MAX];
    const char *t = attr_text(node, attr, buf, sizeof(buf));
    if (!t)
        return;
    size_t i;
    const json_t *g;
    json_array_foreach(groups, i, g)
    {
        if (strcmp(json_string_value(g), t) == 0)
            return;
    }
    json_array_append_new(groups, json_string(t));
}

/*
 * An even spread of R replicas over G groups gives every group floor(R/G)
 * replicas and R mod G of them one more. A replica may go to a group when
 * that keeps the group within floor(R/G), or when it takes the group to
 * floor(R/G)+1 and fewer than R mod G groups are already there: so 9 over 3
 * is 3/3/3, 8 over 3 is 3/3/2 and 7 over 3 is 3/2/2 (never 3/3/1, from which
 * no even spread is reachable). R is at least the replicas placed plus this
 * one, so a layout already holding more than the service's count is judged
 * as a spread of what it holds.
 */
static bool spread_allows(const cv_mconstraint_t *c, const cv_mesos_ctx_t *ctx, const char *value,
                          const char *const *groups, size_t ngroups)
{
    size_t replicas = ctx->replicas > 0 ? (size_t)ctx->replicas : 0;
    if (replicas < ctx->nplaced + 1)
        replicas = ctx->nplaced + 1;
    size_t floor_share = replicas / ngroups, extra = replicas % ngroups;
    size_t at_ceiling = 0, mine = 0;
    bool member = false;
    for (size_t i = 0; i < ngroups; i++) {
        size_t n = count_placed(c, ctx, groups[i]);
        if (n > floor_share)
            at_ceiling++;
        if (strcmp(groups[i], value) == 0) {
            member = true;
            mine = n;
        }
    }
    if (!member)
        return false;
    if (mine + 1 <= floor_share)
        return true;
    return mine + 1 == floor_share + 1 && at_ceiling < extra;
}

/*
 * The groups are the explicit values, or else the distinct values of the
 * eligible nodes, the placed nodes and the candidate (a group whose nodes all
 * hold a replica already, and so are no longer eligible, is still a group).
 * Without explicit values each call scans the eligible nodes: O(eligible x
 * groups).
 */
static bool groupby_allows(const cv_mconstraint_t *c, const cv_mesos_ctx_t *ctx, const char *value)
{
    if (c->param == MP_SET)
        return spread_allows(c, ctx, value, (const char *const *)c->set, c->nset);
    json_t *found = json_array();
    if (!found)
        return false;
    for (size_t i = 0; i < ctx->neligible; i++)
        add_group(found, ctx->eligible[i], c->attr);
    for (size_t i = 0; i < ctx->nplaced; i++)
        add_group(found, ctx->placed[i], c->attr);
    add_group(found, ctx->node, c->attr);
    size_t ngroups = json_array_size(found);
    const char **groups = calloc(ngroups ? ngroups : 1, sizeof(*groups));
    bool ok = false;
    if (groups) {
        for (size_t i = 0; i < ngroups; i++)
            groups[i] = json_string_value(json_array_get(found, i));
        ok = ngroups > 0 && spread_allows(c, ctx, value, groups, ngroups);
    }
    free(groups);
    json_decref(found);
    return ok;
}

/* ------------------------------------------------------------------------ */
/* Judging                                                                  */
/* ------------------------------------------------------------------------ */

static bool regex_whole_match(const regex_t *re, const char *s)
{
    /* POSIX matching is leftmost-longest, so the value matches as a whole
     * exactly when the match found starts at 0 and ends at its end. */
    regmatch_t m;
    if (regexec(re, s, 1, &m, 0) != 0)
        return false;
    return m.rm_so == 0 && (size_t)m.rm_eo == strlen(s);
}

static bool cluster_allows(const cv_mconstraint_t *c, const json_t *node, const char *value)
{
    double d;
    switch (c->param) {
    case MP_STRING:
        return strcmp(value, c->str) == 0;
    case MP_SET:
        for (size_t i = 0; i < c->nset; i++)
            if (strcmp(value, c->set[i]) == 0)
                return true;
        return false;
    case MP_SCALAR:
        return attr_number(node, c->attr, &d) && d == c->scalar;
    case MP_RANGE:
        return attr_number(node, c->attr, &d) && d >= c->lo && d <= c->hi;
    case MP_NONE:
        break;
    }
    return false;
}

bool cv_mconstraint_allows(const cv_mconstraint_t *c, const cv_mesos_ctx_t *ctx)
{
    if (c->op == MOP_AND || c->op == MOP_OR) {
        bool want = c->op == MOP_OR;
        for (size_t i = 0; i < c->nkids; i++)
            if (cv_mconstraint_allows(c->kids[i], ctx) == want)
                return want;
        return !want;
    }
    char buf[VALUE_TEXT_MAX];
    const char *value = attr_text(ctx->node, c->attr, buf, sizeof(buf));
    if (!value)
        return c->op == MOP_UNLIKE;
    switch (c->op) {
    case MOP_UNIQUE:
        return count_placed(c, ctx, value) == 0;
    case MOP_MAXPER:
        return (double)count_placed(c, ctx, value) < c->scalar;
    case MOP_CLUSTER:
        return cluster_allows(c, ctx->node, value);
    case MOP_LIKE:
        return regex_whole_match(&c->re, value);
    case MOP_UNLIKE:
        return !regex_whole_match(&c->re, value);
    case MOP_GROUPBY:
        return groupby_allows(c, ctx, value);
    case MOP_AND:
    case MOP_OR:
        break;
    }
    return false;
}

const char *cv_mconstraint_text(const cv_mconstraint_t *c)
{
    return c->text;
}
