#include "agent_report.h"

#include <math.h>
#include <string.h>
#include <strings.h>

const char *cv_rstate_name(cv_replica_state_t s)
{
    static const char *const names[] = {
#define XX(name, text) text,
        CV_RSTATE_MAP(XX)
#undef XX
    };
    return (unsigned)s < CV_RSTATE__COUNT ? names[s] : "unknown";
}

cv_metric_kind_t cv_metric_kind(const char *name)
{
    size_t n = strlen(name);
    if (strncmp(name, "Memory", 6) == 0 || strncmp(name, "memory", 6) == 0 ||
        (n >= 2 && strcmp(name + n - 2, "MB") == 0))
        return CV_METRIC_MEMORY;
    if (strncasecmp(name, "cpu", 3) == 0)
        return CV_METRIC_CPU;
    return CV_METRIC_DECLARED;
}

json_t *cv_report_load(const cv_report_t *r)
{
    json_t *load = json_object();
    const char *metric;
    const json_t *v;
    json_object_foreach((json_t *)r->declared, metric, v)
    {
        cv_metric_kind_t kind = cv_metric_kind(metric);
        json_t *value;
        if (r->measured && kind == CV_METRIC_MEMORY)
            value = json_integer((json_int_t)ceil(r->rss_mb));
        else if (r->measured && kind == CV_METRIC_CPU)
            value = json_real(round(r->cpu_cores * 100) / 100);
        else
            value = json_deep_copy(v);
        json_object_set_new(load, metric, value);
    }
    json_object_foreach((json_t *)r->reported, metric, v)
    {
        if (json_is_number(v))
            json_object_set_new(load, metric, json_deep_copy(v));
    }
    return load;
}

json_t *cv_report_json(const cv_report_t *r)
{
    json_t *ports = r->ports ? json_deep_copy(r->ports) : json_object();
    return json_pack("{s:s, s:s, s:I, s:I, s:f, s:f, s:i, s:s, s:s, s:s, s:o, s:o, s:b, s:s}",
                     "rid", r->rid, "state", cv_rstate_name(r->state), "pid", (json_int_t)r->pid,
                     "start_time", (json_int_t)r->start_time, "started", r->started, "since",
                     r->since, "restarts", r->restarts, "reason", r->reason ? r->reason : "",
                     "exit", r->exit ? r->exit : "", "address", r->address ? r->address : "",
                     "ports", ports, "load", cv_report_load(r), "gave_up", r->gave_up, "digest",
                     r->digest ? r->digest : "");
}

void cv_report_load_add(json_t *sum, const json_t *load)
{
    const char *metric;
    const json_t *v;
    json_object_foreach((json_t *)load, metric, v)
    {
        if (!json_is_number(v))
            continue;
        const json_t *old = json_object_get(sum, metric);
        double total = json_number_value(v) + (old ? json_number_value(old) : 0);
        bool whole = (!old || json_is_integer(old)) && json_is_integer(v);
        json_object_set_new(sum, metric,
                            whole ? json_integer((json_int_t)total)
                                  : json_real(round(total * 100) / 100));
    }
}
