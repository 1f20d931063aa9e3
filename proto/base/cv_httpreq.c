#include "cv_httpreq.h"

#include "cv_error.h"
#include "cv_str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The end of the head: the offset just past its empty line, or 0. A line
 * may end in CRLF or, as some clients send, in LF alone. */
static size_t head_end(const char *buf, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != '\n')
            continue;
        if (i + 1 < len && buf[i + 1] == '\n')
            return i + 2;
        if (i + 2 < len && buf[i + 1] == '\r' && buf[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* Copies [s, s + n) into a field of *req; false when it does not fit. */
static bool copy_field(char *dst, size_t dst_size, const char *s, size_t n)
{
    if (n >= dst_size)
        return false;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return true;
}

static bool is_token_char(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool is_target_char(char c)
{
    return (unsigned char)c > ' ' && (unsigned char)c < 0x7f;
}

static int request_line(const char *s, size_t n, cv_http_req_t *req, char *errstr,
                        size_t errstr_size)
{
    const char *end = s + n, *p = s;
    while (p < end && is_token_char(*p))
        p++;
    if (p == s || p == end || *p != ' ' || !copy_field(req->method, sizeof(req->method), s, p - s))
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "malformed request line: bad method");
    const char *target = ++p;
    while (p < end && is_target_char(*p))
        p++;
    if (p == target || *target != '/' || p == end || *p != ' ')
        return cv_seterr(errstr, errstr_size, CV_EPROTO,
                         "malformed request line: the target must be a path starting with '/'");
    const char *q = memchr(target, '?', p - target);
    const char *path_end = q ? q : p;
    if (!copy_field(req->path, sizeof(req->path), target, path_end - target) ||
        !copy_field(req->query, sizeof(req->query), q ? q + 1 : p, q ? p - q - 1 : 0))
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "request target too long");
    p++;
    if (end - p == 8 && memcmp(p, "HTTP/1.", 7) == 0 && (p[7] == '0' || p[7] == '1')) {
        req->http10 = p[7] == '0';
        return 0;
    }
    return cv_seterr(errstr, errstr_size, CV_EPROTO, "malformed request line: not HTTP/1.0 or 1.1");
}

/* The request fields of one header line: those the servers use are kept,
 * the others only checked for their shape. */
static int header_line(const char *s, size_t n, cv_http_req_t *req, char *errstr,
                       size_t errstr_size)
{
    static const struct {
        const char *name;
        size_t offset, size;
    } kept[] = {
        {"authorization", offsetof(cv_http_req_t, authorization),
         sizeof(((cv_http_req_t *)0)->authorization)},
        {"accept", offsetof(cv_http_req_t, accept), sizeof(((cv_http_req_t *)0)->accept)},
        {"last-event-id", offsetof(cv_http_req_t, last_event_id),
         sizeof(((cv_http_req_t *)0)->last_event_id)},
    };
    const char *colon = memchr(s, ':', n), *p;
    for (p = s; p < (colon ? colon : s); p++)
        if (!is_token_char(*p))
            break;
    if (!colon || colon == s || p != colon)
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "malformed header line \"%.*s\"",
                         (int)(n > 40 ? 40 : n), s);
    const char *v = colon + 1, *end = s + n;
    while (v < end && (*v == ' ' || *v == '\t'))
        v++;
    while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++) {
        if (strlen(kept[i].name) != (size_t)(colon - s) ||
            strncasecmp(kept[i].name, s, colon - s) != 0)
            continue;
        if (!copy_field((char *)req + kept[i].offset, kept[i].size, v, end - v))
            return cv_seterr(errstr, errstr_size, CV_EPROTO, "header %s too long", kept[i].name);
    }
    return 0;
}

int cv_httpreq_parse(const char *buf, size_t len, cv_http_req_t *req, char *errstr,
                     size_t errstr_size)
{
    size_t head = head_end(buf, len < CV_HTTP_HEAD_MAX ? len : CV_HTTP_HEAD_MAX);
    if (!head)
        return len >= CV_HTTP_HEAD_MAX
                   ? cv_seterr(errstr, errstr_size, CV_ETOOBIG, "request head longer than %d bytes",
                               CV_HTTP_HEAD_MAX)
                   : 0;
    memset(req, 0, sizeof(*req));
    const char *p = buf, *end = buf + head;
    bool first = true;
    while (p < end) {
        const char *nl = memchr(p, '\n', end - p);
        size_t n = nl - p;
        if (n && p[n - 1] == '\r')
            n--;
        if (n == 0)
            break;
        if (memchr(p, '\0', n))
            return cv_seterr(errstr, errstr_size, CV_EPROTO, "NUL byte in the request head");
        int rc = first ? request_line(p, n, req, errstr, errstr_size)
                       : header_line(p, n, req, errstr, errstr_size);
        if (rc)
            return rc;
        first = false;
        p = nl + 1;
    }
    if (first)
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "empty request");
    return (int)head;
}

static bool unescape(const char *src, size_t len, bool plus_is_space, char *out, size_t out_size)
{
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = src[i];
        if (c == '%') {
            int hi = i + 2 < len ? cv_hex_digit(src[i + 1]) : -1;
            int lo = i + 2 < len ? cv_hex_digit(src[i + 2]) : -1;
            if (hi < 0 || lo < 0)
                return false;
            c = (char)(hi * 16 + lo);
            i += 2;
        } else if (c == '+' && plus_is_space) {
            c = ' ';
        }
        if (c == '\0' || o + 1 >= out_size)
            return false;
        out[o++] = c;
    }
    if (out_size == 0)
        return false;
    out[o] = '\0';
    return true;
}

bool cv_httpreq_unescape(const char *src, size_t len, char *out, size_t out_size)
{
    return unescape(src, len, false, out, out_size);
}

bool cv_httpreq_param(const char *query, const char *name, char *out, size_t out_size)
{
    size_t name_len = strlen(name);
    for (const char *p = query; *p;) {
        const char *amp = strchr(p, '&');
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        size_t key_len = eq ? (size_t)(eq - p) : n;
        if (key_len == name_len && memcmp(p, name, key_len) == 0)
            return eq ? unescape(eq + 1, n - key_len - 1, true, out, out_size)
                      : unescape("", 0, true, out, out_size);
        p += n + (amp != NULL);
    }
    return false;
}

int cv_httpreq_query_check(const char *query, char *errstr, size_t errstr_size)
{
    size_t qlen = strlen(query);
    char *scratch = malloc(qlen + 1);
    if (!scratch)
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
    int rc = 0;
    for (const char *p = query; *p && rc == 0;) {
        const char *amp = strchr(p, '&');
        size_t n = amp ? (size_t)(amp - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        size_t key_len = eq ? (size_t)(eq - p) : n;
        char name[65];
        if (!unescape(p, key_len, true, name, sizeof(name)))
            rc = cv_seterr(errstr, errstr_size, CV_EPROTO,
                           "malformed query: parameter \"%.*s\" is not a valid name "
                           "(a bad %%XX escape, an encoded NUL or longer than 64 bytes)",
                           (int)(key_len > 64 ? 64 : key_len), p);
        else if (eq && !unescape(eq + 1, n - key_len - 1, true, scratch, qlen + 1))
            rc = cv_seterr(errstr, errstr_size, CV_EPROTO,
                           "malformed query: the value of %s has a bad %%XX escape or an "
                           "encoded NUL",
                           name);
        p += n + (amp != NULL);
    }
    free(scratch);
    return rc;
}

bool cv_httpreq_host_is_loopback(const char *host)
{
    if (strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0)
        return true;
    unsigned a, b, c, d;
    char tail;
    return sscanf(host, "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a == 127 && b < 256 &&
           c < 256 && d < 256;
}

int cv_httpreq_addr(const char *addr, char *host, size_t host_size, int *port, char *errstr,
                    size_t errstr_size)
{
    const char *colon = strrchr(addr, ':');
    if (!colon)
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "address \"%s\": expected HOST:PORT, [IPV6]:PORT or :PORT", addr);
    const char *h = addr;
    size_t hn = colon - addr;
    if (hn >= 2 && h[0] == '[' && h[hn - 1] == ']') {
        h++;
        hn -= 2;
    } else if (memchr(h, ':', hn) || memchr(h, '[', hn) || memchr(h, ']', hn)) {
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "address \"%s\": an IPv6 host goes in brackets, [::1]:PORT", addr);
    }
    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || p < 0 || p > 65535)
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "address \"%s\": the port must be 0..65535 (0: any free one)", addr);
    if (hn == 0) {
        h = "0.0.0.0";
        hn = 7;
    }
    if (hn >= host_size)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "address \"%s\": host too long", addr);
    memcpy(host, h, hn);
    host[hn] = '\0';
    *port = (int)p;
    return 0;
}

const char *cv_httpreq_reason(int status)
{
    switch (status) {
    case 200:
        return "OK";
    case 204:
        return "No Content";
    case 304:
        return "Not Modified";
    case 400:
        return "Bad Request";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 405:
        return "Method Not Allowed";
    case 408:
        return "Request Timeout";
    case 431:
        return "Request Header Fields Too Large";
    case 500:
        return "Internal Server Error";
    case 502:
        return "Bad Gateway";
    case 503:
        return "Service Unavailable";
    default:
        return "Unknown";
    }
}
