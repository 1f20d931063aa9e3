/*
 * param_constraints — Heat's parameter constraints: range, length, modulo,
 * allowed_values, allowed_pattern and custom_constraint (accepted, not
 * checked: its validators live in OpenStack services we do not talk to).
 *
 * A constraint's own definition is checked as well as the value, so a
 * broken constraint fails the template rather than passing every value.
 * When a constraint has a `description`, that is the message a violation
 * shows, as in Heat: template authors use it to explain the rule.
 */
#include "cv__template_internal.h"
#include "cv_base.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct check {
    const cv__tpl_ctx_t *ctx;
    const char *cpath; /* the constraint: "parameters.size.constraints[0]" */
    const char *where; /* the value: "parameters.size" */
    const char *type;  /* the parameter's type */
    const json_t *value;
    bool hidden;
    const char *description;
} check_t;

static int bad_def(const check_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int violated(const check_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad_def(const check_t *c, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cv__tpl_err(c->ctx, CV_EVALIDATE, c->cpath, "%s", msg);
}

static int violated(const check_t *c, const char *fmt, ...)
{
    if (c->description)
        return cv__tpl_err(c->ctx, CV_EVALIDATE, c->where, "%s", c->description);
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cv__tpl_err(c->ctx, CV_EVALIDATE, c->where, "%s", msg);
}

/* ---------------------------------------------------------------- min / max */

typedef struct bounds {
    json_t *min, *max; /* numbers, or NULL when open */
} bounds_t;

static void bounds_free(bounds_t *b)
{
    json_decref(b->min);
    json_decref(b->max);
}

static int read_bound(const check_t *c, const char *kind, const json_t *def, const char *key,
                      bool integral, json_t **out)
{
    const json_t *v = json_object_get(def, key);
    if (!v || json_is_null(v))
        return 0;
    *out = cv__param_to_number(v);
    if (!*out || (integral && !json_is_integer(*out)))
        return bad_def(c, "%s: %s must be %s", kind, key, integral ? "an integer" : "a number");
    return 0;
}

static int read_bounds(const check_t *c, const char *kind, const json_t *def, bool integral,
                       bounds_t *b)
{
    if (!json_is_object(def))
        return bad_def(c, "%s: expected a map with min and/or max", kind);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)def, key, v)
    {
        if (strcmp(key, "min") != 0 && strcmp(key, "max") != 0)
            return bad_def(c, "%s: unknown key \"%s\" (allowed: min, max)", kind, key);
    }
    int rc = read_bound(c, kind, def, "min", integral, &b->min);
    rc = rc ? rc : read_bound(c, kind, def, "max", integral, &b->max);
    if (rc == 0 && !b->min && !b->max)
        rc = bad_def(c, "%s: needs a min or a max", kind);
    /* Heat takes such a constraint and refuses every value with "is out of
     * range", which blames the value; the constraint is what is wrong. */
    if (rc == 0 && b->min && b->max && json_number_value(b->min) > json_number_value(b->max)) {
        char lo[40], hi[40];
        cv__fmt_number(b->min, lo, sizeof(lo));
        cv__fmt_number(b->max, hi, sizeof(hi));
        rc = bad_def(
            c, "%s: inverted range: min %s is greater than max %s, so no value can satisfy it",
            kind, lo, hi);
    }
    return rc;
}

/* The phrase for a quantity outside its bounds, or NULL when inside. */
static const char *outside(const bounds_t *b, double x, char *out, size_t size)
{
    char lo[40] = "", hi[40] = "";
    if (b->min)
        cv__fmt_number(b->min, lo, sizeof(lo));
    if (b->max)
        cv__fmt_number(b->max, hi, sizeof(hi));
    bool low = b->min && x < json_number_value(b->min);
    bool high = b->max && x > json_number_value(b->max);
    if (!low && !high)
        return NULL;
    if (b->min && b->max)
        snprintf(out, size, "is outside range %s..%s", lo, hi);
    else if (low)
        snprintf(out, size, "is below the minimum %s", lo);
    else
        snprintf(out, size, "is above the maximum %s", hi);
    return out;
}

static int check_range(const check_t *c, const json_t *def)
{
    bounds_t b = {0};
    int rc = read_bounds(c, "range", def, false, &b);
    char phrase[128], shown[128];
    if (rc == 0 && outside(&b, json_number_value(c->value), phrase, sizeof(phrase))) {
        cv__param_shown(c->value, c->hidden, shown, sizeof(shown));
        rc = violated(c, "value %s %s", shown, phrase);
    }
    bounds_free(&b);
    return rc;
}

/* Length counts characters, as Python's len() of a string does, not bytes. */
static size_t length_of(const json_t *v)
{
    if (!json_is_string(v))
        return json_is_array(v) ? json_array_size(v) : json_object_size(v);
    size_t n = 0;
    const char *s = json_string_value(v);
    for (size_t i = 0; i < json_string_length(v); i++)
        n += ((unsigned char)s[i] & 0xC0) != 0x80;
    return n;
}

static int check_length(const check_t *c, const json_t *def)
{
    bounds_t b = {0};
    int rc = read_bounds(c, "length", def, true, &b);
    size_t len = length_of(c->value);
    char phrase[128], shown[128];
    if (rc == 0 && outside(&b, (double)len, phrase, sizeof(phrase))) {
        cv__param_shown(c->value, c->hidden, shown, sizeof(shown));
        rc = violated(c, "length %zu of value %s %s", len, shown, phrase);
    }
    bounds_free(&b);
    return rc;
}

/* ---------------------------------------------------------------- modulo */

/* Heat's rules for the definition; Python's % for the check (the result
 * takes the sign of the step). */
static int check_modulo(const check_t *c, const json_t *def)
{
    json_t *step = cv__param_to_number(json_object_get(def, "step"));
    json_t *offset = cv__param_to_number(json_object_get(def, "offset"));
    double s = json_number_value(step), o = json_number_value(offset);
    int rc = 0;
    if (!json_is_object(def) || !step || !offset)
        rc = bad_def(c, "modulo: needs a numeric step and offset");
    else if (s != floor(s) || o != floor(o))
        rc = bad_def(c, "modulo: step and offset must be integers");
    else if (s == 0)
        rc = bad_def(c, "modulo: step cannot be 0");
    else if (fabs(o) >= fabs(s) || s * o < 0)
        rc = bad_def(c, "modulo: offset must be smaller than step and of the same sign");
    double r = rc ? 0 : fmod(json_number_value(c->value), s);
    if (r != 0 && (r < 0) != (s < 0))
        r += s;
    if (rc == 0 && r != o) {
        char shown[128], st[40], of[40];
        cv__param_shown(c->value, c->hidden, shown, sizeof(shown));
        cv__fmt_number(step, st, sizeof(st));
        cv__fmt_number(offset, of, sizeof(of));
        rc = violated(c, "value %s is not a multiple of %s with an offset of %s", shown, st, of);
    }
    json_decref(step);
    json_decref(offset);
    return rc;
}

/* ---------------------------------------------------------------- allowed values */

/* An allowed value read as the parameter's type, as Heat compares them:
 * allowed_values [1, 2] admits the number parameter value "1". */
static bool same_value(const char *type, const json_t *allowed, const json_t *value)
{
    json_t *a = type[0] == 'n'   ? cv__param_to_number(allowed)
                : type[0] == 'b' ? cv__param_to_boolean(allowed)
                                 : cv__param_to_string(allowed);
    bool same = false;
    if (a && type[0] == 'n')
        same = json_number_value(a) == json_number_value(value);
    else if (a)
        same = json_equal(a, (json_t *)value);
    json_decref(a);
    return same;
}

static bool allowed(const char *type, const json_t *list, const json_t *value)
{
    for (size_t i = 0; i < json_array_size(list); i++)
        if (same_value(type, json_array_get(list, i), value))
            return true;
    return false;
}

static int check_allowed_values(const check_t *c, const json_t *def)
{
    if (!json_is_array(def))
        return bad_def(c, "allowed_values: expected a list, got %s", cv__type_name(def));
    char shown[128], list[256];
    cv__describe(def, list, sizeof(list));
    /* A list parameter passes when every item is allowed. */
    if (json_is_array(c->value)) {
        for (size_t i = 0; i < json_array_size(c->value); i++) {
            const json_t *item = json_array_get(c->value, i);
            if (!allowed("string", def, item)) {
                cv__param_shown(item, c->hidden, shown, sizeof(shown));
                return violated(c, "item %s is not one of the allowed values %s", shown, list);
            }
        }
        return 0;
    }
    if (allowed(c->type, def, c->value))
        return 0;
    cv__param_shown(c->value, c->hidden, shown, sizeof(shown));
    return violated(c, "value %s is not one of the allowed values %s", shown, list);
}

/* ---------------------------------------------------------------- allowed pattern */

/* Heat's patterns are Python regular expressions; POSIX ERE lacks the
 * common shorthands, so they are spelled out (\d -> [0-9], (?: -> (). */
static const char *shorthand(char c, bool in_brackets)
{
    switch (c) {
    case 'd':
        return in_brackets ? "0-9" : "[0-9]";
    case 'D':
        return in_brackets ? NULL : "[^0-9]";
    case 's':
        return in_brackets ? "[:space:]" : "[[:space:]]";
    case 'S':
        return in_brackets ? NULL : "[^[:space:]]";
    case 'w':
        return in_brackets ? "[:alnum:]_" : "[[:alnum:]_]";
    case 'W':
        return in_brackets ? NULL : "[^[:alnum:]_]";
    default:
        return NULL;
    }
}

static char *translate_pattern(const char *in)
{
    size_t cap = strlen(in) * 16 + 8, n = 0;
    char *out = malloc(cap);
    bool in_brackets = false;
    if (!out)
        return NULL;
    n += (size_t)snprintf(out, cap, "^(");
    for (const char *p = in; *p; p++) {
        const char *rep = *p == '\\' && p[1] ? shorthand(p[1], in_brackets) : NULL;
        if (rep) {
            n += (size_t)snprintf(out + n, cap - n, "%s", rep);
            p++;
        } else if (*p == '\\' && p[1]) {
            out[n++] = *p++;
            out[n++] = *p;
        } else if (!in_brackets && strncmp(p, "(?:", 3) == 0) {
            out[n++] = '(';
            p += 2;
        } else {
            if (*p == '[' && !in_brackets) {
                in_brackets = true;
                out[n++] = *p;
                /* A leading ^ and a leading ] belong to the set. */
                if (p[1] == '^')
                    out[n++] = *++p;
                if (p[1] == ']')
                    out[n++] = *++p;
                continue;
            }
            if (*p == ']' && in_brackets)
                in_brackets = false;
            out[n++] = *p;
        }
    }
    snprintf(out + n, cap - n, ")$");
    return out;
}

static int check_pattern(const check_t *c, const json_t *def)
{
    if (!json_is_string(def))
        return bad_def(c, "allowed_pattern: expected a string, got %s", cv__type_name(def));
    char *pattern = translate_pattern(json_string_value(def));
    regex_t re;
    char why[256] = "";
    if (!pattern || cv_regex_compile(&re, pattern, REG_EXTENDED | REG_NOSUB, why, sizeof(why))) {
        free(pattern);
        return bad_def(c, "allowed_pattern \"%s\" is not a valid regular expression%s%s%s",
                       json_string_value(def), why[0] ? " (" : "", why, why[0] ? ")" : "");
    }
    int rc = 0;
    if (regexec(&re, json_string_value(c->value), 0, NULL, 0) != 0) {
        char shown[128];
        cv__param_shown(c->value, c->hidden, shown, sizeof(shown));
        rc = violated(c, "value %s does not match the allowed pattern \"%s\"", shown,
                      json_string_value(def));
    }
    regfree(&re);
    free(pattern);
    return rc;
}

/* ---------------------------------------------------------------- dispatch */

/* Each kind, the parameter types it applies to (by first letter: string,
 * number, boolean, comma_delimited_list, json) and the first version. */
static const struct {
    const char *kind;
    const char *types;
    long since;
    int (*check)(const check_t *c, const json_t *def);
} kinds[] = {
    {"range", "n", CV__V20130523, check_range},
    {"length", "scj", CV__V20130523, check_length},
    {"modulo", "n", CV__V20170224, check_modulo},
    {"allowed_values", "snbc", CV__V20130523, check_allowed_values},
    {"allowed_pattern", "s", CV__V20130523, check_pattern},
    {"custom_constraint", "snbcj", CV__V20130523, NULL},
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static size_t kind_named(const check_t *c, const char *key)
{
    size_t i = 0;
    while (i < NKINDS && !(strcmp(kinds[i].kind, key) == 0 && c->ctx->version >= kinds[i].since))
        i++;
    return i;
}

static int one_constraint(check_t *c, const json_t *def)
{
    if (!json_is_object(def))
        return bad_def(c, "must be a map, got %s", cv__type_name(def));
    size_t found = NKINDS;
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)def, key, v)
    {
        size_t k = kind_named(c, key);
        if (strcmp(key, "description") == 0)
            continue;
        if (k == NKINDS)
            return bad_def(c, "unknown constraint \"%s\"", key);
        if (found != NKINDS)
            return bad_def(c, "one constraint per entry; found \"%s\" and \"%s\"",
                           kinds[found].kind, key);
        found = k;
    }
    if (found == NKINDS)
        return bad_def(c, "no constraint given");
    const json_t *desc = json_object_get(def, "description");
    if (desc && !json_is_null(desc) && !json_is_string(desc))
        return bad_def(c, "description must be a string, got %s", cv__type_name(desc));
    c->description = json_string_value(desc);
    if (!strchr(kinds[found].types, c->type[0]))
        return bad_def(c, "%s is not valid for a %s parameter", kinds[found].kind, c->type);
    const json_t *arg = json_object_get(def, kinds[found].kind);
    if (!kinds[found].check)
        return json_is_string(arg) ? 0 : bad_def(c, "custom_constraint must be a name");
    return kinds[found].check(c, arg);
}

int cv__param_constraints(const cv__tpl_ctx_t *ctx, const char *param_path, const char *where,
                          const char *type, const json_t *def, const json_t *value, bool hidden)
{
    const json_t *list = json_object_get(def, "constraints");
    if (!list || json_is_null(list))
        return 0;
    cv__path_t cpath;
    cv__path_init(&cpath, param_path);
    cv__path_key(&cpath, "constraints");
    size_t base = cpath.len;
    if (!json_is_array(list))
        return cv__tpl_err(ctx, CV_EVALIDATE, cpath.buf, "must be a list, got %s",
                           cv__type_name(list));
    for (size_t i = 0; i < json_array_size(list); i++) {
        cv__path_index(&cpath, i);
        check_t c = {ctx, cpath.buf, where, type, value, hidden, NULL};
        int rc = one_constraint(&c, json_array_get(list, i));
        if (rc)
            return rc;
        cv__path_pop(&cpath, base);
    }
    return 0;
}
