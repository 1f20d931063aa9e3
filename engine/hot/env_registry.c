/*
 * env_registry — what an environment's `resource_registry` says about one
 * resource, as Heat's ResourceRegistry (heat/engine/environment.py) says
 * it: which type implements it, which actions are restricted, which hooks
 * stop it, and what the registry of a nested stack is.
 *
 * Heat sorts the candidate mappings of a type (the per-resource one under
 * `resources.<name>`, the exact one, the wildcards, a template file named
 * as the type itself) longest registry path first, then by path, and takes
 * the first that resolves; a mapping to another type resolves that one in
 * turn. The registered types come after every user mapping, so a mapping
 * overrides a built-in type.
 */
#include "cv__template_internal.h"
#include "cv_env.h"
#include "cv_rtype.h"

#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Mappings followed before giving up: a loop of mappings resolves nothing. */
#define MAX_HOPS 16

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static bool is_template_name(const char *s)
{
    return ends_with(s, ".yaml") || ends_with(s, ".template");
}

typedef struct candidate {
    const char *section; /* the resource name of a per-resource mapping, or NULL */
    const char *key;     /* the registry key */
    const char *value;
} candidate_t;

/* Heat's ResourceInfo.__lt__ among user entries: longer path first, then
 * the path in order. */
static int compare(const void *a, const void *b)
{
    const candidate_t *x = a, *y = b;
    if (!x->section != !y->section)
        return x->section ? -1 : 1;
    return strcmp(x->key, y->key);
}

static bool glob_matches(const char *key, const char *value, const char *type)
{
    size_t n = strlen(key) - 1;
    return strcmp(type, value) != 0 && strncmp(type, key, n) == 0;
}

static size_t gather(const json_t *registry, const char *type, const char *resource,
                     candidate_t *out, size_t max)
{
    size_t n = 0;
    if (is_template_name(type))
        out[n++] = (candidate_t){NULL, type, type};
    const json_t *mine =
        resource ? json_object_get(json_object_get(registry, "resources"), resource) : NULL;
    const json_t *v = json_object_get(mine, type);
    if (json_is_object(mine) && json_is_string(v))
        out[n++] = (candidate_t){resource, type, json_string_value(v)};
    const char *key;
    json_object_foreach((json_t *)registry, key, v)
    {
        if (n == max || !json_is_string(v) || strcmp(key, "resources") == 0)
            continue;
        const char *value = json_string_value(v);
        /* A template file named as the type is its own candidate already. */
        if (strcmp(key, type) == 0 && !is_template_name(type)) {
            out[n++] = (candidate_t){NULL, key, value};
        } else if (ends_with(key, "*") && !is_template_name(key) &&
                   glob_matches(key, value, type)) {
            out[n++] = (candidate_t){NULL, key, value};
        }
    }
    qsort(out, n, sizeof(*out), compare);
    return n;
}

/* One step of get_resource_info: true with the implementing type in `out`
 * (and the template mapping's path in *via) when `type` resolves. */
static bool resolve(const json_t *registry, const char *type, const char *resource, int hops,
                    char *out, size_t size, json_t **via)
{
    if (hops > MAX_HOPS)
        return false;
    candidate_t c[64];
    size_t n = gather(registry, type, resource, c, sizeof(c) / sizeof(c[0]));
    for (size_t i = 0; i < n; i++) {
        if (is_template_name(c[i].key) || is_template_name(c[i].value)) {
            snprintf(out, size, "%s", is_template_name(c[i].key) ? c[i].key : c[i].value);
            if (via && c[i].section)
                *via = json_pack("[s,s,s]", "resources", c[i].section, c[i].key);
            else if (via && json_object_get(registry, c[i].key))
                *via = json_pack("[s]", c[i].key);
            return true;
        }
        char next[512];
        const char *target = c[i].value;
        if (ends_with(c[i].key, "*") && !c[i].section) {
            size_t prefix = strlen(c[i].key) - 1;
            if (ends_with(c[i].value, "*"))
                snprintf(next, sizeof(next), "%.*s%s", (int)(strlen(c[i].value) - 1), c[i].value,
                         type + prefix);
            else
                snprintf(next, sizeof(next), "%s", c[i].value);
            target = next;
        }
        if (resolve(registry, target, resource, hops + 1, out, size, via))
            return true;
    }
    if (!cv_rtype_find(type))
        return false;
    snprintf(out, size, "%s", type);
    return true;
}

void cv_env_resolve_type(const json_t *registry, const char *type, const char *resource, char *out,
                         size_t size, json_t **via)
{
    if (via)
        *via = NULL;
    if (!json_is_object(registry) || !resolve(registry, type, resource, 0, out, size, via))
        snprintf(out, size, "%s", type);
}

/* ---------------------------------------------------------------- per resource */

static unsigned flags_of(const json_t *v, const char *const *names, size_t n)
{
    unsigned flags = 0;
    for (size_t i = 0; i < n; i++) {
        if (json_is_string(v) && strcmp(json_string_value(v), names[i]) == 0)
            flags |= 1u << i;
        size_t j;
        const json_t *item;
        json_array_foreach(v, j, item)
        {
            if (json_is_string(item) && strcmp(json_string_value(item), names[i]) == 0)
                flags |= 1u << i;
        }
    }
    return flags;
}

static unsigned matching_flags(const json_t *registry, const char *resource, const char *key,
                               const char *const *names, size_t n)
{
    unsigned flags = 0;
    const char *pattern;
    const json_t *section;
    json_object_foreach(json_object_get(registry, "resources"), pattern, section)
    {
        if (json_is_object(section) && fnmatch(pattern, resource, 0) == 0)
            flags |= flags_of(json_object_get(section, key), names, n);
    }
    return flags;
}

unsigned cv_env_restricted_actions(const json_t *registry, const char *resource)
{
    static const char *const names[] = {"update", "replace"};
    return matching_flags(registry, resource, "restricted_actions", names, 2);
}

unsigned cv_env_hooks(const json_t *registry, const char *resource)
{
    static const char *const names[] = {"pre-create", "pre-update", "pre-delete"};
    return matching_flags(registry, resource, "hooks", names, 3);
}

/* ---------------------------------------------------------------- nested stacks */

static void remove_path(json_t *registry, const json_t *via)
{
    json_t *at = registry;
    size_t n = json_array_size(via);
    for (size_t i = 0; at && i + 1 < n; i++)
        at = json_object_get(at, json_string_value(json_array_get(via, i)));
    if (json_is_object(at) && n > 0)
        json_object_del(at, json_string_value(json_array_get(via, n - 1)));
}

/* remove_resources_except: every section whose pattern matches, in order,
 * then the exact one again so that it wins. */
static json_t *resources_for(const json_t *resources, const char *resource)
{
    json_t *out = json_object();
    const char *pattern;
    json_t *section;
    json_object_foreach((json_t *)resources, pattern, section)
    {
        if (json_is_object(section) && fnmatch(pattern, resource, 0) == 0)
            json_object_update(out, section);
    }
    section = json_object_get(resources, resource);
    if (json_is_object(section))
        json_object_update(out, section);
    return out;
}

json_t *cv_env_child(const json_t *env, const char *resource, const json_t *via)
{
    json_t *child = json_object();
    const json_t *defaults = json_object_get(env, "parameter_defaults");
    json_object_set_new(child, "parameters", json_object());
    json_object_set_new(child, "parameter_defaults",
                        json_is_object(defaults) ? json_deep_copy(defaults) : json_object());
    const json_t *reg = json_object_get(env, "resource_registry");
    json_t *registry = json_is_object(reg) ? json_deep_copy(reg) : json_object();
    if (via)
        remove_path(registry, via);
    if (resource) {
        json_t *mine = resources_for(json_object_get(registry, "resources"), resource);
        json_object_set_new(registry, "resources", mine);
    }
    json_object_set_new(child, "resource_registry", registry);
    return child;
}

const char *cv__tpl_mapped_type(const cv__tpl_ctx_t *ctx, const char *type, const char *resource,
                                char *buf, size_t size)
{
    const json_t *registry = json_object_get(ctx->opts.env, "resource_registry");
    if (!json_is_object(registry) || json_object_size(registry) == 0)
        return type;
    cv_env_resolve_type(registry, type, resource, buf, size, NULL);
    return buf;
}

json_t *cv__tpl_child_env(const cv__tpl_ctx_t *ctx, const char *resource, const char *declared,
                          const char *type)
{
    const cv_rtype_t *t = cv_rtype_find(type);
    if (json_object_size(ctx->opts.env) == 0 || !declared || (t && !t->nested))
        return NULL;
    char mapped[512];
    json_t *via = NULL;
    cv_env_resolve_type(json_object_get(ctx->opts.env, "resource_registry"), declared, resource,
                        mapped, sizeof(mapped), &via);
    json_t *child = cv_env_child(ctx->opts.env, resource, via);
    json_decref(via);
    return child;
}
