/*
 * py_repr — a JSON value as Python's repr() and type() show it, for the
 * messages in which Heat quotes a bad argument that way ("Items to merge
 * must be maps. 'a' is type <class 'str'> instead of a dict").
 */
#include "cv__fn_messages.h"
#include "cv__template_internal.h"

#include <stdio.h>
#include <string.h>

typedef struct out {
    char *buf;
    size_t len, size;
} out_t;

static void put(out_t *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n && o->len + 1 < o->size; i++)
        o->buf[o->len++] = s[i];
    o->buf[o->len] = '\0';
}

static void puts_(out_t *o, const char *s)
{
    put(o, s, strlen(s));
}

/* Python quotes with ' unless the text holds ' and no ". */
static void repr_string(out_t *o, const char *s, size_t n)
{
    char quote = memchr(s, '\'', n) && !memchr(s, '"', n) ? '"' : '\'';
    put(o, &quote, 1);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        char esc[8];
        if (c == '\\' || c == (unsigned char)quote)
            snprintf(esc, sizeof(esc), "\\%c", c);
        else if (c == '\n' || c == '\r' || c == '\t')
            snprintf(esc, sizeof(esc), "\\%c", c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
        else if (c < 0x20 || c == 0x7f)
            snprintf(esc, sizeof(esc), "\\x%02x", c);
        else
            snprintf(esc, sizeof(esc), "%c", c);
        puts_(o, esc);
    }
    put(o, &quote, 1);
}

static void repr(out_t *o, const json_t *v)
{
    char num[64];
    const char *key;
    json_t *item;
    size_t i;
    if (o->len + 1 >= o->size)
        return; /* full: the rest would be cut off anyway */
    switch (json_typeof(v)) {
    case JSON_STRING:
        repr_string(o, json_string_value(v), json_string_length(v));
        break;
    case JSON_INTEGER:
    case JSON_REAL:
        cv__fmt_number(v, num, sizeof(num));
        puts_(o, num);
        break;
    case JSON_TRUE:
    case JSON_FALSE:
        puts_(o, json_is_true(v) ? "True" : "False");
        break;
    case JSON_NULL:
        puts_(o, "None");
        break;
    case JSON_ARRAY:
        puts_(o, "[");
        json_array_foreach(v, i, item)
        {
            puts_(o, i ? ", " : "");
            repr(o, item);
        }
        puts_(o, "]");
        break;
    case JSON_OBJECT:
        puts_(o, "{");
        i = 0;
        json_object_foreach((json_t *)v, key, item)
        {
            puts_(o, i++ ? ", " : "");
            repr_string(o, key, strlen(key));
            puts_(o, ": ");
            repr(o, item);
        }
        puts_(o, "}");
        break;
    }
}

void cv__py_repr(const json_t *v, char *buf, size_t size)
{
    out_t o = {buf, 0, size};
    if (size)
        buf[0] = '\0';
    repr(&o, v);
}

const char *cv__py_type(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_STRING:
        return "<class 'str'>";
    case JSON_INTEGER:
        return "<class 'int'>";
    case JSON_REAL:
        return "<class 'float'>";
    case JSON_TRUE:
    case JSON_FALSE:
        return "<class 'bool'>";
    case JSON_ARRAY:
        return "<class 'list'>";
    case JSON_OBJECT:
        return "<class 'dict'>";
    default:
        return "<class 'NoneType'>";
    }
}
