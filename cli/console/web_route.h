/*
 * web_route — what converge-web decides about a request before reading
 * anything: which page or API call its path names (with the stack and
 * service names percent-decoded and checked), and whether it carries the
 * console's bearer token. Pure: tested without a socket.
 */
#ifndef WEB_ROUTE_H
#define WEB_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

typedef enum web_route_kind {
    WEB_ROUTE_ASSET,           /* a page file: "/" is /index.html */
    WEB_ROUTE_STACKS,          /* /api/stacks */
    WEB_ROUTE_STACK,           /* /api/stacks/NAME */
    WEB_ROUTE_STACK_GRAPH,     /* /api/stacks/NAME/graph */
    WEB_ROUTE_STACK_RESOURCES, /* /api/stacks/NAME/resources */
    WEB_ROUTE_STACK_EVENTS,    /* /api/stacks/NAME/events */
    WEB_ROUTE_STACK_STREAM,    /* /api/stacks/NAME/stream: server-sent events */
    WEB_ROUTE_CLUSTER,         /* /api/cluster */
    WEB_ROUTE_SERVICE,         /* /api/services/STACK/NAME */
    WEB_ROUTE_DEAD,            /* /api/dead */
} web_route_kind_t;

#define WEB_NAME_MAX 256

typedef struct web_route {
    web_route_kind_t kind;
    char asset[64];             /* WEB_ROUTE_ASSET: the file's path, "/index.html" */
    char stack[WEB_NAME_MAX];   /* a stack name or id, decoded */
    char service[WEB_NAME_MAX]; /* WEB_ROUTE_SERVICE: the resource name, decoded */
} web_route_t;

/*
 * Matches the (still percent-encoded) path of a request. 0 with *out
 * filled; CV_ENOENT when no page or API call has that path (404);
 * CV_EINVAL when it names one with a bad name, errstr saying which (400).
 * A stack is named by 1..255 of [A-Za-z0-9_.-] (a name or an id); a
 * service by 1..255 bytes without '/' or control characters.
 */
int web_route_match(const char *path, web_route_t *out, char *errstr, size_t errstr_size);

/*
 * Checks the query parameters route r reads, before anything is read: 0,
 * or CV_EINVAL with errstr naming the parameter (400). An events page's
 * `after` must be a stream entry id "MS-SEQ" whose two numbers fit 64 bits
 * and that has a successor (not the largest id), as Redis takes it.
 */
int web_route_check_query(const web_route_t *r, const char *query, char *errstr,
                          size_t errstr_size);

/*
 * Whether a request may be answered: always when `token` is "" (no
 * --token-file); otherwise when its Authorization header is "Bearer
 * <token>" or its query has token=<token> (what a page's first load and an
 * EventSource, which cannot set headers, send). Compared in constant time.
 */
bool web_route_authorized(const char *token, const char *authorization, const char *query);

#endif
