/*
 * converge-web's request handler (web_server.h).
 */
#include "web_server.h"

#include "web_api.h"
#include "web_assets.h"
#include "web_reads.h"
#include "web_route.h"

#include "cv_base.h"
#include "cv_io.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void web_server_json(cv_http_conn_t *c, int status, json_t *doc)
{
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(15));
    json_decref(doc);
    if (!text) {
        cv_http_respond_text(c, 500, "out of memory\n");
        return;
    }
    cv_http_respond(c, status, "application/json", "Cache-Control: no-store\r\n", text,
                    strlen(text));
    free(text);
}

static void answer_asset(cv_http_conn_t *c, const char *path)
{
    for (const web_asset_t *a = web_assets; a->path; a++) {
        if (strcmp(a->path, path) == 0) {
            cv_http_respond(c, 200, a->content_type, "Cache-Control: no-cache\r\n", a->bytes,
                            a->len);
            return;
        }
    }
    cv_http_respond_text(c, 404, "not found: %s\n", path);
}

/* An API call waiting for its read (web_reads.h). */
typedef struct api_call {
    cv_http_conn_t *conn;
    web_route_t route;
    char query[sizeof(((cv_http_req_t *)0)->query)];
} api_call_t;

static json_t *read_api(cli_t *cli, void *arg, int *status)
{
    api_call_t *call = arg;
    return web_api_get(cli, &call->route, call->query, status);
}

static void answer_api(json_t *doc, int status, void *arg)
{
    api_call_t *call = arg;
    web_server_json(call->conn, status, doc);
    free(call);
}

static void ask_api(web_server_t *s, cv_http_conn_t *c, const web_route_t *route, const char *query)
{
    api_call_t *call = malloc(sizeof(*call));
    if (!call) {
        cv_http_respond_text(c, 503, "out of memory\n");
        return;
    }
    call->conn = c;
    call->route = *route;
    snprintf(call->query, sizeof(call->query), "%s", query);
    web_reads_ask(s->reads, read_api, answer_api, call);
}

void web_server_handle(cv_http_conn_t *c, const cv_http_req_t *req, void *ud)
{
    web_server_t *s = ud;
    if (strcmp(req->method, "GET") != 0 && strcmp(req->method, "HEAD") != 0) {
        cv_http_respond(c, 405, "application/json", "Allow: GET, HEAD\r\n",
                        "{\"error\":\"read-only: GET and HEAD only\"}", 39);
        return;
    }
    if (!web_route_authorized(s->token, req->authorization, req->query)) {
        web_server_json(c, 401,
                        web_api_error("a bearer token is required (Authorization: "
                                      "Bearer TOKEN, or ?token=TOKEN)"));
        return;
    }
    web_route_t route;
    char why[256];
    /* A query that does not decode is the client's mistake, whatever the
     * route: 400 here, before a parameter read as absent could turn it into
     * a read that fails (503) or an answer to another question. */
    if (cv_httpreq_query_check(req->query, why, sizeof(why)) != 0) {
        web_server_json(c, 400, web_api_error("%s", why));
        return;
    }
    int rc = web_route_match(req->path, &route, why, sizeof(why));
    if (rc == CV_ENOENT && strncmp(req->path, "/api", 4) != 0) {
        cv_http_respond_text(c, 404, "not found: %s\n", req->path);
        return;
    }
    if (rc != 0) {
        web_server_json(c, rc == CV_ENOENT ? 404 : 400,
                        rc == CV_ENOENT ? web_api_error("no such API call: %s", req->path)
                                        : web_api_error("%s", why));
        return;
    }
    if (web_route_check_query(&route, req->query, why, sizeof(why)) != 0) {
        web_server_json(c, 400, web_api_error("%s", why));
        return;
    }
    if (route.kind == WEB_ROUTE_ASSET) {
        answer_asset(c, route.asset);
        return;
    }
    if (route.kind == WEB_ROUTE_DEAD) {
        web_dead_answer(s, c, req->query);
        return;
    }
    if (route.kind == WEB_ROUTE_STACK_STREAM)
        web_stream_start(s, c, route.stack);
    else
        ask_api(s, c, &route, req->query);
}
