#include "cv_outage.h"

#include <stdio.h>
#include <string.h>

void cv_outage_init(cv_outage_t *o, const char *service)
{
    memset(o, 0, sizeof(*o));
    o->service = service;
}

bool cv_outage_down(cv_outage_t *o, double now, const char *why)
{
    if (o->down)
        return false;
    o->down = true;
    o->count++;
    o->since = now;
    snprintf(o->why, sizeof(o->why), "%s", why ? why : "");
    return true;
}

bool cv_outage_up(cv_outage_t *o, double now, double *duration)
{
    if (!o->down)
        return false;
    o->down = false;
    o->ended = now;
    *duration = now - o->since;
    return true;
}

static void describe(const cv_outage_t *o, char *buf, size_t size)
{
    if (o->down)
        snprintf(buf, size, "%s since %.3f (ongoing): %s", o->service, o->since, o->why);
    else
        snprintf(buf, size, "%s %.3f-%.3f (%.1f s): %s", o->service, o->since, o->ended,
                 o->ended - o->since, o->why);
}

void cv_outage_describe_last(const cv_outage_t *a, const cv_outage_t *b, char *buf, size_t size)
{
    const cv_outage_t *last = NULL;
    if (a && a->count)
        last = a;
    if (b && b->count && (!last || b->since > last->since))
        last = b;
    if (last)
        describe(last, buf, size);
    else if (size)
        buf[0] = '\0';
}

bool cv_retry_exhausted(cv_retry_t *r, bool services_up, unsigned max_failures)
{
    r->attempt++;
    if (services_up)
        r->failures++;
    return r->failures >= max_failures;
}
