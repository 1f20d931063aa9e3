/*
 * template_errors — every problem of a template, in one message.
 *
 * Checks that do not depend on each other (the parameters, each resource,
 * each output) all run, and what each of them found is reported: a user
 * who fixes one problem should not have to submit again to learn of the
 * next. Within one parameter, resource or output the first problem is the
 * one reported, since a second one found in a half-understood definition
 * is more often noise than help.
 *
 * The message is the problems' own messages ("<file>: <where>: <rule>"),
 * one a line, in template order; one problem reads exactly as it did alone.
 * What does not fit the caller's buffer is counted ("(and 3 more errors)").
 */
#include "cv__template_internal.h"
#include "cv_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cv__errs_init(cv__errs_t *e, const cv__tpl_ctx_t *ctx)
{
    memset(e, 0, sizeof(*e));
    e->ctx = ctx;
}

/* Keeps the message the failed check wrote into ctx->errstr. A message
 * may hold line breaks of its own (Heat's usage examples), so each is kept
 * whole rather than found again in the joined text. */
static int keep(cv__errs_t *e)
{
    const char *msg = e->ctx->errstr && e->ctx->errstr_size ? e->ctx->errstr : "";
    char *copy = strdup(msg);
    if (!copy || cv_vec_push(&e->msgs, copy) != 0) {
        free(copy);
        return CV_ENOMEM;
    }
    return 0;
}

int cv__errs_take(cv__errs_t *e, int rc)
{
    if (rc == 0)
        return 0;
    if (rc == CV_ENOMEM || keep(e) != 0) {
        e->fatal = CV_ENOMEM;
        return CV_ENOMEM;
    }
    if (e->msgs.n == 1)
        e->first = rc;
    return 0;
}

/* The messages that fit `size` bytes, whole ones only past the first, and
 * a count of those left out. */
static void write_fitting(const cv__errs_t *e, char *out, size_t size)
{
    char more[64];
    size_t shown = 0, used = 0;
    for (; shown < e->msgs.n; shown++) {
        size_t len = strlen(e->msgs.v[shown]);
        snprintf(more, sizeof(more), "\n(and %zu more errors)", e->msgs.n - shown - 1);
        size_t tail = shown + 1 < e->msgs.n ? strlen(more) : 0;
        if (shown > 0 && used + 1 + len + tail >= size)
            break;
        used +=
            (size_t)snprintf(out + used, size - used, "%s%s", shown ? "\n" : "", e->msgs.v[shown]);
        if (used >= size)
            return; /* the first message alone is cut: nothing more fits */
    }
    if (shown < e->msgs.n)
        snprintf(out + used, size - used, "\n(and %zu more errors)", e->msgs.n - shown);
}

int cv__errs_end(cv__errs_t *e)
{
    int rc = e->fatal ? e->fatal : e->msgs.n ? e->first : 0;
    if (rc && !e->fatal && e->ctx->errstr && e->ctx->errstr_size)
        write_fitting(e, e->ctx->errstr, e->ctx->errstr_size);
    for (size_t i = 0; i < e->msgs.n; i++)
        free(e->msgs.v[i]);
    cv_vec_free(&e->msgs);
    return rc;
}
