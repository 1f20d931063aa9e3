/*
 * web_server — converge-web's request handler on the loop: the bearer
 * token, the embedded pages, the API documents (web_api.h), the stack
 * page's server-sent event stream (web_stream.c) and the dead letters
 * (web_dead.c). Holds no policy of its own: routes are web_route.h's.
 */
#ifndef WEB_SERVER_H
#define WEB_SERVER_H

#include <jansson.h>
#include <uv.h>

#include "cv_status.h"
#include "cv_io.h"

typedef struct web_server {
    uv_loop_t *loop;
    cli_t *cli;              /* the options; its connection is the reads' */
    struct web_reads *reads; /* every Redis read, off the loop (web_reads.h) */
    char token[256];         /* "" when no --token-file */
    char convergectl[4096];  /* the program `dead` runs: convergectl */
    int stream_interval_ms;  /* how often a stack stream looks for changes */
} web_server_t;

/* The cv_http handler; ud is the web_server_t. */
void web_server_handle(cv_http_conn_t *c, const cv_http_req_t *req, void *ud);

/* Server-sent events of the stack `stack`'s graph (web_stream.c): one
 * "graph" event now and one each time the document changes; "gone" when
 * the stack is, and the stream ends. */
void web_stream_start(web_server_t *s, cv_http_conn_t *c, const char *stack);

/* Ends every stream (at shutdown). */
void web_stream_close_all(void);

/* Answers /api/dead with what `convergectl dead -o json` prints, run as a
 * child process so that the loop never waits for Kafka (web_dead.c). */
void web_dead_answer(web_server_t *s, cv_http_conn_t *c, const char *query);

/* Answers with a JSON document (freed here). */
void web_server_json(cv_http_conn_t *c, int status, json_t *doc);

#endif
