/*
 * template_params — the parameters section: declarations, the values users
 * give (strings from a command line or typed values from an environment
 * file), their conversion to the declared type and the resulting typed
 * values the rest of the template resolves against.
 *
 * Conversions follow Heat: a number parameter takes "42" and 42, a boolean
 * takes "yes" and 1, a comma_delimited_list takes "a, b" and ["a", "b"], a
 * json parameter takes a map or a string holding one. Values of hidden
 * parameters never appear in error messages.
 */
#include "cv__template_internal.h"
#include "cv_base.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *key;
    long since;
} param_keys[] = {
    {"type", CV__V20130523},      {"label", CV__V20130523},  {"description", CV__V20130523},
    {"default", CV__V20130523},   {"hidden", CV__V20130523}, {"constraints", CV__V20130523},
    {"immutable", CV__V20130523}, {"tags", CV__V20180302},
};

static const char *const param_types[] = {"string", "number", "boolean", "json",
                                          "comma_delimited_list"};

/* ---------------------------------------------------------------- conversions */

/* The float syntax Python's float() reads, after the sign: digits with an
 * optional fraction and exponent; no hexadecimal, "inf" or "nan". */
static bool decimal_syntax(const char *p)
{
    static const char digits[] = "0123456789";
    size_t mantissa = strspn(p, digits);
    p += mantissa;
    if (*p == '.') {
        size_t fraction = strspn(++p, digits);
        mantissa += fraction;
        p += fraction;
    }
    if (mantissa == 0)
        return false;
    if (*p == 'e' || *p == 'E') {
        p += 1 + (p[1] == '-' || p[1] == '+');
        size_t exponent = strspn(p, digits);
        if (exponent == 0)
            return false;
        p += exponent;
    }
    return *p == '\0';
}

/* Python's int() then float() on a string, blanks around allowed. */
static json_t *number_from_text(const char *s)
{
    char buf[128];
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    if (n == 0 || n >= sizeof(buf))
        return NULL;
    memcpy(buf, s, n);
    buf[n] = '\0';
    const char *p = buf + (buf[0] == '-' || buf[0] == '+');
    if (!decimal_syntax(p))
        return NULL;
    if (strspn(p, "0123456789") == strlen(p)) {
        errno = 0;
        long long i = strtoll(buf, NULL, 10);
        if (errno == 0)
            return json_integer(i);
    }
    double d = strtod(buf, NULL);
    return isfinite(d) ? json_real(d) : NULL;
}

json_t *cv__param_to_number(const json_t *v)
{
    if (json_is_number(v))
        return json_incref((json_t *)v);
    return json_is_string(v) ? number_from_text(json_string_value(v)) : NULL;
}

json_t *cv__param_to_string(const json_t *v)
{
    char num[64];
    if (json_is_string(v))
        return json_incref((json_t *)v);
    if (json_is_number(v)) {
        cv__fmt_number(v, num, sizeof(num));
        return json_string(num);
    }
    /* Python's str(True): Heat turns a YAML boolean into "True". */
    if (json_is_boolean(v))
        return json_string(json_is_true(v) ? "True" : "False");
    return NULL;
}

/* oslo's bool_from_string(strict=True), which Heat uses. */
json_t *cv__param_to_boolean(const json_t *v)
{
    static const char *const yes[] = {"1", "t", "true", "on", "y", "yes"};
    static const char *const no[] = {"0", "f", "false", "off", "n", "no"};
    if (json_is_boolean(v))
        return json_incref((json_t *)v);
    if (json_is_integer(v) && (json_integer_value(v) == 0 || json_integer_value(v) == 1))
        return json_boolean(json_integer_value(v));
    const char *s = json_string_value(v);
    if (!s)
        return NULL;
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        n--;
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strlen(yes[i]) == n && strncasecmp(s, yes[i], n) == 0)
            return json_true();
        if (strlen(no[i]) == n && strncasecmp(s, no[i], n) == 0)
            return json_false();
    }
    return NULL;
}

static json_t *split_commas(const char *s)
{
    json_t *list = json_array();
    while (list && *s) {
        const char *end = strchr(s, ',');
        size_t n = end ? (size_t)(end - s) : strlen(s);
        const char *item = s;
        size_t len = n;
        while (len && isspace((unsigned char)*item))
            item++, len--;
        while (len && isspace((unsigned char)item[len - 1]))
            len--;
        if (json_array_append_new(list, json_stringn(item, len)))
            return json_decref(list), NULL;
        s += n;
        if (*s == ',' && !*++s && json_array_append_new(list, json_string("")))
            return json_decref(list), NULL;
    }
    return list;
}

static json_t *to_list(const json_t *v)
{
    if (json_is_string(v))
        return split_commas(json_string_value(v));
    if (!json_is_array(v))
        return NULL;
    json_t *list = json_array();
    for (size_t i = 0; list && i < json_array_size(v); i++) {
        json_t *item = cv__param_to_string(json_array_get(v, i));
        if (!item || json_array_append_new(list, item))
            return json_decref(list), NULL;
    }
    return list;
}

static json_t *to_json(const json_t *v)
{
    if (json_is_object(v) || json_is_array(v))
        return json_incref((json_t *)v);
    const char *s = json_string_value(v);
    if (!s)
        return NULL;
    if (s[strspn(s, " \t\r\n")] == '\0')
        return json_object();
    json_t *parsed = json_loads(s, JSON_DECODE_ANY, NULL);
    if (json_is_object(parsed) || json_is_array(parsed))
        return parsed;
    json_decref(parsed);
    return NULL;
}

static json_t *convert(const char *type, const json_t *v, const char **rule)
{
    switch (type[0]) {
    case 's':
        *rule = "expected a string";
        return cv__param_to_string(v);
    case 'n':
        *rule = "expected a number";
        return cv__param_to_number(v);
    case 'b':
        *rule = "expected a boolean (true/false, yes/no, on/off, 1/0)";
        return cv__param_to_boolean(v);
    case 'c':
        *rule = "expected a comma-delimited string or a list of strings";
        return to_list(v);
    default:
        *rule = "expected a JSON map or list, or a string holding one";
        return to_json(v);
    }
}

/* ---------------------------------------------------------------- declarations */

bool cv_template_param_hidden(const json_t *decl)
{
    json_t *b = cv__param_to_boolean(json_object_get(decl, "hidden"));
    bool hidden = json_is_true(b);
    json_decref(b);
    return hidden;
}

void cv__param_shown(const json_t *v, bool hidden, char *out, size_t size)
{
    if (hidden)
        snprintf(out, size, "******");
    else
        cv__describe(v, out, size);
}

static int check_keys(const cv__tpl_ctx_t *ctx, const char *where, const json_t *def)
{
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)def, key, v)
    {
        size_t i = 0, n = sizeof(param_keys) / sizeof(param_keys[0]);
        while (i < n &&
               !(strcmp(param_keys[i].key, key) == 0 && ctx->version >= param_keys[i].since))
            i++;
        if (i == n)
            return cv__tpl_err(ctx, CV_EVALIDATE, where,
                               "unknown key \"%s\" (allowed: type, label, description, default, "
                               "hidden, constraints, immutable%s)",
                               key, ctx->version >= CV__V20180302 ? ", tags" : "");
    }
    return 0;
}

static int check_type(const cv__tpl_ctx_t *ctx, const char *where, const json_t *type)
{
    if (!type)
        return cv__tpl_err(ctx, CV_EVALIDATE, where, "a parameter needs a \"type\"");
    for (size_t i = 0; json_is_string(type) && i < sizeof(param_types) / sizeof(param_types[0]);
         i++)
        if (strcmp(param_types[i], json_string_value(type)) == 0)
            return 0;
    char shown[64];
    cv__describe(type, shown, sizeof(shown));
    return cv__tpl_err(ctx, CV_EVALIDATE, where,
                       "unknown type %s; must be string, number, boolean, json or "
                       "comma_delimited_list",
                       shown);
}

static int check_attrs(const cv__tpl_ctx_t *ctx, const char *where, const json_t *def)
{
    static const char *const strings[] = {"label", "description"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(def, strings[i]);
        if (v && !json_is_null(v) && !json_is_string(v))
            return cv__tpl_err(ctx, CV_EVALIDATE, where, "%s must be a string, got %s", strings[i],
                               cv__type_name(v));
    }
    static const char *const flags[] = {"hidden", "immutable"};
    for (size_t i = 0; i < 2; i++) {
        const json_t *v = json_object_get(def, flags[i]);
        json_t *b = v && !json_is_null(v) ? cv__param_to_boolean(v) : json_false();
        json_decref(b);
        if (!b)
            return cv__tpl_err(ctx, CV_EVALIDATE, where, "%s must be a boolean, got %s", flags[i],
                               cv__type_name(v));
    }
    const json_t *tags = json_object_get(def, "tags");
    bool ok = !tags || json_is_null(tags) || json_is_array(tags);
    for (size_t i = 0; json_is_array(tags) && i < json_array_size(tags); i++)
        if (!json_is_string(json_array_get(tags, i)))
            ok = false;
    if (!ok)
        return cv__tpl_err(ctx, CV_EVALIDATE, where, "tags must be a list of strings");
    return 0;
}

/* ---------------------------------------------------------------- values */

static bool is_hidden(const json_t *def)
{
    json_t *hidden = cv__param_to_boolean(json_object_get(def, "hidden"));
    bool yes = json_is_true(hidden);
    json_decref(hidden);
    return yes;
}

/* `v` converted to `type` and checked against the constraints; `where`
 * names it in errors ("parameters.size" or "parameters.size.default"). */
static json_t *typed_value(const cv__tpl_ctx_t *ctx, const char *param_path, const char *where,
                           const json_t *def, const json_t *v, int *rc)
{
    const char *type = json_string_value(json_object_get(def, "type"));
    bool hidden = is_hidden(def);
    const char *rule = "";
    json_t *typed = convert(type, v, &rule);
    if (!typed) {
        char shown[128];
        cv__param_shown(v, hidden, shown, sizeof(shown));
        *rc = cv__tpl_err(ctx, CV_EVALIDATE, where, "%s, got %s", rule, shown);
        return NULL;
    }
    *rc = cv__param_constraints(ctx, param_path, where, type, def, typed, hidden);
    if (*rc) {
        json_decref(typed);
        return NULL;
    }
    return typed;
}

/* Heat checks the default even when a value is given: a default that breaks
 * the template's own constraints is a bug in the template. */
static int one_param(const cv__tpl_ctx_t *ctx, const char *name, const json_t *def,
                     const json_t *given, cv_template_t *tpl)
{
    cv__path_t path;
    cv__path_init(&path, "parameters");
    cv__path_key(&path, name);
    size_t base = path.len;
    if (!json_is_object(def))
        return cv__tpl_err(ctx, CV_EVALIDATE, path.buf, "must be a map, got %s",
                           cv__type_name(def));
    int rc = check_keys(ctx, path.buf, def);
    rc = rc ? rc : check_type(ctx, path.buf, json_object_get(def, "type"));
    rc = rc ? rc : check_attrs(ctx, path.buf, def);
    const json_t *dflt = json_object_get(def, "default");
    json_t *dval = NULL, *gval = NULL;
    if (rc == 0 && dflt && !json_is_null(dflt)) {
        char param_path[sizeof(path.buf)];
        snprintf(param_path, sizeof(param_path), "%s", path.buf);
        cv__path_key(&path, "default");
        dval = typed_value(ctx, param_path, path.buf, def, dflt, &rc);
        cv__path_pop(&path, base);
    }
    if (rc == 0 && given && !json_is_null(given))
        gval = typed_value(ctx, path.buf, path.buf, def, given, &rc);
    if (rc == 0 && !gval && !dval && !ctx->opts.params_later)
        rc = cv__tpl_err(ctx, CV_EVALIDATE, path.buf, "no value given and no default");
    if (rc == 0 && !gval && !dval)
        return 0; /* params_later: the parent gives it once its properties resolve */
    if (rc == 0 && json_object_set(tpl->parameters, name, gval ? gval : dval))
        rc = CV_ENOMEM;
    if (rc == 0 && is_hidden(def) && json_array_append_new(tpl->hidden, json_string(name)))
        rc = CV_ENOMEM;
    json_decref(dval);
    json_decref(gval);
    return rc;
}

/* Heat's pseudo parameters: every template may read them, the engine gives
 * their values (they name the stack, which the template cannot know). */
static const char *const pseudo_params[] = {"OS::stack_name", "OS::stack_id", "OS::project_id",
                                            "OS::region"};

bool cv__tpl_param_pseudo(const char *name)
{
    for (size_t i = 0; i < sizeof(pseudo_params) / sizeof(pseudo_params[0]); i++)
        if (strcmp(pseudo_params[i], name) == 0)
            return true;
    return false;
}

/* A value given for a name the template does not declare: an error, unless
 * it is a pseudo parameter, which is kept as text. */
static int undeclared_value(const cv__tpl_ctx_t *ctx, const char *name, const json_t *v,
                            cv_template_t *tpl)
{
    if (!cv__tpl_param_pseudo(name))
        return cv__tpl_err(ctx, CV_EVALIDATE, "parameters",
                           "parameter \"%s\" is not defined in the template", name);
    json_t *text = cv__param_to_string(v);
    if (!text)
        return cv__tpl_err(ctx, CV_EVALIDATE, "parameters", "%s must be a string, got %s", name,
                           cv__type_name(v));
    return json_object_set_new(tpl->parameters, name, text) ? CV_ENOMEM : 0;
}

int cv__tpl_params(const cv__tpl_ctx_t *ctx, const json_t *values, cv_template_t *tpl)
{
    if (!(tpl->parameters = json_object()) || !(tpl->hidden = json_array()))
        return CV_ENOMEM;
    if (values && !json_is_object(values))
        return cv__tpl_err(ctx, CV_EVALIDATE, "parameters",
                           "parameter values must be a map, got %s", cv__type_name(values));
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)values, name, v)
    {
        int rc = json_object_get(ctx->param_defs, name) ? 0 : undeclared_value(ctx, name, v, tpl);
        if (rc)
            return rc;
    }
    /* Each parameter's problem is reported (template_errors.c). */
    cv__errs_t errs;
    cv__errs_init(&errs, ctx);
    json_object_foreach((json_t *)ctx->param_defs, name, v)
    {
        if (cv__errs_take(&errs, one_param(ctx, name, v, json_object_get(values, name), tpl)))
            break; /* out of memory */
    }
    return cv__errs_end(&errs);
}
