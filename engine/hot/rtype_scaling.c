/*
 * rtype_scaling — Heat's scaling arithmetic (cv_scaling.h), written after
 * heat/scaling/scalingutil.py and heat/scaling/cooldown.py.
 */
#include "cv_scaling.h"
#include "cv_rtype.h"
#include "cv__rtype_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

bool cv_scaling_type_known(const char *type)
{
    static const char *const types[] = {CV_SCALING_CHANGE,  CV_SCALING_EXACT,
                                        CV_SCALING_PERCENT, "ChangeInCapacity",
                                        "ExactCapacity",    "PercentChangeInCapacity"};
    for (size_t i = 0; type && i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(type, types[i]) == 0)
            return true;
    return false;
}

/* Heat's _get_minimum_adjustment: a step smaller than min_step grows to it. */
static long long at_least(long long adjustment, long long min_step)
{
    if (min_step > 0 && min_step > llabs(adjustment))
        return adjustment > 0 ? min_step : -min_step;
    return adjustment;
}

/* A percent change in members: below one member it rounds away from zero
 * (any change moves at least one), above it towards zero. */
static long long percent_delta(long long current, double percent)
{
    double delta = (double)current * percent / 100.0;
    if (fabs(delta) < 1.0)
        return (long long)(delta > 0.0 ? ceil(delta) : floor(delta));
    return (long long)(delta > 0.0 ? floor(delta) : ceil(delta));
}

long long cv_scaling_new_capacity(long long current, double adjustment, const char *type,
                                  long long min_step, long long minimum, long long maximum)
{
    long long capacity;
    if (strcmp(type, CV_SCALING_CHANGE) == 0 || strcmp(type, "ChangeInCapacity") == 0)
        capacity = current + (long long)adjustment;
    else if (strcmp(type, CV_SCALING_EXACT) == 0 || strcmp(type, "ExactCapacity") == 0)
        capacity = (long long)adjustment;
    else
        capacity = current + at_least(percent_delta(current, adjustment), min_step);
    if (capacity > maximum)
        return maximum;
    if (capacity < minimum)
        return minimum;
    return capacity;
}

int cv_scaling_allowed(const json_t *data, double now, double cooldown, char *reason, size_t size)
{
    if (json_object_get(data, "scaling")) {
        snprintf(reason, size, "due to scaling activity");
        return 1;
    }
    if (now < cv__rtype_data_number(data, "cooldown_end", 0)) {
        char text[64];
        json_t *n =
            cooldown == floor(cooldown) ? json_integer((json_int_t)cooldown) : json_real(cooldown);
        cv_format_number(n, text, sizeof(text));
        json_decref(n);
        snprintf(reason, size, "due to cooldown, cooldown %s", text);
        return 1;
    }
    return 0;
}

bool cv_scaling_needs_update(long long target, long long current, long long updated)
{
    return !(updated >= current && current == target);
}

static long long min3(long long a, long long b, long long c)
{
    long long m = a < b ? a : b;
    return m < c ? m : c;
}

void cv_scaling_next_batch(long long target, long long current, long long updated,
                           long long batch_size, long long min_in_service, long long *new_size,
                           long long *batch)
{
    long long min_size = min3(min_in_service, target, current);
    long long left = target - updated > 0 ? target - updated : 0;
    long long size = batch_size < left ? batch_size : left;
    long long kept = current < target - size ? current : target - size;
    *new_size = size + (kept > min_size ? kept : min_size);
    *batch = size;
}

json_t *cv_scaling_batches(long long target, long long capacity, long long batch_size,
                           long long min_in_service)
{
    json_t *out = json_array();
    long long updated = 0;
    while (cv_scaling_needs_update(target, capacity, updated)) {
        long long size, batch;
        cv_scaling_next_batch(target, capacity, updated, batch_size, min_in_service, &size, &batch);
        json_array_append_new(out, json_pack("[I, I]", (json_int_t)size, (json_int_t)batch));
        if (batch == 0 && size == capacity)
            break; /* no progress: Heat's loop would not end either */
        capacity = size;
        updated += batch;
    }
    return out;
}
