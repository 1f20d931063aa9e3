/*
 * The fence guard's rules (agent_guard.h): which processes it guards, and
 * when the agent's proof of life is too old. Pure.
 */
#include "agent_guard.h"

json_t *cv_guard_targets(const json_t *states)
{
    json_t *out = json_array();
    size_t i, j;
    const json_t *s, *t;
    json_array_foreach(states, i, s)
    {
        if (!json_is_true(json_object_get(json_object_get(s, "spec"), "stateful")) ||
            json_is_true(json_object_get(s, "stopped")))
            continue;
        json_array_foreach(json_object_get(s, "tasks"), j, t)
        {
            json_int_t pid = json_integer_value(json_object_get(t, "pid"));
            if (pid > 0)
                json_array_append_new(out, json_pack("{s:I, s:O}", "pid", pid, "start_time",
                                                     json_object_get(t, "start_time")));
        }
    }
    return out;
}

bool cv_guard_stale(double touched, double now, int fence_ms)
{
    return touched > 0 && (now - touched) * 1000 > fence_ms;
}
