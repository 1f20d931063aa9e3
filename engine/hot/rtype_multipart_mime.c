/*
 * OS::Heat::MultipartMime — a multi-part MIME message assembled from
 * `parts`, kept as a software config whose `config` attribute is the text.
 *
 * The text is what Heat's email.mime.multipart.MIMEMultipart(...)
 * .as_string() writes (Python 3, policy compat32, no header folding):
 * headers in Python's order, us-ascii parts as 7bit text, others as utf-8
 * base64 in 76-column lines, "filename" quoted or RFC 2231-encoded as
 * email.utils does. Python draws the boundary at random; here its 19 digits
 * come from the version's uuid, so that a retried create writes the same
 * message. A part of type "multipart" is parsed and its parts appended, as
 * Heat's _append_multiparts does.
 *
 * Like every config, a change of any property makes a new one (a
 * replacement).
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const cv_prop_schema_t mime_props[] = {
    {"group", CV_PROP_STRING, false, "\"Heat::Ungrouped\"", false},
    {"parts", CV_PROP_LIST, false, "[]", false},
};

static const char *const mime_attrs[] = {"config", NULL};

static const char *const part_keys[] = {"config", "filename", "type", "subtype"};

/* ---- validation ---- */

static int check_part(const json_t *part, const char *at, char *errstr, size_t errstr_size)
{
    if (cv_is_intrinsic(part))
        return 0;
    if (!json_is_object(part))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s: expected map", at);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)part, key, v)
    {
        bool known = false;
        for (size_t i = 0; i < sizeof(part_keys) / sizeof(part_keys[0]); i++)
            known = known || strcmp(part_keys[i], key) == 0;
        if (!known)
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s: Unknown Property %s", at, key);
        if (!cv_is_intrinsic(v) && !json_is_string(v) && !json_is_null(v))
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s.%s: Value must be a string", at,
                             key);
    }
    if (!json_object_get(part, "config"))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s: Property config not assigned", at);
    const json_t *type = json_object_get(part, "type");
    const char *t = json_string_value(type);
    if (t && strcmp(t, "text") && strcmp(t, "multipart"))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.type: \"%s\" is not an allowed value [\"text\", \"multipart\"]", at,
                         t);
    return 0;
}

static int mime_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size)
{
    size_t i;
    const json_t *part;
    json_array_foreach(json_object_get(props, "parts"), i, part)
    {
        char at[512];
        snprintf(at, sizeof(at), "%s.parts[%zu]", where, i);
        int rc = check_part(part, at, errstr, errstr_size);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- writing one part (email.mime.text.MIMEText) ---- */

static bool is_ascii(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s >= 0x80)
            return false;
    return true;
}

/* Generator._write_lines: every line ending (\r\n, \r, \n) written as \n. */
static void write_lines(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\r') {
            fputc('\n', f);
            if (s[1] == '\n')
                s++;
        } else {
            fputc(*s, f);
        }
    }
}

/* Base64 of [s, s + n), no line breaks. */
static void write_base64_run(FILE *f, const unsigned char *s, size_t n)
{
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16;
        if (i + 1 < n)
            v |= (uint32_t)s[i + 1] << 8;
        if (i + 2 < n)
            v |= s[i + 2];
        fputc(abc[(v >> 18) & 63], f);
        fputc(abc[(v >> 12) & 63], f);
        fputc(i + 1 < n ? abc[(v >> 6) & 63] : '=', f);
        fputc(i + 2 < n ? abc[v & 63] : '=', f);
    }
}

/* email.base64mime.body_encode: 57 bytes a line, each line ending "\n". */
static void write_base64(FILE *f, const unsigned char *s, size_t n)
{
    for (size_t line = 0; line < n; line += 57) {
        write_base64_run(f, s + line, n - line < 57 ? n - line : 57);
        fputc('\n', f);
    }
}

/* email.message._formatparam: quoted, or RFC 2231 for non-ASCII text. */
static void write_filename(FILE *f, const char *name)
{
    if (is_ascii(name)) {
        fputs("filename=\"", f);
        for (const char *p = name; *p; p++) {
            if (*p == '\\' || *p == '"')
                fputc('\\', f);
            fputc(*p, f);
        }
        fputc('"', f);
        return;
    }
    fputs("filename*=utf-8''", f);
    for (const unsigned char *p = (const unsigned char *)name; *p; p++)
        if (isalnum(*p) || strchr("_.-~", *p))
            fputc(*p, f);
        else
            fprintf(f, "%%%02X", *p);
}

/* os.path.splitext(filename)[0]: the name without its last extension;
 * leading dots of the base name are not extensions. */
static char *stem(const char *filename)
{
    const char *base = strrchr(filename, '/');
    base = base ? base + 1 : filename;
    const char *dot = strrchr(base, '.');
    const char *p = base;
    while (*p == '.')
        p++;
    size_t n = dot && dot > p ? (size_t)(dot - filename) : strlen(filename);
    char *out = malloc(n + 1);
    if (out) {
        memcpy(out, filename, n);
        out[n] = '\0';
    }
    return out;
}

/* One part, as MultipartMime._append_part and _create_message build it. */
static void write_part(FILE *f, const char *text, const char *subtype, const char *filename)
{
    char *derived = NULL;
    if ((!subtype || !*subtype) && filename && *filename)
        subtype = derived = stem(filename);
    bool ascii = is_ascii(text);
    char *ctype = NULL;
    size_t clen = 0;
    FILE *c = open_memstream(&ctype, &clen);
    if (c) {
        fprintf(c, "text/%s; charset=\"%s\"", subtype && *subtype ? subtype : "plain",
                ascii ? "us-ascii" : "utf-8");
        fclose(c);
    }
    /* A header holding non-ASCII text is one RFC 2047 encoded word, as
     * Python writes it unfolded. */
    if (ctype && is_ascii(ctype)) {
        fprintf(f, "Content-Type: %s\n", ctype);
    } else if (ctype) {
        fputs("Content-Type: =?utf-8?b?", f);
        write_base64_run(f, (const unsigned char *)ctype, clen);
        fputs("?=\n", f);
    }
    free(ctype);
    fputs("MIME-Version: 1.0\n", f);
    fprintf(f, "Content-Transfer-Encoding: %s\n", ascii ? "7bit" : "base64");
    if (filename && *filename) {
        fputs("Content-Disposition: attachment; ", f);
        write_filename(f, filename);
        fputc('\n', f);
    }
    fputc('\n', f);
    if (ascii)
        write_lines(f, text);
    else
        write_base64(f, (const unsigned char *)text, strlen(text));
    free(derived);
}

/* ---- reading a multipart message (email.message_from_string) ---- */

/* The value of header `name` in the header block [h, end), unfolded; "" when
 * absent. Header names compare without case. */
static void header_value(const char *h, const char *end, const char *name, char *out, size_t size)
{
    size_t n = strlen(name), len = 0;
    out[0] = '\0';
    for (const char *line = h; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (!eol)
            eol = end;
        if ((size_t)(eol - line) > n && strncasecmp(line, name, n) == 0 && line[n] == ':') {
            const char *v = line + n + 1, *stop = eol;
            for (;;) {
                while (v < stop && (*v == ' ' || *v == '\t'))
                    v++;
                size_t k = (size_t)(stop - v);
                if (k && v[k - 1] == '\r')
                    k--;
                if (len + k + 2 < size) {
                    if (len)
                        out[len++] = ' ';
                    memcpy(out + len, v, k);
                    len += k;
                    out[len] = '\0';
                }
                if (stop >= end || (stop[1] != ' ' && stop[1] != '\t'))
                    break;
                v = stop + 1;
                stop = memchr(v, '\n', (size_t)(end - v));
                if (!stop)
                    stop = end;
            }
            return;
        }
        line = eol + 1;
    }
}

/* Parameter `param` of a header value ("text/plain; charset=x"). */
static void header_param(const char *value, const char *param, char *out, size_t size)
{
    size_t n = strlen(param);
    out[0] = '\0';
    for (const char *p = strchr(value, ';'); p; p = strchr(p + 1, ';')) {
        const char *k = p + 1;
        while (*k == ' ' || *k == '\t')
            k++;
        if (strncasecmp(k, param, n) != 0 || k[n] != '=')
            continue;
        const char *v = k + n + 1;
        size_t len = 0;
        if (*v == '"') {
            for (v++; *v && *v != '"' && len + 1 < size; v++) {
                if (*v == '\\' && v[1])
                    v++;
                out[len++] = *v;
            }
        } else {
            while (*v && *v != ';' && *v != ' ' && len + 1 < size)
                out[len++] = *v++;
        }
        out[len] = '\0';
        return;
    }
}

/* The start of the body of the entity at [s, end): after the blank line
 * ending its headers. */
static const char *body_of(const char *s, const char *end)
{
    for (const char *line = s; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (!eol)
            return end;
        if (eol == line || (eol == line + 1 && *line == '\r'))
            return eol + 1;
        line = eol + 1;
    }
    return end;
}

/* Whether the line at `line` is the delimiter "--boundary" (close: "--"
 * after it), trailing whitespace allowed as feedparser allows it. */
static int delimiter(const char *line, const char *eol, const char *boundary)
{
    size_t n = strlen(boundary);
    if ((size_t)(eol - line) < n + 2 || line[0] != '-' || line[1] != '-' ||
        strncmp(line + 2, boundary, n) != 0)
        return 0;
    const char *p = line + 2 + n;
    int kind = 1;
    if (eol - p >= 2 && p[0] == '-' && p[1] == '-') {
        kind = 2;
        p += 2;
    }
    for (; p < eol; p++)
        if (!isspace((unsigned char)*p))
            return 0;
    return kind;
}

/* One parsed part: its raw payload (get_payload()), its content subtype
 * (default "plain") and its filename. */
static void append_parsed_part(FILE *f, bool *first, const char *boundary, const char *s,
                               const char *end)
{
    const char *body = body_of(s, end);
    char ctype[512], disp[512], subtype[256] = "plain", filename[512];
    header_value(s, body, "Content-Type", ctype, sizeof(ctype));
    header_value(s, body, "Content-Disposition", disp, sizeof(disp));
    const char *slash = strchr(ctype, '/');
    if (slash) {
        size_t n = strcspn(slash + 1, "; \t");
        snprintf(subtype, sizeof(subtype), "%.*s", (int)n, slash + 1);
        for (char *p = subtype; *p; p++)
            *p = (char)tolower((unsigned char)*p);
    }
    header_param(disp, "filename", filename, sizeof(filename));
    if (!filename[0])
        header_param(ctype, "name", filename, sizeof(filename));
    char *payload = strndup(body, (size_t)(end - body));
    if (!payload)
        return;
    fprintf(f, *first ? "--%s\n" : "\n--%s\n", boundary);
    *first = false;
    write_part(f, payload, subtype, filename[0] ? filename : NULL);
    free(payload);
}

/* MultipartMime._append_multiparts: nothing unless `text` is a multipart
 * message with a boundary. */
static void append_multiparts(FILE *f, bool *first, const char *boundary, const char *text)
{
    const char *end = text + strlen(text), *body = body_of(text, end);
    char ctype[512], inner[256];
    header_value(text, body, "Content-Type", ctype, sizeof(ctype));
    if (strncasecmp(ctype, "multipart/", 10) != 0)
        return;
    header_param(ctype, "boundary", inner, sizeof(inner));
    if (!inner[0])
        return;
    const char *part = NULL;
    for (const char *line = body; line < end;) {
        const char *eol = memchr(line, '\n', (size_t)(end - line));
        if (!eol)
            eol = end;
        int kind = delimiter(line, eol, inner);
        if (kind && part) {
            /* The line break before a delimiter belongs to the delimiter. */
            const char *stop = line > part && line[-1] == '\n' ? line - 1 : line;
            if (stop > part && stop[-1] == '\r')
                stop--;
            append_parsed_part(f, first, boundary, part, stop > part ? stop : part);
        }
        if (kind == 2)
            return;
        if (kind == 1)
            part = eol < end ? eol + 1 : end;
        line = eol + 1;
    }
}

/* ---- the whole message ---- */

/* email.generator._make_boundary: "=" * 15 + 19 digits + "==", with
 * ".<n>" appended while some part holds a line "--<boundary>". */
static void make_boundary(char *out, size_t size, const char *uuid, const json_t *parts)
{
    uint64_t token = cv_hash_more(cv_hash_str(uuid ? uuid : ""), "mime") % 9223372036854775807ULL;
    char base[64];
    snprintf(base, sizeof(base), "===============%019llu==", (unsigned long long)token);
    snprintf(out, size, "%s", base);
    for (int counter = 0;; counter++) {
        bool found = false;
        size_t i;
        const json_t *p;
        json_array_foreach(parts, i, p)
        {
            const char *text = json_string_value(json_object_get(p, "config"));
            for (const char *line = text; line && *line && !found;) {
                const char *eol = strchr(line, '\n');
                if (!eol)
                    eol = line + strlen(line);
                found = delimiter(line, eol, out) != 0;
                line = *eol ? eol + 1 : eol;
            }
        }
        if (!found)
            return;
        snprintf(out, size, "%s.%d", base, counter);
    }
}

char *cv__mime_message(const json_t *props, const char *uuid)
{
    const json_t *parts = json_object_get(props, "parts");
    char boundary[96];
    make_boundary(boundary, sizeof(boundary), uuid, parts);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    fprintf(f, "Content-Type: multipart/mixed; boundary=\"%s\"\nMIME-Version: 1.0\n\n", boundary);
    bool first = true;
    size_t i;
    const json_t *part;
    json_array_foreach(parts, i, part)
    {
        const char *text = json_string_value(json_object_get(part, "config"));
        const char *type = json_string_value(json_object_get(part, "type"));
        if (!text)
            text = "";
        if (type && strcmp(type, "multipart") == 0) {
            append_multiparts(f, &first, boundary, text);
            continue;
        }
        fprintf(f, first ? "--%s\n" : "\n--%s\n", boundary);
        first = false;
        write_part(f, text, json_string_value(json_object_get(part, "subtype")),
                   json_string_value(json_object_get(part, "filename")));
    }
    if (first)
        fprintf(f, "--%s\n", boundary);
    fprintf(f, "\n--%s--\n", boundary);
    fclose(f);
    return buf;
}

static int mime_create(cv_rstate_t *st)
{
    if (!st->physical_id[0])
        cv__rtype_set_physical_id(st);
    char *text = cv__mime_message(st->props, st->uuid);
    json_t *config = text ? json_string(text) : NULL;
    free(text);
    if (!config)
        return CV_ENOMEM;
    return json_object_set_new(st->attrs, "config", config) ? CV_ENOMEM : 0;
}

const cv_rtype_t cv__rtype_multipart_mime = {
    .name = "OS::Heat::MultipartMime",
    .props = mime_props,
    .nprops = sizeof(mime_props) / sizeof(mime_props[0]),
    .attrs = mime_attrs,
    .validate = mime_validate,
    .create = mime_create,
    .update = mime_create,
    .remove = cv__config_remove,
    .observe = cv__config_observe,
    .reference_id = cv__config_reference_id,
};
