/*
 * JSON and table output of convergectl.
 */
#include "cli_output.h"

#include "cli_secret.h"
#include "cv_seal.h"

#include <stdbool.h>
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

double cli_field_num(const json_t *rec, const char *field)
{
    const char *s = json_string_value(json_object_get(rec, field));
    return s ? strtod(s, NULL) : 0;
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
