/*
 * Specification of Heat's walk of a ResourceGroup through a batched update
 * (cv__group_walk_plan): the members of the nested stack after each of Heat's
 * nested updates, with Heat's temporary members. The scenarios are those of
 * Heat's heat/tests/openstack/heat/test_resource_group.py TestGetBatches,
 * checked as its test_assemble checks them: after the batch of size S the
 * members are "1".."S" ("0" is skipped), and the members with the new
 * definition are those of the batches so far that are still members.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv__rtype_internal.h"
#include "test_group_walk.h"
#include "test_json_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    long long targ, init, size, min;
    const char *batches_sq; /* Heat's [(size after, members updated, names)] */
} heat_batches_t;

/* TestGetBatches' scenarios verbatim. */
static const heat_batches_t heat_cases[] = {
    {"4_4_1_0", 4, 4, 1, 0, "[[4, 1, ['4']], [4, 1, ['3']], [4, 1, ['2']], [4, 1, ['1']]]"},
    {"4_4_1_4", 4, 4, 1, 4,
     "[[5, 1, ['5']], [5, 1, ['4']], [5, 1, ['3']], [5, 1, ['2']], [5, 1, ['1']], [4, 0, []]]"},
    {"4_4_1_5", 4, 4, 1, 5,
     "[[5, 1, ['5']], [5, 1, ['4']], [5, 1, ['3']], [5, 1, ['2']], [5, 1, ['1']], [4, 0, []]]"},
    {"4_4_2_0", 4, 4, 2, 0, "[[4, 2, ['4', '3']], [4, 2, ['2', '1']]]"},
    {"4_4_2_4", 4, 4, 2, 4,
     "[[6, 2, ['6', '5']], [6, 2, ['4', '3']], [6, 2, ['2', '1']], [4, 0, []]]"},
    {"5_5_2_0", 5, 5, 2, 0, "[[5, 2, ['5', '4']], [5, 2, ['3', '2']], [5, 1, ['1']]]"},
    {"5_5_2_4", 5, 5, 2, 4,
     "[[6, 2, ['6', '5']], [6, 2, ['4', '3']], [6, 2, ['2', '1']], [5, 0, []]]"},
    {"3_3_2_0", 3, 3, 2, 0, "[[3, 2, ['3', '2']], [3, 1, ['1']]]"},
    {"3_3_2_4", 3, 3, 2, 4, "[[5, 2, ['5', '4']], [5, 2, ['3', '2']], [4, 1, ['1']], [3, 0, []]]"},
    {"4_4_4_0", 4, 4, 4, 0, "[[4, 4, ['4', '3', '2', '1']]]"},
    {"4_4_5_0", 4, 4, 5, 0, "[[4, 4, ['4', '3', '2', '1']]]"},
    {"4_4_4_1", 4, 4, 4, 1, "[[5, 4, ['5', '4', '3', '2']], [4, 1, ['1']]]"},
    {"4_4_6_1", 4, 4, 6, 1, "[[5, 4, ['5', '4', '3', '2']], [4, 1, ['1']]]"},
    {"4_4_4_2", 4, 4, 4, 2, "[[6, 4, ['6', '5', '4', '3']], [4, 2, ['2', '1']]]"},
    {"4_4_4_4", 4, 4, 4, 4,
     "[[8, 4, ['8', '7', '6', '5']], [8, 4, ['4', '3', '2', '1']], [4, 0, []]]"},
    {"4_4_5_6", 4, 4, 5, 6,
     "[[8, 4, ['8', '7', '6', '5']], [8, 4, ['4', '3', '2', '1']], [4, 0, []]]"},
    {"4_7_1_0", 4, 7, 1, 0, "[[4, 1, ['4']], [4, 1, ['3']], [4, 1, ['2']], [4, 1, ['1']]]"},
    {"4_7_1_4", 4, 7, 1, 4,
     "[[5, 1, ['4']], [5, 1, ['3']], [5, 1, ['2']], [5, 1, ['1']], [4, 0, []]]"},
    {"4_7_1_5", 4, 7, 1, 5,
     "[[5, 1, ['4']], [5, 1, ['3']], [5, 1, ['2']], [5, 1, ['1']], [4, 0, []]]"},
    {"4_7_2_0", 4, 7, 2, 0, "[[4, 2, ['4', '3']], [4, 2, ['2', '1']]]"},
    {"4_7_2_4", 4, 7, 2, 4, "[[6, 2, ['4', '3']], [6, 2, ['2', '1']], [4, 0, []]]"},
    {"5_7_2_0", 5, 7, 2, 0, "[[5, 2, ['5', '4']], [5, 2, ['3', '2']], [5, 1, ['1']]]"},
    {"5_7_2_4", 5, 7, 2, 4, "[[6, 2, ['5', '4']], [6, 2, ['3', '2']], [5, 1, ['1']]]"},
    {"4_7_4_4", 4, 7, 4, 4, "[[8, 4, ['8', '4', '3', '2']], [5, 1, ['1']], [4, 0, []]]"},
    {"4_7_5_6", 4, 7, 5, 6, "[[8, 4, ['8', '4', '3', '2']], [5, 1, ['1']], [4, 0, []]]"},
    {"6_4_1_0", 6, 4, 1, 0,
     "[[5, 1, ['5']], [6, 1, ['6']], [6, 1, ['4']], [6, 1, ['3']], [6, 1, ['2']], [6, 1, ['1']]]"},
    {"6_4_1_4", 6, 4, 1, 4,
     "[[5, 1, ['5']], [6, 1, ['6']], [6, 1, ['4']], [6, 1, ['3']], [6, 1, ['2']], [6, 1, ['1']]]"},
    {"6_4_1_5", 6, 4, 1, 5,
     "[[5, 1, ['5']], [6, 1, ['6']], [6, 1, ['4']], [6, 1, ['3']], [6, 1, ['2']], [6, 1, ['1']]]"},
    {"6_4_2_0", 6, 4, 2, 0, "[[6, 2, ['5', '6']], [6, 2, ['4', '3']], [6, 2, ['2', '1']]]"},
    {"6_4_2_4", 6, 4, 2, 4, "[[6, 2, ['5', '6']], [6, 2, ['4', '3']], [6, 2, ['2', '1']]]"},
    {"6_5_2_0", 6, 5, 2, 0, "[[6, 2, ['6', '5']], [6, 2, ['4', '3']], [6, 2, ['2', '1']]]"},
    {"6_5_2_4", 6, 5, 2, 4, "[[6, 2, ['6', '5']], [6, 2, ['4', '3']], [6, 2, ['2', '1']]]"},
    {"6_3_2_0", 6, 3, 2, 0, "[[5, 2, ['4', '5']], [6, 2, ['6', '3']], [6, 2, ['2', '1']]]"},
    {"6_3_2_4", 6, 3, 2, 4, "[[5, 2, ['4', '5']], [6, 2, ['6', '3']], [6, 2, ['2', '1']]]"},
    {"6_4_4_0", 6, 4, 4, 0, "[[6, 4, ['5', '6', '4', '3']], [6, 2, ['2', '1']]]"},
    {"6_4_5_0", 6, 4, 5, 0, "[[6, 5, ['5', '6', '4', '3', '2']], [6, 1, ['1']]]"},
    {"6_4_4_1", 6, 4, 4, 1, "[[6, 4, ['5', '6', '4', '3']], [6, 2, ['2', '1']]]"},
    {"6_4_6_1", 6, 4, 6, 1, "[[7, 6, ['5', '6', '7', '4', '3', '2']], [6, 1, ['1']]]"},
    {"6_4_4_2", 6, 4, 4, 2, "[[6, 4, ['5', '6', '4', '3']], [6, 2, ['2', '1']]]"},
    {"6_4_4_4", 6, 4, 4, 4,
     "[[8, 4, ['8', '7', '6', '5']], [8, 4, ['4', '3', '2', '1']], [6, 0, []]]"},
    {"6_4_5_6", 6, 4, 5, 6,
     "[[9, 5, ['9', '8', '7', '6', '5']], [10, 4, ['10', '4', '3', '2']], [7, 1, ['1']], [6, 0, "
     "[]]]"},
};

#define NCASES (sizeof(heat_cases) / sizeof(heat_cases[0]))

/* test_assemble's resources: "0".."init" with the old definition. */
static json_t *old_members(long long init)
{
    json_t *a = json_array();
    for (long long i = 0; i <= init; i++) {
        char s[24];
        snprintf(s, sizeof(s), "%lld", i);
        json_array_append_new(a, json_pack("[s, b]", s, false));
    }
    return a;
}

static bool has(const json_t *names, const char *name)
{
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
    {
        if (strcmp(json_string_value(n), name) == 0)
            return true;
    }
    return false;
}

/* Checks one step against test_assemble's expectations; `updated` is the
 * running set (all_updated_names), brought up to date. */
static void check_step(const char *scenario, size_t k, const json_t *step, long long size,
                       const json_t *batch_names, json_t *updated)
{
    if ((long long)json_array_size(step) != size)
        fail_msg("%s step %zu: %zu members, Heat has %lld: %s", scenario, k, json_array_size(step),
                 size, json_dumps(step, JSON_COMPACT));
    json_t *kept = json_array();
    size_t i;
    const json_t *m, *n;
    json_array_foreach(step, i, m)
    {
        char want[24];
        snprintf(want, sizeof(want), "%zu", i + 1);
        const char *name = json_string_value(json_array_get(m, 0));
        if (strcmp(name, want) != 0)
            fail_msg("%s step %zu: member %zu is %s, Heat's is %s", scenario, k, i, name, want);
        if (has(updated, name) || has(batch_names, name))
            json_array_append_new(kept, json_string(name));
    }
    json_array_clear(updated);
    json_array_extend(updated, kept);
    json_decref(kept);
    json_array_foreach(step, i, m)
    {
        const char *name = json_string_value(json_array_get(m, 0));
        if (json_is_true(json_array_get(m, 1)) != has(updated, name))
            fail_msg("%s step %zu: member %s %s the new definition; Heat's walk %s", scenario, k,
                     name, json_is_true(json_array_get(m, 1)) ? "has" : "lacks",
                     has(updated, name) ? "gives it" : "does not");
    }
    (void)n;
}

static void test_each_step_is_heats_nested_template(void **state)
{
    (void)state;
    json_t *skip = js("['0']");
    for (size_t c = 0; c < NCASES; c++) {
        const heat_batches_t *h = &heat_cases[c];
        json_t *want = js(h->batches_sq), *members = old_members(h->init);
        json_t *steps = walk_steps(members, skip, h->targ, h->size, h->min);
        if (json_array_size(steps) != json_array_size(want))
            fail_msg("%s: %zu steps, Heat has %zu", h->name, json_array_size(steps),
                     json_array_size(want));
        json_t *updated = json_array();
        size_t k;
        const json_t *b;
        json_array_foreach(want, k, b)
        {
            check_step(h->name, k, json_array_get(steps, k),
                       json_integer_value(json_array_get(b, 0)), json_array_get(b, 2), updated);
        }
        json_decref(updated);
        json_decref(steps);
        json_decref(members);
        json_decref(want);
    }
    json_decref(skip);
}

/* Heat's functional test_resource_group_update_with_adjusted_capacity:
 * 10 members, max_batch_size 4, min_in_service 8. The first nested update
 * grows the group to 12 (temporary members 10 and 11, with 9 and 8 updated),
 * the last one removes the temporary members again. */
static void test_min_in_service_creates_then_removes_temporary_members(void **state)
{
    (void)state;
    json_t *members = json_array(), *skip = json_array();
    for (int i = 0; i < 10; i++) {
        char s[8];
        snprintf(s, sizeof(s), "%d", i);
        json_array_append_new(members, json_pack("[s, b]", s, false));
    }
    json_t *steps = walk_steps(members, skip, 10, 4, 8);
    assert_json_sq(steps, "[[['0', false], ['1', false], ['2', false], ['3', false], ['4', false],"
                          "  ['5', false], ['6', false], ['7', false], ['8', true], ['9', true],"
                          "  ['10', true], ['11', true]],"
                          " [['0', false], ['1', false], ['2', false], ['3', false], ['4', true],"
                          "  ['5', true], ['6', true], ['7', true], ['8', true], ['9', true],"
                          "  ['10', true], ['11', true]],"
                          " [['0', true], ['1', true], ['2', true], ['3', true], ['4', true],"
                          "  ['5', true], ['6', true], ['7', true], ['8', true], ['9', true],"
                          "  ['10', true], ['11', true]],"
                          " [['0', true], ['1', true], ['2', true], ['3', true], ['4', true],"
                          "  ['5', true], ['6', true], ['7', true], ['8', true], ['9', true]]]");
    json_decref(steps);
    json_decref(skip);
    json_decref(members);
}

/* batch_create (Heat's handle_create: _replace(0, max_batch_size, ...) on
 * an empty group): each step adds the next max_batch_size names. */
static void test_batch_create_adds_the_next_names_each_step(void **state)
{
    (void)state;
    json_t *none = json_array(), *skip = js("['1']");
    json_t *steps = walk_steps(none, skip, 5, 2, 0);
    assert_json_sq(steps, "[[['0', true], ['2', true]],"
                          " [['0', true], ['2', true], ['3', true], ['4', true]],"
                          " [['0', true], ['2', true], ['3', true], ['4', true], ['5', true]]]");
    json_decref(steps);
    json_decref(skip);
    json_decref(none);
}

/* A member removed by removal_policies leaves at the first step. */
static void test_a_removed_member_leaves_at_the_first_step(void **state)
{
    (void)state;
    json_t *members = js("[['0', false], ['1', false], ['2', false]]"), *skip = js("['1']");
    json_t *steps = walk_steps(members, skip, 2, 1, 0);
    assert_json_sq(steps, "[[['0', false], ['2', true]], [['0', true], ['2', true]]]");
    json_decref(steps);
    json_decref(skip);
    json_decref(members);
}

/* A step's nested template: the members whose turn came have the new
 * definition, the others keep the old one, each with its index put in. */
static void test_a_step_template_mixes_old_and_new_definitions(void **state)
{
    (void)state;
    json_t *new_def = js("{'type': 'OS::Heat::Value', 'properties': {'value': 'b-%index%'}}");
    json_t *old_def = js("{'type': 'OS::Heat::Value', 'properties': {'value': 'a-%index%'}}");
    json_t *step = js("[['0', false], ['1', true], ['4', true]]"), *attrs = js("['value']");
    json_t *tpl = cv__group_step_template(new_def, old_def, "%index%", step, attrs);
    assert_json_sq(json_object_get(tpl, "resources"),
                   "{'0': {'type': 'OS::Heat::Value', 'properties': {'value': 'a-0'}},"
                   " '1': {'type': 'OS::Heat::Value', 'properties': {'value': 'b-1'}},"
                   " '4': {'type': 'OS::Heat::Value', 'properties': {'value': 'b-4'}}}");
    assert_json_sq(json_object_get(json_object_get(tpl, "outputs"), "refs"),
                   "{'value': [{'get_resource': '0'}, {'get_resource': '1'},"
                   " {'get_resource': '4'}]}");
    json_decref(tpl);
    json_decref(attrs);
    json_decref(step);
    json_decref(old_def);
    json_decref(new_def);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_each_step_is_heats_nested_template),
        cmocka_unit_test(test_min_in_service_creates_then_removes_temporary_members),
        cmocka_unit_test(test_batch_create_adds_the_next_names_each_step),
        cmocka_unit_test(test_a_removed_member_leaves_at_the_first_step),
        cmocka_unit_test(test_a_step_template_mixes_old_and_new_definitions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
