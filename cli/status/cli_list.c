/*
 * Filters, order and rows of convergectl list.
 */
#include "cli_list.h"

#include "cli_output.h"

#include "cv_contract.h"
#include "cv_base.h"

#include <ctype.h>
#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const states[] = {"IN_PROGRESS", "COMPLETE", "FAILED"};
#define NSTATES (sizeof(states) / sizeof(states[0]))

void cli_list_filter_init(cli_list_filter_t *f)
{
    memset(f, 0, sizeof(*f));
    f->statuses = json_array();
}

void cli_list_filter_free(cli_list_filter_t *f)
{
    json_decref(f->statuses);
    free(f->name);
    memset(f, 0, sizeof(*f));
}

static bool is_state(const char *s)
{
    for (size_t i = 0; i < NSTATES; i++)
        if (strcmp(s, states[i]) == 0)
            return true;
    return false;
}

/* ACTION_STATE with an action the traversals know. */
static bool is_status(const char *s)
{
    for (size_t i = 0; i < NSTATES; i++) {
        size_t n = strlen(s), m = strlen(states[i]);
        if (n <= m + 1 || strcmp(s + n - m, states[i]) != 0 || s[n - m - 1] != '_')
            continue;
        char action[32];
        if (n - m - 1 >= sizeof(action))
            return false;
        snprintf(action, sizeof(action), "%.*s", (int)(n - m - 1), s);
        return cv_trav_kind_parse(action) >= 0;
    }
    return false;
}

int cli_list_filter_add_status(cli_list_filter_t *f, const char *arg, char *errstr,
                               size_t errstr_size)
{
    const char *p = arg;
    do {
        size_t n = strcspn(p, ",");
        char word[64];
        if (n == 0 || n >= sizeof(word)) {
            snprintf(errstr, errstr_size, "'%.*s' in '%s' is not a stack status",
                     (int)(n < 64 ? n : 64), p, arg);
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            word[i] = (char)toupper((unsigned char)p[i]);
        word[n] = '\0';
        if (!is_state(word) && !is_status(word)) {
            snprintf(errstr, errstr_size,
                     "'%s' is not a stack status (ACTION_STATE such as CREATE_COMPLETE, or a "
                     "state: IN_PROGRESS, COMPLETE, FAILED)",
                     word);
            return -1;
        }
        json_array_append_new(f->statuses, json_string(word));
        p += n;
    } while (*p++ == ',');
    return 0;
}

int cli_list_filter_set_name(cli_list_filter_t *f, const char *pattern, char *errstr,
                             size_t errstr_size)
{
    if (!pattern[0]) {
        snprintf(errstr, errstr_size, "the name pattern is empty");
        return -1;
    }
    free(f->name);
    f->name = strdup(pattern);
    return f->name ? 0 : -1;
}

/* A status matches a status word exactly, a state word by its ending. */
static bool status_matches(const char *status, const char *want)
{
    if (!is_state(want))
        return strcmp(status, want) == 0;
    size_t n = strlen(status), m = strlen(want);
    return n > m && status[n - m - 1] == '_' && strcmp(status + n - m, want) == 0;
}

bool cli_list_filter_match(const cli_list_filter_t *f, const json_t *row)
{
    const char *name = json_string_value(json_object_get(row, "name"));
    const char *status = json_string_value(json_object_get(row, "status"));
    if (!name || !status || !status[0] || strcmp(status, "DELETE_COMPLETE") == 0)
        return false;
    if (!f->nested && json_integer_value(json_object_get(row, "depth")) > 0)
        return false;
    if (f->name && fnmatch(f->name, name, 0) != 0)
        return false;
    if (json_array_size(f->statuses) == 0)
        return true;
    size_t i;
    json_t *want;
    json_array_foreach(f->statuses, i, want)
    {
        if (status_matches(status, json_string_value(want)))
            return true;
    }
    return false;
}

/* ------------------------------------------------------------------------ */
/* Order                                                                    */
/* ------------------------------------------------------------------------ */

static const char *str_of(const json_t *row, const char *field)
{
    const char *s = json_string_value(json_object_get(row, field));
    return s ? s : "";
}

static int by_name(const void *a, const void *b)
{
    const json_t *x = *(const json_t *const *)a, *y = *(const json_t *const *)b;
    int c = strcmp(str_of(x, "name"), str_of(y, "name"));
    return c ? c : strcmp(str_of(x, "id"), str_of(y, "id"));
}

/* Appends `row` and, depth first, its children by name (`kids`: parent id
 * -> its children in name order). `seen` stops a record that would make a
 * stack its own ancestor from looping. */
static void append_tree(json_t *out, const json_t *row, const json_t *kids, json_t *seen)
{
    const char *id = str_of(row, "id");
    if (json_object_get(seen, id))
        return;
    json_object_set_new(seen, id, json_true());
    json_array_append(out, (json_t *)row);
    size_t i;
    json_t *child;
    json_array_foreach(json_object_get(kids, id), i, child)
    {
        append_tree(out, child, kids, seen);
    }
}

json_t *cli_list_order(const json_t *rows)
{
    size_t n = json_array_size(rows);
    json_t *out = json_array();
    json_t **sorted = calloc(n ? n : 1, sizeof(*sorted));
    if (!sorted)
        return out;
    json_t *ids = json_object(), *kids = json_object(), *seen = json_object();
    for (size_t i = 0; i < n; i++) {
        sorted[i] = json_array_get(rows, i);
        json_object_set_new(ids, str_of(sorted[i], "id"), json_true());
    }
    qsort(sorted, n, sizeof(*sorted), by_name);
    for (size_t i = 0; i < n; i++) {
        const char *parent = str_of(sorted[i], "parent");
        if (!parent[0] || !json_object_get(ids, parent))
            continue;
        if (!json_object_get(kids, parent))
            json_object_set_new(kids, parent, json_array());
        json_array_append(json_object_get(kids, parent), sorted[i]);
    }
    for (size_t i = 0; i < n; i++) {
        const char *parent = str_of(sorted[i], "parent");
        if (!parent[0] || !json_object_get(ids, parent))
            append_tree(out, sorted[i], kids, seen);
    }
    json_decref(ids);
    json_decref(kids);
    json_decref(seen);
    free(sorted);
    return out;
}

json_t *cli_list_row(const char *id, const json_t *rec, double now)
{
    double created = cli_field_num(rec, "created");
    json_t *row = json_object();
    json_object_set_new(row, "name", cli_json_str(cli_field_str(rec, "name")));
    json_object_set_new(row, "id", cli_json_str(id));
    json_object_set_new(row, "status", cli_json_str(cli_field_str(rec, "status")));
    json_object_set_new(row, "reason", cli_json_str(cli_field_str(rec, "reason")));
    json_object_set_new(row, "traversal",
                        json_integer((json_int_t)cli_field_num(rec, "traversal")));
    json_object_set_new(row, "done", json_integer((json_int_t)cli_field_num(rec, "done")));
    json_object_set_new(row, "total", json_integer((json_int_t)cli_field_num(rec, "total")));
    json_object_set_new(row, "created", json_real(created));
    json_object_set_new(row, "updated", json_real(cli_field_num(rec, "updated")));
    double age = created > 0 && now > created ? now - created : 0;
    json_object_set_new(row, "age", json_real(round(age * 1000) / 1000));
    json_object_set_new(row, "depth", json_integer((json_int_t)cli_field_num(rec, "depth")));
    json_object_set_new(row, "parent", cli_json_str(cli_field_str(rec, "parent")));
    json_object_set_new(row, "parent_resource",
                        cli_json_str(cli_field_str(rec, "parent_resource")));
    return row;
}

/* ------------------------------------------------------------------------ */
/* Nested stacks by name                                                    */
/* ------------------------------------------------------------------------ */

size_t cli_list_name_prefixes(const char *name, size_t *ends, size_t max)
{
    size_t n = 0;
    for (const char *p = strchr(name, '-'); p && n < max; p = strchr(p + 1, '-'))
        if (p > name)
            ends[n++] = (size_t)(p - name);
    return n;
}

bool cli_list_name_below(const char *name, const char *ancestor)
{
    size_t n = strlen(ancestor);
    return n > 0 && strncmp(name, ancestor, n) == 0 && name[n] == '-' && name[n + 1] != '\0';
}
