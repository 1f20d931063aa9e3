/*
 * Whole templates from tests/data/templates: realistic stacks using every
 * built-in type, parsed with their environment, their outputs resolved
 * against a stand-in for the deployed resources.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cv_base.h"
#include "cv_template.h"
#include "test_util.h"

static char err[1024];

static char *read_fixture(const char *name, size_t *len)
{
    return tu_read_data("templates", name, len);
}

static int parse_fixture(const char *name, const char *env_name, cv_template_t **out)
{
    size_t len, env_len;
    json_t *params = json_object();
    int rc = 0;
    err[0] = '\0';
    if (env_name) {
        char *env = read_fixture(env_name, &env_len);
        rc = cv_env_load(env, env_len, env_name, params, NULL, err, sizeof(err));
        free(env);
    }
    char *text = read_fixture(name, &len);
    if (rc == 0)
        rc = cv_template_parse(text, len, name, params, out, err, sizeof(err));
    free(text);
    json_decref(params);
    return rc;
}

static const cv_tpl_resource_t *resource(const cv_template_t *tpl, const char *name)
{
    const cv_tpl_resource_t *r = cv_template_resource(tpl, name);
    if (!r)
        fail_msg("no resource %s", name);
    return r;
}

/* What a deployed hello stack would report for each resource. */
static int deployed(void *ud, const char *name, const char **physical_id, const json_t **attributes)
{
    json_t *entry = json_object_get((json_t *)ud, name);
    if (!entry)
        return CV_ENOENT;
    *physical_id = json_string_value(json_object_get(entry, "id"));
    *attributes = json_object_get(entry, "attrs");
    return 0;
}

static void test_hello_template_parses_with_its_environment(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    if (parse_fixture("hello.yaml", "hello_env.yaml", &tpl) != 0)
        fail_msg("%s", err);
    assert_string_equal(tpl->version, "2018-08-31");
    assert_int_equal(tpl->nresources, 4);
    /* parameters: overrides the default; parameter_defaults: replaces the
     * template's default as a value would. */
    assert_string_equal(json_string_value(json_object_get(tpl->parameters, "greeting")), "howdy");
    assert_int_equal(json_integer_value(json_object_get(tpl->parameters, "password_length")), 24);
    json_t *names = json_object_get(tpl->parameters, "names");
    assert_int_equal(json_array_size(names), 1);
    assert_string_equal(json_string_value(json_array_get(tpl->hidden, 0)), "admin_password");
    assert_string_equal(resource(tpl, "waiter")->deletion_policy, "Retain");
    assert_string_equal(resource(tpl, "waiter")->type, "OS::Heat::TestResource");
    cv_template_free(tpl);
}

static void test_hello_template_dependencies(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    assert_int_equal(parse_fixture("hello.yaml", NULL, &tpl), 0);
    assert_int_equal(resource(tpl, "password")->ndepends, 0);
    const cv_tpl_resource_t *waiter = resource(tpl, "waiter");
    assert_int_equal(waiter->ndepends, 1);
    assert_string_equal(waiter->depends[0], "password");
    const cv_tpl_resource_t *message = resource(tpl, "message");
    assert_int_equal(message->ndepends, 1);
    assert_string_equal(message->depends[0], "password");
    const cv_tpl_resource_t *nothing = resource(tpl, "nothing");
    assert_int_equal(nothing->ndepends, 2);
    assert_string_equal(nothing->depends[0], "message");
    assert_string_equal(nothing->depends[1], "waiter");
    cv_template_free(tpl);
}

static void test_hello_properties_resolve_once_parents_exist(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    assert_int_equal(parse_fixture("hello.yaml", NULL, &tpl), 0);
    json_t *stack =
        json_loads("{\"password\": {\"id\": \"pw-1\", \"attrs\": {\"value\": \"s3\"}}}", 0, NULL);
    cv_resolve_ctx_t ctx = {.parameters = tpl->parameters, .resource = deployed, .ud = stack};
    json_t *props = cv_intrinsic_resolve(resource(tpl, "message")->properties, &ctx,
                                         "resources.message.properties", err, sizeof(err));
    if (!props)
        fail_msg("%s", err);
    assert_string_equal(json_string_value(json_object_get(props, "value")),
                        "hello, the secret is s3 (16 chars)");
    json_decref(props);
    props = cv_intrinsic_resolve(resource(tpl, "waiter")->properties, &ctx,
                                 "resources.waiter.properties", err, sizeof(err));
    assert_string_equal(json_string_value(json_object_get(props, "value")), "alpha-beta-hello");
    json_decref(props);
    json_decref(stack);
    cv_template_free(tpl);
}

static void test_hello_outputs_resolve_against_the_deployed_stack(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    assert_int_equal(parse_fixture("hello.yaml", NULL, &tpl), 0);
    json_t *stack = json_loads("{\"message\": {\"id\": \"m-1\", \"attrs\": {\"value\": \"hi\"}},"
                               " \"waiter\": {\"id\": \"w-1\", \"attrs\": {\"output\": \"ok\"}}}",
                               0, NULL);
    cv_resolve_ctx_t ctx = {.parameters = tpl->parameters, .resource = deployed, .ud = stack};
    json_t *outputs = cv_intrinsic_resolve(tpl->outputs, &ctx, "outputs", err, sizeof(err));
    if (!outputs)
        fail_msg("%s", err);
    json_t *expected = json_loads("{\"message\": {\"value\": \"hi\", \"description\": \"The "
                                  "assembled message.\"}, \"waiter_output\": {\"value\": \"ok\", "
                                  "\"description\": \"\"}, \"first_replica\": {\"value\": 1, "
                                  "\"description\": \"\"}}",
                                  0, NULL);
    assert_true(json_equal(outputs, expected));
    json_decref(expected);
    json_decref(outputs);
    json_decref(stack);
    cv_template_free(tpl);
}

static void test_json_template_parses_like_yaml(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    if (parse_fixture("hello.json", NULL, &tpl) != 0)
        fail_msg("%s", err);
    assert_string_equal(tpl->version, "2015-10-15");
    assert_int_equal(json_integer_value(json_object_get(tpl->parameters, "count")), 3);
    assert_string_equal(resource(tpl, "report")->depends[0], "pick");
    cv_template_free(tpl);
}

static void test_cycle_fixture_names_the_ring(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    assert_int_equal(parse_fixture("cycle.yaml", NULL, &tpl), CV_ECYCLE);
    assert_null(tpl);
    assert_contains(err, "cycle.yaml: resources: Circular Dependency Found: {first: {third}, "
                         "second: {first}, third: {second}}");
}

static void test_unknown_attribute_fixture_names_resource_and_attribute(void **state)
{
    (void)state;
    cv_template_t *tpl = NULL;
    assert_int_equal(parse_fixture("unknown_attr.yaml", NULL, &tpl), CV_EVALIDATE);
    assert_contains(err, "unknown_attr.yaml: resources.app.properties.value: The Referenced "
                         "Attribute (secret password) is incorrect.");
}

/* A long chain, as generated stacks have: parsing stays linear and the
 * cycle check does not recurse. */
static void test_long_dependency_chain_parses(void **state)
{
    (void)state;
    enum { N = 20000 };
    size_t cap = (size_t)N * 96 + 128, len = 0;
    char *doc = malloc(cap);
    len += (size_t)snprintf(doc + len, cap - len,
                            "heat_template_version: 2018-08-31\nresources:\n  r0: {type: "
                            "OS::Heat::None}\n");
    for (int i = 1; i < N; i++)
        len += (size_t)snprintf(doc + len, cap - len,
                                "  r%d: {type: OS::Heat::None, properties: {p: {get_resource: "
                                "r%d}}}\n",
                                i, i - 1);
    cv_template_t *tpl = NULL;
    int rc = cv_template_parse(doc, len, "chain.yaml", NULL, &tpl, err, sizeof(err));
    free(doc);
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(tpl->nresources, N);
    assert_string_equal(cv_template_resource(tpl, "r19999")->depends[0], "r19998");
    cv_template_free(tpl);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hello_template_parses_with_its_environment),
        cmocka_unit_test(test_hello_template_dependencies),
        cmocka_unit_test(test_hello_properties_resolve_once_parents_exist),
        cmocka_unit_test(test_hello_outputs_resolve_against_the_deployed_stack),
        cmocka_unit_test(test_json_template_parses_like_yaml),
        cmocka_unit_test(test_cycle_fixture_names_the_ring),
        cmocka_unit_test(test_unknown_attribute_fixture_names_resource_and_attribute),
        cmocka_unit_test(test_long_dependency_chain_parses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
