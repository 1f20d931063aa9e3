/* Expanding a traversal: stored resource definitions and the graph over the
 * definition and the recorded resources (cv_expand). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "cv_expand.h"
#include "cv_rdef.h"
#include "cv_contract.h"
#include "test_util.h"

static cv_template_t *parse(const char *yaml)
{
    cv_template_t *t = NULL;
    char err[512];
    if (cv_template_parse(yaml, strlen(yaml), "t.yaml", NULL, &t, err, sizeof(err)) != 0)
        fail_msg("template does not parse: %s", err);
    return t;
}

/* The definition of `res` as the traversal stores it, decoded as a CHECK
 * job reads it. */
static void stored(cv_rdef_t *d, const cv_tpl_resource_t *res)
{
    json_t *j = cv_expand_rdef(res);
    char *text = json_dumps(j, JSON_COMPACT), err[128];
    if (cv_rdef_decode(d, text, err, sizeof(err)) != 0)
        fail_msg("stored definition does not decode: %s", err);
    free(text);
    json_decref(j);
}

static const char *const TWO = "heat_template_version: 2018-08-31\n"
                               "resources:\n"
                               "  a: {type: OS::Heat::None}\n"
                               "  b:\n"
                               "    type: OS::Heat::Value\n"
                               "    properties: {value: 1}\n"
                               "    depends_on: a\n"
                               "    deletion_policy: Retain\n";

static void test_rdef_carries_type_properties_policy_and_dependencies(void **state)
{
    (void)state;
    cv_template_t *t = parse(TWO);
    json_t *d = cv_expand_rdef(&t->resources[1]);
    json_t *want = tu_json("{\"type\": \"OS::Heat::Value\", \"properties\": {\"value\": 1},"
                           " \"deletion_policy\": \"Retain\", \"metadata\": {},"
                           " \"depends\": [\"a\"]}");
    assert_true(json_equal(d, want));
    assert_null(json_object_get(d, "nested"));
    json_decref(want);
    json_decref(d);
    cv_template_free(t);
}

static void test_stored_definition_decodes_to_what_the_template_says(void **state)
{
    (void)state;
    cv_template_t *t = parse(TWO);
    cv_rdef_t d;
    stored(&d, &t->resources[1]);
    assert_string_equal(d.type, "OS::Heat::Value");
    assert_true(json_equal(d.props, t->resources[1].properties));
    assert_int_equal(d.deletion_policy, CV_RDEF_RETAIN);
    assert_int_equal(d.depends.n, 1);
    assert_string_equal(d.depends.v[0], "a");
    assert_false(d.nested);
    assert_null(d.external_id);
    cv_rdef_clear(&d);
    cv_template_free(t);
}

static void test_rdef_of_a_mapped_type_carries_the_type_the_template_wrote(void **state)
{
    (void)state;
    json_t *tree =
        tu_json("{\"heat_template_version\": \"2018-08-31\", \"resources\": {"
                "\"a\": {\"type\": \"My::Thing\"}, \"b\": {\"type\": \"OS::Heat::None\"}}}");
    json_t *env = tu_json("{\"resource_registry\": {\"My::Thing\": \"OS::Heat::None\"}}");
    cv_tpl_opts_t opts = {.env = env};
    cv_template_t *t = NULL;
    char err[512];
    if (cv_template_from_json_opts(tree, "t.yaml", NULL, &opts, &t, err, sizeof(err)) != 0)
        fail_msg("%s", err);
    cv_rdef_t mapped, plain;
    stored(&mapped, cv_template_resource(t, "a"));
    stored(&plain, cv_template_resource(t, "b"));
    assert_string_equal(mapped.type, "OS::Heat::None");
    assert_string_equal(mapped.declared_type, "My::Thing");
    /* Unmapped: the definition is as it always was. */
    assert_null(plain.declared_type);
    cv_rdef_clear(&mapped);
    cv_rdef_clear(&plain);
    cv_template_free(t);
    json_decref(env);
    json_decref(tree);
}

static void test_update_graph_cleans_every_recorded_resource(void **state)
{
    (void)state;
    cv_template_t *t = parse(TWO);
    json_t *index = tu_json("{\"a\": \"[]\", \"gone\": \"[\\\"a\\\"]\"}");
    cv_graph_t *g = cv_expand_graph(CV_TRAV_UPDATE, t, index);
    assert_non_null(g);
    assert_int_equal(cv_graph_count(g), 4); /* u/a u/b c/a c/gone and nothing else */
    assert_true(cv_graph_find(g, "u/a") >= 0);
    assert_true(cv_graph_find(g, "u/b") >= 0);
    assert_true(cv_graph_find(g, "c/a") >= 0);
    assert_true(cv_graph_find(g, "c/gone") >= 0);
    assert_true(cv_graph_find(g, "c/b") < 0); /* no record, nothing to clean */
    cv_graph_free(g);
    json_decref(index);
    cv_template_free(t);
}

static void test_delete_graph_has_only_cleanup_nodes(void **state)
{
    (void)state;
    cv_template_t *t = parse(TWO);
    json_t *index = tu_json("{\"a\": \"[]\", \"b\": \"[\\\"a\\\"]\"}");
    cv_graph_t *g = cv_expand_graph(CV_TRAV_DELETE, t, index);
    assert_non_null(g);
    assert_int_equal(cv_graph_count(g), 2);
    assert_true(cv_graph_find(g, "c/a") >= 0);
    assert_true(cv_graph_find(g, "c/b") >= 0);
    cv_graph_free(g);
    json_decref(index);
    cv_template_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rdef_carries_type_properties_policy_and_dependencies),
        cmocka_unit_test(test_stored_definition_decodes_to_what_the_template_says),
        cmocka_unit_test(test_rdef_of_a_mapped_type_carries_the_type_the_template_wrote),
        cmocka_unit_test(test_update_graph_cleans_every_recorded_resource),
        cmocka_unit_test(test_delete_graph_has_only_cleanup_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
