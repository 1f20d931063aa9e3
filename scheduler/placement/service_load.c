/*
 * Loading a service description:
 *   {"name", "serviceType", "replicas", "stateful", "placementConstraints",
 *    "metrics": [{"name", "primaryLoad", "secondaryLoad", "weight"}],
 *    "distribution", "requireDomainDistribution", "constraints",
 *    "affinity": {"service"}}
 * Defaults: one replica, stateless, no constraints, adaptive distribution,
 * packing allowed. A metric's secondaryLoad defaults to its primaryLoad (so
 * a stateless service, whose instances take the secondary load, can give
 * one number) and its weight to "low", Service Fabric's default. The
 * placement expression and the Mesos constraints are parsed by their own
 * modules (cv_pcexpr, cv_mesos); their messages are prefixed with the file
 * and the member.
 */
#include "cluster_internal.h"

#include "cv_base.h"
#include "cv_mesos.h"
#include "cv_pcexpr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* More replicas than this is a typo, not a service. */
#define REPLICAS_MAX 100000

static const char *const service_keys[] = {"name",
                                           "serviceType",
                                           "replicas",
                                           "stateful",
                                           "placementConstraints",
                                           "metrics",
                                           "distribution",
                                           "requireDomainDistribution",
                                           "constraints",
                                           "affinity",
                                           "placements",
                                           NULL};
static const char *const metric_keys[] = {"name", "primaryLoad", "secondaryLoad", "weight", NULL};

void cv_service_free(cv_service_t *s)
{
    if (!s)
        return;
    free(s->name);
    free(s->service_type);
    free(s->placement_text);
    if (s->placement)
        cv_pcexpr_free(s->placement);
    if (s->constraints)
        cv_mconstraint_free(s->constraints);
    free(s->affinity_service);
    free(s);
}

static int dup_into(const cv__cluster_ld_t *ld, char **dst, const char *s)
{
    *dst = strdup(s);
    return *dst ? 0 : cv__cluster_err(ld, CV_ENOMEM, "", "out of memory");
}

/* ------------------------------------------------------------------------ */
/* Metrics                                                                  */
/* ------------------------------------------------------------------------ */

/* "zero", "low", "medium", "high" (any case) or a non-negative number. */
static int metric_weight(const cv__cluster_ld_t *ld, const json_t *v, const char *path, double *out)
{
    static const struct {
        const char *name;
        double weight;
    } names[] = {{"zero", 0}, {"low", 0.1}, {"medium", 0.3}, {"high", 1}};
    for (size_t i = 0; json_is_string(v) && i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcasecmp(json_string_value(v), names[i].name) == 0) {
            *out = names[i].weight;
            return 0;
        }
    }
    if (json_is_number(v) && json_number_value(v) >= 0) {
        *out = json_number_value(v);
        return 0;
    }
    return cv__cluster_err(ld, CV_EVALIDATE, path,
                           "expected zero, low, medium, high or a non-negative number");
}

static int load_metric(const cv__cluster_ld_t *ld, const json_t *m, const char *base,
                       cv_service_metric_t *out)
{
    char path[CV__CLUSTER_PATH_MAX];
    const char *name;
    const json_t *v;
    if (!json_is_object(m))
        return cv__cluster_err(ld, CV_EVALIDATE, base, "expected an object");
    int rc = cv__cluster_check_keys(ld, m, base, metric_keys);
    if (!rc)
        rc = cv__cluster_get_string(ld, m, base, "name", true, &name);
    if (rc)
        return rc;
    if (strlen(name) >= CV_METRIC_NAME_MAX)
        return cv__cluster_err(ld, CV_ETOOBIG,
                               cv__cluster_path_key(path, sizeof(path), base, "name"),
                               "metric name longer than %d characters", CV_METRIC_NAME_MAX - 1);
    snprintf(out->name, sizeof(out->name), "%s", name);
    out->weight = 0.1;
    if ((v = cv__cluster_member(m, "primaryLoad")) != NULL)
        rc = cv__cluster_qty_value(ld, v,
                                   cv__cluster_path_key(path, sizeof(path), base, "primaryLoad"),
                                   &out->primary_load);
    out->secondary_load = out->primary_load;
    if (!rc && (v = cv__cluster_member(m, "secondaryLoad")) != NULL)
        rc = cv__cluster_qty_value(ld, v,
                                   cv__cluster_path_key(path, sizeof(path), base, "secondaryLoad"),
                                   &out->secondary_load);
    if (!rc && (v = cv__cluster_member(m, "weight")) != NULL)
        rc = metric_weight(ld, v, cv__cluster_path_key(path, sizeof(path), base, "weight"),
                           &out->weight);
    return rc;
}

static int load_metrics(const cv__cluster_ld_t *ld, const json_t *desc, const char *base,
                        cv_service_t *s)
{
    char path[CV__CLUSTER_PATH_MAX], mpath[CV__CLUSTER_PATH_MAX];
    const json_t *metrics;
    int rc = cv__cluster_get_array(ld, desc, base, "metrics", &metrics);
    cv__cluster_path_key(path, sizeof(path), base, "metrics");
    if (!rc && json_array_size(metrics) > CV_MAX_METRICS)
        return cv__cluster_err(ld, CV_ETOOBIG, path, "more than %d metrics", CV_MAX_METRICS);
    for (size_t i = 0; !rc && i < json_array_size(metrics); i++) {
        cv__cluster_path_idx(mpath, sizeof(mpath), path, i);
        rc = load_metric(ld, json_array_get(metrics, i), mpath, &s->metrics[i]);
        for (size_t j = 0; !rc && j < i; j++)
            if (strcmp(s->metrics[i].name, s->metrics[j].name) == 0)
                rc = cv__cluster_err(ld, CV_EEXIST, mpath, "metric '%s' is already listed ([%zu])",
                                     s->metrics[i].name, j);
        s->nmetrics = i + 1;
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Constraints                                                              */
/* ------------------------------------------------------------------------ */

static int load_placement(const cv__cluster_ld_t *ld, const json_t *desc, const char *base,
                          cv_service_t *s)
{
    char path[CV__CLUSTER_PATH_MAX], err[512] = "";
    const json_t *v = cv__cluster_member(desc, "placementConstraints");
    cv__cluster_path_key(path, sizeof(path), base, "placementConstraints");
    if (!v)
        return 0;
    if (!json_is_string(v))
        return cv__cluster_err(ld, CV_EVALIDATE, path, "expected a string (an expression)");
    const char *text = json_string_value(v);
    if (text[strspn(text, " \t\r\n")] == '\0')
        return 0;
    int rc = dup_into(ld, &s->placement_text, text);
    if (!rc)
        rc = cv_pcexpr_parse(text, &s->placement, err, sizeof(err));
    return rc ? cv__cluster_err(ld, rc, path, "%s", err) : 0;
}

static int load_constraints(const cv__cluster_ld_t *ld, const json_t *desc, const char *base,
                            cv_service_t *s)
{
    char path[CV__CLUSTER_PATH_MAX], err[512] = "";
    const json_t *v = cv__cluster_member(desc, "constraints");
    if (!v)
        return 0;
    cv__cluster_path_key(path, sizeof(path), base, "constraints");
    int rc = cv_mconstraint_parse(v, path, &s->constraints, err, sizeof(err));
    return rc ? cv__cluster_err(ld, rc, "", "%s", err) : 0;
}

static int load_affinity(const cv__cluster_ld_t *ld, const json_t *desc, const char *base,
                         cv_service_t *s)
{
    static const char *const keys[] = {"service", NULL};
    char path[CV__CLUSTER_PATH_MAX];
    const json_t *affinity;
    const char *other;
    int rc = cv__cluster_get_object(ld, desc, base, "affinity", &affinity);
    if (rc || !affinity)
        return rc;
    cv__cluster_path_key(path, sizeof(path), base, "affinity");
    rc = cv__cluster_check_keys(ld, affinity, path, keys);
    if (!rc)
        rc = cv__cluster_get_string(ld, affinity, path, "service", true, &other);
    return rc ? rc : dup_into(ld, &s->affinity_service, other);
}

static int load_distribution(const cv__cluster_ld_t *ld, const json_t *desc, const char *base,
                             cv_service_t *s)
{
    static const char *const names[] = {"adaptive", "maxDifference", "quorumSafe"};
    char path[CV__CLUSTER_PATH_MAX];
    const char *d;
    int rc = cv__cluster_get_string(ld, desc, base, "distribution", false, &d);
    if (rc || !d)
        return rc;
    for (int i = 0; i < 3; i++) {
        if (strcmp(d, names[i]) == 0) {
            s->distribution = (cv_distribution_t)i;
            return 0;
        }
    }
    return cv__cluster_err(ld, CV_EVALIDATE,
                           cv__cluster_path_key(path, sizeof(path), base, "distribution"),
                           "expected adaptive, maxDifference or quorumSafe, not '%s'", d);
}

/* ------------------------------------------------------------------------ */
/* The description                                                          */
/* ------------------------------------------------------------------------ */

static int load_identity(const cv__cluster_ld_t *ld, const json_t *desc, const char *base,
                         cv_service_t *s)
{
    char path[CV__CLUSTER_PATH_MAX];
    const char *name, *type;
    const json_t *v;
    int rc = cv__cluster_get_string(ld, desc, base, "name", true, &name);
    if (!rc)
        rc = cv__cluster_get_string(ld, desc, base, "serviceType", false, &type);
    if (!rc)
        rc = dup_into(ld, &s->name, name);
    if (!rc)
        rc = dup_into(ld, &s->service_type, type ? type : "");
    s->replicas = 1;
    if (!rc && (v = cv__cluster_member(desc, "replicas")) != NULL) {
        int64_t n;
        rc = cv__cluster_int_value(
            ld, v, cv__cluster_path_key(path, sizeof(path), base, "replicas"), 1, REPLICAS_MAX, &n);
        s->replicas = (int)n;
    }
    if (!rc)
        rc = cv__cluster_get_bool(ld, desc, base, "stateful", &s->stateful);
    return rc ? rc
              : cv__cluster_get_bool(ld, desc, base, "requireDomainDistribution",
                                     &s->require_domain_distribution);
}

int cv__cluster_service_parse(const json_t *desc, const char *fname, const char *base,
                              bool in_layout, cv_service_t **out, char *errstr, size_t errstr_size)
{
    cv__cluster_ld_t ld = {.fname = fname, .errstr = errstr, .errstr_size = errstr_size};
    *out = NULL;
    if (!json_is_object(desc))
        return cv__cluster_err(&ld, CV_EVALIDATE, base,
                               "expected an object (a service description)");
    char path[CV__CLUSTER_PATH_MAX];
    int rc = cv__cluster_check_keys(&ld, desc, base, service_keys);
    if (!rc && !in_layout && json_object_get(desc, "placements"))
        rc = cv__cluster_err(&ld, CV_EVALIDATE,
                             cv__cluster_path_key(path, sizeof(path), base, "placements"),
                             "a service description places no replicas (a layout does)");
    cv_service_t *s = calloc(1, sizeof(*s));
    if (!rc && !s)
        rc = cv__cluster_err(&ld, CV_ENOMEM, base, "out of memory");
    if (!rc)
        rc = load_identity(&ld, desc, base, s);
    if (!rc)
        rc = load_metrics(&ld, desc, base, s);
    if (!rc)
        rc = load_distribution(&ld, desc, base, s);
    if (!rc)
        rc = load_placement(&ld, desc, base, s);
    if (!rc)
        rc = load_constraints(&ld, desc, base, s);
    if (!rc)
        rc = load_affinity(&ld, desc, base, s);
    if (rc) {
        cv_service_free(s);
        return rc;
    }
    *out = s;
    return 0;
}

int cv_service_load(const json_t *desc, const char *fname, cv_service_t **out, char *errstr,
                    size_t errstr_size)
{
    return cv__cluster_service_parse(desc, fname, "", false, out, errstr, errstr_size);
}
