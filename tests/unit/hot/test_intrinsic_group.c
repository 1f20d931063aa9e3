/*
 * get_attr paths into a group's attributes and members, as Heat's
 * get_attribute of ResourceGroup, ResourceChain and AutoScalingGroup reads
 * them, and what validation accepts and refuses of them (Heat's
 * validate_nested_stack with the outputs the paths need). The attributes
 * are the ones the group types build from their child's outputs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cv_base.h"
#include "cv_rtype.h"
#include "cv_template.h"
#include "test_json_fixture.h"
#include "test_util.h"

static char err[1024];
static json_t *resources; /* name -> {"id", "attrs"} */

static int lookup(void *ud, const char *name, const char **physical_id, const json_t **attributes)
{
    json_t *entry = json_object_get((json_t *)ud, name);
    if (!entry)
        return CV_ENOENT;
    *physical_id = json_string_value(json_object_get(entry, "id"));
    *attributes = json_object_get(entry, "attrs");
    return 0;
}

/* Adds resource `name` of group type `type` whose child's outputs and
 * private data are the given JSON (single-quoted). */
static void add_group(const char *name, const char *type, const char *outputs_sq,
                      const char *data_sq)
{
    const cv_rtype_t *t = cv_rtype_find(type);
    assert_non_null(t);
    json_t *outputs = js(outputs_sq), *data = js(data_sq);
    json_t *attrs = t->nested->attributes(outputs, data);
    json_object_set_new(resources, name, json_pack("{s:s, s:o}", "id", "stack-id", "attrs", attrs));
    json_decref(outputs);
    json_decref(data);
}

/* Two RandomString-like members "0" and "2" ("1" removed), a ResourceGroup
 * "g"; a chain "c" of two; an AutoScalingGroup "asg" of members "m4"
 * (oldest) and "m7". */
static int setup(void **state)
{
    (void)state;
    resources = json_object();
    add_group("g", "OS::Heat::ResourceGroup",
              "{'refs': ['id-0', 'id-2'], 'a.value': ['abc', 'xyz'],"
              " 'a.info': [{'k': [1, 2]}, {'k': [3, 4]}]}",
              "{'names': ['0', '2'], 'blacklist': ['9', '1', '10'], 'attrs': ['value', 'info']}");
    add_group("c", "OS::Heat::ResourceChain", "{'refs': ['c-0', 'c-1'], 'a.value': ['v0', 'v1']}",
              "{'names': ['0', '1'], 'attrs': ['value']}");
    add_group("asg", "OS::Heat::AutoScalingGroup",
              "{'refs': ['a-4', 'a-7'], 'a.value': ['p4', 'q7']}",
              "{'names': ['m4', 'm7'], 'attrs': ['value']}");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    json_decref(resources);
    return 0;
}

static json_t *resolve(const char *expr_sq)
{
    json_t *expr = js(expr_sq);
    cv_resolve_ctx_t ctx = {.resource = lookup, .ud = resources};
    err[0] = '\0';
    json_t *out = cv_intrinsic_resolve(expr, &ctx, "outputs.o.value", err, sizeof(err));
    json_decref(expr);
    return out;
}

static void assert_resolves(const char *expr_sq, const char *expected_sq)
{
    json_t *got = resolve(expr_sq);
    if (!got)
        fail_msg("%s failed: %s", expr_sq, err);
    json_t *want = js(expected_sq);
    if (!json_equal(got, want)) {
        char *g = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);
        fail_msg("%s gave %s, expected %s", expr_sq, g, expected_sq);
    }
    json_decref(got);
    json_decref(want);
}

static void assert_fails(const char *expr_sq, const char *message)
{
    json_t *got = resolve(expr_sq);
    if (got)
        fail_msg("%s resolved", expr_sq);
    assert_contains(err, "outputs.o.value: ");
    assert_contains(err, message);
}

/* ------------------------------------------------------------ ResourceGroup */

static void test_group_member_attr_path_applies_to_each_member(void **state)
{
    (void)state;
    assert_resolves("{'get_attr': ['g', 'value']}", "['abc', 'xyz']");
    assert_resolves("{'get_attr': ['g', 'value', 1]}", "['b', 'y']");
    assert_resolves("{'get_attr': ['g', 'info', 'k', 0]}", "[1, 3]");
    assert_resolves("{'get_attr': ['g', 'info', 'nope']}", "[null, null]");
}

static void test_group_resource_n_is_the_member_with_its_path(void **state)
{
    (void)state;
    assert_resolves("{'get_attr': ['g', 'resource.2']}", "'id-2'");
    assert_resolves("{'get_attr': ['g', 'resource.2.value']}", "'xyz'");
    assert_resolves("{'get_attr': ['g', 'resource.2.value', 0]}", "'x'");
    assert_resolves("{'get_attr': ['g', 'resource.2', 'value']}", "'xyz'");
    assert_resolves("{'get_attr': ['g', 'resource.0', 'info', 'k', 1]}", "2");
    assert_resolves("{'get_attr': ['g', 'resource.0.info', 'k']}", "[1, 2]");
}

static void test_group_missing_member_ref_is_an_error_its_attr_null(void **state)
{
    (void)state;
    assert_fails("{'get_attr': ['g', 'resource.1']}",
                 "Member '1' not found in group resource 'g'.");
    assert_resolves("{'get_attr': ['g', 'resource.1.value']}", "null");
    assert_resolves("{'get_attr': ['g', 'resource.5', 'value']}", "null");
}

static void test_group_attributes_needs_an_attribute(void **state)
{
    (void)state;
    assert_fails("{'get_attr': ['g', 'attributes']}",
                 "The Referenced Attribute (g attributes) is incorrect.");
    assert_resolves("{'get_attr': ['g', 'attributes', 'value']}", "{'0': 'abc', '2': 'xyz'}");
    assert_resolves("{'get_attr': ['g', 'attributes', 'info', 'k', 1]}", "{'0': 2, '2': 4}");
}

static void test_group_refs_takes_a_path_refs_map_and_removed_do_not(void **state)
{
    (void)state;
    assert_resolves("{'get_attr': ['g', 'refs', 1]}", "'id-2'");
    assert_resolves("{'get_attr': ['g', 'refs', 5]}", "null");
    assert_resolves("{'get_attr': ['g', 'refs_map']}", "{'0': 'id-0', '2': 'id-2'}");
    assert_resolves("{'get_attr': ['g', 'refs_map', '0']}", "{'0': 'id-0', '2': 'id-2'}");
    assert_resolves("{'get_attr': ['g', 'removed_rsrc_list', 0]}", "['1', '10', '9']");
}

static void test_group_removed_list_is_sorted_as_heat_keeps_it(void **state)
{
    (void)state;
    assert_resolves("{'get_attr': ['g', 'removed_rsrc_list']}", "['1', '10', '9']");
}

static void test_group_mark_is_not_among_all_attributes(void **state)
{
    (void)state;
    json_t *all = resolve("{'get_attr': ['g']}");
    assert_non_null(all);
    assert_null(json_object_get(all, CV_RTYPE_GROUP_KEY));
    assert_non_null(json_object_get(all, "refs"));
    json_decref(all);
}

/* ------------------------------------------------------------ ResourceChain */

static void test_chain_paths_as_a_group_missing_member_is_an_error(void **state)
{
    (void)state;
    assert_resolves("{'get_attr': ['c', 'resource.0']}", "'c-0'");
    assert_resolves("{'get_attr': ['c', 'resource.1', 'value']}", "'v1'");
    assert_resolves("{'get_attr': ['c', 'value', 0]}", "['v', 'v']");
    assert_resolves("{'get_attr': ['c', 'refs', 0]}", "'c-0'");
    assert_resolves("{'get_attr': ['c', 'attributes', 'value']}", "{'0': 'v0', '1': 'v1'}");
    assert_fails("{'get_attr': ['c', 'attributes']}",
                 "The Referenced Attribute (c attributes) is incorrect.");
    assert_fails("{'get_attr': ['c', 'resource.4.value']}",
                 "Member '4' not found in group resource 'c'.");
}

/* ------------------------------------------------------- AutoScalingGroup */

static void test_asg_resource_i_is_the_ith_oldest_member(void **state)
{
    (void)state;
    assert_resolves("{'get_attr': ['asg', 'resource.0']}", "'a-4'");
    assert_resolves("{'get_attr': ['asg', 'resource.1.value']}", "'q7'");
    assert_resolves("{'get_attr': ['asg', 'resource.-1', 'value', 0]}", "'q'");
    assert_fails("{'get_attr': ['asg', 'resource.2.value']}",
                 "Member '2' not found in group resource 'asg'.");
    assert_fails("{'get_attr': ['asg', 'resource.2']}",
                 "Member '2' not found in group resource 'asg'.");
}

static void test_asg_outputs_need_an_attribute_and_apply_the_path(void **state)
{
    (void)state;
    assert_resolves("{'get_attr': ['asg', 'outputs', 'value']}", "{'m4': 'p4', 'm7': 'q7'}");
    assert_resolves("{'get_attr': ['asg', 'outputs_list', 'value', 0]}", "['p', 'q']");
    assert_fails("{'get_attr': ['asg', 'outputs']}",
                 "The Referenced Attribute (asg outputs) is incorrect.");
    assert_fails("{'get_attr': ['asg', 'outputs_list']}",
                 "The Referenced Attribute (asg outputs_list) is incorrect.");
}

static void test_asg_refs_and_size_are_whole_a_member_attr_is_an_error(void **state)
{
    (void)state;
    assert_resolves("{'get_attr': ['asg', 'refs', 0]}", "['a-4', 'a-7']");
    assert_resolves("{'get_attr': ['asg', 'refs_map', 'm4']}", "{'m4': 'a-4', 'm7': 'a-7'}");
    assert_resolves("{'get_attr': ['asg', 'current_size', 0]}", "2");
    assert_fails("{'get_attr': ['asg', 'value']}",
                 "The Referenced Attribute (asg value) is incorrect.");
}

/* ------------------------------------------------------------- validation */

#define HOT "heat_template_version: 2018-08-31\n"
#define RG(count, extra)                                                                           \
    HOT "resources:\n"                                                                             \
        "  g:\n"                                                                                   \
        "    type: OS::Heat::ResourceGroup\n"                                                      \
        "    properties:\n"                                                                        \
        "      count: " count "\n" extra "      resource_def: {type: OS::Heat::RandomString}\n"    \
        "outputs:\n"                                                                               \
        "  o:\n"                                                                                   \
        "    value: "

static int parse(const char *yaml, cv_template_t **out)
{
    err[0] = '\0';
    return cv_template_parse(yaml, strlen(yaml), "app.yaml", NULL, out, err, sizeof(err));
}

static void accept_yaml(const char *yaml)
{
    cv_template_t *tpl = NULL;
    if (parse(yaml, &tpl) != 0)
        fail_msg("refused: %s\n%s", err, yaml);
    cv_template_free(tpl);
}

static void refuse_yaml(const char *yaml, const char *want)
{
    cv_template_t *tpl = NULL;
    int rc = parse(yaml, &tpl);
    cv_template_free(tpl);
    if (rc == 0)
        fail_msg("accepted:\n%s", yaml);
    assert_contains(err, want);
}

static void test_validation_refuses_a_member_attr_the_members_lack(void **state)
{
    (void)state;
    refuse_yaml(RG("2", "") "{get_attr: [g, resource.0.nope]}\n",
                "outputs.o.value: The Referenced Attribute (0 nope) is incorrect.");
    refuse_yaml(RG("2", "") "{get_attr: [g, resource.0, nope, 1]}\n",
                "The Referenced Attribute (0 nope) is incorrect.");
    refuse_yaml(RG("2", "") "{get_attr: [g, attributes, nope]}\n",
                "The Referenced Attribute (0 nope) is incorrect.");
    /* The first member is the first name no removal policy lists. */
    refuse_yaml(RG("2", "      removal_policies: [{resource_list: ['0']}]\n") "{get_attr: [g, "
                                                                              "resource.1.nope]}"
                                                                              "\n",
                "The Referenced Attribute (1 nope) is incorrect.");
}

static void test_validation_accepts_what_heat_checks_only_at_run_time(void **state)
{
    (void)state;
    accept_yaml(RG("2", "") "{get_attr: [g, resource.0.value, 0]}\n");
    accept_yaml(RG("2", "") "{get_attr: [g, resource.0, value]}\n");
    accept_yaml(RG("2", "") "{get_attr: [g, attributes, value]}\n");
    accept_yaml(RG("2", "") "{get_attr: [g, attributes]}\n");
    accept_yaml(RG("2", "") "{get_attr: [g, resource.7.nope]}\n"); /* not the tested member */
    accept_yaml(RG("2", "") "{get_attr: [g, refs_map, '0']}\n");
    accept_yaml(RG("0", "") "{get_attr: [g, resource.0.nope]}\n"); /* count 0: not validated */
}

static void test_validation_of_an_autoscaling_group_checks_every_member(void **state)
{
    (void)state;
#define ASG(min)                                                                                   \
    HOT "resources:\n"                                                                             \
        "  asg:\n"                                                                                 \
        "    type: OS::Heat::AutoScalingGroup\n"                                                   \
        "    properties:\n"                                                                        \
        "      min_size: " min "\n"                                                                \
        "      max_size: 3\n"                                                                      \
        "      resource: {type: OS::Heat::RandomString}\n"                                         \
        "outputs:\n"                                                                               \
        "  o:\n"                                                                                   \
        "    value: "
    refuse_yaml(ASG("1") "{get_attr: [asg, outputs, nope]}\n", "(0 nope) is incorrect.");
    refuse_yaml(ASG("1") "{get_attr: [asg, resource.2.nope]}\n", "(0 nope) is incorrect.");
    accept_yaml(ASG("1") "{get_attr: [asg, outputs_list, value]}\n");
    accept_yaml(ASG("0") "{get_attr: [asg, outputs, nope]}\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_group_member_attr_path_applies_to_each_member),
        cmocka_unit_test(test_group_resource_n_is_the_member_with_its_path),
        cmocka_unit_test(test_group_missing_member_ref_is_an_error_its_attr_null),
        cmocka_unit_test(test_group_attributes_needs_an_attribute),
        cmocka_unit_test(test_group_refs_takes_a_path_refs_map_and_removed_do_not),
        cmocka_unit_test(test_group_removed_list_is_sorted_as_heat_keeps_it),
        cmocka_unit_test(test_group_mark_is_not_among_all_attributes),
        cmocka_unit_test(test_chain_paths_as_a_group_missing_member_is_an_error),
        cmocka_unit_test(test_asg_resource_i_is_the_ith_oldest_member),
        cmocka_unit_test(test_asg_outputs_need_an_attribute_and_apply_the_path),
        cmocka_unit_test(test_asg_refs_and_size_are_whole_a_member_attr_is_an_error),
        cmocka_unit_test(test_validation_refuses_a_member_attr_the_members_lack),
        cmocka_unit_test(test_validation_accepts_what_heat_checks_only_at_run_time),
        cmocka_unit_test(test_validation_of_an_autoscaling_group_checks_every_member),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
