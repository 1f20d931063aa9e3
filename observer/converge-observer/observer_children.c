/*
 * Reading child stacks for the observation of nested resources: one HMGET
 * per child (each in its own hash tag, so never one script), all sent in one
 * loop turn and so pipelined.
 */
#include "observer.h"

#include "cv_contract.h"

#include <stdlib.h>
#include <string.h>

static json_t *snapshot(const redisReply *rep)
{
    const char *status = cv_reply_str(rep, 0);
    json_t *outputs = json_loads(cv_reply_str(rep, 3), 0, NULL);
    return json_pack("{s:b, s:s, s:I, s:s, s:o, s:I, s:f}", "exists", status[0] != '\0', "status",
                     status, "traversal", (json_int_t)strtoll(cv_reply_str(rep, 1), NULL, 10),
                     "reason", cv_reply_str(rep, 2), "outputs", outputs ? outputs : json_object(),
                     "reruns", (json_int_t)strtoll(cv_reply_str(rep, 4), NULL, 10), "updated",
                     strtod(cv_reply_str(rep, 5), NULL));
}

static void on_reply(cv_redis_t *r, redisReply *rep, void *ud)
{
    (void)r;
    bool ok = rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == 6;
    cv__gather_put(ud, ok ? snapshot(rep) : NULL);
}

int cv__observer_read_children(cv_worker_t *w, const json_t *ids, cv_children_cb cb, void *ud)
{
    cv__gather_t *g = cv__gather_new(cb, ud);
    if (!g)
        return -1;
    size_t i;
    const json_t *id;
    json_array_foreach(ids, i, id)
    {
        cv__gather_req_t *req = cv__gather_request(g, json_string_value(id));
        char key[CV_KEY_MAX];
        if (!req)
            continue;
        cv_key(key, sizeof(key), CV_KEY_STACK, cv__gather_name(req), 0, NULL);
        const char *argv[] = {"HMGET",  key,       "status", "traversal",
                              "reason", "outputs", "reruns", "updated"};
        if (cv_redis_argv(w->redis, 8, argv, NULL, on_reply, req) != 0)
            cv__gather_put(req, NULL);
    }
    cv__gather_sent(g); /* drops the count that kept it alive while sending */
    return 0;
}
