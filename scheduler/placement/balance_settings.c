/*
 * balance_settings — the cluster resource manager's settings
 * (docs/crm.md "Settings"): our format's "crm" object and Service Fabric's
 * fabricSettings sections (PlacementAndLoadBalancing, MetricBalancingThresholds,
 * MetricActivityThresholds, DefragmentationMetrics) with each node type's
 * placementAndLoadBalancingOverrides, both under Service Fabric's names.
 * Every default is applied and every value checked, an error naming the
 * setting by its path in the file. A node type inherits the global
 * thresholds metric by metric, and the global MinLoadBalancingInterval.
 */
#include "balance_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct rd {
    char *errstr;
    size_t errstr_size;
    json_t *out;    /* the result being built */
    json_t *global; /* metric -> partial settings given globally */
    json_t *types;  /* type -> {"metrics": partial, "MinLoadBalancingInterval"?} */
} rd_t;

static int fail(rd_t *r, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(rd_t *r, const char *path, const char *fmt, ...)
{
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    snprintf(r->errstr, r->errstr_size, "%s: %s", path, msg);
    return -1;
}

/* Paths are cut at the buffer's size: a message naming a setting by a
 * path of 500 characters is still clear enough. */
static void path_key(char *buf, size_t size, const char *base, const char *key)
{
    if (snprintf(buf, size, "%s%s%s", base, base[0] ? "." : "", key) < 0)
        buf[0] = '\0';
}

static void path_idx(char *buf, size_t size, const char *base, size_t i)
{
    if (snprintf(buf, size, "%s[%zu]", base, i) < 0)
        buf[0] = '\0';
}

/* A number, or a string holding one (Service Fabric writes "0.10"). */
static bool read_number(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return true;
    }
    if (!json_is_string(v))
        return false;
    const char *s = json_string_value(v);
    char *end;
    *out = strtod(s, &end);
    return end != s && *end == '\0';
}

static bool read_bool(const json_t *v, bool *out)
{
    if (json_is_boolean(v)) {
        *out = json_is_true(v);
        return true;
    }
    const char *s = json_string_value(v);
    if (s && (strcasecmp(s, "true") == 0 || strcasecmp(s, "false") == 0)) {
        *out = strcasecmp(s, "true") == 0;
        return true;
    }
    return false;
}

/* ---------------------------------------------------------------- the scalars */

typedef enum { K_INTERVAL, K_POSITIVE, K_COUNT, K_BOOL } kind_t;

typedef struct scalar {
    const char *name;
    kind_t kind;
    double dflt;
} scalar_t;

static const scalar_t scalars[] = {
    {"PLBRefreshGap", K_POSITIVE, 0.1},
    {"MinPlacementInterval", K_INTERVAL, 1},
    {"MinConstraintCheckInterval", K_INTERVAL, 1},
    {"MinLoadBalancingInterval", K_INTERVAL, 5},
    {"GlobalMovementThrottleThreshold", K_COUNT, 1000},
    {"GlobalMovementThrottleCountingInterval", K_POSITIVE, 600},
    {"MovementPerPartitionThrottleThreshold", K_COUNT, 50},
    {"MovementPerPartitionThrottleCountingInterval", K_POSITIVE, 600},
    {"SeparateBalancingStrategyPerNodeType", K_BOOL, 0},
};
#define NSCALARS (sizeof(scalars) / sizeof(scalars[0]))

static const scalar_t *scalar_named(const char *name)
{
    for (size_t i = 0; i < NSCALARS; i++)
        if (strcmp(scalars[i].name, name) == 0)
            return &scalars[i];
    return NULL;
}

static int set_scalar(rd_t *r, const scalar_t *k, const json_t *v, const char *path)
{
    double d;
    bool b;
    if (k->kind == K_BOOL) {
        if (!read_bool(v, &b))
            return fail(r, path, "expected true or false");
        json_object_set_new(r->out, k->name, json_boolean(b));
        return 0;
    }
    if (!read_number(v, &d))
        return fail(r, path, "expected a number");
    if (k->kind == K_POSITIVE && !(d > 0))
        return fail(r, path, "expected a number of seconds above 0, not %g", d);
    if (k->kind == K_INTERVAL && d < 0)
        return fail(r, path, "expected a number of seconds of 0 or more, not %g", d);
    if (k->kind == K_COUNT && (d < 0 || d != (double)(int64_t)d))
        return fail(r, path,
                    "expected a whole number of moves of 0 or more (0: no throttle), not %g", d);
    json_object_set_new(r->out, k->name,
                        k->kind == K_COUNT ? json_integer((json_int_t)d) : json_real(d));
    return 0;
}

/* ---------------------------------------------------------------- metric settings */

typedef enum { M_THRESHOLD, M_ACTIVITY, M_DEFRAG } mkind_t;

static const char *const mkeys[] = {"balancingThreshold", "activityThreshold", "defragmentation"};

/* Metric setting `kind` of `metric` into `partial` (metric -> {..}). */
static int set_metric(rd_t *r, json_t *partial, mkind_t kind, const char *metric, const json_t *v,
                      const char *path)
{
    double d = 0;
    bool b = false;
    if (!metric[0])
        return fail(r, path, "empty metric name");
    if (kind == M_DEFRAG) {
        if (!read_bool(v, &b))
            return fail(r, path, "expected true or false (defragment metric '%s')", metric);
    } else if (!read_number(v, &d))
        return fail(r, path, "expected a number");
    else if (kind == M_THRESHOLD && d < 1)
        return fail(r, path,
                    "expected a balancing threshold of 1 or more (a ratio of the most to the "
                    "least loaded node), not %g",
                    d);
    else if (kind == M_ACTIVITY && d < 0)
        return fail(r, path, "expected an activity threshold of 0 or more, not %g", d);
    json_t *entry = json_object_get(partial, metric);
    if (!entry) {
        entry = json_object();
        json_object_set_new(partial, metric, entry);
    }
    json_object_set_new(entry, mkeys[kind], kind == M_DEFRAG ? json_boolean(b) : json_real(d));
    return 0;
}

/* An object {metric: value} or a list [{"name", "value"}] of metric settings. */
static int set_metrics(rd_t *r, json_t *partial, mkind_t kind, const json_t *v, const char *path)
{
    char p[512];
    if (json_is_object(v)) {
        const char *metric;
        const json_t *x;
        json_object_foreach((json_t *)v, metric, x)
        {
            path_key(p, sizeof(p), path, metric);
            if (set_metric(r, partial, kind, metric, x, p))
                return -1;
        }
        return 0;
    }
    if (!json_is_array(v))
        return fail(r, path, "expected an object of metric names to values");
    for (size_t i = 0; i < json_array_size(v); i++) {
        const json_t *e = json_array_get(v, i);
        const char *metric = json_string_value(json_object_get(e, "name"));
        path_idx(p, sizeof(p), path, i);
        if (!metric)
            return fail(r, p, "expected {\"name\": metric, \"value\": ..}");
        if (set_metric(r, partial, kind, metric, json_object_get(e, "value"), p))
            return -1;
    }
    return 0;
}

static json_t *type_entry(rd_t *r, const char *type)
{
    json_t *t = json_object_get(r->types, type);
    if (!t) {
        t = json_pack("{s:{}}", "metrics");
        json_object_set_new(r->types, type, t);
    }
    return t;
}

/* A node type's overrides, under their names ending PerNodeType. */
static int set_type(rd_t *r, const char *type, const json_t *o, const char *path, bool strict)
{
    static const char *const names[] = {"MetricBalancingThresholdsPerNodeType",
                                        "MetricActivityThresholdsPerNodeType",
                                        "MinLoadBalancingIntervalPerNodeType", NULL};
    char p[512];
    if (!json_is_object(o))
        return fail(r, path, "expected an object");
    json_t *t = type_entry(r, type);
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)o, key, v)
    {
        path_key(p, sizeof(p), path, key);
        if (strcmp(key, names[0]) == 0 || strcmp(key, names[1]) == 0) {
            mkind_t kind = strcmp(key, names[0]) == 0 ? M_THRESHOLD : M_ACTIVITY;
            if (set_metrics(r, json_object_get(t, "metrics"), kind, v, p))
                return -1;
        } else if (strcmp(key, names[2]) == 0) {
            double d;
            if (!read_number(v, &d) || d < 0)
                return fail(r, p, "expected a number of seconds of 0 or more");
            json_object_set_new(t, "MinLoadBalancingInterval", json_real(d));
        } else if (strict)
            return fail(r, p,
                        "unknown setting (expected MetricBalancingThresholdsPerNodeType, "
                        "MetricActivityThresholdsPerNodeType or "
                        "MinLoadBalancingIntervalPerNodeType)");
    }
    return 0;
}

/* ---------------------------------------------------------------- our format */

static int read_crm(rd_t *r, const json_t *crm)
{
    char p[512];
    if (!json_is_object(crm))
        return fail(r, "crm", "expected an object");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)crm, key, v)
    {
        const scalar_t *k = scalar_named(key);
        path_key(p, sizeof(p), "crm", key);
        int rc = 0;
        if (k)
            rc = set_scalar(r, k, v, p);
        else if (strcmp(key, "MetricBalancingThresholds") == 0)
            rc = set_metrics(r, r->global, M_THRESHOLD, v, p);
        else if (strcmp(key, "MetricActivityThresholds") == 0)
            rc = set_metrics(r, r->global, M_ACTIVITY, v, p);
        else if (strcmp(key, "DefragmentationMetrics") == 0)
            rc = set_metrics(r, r->global, M_DEFRAG, v, p);
        else if (strcmp(key, "nodeTypes") == 0) {
            if (!json_is_object(v))
                return fail(r, p, "expected an object of node types");
            const char *type;
            const json_t *o;
            json_object_foreach((json_t *)v, type, o)
            {
                char tp[512];
                path_key(tp, sizeof(tp), p, type);
                if (set_type(r, type, o, tp, true))
                    return -1;
            }
        } else
            rc = fail(r, p,
                      "unknown setting (expected one of Service Fabric's PlacementAndLoadBalancing "
                      "names: PLBRefreshGap, MinPlacementInterval, MinConstraintCheckInterval, "
                      "MinLoadBalancingInterval, GlobalMovementThrottleThreshold, "
                      "GlobalMovementThrottleCountingInterval, "
                      "MovementPerPartitionThrottleThreshold, "
                      "MovementPerPartitionThrottleCountingInterval, "
                      "SeparateBalancingStrategyPerNodeType, MetricBalancingThresholds, "
                      "MetricActivityThresholds, DefragmentationMetrics, nodeTypes)");
        if (rc)
            return rc;
    }
    return 0;
}

/* ---------------------------------------------------------------- Service Fabric's */

/* properties.KEY, else KEY at the top level (as the cluster loader reads it). */
static const json_t *sf_member(const json_t *settings, const char *key, char *path, size_t size)
{
    const json_t *props = json_object_get(settings, "properties");
    const json_t *v = json_object_get(props, key);
    if (v) {
        path_key(path, size, "properties", key);
        return v;
    }
    snprintf(path, size, "%s", key);
    return json_object_get(settings, key);
}

static int sf_parameter(rd_t *r, const char *section, const json_t *p, const char *path)
{
    const char *name = json_string_value(json_object_get(p, "name"));
    const json_t *v = json_object_get(p, "value");
    char vp[512];
    if (!name)
        return fail(r, path, "expected {\"name\", \"value\"}");
    path_key(vp, sizeof(vp), path, "value");
    if (strcmp(section, "PlacementAndLoadBalancing") == 0) {
        const scalar_t *k = scalar_named(name);
        return k ? set_scalar(r, k, v, vp) : 0; /* the section holds much else */
    }
    mkind_t kind = strcmp(section, "MetricBalancingThresholds") == 0  ? M_THRESHOLD
                   : strcmp(section, "MetricActivityThresholds") == 0 ? M_ACTIVITY
                                                                      : M_DEFRAG;
    return set_metric(r, r->global, kind, name, v, vp);
}

static int read_fabric(rd_t *r, const json_t *settings)
{
    static const char *const sections[] = {"PlacementAndLoadBalancing", "MetricBalancingThresholds",
                                           "MetricActivityThresholds", "DefragmentationMetrics",
                                           NULL};
    char base[256], p[512], pp[512];
    const json_t *fs = sf_member(settings, "fabricSettings", base, sizeof(base));
    for (size_t i = 0; i < json_array_size(fs); i++) {
        const json_t *s = json_array_get(fs, i);
        const char *name = json_string_value(json_object_get(s, "name"));
        size_t k = 0;
        while (name && sections[k] && strcmp(sections[k], name) != 0)
            k++;
        if (!name || !sections[k])
            continue;
        path_idx(p, sizeof(p), base, i);
        const json_t *params = json_object_get(s, "parameters");
        for (size_t j = 0; j < json_array_size(params); j++) {
            char ip[512];
            path_key(pp, sizeof(pp), p, "parameters");
            path_idx(ip, sizeof(ip), pp, j);
            if (sf_parameter(r, name, json_array_get(params, j), ip))
                return -1;
        }
    }
    const json_t *types = sf_member(settings, "nodeTypes", base, sizeof(base));
    for (size_t i = 0; json_is_array(types) && i < json_array_size(types); i++) {
        const json_t *t = json_array_get(types, i);
        const char *name = json_string_value(json_object_get(t, "name"));
        const json_t *o = json_object_get(t, "placementAndLoadBalancingOverrides");
        if (!name)
            continue;
        type_entry(r, name);
        if (!o)
            continue;
        path_idx(p, sizeof(p), base, i);
        path_key(pp, sizeof(pp), p, "placementAndLoadBalancingOverrides");
        if (set_type(r, name, o, pp, false))
            return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- defaults */

bl_metric_set_t cv__bl_metric_set(const json_t *scope, const char *metric)
{
    const json_t *e = json_object_get(json_object_get(scope, "metrics"), metric);
    const json_t *t = json_object_get(e, "balancingThreshold");
    const json_t *a = json_object_get(e, "activityThreshold");
    bl_metric_set_t set = {.threshold = t ? json_number_value(t) : 1,
                           .activity = a ? json_number_value(a) : 0,
                           .defrag = json_is_true(json_object_get(e, "defragmentation"))};
    return set;
}

double cv__bl_setting(const json_t *settings, const char *key)
{
    const json_t *v = json_object_get(settings, key);
    if (json_is_boolean(v))
        return json_is_true(v);
    if (v)
        return json_number_value(v);
    const scalar_t *k = scalar_named(key);
    return k ? k->dflt : 0;
}

/* Each metric complete: `over` on top of `base` on top of the defaults. */
static json_t *complete(const json_t *base, const json_t *over)
{
    json_t *all = json_object();
    const json_t *layers[] = {base, over};
    for (int l = 0; l < 2; l++) {
        const char *metric;
        json_t *e;
        json_object_foreach((json_t *)layers[l], metric, e)
        {
            json_t *have = json_object_get(all, metric);
            if (!have) {
                have = json_pack("{s:f, s:f, s:b}", mkeys[0], 1.0, mkeys[1], 0.0, mkeys[2], 0);
                json_object_set_new(all, metric, have);
            }
            json_object_update(have, e);
        }
    }
    return all;
}

static void finish(rd_t *r)
{
    for (size_t i = 0; i < NSCALARS; i++)
        if (!json_object_get(r->out, scalars[i].name))
            json_object_set_new(r->out, scalars[i].name,
                                scalars[i].kind == K_BOOL ? json_boolean(scalars[i].dflt != 0)
                                : scalars[i].kind == K_COUNT
                                    ? json_integer((json_int_t)scalars[i].dflt)
                                    : json_real(scalars[i].dflt));
    json_object_set_new(r->out, "metrics", complete(r->global, NULL));
    json_t *types = json_object();
    const char *type;
    json_t *t;
    json_object_foreach(r->types, type, t)
    {
        const json_t *iv = json_object_get(t, "MinLoadBalancingInterval");
        json_object_set_new(
            types, type,
            json_pack("{s:o, s:O}", "metrics", complete(r->global, json_object_get(t, "metrics")),
                      "MinLoadBalancingInterval",
                      iv ? iv : json_object_get(r->out, "MinLoadBalancingInterval")));
    }
    json_object_set_new(r->out, "nodeTypes", types);
}

json_t *cv_balance_settings(const json_t *settings, char *errstr, size_t errstr_size)
{
    json_t *parsed = NULL;
    if (json_is_string(settings)) {
        parsed = json_loads(json_string_value(settings), 0, NULL);
        if (!parsed) {
            snprintf(errstr, errstr_size, "settings: not JSON");
            return NULL;
        }
        settings = parsed;
    }
    rd_t r = {errstr, errstr_size, json_object(), json_object(), json_object()};
    int rc = 0;
    if (settings && !json_is_object(settings))
        rc = fail(&r, "settings", "expected an object");
    /* our node types are named by the keys of "nodeTypes" */
    const json_t *ours = json_object_get(settings, "nodeTypes");
    const char *type;
    const json_t *t;
    json_object_foreach((json_t *)(json_is_object(ours) ? ours : NULL), type, t)
    {
        (void)t;
        type_entry(&r, type);
    }
    if (!rc)
        rc = read_fabric(&r, settings);
    if (!rc && json_object_get(settings, "crm"))
        rc = read_crm(&r, json_object_get(settings, "crm"));
    if (!rc)
        finish(&r);
    json_decref(r.global);
    json_decref(r.types);
    json_decref(parsed);
    if (rc) {
        json_decref(r.out);
        return NULL;
    }
    return r.out;
}
