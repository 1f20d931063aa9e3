/*
 * cv_httpreq — the pure half of Converge's small HTTP server (cv_http):
 * parsing a request head, reading its query parameters, and parsing the
 * "HOST:PORT" addresses the servers listen on. No I/O, so it is tested
 * byte by byte without sockets.
 *
 * Only what a metrics scrape, a browser and curl send is understood: a
 * request line "METHOD TARGET HTTP/1.x" and header lines, the head ended by
 * an empty line. A request body is not read (the servers answer GET and
 * HEAD only), and a head longer than CV_HTTP_HEAD_MAX is refused.
 */
#ifndef CV_HTTPREQ_H
#define CV_HTTPREQ_H

#include <stdbool.h>
#include <stddef.h>

/* The largest request head accepted, request line and headers together. */
#define CV_HTTP_HEAD_MAX 8192

typedef struct cv_http_req {
    char method[16];
    char path[1024];  /* the target before '?', still percent-encoded */
    char query[2048]; /* after '?', without it; "" when none */
    char authorization[512];
    char accept[256];
    char last_event_id[64]; /* of a server-sent events stream being resumed */
    bool http10;            /* HTTP/1.0: no chunked responses */
} cv_http_req_t;

/*
 * Parses the head at the start of buf[0..len). Returns the head's length
 * (through its empty line) with *req filled, 0 when buf holds no complete
 * head yet, or CV_EPROTO (a malformed request line or header, or a field
 * too long for *req) or CV_ETOOBIG (no end of head within
 * CV_HTTP_HEAD_MAX) with errstr saying which.
 */
int cv_httpreq_parse(const char *buf, size_t len, cv_http_req_t *req, char *errstr,
                     size_t errstr_size);

/*
 * The value of query parameter `name` in `query` ("a=1&b=x%20y"),
 * percent-decoded ('+' is a space) into out. True when present (a name
 * without '=' has the value ""); false when absent, or when the decoded
 * value does not fit out or is malformed (a bad %XX, a NUL).
 */
bool cv_httpreq_param(const char *query, const char *name, char *out, size_t out_size);

/*
 * Checks that every parameter of `query` ("a=1&b=x%20y") decodes: no bad
 * %XX escape, no encoded NUL, no name longer than 64 bytes nor value longer
 * than the query itself. 0, or CV_EPROTO with errstr naming the parameter
 * (a server answers 400: the request is malformed, whatever its route).
 */
int cv_httpreq_query_check(const char *query, char *errstr, size_t errstr_size);

/* Percent-decodes src into out (no '+' rule: for paths). False as above. */
bool cv_httpreq_unescape(const char *src, size_t len, char *out, size_t out_size);

/*
 * Splits "HOST:PORT", "[IPV6]:PORT" or ":PORT" (all addresses) into host
 * ("0.0.0.0" for none) and port (0..65535; 0 asks the system for a free
 * one). CV_EINVAL with errstr naming what is wrong.
 */
int cv_httpreq_addr(const char *addr, char *host, size_t host_size, int *port, char *errstr,
                    size_t errstr_size);

/* True when host (as cv_httpreq_addr gives it) is a loopback address
 * only this machine reaches: 127.0.0.0/8, ::1 or "localhost". "0.0.0.0",
 * "::" and every other address are not. */
bool cv_httpreq_host_is_loopback(const char *host);

/* The reason phrase of an HTTP status code ("OK", "Not Found", ...). */
const char *cv_httpreq_reason(int status);

#endif
