/*
 * Cluster settings: node buffer and overbooking percentages per metric, and
 * the constraint priorities (Service Fabric's cluster description and
 * management integration docs). A metric may have a buffer or an
 * overbooking percentage, never both: Service Fabric refuses such a
 * manifest, and so do we, naming the second of the two.
 */
#include "cluster_internal.h"

#include "cv_balance.h"
#include "cv_base.h"

#include <stddef.h>
#include <string.h>

typedef struct priority_name {
    const char *ours, *sf;
    size_t offset;
} priority_name_t;

static const priority_name_t priority_names[] = {
    {"placement", "PlacementConstraintPriority", offsetof(cv_priorities_t, placement)},
    {"capacity", "CapacityConstraintPriority", offsetof(cv_priorities_t, capacity)},
    {"affinity", "AffinityConstraintPriority", offsetof(cv_priorities_t, affinity)},
    {"faultDomain", "FaultDomainConstraintPriority", offsetof(cv_priorities_t, fault_domain)},
    {"upgradeDomain", "UpgradeDomainConstraintPriority", offsetof(cv_priorities_t, upgrade_domain)},
    {"preferredLocation", "PreferredLocationConstraintPriority",
     offsetof(cv_priorities_t, preferred_location)},
};
#define NPRIORITIES (sizeof(priority_names) / sizeof(priority_names[0]))

int *cv__cluster_priority_field(cv_priorities_t *p, const char *name, bool sf)
{
    for (size_t i = 0; i < NPRIORITIES; i++)
        if (strcmp(name, sf ? priority_names[i].sf : priority_names[i].ours) == 0)
            return (int *)((char *)p + priority_names[i].offset);
    return NULL;
}

int cv__cluster_set_priority(const cv__cluster_ld_t *ld, int *field, const json_t *v,
                             const char *path)
{
    int64_t value;
    int rc = cv__cluster_int_value(ld, v, path, -1, 2, &value);
    if (!rc)
        *field = (int)value;
    return rc;
}

/* ------------------------------------------------------------------------ */
/* Buffer and overbooking                                                   */
/* ------------------------------------------------------------------------ */

static int both_error(const cv__cluster_ld_t *ld, const char *metric, const char *path)
{
    return cv__cluster_err(ld, CV_EVALIDATE, path,
                           "metric '%s' has both a node buffer and a node overbooking percentage "
                           "(a metric may have one or the other)",
                           metric);
}

/* The metric's index (added if new) and the percentage given for it. */
static int metric_percentage(cv__cluster_ld_t *ld, const char *metric, const json_t *v,
                             const char *path, int *m, double *pct)
{
    *m = cv__cluster_metric_add(ld, ld->c, metric, path);
    if (*m < 0)
        return *m;
    return cv__cluster_num_value(ld, v, path, pct);
}

/* A metric's buffer or (overbook) overbooking percentage: a fraction, or
 * -1 (infinite) for overbooking only. */
static int set_percentage(cv__cluster_ld_t *ld, const char *metric, const json_t *v,
                          const char *path, bool overbook)
{
    double pct;
    int m, rc = metric_percentage(ld, metric, v, path, &m, &pct);
    if (rc)
        return rc;
    if ((pct < 0 || pct > 1) && !(overbook && pct == -1))
        return cv__cluster_err(
            ld, CV_EVALIDATE, path, "%s",
            overbook ? "expected a fraction from 0 to 1 (0.2 is 20%), or -1 for infinite"
                     : "expected a fraction from 0 to 1 (0.15 is 15%)");
    bool *mine = overbook ? ld->overbook_set : ld->buffer_set;
    const bool *other = overbook ? ld->buffer_set : ld->overbook_set;
    if (other[m])
        return both_error(ld, metric, path);
    mine[m] = true;
    *(overbook ? &ld->c->metrics[m].overbook : &ld->c->metrics[m].buffer) = pct;
    return 0;
}

int cv__cluster_set_buffer(cv__cluster_ld_t *ld, const char *metric, const json_t *v,
                           const char *path)
{
    return set_percentage(ld, metric, v, path, false);
}

int cv__cluster_set_overbook(cv__cluster_ld_t *ld, const char *metric, const json_t *v,
                             const char *path)
{
    return set_percentage(ld, metric, v, path, true);
}

/* ------------------------------------------------------------------------ */
/* Our format's "settings"                                                  */
/* ------------------------------------------------------------------------ */

static const char *const settings_keys[] = {"nodeBufferPercentage", "nodeOverbookingPercentage",
                                            "constraintPriorities", NULL};

typedef int (*set_pct_fn)(cv__cluster_ld_t *ld, const char *metric, const json_t *v,
                          const char *path);

static int load_percentages(cv__cluster_ld_t *ld, const json_t *settings, const char *key,
                            set_pct_fn set)
{
    char base[CV__CLUSTER_PATH_MAX], path[CV__CLUSTER_PATH_MAX];
    const json_t *pcts, *v;
    const char *metric;
    int rc = cv__cluster_get_object(ld, settings, "settings", key, &pcts);
    cv__cluster_path_key(base, sizeof(base), "settings", key);
    json_object_foreach((json_t *)pcts, metric, v)
    {
        if (rc)
            break;
        rc = set(ld, metric, v, cv__cluster_path_key(path, sizeof(path), base, metric));
    }
    return rc;
}

static int load_priorities(cv__cluster_ld_t *ld, const json_t *settings)
{
    const char *base = "settings.constraintPriorities", *name;
    const json_t *prios, *v;
    int rc = cv__cluster_get_object(ld, settings, "settings", "constraintPriorities", &prios);
    json_object_foreach((json_t *)prios, name, v)
    {
        char path[CV__CLUSTER_PATH_MAX];
        int *field = cv__cluster_priority_field(&ld->c->priorities, name, false);
        if (rc)
            break;
        cv__cluster_path_key(path, sizeof(path), base, name);
        rc = field ? cv__cluster_set_priority(ld, field, v, path)
                   : cv__cluster_err(ld, CV_EVALIDATE, path,
                                     "unknown constraint (expected placement, capacity, affinity, "
                                     "faultDomain, upgradeDomain or preferredLocation)");
    }
    return rc;
}

int cv__cluster_settings_load(cv__cluster_ld_t *ld, const json_t *manifest)
{
    const json_t *settings;
    int rc = cv__cluster_get_object(ld, manifest, "", "settings", &settings);
    if (rc || !settings)
        return rc;
    rc = cv__cluster_check_keys(ld, settings, "settings", settings_keys);
    if (!rc)
        rc = load_percentages(ld, settings, "nodeBufferPercentage", cv__cluster_set_buffer);
    if (!rc)
        rc = load_percentages(ld, settings, "nodeOverbookingPercentage", cv__cluster_set_overbook);
    return rc ? rc : load_priorities(ld, settings);
}

/* ------------------------------------------------------------------------ */
/* The live placement engine's settings                                     */
/* ------------------------------------------------------------------------ */

int cv__cluster_live_check(const cv__cluster_ld_t *ld, const json_t *manifest)
{
    static const char *const keys[] = {"downGraceSeconds",       "fenceMarginMs",
                                       "blocklistAfterFailures", "blocklistMinutes",
                                       "moveHandoverSeconds",    NULL};
    const json_t *live;
    int rc = cv__cluster_get_object(ld, manifest, "", "live", &live);
    if (rc || !live)
        return rc;
    rc = cv__cluster_check_keys(ld, live, "live", keys);
    for (size_t i = 0; !rc && keys[i]; i++) {
        const json_t *v = cv__cluster_member(live, keys[i]);
        char path[CV__CLUSTER_PATH_MAX];
        double d;
        if (!v)
            continue;
        cv__cluster_path_key(path, sizeof(path), "live", keys[i]);
        rc = cv__cluster_num_value(ld, v, path, &d);
        if (!rc && d < 0)
            rc = cv__cluster_err(ld, CV_EVALIDATE, path, "expected a number of 0 or more");
    }
    return rc;
}

/* ------------------------------------------------------------------------ */
/* The cluster resource manager's settings                                  */
/* ------------------------------------------------------------------------ */

int cv__cluster_crm_check(const cv__cluster_ld_t *ld, const json_t *manifest)
{
    char err[768];
    json_t *settings = cv_balance_settings(manifest, err, sizeof(err));
    if (!settings)
        return cv__cluster_err(ld, CV_EVALIDATE, "", "%s", err);
    json_decref(settings);
    return 0;
}
