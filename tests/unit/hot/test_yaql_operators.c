/*
 * yaql: the operators and functions Heat's functional tests use in `yaql`
 * and in conditions (= != < > and or not in, arithmetic, len, sum, max,
 * min, select, where, distinct, keys, values, dict, list, toDict, toUpper,
 * toLower, $.data and $ in lambdas), evaluated as yaql evaluates them,
 * and Heat's limits on what an expression may take and build
 * ([yaql] limit_iterators = 200, memory_quota = 10000).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "cv__template_internal.h" /* cv__yaql_eval: the evaluator itself */
#include "test_intrinsic_fixture.h"

/* yaql `expression` over `data_json`, which must give `expected_json`. */
static void assert_yaql(const char *expression, const char *data_json, const char *expected_json)
{
    char msg[512];
    json_t *data = tu_json(data_json);
    json_t *got = cv__yaql_eval(expression, data, msg, sizeof(msg));
    json_decref(data);
    if (!got)
        fail_msg("%s failed: %s", expression, msg);
    json_t *want = tu_json(expected_json);
    if (!json_equal(got, want)) {
        char *s = json_dumps(got, JSON_ENCODE_ANY);
        fail_msg("%s gave %s, expected %s", expression, s, expected_json);
    }
    json_decref(got);
    json_decref(want);
}

static void assert_yaql_fails(const char *expression, const char *data_json, const char *message)
{
    char msg[512];
    json_t *data = tu_json(data_json);
    json_t *got = cv__yaql_eval(expression, data, msg, sizeof(msg));
    json_decref(data);
    if (got)
        fail_msg("%s evaluated", expression);
    assert_string_equal(msg, message);
}

static void test_comparisons(void **state)
{
    (void)state;
    assert_yaql("$.data.a = 1", "{\"a\": 1}", "true");
    assert_yaql("$.data.a != 'x'", "{\"a\": \"x\"}", "false");
    assert_yaql("$.data.a < 2 and $.data.a > 0", "{\"a\": 1}", "true");
    assert_yaql("$.data.a >= 1.5", "{\"a\": 1}", "false");
    assert_yaql("'abc' <= 'abd'", "{}", "true");
    assert_yaql("1 = 1.0", "{}", "true");
}

static void test_logic_is_python_s(void **state)
{
    (void)state;
    assert_yaql("not $.data.a", "{\"a\": []}", "true");
    assert_yaql("$.data.a or 'default'", "{\"a\": null}", "\"default\"");
    assert_yaql("$.data.a and $.data.b", "{\"a\": 1, \"b\": 2}", "2");
    assert_yaql("not true or true", "{}", "true");
    assert_yaql("true and not false = false", "{}", "false"); /* not (false = false) */
}

static void test_in(void **state)
{
    (void)state;
    assert_yaql("'heat' in $.data.services", "{\"services\": [\"nova\", \"heat\"]}", "true");
    assert_yaql("3 in $.data", "[1, 2]", "false");
    assert_yaql("'ea' in 'heat'", "{}", "true");
}

static void test_arithmetic_has_yaql_s_precedence(void **state)
{
    (void)state;
    assert_yaql("1 + 2 * 3", "{}", "7");
    assert_yaql("(1 + 2) * 3", "{}", "9");
    assert_yaql("7 / 2", "{}", "3");
    assert_yaql("-7 / 2", "{}", "-4");
    assert_yaql("7.0 / 2", "{}", "3.5");
    assert_yaql("-7 mod 3", "{}", "2");
    assert_yaql("-$.data + 1", "5", "-4");
    assert_yaql("'ab' * 2", "{}", "\"abab\"");
    assert_yaql_fails("1 / 0", "{}", "integer division or modulo by zero");
}

static void test_collection_functions(void **state)
{
    (void)state;
    assert_yaql("$.data.len()", "[1, 2, 3]", "3");
    assert_yaql("len($.data)", "\"héé\"", "3");
    assert_yaql("sum($.data)", "[1, 2.5]", "3.5");
    assert_yaql("$.data.max()", "[1, 5, 3]", "5");
    assert_yaql("min($.data)", "[\"b\", \"a\"]", "\"a\"");
    assert_yaql("$.data.select($ * 2)", "[1, 2]", "[2, 4]");
    assert_yaql("$.data.where($ > 1)", "[1, 2, 3]", "[2, 3]");
    assert_yaql("$.data.distinct()", "[1, 2, 1, 3, 2]", "[1, 2, 3]");
    assert_yaql("$.data.where($.up).select($.name)",
                "[{\"name\": \"a\", \"up\": true}, {\"name\": \"b\", \"up\": false}]", "[\"a\"]");
}

static void test_maps(void **state)
{
    (void)state;
    assert_yaql("$.data.keys()", "{\"a\": 1, \"b\": 2}", "[\"a\", \"b\"]");
    assert_yaql("$.data.values().sum()", "{\"a\": 1, \"b\": 2}", "3");
    assert_yaql("dict(a => 1, b => $.data)", "2", "{\"a\": 1, \"b\": 2}");
    assert_yaql("dict($.data)", "[[\"k\", \"v\"]]", "{\"k\": \"v\"}");
    assert_yaql("$.data.toDict($.name, $.size)",
                "[{\"name\": \"a\", \"size\": 1}, {\"name\": \"b\", \"size\": 2}]",
                "{\"a\": 1, \"b\": 2}");
    assert_yaql("list(1, $.data, 'x')", "[2, 3]", "[1, 2, 3, \"x\"]");
}

static void test_strings(void **state)
{
    (void)state;
    assert_yaql("$.data.toUpper()", "\"Heat\"", "\"HEAT\"");
    assert_yaql("$.data.name.toLower() = 'nova'", "{\"name\": \"NoVa\"}", "true");
    assert_yaql("null = $.data.missing", "{}", "true");
}

/* Heat's limit_iterators: a collection of 201 items may be neither taken
 * nor given back; 200 may. */
static void test_collections_are_limited_to_200_items(void **state)
{
    (void)state;
    char data[2048] = "[";
    for (int i = 0; i < 201; i++)
        strcat(data, i ? ",1" : "1");
    strcat(data, "]");
    assert_yaql_fails("$.data.sum()", data, "Collection length exceeds 200 elements");
    assert_yaql_fails("$.data", data, "Collection length exceeds 200 elements");
    data[strlen(data) - 3] = ']'; /* 200 items */
    data[strlen(data) - 2] = '\0';
    assert_yaql("$.data.sum()", data, "200");
}

/* Heat's memory_quota: a result past 10,000 bytes as Python counts them. */
static void test_results_are_limited_by_the_memory_quota(void **state)
{
    (void)state;
    assert_yaql_fails("'x' * 10000", "{}", "Expression consumed too much memory");
    assert_yaql("len('x' * 9000)", "{}", "9000");
}

/* The same through Heat's function, at validation and when it runs. */
static void test_yaql_function_and_conditions_use_the_operators(void **state)
{
    (void)state;
    assert_resolves("{\"yaql\": {\"expression\": \"$.data.where($ > 1).len() = 2\", "
                    "\"data\": [1, 2, 3]}}",
                    "true");
    accept_output("2016-10-14", "{yaql: {expression: 'not ($.data.a in list(1))' }}");
    reject_output("2016-10-14", "{yaql: {expression: '$.data =~ x'}}",
                  "yaql expression not supported: the operator =~");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_comparisons),
        cmocka_unit_test(test_logic_is_python_s),
        cmocka_unit_test(test_in),
        cmocka_unit_test(test_arithmetic_has_yaql_s_precedence),
        cmocka_unit_test(test_collection_functions),
        cmocka_unit_test(test_maps),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_collections_are_limited_to_200_items),
        cmocka_unit_test(test_results_are_limited_by_the_memory_quota),
        cmocka_unit_test(test_yaql_function_and_conditions_use_the_operators),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
