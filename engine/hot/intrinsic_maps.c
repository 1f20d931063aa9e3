/*
 * intrinsic_maps — map_merge and map_replace, with Heat's semantics
 * (heat/engine/hot/functions.py: MapMerge, MapReplace).
 *
 * Like intrinsic_lists.c, these are plain functions of arguments the
 * resolver has already computed. A map_replace value replacement may be
 * used for many keys: each use is a copy, counted against the budget, so
 * that the result holds no value twice and cannot grow past it.
 */
#include "cv__fn_messages.h"
#include "cv__template_internal.h"

#include <string.h>

/* Why setting a key of the map being built failed. */
typedef enum { PUT_OK = 0, PUT_TOO_LARGE, PUT_NO_MEMORY } put_t;

/* Sets a key of the map being built, within the budget; takes `value`
 * (NULL: a value that could not be made, which is out of memory). */
static put_t put(json_t *out, const char *key, json_t *value, cv__budget_t *budget)
{
    size_t cost = CV__NODE_BYTES + strlen(key);
    if (!value || cost > budget->left) {
        json_decref(value);
        return value ? PUT_TOO_LARGE : PUT_NO_MEMORY;
    }
    budget->left -= cost;
    return json_object_set_new(out, key, value) ? PUT_NO_MEMORY : PUT_OK;
}

static json_t *put_failed(put_t why, const char *fn, cv__budget_t *budget, char *errstr,
                          size_t errstr_size)
{
    return why == PUT_TOO_LARGE ? cv__fn_too_large(budget, errstr, errstr_size, fn)
                                : cv__fn_fail(errstr, errstr_size, "out of memory");
}

json_t *cv__fn_map_merge(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size)
{
    if (!json_is_array(args))
        return cv__fn_fail(errstr, errstr_size, CV__MERGE_USAGE);
    for (size_t i = 0; i < json_array_size(args); i++) {
        const json_t *m = json_array_get(args, i);
        if (!json_is_null(m) && !json_is_object(m)) {
            char shown[CV__PY_REPR_MAX];
            cv__py_repr(m, shown, sizeof(shown));
            return cv__fn_fail(errstr, errstr_size, CV__MERGE_ITEM, shown, cv__py_type(m));
        }
    }
    json_t *out = json_object();
    if (!out)
        return cv__fn_fail(errstr, errstr_size, "out of memory");
    for (size_t i = 0; i < json_array_size(args); i++) {
        const char *key;
        json_t *value;
        json_object_foreach(json_array_get(args, i), key, value)
        {
            put_t why = put(out, key, json_incref(value), budget);
            if (why) {
                json_decref(out);
                return put_failed(why, "map_merge", budget, errstr, errstr_size);
            }
        }
    }
    return out;
}

/* The value a map_replace input value becomes: the replacement when it is
 * a string named in `values` (Heat looks up hashable values only, and map
 * keys are strings), else itself. */
static json_t *replaced_value(json_t *v, const json_t *values, cv__budget_t *budget,
                              bool *too_large)
{
    const json_t *with = json_is_string(v) ? json_object_get(values, json_string_value(v)) : NULL;
    if (!with)
        return json_incref(v);
    size_t size = cv__resolved_size(with, budget->left);
    if (size > budget->left) {
        *too_large = true;
        return NULL;
    }
    budget->left -= size;
    return json_deep_copy(with);
}

json_t *cv__fn_map_replace(const json_t *args, cv__budget_t *budget, char *errstr,
                           size_t errstr_size)
{
    if (!json_is_array(args) || json_array_size(args) != 2)
        return cv__fn_fail(errstr, errstr_size, CV__MAP_REPLACE_USAGE);
    const json_t *in = json_array_get(args, 0), *repl = json_array_get(args, 1);
    bool ok_in = json_is_null(in) || json_is_object(in);
    bool ok_repl = json_is_null(repl) || json_is_object(repl);
    if (!ok_in || !ok_repl)
        return cv__fn_fail(errstr, errstr_size, CV__MAP_REPLACE_MAPS);
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)repl, key, value)
    {
        if (strcmp(key, "keys") != 0 && strcmp(key, "values") != 0)
            return cv__fn_fail(errstr, errstr_size, CV__MAP_REPLACE_USAGE);
    }
    const json_t *keys = json_object_get(repl, "keys"), *values = json_object_get(repl, "values");
    bool ok_keys = !keys || json_is_null(keys) || json_is_object(keys);
    bool ok_values = !values || json_is_null(values) || json_is_object(values);
    if (!ok_keys || !ok_values)
        return cv__fn_fail(errstr, errstr_size, CV__MAP_REPLACE_MAPS);
    json_object_foreach((json_t *)keys, key, value)
    {
        if (!json_is_null(value) && !json_is_string(value))
            return cv__fn_fail_got(errstr, errstr_size, "map_replace",
                                   "key replacements must be strings", value);
    }

    json_t *out = json_object();
    if (!out)
        return cv__fn_fail(errstr, errstr_size, "out of memory");
    json_object_foreach((json_t *)in, key, value)
    {
        const char *new_key = json_string_value(json_object_get(keys, key));
        if (!new_key) {
            new_key = key;
        } else if (strcmp(new_key, key) != 0 && json_object_get(in, new_key)) {
            json_decref(out);
            return cv__fn_fail(errstr, errstr_size,
                               "key replacement %s collides with a key in the input map", new_key);
        } else if (json_object_get(out, new_key)) {
            json_decref(out);
            return cv__fn_fail(errstr, errstr_size,
                               "key replacement %s collides with a key in the output map", new_key);
        }
        bool too_large = false;
        json_t *v = replaced_value(value, values, budget, &too_large);
        put_t why = too_large ? PUT_TOO_LARGE : put(out, new_key, v, budget);
        if (why) {
            json_decref(out);
            return put_failed(why, "map_replace", budget, errstr, errstr_size);
        }
    }
    return out;
}
