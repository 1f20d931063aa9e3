/*
 * cv_scaling — Heat's scaling arithmetic (heat/scaling/scalingutil.py and
 * cooldown.py), pure: the capacity an adjustment gives a group and whether
 * the group's cooldown lets it scale now. OS::Heat::AutoScalingGroup and
 * OS::Heat::ScalingPolicy use it; it is public so that its tests can run
 * Heat's own cases against it.
 */
#ifndef CV_SCALING_H
#define CV_SCALING_H

#include <jansson.h>
#include <stdbool.h>

/* The adjustment types Heat's ScalingPolicy allows, as it spells them. */
#define CV_SCALING_CHANGE "change_in_capacity"
#define CV_SCALING_EXACT "exact_capacity"
#define CV_SCALING_PERCENT "percent_change_in_capacity"

/* Whether `type` is one of the three (Heat's CFN spellings
 * ChangeInCapacity, ExactCapacity, PercentChangeInCapacity included). */
bool cv_scaling_type_known(const char *type);

/*
 * Heat's calculate_new_capacity: the capacity after `adjustment` of `type`
 * from `current`, kept within [minimum, maximum]. A percent change is
 * rounded away from zero below one member and towards zero above, then
 * raised to `min_step` (0: none) in magnitude.
 */
long long cv_scaling_new_capacity(long long current, double adjustment, const char *type,
                                  long long min_step, long long minimum, long long maximum);

/*
 * Heat's _check_scaling_allowed on a group's private data: 0 when the
 * group may scale at `now` (Unix seconds), or non-zero with Heat's reason
 * in `reason` ("due to scaling activity" while the previous scaling has not
 * ended, "due to cooldown, cooldown N" before data.cooldown_end).
 */
int cv_scaling_allowed(const json_t *data, double now, double cooldown, char *reason, size_t size);

/*
 * Heat's rolling_update.py, the batch arithmetic of a rolling update (a
 * group whose member definition changed): whether batches remain with
 * `updated` of `current` members holding the new definition and `target`
 * wanted, and the next batch — the group's size after it (more than the
 * target while min_in_service needs extra members) and how many members
 * get the new definition in it.
 */
bool cv_scaling_needs_update(long long target, long long current, long long updated);
void cv_scaling_next_batch(long long target, long long current, long long updated,
                           long long batch_size, long long min_in_service, long long *new_size,
                           long long *batch);

/*
 * Heat's _get_batches: every batch of a rolling update of `capacity`
 * members towards `target`, as a JSON list of [size after, members
 * changed] pairs (for the group types to build their rollouts on).
 */
json_t *cv_scaling_batches(long long target, long long capacity, long long batch_size,
                           long long min_in_service);

#endif
