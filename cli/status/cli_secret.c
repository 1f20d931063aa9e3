/*
 * What a stack's readers hide, and the masking (cli_secret.h).
 */
#include "cli_secret.h"

#include "cli_output.h"

#include "cv_base.h"
#include "cv_hot.h"

#include <stdlib.h>
#include <string.h>

#define TYPE_MAX 512
#define STARTS_BITS 20 /* the bitmap of cli_secrets_t.starts: 128 KiB */
#define STARTS_BYTES (1u << (STARTS_BITS - 3))

void cli_secrets_init(cli_secrets_t *s)
{
    s->values = json_array();
    s->props = json_object();
    s->types = json_object();
    s->groups = json_object();
    s->exact = json_object();
    s->starts = calloc(STARTS_BYTES, 1); /* NULL: every text is searched */
}

void cli_secrets_free(cli_secrets_t *s)
{
    json_decref(s->values);
    json_decref(s->props);
    json_decref(s->types);
    json_decref(s->groups);
    json_decref(s->exact);
    free(s->starts);
    memset(s, 0, sizeof(*s));
}

/* ------------------------------------------------------------------------ */
/* Secret values                                                            */
/* ------------------------------------------------------------------------ */

static unsigned start_hash(const char *p)
{
    unsigned h =
        (unsigned char)p[0] * 65599u * 65599u + (unsigned char)p[1] * 65599u + (unsigned char)p[2];
    return (h ^ (h >> STARTS_BITS)) & ((1u << STARTS_BITS) - 1);
}

/* Marks the beginning of `secret` in the bitmap (cli_secrets_t.starts). */
static void note_start(cli_secrets_t *s, const char *secret)
{
    if (s->starts) {
        unsigned h = start_hash(secret);
        s->starts[h >> 3] |= (unsigned char)(1u << (h & 7));
    }
}

/* Kept longest first, so that a secret holding another is masked whole. */
void cli_secret_add(cli_secrets_t *s, const char *text)
{
    if (!text || !text[0] || json_object_get(s->exact, text))
        return;
    size_t len = strlen(text), at = json_array_size(s->values);
    for (size_t i = 0; i < json_array_size(s->values) && at == json_array_size(s->values); i++)
        if (strlen(json_string_value(json_array_get(s->values, i))) < len)
            at = i;
    json_array_insert_new(s->values, at, json_string(text));
    json_object_set_new(s->exact, text, json_true());
    if (len >= CLI_SECRET_EMBEDDED_MIN)
        note_start(s, text);
}

/* Every scalar inside `v` as text: a list's items and a map's values
 * (a json or comma_delimited_list parameter) are secrets one by one. */
static void add_value(cli_secrets_t *s, const json_t *v)
{
    size_t i;
    const char *key;
    json_t *item;
    if (json_is_string(v)) {
        cli_secret_add(s, json_string_value(v));
    } else if (json_is_number(v)) {
        char *text = json_dumps(v, JSON_ENCODE_ANY);
        cli_secret_add(s, text);
        free(text);
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, item)
        {
            add_value(s, item);
        }
    } else if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, item)
        {
            add_value(s, item);
        }
    }
}

bool cli_secret_type_records(const char *type)
{
    const cv_rtype_t *t = cv_rtype_lookup(type);
    return t && (cv_rtype_attr_sensitive(t, "show") || t->sensitive_reference);
}

void cli_secret_learn_attrs(cli_secrets_t *s, const char *type, const json_t *attrs)
{
    const cv_rtype_t *t = cv_rtype_lookup(type);
    const char *name;
    json_t *v;
    json_object_foreach((json_t *)attrs, name, v)
    {
        if (strcmp(name, "show") != 0 && cv_rtype_attr_sensitive(t, name))
            add_value(s, v);
    }
    if (t && t->sensitive_reference)
        cli_secret_add(s, cv_rtype_reference_id(type, "", "", attrs));
}

/* ------------------------------------------------------------------------ */
/* Which properties are secret                                              */
/* ------------------------------------------------------------------------ */

static bool hidden_param(const json_t *tree, const char *name)
{
    const json_t *decl = name ? json_object_get(json_object_get(tree, "parameters"), name) : NULL;
    return json_is_object(decl) && cv_template_param_hidden(decl);
}

static const cv_rtype_t *type_of(const cli_secrets_t *s, const char *resource)
{
    const char *type = json_string_value(json_object_get(s->types, resource));
    return type ? cv_rtype_lookup(type) : NULL;
}

/* The first item of a function's argument: the argument itself when a
 * string, else the list's first string. */
static const char *first_name(const json_t *arg)
{
    return json_is_string(arg) ? json_string_value(arg) : json_string_value(json_array_get(arg, 0));
}

/* Whether one intrinsic call `fn: arg` reads a secret by itself. */
static bool call_reads_secret(const cli_secrets_t *s, const json_t *tree, const char *fn,
                              const json_t *arg)
{
    const char *name = first_name(arg);
    if (!name)
        return false;
    if (strcmp(fn, "get_param") == 0)
        return hidden_param(tree, name);
    if (strcmp(fn, "get_attr") == 0 || strcmp(fn, "Fn::GetAtt") == 0) {
        const char *attr = json_string_value(json_array_get(arg, 1));
        return cli_secret_group(s, name) ||
               (attr && cv_rtype_attr_sensitive(type_of(s, name), attr));
    }
    bool reference = strcmp(fn, "get_resource") == 0 || strcmp(fn, "Ref") == 0;
    const cv_rtype_t *t = reference ? type_of(s, name) : NULL;
    return (t && t->sensitive_reference) || (strcmp(fn, "Ref") == 0 && hidden_param(tree, name));
}

/* Whether the expression `v` reads a secret anywhere inside. */
static bool reads_secret(const cli_secrets_t *s, const json_t *tree, const json_t *v)
{
    size_t i;
    const char *key;
    json_t *item;
    if (json_is_array(v)) {
        json_array_foreach(v, i, item)
        {
            if (reads_secret(s, tree, item))
                return true;
        }
    } else if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, item)
        {
            if (call_reads_secret(s, tree, key, item) || reads_secret(s, tree, item))
                return true;
        }
    }
    return false;
}

/* Whether a member type `type` (registry applied) keeps secrets. */
static bool member_keeps_secrets(const json_t *registry, const json_t *type)
{
    char resolved[TYPE_MAX];
    if (!json_is_string(type))
        return false;
    cv_env_resolve_type(registry, json_string_value(type), "", resolved, sizeof(resolved), NULL);
    return cli_secret_type_records(resolved);
}

/* Whether the group `res` of type `type` has members that keep secrets:
 * a ResourceGroup's resource_def, an AutoScalingGroup's resource, a
 * ResourceChain's resources. */
static bool group_keeps_secrets(const json_t *registry, const char *type, const json_t *res)
{
    const json_t *props = json_object_get(res, "properties");
    if (strcmp(type, "OS::Heat::ResourceGroup") == 0)
        return member_keeps_secrets(
            registry, json_object_get(json_object_get(props, "resource_def"), "type"));
    if (strcmp(type, "OS::Heat::AutoScalingGroup") == 0)
        return member_keeps_secrets(registry,
                                    json_object_get(json_object_get(props, "resource"), "type"));
    if (strcmp(type, "OS::Heat::ResourceChain") != 0)
        return false;
    size_t i;
    json_t *member;
    json_array_foreach(json_object_get(props, "resources"), i, member)
    {
        if (member_keeps_secrets(registry, member))
            return true;
    }
    return false;
}

static void learn_types(cli_secrets_t *s, const json_t *resources, const json_t *env)
{
    const json_t *registry = json_object_get(env, "resource_registry");
    const char *name;
    json_t *res;
    json_object_foreach((json_t *)resources, name, res)
    {
        const char *type = json_string_value(json_object_get(res, "type"));
        char resolved[TYPE_MAX];
        if (!type)
            continue;
        cv_env_resolve_type(registry, type, name, resolved, sizeof(resolved), NULL);
        json_object_set_new(s->types, name, json_string(resolved));
        if (group_keeps_secrets(registry, resolved, res))
            json_object_set_new(s->groups, name, json_true());
    }
}

static void learn_props(cli_secrets_t *s, const json_t *tree, const json_t *resources)
{
    const char *name, *prop;
    json_t *res, *v;
    json_object_foreach((json_t *)resources, name, res)
    {
        json_t *secret = json_array();
        const cv_rtype_t *t = type_of(s, name);
        json_object_foreach(json_object_get(res, "properties"), prop, v)
        {
            if (cv_rtype_prop_sensitive(t, prop) || reads_secret(s, tree, v))
                json_array_append_new(secret, json_string(prop));
        }
        json_object_set_new(s->props, name, secret);
    }
}

void cli_secret_learn_def(cli_secrets_t *s, const json_t *tree, const json_t *params,
                          const json_t *env, bool own)
{
    const char *name;
    json_t *decl;
    json_object_foreach(json_object_get(tree, "parameters"), name, decl)
    {
        if (!json_is_object(decl) || !cv_template_param_hidden(decl))
            continue;
        const json_t *v = json_object_get(params, name);
        add_value(s, v ? v : json_object_get(decl, "default"));
    }
    const json_t *resources = json_object_get(tree, "resources");
    if (own && json_is_object(resources)) {
        learn_types(s, resources, env);
        learn_props(s, tree, resources);
    }
}

/* ------------------------------------------------------------------------ */
/* Masking                                                                  */
/* ------------------------------------------------------------------------ */

static bool is_secret(const cli_secrets_t *s, const char *text)
{
    return json_object_get(s->exact, text) != NULL;
}

/* Whether `text` may hold a secret long enough to be masked inside it. */
static bool may_hold(const cli_secrets_t *s, const char *text)
{
    if (!s->starts)
        return true;
    size_t len = strlen(text);
    for (size_t i = 0; i + CLI_SECRET_EMBEDDED_MIN <= len; i++) {
        unsigned h = start_hash(text + i);
        if (s->starts[h >> 3] & (1u << (h & 7)))
            return true;
    }
    return false;
}

/* `text` with the occurrences of `secret` replaced: a new string, or
 * NULL when it holds none. */
static char *replace_all(const char *text, const char *secret)
{
    size_t n = 0, slen = strlen(secret), mlen = strlen(CLI_SECRET_MASK);
    for (const char *p = strstr(text, secret); p; p = strstr(p + slen, secret))
        n++;
    if (n == 0)
        return NULL;
    char *out = malloc(strlen(text) + n * mlen + 1), *o = out;
    if (!out)
        return NULL;
    const char *p = text, *hit;
    while ((hit = strstr(p, secret))) {
        memcpy(o, p, (size_t)(hit - p));
        o += hit - p;
        memcpy(o, CLI_SECRET_MASK, mlen);
        o += mlen;
        p = hit + slen;
    }
    strcpy(o, p);
    return out;
}

char *cli_secret_mask_text(const cli_secrets_t *s, const char *text)
{
    if (is_secret(s, text))
        return strdup(CLI_SECRET_MASK);
    if (!may_hold(s, text))
        return strdup(text);
    char *out = strdup(text);
    for (size_t i = 0; out && i < json_array_size(s->values); i++) {
        const char *secret = json_string_value(json_array_get(s->values, i));
        char *next = strlen(secret) >= CLI_SECRET_EMBEDDED_MIN ? replace_all(out, secret) : NULL;
        if (next) {
            free(out);
            out = next;
        }
    }
    return out;
}

json_t *cli_secret_mask(const cli_secrets_t *s, const json_t *v)
{
    size_t i;
    const char *key;
    json_t *item, *out;
    if (json_is_string(v)) {
        char *text = cli_secret_mask_text(s, json_string_value(v));
        out = json_string(text ? text : CLI_SECRET_MASK);
        free(text);
        return out;
    }
    if (json_is_number(v)) {
        char *text = json_dumps(v, JSON_ENCODE_ANY);
        bool secret = text && is_secret(s, text);
        free(text);
        return secret ? json_string(CLI_SECRET_MASK) : json_incref((json_t *)v);
    }
    if (json_is_array(v)) {
        out = json_array();
        json_array_foreach(v, i, item)
        {
            json_array_append_new(out, cli_secret_mask(s, item));
        }
        return out;
    }
    if (json_is_object(v)) {
        out = json_object();
        json_object_foreach((json_t *)v, key, item)
        {
            json_object_set_new(out, key, cli_secret_mask(s, item));
        }
        return out;
    }
    return v ? json_incref((json_t *)v) : NULL;
}

static bool listed(const json_t *names, const char *name)
{
    for (size_t i = 0; i < json_array_size(names); i++)
        if (strcmp(json_string_value(json_array_get(names, i)), name) == 0)
            return true;
    return false;
}

json_t *cli_secret_mask_props(const cli_secrets_t *s, const char *resource, const json_t *props)
{
    if (!json_is_object(props))
        return cli_secret_mask(s, props);
    const json_t *secret = json_object_get(s->props, resource);
    json_t *out = json_object(), *v;
    const char *name;
    json_object_foreach((json_t *)props, name, v)
    {
        json_object_set_new(
            out, name, listed(secret, name) ? json_string(CLI_SECRET_MASK) : cli_secret_mask(s, v));
    }
    return out;
}

json_t *cli_secret_mask_attrs(const cli_secrets_t *s, const char *type, const json_t *attrs)
{
    if (!json_is_object(attrs))
        return cli_secret_mask(s, attrs);
    const cv_rtype_t *t = cv_rtype_lookup(type);
    json_t *out = json_object(), *v;
    const char *name;
    json_object_foreach((json_t *)attrs, name, v)
    {
        if (strcmp(name, "show") == 0)
            json_object_set_new(out, name, cli_secret_mask_attrs(s, type, v));
        else if (cv_rtype_attr_sensitive(t, name))
            json_object_set_new(out, name, json_string(CLI_SECRET_MASK));
        else
            json_object_set_new(out, name, cli_secret_mask(s, v));
    }
    return out;
}

bool cli_secret_group(const cli_secrets_t *s, const char *resource)
{
    return resource && json_is_true(json_object_get(s->groups, resource));
}

/* A map of attributes with every value CLI_SECRET_MASK. */
static json_t *mask_every_value(const json_t *attrs)
{
    if (!json_is_object(attrs))
        return json_string(CLI_SECRET_MASK);
    json_t *out = json_object(), *v;
    const char *name;
    json_object_foreach((json_t *)attrs, name, v)
    {
        json_object_set_new(out, name, json_string(CLI_SECRET_MASK));
    }
    return out;
}

static void replace_field(json_t *doc, const char *field, json_t *masked)
{
    if (masked)
        json_object_set_new(doc, field, masked);
}

void cli_secret_mask_resource(const cli_secrets_t *s, const char *resource, json_t *doc)
{
    const char *type = json_string_value(json_object_get(doc, "type"));
    json_t *v;
    if ((v = json_object_get(doc, "properties")))
        replace_field(doc, "properties", cli_secret_mask_props(s, resource, v));
    if ((v = json_object_get(doc, "attributes")))
        replace_field(doc, "attributes",
                      cli_secret_group(s, resource)
                          ? mask_every_value(v)
                          : cli_secret_mask_attrs(s, type ? type : "", v));
    static const char *const by_value[] = {"data", "reason", "physical_id"};
    for (size_t i = 0; i < sizeof(by_value) / sizeof(by_value[0]); i++)
        if ((v = json_object_get(doc, by_value[i])))
            replace_field(doc, by_value[i], cli_secret_mask(s, v));
}

/* Python's str() of a value Heat's Parameter holds: a string as is, a
 * number as Python writes it, a boolean "True"/"False"; a list item (of a
 * comma_delimited_list) likewise. NULL for anything else. */
static char *py_str(const json_t *v)
{
    char num[64];
    if (json_is_string(v))
        return strdup(json_string_value(v));
    if (json_is_boolean(v))
        return strdup(json_is_true(v) ? "True" : "False");
    if (!json_is_number(v))
        return NULL;
    cv_format_number(v, num, sizeof(num));
    return strdup(num);
}

/* CommaDelimitedListParam._value_as_text: ",".join(value). */
static char *joined(const json_t *list)
{
    cv_buf_t b = {0};
    size_t i;
    json_t *item;
    json_array_foreach(list, i, item)
    {
        char *text = py_str(item);
        cv_buf_printf(&b, "%s%s", i ? "," : "", text ? text : "");
        free(text);
    }
    return cv_buf_take(&b);
}

/* One parameter's value as Heat's stack show writes it (Parameter.__str__),
 * by its declared type; a new JSON string. */
static json_t *param_text(const json_t *decl, const json_t *v)
{
    const char *type = json_string_value(json_object_get(decl, "type"));
    char *text = NULL;
    if (type && strcmp(type, "comma_delimited_list") == 0 && json_is_array(v))
        text = joined(v);
    else if (json_is_object(v) || json_is_array(v))
        text = cli_py_json_dumps(v);
    else
        text = py_str(v);
    json_t *out = json_string(text ? text : "");
    free(text);
    return out;
}

json_t *cli_secret_show_params(const json_t *tree, const json_t *params, const char *stack_id,
                               const char *stack_name, bool show_hidden)
{
    const json_t *decls = json_object_get(tree, "parameters");
    json_t *out = json_object(), *v;
    const char *name;
    json_object_foreach((json_t *)params, name, v)
    {
        if (!show_hidden && hidden_param(tree, name))
            json_object_set_new(out, name, json_string(CLI_SECRET_MASK));
        else
            json_object_set_new(out, name, param_text(json_object_get(decls, name), v));
    }
    /* HOTParameters._pseudo_parameters: what Heat lists beside them. */
    json_object_set_new(out, "OS::stack_id", json_string(stack_id));
    json_object_set_new(out, "OS::project_id", json_string(""));
    json_object_set_new(out, "OS::stack_name", json_string(stack_name));
    return out;
}

json_t *cli_secret_mask_params(const json_t *tree, const json_t *params)
{
    json_t *out = json_object(), *v;
    const char *name;
    json_object_foreach((json_t *)params, name, v)
    {
        json_object_set_new(
            out, name, hidden_param(tree, name) ? json_string(CLI_SECRET_MASK) : json_incref(v));
    }
    return out;
}

json_t *cli_secret_mask_template(const cli_secrets_t *s, const json_t *tree)
{
    json_t *copy = json_deep_copy(tree), *decl;
    const char *name;
    json_object_foreach(json_object_get(copy, "parameters"), name, decl)
    {
        if (json_is_object(decl) && cv_template_param_hidden(decl) &&
            json_object_get(decl, "default"))
            json_object_set_new(decl, "default", json_string(CLI_SECRET_MASK));
    }
    json_t *out = cli_secret_mask(s, copy);
    json_decref(copy);
    return out;
}
