/*
 * template_parse — a HOT template from text or a jansson tree: the
 * top-level sections (version, description, parameter_groups, outputs),
 * the order in which the rest is validated, and the template's lifetime.
 *
 * Validation reports every problem it finds in parts that do not depend
 * on each other (each parameter; each resource and output), one message a
 * line (template_errors.c); within one of them, and in the sections the
 * others depend on (version, sections, conditions), it stops at the first:
 * a second message produced from a half-understood definition is more
 * often noise than help.
 */
#include "cv__template_internal.h"
#include "cv_base.h"

#include <stdlib.h>
#include <string.h>

/* The template the caller sees, plus a name index so that resource lookup
 * stays O(1) for templates of many thousands of resources. */
typedef struct tpl_impl {
    cv_template_t pub;
    json_t *index; /* resource name -> position in pub.resources */
} tpl_impl_t;

/* ---------------------------------------------------------------- version */

static const struct {
    const char *name;
    const char *date;
} versions[] = {
    {"2013-05-23", "2013-05-23"}, {"2014-10-16", "2014-10-16"}, {"2015-04-30", "2015-04-30"},
    {"2015-10-15", "2015-10-15"}, {"2016-04-08", "2016-04-08"}, {"2016-10-14", "2016-10-14"},
    {"2017-02-24", "2017-02-24"}, {"2017-09-01", "2017-09-01"}, {"2018-03-02", "2018-03-02"},
    {"2018-08-31", "2018-08-31"}, {"2021-04-16", "2021-04-16"}, {"newton", "2016-10-14"},
    {"ocata", "2017-02-24"},      {"pike", "2017-09-01"},       {"queens", "2018-03-02"},
    {"rocky", "2018-08-31"},      {"wallaby", "2021-04-16"},
};

/* Heat's list of valid versions: its template classes' names, sorted as
 * Python sorts strings (dates, then release names). */
#define VERSION_LIST                                                                               \
    "2013-05-23, 2014-10-16, 2015-04-30, 2015-10-15, 2016-04-08, 2016-10-14, 2017-02-24, "         \
    "2017-09-01, 2018-03-02, 2018-08-31, 2021-04-16, newton, ocata, pike, queens, rocky, wallaby"

static long date_number(const char *date)
{
    return strtol(date, NULL, 10) * 10000 + strtol(date + 5, NULL, 10) * 100 +
           strtol(date + 8, NULL, 10);
}

static int parse_version(cv__tpl_ctx_t *ctx, const json_t *root, cv_template_t *tpl)
{
    const json_t *v = json_object_get(root, "heat_template_version");
    if (!v)
        return cv__tpl_err(ctx, CV_EVALIDATE, "heat_template_version",
                           "missing: a HOT template must say which version it is written in");
    for (size_t i = 0; json_is_string(v) && i < sizeof(versions) / sizeof(versions[0]); i++) {
        if (strcmp(json_string_value(v), versions[i].name) == 0) {
            ctx->version = date_number(versions[i].date);
            tpl->version = strdup(versions[i].date);
            return tpl->version ? 0 : CV_ENOMEM;
        }
    }
    /* heat/engine/template.py get_version: a version that is not a string
     * is no version; get_template_class: an unknown one lists the valid. */
    if (!json_is_string(v))
        return cv__tpl_err(ctx, CV_EVALIDATE, "heat_template_version",
                           "The template version is invalid: Template version was not provided");
    return cv__tpl_err(ctx, CV_EVALIDATE, "heat_template_version",
                       "The template version is invalid: \"heat_template_version: %s\". "
                       "\"heat_template_version\" should be one of: " VERSION_LIST,
                       json_string_value(v));
}

/* ---------------------------------------------------------------- sections */

static int check_sections(const cv__tpl_ctx_t *ctx, const json_t *root)
{
    static const char *const known[] = {"heat_template_version",
                                        "description",
                                        "parameter_groups",
                                        "parameters",
                                        "resources",
                                        "outputs",
                                        "conditions"};
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)root, key, value)
    {
        size_t i = 0;
        while (i < sizeof(known) / sizeof(known[0]) && strcmp(known[i], key) != 0)
            i++;
        if (i == sizeof(known) / sizeof(known[0]))
            return cv__tpl_err(ctx, CV_EVALIDATE, key,
                               "unknown top-level section \"%s\" (allowed: heat_template_version, "
                               "description, parameter_groups, parameters, resources, outputs%s)",
                               key, ctx->version >= CV__V20161014 ? ", conditions" : "");
    }
    /* Heat's Template.validate: a section outside the version's SECTIONS
     * (conditions came with 2016-10-14). */
    const json_t *conditions = json_object_get(root, "conditions");
    if (conditions && ctx->version < CV__V20161014)
        return cv__tpl_err(ctx, CV_EVALIDATE, "conditions", CV__HOT_SECTION_MSG, "conditions");
    return 0;
}

/* A section that may be absent or empty (YAML "resources:" is null). */
static int section(const cv__tpl_ctx_t *ctx, const json_t *root, const char *name, json_type type,
                   const json_t **out)
{
    const json_t *v = json_object_get(root, name);
    *out = v && !json_is_null(v) ? v : NULL;
    if (*out && json_typeof(*out) != type)
        return cv__tpl_err(ctx, CV_EVALIDATE, name, "must be %s, got %s",
                           type == JSON_OBJECT ? "a map" : "a list", cv__type_name(*out));
    return 0;
}

static int parse_description(const cv__tpl_ctx_t *ctx, const json_t *root, cv_template_t *tpl)
{
    const json_t *d = json_object_get(root, "description");
    if (d && !json_is_null(d) && !json_is_string(d))
        return cv__tpl_err(ctx, CV_EVALIDATE, "description", "must be a string, got %s",
                           cv__type_name(d));
    tpl->description = strdup(json_is_string(d) ? json_string_value(d) : "");
    return tpl->description ? 0 : CV_ENOMEM;
}

/* Heat's rules: each group lists declared parameters, none in two groups. */
static int check_group(const cv__tpl_ctx_t *ctx, cv__path_t *path, const json_t *group,
                       json_t *seen)
{
    if (!json_is_object(group))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "must be a map, got %s",
                           cv__type_name(group));
    const json_t *names = json_object_get(group, "parameters");
    if (!json_is_array(names))
        return cv__tpl_err(ctx, CV_EVALIDATE, path->buf, "needs a list of \"parameters\"");
    for (size_t i = 0; i < json_array_size(names); i++) {
        const char *name = json_string_value(json_array_get(names, i));
        if (!name || !json_object_get(ctx->param_defs, name))
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                               "parameter %s is not defined in the parameters section",
                               name ? name : "(not a string)");
        if (json_object_get(seen, name))
            return cv__tpl_err(ctx, CV_EVALIDATE, path->buf,
                               "parameter %s is in more than one parameter group", name);
        if (json_object_set_new(seen, name, json_true()))
            return CV_ENOMEM;
    }
    return 0;
}

static int check_groups(const cv__tpl_ctx_t *ctx, const json_t *root)
{
    const json_t *groups;
    int rc = section(ctx, root, "parameter_groups", JSON_ARRAY, &groups);
    json_t *seen = json_object();
    if (!seen)
        return CV_ENOMEM;
    cv__path_t path;
    cv__path_init(&path, "parameter_groups");
    for (size_t i = 0; rc == 0 && groups && i < json_array_size(groups); i++) {
        size_t mark = cv__path_index(&path, i);
        rc = check_group(ctx, &path, json_array_get(groups, i), seen);
        cv__path_pop(&path, mark);
    }
    json_decref(seen);
    return rc;
}

/* ---------------------------------------------------------------- outputs */

static int check_output_keys(const cv__tpl_ctx_t *ctx, const char *where, const json_t *def)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)def, key, v)
    {
        bool conditional = strcmp(key, "condition") == 0 && ctx->version >= CV__V20161014;
        if (!conditional && strcmp(key, "value") != 0 && strcmp(key, "description") != 0)
            return cv__tpl_err(
                ctx, CV_EVALIDATE, where, "unknown key \"%s\" (allowed: value, %s)", key,
                ctx->version >= CV__V20161014 ? "description, condition" : "description");
    }
    const json_t *desc = json_object_get(def, "description");
    if (desc && !json_is_null(desc) && !json_is_string(desc))
        return cv__tpl_err(ctx, CV_EVALIDATE, where, "description must be a string, got %s",
                           cv__type_name(desc));
    if (!json_object_get(def, "value"))
        return cv__tpl_err(ctx, CV_EVALIDATE, where, "an output needs a \"value\"");
    return 0;
}

static int parse_output(const cv__tpl_ctx_t *ctx, const char *name, const json_t *def,
                        json_t *outputs)
{
    cv__path_t path;
    cv__path_init(&path, "outputs");
    cv__path_key(&path, name);
    if (!json_is_object(def))
        return cv__tpl_err(ctx, CV_EVALIDATE, path.buf, "must be a map, got %s",
                           cv__type_name(def));
    int rc = check_output_keys(ctx, path.buf, def);
    const json_t *value = json_object_get(def, "value");
    if (rc == 0) {
        cv__path_key(&path, "value");
        rc = cv__tpl_check_intrinsics(ctx, value, &path, NULL);
    }
    if (rc)
        return rc;
    const json_t *desc = json_object_get(def, "description");
    json_t *out = json_pack("{s:o,s:s}", "value", json_deep_copy(value), "description",
                            json_is_string(desc) ? json_string_value(desc) : "");
    return !out || json_object_set_new(outputs, name, out) ? CV_ENOMEM : 0;
}

/* Each output's problem goes into `errs`; CV_ENOMEM stops. */
static int parse_outputs(const cv__tpl_ctx_t *ctx, const json_t *outputs, cv_template_t *tpl,
                         cv__errs_t *errs)
{
    int rc = 0;
    if (!(tpl->outputs = json_object()))
        rc = CV_ENOMEM;
    const char *name;
    const json_t *def;
    json_object_foreach((json_t *)outputs, name, def)
    {
        if (rc == 0)
            rc = cv__errs_take(errs, parse_output(ctx, name, def, tpl->outputs));
    }
    return rc;
}

/* The resources and the outputs, every problem of each reported
 * (template_errors.c); the cycles between resources once they are sound. */
static int parse_body(const cv__tpl_ctx_t *ctx, const json_t *outputs, cv_template_t *tpl)
{
    cv__errs_t errs;
    cv__errs_init(&errs, ctx);
    int rc = cv__tpl_resources(ctx, tpl, &errs);
    rc = rc ? rc : parse_outputs(ctx, outputs, tpl, &errs);
    if (rc == 0 && errs.msgs.n == 0)
        rc = cv__errs_take(&errs, cv__tpl_check_cycles(ctx, tpl));
    int found = cv__errs_end(&errs);
    return rc ? rc : found;
}

/* ---------------------------------------------------------------- the template */

static int build_index(tpl_impl_t *impl)
{
    if (!(impl->index = json_object()))
        return CV_ENOMEM;
    for (size_t i = 0; i < impl->pub.nresources; i++)
        if (json_object_set_new(impl->index, impl->pub.resources[i].name,
                                json_integer((json_int_t)i)))
            return CV_ENOMEM;
    return 0;
}

/* The sections in dependency order: parameters before anything that may
 * name them, every resource before the references between them. */
static int parse_all(cv__tpl_ctx_t *ctx, const json_t *root, const json_t *param_values,
                     tpl_impl_t *impl)
{
    cv_template_t *tpl = &impl->pub;
    const json_t *params, *resources, *outputs;
    int rc = parse_version(ctx, root, tpl);
    rc = rc ? rc : check_sections(ctx, root);
    rc = rc ? rc : parse_description(ctx, root, tpl);
    rc = rc ? rc : section(ctx, root, "parameters", JSON_OBJECT, &params);
    rc = rc ? rc : section(ctx, root, "resources", JSON_OBJECT, &resources);
    rc = rc ? rc : section(ctx, root, "outputs", JSON_OBJECT, &outputs);
    if (rc)
        return rc;
    json_t *empty = json_object();
    if (!empty)
        return CV_ENOMEM;
    ctx->param_defs = params ? params : empty;
    ctx->resources = empty;
    /* What runs: the resources and outputs as the conditions leave them. */
    json_t *kept_resources = NULL, *kept_outputs = NULL;
    rc = cv__tpl_params(ctx, param_values, tpl);
    rc = rc ? rc : check_groups(ctx, root);
    rc = rc ? rc : cv__tpl_conditions(ctx, root, tpl, &kept_resources, &kept_outputs);
    if (rc == 0)
        ctx->resources = kept_resources;
    rc = rc ? rc : parse_body(ctx, kept_outputs, tpl);
    rc = rc ? rc : build_index(impl);
    json_decref(kept_resources);
    json_decref(kept_outputs);
    json_decref(empty);
    return rc;
}

int cv_template_from_json(const json_t *root, const char *fname, const json_t *param_values,
                          cv_template_t **out, char *errstr, size_t errstr_size)
{
    return cv_template_from_json_opts(root, fname, param_values, NULL, out, errstr, errstr_size);
}

int cv_template_from_json_opts(const json_t *root, const char *fname, const json_t *param_values,
                               const cv_tpl_opts_t *opts, cv_template_t **out, char *errstr,
                               size_t errstr_size)
{
    cv__tpl_ctx_t ctx = {
        .fname = fname ? fname : "-", .errstr = errstr, .errstr_size = errstr_size};
    if (opts)
        ctx.opts = *opts;
    if (ctx.opts.max_depth <= 0)
        ctx.opts.max_depth = CV_TEMPLATE_MAX_DEPTH;
    /* The outermost template is the first its nested templates may not
     * include again. */
    cv_tpl_chain_t self = {.label = ctx.fname, .tree = root};
    if (!ctx.opts.chain)
        ctx.opts.chain = &self;
    *out = NULL;
    if (!json_is_object(root))
        return cv__tpl_err(&ctx, CV_EVALIDATE, NULL, "a template must be a map, got %s",
                           root ? cv__type_name(root) : "nothing");
    tpl_impl_t *impl = calloc(1, sizeof(*impl));
    if (!impl)
        return cv__tpl_err(&ctx, CV_ENOMEM, NULL, "out of memory");
    int rc = parse_all(&ctx, root, param_values, impl);
    if (rc == CV_ENOMEM)
        cv__tpl_err(&ctx, CV_ENOMEM, NULL, "out of memory");
    if (rc) {
        cv_template_free(&impl->pub);
        return rc;
    }
    *out = &impl->pub;
    return 0;
}

int cv_template_parse(const char *text, size_t len, const char *fname, const json_t *param_values,
                      cv_template_t **out, char *errstr, size_t errstr_size)
{
    *out = NULL;
    json_t *root = cv_yaml_load(text, len, fname ? fname : "-", errstr, errstr_size);
    if (!root)
        return CV_EPARSE;
    int rc = cv_template_from_json(root, fname, param_values, out, errstr, errstr_size);
    json_decref(root);
    return rc;
}

void cv_template_free(cv_template_t *tpl)
{
    if (!tpl)
        return;
    tpl_impl_t *impl = (tpl_impl_t *)tpl;
    for (size_t i = 0; i < tpl->nresources; i++) {
        cv_tpl_resource_t *r = &tpl->resources[i];
        free(r->name);
        free(r->type);
        free(r->declared_type);
        json_decref(r->properties);
        json_decref(r->metadata);
        json_decref(r->update_policy);
        free(r->deletion_policy);
        json_decref(r->external_id);
        for (size_t j = 0; j < r->ndepends; j++)
            free(r->depends[j]);
        free(r->depends);
    }
    free(tpl->resources);
    free(tpl->version);
    free(tpl->description);
    json_decref(tpl->parameters);
    json_decref(tpl->hidden);
    json_decref(tpl->outputs);
    json_decref(impl->index);
    free(impl);
}

const cv_tpl_resource_t *cv_template_resource(const cv_template_t *tpl, const char *name)
{
    const tpl_impl_t *impl = (const tpl_impl_t *)tpl;
    const json_t *at = json_object_get(impl->index, name);
    return at ? &tpl->resources[json_integer_value(at)] : NULL;
}
