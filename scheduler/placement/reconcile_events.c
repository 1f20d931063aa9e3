/*
 * reconcile_events — what a plan says as it goes: the events of the
 * service's stack (a replica placed, moved, renewed, a move abandoned, a
 * node blocklisted) and the health reports of the service. Every step of
 * the planner says its own; this file only writes them down, so that any
 * step may speak without depending on the steps that come after it.
 */
#include "reconcile_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cv_reconcile_health_source(char *buf, size_t size, const char *svc)
{
    snprintf(buf, size, "System.PLB:%s", svc);
}

void cv__rc_event(rc_ctx_t *x, int index, const char *action, const char *status, const char *fmt,
                  ...)
{
    char reason[1024], name[512] = "";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    if (index >= 0)
        cv__rc_replica_name(x, index, name, sizeof(name));
    cv_reconcile_event_t e = {strdup(name), action, status, strdup(reason)};
    if (!e.physical_id || !e.reason || cv_vec_push(&x->events, e) != 0) {
        free(e.physical_id);
        free(e.reason);
        x->nomem = true;
    }
}

void cv__rc_report(rc_ctx_t *x, const char *property, const char *state, const char *fmt, ...)
{
    char text[2048], source[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    cv_reconcile_health_source(source, sizeof(source), x->svc);
    json_array_append_new(x->health,
                          json_pack("{s:s, s:s, s:s, s:s, s:s, s:b}", "source", source, "property",
                                    property, "state", state, "description", text, "timeToLive",
                                    "Infinite", "removeWhenExpired", 0));
}
