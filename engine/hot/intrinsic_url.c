/*
 * intrinsic_url — Heat's make_url function (heat/engine/hot/functions.py:
 * MakeURL): a URL built from its parts, each escaped as Python's
 * urllib.parse escapes it, and put together as urlunsplit does.
 *
 *   make_url: {scheme: https, username: u, password: p, host: example.com,
 *              port: 443, path: /a b, query: {k: v}, fragment: f}
 *   → "https://u:p@example.com:443/a%20b?k=v#f"
 */
#include "cv__fn_messages.h"
#include "cv__template_internal.h"
#include "cv_base.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const url_keys[] = {"scheme", "username", "password", "host",
                                       "port",   "path",     "query",    "fragment"};

/* The schemes urlunsplit writes "//" after (Python's uses_netloc). */
static const char *const netloc_schemes[] = {
    "",        "ftp",   "http",  "gopher", "nntp",     "telnet", "imap",  "wais",  "file",
    "mms",     "https", "shttp", "snews",  "prospero", "rtsp",   "rtspu", "rsync", "svn",
    "svn+ssh", "sftp",  "nfs",   "git",    "git+ssh",  "ws",     "wss"};

/* urllib.parse.quote(s, safe): letters, digits, "_.-~" and `safe` stay,
 * every other byte of the UTF-8 text becomes %XX; with `plus` (quote_plus)
 * a space becomes "+". */
static void quote(cv_buf_t *b, const char *s, size_t len, const char *safe, bool plus)
{
    static const char hex[] = "0123456789ABCDEF";
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    (c && strchr("_.-~", c)) || (c && strchr(safe, c));
        if (keep) {
            cv_buf_add(b, s + i, 1);
        } else if (plus && c == ' ') {
            cv_buf_add(b, "+", 1);
        } else {
            char esc[3] = {'%', hex[c >> 4], hex[c & 15]};
            cv_buf_add(b, esc, 3);
        }
    }
}

static const char *str_arg(const json_t *args, const char *key)
{
    const char *s = json_string_value(json_object_get(args, key));
    return s ? s : "";
}

/* Python's int() of a port given as a string: surrounding whitespace, a
 * sign, digits (with single underscores between them). */
static bool py_int_text(const char *s, long long *out)
{
    char digits[32];
    size_t n = 0;
    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    if (*s == '+' || *s == '-')
        digits[n++] = *s++;
    bool prev_digit = false;
    for (; (*s >= '0' && *s <= '9') || (*s == '_' && prev_digit && s[1] >= '0' && s[1] <= '9');
         s++) {
        prev_digit = *s != '_';
        if (*s != '_' && n < sizeof(digits) - 1)
            digits[n++] = *s;
    }
    digits[n] = '\0';
    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    if (*s || !prev_digit)
        return false;
    errno = 0;
    *out = strtoll(digits, NULL, 10);
    if (errno == ERANGE)
        *out = 0; /* out of range either way */
    return true;
}

/* Heat's port check of `port` among `args`; the text the URL gets in
 * `text`. */
bool cv__url_port_ok(const json_t *port, const json_t *args, char *text, size_t size, char *errstr,
                     size_t errstr_size)
{
    long long value;
    if (json_is_integer(port) || json_is_boolean(port)) {
        value = json_is_integer(port) ? json_integer_value(port) : json_is_true(port);
        if (json_is_boolean(port))
            snprintf(text, size, "%s", json_is_true(port) ? "True" : "False");
        else
            snprintf(text, size, "%lld", value);
    } else if (json_is_real(port) && isfinite(json_real_value(port))) {
        double d = json_real_value(port);
        value = d > 1e18 ? (long long)1e18 : d < -1e18 ? (long long)-1e18 : (long long)d;
        cv__fmt_number(port, text, size);
    } else if (json_is_string(port) && py_int_text(json_string_value(port), &value)) {
        snprintf(text, size, "%s", json_string_value(port));
    } else {
        char shown[CV__PY_REPR_MAX], all[512];
        if (json_is_string(port))
            snprintf(shown, sizeof(shown), "%s", json_string_value(port));
        else
            cv__py_repr(port, shown, sizeof(shown));
        cv__py_repr(args, all, sizeof(all));
        cv__fn_fail(errstr, errstr_size, CV__URL_PORT, shown, all);
        return false;
    }
    if (value < 1 || value > 65535) {
        cv__fn_fail(errstr, errstr_size, CV__URL_PORT_RANGE, value);
        return false;
    }
    return true;
}

/* urlencode(query).replace('%2F', '/'): key=value pairs joined by "&",
 * each side quote_plus'ed; values that are not strings as Python's str(). */
static bool add_query(cv_buf_t *b, const json_t *query, char *errstr, size_t errstr_size)
{
    const char *key;
    const json_t *value;
    size_t start = b->len;
    json_object_foreach((json_t *)query, key, value)
    {
        char text[64];
        const char *v = text;
        size_t vlen;
        if (json_is_string(value)) {
            v = json_string_value(value);
            vlen = json_string_length(value);
        } else if (json_is_number(value)) {
            cv__fmt_number(value, text, sizeof(text));
            vlen = strlen(text);
        } else if (json_is_boolean(value) || json_is_null(value)) {
            v = json_is_null(value) ? "None" : json_is_true(value) ? "True" : "False";
            vlen = strlen(v);
        } else {
            cv__fn_fail_got(errstr, errstr_size, "make_url",
                            "query values must be strings, numbers, booleans or null", value);
            return false;
        }
        if (b->len > start)
            cv_buf_add(b, "&", 1);
        quote(b, key, strlen(key), "", true);
        cv_buf_add(b, "=", 1);
        quote(b, v, vlen, "", true);
    }
    /* The replace of "%2F" by "/", in place: it only shortens. */
    size_t out = start;
    for (size_t i = start; !b->failed && i < b->len;) {
        if (i + 3 <= b->len && memcmp(b->data + i, "%2F", 3) == 0) {
            b->data[out++] = '/';
            i += 3;
        } else {
            b->data[out++] = b->data[i++];
        }
    }
    if (!b->failed) {
        b->len = out;
        b->data[out] = '\0';
    }
    return true;
}

static bool scheme_has_netloc(const char *scheme)
{
    for (size_t i = 0; i < sizeof(netloc_schemes) / sizeof(netloc_schemes[0]); i++)
        if (strcmp(scheme, netloc_schemes[i]) == 0)
            return true;
    return false;
}

static bool known_key(const char *key)
{
    for (size_t i = 0; i < sizeof(url_keys) / sizeof(url_keys[0]); i++)
        if (strcmp(key, url_keys[i]) == 0)
            return true;
    return false;
}

/* Checks the arguments as Heat's validate and _check_args do. */
static bool check(const json_t *args, char *port_text, size_t port_size, char *errstr,
                  size_t errstr_size)
{
    if (!json_is_object(args)) {
        cv__fn_fail(errstr, errstr_size, CV__URL_NOT_MAP);
        return false;
    }
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)args, key, value)
    {
        if (!known_key(key)) {
            cv__fn_fail(errstr, errstr_size, CV__URL_INVALID, key);
            return false;
        }
        if (strcmp(key, "port") == 0) {
            if (!cv__url_port_ok(value, args, port_text, port_size, errstr, errstr_size))
                return false;
        } else if (strcmp(key, "query") == 0 && !json_is_object(value)) {
            cv__fn_fail(errstr, errstr_size, CV__URL_QUERY);
            return false;
        } else if (strcmp(key, "query") != 0 && !json_is_string(value)) {
            cv__fn_fail(errstr, errstr_size, CV__URL_NOT_STRING, key);
            return false;
        }
    }
    return true;
}

json_t *cv__fn_make_url(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size)
{
    char port[64] = "";
    if (!check(args, port, sizeof(port), errstr, errstr_size))
        return NULL;
    const char *scheme = str_arg(args, "scheme");
    if (strchr(scheme, ':'))
        return cv__fn_fail(errstr, errstr_size, CV__URL_SCHEME);

    cv_buf_t netloc = {0}, url = {0};
    const char *user = str_arg(args, "username"), *pass = str_arg(args, "password");
    quote(&netloc, user, strlen(user), "", false);
    if (*pass) {
        cv_buf_add(&netloc, ":", 1);
        quote(&netloc, pass, strlen(pass), "", false);
    }
    if (*user || *pass)
        cv_buf_add(&netloc, "@", 1);
    const char *host = str_arg(args, "host");
    size_t host_len = strlen(host);
    if (host_len >= 2 && host[0] == '[' && host[host_len - 1] == ']') {
        host++;
        host_len -= 2;
    }
    size_t host_at = netloc.len;
    quote(&netloc, host, host_len, ":", false);
    if (!netloc.failed && netloc.len > host_at &&
        memchr(netloc.data + host_at, ':', netloc.len - host_at)) {
        cv_buf_t bracketed = {0};
        cv_buf_add(&bracketed, netloc.data, host_at);
        cv_buf_add(&bracketed, "[", 1);
        cv_buf_add(&bracketed, netloc.data + host_at, netloc.len - host_at);
        cv_buf_add(&bracketed, "]", 1);
        cv_buf_free(&netloc);
        netloc = bracketed;
    }
    if (*port) {
        cv_buf_add(&netloc, ":", 1);
        cv_buf_puts(&netloc, port);
    }

    /* urlunsplit((scheme, netloc, path, query, fragment)). */
    cv_buf_t path = {0};
    const char *p = str_arg(args, "path");
    quote(&path, p, strlen(p), "/", false);
    if (netloc.len || (*scheme && scheme_has_netloc(scheme) &&
                       !(path.len >= 2 && path.data[0] == '/' && path.data[1] == '/'))) {
        cv_buf_add(&url, "//", 2);
        cv_buf_add(&url, cv_buf_str(&netloc), netloc.len);
        if (path.len && path.data[0] != '/')
            cv_buf_add(&url, "/", 1);
    }
    cv_buf_add(&url, cv_buf_str(&path), path.len);
    cv_buf_free(&path);
    cv_buf_free(&netloc);
    cv_buf_t head = {0};
    if (*scheme) {
        cv_buf_puts(&head, scheme);
        cv_buf_add(&head, ":", 1);
    }
    cv_buf_add(&head, cv_buf_str(&url), url.len);
    cv_buf_free(&url);
    const json_t *query = json_object_get(args, "query");
    size_t before = head.len;
    cv_buf_add(&head, "?", 1);
    if (!add_query(&head, query, errstr, errstr_size)) {
        cv_buf_free(&head);
        return NULL;
    }
    if (!head.failed && head.len == before + 1) {
        head.len = before; /* no query: no "?" */
        head.data[before] = '\0';
    }
    const char *fragment = str_arg(args, "fragment");
    if (*fragment) {
        cv_buf_add(&head, "#", 1);
        quote(&head, fragment, strlen(fragment), "/", false);
    }
    json_t *out = NULL;
    if (!head.failed && CV__NODE_BYTES + head.len <= budget->left) {
        budget->left -= CV__NODE_BYTES + head.len;
        out = json_stringn(cv_buf_str(&head), head.len);
    } else if (!head.failed) {
        cv_buf_free(&head);
        return cv__fn_too_large(budget, errstr, errstr_size, "make_url");
    }
    cv_buf_free(&head);
    return out ? out : cv__fn_fail(errstr, errstr_size, "out of memory");
}
