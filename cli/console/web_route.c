/*
 * Request paths and the bearer token of converge-web (web_route.h).
 */
#include "web_route.h"

#include "cv_base.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A path segment of the stack API: what follows /api/stacks/NAME. */
static const struct {
    const char *suffix;
    web_route_kind_t kind;
} stack_routes[] = {
    {"", WEB_ROUTE_STACK},
    {"/graph", WEB_ROUTE_STACK_GRAPH},
    {"/resources", WEB_ROUTE_STACK_RESOURCES},
    {"/events", WEB_ROUTE_STACK_EVENTS},
    {"/stream", WEB_ROUTE_STACK_STREAM},
};

static bool valid_stack(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= WEB_NAME_MAX)
        return false;
    return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") == n;
}

static bool valid_service(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n >= WEB_NAME_MAX)
        return false;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || *p == '/')
            return false;
    return true;
}

/* Decodes the segment [seg, seg+len) into out and checks it. */
static int segment(const char *seg, size_t len, char *out, bool (*valid)(const char *),
                   const char *what, char *errstr, size_t errstr_size)
{
    if (!cv_httpreq_unescape(seg, len, out, WEB_NAME_MAX) || !valid(out)) {
        snprintf(errstr, errstr_size, "bad %s name '%.*s' in the path", what,
                 (int)(len > 64 ? 64 : len), seg);
        return CV_EINVAL;
    }
    return 0;
}

static int match_stack(const char *rest, web_route_t *out, char *errstr, size_t errstr_size)
{
    size_t len = strcspn(rest, "/");
    for (size_t i = 0; i < sizeof(stack_routes) / sizeof(stack_routes[0]); i++) {
        if (strcmp(rest + len, stack_routes[i].suffix) != 0)
            continue;
        out->kind = stack_routes[i].kind;
        return segment(rest, len, out->stack, valid_stack, "stack", errstr, errstr_size);
    }
    return CV_ENOENT;
}

static int match_service(const char *rest, web_route_t *out, char *errstr, size_t errstr_size)
{
    size_t len = strcspn(rest, "/");
    const char *name = rest + len;
    if (*name != '/' || strchr(name + 1, '/'))
        return CV_ENOENT;
    out->kind = WEB_ROUTE_SERVICE;
    int rc = segment(rest, len, out->stack, valid_stack, "stack", errstr, errstr_size);
    return rc ? rc
              : segment(name + 1, strlen(name + 1), out->service, valid_service, "service", errstr,
                        errstr_size);
}

/* A page file: one segment of letters, digits, '.', '-', '_'. Whether it
 * exists is the caller's question (the embedded files). */
static int match_asset(const char *path, web_route_t *out)
{
    if (strcmp(path, "/") == 0)
        path = "/index.html";
    size_t n = strlen(path);
    if (n >= sizeof(out->asset) || strchr(path + 1, '/') ||
        strspn(path + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") !=
            n - 1 ||
        path[1] == '.')
        return CV_ENOENT;
    out->kind = WEB_ROUTE_ASSET;
    memcpy(out->asset, path, n + 1);
    return 0;
}

int web_route_match(const char *path, web_route_t *out, char *errstr, size_t errstr_size)
{
    memset(out, 0, sizeof(*out));
    errstr[0] = '\0';
    if (strcmp(path, "/api/stacks") == 0 || strcmp(path, "/api/stacks/") == 0) {
        out->kind = WEB_ROUTE_STACKS;
        return 0;
    }
    if (strcmp(path, "/api/cluster") == 0) {
        out->kind = WEB_ROUTE_CLUSTER;
        return 0;
    }
    if (strcmp(path, "/api/dead") == 0) {
        out->kind = WEB_ROUTE_DEAD;
        return 0;
    }
    if (strncmp(path, "/api/stacks/", 12) == 0)
        return match_stack(path + 12, out, errstr, errstr_size);
    if (strncmp(path, "/api/services/", 14) == 0)
        return match_service(path + 14, out, errstr, errstr_size);
    if (strncmp(path, "/api/", 5) == 0 || strcmp(path, "/api") == 0)
        return CV_ENOENT;
    return match_asset(path, out);
}

/* A decimal of 1..20 digits that fits 64 bits, ending at *end. */
static bool u64_part(const char *s, const char **end, unsigned long long *v)
{
    size_t n = strspn(s, "0123456789");
    if (n == 0 || n > 20)
        return false;
    errno = 0;
    char *e;
    *v = strtoull(s, &e, 10);
    *end = e;
    return errno == 0 && e == s + n;
}

/* A stream entry id Redis can start an exclusive range after. */
static bool entry_id_ok(const char *s)
{
    const char *p;
    unsigned long long ms, seq;
    if (!u64_part(s, &p, &ms) || *p != '-' || !u64_part(p + 1, &p, &seq) || *p)
        return false;
    return !(ms == ULLONG_MAX && seq == ULLONG_MAX);
}

int web_route_check_query(const web_route_t *r, const char *query, char *errstr, size_t errstr_size)
{
    char after[2048];
    if (r->kind == WEB_ROUTE_STACK_EVENTS &&
        cv_httpreq_param(query, "after", after, sizeof(after)) && after[0] && !entry_id_ok(after))
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "after: expected an event id such as 1712345678901-0 (two numbers of "
                         "64 bits), got '%.64s'",
                         after);
    return 0;
}

/* Equal strings, in a time that does not depend on where they differ. */
static bool same_secret(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b);
    unsigned char diff = na != nb;
    for (size_t i = 0; i < na; i++)
        diff |= (unsigned char)a[i] ^ (unsigned char)b[i < nb ? i : 0];
    return diff == 0 && nb > 0;
}

bool web_route_authorized(const char *token, const char *authorization, const char *query)
{
    if (!token[0])
        return true;
    if (strncmp(authorization, "Bearer ", 7) == 0 && same_secret(authorization + 7, token))
        return true;
    char given[512];
    return cv_httpreq_param(query, "token", given, sizeof(given)) && same_secret(given, token);
}
