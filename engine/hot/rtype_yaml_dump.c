/*
 * rtype_yaml_dump — JSON values written as YAML text exactly as Heat writes
 * them: yaml.dump with Heat's CSafeDumper (libyaml) and its defaults (block
 * style, keys sorted, indent 2, lines folded past 80 columns, allow_unicode
 * off), which OS::Heat::CloudConfig puts after "#cloud-config\n".
 *
 * The emitter follows PyYAML's emitter step by step — the scalar analysis
 * that picks plain, single- or double-quoted style, and the scalar writers
 * with their folding (libyaml's, where it differs) — so that the text is
 * byte for byte what Heat stores.
 */
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <math.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BEST_WIDTH 80
#define BEST_INDENT 2

typedef struct emitter {
    FILE *out;
    int column;
    int indent;
    bool whitespace;
    bool indention;
    bool simple_key; /* writing a simple key: never folded */
} emitter_t;

/* ---- text as code points ---- */

typedef struct text {
    uint32_t *cp;
    size_t len;
} text_t;

static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *cp)
{
    unsigned char c = s[0];
    int extra = c < 0x80 ? 0 : (c >> 5) == 6 ? 1 : (c >> 4) == 14 ? 2 : (c >> 3) == 30 ? 3 : -1;
    if (extra < 0 || (size_t)extra >= n) {
        *cp = 0xFFFD;
        return 1;
    }
    uint32_t v = extra == 0 ? c : c & (0x3F >> extra);
    for (int i = 1; i <= extra; i++)
        v = (v << 6) | (s[i] & 0x3F);
    *cp = v;
    return (size_t)extra + 1;
}

static text_t decode(const char *s, size_t n)
{
    text_t t = {calloc(n + 1, sizeof(uint32_t)), 0};
    for (size_t i = 0; t.cp && i < n;)
        i += utf8_decode((const unsigned char *)s + i, n - i, &t.cp[t.len++]);
    return t;
}

static void put_cp(emitter_t *e, uint32_t c)
{
    char b[4];
    int n = 0;
    if (c < 0x80) {
        b[n++] = (char)c;
    } else if (c < 0x800) {
        b[n++] = (char)(0xC0 | (c >> 6));
        b[n++] = (char)(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        b[n++] = (char)(0xE0 | (c >> 12));
        b[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[n++] = (char)(0x80 | (c & 0x3F));
    } else {
        b[n++] = (char)(0xF0 | (c >> 18));
        b[n++] = (char)(0x80 | ((c >> 12) & 0x3F));
        b[n++] = (char)(0x80 | ((c >> 6) & 0x3F));
        b[n++] = (char)(0x80 | (c & 0x3F));
    }
    fwrite(b, 1, (size_t)n, e->out);
}

static void write_range(emitter_t *e, const text_t *t, size_t start, size_t end)
{
    for (size_t i = start; i < end; i++)
        put_cp(e, t->cp[i]);
    e->column += (int)(end - start);
}

static void write_str(emitter_t *e, const char *s)
{
    fputs(s, e->out);
    e->column += (int)strlen(s);
}

/* ---- PyYAML's writer primitives ---- */

static void write_line_break(emitter_t *e)
{
    fputc('\n', e->out);
    e->whitespace = true;
    e->indention = true;
    e->column = 0;
}

static void write_indent(emitter_t *e)
{
    int indent = e->indent < 0 ? 0 : e->indent;
    if (!e->indention || e->column > indent || (e->column == indent && !e->whitespace))
        write_line_break(e);
    if (e->column < indent) {
        e->whitespace = true;
        for (; e->column < indent; e->column++)
            fputc(' ', e->out);
    }
}

static void write_indicator(emitter_t *e, const char *ind, bool need_whitespace, bool whitespace,
                            bool indention)
{
    if (!e->whitespace && need_whitespace)
        write_str(e, " ");
    write_str(e, ind);
    e->whitespace = whitespace;
    e->indention = e->indention && indention;
}

/* ---- choosing a scalar's style (emitter.analyze_scalar) ---- */

static bool is_break(uint32_t c)
{
    return c == '\n' || c == 0x85 || c == 0x2028 || c == 0x2029;
}

static bool is_ws(uint32_t c)
{
    return c == 0 || c == ' ' || c == '\t' || c == '\r' || is_break(c);
}

typedef struct analysis {
    bool multiline, block_plain, single_quoted;
} analysis_t;

/* Whether character i makes a plain scalar impossible in block context
 * (PyYAML's block_indicators; flow indicators do not matter, as nothing is
 * written in flow style but empty collections). */
static bool block_indicator(const text_t *t, size_t i)
{
    uint32_t c = t->cp[i];
    bool followed_ws = i + 1 >= t->len || is_ws(t->cp[i + 1]);
    if (i == 0)
        return (c && c < 0x80 && strchr("#,[]{}&*!|>'\"%@`", (int)c)) ||
               ((c == '?' || c == ':' || c == '-') && followed_ws);
    return (c == ':' && followed_ws) || (c == '#' && is_ws(t->cp[i - 1]));
}

/* PyYAML's analyze_scalar, for the styles block context can choose. */
static analysis_t analyze(const text_t *t)
{
    analysis_t a = {false, true, true};
    if (t->len == 0)
        return a;
    bool block_ind = t->len >= 3 && ((t->cp[0] == '-' && t->cp[1] == '-' && t->cp[2] == '-') ||
                                     (t->cp[0] == '.' && t->cp[1] == '.' && t->cp[2] == '.'));
    bool special = false, edge_space = false, break_space = false, space_break = false;
    for (size_t i = 0; i < t->len; i++) {
        uint32_t c = t->cp[i];
        bool edge = i == 0 || i == t->len - 1;
        block_ind = block_ind || block_indicator(t, i);
        a.multiline = a.multiline || is_break(c);
        /* allow_unicode is off: any character but these is escaped. */
        special = special || !(c == '\n' || (c >= 0x20 && c <= 0x7E));
        if (c == ' ' || is_break(c))
            edge_space = edge_space || edge;
        if (c == ' ' && i > 0 && is_break(t->cp[i - 1]))
            break_space = true;
        if (is_break(c) && i > 0 && t->cp[i - 1] == ' ')
            space_break = true;
    }
    if (edge_space || a.multiline || block_ind)
        a.block_plain = false;
    if (break_space || space_break || special)
        a.block_plain = a.single_quoted = false;
    return a;
}

/* Whether PyYAML's resolver reads the plain text as something other than a
 * string (bool, int, float, null, timestamp, merge, value): it is quoted. */
static bool resolves_to_non_string(const char *s)
{
    static const char *const patterns[] = {
        "^(yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$",
        "^([-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+"
        "|[-+]?[1-9][0-9_]*(:[0-5]?[0-9])+)$",
        "^([-+]?([0-9][0-9_]*)\\.[0-9_]*([eE][-+][0-9]+)?|\\.[0-9_]+([eE][-+][0-9]+)?"
        "|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN))$",
        "^(~|null|Null|NULL|)$",
        "^([0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]"
        "|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?([Tt]|[ \t]+)[0-9][0-9]?:[0-9][0-9]"
        ":[0-9][0-9](\\.[0-9]*)?(([ \t]*)Z|[-+][0-9][0-9]?(:[0-9][0-9])?)?)$",
        "^(<<|=)$",
    };
    bool hit = false;
    for (size_t i = 0; !hit && i < sizeof(patterns) / sizeof(patterns[0]); i++) {
        regex_t re;
        if (regcomp(&re, patterns[i], REG_EXTENDED | REG_NOSUB) != 0)
            continue;
        hit = regexec(&re, s, 0, NULL, 0) == 0;
        regfree(&re);
    }
    return hit;
}

/* ---- the three scalar writers ---- */

static void write_plain(emitter_t *e, const text_t *t)
{
    if (t->len == 0)
        return;
    if (!e->whitespace)
        write_str(e, " ");
    e->whitespace = e->indention = false;
    bool spaces = false;
    size_t start = 0;
    for (size_t end = 0; end <= t->len; end++) {
        uint32_t c = end < t->len ? t->cp[end] : 0;
        bool at_end = end == t->len;
        if (spaces) {
            if (at_end || c != ' ') {
                if (start + 1 == end && e->column > BEST_WIDTH && !e->simple_key) {
                    write_indent(e);
                    e->whitespace = e->indention = false;
                } else {
                    write_range(e, t, start, end);
                }
                start = end;
            }
        } else if (at_end || c == ' ' || is_break(c)) {
            write_range(e, t, start, end);
            start = end;
        }
        if (!at_end)
            spaces = c == ' ';
    }
}

static void write_single_quoted(emitter_t *e, const text_t *t)
{
    write_indicator(e, "'", true, false, false);
    bool spaces = false, breaks = false;
    size_t start = 0;
    for (size_t end = 0; end <= t->len; end++) {
        bool at_end = end == t->len;
        uint32_t c = at_end ? 0 : t->cp[end];
        if (spaces) {
            if (at_end || c != ' ') {
                if (start + 1 == end && e->column > BEST_WIDTH && !e->simple_key && start != 0 &&
                    end != t->len)
                    write_indent(e);
                else
                    write_range(e, t, start, end);
                start = end;
            }
        } else if (breaks) {
            if (at_end || !is_break(c)) {
                if (t->cp[start] == '\n')
                    write_line_break(e);
                for (size_t i = start; i < end; i++) {
                    if (t->cp[i] == '\n') {
                        write_line_break(e);
                    } else {
                        put_cp(e, t->cp[i]);
                        e->whitespace = e->indention = true;
                        e->column = 0;
                    }
                }
                write_indent(e);
                start = end;
            }
        } else if ((at_end || c == ' ' || is_break(c) || c == '\'') && start < end) {
            write_range(e, t, start, end);
            start = end;
        }
        if (c == '\'' && !at_end) {
            write_str(e, "''");
            start = end + 1;
        }
        if (!at_end) {
            spaces = c == ' ';
            breaks = is_break(c);
        }
    }
    write_indicator(e, "'", false, false, false);
}

static const char *escape_of(uint32_t c)
{
    switch (c) {
    case 0:
        return "0";
    case 7:
        return "a";
    case 8:
        return "b";
    case 9:
        return "t";
    case 10:
        return "n";
    case 11:
        return "v";
    case 12:
        return "f";
    case 13:
        return "r";
    case 27:
        return "e";
    case '"':
        return "\"";
    case '\\':
        return "\\";
    case 0x85:
        return "N";
    case 0xA0:
        return "_";
    case 0x2028:
        return "L";
    case 0x2029:
        return "P";
    default:
        return NULL;
    }
}

static void write_escape(emitter_t *e, uint32_t c)
{
    char buf[16];
    const char *r = escape_of(c);
    if (r)
        snprintf(buf, sizeof(buf), "\\%s", r);
    else if (c <= 0xFF)
        snprintf(buf, sizeof(buf), "\\x%02X", (unsigned)c);
    else if (c <= 0xFFFF)
        snprintf(buf, sizeof(buf), "\\u%04X", (unsigned)c);
    else
        snprintf(buf, sizeof(buf), "\\U%08X", (unsigned)c);
    write_str(e, buf);
}

/* libyaml's folding, which Heat's CSafeDumper uses: a single space past
 * the width becomes a line break (PyYAML's own writer differs here). */
static void write_double_quoted(emitter_t *e, const text_t *t)
{
    write_indicator(e, "\"", true, false, false);
    bool spaces = false;
    for (size_t i = 0; i < t->len; i++) {
        uint32_t c = t->cp[i];
        if (c == '"' || c == '\\' || c == 0x85 || c == 0x2028 || c == 0x2029 || c == 0xFEFF ||
            !(c >= 0x20 && c <= 0x7E)) {
            write_escape(e, c);
            spaces = false;
        } else if (c == ' ') {
            if (!spaces && e->column > BEST_WIDTH && !e->simple_key && i != 0 && i != t->len - 1) {
                write_indent(e);
                if (t->cp[i + 1] == ' ')
                    write_str(e, "\\");
            } else {
                write_str(e, " ");
            }
            spaces = true;
        } else {
            put_cp(e, c);
            e->column++;
            spaces = false;
        }
    }
    write_indicator(e, "\"", false, false, false);
}

/* A scalar at the current indent + 2 (PyYAML's increase_indent(flow=True)). */
static void write_scalar_text(emitter_t *e, const char *s, size_t n, bool plain_ok, bool simple_key)
{
    text_t t = decode(s, n);
    analysis_t a = analyze(&t);
    int saved = e->indent;
    e->indent = e->indent < 0 ? BEST_INDENT : e->indent + BEST_INDENT;
    if (plain_ok && a.block_plain && !(simple_key && (t.len == 0 || a.multiline)) && t.len > 0)
        write_plain(e, &t);
    else if (a.single_quoted && !(simple_key && a.multiline))
        write_single_quoted(e, &t);
    else
        write_double_quoted(e, &t);
    e->indent = saved;
    free(t.cp);
}

/* ---- nodes ---- */

/* PyYAML's represent_float: repr() lowercased, "1e+16" as "1.0e+16". */
static void format_real(const json_t *v, char *out, size_t size)
{
    double d = json_real_value(v);
    if (isnan(d)) {
        snprintf(out, size, ".nan");
        return;
    }
    if (isinf(d)) {
        snprintf(out, size, d > 0 ? ".inf" : "-.inf");
        return;
    }
    char buf[64];
    cv_format_number(v, buf, sizeof(buf));
    char *e = strchr(buf, 'e');
    if (e && !strchr(buf, '.'))
        snprintf(out, size, "%.*s.0%s", (int)(e - buf), buf, e);
    else
        snprintf(out, size, "%s", buf);
}

static void write_scalar(emitter_t *e, const json_t *v, bool simple_key)
{
    char buf[64];
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        write_scalar_text(e, s, json_string_length(v), !resolves_to_non_string(s), simple_key);
        return;
    }
    if (json_is_integer(v))
        snprintf(buf, sizeof(buf), "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        format_real(v, buf, sizeof(buf));
    else if (json_is_boolean(v))
        snprintf(buf, sizeof(buf), "%s", json_is_true(v) ? "true" : "false");
    else
        snprintf(buf, sizeof(buf), "null");
    write_scalar_text(e, buf, strlen(buf), true, simple_key);
}

static bool is_empty_collection(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0);
}

static void write_node(emitter_t *e, const json_t *v, bool mapping_value);

static int compare_keys(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* PyYAML's check_simple_key: shorter than 128 characters, on one line;
 * other keys are written as "? key" then ": value". */
static bool is_simple_key(const char *key)
{
    text_t t = decode(key, strlen(key));
    bool simple = t.len < 128;
    for (size_t i = 0; simple && i < t.len; i++)
        simple = !is_break(t.cp[i]);
    free(t.cp);
    return simple;
}

static void write_mapping(emitter_t *e, const json_t *v)
{
    size_t n = json_object_size(v), i = 0;
    const char **keys = malloc(n * sizeof(*keys));
    const char *key;
    const json_t *item;
    json_object_foreach((json_t *)v, key, item)
    {
        keys[i++] = key;
    }
    qsort(keys, n, sizeof(*keys), compare_keys);
    int saved = e->indent;
    e->indent = e->indent < 0 ? 0 : e->indent + BEST_INDENT;
    for (i = 0; i < n; i++) {
        json_t *k = json_string(keys[i]);
        bool simple = is_simple_key(keys[i]);
        write_indent(e);
        if (!simple)
            write_indicator(e, "?", true, false, true);
        e->simple_key = simple;
        write_scalar(e, k, simple);
        e->simple_key = false;
        json_decref(k);
        if (simple) {
            write_indicator(e, ":", false, false, false);
        } else {
            write_indent(e);
            write_indicator(e, ":", true, false, true);
        }
        write_node(e, json_object_get(v, keys[i]), true);
    }
    e->indent = saved;
    free(keys);
}

/* In a mapping, a sequence is "indentless": its dashes align with the keys. */
static void write_sequence(emitter_t *e, const json_t *v, bool mapping_value)
{
    int saved = e->indent;
    bool indentless = mapping_value && !e->indention;
    if (e->indent < 0)
        e->indent = 0;
    else if (!indentless)
        e->indent += BEST_INDENT;
    size_t i;
    const json_t *item;
    json_array_foreach(v, i, item)
    {
        write_indent(e);
        write_indicator(e, "-", true, false, true);
        write_node(e, item, false);
    }
    e->indent = saved;
}

static void write_node(emitter_t *e, const json_t *v, bool mapping_value)
{
    if (is_empty_collection(v))
        write_indicator(e, json_is_object(v) ? "{}" : "[]", true, false, false);
    else if (json_is_object(v))
        write_mapping(e, v);
    else if (json_is_array(v))
        write_sequence(e, v, mapping_value);
    else
        write_scalar(e, v, false);
}

char *cv__yaml_dump(const json_t *v)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    emitter_t e = {f, 0, -1, true, true, false};
    write_node(&e, v, false);
    write_indent(&e);
    fclose(f);
    return buf;
}
