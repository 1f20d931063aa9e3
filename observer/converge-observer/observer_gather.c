/*
 * Gathering replies: requests sent in one loop turn (so pipelined), each
 * reply turned into a snapshot under its request's name, and one callback
 * once every reply is in — with NULL when any request failed.
 */
#include "observer.h"

#include <stdio.h>
#include <stdlib.h>

struct cv__gather {
    cv__gather_cb cb;
    void *ud;
    json_t *snapshots;
    int pending; /* replies still due, plus one while sending */
    bool failed;
};

struct cv__gather_req {
    cv__gather_t *g;
    char name[256];
};

static void release(cv__gather_t *g)
{
    if (--g->pending > 0)
        return;
    if (g->failed) {
        json_decref(g->snapshots);
        g->snapshots = NULL;
    }
    g->cb(g->ud, g->snapshots);
    free(g);
}

cv__gather_t *cv__gather_new(cv__gather_cb cb, void *ud)
{
    cv__gather_t *g = calloc(1, sizeof(*g));
    if (!g)
        return NULL;
    *g = (cv__gather_t){.cb = cb, .ud = ud, .snapshots = json_object(), .pending = 1};
    return g;
}

cv__gather_req_t *cv__gather_request(cv__gather_t *g, const char *name)
{
    cv__gather_req_t *req = calloc(1, sizeof(*req));
    if (!req) {
        g->failed = true;
        return NULL;
    }
    req->g = g;
    snprintf(req->name, sizeof(req->name), "%s", name);
    g->pending++;
    return req;
}

const char *cv__gather_name(const cv__gather_req_t *req)
{
    return req->name;
}

void cv__gather_put(cv__gather_req_t *req, json_t *snapshot)
{
    cv__gather_t *g = req->g;
    if (snapshot)
        json_object_set_new(g->snapshots, req->name, snapshot);
    else
        g->failed = true;
    free(req);
    release(g);
}

void cv__gather_sent(cv__gather_t *g)
{
    release(g);
}
