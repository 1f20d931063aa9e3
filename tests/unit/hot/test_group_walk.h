/*
 * The steps of a group's walk (data.walk) as a test reads them: each step's
 * members by name, with "+" after those of the new definition when
 * `flags`. The walk keeps one step at a time; this works every step out on
 * a copy, as the engine's steps would.
 */
#ifndef TEST_GROUP_WALK_H
#define TEST_GROUP_WALK_H

#include "cv__rtype_internal.h"
#include "test_json_fixture.h"

#include <stdio.h>

static inline void assert_walk_steps(const json_t *data, bool flags, const char *want_sq)
{
    json_t *walk = json_deep_copy(json_object_get(data, "walk")), *got = json_array();
    json_int_t n = json_integer_value(json_object_get(walk, "steps"));
    const json_t *skip = json_object_get(data, "blacklist");
    for (json_int_t at = 0; at < n; at++) {
        json_object_set_new(walk, "at", json_integer(at));
        const json_t *step = cv__group_walk_current(walk, skip), *m;
        json_t *names = json_array();
        size_t j;
        json_array_foreach(step, j, m)
        {
            char one[32];
            snprintf(one, sizeof(one), "%s%s", json_string_value(json_array_get(m, 0)),
                     flags && json_is_true(json_array_get(m, 1)) ? "+" : "");
            json_array_append_new(names, json_string(one));
        }
        json_array_append_new(got, names);
    }
    assert_json_sq(got, want_sq);
    json_decref(got);
    json_decref(walk);
}

/* Every step of a walk planned as cv__group_walk_plan plans it: the
 * members after each, as a JSON list (NULL when out of memory). */
static inline json_t *walk_steps(const json_t *members, const json_t *skip, long long count,
                                 long long size, long long min)
{
    json_t *walk = cv__group_walk_plan(members, skip, count, size, min), *steps = json_array();
    json_int_t n = json_integer_value(json_object_get(walk, "steps"));
    for (json_int_t at = 0; walk && steps && at < n; at++) {
        json_object_set_new(walk, "at", json_integer(at));
        const json_t *state = cv__group_walk_current(walk, skip);
        if (!state) {
            json_decref(steps);
            steps = NULL;
            break;
        }
        json_array_append(steps, (json_t *)state);
    }
    if (!walk) {
        json_decref(steps);
        steps = NULL;
    }
    json_decref(walk);
    return steps;
}

#endif
