/*
 * rtype_group_mark — the mark a group type's attributes carry
 * (CV_RTYPE_GROUP_KEY) so that get_attr reads a path into them as Heat's
 * get_attribute of that type does (engine/hot/intrinsic_group.c), and
 * the removed_rsrc_list as Heat shows it.
 */
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <stdlib.h>
#include <string.h>

void cv__group_mark(json_t *attrs, const char *kind, const json_t *names)
{
    json_t *members = json_is_array(names) ? json_incref((json_t *)names) : json_array();
    json_object_set_new(attrs, CV_RTYPE_GROUP_KEY,
                        json_pack("{s:s, s:o}", "kind", kind, "members", members));
}

static int by_text(const void *a, const void *b)
{
    return strcmp(json_string_value(*(json_t *const *)a), json_string_value(*(json_t *const *)b));
}

/* Heat keeps the removed names as one comma-joined text of the sorted set
 * (ResourceGroup._update_name_skiplist) and reads them back in that order. */
json_t *cv__group_removed_list(const json_t *blacklist)
{
    size_t n = 0, i;
    const json_t *v;
    json_t **items = malloc(sizeof(*items) * (json_array_size(blacklist) + 1));
    if (!items)
        return json_array();
    json_array_foreach(blacklist, i, v)
    {
        if (json_is_string(v))
            items[n++] = (json_t *)v;
    }
    qsort(items, n, sizeof(*items), by_text);
    json_t *out = json_array();
    for (i = 0; i < n; i++)
        json_array_append(out, items[i]);
    free(items);
    return out;
}

void cv_rtype_attrs_shown(json_t *attrs)
{
    if (json_is_object(attrs))
        json_object_del(attrs, CV_RTYPE_GROUP_KEY);
}
