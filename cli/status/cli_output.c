/*
 * JSON and table output of convergectl.
 */
#include "cli_output.h"

#include "cli_secret.h"
#include "cv_base.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Seconds since 1970 with milliseconds need 13 significant digits; 15 keeps
 * them exact where the default 17 would print 1700000000.1229999. */
#define JSON_FLAGS (JSON_REAL_PRECISION(15) | JSON_ENCODE_ANY)

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    size_t len = s[0] < 0x80           ? 1
                 : (s[0] >> 5) == 0x6  ? 2
                 : (s[0] >> 4) == 0xE  ? 3
                 : (s[0] >> 3) == 0x1E ? 4
                                       : 0;
    if (len == 0 || len > n || (len == 2 && s[0] < 0xC2))
        return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return len;
}

json_t *cli_json_strn(const char *s, size_t len)
{
    json_t *v = json_stringn(s, len);
    if (v)
        return v;
    /* Not UTF-8 (or holds NUL): replace each bad byte by U+FFFD. */
    char *buf = malloc(3 * len + 1);
    if (!buf)
        return json_string("");
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t n = s[i] ? utf8_seq((const unsigned char *)s + i, len - i) : 0;
        if (n == 0) {
            memcpy(buf + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        } else {
            memcpy(buf + o, s + i, n);
            o += n;
            i += n;
        }
    }
    v = json_stringn(buf, o);
    free(buf);
    return v ? v : json_string("");
}

json_t *cli_json_str(const char *s)
{
    return cli_json_strn(s, strlen(s));
}

const char *cli_field_str(const json_t *rec, const char *field)
{
    const char *s = json_string_value(json_object_get(rec, field));
    return s ? s : "";
}

const char *cli_reported_type(const json_t *def, const json_t *rec)
{
    const char *def_type = cli_field_str(def, "type"), *rec_type = cli_field_str(rec, "type");
    if (def_type[0] && (!rec_type[0] || strcmp(def_type, rec_type) == 0)) {
        const char *declared = cli_field_str(def, "declared_type");
        return declared[0] ? declared : def_type;
    }
    const char *declared = cli_field_str(rec, "declared_type");
    return declared[0] ? declared : rec_type;
}

double cli_field_num(const json_t *rec, const char *field)
{
    const char *s = json_string_value(json_object_get(rec, field));
    return s ? strtod(s, NULL) : 0;
}

void cli_stream_next_id(const char *id, char *buf, size_t size)
{
    unsigned long long ms = 0, seq = 0;
    if (sscanf(id, "%llu-%llu", &ms, &seq) != 2)
        ms = seq = 0;
    if (seq == UINT64_MAX)
        snprintf(buf, size, "%llu-0", ms + 1);
    else
        snprintf(buf, size, "%llu-%llu", ms, seq + 1);
}

void cli_sealed_warn(const char *why)
{
    static bool said;
    if (!said)
        fprintf(stderr, "convergectl: %s; shown as " CLI_SECRET_MASK "\n", why);
    said = true;
}

json_t *cli_json_parse(const char *text, json_t *fallback)
{
    int sealed = 0;
    char why[512];
    json_t *v = text[0] ? cv_unseal_loads(text, &sealed, why, sizeof(why)) : NULL;
    if (sealed) {
        cli_sealed_warn(why);
        return json_string(CLI_SECRET_MASK);
    }
    return v ? v : json_incref(fallback);
}

void cli_print_json(const json_t *doc)
{
    json_dumpf(doc, stdout, JSON_FLAGS | JSON_INDENT(2));
    fputc('\n', stdout);
}

void cli_print_json_line(const json_t *doc)
{
    json_dumpf(doc, stdout, JSON_FLAGS | JSON_COMPACT);
    fputc('\n', stdout);
}

void cli_print_table(const json_t *rows)
{
    size_t ncols = json_array_size(json_array_get(rows, 0));
    size_t *width = calloc(ncols ? ncols : 1, sizeof(*width));
    if (!width)
        return;
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row) for (size_t c = 0; c < ncols; c++)
    {
        size_t w = json_string_length(json_array_get(row, c));
        if (w > width[c])
            width[c] = w;
    }
    json_array_foreach(rows, i, row)
    {
        size_t last = ncols; /* cells after the last non-empty one are not padded */
        while (last > 0 && json_string_length(json_array_get(row, last - 1)) == 0)
            last--;
        for (size_t c = 0; c < last; c++) {
            const char *cell = json_string_value(json_array_get(row, c));
            if (c + 1 < last)
                printf("%-*s  ", (int)width[c], cell ? cell : "");
            else
                printf("%s", cell ? cell : "");
        }
        printf("\n");
    }
    free(width);
}

/* ------------------------------------------------------------------------ */
/* As Heat writes them                                                      */
/* ------------------------------------------------------------------------ */

/* The code point of the UTF-8 sequence of `n` bytes at s. */
static unsigned long utf8_code(const unsigned char *s, size_t n)
{
    static const unsigned char lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
    unsigned long c = s[0] & lead_mask[n];
    for (size_t i = 1; i < n; i++)
        c = (c << 6) | (s[i] & 0x3F);
    return c;
}

/* Python's ensure_ascii: printable ASCII as is, the rest escaped; a code
 * point above U+FFFF as its UTF-16 surrogate pair. */
static void py_string(cv_buf_t *b, const char *s, size_t len)
{
    cv_buf_add(b, "\"", 1);
    for (size_t i = 0; i < len;) {
        unsigned char c = (unsigned char)s[i];
        size_t n = utf8_seq((const unsigned char *)s + i, len - i);
        char esc[32];
        const char *named = c == '"'    ? "\\\""
                            : c == '\\' ? "\\\\"
                            : c == '\n' ? "\\n"
                            : c == '\r' ? "\\r"
                            : c == '\t' ? "\\t"
                            : c == '\b' ? "\\b"
                            : c == '\f' ? "\\f"
                                        : NULL;
        unsigned long code = n ? utf8_code((const unsigned char *)s + i, n) : 0xFFFD;
        if (named)
            cv_buf_puts(b, named);
        else if (c >= 0x20 && c < 0x7F)
            cv_buf_add(b, s + i, 1);
        else if (code > 0xFFFF) {
            code -= 0x10000;
            snprintf(esc, sizeof(esc), "\\u%04lx\\u%04lx", 0xD800 + ((code >> 10) & 0x3FF),
                     0xDC00 + (code & 0x3FF));
            cv_buf_puts(b, esc);
        } else {
            snprintf(esc, sizeof(esc), "\\u%04lx", code);
            cv_buf_puts(b, esc);
        }
        i += n ? n : 1;
    }
    cv_buf_add(b, "\"", 1);
}

static void py_json(cv_buf_t *b, const json_t *v)
{
    char num[64];
    size_t i;
    const char *key;
    json_t *item;
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        cv_buf_puts(b, "{");
        i = 0;
        json_object_foreach((json_t *)v, key, item)
        {
            cv_buf_puts(b, i++ ? ", " : "");
            py_string(b, key, strlen(key));
            cv_buf_puts(b, ": ");
            py_json(b, item);
        }
        cv_buf_puts(b, "}");
        break;
    case JSON_ARRAY:
        cv_buf_puts(b, "[");
        json_array_foreach(v, i, item)
        {
            cv_buf_puts(b, i ? ", " : "");
            py_json(b, item);
        }
        cv_buf_puts(b, "]");
        break;
    case JSON_STRING:
        py_string(b, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
    case JSON_REAL:
        cv_format_number(v, num, sizeof(num));
        cv_buf_puts(b, num);
        break;
    default:
        cv_buf_puts(b, json_is_true(v) ? "true" : json_is_false(v) ? "false" : "null");
    }
}

char *cli_py_json_dumps(const json_t *v)
{
    cv_buf_t b = {0};
    py_json(&b, v);
    return cv_buf_take(&b);
}

/* The hint cv_limits_check ends a message with, for the limit at `which`:
 * "(--OPTION, ENV)"; its length, or 0 when `at` does not begin one. (The
 * template loader's nesting error names its settings itself.) */
static size_t limit_hint_at(const char *at, cv_limit_t *which)
{
    for (int i = 0; i < CV_LIMIT__COUNT; i++) {
        char hint[128];
        int n = snprintf(hint, sizeof(hint), "(--%s, %s)", cv_limit_option((cv_limit_t)i),
                         cv_limit_env((cv_limit_t)i));
        if (n > 0 && strncmp(at, hint, (size_t)n) == 0) {
            *which = (cv_limit_t)i;
            return (size_t)n;
        }
    }
    return 0;
}

char *cli_limit_hints(const char *msg)
{
    cv_buf_t b = {0};
    for (const char *p = msg; *p;) {
        cv_limit_t which;
        size_t n = *p == '(' ? limit_hint_at(p, &which) : 0;
        if (n == 0) {
            cv_buf_add(&b, p++, 1);
            continue;
        }
        char said[160];
        snprintf(said, sizeof(said), "(%s, or the workers' --%s)", cv_limit_env(which),
                 cv_limit_option(which));
        cv_buf_puts(&b, said);
        p += n;
    }
    return cv_buf_take(&b);
}

/* A resource's failure: not the stack's own event (resource `stack_name`),
 * nor a refused signal (SIGNAL FAILED), which failed its sender, not the
 * resource: `signal` said so when it was sent. */
static bool resource_failure(const json_t *ev, const char *stack_name)
{
    const char *resource = cli_field_str(ev, "resource");
    return strcmp(cli_field_str(ev, "status"), "FAILED") == 0 && resource[0] &&
           strcmp(resource, stack_name) != 0 && strcmp(cli_field_str(ev, "action"), "SIGNAL") != 0;
}

/* The last traversal in which a resource failed; 0 when none did. */
static long long last_failed_traversal(const json_t *events, const char *stack_name)
{
    long long last = 0;
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        long long t = (long long)json_integer_value(json_object_get(ev, "traversal"));
        if (resource_failure(ev, stack_name) && t > last)
            last = t;
    }
    return last;
}

json_t *cli_failed_resources(const json_t *events, long long from, const char *stack_name)
{
    json_t *out = json_array(), *at = json_object(); /* resource -> its entry in out */
    if (from < 0)
        from = last_failed_traversal(events, stack_name);
    size_t i;
    json_t *ev;
    json_array_foreach(events, i, ev)
    {
        const char *resource = cli_field_str(ev, "resource");
        if (!resource_failure(ev, stack_name) ||
            json_integer_value(json_object_get(ev, "traversal")) < from)
            continue;
        json_t *row = json_object_get(at, resource);
        if (!row) {
            row = json_object();
            json_object_set_new(row, "resource", json_string(resource));
            json_array_append_new(out, row);
            json_object_set(at, resource, row);
        }
        json_object_set_new(row, "action", json_string(cli_field_str(ev, "action")));
        json_object_set_new(row, "status", json_string("FAILED"));
        json_object_set_new(row, "reason", json_string(cli_field_str(ev, "reason")));
        json_object_set_new(row, "physical_id", json_string(cli_field_str(ev, "physical_id")));
    }
    json_decref(at);
    return out;
}
