/*
 * The Redis part of cv_opts: the URL with its credentials, the password
 * file, the redacted form that is printed instead of the URL, the AUTH
 * command every connection sends first, and the map from the addresses a
 * cluster announces to the ones to connect to.
 */
#include "cv_opts.h"

#include "cv_base.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Percent-decodes src[0..n) into out; -1 on a bad escape, an encoded NUL or
 * a result that does not fit. */
static int pct_decode(const char *src, size_t n, char *out, size_t out_size)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        int c = (unsigned char)src[i];
        if (c == '%') {
            if (i + 2 >= n || cv_hex_digit(src[i + 1]) < 0 || cv_hex_digit(src[i + 2]) < 0)
                return -1;
            c = cv_hex_digit(src[i + 1]) * 16 + cv_hex_digit(src[i + 2]);
            if (c == 0)
                return -1;
            i += 2;
        }
        if (o + 1 >= out_size)
            return -1;
        out[o++] = (char)c;
    }
    out[o] = '\0';
    return 0;
}

/* Length of the scheme ("redis://") at the start of url, 0 when absent. */
static size_t scheme_len(const char *url)
{
    if (strncmp(url, "redis+cluster://", 16) == 0)
        return 16;
    return strncmp(url, "redis://", 8) == 0 ? 8 : 0;
}

/* Where the user part of the authority ends (its '@'), or NULL. The last '@'
 * before the path, so that an unencoded '@' in a password still parses. */
static const char *userinfo_end(const char *authority)
{
    size_t n = strcspn(authority, "/");
    const char *at = NULL;
    for (const char *p = authority; p < authority + n; p++)
        if (*p == '@')
            at = p;
    return at;
}

void cv_opts_redact_url(const char *url, char *out, size_t out_size)
{
    const char *auth = url + scheme_len(url), *at = userinfo_end(auth);
    const char *colon = at ? memchr(auth, ':', (size_t)(at - auth)) : NULL;
    if (!colon)
        snprintf(out, out_size, "%s", url);
    else
        snprintf(out, out_size, "%.*s:***%s", (int)(colon - url), url, at);
}

/* Fills user and password from the user part auth[0..n) ("user",
 * "user:pass" or ":pass"). */
static int parse_userinfo(cv_opts_t *o, const char *auth, size_t n, const char *shown, char *errstr,
                          size_t errstr_size)
{
    const char *colon = memchr(auth, ':', n);
    size_t ul = colon ? (size_t)(colon - auth) : n;
    char pass[sizeof(o->redis_pass)] = "";
    if (pct_decode(auth, ul, o->redis_user, sizeof(o->redis_user)) ||
        (colon && pct_decode(colon + 1, n - ul - 1, pass, sizeof(pass))))
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "bad Redis URL \"%s\": bad user or password (percent-encode "
                         "reserved characters; at most %zu bytes)",
                         shown, sizeof(pass) - 1);
    if (!o->redis_pass_from_file)
        snprintf(o->redis_pass, sizeof(o->redis_pass), "%s", pass);
    return 0;
}

/* Scans "host[:port]" at *pp into a (the host ends at ':' or one of
 * `stops`), moving *pp past it; the port is `port` when absent (0: it is
 * required). Returns 0, -1 (no host) or -2 (bad or missing port). */
static int scan_addr(cv_redis_addr_t *a, const char **pp, const char *stops, int port)
{
    const char *p = *pp;
    size_t hl = strcspn(p, stops);
    if (hl == 0 || hl >= sizeof(a->host))
        return -1;
    memcpy(a->host, p, hl);
    a->host[hl] = '\0';
    a->port = port;
    p += hl;
    if (*p == ':') {
        char *end;
        long v = strtol(p + 1, &end, 10);
        if (end == p + 1 || v <= 0 || v > 65535)
            return -2;
        a->port = (int)v;
        p = end;
    }
    if (a->port == 0)
        return -2;
    *pp = p;
    return 0;
}

/* Parses "host[:port]" at *pp into a, moving *pp past it. */
static int parse_addr(cv_redis_addr_t *a, const char **pp, const char *shown, char *errstr,
                      size_t errstr_size)
{
    int rc = scan_addr(a, pp, ":/,", 6379);
    if (rc)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "bad Redis URL \"%s\": %s", shown,
                         rc == -1 ? "no host" : "bad port");
    return 0;
}

/* Parses "host[:port][,host[:port]...]" into the seeds: one for a single
 * Redis, CV_REDIS_SEEDS_MAX at most for a cluster. */
static int parse_seeds(cv_opts_t *o, const char **pp, const char *shown, char *errstr,
                       size_t errstr_size)
{
    o->nredis_seeds = 0;
    for (;;) {
        if (o->nredis_seeds == (o->redis_cluster ? CV_REDIS_SEEDS_MAX : 1))
            return cv_seterr(errstr, errstr_size, CV_EINVAL,
                             o->redis_cluster ? "bad Redis URL \"%s\": more than 16 seeds"
                                              : "bad Redis URL \"%s\": one host:port only "
                                                "(redis+cluster:// takes a list)",
                             shown);
        int rc = parse_addr(&o->redis_seeds[o->nredis_seeds++], pp, shown, errstr, errstr_size);
        if (rc)
            return rc;
        if (**pp != ',')
            return 0;
        (*pp)++;
    }
}

/* Parses "host[:port][,host[:port]...][/db]" into o. */
static int parse_location(cv_opts_t *o, const char *p, const char *shown, char *errstr,
                          size_t errstr_size)
{
    int db = 0;
    int rc = parse_seeds(o, &p, shown, errstr, errstr_size);
    if (rc)
        return rc;
    char *end;
    if (*p == '/' && p[1]) {
        long v = strtol(p + 1, &end, 10);
        if (*end || v < 0 || v > 15)
            return cv_seterr(errstr, errstr_size, CV_EINVAL,
                             "bad Redis URL \"%s\": bad database number", shown);
        db = (int)v;
    } else if (*p && strcmp(p, "/") != 0) {
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "bad Redis URL \"%s\"", shown);
    }
    if (o->redis_cluster && db != 0)
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "bad Redis URL \"%s\": a Redis Cluster has database 0 only", shown);
    snprintf(o->redis_host, sizeof(o->redis_host), "%s", o->redis_seeds[0].host);
    o->redis_port = o->redis_seeds[0].port;
    o->redis_db = db;
    return 0;
}

int cv_opts_set_redis(cv_opts_t *o, const char *url, char *errstr, size_t errstr_size)
{
    char shown[sizeof(o->redis_url)];
    cv_opts_redact_url(url, shown, sizeof(shown));
    const char *auth = url + scheme_len(url), *at = userinfo_end(auth);
    o->redis_cluster = strncmp(url, "redis+cluster://", 16) == 0;
    o->redis_user[0] = '\0';
    if (!o->redis_pass_from_file)
        o->redis_pass[0] = '\0';
    int rc = at ? parse_userinfo(o, auth, (size_t)(at - auth), shown, errstr, errstr_size) : 0;
    if (!rc)
        rc = parse_location(o, at ? at + 1 : auth, shown, errstr, errstr_size);
    if (!rc)
        snprintf(o->redis_url, sizeof(o->redis_url), "%s", shown);
    return rc;
}

int cv_opts_read_redis_password(cv_opts_t *o, const char *path, char *errstr, size_t errstr_size)
{
    int rc = cv_opts_read_secret("Redis", path, o->redis_pass, sizeof(o->redis_pass), errstr,
                                 errstr_size);
    if (rc == 0)
        o->redis_pass_from_file = true;
    return rc;
}

const char *cv_opts_redis_user(const cv_opts_t *o)
{
    return o->redis_user[0] ? o->redis_user : "default";
}

int cv_opts_redis_auth_argv(const cv_opts_t *o, const char *argv[3])
{
    if (!o->redis_pass[0])
        return 0;
    argv[0] = "AUTH";
    if (!o->redis_user[0]) {
        argv[1] = o->redis_pass;
        return 2;
    }
    argv[1] = o->redis_user;
    argv[2] = o->redis_pass;
    return 3;
}

int cv_opts_set_redis_map(cv_opts_t *o, const char *spec, char *errstr, size_t errstr_size)
{
    o->nredis_map = 0;
    for (const char *p = spec; *p;) {
        size_t n = strcspn(p, ",");
        if (o->nredis_map == CV_REDIS_MAP_MAX) {
            o->nredis_map = 0;
            return cv_seterr(errstr, errstr_size, CV_EINVAL,
                             "CONVERGE_REDIS_ADDRESS_MAP: more than %d entries", CV_REDIS_MAP_MAX);
        }
        cv_redis_addr_map_t *m = &o->redis_map[o->nredis_map];
        const char *q = p;
        if (scan_addr(&m->announced, &q, ":=,", 0) || *q++ != '=' ||
            scan_addr(&m->reached, &q, ":,", 0) || (*q && *q != ',')) {
            o->nredis_map = 0;
            return cv_seterr(errstr, errstr_size, CV_EINVAL,
                             "CONVERGE_REDIS_ADDRESS_MAP: bad entry \"%.*s\": want "
                             "announced-host:port=reached-host:port",
                             (int)n, p);
        }
        o->nredis_map++;
        p = q + (*q == ',');
    }
    return 0;
}

void cv_opts_redis_route(const cv_opts_t *o, const char **host, int *port)
{
    for (int i = 0; i < o->nredis_map; i++) {
        const cv_redis_addr_map_t *m = &o->redis_map[i];
        if (m->announced.port == *port && strcmp(m->announced.host, *host) == 0) {
            *host = m->reached.host;
            *port = m->reached.port;
            return;
        }
    }
}
