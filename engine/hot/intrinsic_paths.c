/*
 * intrinsic_paths — the key-or-index paths of get_param and get_attr, as
 * Heat walks them (Python indexing: negative indexes count from the end,
 * a string is a sequence of characters). A step that finds nothing ends
 * the walk with nothing; what that gives is the caller's ("" for
 * get_param, null for get_attr, as in Heat).
 */
#include "cv__template_internal.h"

#include <stdlib.h>
#include <string.h>

/* An index as Python reads one: negative counts from the end. */
static bool list_index(const json_t *list, json_int_t i, size_t *out)
{
    json_int_t n = (json_int_t)json_array_size(list);
    if (i < 0)
        i += n;
    if (i < 0 || i >= n)
        return false;
    *out = (size_t)i;
    return true;
}

/* Character `i` (Python's s[i], negative from the end) of a UTF-8 string,
 * as a new string; NULL when there is none. */
static json_t *char_at(const json_t *s, json_int_t i)
{
    const char *text = json_string_value(s);
    size_t len = json_string_length(s), n = 0, at;
    for (size_t b = 0; b < len; b++)
        n += ((unsigned char)text[b] & 0xC0) != 0x80;
    if (i < 0)
        i += (json_int_t)n;
    if (i < 0 || i >= (json_int_t)n)
        return NULL;
    at = (size_t)i;
    size_t b = 0, c = 0;
    for (; b < len; b++)
        if (((unsigned char)text[b] & 0xC0) != 0x80 && c++ == at)
            break;
    size_t end = b + 1;
    while (end < len && ((unsigned char)text[end] & 0xC0) == 0x80)
        end++;
    return json_stringn(text + b, end - b);
}

/* One step of a get_param / get_attr path, or NULL when there is nothing
 * there. get_param also reads a numeric string as a list index. A string
 * is a sequence to Python, so an index into it is one character; `*made`
 * then holds that new value, which the caller releases. */
static const json_t *step(const json_t *v, const json_t *key, bool numeric_strings, json_t **made)
{
    size_t at;
    if (json_is_object(v))
        return json_is_string(key) ? json_object_get(v, json_string_value(key)) : NULL;
    if (json_is_string(v) && json_is_integer(key))
        return *made = char_at(v, json_integer_value(key));
    if (json_is_string(v) && numeric_strings && json_is_string(key)) {
        char *end;
        long long i = strtoll(json_string_value(key), &end, 10);
        return *json_string_value(key) && *end == '\0' ? (*made = char_at(v, i)) : NULL;
    }
    if (!json_is_array(v))
        return NULL;
    if (json_is_integer(key))
        return list_index(v, json_integer_value(key), &at) ? json_array_get(v, at) : NULL;
    if (numeric_strings && json_is_string(key)) {
        const char *s = json_string_value(key);
        char *end;
        long long i = strtoll(s, &end, 10);
        if (*s && *end == '\0' && list_index(v, i, &at))
            return json_array_get(v, at);
    }
    return NULL;
}

const json_t *cv__path_walk(const json_t *v, const json_t *args, size_t from, bool numeric_strings,
                            json_t **made)
{
    *made = NULL;
    for (size_t i = from; v && i < json_array_size(args); i++) {
        json_t *next_made = NULL;
        v = step(v, json_array_get(args, i), numeric_strings, &next_made);
        if (next_made) {
            json_decref(*made);
            *made = next_made;
        }
    }
    return v;
}
