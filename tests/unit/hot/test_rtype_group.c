/*
 * The nested-stack types' pure operations: OS::Heat::ResourceGroup's child
 * template (members, removal blacklist, index substitution, attribute
 * outputs) and attributes, the template-resource type's definition and
 * attributes, and the child stack id.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cv_base.h"
#include "cv_rtype.h"
#include "cv_template.h"
#include "test_json_fixture.h"

#define GROUP "OS::Heat::ResourceGroup"
#define UUID_A "fedcba98-7654-5321-8aaa-bbbbccccdddd"
#define UUID_B "0123abcd-4567-589a-9bcd-ef0123456789"

static const cv_rtype_t *group(void)
{
    const cv_rtype_t *t = cv_rtype_find(GROUP);
    assert_non_null(t);
    assert_non_null(t->nested);
    return t;
}

/* Fails with both sides shown unless `got` equals the JSON `expected_sq`. */
static void assert_json(const json_t *got, const char *expected_sq)
{
    json_t *want = js(expected_sq);
    if (!json_equal((json_t *)got, want)) {
        char *g = got ? json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY) : NULL;
        char *w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
        char msg[4096];
        snprintf(msg, sizeof(msg), "got %s, expected %s", g ? g : "(null)", w);
        free(g);
        free(w);
        json_decref(want);
        fail_msg("%s", msg);
    }
    json_decref(want);
}

/* The group's properties as the engine hands them over: schema applied. */
static json_t *group_props(const char *props_sq)
{
    json_t *raw = js(props_sq);
    char err[512] = "";
    json_t *props = cv_rtype_apply_schema(group(), raw, "x", false, err, sizeof(err));
    if (!props)
        fail_msg("%s refused: %s", props_sq, err);
    json_decref(raw);
    return props;
}

/* Runs the group's definition on `data`; returns the child template. */
static json_t *define_with(const char *props_sq, const json_t *files, json_t *data)
{
    json_t *props = group_props(props_sq);
    json_t *tpl = NULL, *params = NULL;
    char err[512] = "";
    int rc =
        group()->nested->definition(GROUP, props, files, data, &tpl, &params, err, sizeof(err));
    json_decref(props);
    if (rc != 0)
        fail_msg("definition of %s failed (%d): %s", props_sq, rc, err);
    assert_non_null(tpl);
    assert_json(params, "{}");
    json_decref(params);
    return tpl;
}

static void define(const char *props_sq, json_t *data)
{
    json_decref(define_with(props_sq, NULL, data));
}

/* The members of a child template, sorted numerically, joined with ",". */
static void assert_members(const json_t *tpl, const char *expected)
{
    const json_t *res = json_object_get(tpl, "resources");
    char got[512] = "";
    size_t n = 0;
    for (int i = 0; i < 100; i++) {
        char name[8];
        snprintf(name, sizeof(name), "%d", i);
        if (json_object_get(res, name)) {
            strcat(got, n++ ? "," : "");
            strcat(got, name);
        }
    }
    assert_int_equal(json_object_size(res), n); /* no other members */
    assert_string_equal(got, expected);
}

/* data.names joined with ",", in order. */
static void assert_names(const json_t *data, const char *expected)
{
    const json_t *names = json_object_get(data, "names");
    assert_true(json_is_array(names));
    char got[512] = "";
    size_t i;
    const json_t *n;
    json_array_foreach(names, i, n)
    {
        assert_true(json_is_string(n));
        strcat(got, i ? "," : "");
        strcat(got, json_string_value(n));
    }
    assert_string_equal(got, expected);
}

/* What a test made, released after it even when an assertion fails. */
static json_t *owned[8];
static size_t nowned;

static json_t *own(json_t *v)
{
    assert_true(nowned < sizeof(owned) / sizeof(owned[0]));
    return owned[nowned++] = v;
}

static int release(void **state)
{
    (void)state;
    while (nowned)
        json_decref(owned[--nowned]);
    return 0;
}

#define TEST_DEF "'resource_def': {'type': 'OS::Heat::TestResource'}"

/* ---------------------------------------------------------------- members */

static void test_count_three_makes_members_0_1_2(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_t *tpl = define_with("{'count': 3, 'resource_def': {'type': 'OS::Heat::TestResource', "
                              "'properties': {'value': 'v-%index%'}}}",
                              NULL, data);
    assert_names(data, "0,1,2");
    assert_json(json_object_get(data, "blacklist"), "[]");
    assert_json(json_object_get(data, "attrs"), "['output']");
    assert_string_equal(json_string_value(json_object_get(tpl, "heat_template_version")),
                        "2015-04-30");
    assert_json(json_object_get(tpl, "resources"),
                "{'0': {'type': 'OS::Heat::TestResource', 'properties': {'value': 'v-0'}},"
                " '1': {'type': 'OS::Heat::TestResource', 'properties': {'value': 'v-1'}},"
                " '2': {'type': 'OS::Heat::TestResource', 'properties': {'value': 'v-2'}}}");
    assert_json(json_object_get(tpl, "outputs"),
                "{'refs': {'value': [{'get_resource': '0'}, {'get_resource': '1'},"
                " {'get_resource': '2'}]},"
                " 'a.output': {'value': [{'get_attr': ['0', 'output']},"
                " {'get_attr': ['1', 'output']}, {'get_attr': ['2', 'output']}]}}");
    json_decref(tpl);
    json_decref(data);
}

static void test_child_template_is_a_valid_template(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_t *tpl = define_with("{'count': 2, 'resource_def': {'type': 'OS::Heat::TestResource', "
                              "'properties': {'wait_secs': 1}}}",
                              NULL, data);
    cv_template_t *child = NULL;
    char err[1024] = "";
    cv_tpl_opts_t opts = {.depth = 1};
    int rc = cv_template_from_json_opts(tpl, "g", NULL, &opts, &child, err, sizeof(err));
    if (rc != 0)
        fail_msg("child template refused: %s", err);
    assert_int_equal(child->nresources, 2);
    assert_non_null(cv_template_resource(child, "0"));
    assert_non_null(cv_template_resource(child, "1"));
    assert_non_null(json_object_get(child->outputs, "a.output"));
    cv_template_free(child);
    json_decref(tpl);
    json_decref(data);
}

static void test_count_zero_makes_no_members(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_t *tpl = define_with("{'count': 0, " TEST_DEF "}", NULL, data);
    assert_names(data, "");
    assert_json(json_object_get(tpl, "resources"), "{}");
    assert_json(json_object_get(json_object_get(tpl, "outputs"), "refs"), "{'value': []}");
    json_decref(tpl);
    json_decref(data);
}

static void test_default_count_is_one(void **state)
{
    (void)state;
    json_t *data = json_object();
    define("{" TEST_DEF "}", data);
    assert_names(data, "0");
    json_decref(data);
}

static void test_scaling_up_and_down_with_a_removal_policy(void **state)
{
    (void)state;
    json_t *data = json_object();
    define("{'count': 3, " TEST_DEF "}", data);
    assert_names(data, "0,1,2");
    /* Scale up: the data of the previous version is carried over. */
    json_t *tpl = define_with("{'count': 10, " TEST_DEF "}", NULL, data);
    assert_names(data, "0,1,2,3,4,5,6,7,8,9");
    assert_members(tpl, "0,1,2,3,4,5,6,7,8,9");
    json_decref(tpl);
    /* Scale down removing "0" rather than the highest. */
    tpl = define_with("{'count': 2, 'removal_policies': [{'resource_list': ['0']}], " TEST_DEF "}",
                      NULL, data);
    assert_names(data, "1,2");
    assert_members(tpl, "1,2");
    assert_json(json_object_get(data, "blacklist"), "['0']");
    assert_json(json_object_get(json_object_get(tpl, "outputs"), "refs"),
                "{'value': [{'get_resource': '1'}, {'get_resource': '2'}]}");
    json_decref(tpl);
    /* "0" is never used again, with or without the policy still there. */
    tpl = define_with("{'count': 3, 'removal_policies': [{'resource_list': ['0']}], " TEST_DEF "}",
                      NULL, data);
    assert_names(data, "1,2,3");
    assert_members(tpl, "1,2,3");
    assert_json(json_object_get(data, "blacklist"), "['0']");
    json_decref(tpl);
    define("{'count': 4, " TEST_DEF "}", data);
    assert_names(data, "1,2,3,4");
    assert_json(json_object_get(data, "blacklist"), "['0']");
    json_decref(data);
}

static void test_removal_appends_to_the_blacklist(void **state)
{
    (void)state;
    json_t *data = json_object();
    define("{'count': 4, " TEST_DEF "}", data);
    define("{'count': 3, 'removal_policies': [{'resource_list': ['1']}], " TEST_DEF "}", data);
    assert_names(data, "0,2,3");
    define("{'count': 3, 'removal_policies': [{'resource_list': ['3']}, {'resource_list': ['0']}],"
           " " TEST_DEF "}",
           data);
    assert_json(json_object_get(data, "blacklist"), "['1', '3', '0']");
    assert_names(data, "2,4,5");
    json_decref(data);
}

static void test_update_mode_replaces_the_blacklist(void **state)
{
    (void)state;
    json_t *data = json_object();
    define("{'count': 3, " TEST_DEF "}", data);
    define("{'count': 2, 'removal_policies': [{'resource_list': ['0']}], " TEST_DEF "}", data);
    assert_names(data, "1,2");
    /* A new list in update mode: "0" may be used again, "1" is removed. */
    define("{'count': 3, 'removal_policies_mode': 'update',"
           " 'removal_policies': [{'resource_list': ['1']}], " TEST_DEF "}",
           data);
    assert_json(json_object_get(data, "blacklist"), "['1']");
    assert_names(data, "0,2,3");
    /* No list in update mode: nothing is blacklisted any more. */
    define("{'count': 3, 'removal_policies_mode': 'update', " TEST_DEF "}", data);
    assert_json(json_object_get(data, "blacklist"), "[]");
    assert_names(data, "0,1,2");
    json_decref(data);
}

/* As in Heat, a name the current blacklist holds stays blacklisted when the
 * update-mode list still names it: the list says which names are removed. */
static void test_update_mode_keeps_names_still_listed(void **state)
{
    (void)state;
    json_t *data = own(json_object());
    define("{'count': 3, " TEST_DEF "}", data);
    define("{'count': 2, 'removal_policies_mode': 'update',"
           " 'removal_policies': [{'resource_list': ['0']}], " TEST_DEF "}",
           data);
    assert_names(data, "1,2");
    assert_json(json_object_get(data, "blacklist"), "['0']");
    /* The same properties with one more member: "0" is still listed. */
    define("{'count': 3, 'removal_policies_mode': 'update',"
           " 'removal_policies': [{'resource_list': ['0']}], " TEST_DEF "}",
           data);
    assert_json(json_object_get(data, "blacklist"), "['0']");
    assert_names(data, "1,2,3");
}

static void test_removal_entries_that_are_not_members_are_ignored(void **state)
{
    (void)state;
    json_t *data = json_object();
    define("{'count': 2, " TEST_DEF "}", data);
    define("{'count': 2, 'removal_policies': [{'resource_list': ['7', 'web', '1']}, {}],"
           " " TEST_DEF "}",
           data);
    assert_json(json_object_get(data, "blacklist"), "['1']");
    assert_names(data, "0,2");
    json_decref(data);
}

/* Heat's _get_new_skiplist_entries takes every listed name while the group
 * has no resource_id: created with resource_list ['0'], the members are
 * "1" and "2", and "0" is in removed_rsrc_list. */
static void test_removal_entries_at_create_are_all_skipped(void **state)
{
    (void)state;
    json_t *data = json_object();
    define("{'count': 2, 'removal_policies': [{'resource_list': ['0', '9']}], " TEST_DEF "}", data);
    assert_names(data, "1,2");
    assert_json(json_object_get(data, "blacklist"), "['0', '9']");
    json_decref(data);
}

/* Heat tolerates integers in resource_list (YAML `resource_list: [1]`). */
static void test_integer_names_in_resource_list_are_tolerated(void **state)
{
    (void)state;
    json_t *data = own(json_object());
    define("{'count': 3, " TEST_DEF "}", data);
    define("{'count': 2, 'removal_policies': [{'resource_list': [1]}], " TEST_DEF "}", data);
    assert_json(json_object_get(data, "blacklist"), "['1']");
    assert_names(data, "0,2");
}

/* ---------------------------------------------------------------- substitution */

static void test_index_is_substituted_in_nested_values_not_keys(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_t *tpl = define_with(
        "{'count': 12, 'resource_def': {'type': 'OS::Heat::None', 'properties': {"
        "'name': 'srv-%index%-of-%index%', 'twice': '%index%%index%', 'n': 3, 'flag': true,"
        " 'tags': ['t%index%', 5, {'%index%': 'k%index%'}], "
        "'map': {'%index%key': ['%index%']}}}}",
        NULL, data);
    assert_json(
        json_object_get(json_object_get(json_object_get(tpl, "resources"), "11"), "properties"),
        "{'name': 'srv-11-of-11', 'twice': '1111', 'n': 3, 'flag': true,"
        " 'tags': ['t11', 5, {'%index%': 'k11'}], 'map': {'%index%key': ['11']}}");
    assert_json(
        json_object_get(json_object_get(json_object_get(tpl, "resources"), "0"), "properties"),
        "{'name': 'srv-0-of-0', 'twice': '00', 'n': 3, 'flag': true,"
        " 'tags': ['t0', 5, {'%index%': 'k0'}], 'map': {'%index%key': ['0']}}");
    json_decref(tpl);
    json_decref(data);
}

static void test_custom_index_var_is_substituted_instead(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_t *tpl = define_with("{'count': 2, 'index_var': '__n__', 'resource_def': {'type':"
                              " 'OS::Heat::None', 'properties': {'a': 'x__n__', 'b': '%index%',"
                              " 'c': ['__n__', {'__n__': '__n__'}]}}}",
                              NULL, data);
    assert_json(
        json_object_get(json_object_get(json_object_get(tpl, "resources"), "1"), "properties"),
        "{'a': 'x1', 'b': '%index%', 'c': ['1', {'__n__': '1'}]}");
    json_decref(tpl);
    json_decref(data);
}

static void test_metadata_is_copied_and_absent_properties_stay_absent(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_t *tpl = define_with("{'count': 2, 'resource_def': {'type': 'OS::Heat::None',"
                              " 'metadata': {'role': 'worker', 'slot': '%index%'}}}",
                              NULL, data);
    /* As in Heat, the index goes into the properties only. */
    assert_json(json_object_get(json_object_get(tpl, "resources"), "1"),
                "{'type': 'OS::Heat::None', 'metadata': {'role': 'worker', 'slot': '%index%'}}");
    /* OS::Heat::None has no attributes: refs is the only output. */
    assert_json(json_object_get(data, "attrs"), "[]");
    assert_json(json_object_get(tpl, "outputs"),
                "{'refs': {'value': [{'get_resource': '0'}, {'get_resource': '1'}]}}");
    json_decref(tpl);
    json_decref(data);
}

static void test_template_file_member_outputs_become_attributes(void **state)
{
    (void)state;
    json_t *files = js("{'server.yaml': {'heat_template_version': '2018-08-31',"
                       " 'parameters': {'label': {'type': 'string'}},"
                       " 'resources': {'r': {'type': 'OS::Heat::None'}},"
                       " 'outputs': {'ip': {'value': '10.0.0.1'}, 'name': {'value': 'n'}}}}");
    json_t *data = json_object();
    json_t *tpl = define_with("{'count': 2, 'resource_def': {'type': 'server.yaml',"
                              " 'properties': {'label': 'web-%index%'}}}",
                              files, data);
    const json_t *attrs = json_object_get(data, "attrs");
    assert_int_equal(json_array_size(attrs), 2);
    assert_json(json_object_get(json_object_get(tpl, "resources"), "1"),
                "{'type': 'server.yaml', 'properties': {'label': 'web-1'}}");
    const json_t *outputs = json_object_get(tpl, "outputs");
    assert_json(json_object_get(outputs, "a.ip"),
                "{'value': [{'get_attr': ['0', 'ip']}, {'get_attr': ['1', 'ip']}]}");
    assert_json(json_object_get(outputs, "a.name"),
                "{'value': [{'get_attr': ['0', 'name']}, {'get_attr': ['1', 'name']}]}");
    assert_null(json_object_get(outputs, "a.output"));
    assert_int_equal(json_object_size(outputs), 3);
    /* The child template is valid with the files it uses. */
    cv_template_t *child = NULL;
    char err[1024] = "";
    cv_tpl_opts_t opts = {.files = files, .depth = 1};
    if (cv_template_from_json_opts(tpl, "g", NULL, &opts, &child, err, sizeof(err)) != 0)
        fail_msg("child template refused: %s", err);
    assert_string_equal(cv_template_resource(child, "0")->type, "server.yaml");
    cv_template_free(child);
    json_decref(tpl);
    json_decref(data);
    json_decref(files);
}

static void test_definition_with_computed_member_type_is_refused(void **state)
{
    (void)state;
    json_t *props = group_props("{'resource_def': {'type': {'get_param': 't'}}}");
    json_t *data = json_object(), *tpl = NULL, *params = NULL;
    char err[512] = "";
    int rc = group()->nested->definition(GROUP, props, NULL, data, &tpl, &params, err, sizeof(err));
    assert_int_equal(rc, CV_EVALIDATE);
    assert_string_equal(err, "resource_def.type: a string is required");
    assert_null(tpl);
    assert_null(params);
    assert_json(data, "{}");
    json_decref(data);
    json_decref(props);
}

/* ---------------------------------------------------------------- attributes */

static void test_attributes_from_the_child_outputs(void **state)
{
    (void)state;
    json_t *outputs = js("{'refs': ['id-1', 'id-2'], 'a.output': ['o1', 'o2']}");
    json_t *data = js("{'names': ['1', '2'], 'blacklist': ['0'], 'attrs': ['output']}");
    json_t *attrs = group()->nested->attributes(outputs, data);
    assert_json(attrs,
                "{'\\u0001group': {'kind': 'OS::Heat::ResourceGroup', 'members': ['1', '2']},"
                " 'refs': ['id-1', 'id-2'],"
                " 'refs_map': {'1': 'id-1', '2': 'id-2'},"
                " 'removed_rsrc_list': ['0'],"
                " 'attributes': {'output': {'1': 'o1', '2': 'o2'}},"
                " 'output': ['o1', 'o2'],"
                " 'resource.1': 'id-1', 'resource.2': 'id-2',"
                " 'resource.1.output': 'o1', 'resource.2.output': 'o2'}");
    json_decref(attrs);
    json_decref(data);
    json_decref(outputs);
}

static void test_attributes_of_an_incomplete_child_are_null(void **state)
{
    (void)state;
    json_t *outputs = js("{'refs': ['id-0']}");
    json_t *data = js("{'names': ['0', '1'], 'blacklist': [], 'attrs': ['ip']}");
    json_t *attrs = group()->nested->attributes(outputs, data);
    assert_json(attrs,
                "{'\\u0001group': {'kind': 'OS::Heat::ResourceGroup', 'members': ['0', '1']},"
                " 'refs': ['id-0'], 'refs_map': {'0': 'id-0', '1': null},"
                " 'removed_rsrc_list': [], 'attributes': {'ip': {'0': null, '1': null}},"
                " 'ip': [], 'resource.0': 'id-0', 'resource.1': null,"
                " 'resource.0.ip': null, 'resource.1.ip': null}");
    json_decref(attrs);
    json_decref(data);
    json_decref(outputs);
    /* Nothing known at all. */
    json_t *empty = json_object();
    attrs = group()->nested->attributes(NULL, empty);
    assert_json(attrs, "{'\\u0001group': {'kind': 'OS::Heat::ResourceGroup', 'members': []},"
                       " 'refs': [], 'refs_map': {}, 'removed_rsrc_list': [], 'attributes': {}}");
    json_decref(attrs);
    json_decref(empty);
}

static void test_definition_then_attributes_round_trip(void **state)
{
    (void)state;
    json_t *data = json_object();
    define("{'count': 3, " TEST_DEF "}", data);
    define("{'count': 2, 'removal_policies': [{'resource_list': ['1']}], " TEST_DEF "}", data);
    /* What the child's outputs resolve to, in the order of the names. */
    json_t *outputs = js("{'refs': ['p0', 'p2'], 'a.output': ['x0', 'x2']}");
    json_t *attrs = group()->nested->attributes(outputs, data);
    assert_json(json_object_get(attrs, "refs_map"), "{'0': 'p0', '2': 'p2'}");
    assert_string_equal(json_string_value(json_object_get(attrs, "resource.2.output")), "x2");
    assert_null(json_object_get(attrs, "resource.1"));
    assert_json(json_object_get(attrs, "removed_rsrc_list"), "['1']");
    json_decref(attrs);
    json_decref(outputs);
    json_decref(data);
}

/* ---------------------------------------------------------------- child stacks */

static bool all_hex(const char *s)
{
    for (; *s; s++)
        if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
            return false;
    return true;
}

static void test_child_stack_id_is_16_hex_chars_from_the_uuid(void **state)
{
    (void)state;
    char a1[17], a2[17], b[17];
    memset(a1, 'z', sizeof(a1));
    cv_rtype_child_stack_id(a1, UUID_A);
    cv_rtype_child_stack_id(a2, UUID_A);
    cv_rtype_child_stack_id(b, UUID_B);
    assert_int_equal(strlen(a1), 16);
    assert_true(all_hex(a1));
    assert_true(all_hex(b));
    assert_string_equal(a1, a2);
    assert_string_not_equal(a1, b);
    assert_int_equal(strlen(b), 16);
}

static void test_nested_create_names_the_child_stack(void **state)
{
    (void)state;
    char id[17];
    cv_rtype_child_stack_id(id, UUID_A);
    cv_rstate_t st = {.stack_name = "stk", .resource_name = "g", .uuid = UUID_A};
    st.data = json_object();
    st.attrs = json_object();
    assert_int_equal(group()->create(&st), 0);
    assert_string_equal(st.physical_id, id);
    assert_string_equal(json_string_value(json_object_get(st.data, "stack")), id);
    /* An update keeps the child. */
    assert_int_equal(group()->update(&st), 0);
    assert_string_equal(st.physical_id, id);
    json_decref(st.data);
    json_decref(st.attrs);
}

/* ---------------------------------------------------------------- template type */

static void test_template_files_look_up_the_template_type(void **state)
{
    (void)state;
    const cv_rtype_t *t = cv_rtype_lookup("server.yaml");
    assert_non_null(t);
    assert_non_null(t->nested);
    assert_ptr_equal(cv_rtype_lookup("db.yml"), t);
    assert_ptr_equal(cv_rtype_lookup("a/b.template"), t);
    assert_null(cv_rtype_find("server.yaml"));
    assert_ptr_equal(cv_rtype_lookup(GROUP), group());
    assert_ptr_equal(cv_rtype_lookup("OS::Heat::TestResource"),
                     cv_rtype_find("OS::Heat::TestResource"));
    assert_null(cv_rtype_lookup("Foo::Bar"));
    assert_null(cv_rtype_lookup("server.json"));
    assert_true(cv_rtype_is_template_file("x.yaml"));
    assert_false(cv_rtype_is_template_file(".yaml"));
    assert_false(cv_rtype_is_template_file("yaml"));
    assert_false(cv_rtype_is_template_file("x.yaml.bak"));
    assert_false(cv_rtype_is_template_file(NULL));
}

static void test_template_definition_is_the_file_with_props_as_params(void **state)
{
    (void)state;
    const cv_rtype_t *t = cv_rtype_lookup("server.yaml");
    json_t *files = js("{'server.yaml': {'heat_template_version': '2018-08-31',"
                       " 'parameters': {'label': {'type': 'string'}},"
                       " 'outputs': {'ip': {'value': '10.0.0.1'}}},"
                       " 'other.yaml': {'heat_template_version': '2018-08-31'}}");
    json_t *props = js("{'label': 'web', 'port': 81}");
    json_t *data = json_object(), *tpl = NULL, *params = NULL;
    char err[512] = "";
    assert_int_equal(
        t->nested->definition("server.yaml", props, files, data, &tpl, &params, err, sizeof(err)),
        0);
    assert_true(json_equal(tpl, json_object_get(files, "server.yaml")));
    assert_json(params, "{'label': 'web', 'port': 81}");
    /* The parameters are the child's own: changing them leaves props alone. */
    json_object_set_new(params, "label", json_string("changed"));
    assert_json(props, "{'label': 'web', 'port': 81}");
    json_decref(tpl);
    json_decref(params);
    json_decref(data);
    json_decref(props);
    json_decref(files);
}

static void test_template_definition_names_a_missing_file(void **state)
{
    (void)state;
    const cv_rtype_t *t = cv_rtype_lookup("missing.yaml");
    json_t *files = js("{'server.yaml': {'heat_template_version': '2018-08-31'}}");
    json_t *props = json_object(), *data = json_object(), *tpl = NULL, *params = NULL;
    char err[512] = "";
    assert_int_equal(
        t->nested->definition("missing.yaml", props, files, data, &tpl, &params, err, sizeof(err)),
        CV_EVALIDATE);
    assert_string_equal(err, "template file \"missing.yaml\" was not uploaded with the stack");
    assert_null(tpl);
    assert_null(params);
    err[0] = '\0';
    assert_int_equal(
        t->nested->definition("missing.yaml", props, NULL, data, &tpl, &params, err, sizeof(err)),
        CV_EVALIDATE);
    assert_string_equal(err, "template file \"missing.yaml\" was not uploaded with the stack");
    json_decref(props);
    json_decref(data);
    json_decref(files);
}

static void test_template_attributes_are_outputs_and_stack_id(void **state)
{
    (void)state;
    const cv_rtype_t *t = cv_rtype_lookup("server.yaml");
    json_t *outputs = js("{'ip': '10.0.0.1', 'ports': [80, 443]}");
    json_t *data = js("{'stack': '00112233aabbccdd'}");
    json_t *attrs = t->nested->attributes(outputs, data);
    assert_json(attrs, "{'ip': '10.0.0.1', 'ports': [80, 443], 'OS::stack_id': "
                       "'00112233aabbccdd'}");
    /* A copy: the outputs are not changed. */
    assert_null(json_object_get(outputs, "OS::stack_id"));
    json_decref(attrs);
    json_t *empty = json_object();
    attrs = t->nested->attributes(NULL, data);
    assert_json(attrs, "{'OS::stack_id': '00112233aabbccdd'}");
    json_decref(attrs);
    attrs = t->nested->attributes(outputs, empty);
    assert_json(attrs, "{'ip': '10.0.0.1', 'ports': [80, 443]}");
    json_decref(attrs);
    json_decref(empty);
    json_decref(data);
    json_decref(outputs);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_count_three_makes_members_0_1_2, release),
        cmocka_unit_test_teardown(test_child_template_is_a_valid_template, release),
        cmocka_unit_test_teardown(test_count_zero_makes_no_members, release),
        cmocka_unit_test_teardown(test_default_count_is_one, release),
        cmocka_unit_test_teardown(test_scaling_up_and_down_with_a_removal_policy, release),
        cmocka_unit_test_teardown(test_removal_appends_to_the_blacklist, release),
        cmocka_unit_test_teardown(test_update_mode_replaces_the_blacklist, release),
        cmocka_unit_test_teardown(test_update_mode_keeps_names_still_listed, release),
        cmocka_unit_test_teardown(test_removal_entries_that_are_not_members_are_ignored, release),
        cmocka_unit_test_teardown(test_removal_entries_at_create_are_all_skipped, release),
        cmocka_unit_test_teardown(test_integer_names_in_resource_list_are_tolerated, release),
        cmocka_unit_test_teardown(test_index_is_substituted_in_nested_values_not_keys, release),
        cmocka_unit_test_teardown(test_custom_index_var_is_substituted_instead, release),
        cmocka_unit_test_teardown(test_metadata_is_copied_and_absent_properties_stay_absent,
                                  release),
        cmocka_unit_test_teardown(test_template_file_member_outputs_become_attributes, release),
        cmocka_unit_test_teardown(test_definition_with_computed_member_type_is_refused, release),
        cmocka_unit_test_teardown(test_attributes_from_the_child_outputs, release),
        cmocka_unit_test_teardown(test_attributes_of_an_incomplete_child_are_null, release),
        cmocka_unit_test_teardown(test_definition_then_attributes_round_trip, release),
        cmocka_unit_test_teardown(test_child_stack_id_is_16_hex_chars_from_the_uuid, release),
        cmocka_unit_test_teardown(test_nested_create_names_the_child_stack, release),
        cmocka_unit_test_teardown(test_template_files_look_up_the_template_type, release),
        cmocka_unit_test_teardown(test_template_definition_is_the_file_with_props_as_params,
                                  release),
        cmocka_unit_test_teardown(test_template_definition_names_a_missing_file, release),
        cmocka_unit_test_teardown(test_template_attributes_are_outputs_and_stack_id, release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
