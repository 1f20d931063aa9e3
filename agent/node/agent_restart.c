#include "agent_restart.h"

#include "cv_base.h"

#include <string.h>

static int number(const json_t *obj, const char *path, const char *key, double *out, char *errstr,
                  size_t errstr_size)
{
    const json_t *v = json_object_get(obj, key);
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_number(v) || json_number_value(v) < 0)
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "%s.%s: expected a non-negative number of seconds", path, key);
    *out = json_number_value(v);
    return 0;
}

int cv_restart_parse(const json_t *obj, const char *path, cv_restart_policy_t *out, char *errstr,
                     size_t errstr_size)
{
    static const char *const names[] = {"Never", "Always", "OnFailure"};
    *out = (cv_restart_policy_t){CV_RESTART_ALWAYS, 1, 1, 0};
    if (!obj || json_is_null(obj))
        return 0;
    if (!json_is_object(obj))
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE, "%s: expected an object", path);
    const json_t *policy = json_object_get(obj, "policy");
    if (policy && !json_is_null(policy)) {
        const char *s = json_string_value(policy);
        int k = -1;
        for (int i = 0; s && i < 3; i++)
            if (strcmp(s, names[i]) == 0)
                k = i;
        if (k < 0)
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s.policy: expected Never, Always or OnFailure", path);
        out->kind = (cv_restart_kind_t)k;
    }
    int rc = number(obj, path, "interval", &out->interval, errstr, errstr_size);
    if (!rc)
        rc = number(obj, path, "backoff", &out->backoff, errstr, errstr_size);
    if (rc)
        return rc;
    const json_t *max = json_object_get(obj, "max_times");
    if (max && !json_is_null(max)) {
        if (!json_is_integer(max) || json_integer_value(max) < 0 ||
            json_integer_value(max) > 1000000)
            return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                             "%s.max_times: expected a non-negative integer", path);
        out->max_times = (int)json_integer_value(max);
    }
    return 0;
}

cv_restart_action_t cv_restart_decide(const cv_restart_policy_t *p, int restarts, bool failure,
                                      double *delay_s)
{
    *delay_s = 0;
    if (p->kind == CV_RESTART_NEVER)
        return failure ? CV_RESTART_STAY_FAILED : CV_RESTART_DONE;
    if (p->kind == CV_RESTART_ON_FAILURE && !failure)
        return CV_RESTART_DONE;
    if (p->max_times > 0 && restarts >= p->max_times)
        return CV_RESTART_GIVE_UP;
    *delay_s = p->interval + (double)restarts * p->backoff;
    return CV_RESTART_AFTER;
}

cv_restart_action_t cv_restart_decide_start_error(const cv_restart_policy_t *p)
{
    return p->kind == CV_RESTART_NEVER ? CV_RESTART_STAY_FAILED : CV_RESTART_GIVE_UP;
}

int cv_restart_counter(int restarts, double healthy_since, double now, double reset_s)
{
    if (healthy_since > 0 && now - healthy_since >= reset_s)
        return 0;
    return restarts;
}
