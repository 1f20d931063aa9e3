/*
 * A ResourceGroup's update_policy rolling_update (Heat's
 * _try_rolling_update, _replace and _get_batches in
 * heat/engine/resources/openstack/heat/resource_group.py): a changed
 * resource_def reaches the members in batches of at most max_batch_size,
 * highest names first, with pause_time seconds between two batches.
 *
 * As in Heat, each batch is one update of the child stack: the group's
 * action is a walk (cv_rtype.h) whose steps are the child's members after
 * each batch (cv__group_walk_plan: Heat's arithmetic, cv_scaling.h, including
 * the temporary members above count that keep min_in_service members in
 * service, created by one step and deleted by a later one). The pauses are
 * the walk's, not resources of the child: it holds only members.
 *
 * data.applied_def is the resource_def the child was last defined with;
 * data.walk the walk under way ("from": the resource_def before it).
 */
#include "cv_base.h"
#include "cv_rtype.h"
#include "cv_scaling.h"
#include "cv__rtype_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Heat's default stack_action_timeout: Converge's stacks have no timeout of
 * their own, so Heat's check of the pauses against it uses the default. */
#define HEAT_STACK_TIMEOUT_SECS 3600.0

json_t *cv__group_rolling_batches(long long targ, long long curr, long long size, long long min)
{
    json_t *out = json_array();
    long long updated = 0;
    while (cv_scaling_needs_update(targ, curr, updated)) {
        long long cap, total;
        cv_scaling_next_batch(targ, curr, updated, size, min, &cap, &total);
        json_array_append_new(out, json_pack("[I, I]", (json_int_t)cap, (json_int_t)total));
        /* Members above both sizes are Heat's temporary ones: not updated. */
        long long above = cap - (curr > targ ? curr : targ);
        long long progress = total - (above > 0 ? above : 0);
        if (progress <= 0 && cap == curr)
            break; /* no progress: Heat's loop would not end either */
        updated += progress;
        curr = cap;
    }
    return out;
}

int cv__group_update_timeout(size_t nbatches, double pause, double timeout_secs, double *left)
{
    double total = pause * (double)(nbatches > 1 ? nbatches - 1 : 0);
    if (total >= timeout_secs)
        return -1;
    *left = timeout_secs - total;
    return 0;
}

/* ---- Heat's walk: the nested template of every step ---- */

/* The strings of `list` as the keys of a new object: a set to look names up. */
static json_t *set_of(const json_t *list)
{
    json_t *set = json_object();
    size_t i;
    const json_t *v;
    json_array_foreach(list, i, v)
    {
        if (json_is_string(v))
            json_object_set_new(set, json_string_value(v), json_true());
    }
    return set;
}

/* Heat's _resource_names(cap): the first `cap` names "0", "1", ... that are
 * not skipped (removal_policies), as a name -> position object. */
static json_t *first_names(long long cap, const json_t *skipped)
{
    json_t *names = json_object();
    for (long long i = 0, n = 0; n < cap; i++) {
        char name[24];
        snprintf(name, sizeof(name), "%lld", i);
        if (!json_object_get(skipped, name))
            json_object_set_new(names, name, json_integer(n++));
    }
    return names;
}

typedef struct ranked {
    const json_t *member; /* [name, new] */
    long long key;        /* the priority, or the name's number */
    size_t seq;           /* the position before sorting: the sort is stable */
} ranked_t;

static int by_key(const void *a, const void *b)
{
    const ranked_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* _assemble_for_rolling_update's replace_priority: a member that leaves
 * goes first (0), then the highest names, the temporary ones last. */
static long long priority(const json_t *names, const char *name, long long targ, long long cap)
{
    const json_t *at = json_object_get(names, name);
    long long i = at ? (long long)json_integer_value(at) : -1;
    return i < 0 ? 0 : i < targ ? targ - i : cap;
}

/* The members of `state` ([name, new] pairs, oldest first) that are not
 * skipped, stably sorted by priority, into `out` (room for all); returns
 * how many. */
static size_t by_priority(const json_t *state, const json_t *skipped, const json_t *names,
                          long long targ, long long cap, ranked_t *out)
{
    size_t n = 0, i;
    const json_t *m;
    json_array_foreach(state, i, m)
    {
        const char *name = json_string_value(json_array_get(m, 0));
        if (json_object_get(skipped, name))
            continue;
        out[n] = (ranked_t){m, priority(names, name, targ, cap), n};
        n++;
    }
    qsort(out, n, sizeof(*out), by_key);
    return n;
}

/* Appends to `out` as new members the first `create` names of `names` (in
 * their order) that no member of `state` has. */
static void add_created(json_t *out, const json_t *names, const json_t *state, long long create)
{
    json_t *taken = json_object();
    size_t i;
    const json_t *m;
    json_array_foreach(state, i, m)
    {
        json_object_set_new(taken, json_string_value(json_array_get(m, 0)), json_true());
    }
    const char **free_names = calloc(json_object_size(names) + 1, sizeof(*free_names));
    const char *name;
    const json_t *at;
    json_object_foreach((json_t *)names, name, at)
    {
        if (free_names && !json_object_get(taken, name))
            free_names[json_integer_value(at)] = name;
    }
    for (size_t k = 0; free_names && create > 0 && k < json_object_size(names); k++) {
        if (free_names[k]) {
            json_array_append_new(out, json_pack("[s, b]", free_names[k], true));
            create--;
        }
    }
    free(free_names);
    json_decref(taken);
}

json_t *cv__group_walk_step(const json_t *state, const json_t *skip, long long targ, long long cap,
                            long long upd)
{
    ranked_t *sorted = calloc(json_array_size(state) + 1, sizeof(*sorted));
    if (!sorted)
        return NULL;
    json_t *skipped = set_of(skip), *names = first_names(cap, skipped), *out = json_array();
    size_t n = by_priority(state, skipped, names, targ, cap, sorted);
    /* scaling/template.py's member_definitions: the last `cap` members stay */
    size_t keep = n > (size_t)cap ? (size_t)cap : n;
    long long create = cap - (long long)keep, replace = upd - create;
    for (size_t i = n - keep; i < n; i++) {
        const json_t *m = sorted[i].member;
        bool is_new = json_is_true(json_array_get(m, 1));
        if (!is_new && replace > 0) {
            replace--;
            is_new = true;
        }
        json_array_append_new(out, json_pack("[O, b]", json_array_get(m, 0), is_new));
    }
    add_created(out, names, state, create);
    free(sorted);
    json_decref(names);
    json_decref(skipped);
    return out;
}

/* [name, new] pairs ordered by the number of the name: Heat's members by
 * creation time, names created together in name order. */
static json_t *sorted_by_name(const json_t *members)
{
    size_t n = json_array_size(members), i;
    ranked_t *r = calloc(n + 1, sizeof(*r));
    const json_t *m;
    json_array_foreach(members, i, m)
    {
        if (r)
            r[i] = (ranked_t){m, strtoll(json_string_value(json_array_get(m, 0)), NULL, 10), i};
    }
    if (r)
        qsort(r, n, sizeof(*r), by_key);
    json_t *out = json_array();
    for (i = 0; r && i < n; i++)
        json_array_append(out, (json_t *)r[i].member);
    free(r);
    return out;
}

/* The members after `batch` ([cap, upd]) from `state`, in name order;
 * NULL when out of memory. */
static json_t *after_batch(const json_t *state, const json_t *skip, long long count,
                           const json_t *batch)
{
    json_t *next =
        cv__group_walk_step(state, skip, count, json_integer_value(json_array_get(batch, 0)),
                            json_integer_value(json_array_get(batch, 1)));
    json_t *sorted = next ? sorted_by_name(next) : NULL;
    json_decref(next);
    return sorted;
}

json_t *cv__group_walk_plan(const json_t *members, const json_t *skip, long long count,
                            long long size, long long min)
{
    long long curr = 0;
    size_t i;
    const json_t *m;
    json_array_foreach(members, i, m)
    {
        curr += !cv__group_contains(skip, json_string_value(json_array_get(m, 0)));
    }
    json_t *batches = cv__group_rolling_batches(count, curr, size, min);
    json_t *first = json_array_size(batches)
                        ? after_batch(members, skip, count, json_array_get(batches, 0))
                        : json_array();
    if (!batches || !first) {
        json_decref(batches);
        json_decref(first);
        return NULL;
    }
    return json_pack("{s:I, s:i, s:o, s:o, s:i, s:I}", "steps",
                     (json_int_t)json_array_size(batches), "at", 0, "batches", batches, "state",
                     first, "state_at", 0, "count", (json_int_t)count);
}

const json_t *cv__group_walk_current(json_t *walk, const json_t *skip)
{
    json_int_t at = json_integer_value(json_object_get(walk, "at"));
    json_int_t have = json_integer_value(json_object_get(walk, "state_at"));
    long long count = json_integer_value(json_object_get(walk, "count"));
    const json_t *batches = json_object_get(walk, "batches");
    while (have < at && (size_t)have + 1 < json_array_size(batches)) {
        json_t *next = after_batch(json_object_get(walk, "state"), skip, count,
                                   json_array_get(batches, (size_t)have + 1));
        if (!next)
            return NULL;
        json_object_set_new(walk, "state", next);
        json_object_set_new(walk, "state_at", json_integer(++have));
    }
    return have == at ? json_object_get(walk, "state") : NULL;
}

json_t *cv__group_step_template(const json_t *new_def, const json_t *old_def, const char *var,
                                const json_t *step, const json_t *attr_names)
{
    json_t *resources = json_object(), *names = json_array();
    size_t i;
    const json_t *m;
    json_array_foreach(step, i, m)
    {
        const char *name = json_string_value(json_array_get(m, 0));
        const json_t *def = json_is_true(json_array_get(m, 1)) || !old_def ? new_def : old_def;
        json_object_set_new(resources, name, cv__group_member(def, var, name));
        json_array_append_new(names, json_string(name));
    }
    json_t *tpl = json_pack("{s:s, s:o, s:o}", "heat_template_version", "2015-04-30", "resources",
                            resources, "outputs", cv__group_outputs(names, attr_names));
    json_decref(names);
    return tpl;
}

/* The members before this definition that the new blacklist leaves: the
 * group's current capacity in Heat's _replace. */
static json_t *current_members(const json_t *data, const json_t *blacklist)
{
    json_t *out = json_array();
    size_t i;
    const json_t *n;
    json_array_foreach(json_object_get(data, "names"), i, n)
    {
        if (!cv__group_contains(blacklist, json_string_value(n)))
            json_array_append(out, (json_t *)n);
    }
    return out;
}

/* A walk from `current` (the members before, all of the old definition)
 * to `count` members under `policy`: Heat's steps, one child update each,
 * pause_time apart (rtype_nested.c). Non-zero with errstr when the policy
 * is invalid or its pauses exceed the stack timeout (Heat's). A walk of one
 * step is no walk: the child is updated at once. */
static int plan(const json_t *policy, const json_t *current, const json_t *blacklist,
                long long count, const json_t *from, json_t *data, char *errstr, size_t errstr_size)
{
    double size, pause, min;
    int rc = cv__group_policy(policy, "rolling_update", &size, &pause, &min, errstr, errstr_size);
    if (rc)
        return rc;
    json_t *members = json_array();
    size_t i;
    const json_t *n;
    json_array_foreach(current, i, n)
    {
        json_array_append_new(members, json_pack("[O, b]", n, false));
    }
    json_t *walk = cv__group_walk_plan(members, blacklist, count, (long long)size, (long long)min);
    json_decref(members);
    if (!walk)
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
    json_int_t steps = json_integer_value(json_object_get(walk, "steps"));
    double left;
    if (cv__group_update_timeout((size_t)steps, pause, HEAT_STACK_TIMEOUT_SECS, &left)) {
        json_decref(walk);
        return cv_seterr(errstr, errstr_size, CV_EVALIDATE,
                         "The current update policy will result in stack update timeout.");
    }
    if (steps <= 1) {
        json_decref(walk);
        json_object_del(data, "walk");
        return 0;
    }
    json_object_set_new(walk, "pause", json_real(pause));
    json_object_set(walk, "from", (json_t *)from);
    json_object_set_new(data, "walk", walk);
    return 0;
}

int cv__group_rolling_update(const json_t *props, const json_t *names, const json_t *blacklist,
                             json_t *data, char *errstr, size_t errstr_size)
{
    const json_t *def = json_object_get(props, "resource_def");
    const json_t *applied = json_object_get(data, "applied_def");
    const json_t *policy = json_object_get(
        json_object_get(json_object_get(data, "facade"), "update_policy"), "rolling_update");
    double unused[3];
    /* Checked whenever the group is defined, as Heat validates the policy. */
    int rc = json_is_object(policy) ? cv__group_policy(policy, "rolling_update", &unused[0],
                                                       &unused[1], &unused[2], errstr, errstr_size)
                                    : 0;
    if (rc)
        return rc;
    json_object_del(data, "rollout"); /* the dependencies of an earlier release */
    if (applied && !json_equal((json_t *)applied, (json_t *)def)) {
        json_t *current = current_members(data, blacklist);
        if (json_is_object(policy) && json_array_size(current))
            rc = plan(policy, current, blacklist, (long long)json_array_size(names), applied, data,
                      errstr, errstr_size);
        else /* without the policy, Heat updates every member at once */
            json_object_del(data, "walk");
        json_decref(current);
    }
    if (rc)
        return rc;
    json_object_set_new(data, "applied_def", json_deep_copy(def));
    return 0;
}
