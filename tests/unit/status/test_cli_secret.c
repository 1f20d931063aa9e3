/*
 * Specification of what a stack's readers hide (cli/status/cli_secret.h): hidden
 * parameters as Heat reads `hidden`, RandomString's value and reference,
 * the properties that read any of them whatever function transformed the
 * secret, and the same values wherever else they appear.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_secret.h"

#include <stdlib.h>
#include <string.h>

#define PASSWORD "s3cr3t-pw"
#define RANDOM "Xq7RandomValue"

/* A template with a hidden parameter, a plain one, a RandomString and a
 * resource whose properties read them in several ways. */
static json_t *template_tree(void)
{
    json_t *t = json_loads(
        "{\"heat_template_version\": \"2018-08-31\","
        " \"parameters\": {"
        "   \"db_password\": {\"type\": \"string\", \"hidden\": \"yes\"},"
        "   \"admin\": {\"type\": \"string\", \"hidden\": true, \"default\": \"adm1n-pw\"},"
        "   \"who\": {\"type\": \"string\", \"default\": \"world\"}},"
        " \"resources\": {"
        "   \"rand\": {\"type\": \"OS::Heat::RandomString\"},"
        "   \"alias\": {\"type\": \"My::Random\"},"
        "   \"app\": {\"type\": \"OS::Heat::Value\", \"properties\": {"
        "     \"value\": {\"str_replace\": {\"template\": \"postgres://app:PW@db\","
        "                 \"params\": {\"PW\": {\"get_param\": \"db_password\"}}}},"
        "     \"type\": {\"get_param\": \"who\"}}},"
        "   \"uses_attr\": {\"type\": \"OS::Heat::Value\", \"properties\": {"
        "     \"value\": {\"list_join\": [\"-\", [{\"get_attr\": [\"rand\", \"value\"]}]]}}},"
        "   \"uses_ref\": {\"type\": \"OS::Heat::Value\", \"properties\": {"
        "     \"value\": {\"get_resource\": \"alias\"}}},"
        "   \"uses_name\": {\"type\": \"OS::Heat::Value\", \"properties\": {"
        "     \"value\": {\"get_attr\": [\"app\", \"value\"]}}}}}",
        0, NULL);
    assert_non_null(t);
    return t;
}

static void learn(cli_secrets_t *s)
{
    json_t *tree = template_tree();
    json_t *params = json_pack("{s:s, s:s}", "db_password", PASSWORD, "who", "world");
    json_t *env =
        json_pack("{s:{s:s}}", "resource_registry", "My::Random", "OS::Heat::RandomString");
    cli_secrets_init(s);
    cli_secret_learn_def(s, tree, params, env, true);
    json_decref(tree);
    json_decref(params);
    json_decref(env);
}

static bool prop_secret(const cli_secrets_t *s, const char *resource, const char *prop)
{
    const json_t *names = json_object_get(s->props, resource);
    for (size_t i = 0; i < json_array_size(names); i++)
        if (strcmp(json_string_value(json_array_get(names, i)), prop) == 0)
            return true;
    return false;
}

static void assert_masked_text(const cli_secrets_t *s, const char *text, const char *want)
{
    char *got = cli_secret_mask_text(s, text);
    assert_string_equal(got, want);
    free(got);
}

static void test_hidden_parameters_are_masked_as_heat_reads_hidden(void **state)
{
    (void)state;
    json_t *tree = template_tree();
    json_t *params =
        json_pack("{s:s, s:s, s:s}", "db_password", PASSWORD, "admin", "x", "who", "world");
    json_t *shown = cli_secret_mask_params(tree, params);
    assert_string_equal(json_string_value(json_object_get(shown, "db_password")), "******");
    assert_string_equal(json_string_value(json_object_get(shown, "admin")), "******");
    assert_string_equal(json_string_value(json_object_get(shown, "who")), "world");
    json_decref(shown);
    json_decref(params);
    json_decref(tree);
}

static void test_a_hidden_value_given_or_defaulted_is_a_secret(void **state)
{
    (void)state;
    cli_secrets_t s;
    learn(&s);
    assert_masked_text(&s, PASSWORD, "******");
    assert_masked_text(&s, "adm1n-pw", "******"); /* the default: admin was not given */
    assert_masked_text(&s, "world", "world");     /* not hidden */
    cli_secrets_free(&s);
}

static void test_a_property_reading_a_hidden_parameter_is_masked_whole(void **state)
{
    (void)state;
    cli_secrets_t s;
    learn(&s);
    assert_true(prop_secret(&s, "app", "value")); /* through str_replace */
    assert_false(prop_secret(&s, "app", "type"));
    json_t *props =
        json_pack("{s:s, s:s}", "value", "postgres://app:" PASSWORD "@db", "type", "world");
    json_t *shown = cli_secret_mask_props(&s, "app", props);
    assert_string_equal(json_string_value(json_object_get(shown, "value")), "******");
    assert_string_equal(json_string_value(json_object_get(shown, "type")), "world");
    json_decref(shown);
    json_decref(props);
    cli_secrets_free(&s);
}

static void test_random_string_attribute_and_reference_are_secret(void **state)
{
    (void)state;
    cli_secrets_t s;
    learn(&s);
    assert_true(prop_secret(&s, "uses_attr", "value"));  /* get_attr [rand, value] */
    assert_true(prop_secret(&s, "uses_ref", "value"));   /* get_resource of a mapped type */
    assert_false(prop_secret(&s, "uses_name", "value")); /* a plain attribute */
    assert_true(cli_secret_type_records("OS::Heat::RandomString"));
    assert_false(cli_secret_type_records("OS::Heat::Value"));
    cli_secrets_free(&s);
}

static void test_recorded_random_values_are_masked_in_attributes_and_text(void **state)
{
    (void)state;
    cli_secrets_t s;
    learn(&s);
    json_t *attrs = json_pack("{s:s, s:{s:s}}", "value", RANDOM, "show", "value", RANDOM);
    cli_secret_learn_attrs(&s, "OS::Heat::RandomString", attrs);
    json_t *shown = cli_secret_mask_attrs(&s, "OS::Heat::RandomString", attrs);
    assert_string_equal(json_string_value(json_object_get(shown, "value")), "******");
    assert_string_equal(json_string_value(json_object_get(json_object_get(shown, "show"), "value")),
                        "******");
    json_decref(shown);
    /* A copy elsewhere: in another type's attributes, in a reason. */
    json_t *copy = json_pack("{s:s}", "value", RANDOM);
    shown = cli_secret_mask_attrs(&s, "OS::Heat::Value", copy);
    assert_string_equal(json_string_value(json_object_get(shown, "value")), "******");
    json_decref(shown);
    json_decref(copy);
    assert_masked_text(&s, "length 3 is not " RANDOM " nor " RANDOM,
                       "length 3 is not ****** nor ******");
    json_decref(attrs);
    cli_secrets_free(&s);
}

static void test_a_short_secret_is_masked_only_as_a_whole_value(void **state)
{
    (void)state;
    cli_secrets_t s;
    cli_secrets_init(&s);
    cli_secret_add(&s, "on");
    assert_masked_text(&s, "on", "******");
    assert_masked_text(&s, "stack done", "stack done");
    cli_secrets_free(&s);
}

static void test_a_longer_secret_is_masked_before_one_it_holds(void **state)
{
    (void)state;
    cli_secrets_t s;
    cli_secrets_init(&s);
    cli_secret_add(&s, "abcd");
    cli_secret_add(&s, "xxabcdxx");
    assert_masked_text(&s, "1 xxabcdxx 2 abcd", "1 ****** 2 ******");
    cli_secrets_free(&s);
}

static void test_numbers_that_read_as_a_secret_are_masked(void **state)
{
    (void)state;
    cli_secrets_t s;
    cli_secrets_init(&s);
    cli_secret_add(&s, "12345678");
    json_t *doc = json_pack("{s:i, s:i, s:[s]}", "pin", 12345678, "other", 7, "list", "12345678");
    json_t *shown = cli_secret_mask(&s, doc);
    assert_string_equal(json_string_value(json_object_get(shown, "pin")), "******");
    assert_int_equal(json_integer_value(json_object_get(shown, "other")), 7);
    assert_string_equal(json_string_value(json_array_get(json_object_get(shown, "list"), 0)),
                        "******");
    json_decref(shown);
    json_decref(doc);
    cli_secrets_free(&s);
}

static void test_the_template_shows_no_hidden_default_nor_secret(void **state)
{
    (void)state;
    cli_secrets_t s;
    learn(&s);
    json_t *tree = template_tree();
    json_t *shown = cli_secret_mask_template(&s, tree);
    const json_t *admin = json_object_get(json_object_get(shown, "parameters"), "admin");
    assert_string_equal(json_string_value(json_object_get(admin, "default")), "******");
    const json_t *who = json_object_get(json_object_get(shown, "parameters"), "who");
    assert_string_equal(json_string_value(json_object_get(who, "default")), "world");
    char *text = json_dumps(shown, 0);
    assert_null(strstr(text, "adm1n-pw"));
    free(text);
    json_decref(shown);
    json_decref(tree);
    cli_secrets_free(&s);
}

static void test_a_resource_document_masks_its_values_not_its_names(void **state)
{
    (void)state;
    cli_secrets_t s;
    learn(&s);
    json_t *doc = json_pack("{s:s, s:s, s:s, s:{s:s}, s:{s:s}, s:s}", "name", "app", "type",
                            "OS::Heat::Value", "reason", "bad value " PASSWORD, "properties",
                            "value", "x", "attributes", "value", "postgres://app:" PASSWORD "@db",
                            "status", "CREATE_COMPLETE");
    cli_secret_mask_resource(&s, "app", doc);
    assert_string_equal(json_string_value(json_object_get(doc, "reason")), "bad value ******");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(doc, "properties"), "value")), "******");
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(doc, "attributes"), "value")),
        "postgres://app:******@db");
    assert_string_equal(json_string_value(json_object_get(doc, "name")), "app");
    json_decref(doc);
    cli_secrets_free(&s);
}

static void test_a_group_of_secret_members_masks_every_attribute(void **state)
{
    (void)state;
    json_t *tree =
        json_loads("{\"resources\": {"
                   "  \"passwords\": {\"type\": \"OS::Heat::ResourceGroup\", \"properties\": {"
                   "    \"count\": 2, \"resource_def\": {\"type\": \"OS::Heat::RandomString\"}}},"
                   "  \"names\": {\"type\": \"OS::Heat::ResourceGroup\", \"properties\": {"
                   "    \"count\": 2, \"resource_def\": {\"type\": \"OS::Heat::Value\"}}},"
                   "  \"user\": {\"type\": \"OS::Heat::Value\", \"properties\": {"
                   "    \"value\": {\"get_attr\": [\"passwords\", \"refs\"]}}}}}",
                   0, NULL);
    cli_secrets_t s;
    cli_secrets_init(&s);
    cli_secret_learn_def(&s, tree, NULL, NULL, true);
    assert_true(cli_secret_group(&s, "passwords"));
    assert_false(cli_secret_group(&s, "names"));
    assert_true(prop_secret(&s, "user", "value"));
    json_t *doc = json_pack("{s:s, s:{s:[ss]}}", "type", "OS::Heat::ResourceGroup", "attributes",
                            "refs", "a1b2c3d4", "e5f6g7h8");
    cli_secret_mask_resource(&s, "passwords", doc);
    assert_string_equal(
        json_string_value(json_object_get(json_object_get(doc, "attributes"), "refs")), "******");
    json_decref(doc);
    json_decref(tree);
    cli_secrets_free(&s);
}

static void test_many_secrets_are_each_found_anywhere_in_text(void **state)
{
    (void)state;
    cli_secrets_t s;
    cli_secrets_init(&s);
    char secret[32], text[128];
    for (int i = 0; i < 300; i++) {
        snprintf(secret, sizeof(secret), "pw%03dQx", i);
        cli_secret_add(&s, secret);
    }
    for (int i = 0; i < 300; i += 37) {
        snprintf(text, sizeof(text), "a long reason that ends with pw%03dQx", i);
        assert_masked_text(&s, text, "a long reason that ends with ******");
    }
    assert_masked_text(&s, "pw999Qx pw00 nothing", "pw999Qx pw00 nothing");
    cli_secrets_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hidden_parameters_are_masked_as_heat_reads_hidden),
        cmocka_unit_test(test_a_hidden_value_given_or_defaulted_is_a_secret),
        cmocka_unit_test(test_a_property_reading_a_hidden_parameter_is_masked_whole),
        cmocka_unit_test(test_random_string_attribute_and_reference_are_secret),
        cmocka_unit_test(test_recorded_random_values_are_masked_in_attributes_and_text),
        cmocka_unit_test(test_a_short_secret_is_masked_only_as_a_whole_value),
        cmocka_unit_test(test_a_longer_secret_is_masked_before_one_it_holds),
        cmocka_unit_test(test_numbers_that_read_as_a_secret_are_masked),
        cmocka_unit_test(test_the_template_shows_no_hidden_default_nor_secret),
        cmocka_unit_test(test_a_resource_document_masks_its_values_not_its_names),
        cmocka_unit_test(test_a_group_of_secret_members_masks_every_attribute),
        cmocka_unit_test(test_many_secrets_are_each_found_anywhere_in_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
