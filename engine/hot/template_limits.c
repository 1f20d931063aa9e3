/*
 * template_limits — what a stack expands into, counted from its parsed
 * template before anything is expanded (cv_template_count), and the
 * recursion check of nested templates (the chain of templates a template is
 * nested in, cv_tpl_chain_t).
 *
 * A group's members are counted as `count` times its member 0, so a count
 * of 10^9 is refused after one multiplication, never by building 10^9
 * definitions. Counts saturate instead of wrapping, and the walk stops at
 * the first count past its limit. Only what the stack's parameters decide
 * is counted: a value that needs a resource's attribute counts 0 here and
 * is counted by the engine when that resource is created, once resolved.
 */
#include "cv__template_internal.h"
#include "cv_env.h"
#include "cv_base.h"
#include "cv_contract.h"
#include "cv_rtype.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHAIN_SHOWN 12 /* templates a cycle's message names at most */

/* ---------------------------------------------------------------- the chain */

const cv_tpl_chain_t *cv__tpl_chain_find(const cv_tpl_chain_t *chain, const char *file,
                                         const json_t *tree)
{
    for (const cv_tpl_chain_t *c = chain; c; c = c->up) {
        if (file && c->file && strcmp(file, c->file) == 0)
            return c;
        if (tree && c->tree && json_equal((json_t *)tree, (json_t *)c->tree))
            return c;
    }
    return NULL;
}

int cv__tpl_chain_cycle(const cv_tpl_chain_t *chain, const cv_tpl_chain_t *found, const char *label,
                        const char *where, char *errstr, size_t errstr_size)
{
    const char *names[CHAIN_SHOWN] = {NULL};
    size_t n = 0;
    for (const cv_tpl_chain_t *c = chain; c && n < CHAIN_SHOWN; c = c->up) {
        names[n++] = c->label;
        if (c == found)
            break;
    }
    char path[1024];
    size_t len = 0;
    for (size_t i = n; i-- > 0 && len < sizeof(path);) {
        int w = snprintf(path + len, sizeof(path) - len, "%s -> ", names[i]);
        len += w > 0 ? (size_t)w : 0;
    }
    if (len < sizeof(path))
        snprintf(path + len, sizeof(path) - len, "%s", label);
    return cv_seterr(errstr, errstr_size, CV_ECYCLE,
                     "%s: recursion: template %s includes itself (%s), which would never end",
                     where, found->label, path);
}

/* ---------------------------------------------------------------- counting */

typedef struct walk {
    const cv_limits_t *limits;
    const json_t *files;
    json_t *memo; /* "<depth> <file> <values>" -> what that nested stack adds to the total */
    size_t total; /* the traversal's resources counted so far */
    char *errstr;
    size_t errstr_size;
} walk_t;

/* One stack being counted. */
typedef struct level {
    const json_t *params;        /* its parameter values */
    const json_t *root;          /* its tree (the types as declared); NULL: a group's members */
    const char *fname;           /* how messages name it */
    const json_t *env;           /* its environment */
    int depth;                   /* its nesting depth */
    const cv_tpl_chain_t *chain; /* it and the templates it is nested in */
    size_t own;                  /* its resources counted so far */
} level_t;

static size_t add_sat(size_t a, size_t b)
{
    return a > SIZE_MAX - b ? SIZE_MAX : a + b;
}

static size_t mul_sat(size_t a, size_t b)
{
    return a && b > SIZE_MAX / a ? SIZE_MAX : a * b;
}

static int count_resource(walk_t *w, level_t *lv, const char *name, const char *type,
                          const char *declared, const json_t *props);

/* "<stack>: resources.<name>" ("" names the stack's resource being
 * checked alone: cv_template_count_nested). */
static void place(const level_t *lv, const char *name, char *buf, size_t size)
{
    if (*name)
        snprintf(buf, size, "%s: resources.%s", lv->fname, name);
    else
        snprintf(buf, size, "%s", lv->fname);
}

int cv_template_limit_check(const cv_limits_t *l, int limit, size_t value, const char *where,
                            char *errstr, size_t errstr_size)
{
    cv_limit_t which = (cv_limit_t)limit;
    char msg[1400], old[160];
    int rc = cv_limits_check(l, which, value, where, msg, sizeof(msg));
    if (rc == 0)
        return 0;
    /* cv_limits_check names the workers' option as if every program had
     * it; convergectl has none, so the variable comes first and the option
     * is said to be the workers'. */
    snprintf(old, sizeof(old), " (--%s, %s)", cv_limit_option(which), cv_limit_env(which));
    size_t n = strlen(msg), k = strlen(old);
    if (n >= k && strcmp(msg + n - k, old) == 0)
        msg[n - k] = '\0';
    return cv_seterr(errstr, errstr_size, rc, "%s (%s, or the workers' --%s)", msg,
                     cv_limit_env(which), cv_limit_option(which));
}

/* Whether the counts so far are within the limits; the error names the
 * resource whose expansion passed one. */
static int within(walk_t *w, const level_t *lv, const char *name)
{
    char where[700];
    place(lv, name, where, sizeof(where));
    if (cv_template_limit_check(w->limits, CV_LIMIT_RESOURCES, lv->own, where, w->errstr,
                                w->errstr_size))
        return CV_ETOOBIG;
    return cv_template_limit_check(w->limits, CV_LIMIT_TRAVERSAL_RESOURCES, w->total, where,
                                   w->errstr, w->errstr_size);
}

static int too_deep(walk_t *w, const level_t *lv, const char *name, const char *what)
{
    char at[700], where[900];
    place(lv, name, at, sizeof(at));
    snprintf(where, sizeof(where), "%s: %s", at, what);
    return cv_template_limit_check(w->limits, CV_LIMIT_NESTING_DEPTH, (size_t)lv->depth + 1, where,
                                   w->errstr, w->errstr_size);
}

/* `v` with every intrinsic call the parameters alone decide resolved; a
 * call that needs more (get_resource, get_attr) is left out of a map and
 * null in a list: such values are counted when the resource is created. */
static json_t *resolve_known(const json_t *params, const json_t *v)
{
    const char *fn;
    const json_t *arg;
    if (cv__fn_of(v, &fn, &arg) != CV__FN_NONE) {
        cv_resolve_ctx_t ctx = {.parameters = params};
        char err[256];
        return cv_intrinsic_resolve(v, &ctx, "count", err, sizeof(err));
    }
    if (!json_is_object(v) && !json_is_array(v))
        return json_incref((json_t *)v);
    json_t *out = json_is_object(v) ? json_object() : json_array();
    const char *key;
    json_t *item;
    json_object_foreach((json_t *)v, key, item)
    {
        json_t *r = resolve_known(params, item);
        if (r)
            json_object_set_new(out, key, r);
    }
    size_t i;
    json_array_foreach(v, i, item)
    {
        json_t *r = resolve_known(params, item);
        json_array_append_new(out, r ? r : json_null());
    }
    return out;
}

/* A count as written: an integer, or a string of digits as Heat converts
 * it; anything else is not known yet (0). */
static size_t count_of(const json_t *v, size_t absent)
{
    if (!v)
        return absent;
    if (json_is_integer(v))
        return json_integer_value(v) > 0 ? (size_t)json_integer_value(v) : 0;
    const char *s = json_string_value(v);
    if (!s || !*s || strspn(s, "0123456789") != strlen(s))
        return 0;
    unsigned long long n = strtoull(s, NULL, 10);
    return n > SIZE_MAX ? SIZE_MAX : (size_t)n;
}

/* What `type` maps to under the stack's registry (a group member: no
 * resource name). */
static const char *mapped(const level_t *lv, const char *type, char *buf, size_t size)
{
    const json_t *registry = json_object_get(lv->env, "resource_registry");
    if (json_object_size(registry) == 0)
        return type;
    cv_env_resolve_type(registry, type, NULL, buf, size, NULL);
    return buf;
}

/* `n` members of the definition `def` (resolved as far as known), each a
 * resource of the group's own stack one level down: counted, then member
 * 0's expansion counted once and multiplied. */
static int count_members(walk_t *w, level_t *lv, const char *name, size_t n, const json_t *def,
                         const char *var)
{
    lv->own = add_sat(lv->own, n);
    w->total = add_sat(w->total, n);
    int rc = within(w, lv, name);
    const char *mtype = json_string_value(json_object_get(def, "type"));
    if (rc || n == 0 || !mtype)
        return rc;
    if ((rc = too_deep(w, lv, name, "the members' stack")) != 0)
        return rc;
    char buf[512], fname[800];
    snprintf(fname, sizeof(fname), "%s: resources.%s (members)", lv->fname, name);
    level_t members = {.params = NULL,
                       .fname = fname,
                       .env = lv->env,
                       .depth = lv->depth + 1,
                       .chain = lv->chain,
                       .own = n};
    const char *type = mapped(lv, mtype, buf, sizeof(buf));
    const json_t *props = json_object_get(def, "properties");
    json_t *member = !json_is_object(props) ? json_object()
                     : var                  ? cv_rtype_substitute(props, var, "0")
                                            : json_incref((json_t *)props);
    size_t before = w->total;
    rc = count_resource(w, &members, "0", type, type, member);
    json_decref(member);
    if (rc)
        return rc;
    w->total = add_sat(before, mul_sat(w->total - before, n));
    return within(w, lv, name);
}

/* The length of a chain's `resources`: a list, or a repeat whose length
 * is the product of its for_each lists (or their common length without
 * permutations), known without building it. */
static size_t chain_length(const level_t *lv, const json_t *resources)
{
    const json_t *rep = json_object_get(resources, "repeat");
    if (json_is_array(resources) || !json_is_object(rep) || json_object_size(resources) != 1) {
        json_t *list = resolve_known(lv->params, resources);
        size_t n = json_array_size(list);
        json_decref(list);
        return n;
    }
    json_t *lists = resolve_known(lv->params, json_object_get(rep, "for_each"));
    bool product = !json_is_false(json_object_get(rep, "permutations"));
    size_t n = json_object_size(lists) ? 1 : 0;
    const char *key;
    const json_t *list;
    json_object_foreach(lists, key, list)
    {
        n = product ? mul_sat(n, json_array_size(list)) : json_array_size(list);
    }
    json_decref(lists);
    return n;
}

static int count_chain(walk_t *w, level_t *lv, const char *name, const json_t *props,
                       const json_t *values)
{
    size_t n = chain_length(lv, json_object_get(props, "resources"));
    lv->own = add_sat(lv->own, n);
    w->total = add_sat(w->total, n);
    int rc = within(w, lv, name);
    json_t *types =
        rc || n == 0 ? NULL : resolve_known(lv->params, json_object_get(props, "resources"));
    if (json_array_size(types) > 0)
        rc = too_deep(w, lv, name, "the members' stack");
    char fname[800];
    snprintf(fname, sizeof(fname), "%s: resources.%s (members)", lv->fname, name);
    level_t members = {
        .fname = fname, .env = lv->env, .depth = lv->depth + 1, .chain = lv->chain, .own = n};
    json_t *none = json_object(); /* the members' properties when none are given */
    const json_t *mprops = json_object_get(values, "resource_properties");
    size_t i;
    const json_t *t;
    json_array_foreach(rc ? NULL : types, i, t)
    {
        char buf[512], member[24];
        snprintf(member, sizeof(member), "%zu", i);
        if (json_is_string(t))
            rc = count_resource(w, &members, member,
                                mapped(lv, json_string_value(t), buf, sizeof(buf)),
                                json_string_value(t), mprops ? mprops : none);
        if (rc || (rc = within(w, lv, name)) != 0)
            break;
    }
    json_decref(types);
    json_decref(none);
    return rc;
}

static int count_stack(walk_t *w, level_t *lv, const cv_template_t *tpl);

/* A nested stack of template `tree` known as `node`, with parameter values
 * `values`: parsed (checked as it will run) and counted into the total. */
static int count_child(walk_t *w, level_t *lv, const char *name, const cv_tpl_chain_t *node,
                       const json_t *values, const json_t *env)
{
    int rc = too_deep(w, lv, name, node->label);
    const cv_tpl_chain_t *found = cv__tpl_chain_find(lv->chain, node->file, node->tree);
    char where[700];
    place(lv, name, where, sizeof(where));
    if (rc == 0 && found)
        rc = cv__tpl_chain_cycle(lv->chain, found, node->label, where, w->errstr, w->errstr_size);
    if (rc)
        return rc;
    cv_tpl_opts_t opts = {.files = w->files,
                          .depth = lv->depth + 1,
                          .max_depth = (int)w->limits->nesting_depth,
                          .params_later = 1,
                          .env = env,
                          .chain = node};
    cv_template_t *child = NULL;
    char err[1024];
    rc = cv_template_from_json_opts(node->tree, node->label, values, &opts, &child, err,
                                    sizeof(err));
    /* A recursion or a limit is the answer; any other problem is the
     * validation's to report, as the stack runs: it counts 0 here. */
    if (rc == CV_ECYCLE || rc == CV_ETOOBIG)
        return cv_seterr(w->errstr, w->errstr_size, rc, "%s: %s", where, err);
    if (rc)
        return 0;
    level_t sub = {.params = child->parameters,
                   .root = node->tree,
                   .fname = node->label,
                   .env = env,
                   .depth = lv->depth + 1,
                   .chain = node};
    rc = count_stack(w, &sub, child);
    cv_template_free(child);
    return rc ? rc : within(w, lv, name);
}

/* A template resource: its file's stack, counted once per depth, file and
 * parameter values (a group's stack holds many alike). */
static int count_template_file(walk_t *w, level_t *lv, const char *name, const char *file,
                               const char *declared, const json_t *values)
{
    const json_t *tree = json_object_get(w->files, file);
    if (!json_is_object(tree))
        return 0; /* the validation names the missing file */
    char *text = json_dumps(values, JSON_COMPACT | JSON_SORT_KEYS);
    char *key = NULL;
    if (!text || asprintf(&key, "%d %s %s", lv->depth, file, text) < 0)
        key = NULL;
    free(text);
    const json_t *known = key ? json_object_get(w->memo, key) : NULL;
    if (known) {
        free(key);
        w->total = add_sat(w->total, (size_t)json_integer_value(known));
        return within(w, lv, name);
    }
    json_t *via = NULL;
    char buf[512];
    cv_env_resolve_type(json_object_get(lv->env, "resource_registry"), declared, name, buf,
                        sizeof(buf), &via);
    json_t *env = cv_env_child(lv->env, name, via);
    json_decref(via);
    cv_tpl_chain_t node = {.file = file, .label = file, .tree = tree, .up = lv->chain};
    size_t before = w->total;
    int rc = count_child(w, lv, name, &node, values, env);
    if (rc == 0 && key)
        json_object_set_new(w->memo, key, json_integer((json_int_t)(w->total - before)));
    json_decref(env);
    free(key);
    return rc;
}

/* OS::Heat::Stack: its `template` (text or map) with its `parameters`. */
static int count_inline(walk_t *w, level_t *lv, const char *name, const json_t *values)
{
    const json_t *t = json_object_get(values, "template");
    char err[256];
    json_t *tree = json_is_string(t)   ? cv_yaml_load(json_string_value(t), json_string_length(t),
                                                      "template", err, sizeof(err))
                   : json_is_object(t) ? json_incref((json_t *)t)
                                       : NULL;
    if (!json_is_object(tree)) {
        json_decref(tree);
        return 0; /* not known yet, or the engine reports it as it runs */
    }
    char label[600];
    snprintf(label, sizeof(label), "%s (OS::Heat::Stack in %s)", name, lv->fname);
    cv_tpl_chain_t node = {.file = NULL, .label = label, .tree = tree, .up = lv->chain};
    json_t *env = cv_env_child(lv->env, name, NULL);
    const json_t *params = json_object_get(values, "parameters");
    int rc = count_child(w, lv, name, &node, json_is_object(params) ? params : NULL, env);
    json_decref(env);
    json_decref(tree);
    return rc;
}

/* What resource `name` of `type` (as mapped; `declared` as written) with
 * properties `props` (as written) adds below itself: members, nested
 * stacks. The resource itself the caller has counted. */
static int count_resource(walk_t *w, level_t *lv, const char *name, const char *type,
                          const char *declared, const json_t *props)
{
    const cv_rtype_t *t = cv_rtype_find(type);
    if (t && !t->nested)
        return 0;
    json_t *values = resolve_known(lv->params, props);
    int rc = 0;
    if (!json_is_object(values))
        rc = 0;
    else if (!t)
        rc = cv_rtype_is_template_file(type)
                 ? count_template_file(w, lv, name, type, declared, values)
                 : 0;
    else if (strcmp(type, "OS::Heat::ResourceGroup") == 0) {
        const char *var = json_string_value(json_object_get(values, "index_var"));
        rc = count_members(
            w, lv, name,
            json_object_get(props, "count") ? count_of(json_object_get(values, "count"), 0) : 1,
            json_object_get(values, "resource_def"), var ? var : "%index%");
    } else if (strcmp(type, "OS::Heat::AutoScalingGroup") == 0)
        rc = count_members(w, lv, name, count_of(json_object_get(values, "max_size"), 0),
                           json_object_get(values, "resource"), NULL);
    else if (strcmp(type, "OS::Heat::ResourceChain") == 0)
        rc = count_chain(w, lv, name, props, values);
    else if (strcmp(type, "OS::Heat::Stack") == 0)
        rc = count_inline(w, lv, name, values);
    json_decref(values);
    return rc;
}

static const char *declared_type(const level_t *lv, const cv_tpl_resource_t *res)
{
    const json_t *def = json_object_get(json_object_get(lv->root, "resources"), res->name);
    const char *declared = json_string_value(json_object_get(def, "type"));
    return declared ? declared : res->type;
}

/* The stack's own resources first (a flat stack over the limit is named
 * with its whole count), then what each expands into. */
static int count_stack(walk_t *w, level_t *lv, const cv_template_t *tpl)
{
    lv->own = add_sat(lv->own, tpl->nresources);
    w->total = add_sat(w->total, tpl->nresources);
    int rc = within(w, lv, "");
    for (size_t i = 0; rc == 0 && i < tpl->nresources; i++) {
        const cv_tpl_resource_t *res = &tpl->resources[i];
        const cv_rtype_t *t = cv_rtype_find(res->type);
        if (t && !t->nested)
            continue; /* most resources: nothing below them */
        rc = count_resource(w, lv, res->name, res->type, t ? res->type : declared_type(lv, res),
                            res->properties);
    }
    return rc;
}

int cv_template_count(const cv_template_t *tpl, const json_t *root, const char *fname,
                      const cv_tpl_opts_t *opts, const cv_limits_t *limits, cv_tpl_count_t *out,
                      char *errstr, size_t errstr_size)
{
    walk_t w = {.limits = limits,
                .files = opts->files,
                .memo = json_object(),
                .errstr = errstr,
                .errstr_size = errstr_size};
    cv_tpl_chain_t self = {.label = fname, .tree = root, .up = opts->chain};
    level_t lv = {.params = tpl->parameters,
                  .root = root,
                  .fname = fname,
                  .env = opts->env,
                  .depth = opts->depth,
                  .chain = &self};
    int rc = w.memo ? count_stack(&w, &lv, tpl) : CV_ENOMEM;
    json_decref(w.memo);
    out->resources = lv.own;
    out->total = w.total;
    return rc;
}

int cv_template_count_nested(const char *type, const json_t *props, const char *where,
                             const cv_tpl_opts_t *opts, const cv_limits_t *limits,
                             cv_tpl_count_t *out, char *errstr, size_t errstr_size)
{
    walk_t w = {.limits = limits,
                .files = opts->files,
                .memo = json_object(),
                .errstr = errstr,
                .errstr_size = errstr_size};
    level_t lv = {.fname = where, .env = opts->env, .depth = opts->depth, .chain = opts->chain};
    /* The resource itself is its stack's, counted there: only what it
     * adds below counts here, against both limits. */
    int rc = w.memo ? count_resource(&w, &lv, "", type, type, props) : CV_ENOMEM;
    json_decref(w.memo);
    out->resources = lv.own;
    out->total = w.total;
    return rc;
}
