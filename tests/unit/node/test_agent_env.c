/*
 * Specification of a replica's environment (agent/node/agent_subst.h,
 * agent/node/agent_env.h): ${VAR} substitution and the CONVERGE_* variables.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_env.h"
#include "agent_subst.h"
#include "test_util.h"

static const char *vars_lookup(void *ud, const char *name)
{
    return json_string_value(json_object_get(ud, name));
}

static void check_subst(const char *vars, const char *in, const char *want)
{
    json_t *v = tu_json(vars);
    char *out = cv_subst(in, vars_lookup, v);
    assert_non_null(out);
    assert_string_equal(out, want);
    free(out);
    json_decref(v);
}

static void test_known_variables_are_replaced(void **state)
{
    (void)state;
    check_subst("{\"A\": \"1\", \"NAME\": \"web-0\"}", "${NAME}:${A}${A}", "web-0:11");
}

static void test_unknown_variables_stay_as_written(void **state)
{
    (void)state;
    check_subst("{}", "echo ${HOME} $PATH", "echo ${HOME} $PATH");
}

static void test_an_unclosed_reference_stays(void **state)
{
    (void)state;
    check_subst("{\"A\": \"1\"}", "x ${A", "x ${A");
}

static void test_a_doubled_dollar_writes_a_literal_reference(void **state)
{
    (void)state;
    check_subst("{\"A\": \"1\"}", "$${A} ${A}", "${A} 1");
}

static void test_values_are_not_substituted_again(void **state)
{
    (void)state;
    check_subst("{\"A\": \"${B}\", \"B\": \"2\"}", "${A}", "${B}");
}

static json_t *spec_json(void)
{
    return tu_json("{\"rid\": \"s.web.1/2/3\", \"svc\": \"s.web.1\", \"stack\": \"sid\","
                   " \"stack_name\": \"demo\", \"service\": \"web\", \"index\": 2,"
                   " \"name\": \"web-2.demo\", \"env\": {\"LEVEL\": \"debug\"},"
                   " \"tasks\": [{\"name\": \"main\", \"command\": [\"srv\", "
                   "\"--port=${CONVERGE_PORT_HTTP_API}\", \"${LEVEL}\"],"
                   " \"env\": {\"GREETING\": \"hi ${CONVERGE_NAME} on ${CONVERGE_NODE}\","
                   " \"N\": 3}}],"
                   " \"ports\": [{\"name\": \"http-api\", \"port\": 0}]}");
}

static const char *env_get(char **env, const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; env[i]; i++)
        if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
            return env[i] + n + 1;
    return NULL;
}

static void test_every_replica_gets_its_converge_variables(void **state)
{
    (void)state;
    char err[256];
    cv_rspec_t s;
    json_t *j = spec_json();
    assert_int_equal(cv_rspec_parse(j, &s, err, sizeof(err)), 0);
    json_t *ports = tu_json("{\"http-api\": 31005}"), *volumes = tu_json("{\"data\": \"/v/d\"}");
    cv_env_where_t w = {"node-1", "127.0.0.1", ports, volumes, NULL};
    json_t *vars = cv_env_vars(&s, &s.tasks[0], &w);
    char *inherit[] = {"PATH=/bin", "SECRET=x", NULL};
    char **env = cv_env_build(&s, &s.tasks[0], vars, inherit);
    assert_string_equal(env_get(env, "CONVERGE_INDEX"), "2");
    assert_string_equal(env_get(env, "CONVERGE_NAME"), "web-2.demo");
    assert_string_equal(env_get(env, "CONVERGE_NODE"), "node-1");
    assert_string_equal(env_get(env, "CONVERGE_SERVICE"), "web");
    assert_string_equal(env_get(env, "CONVERGE_STACK"), "demo");
    assert_string_equal(env_get(env, "CONVERGE_PORT_HTTP_API"), "31005");
    assert_string_equal(env_get(env, "CONVERGE_VOLUME_DATA"), "/v/d");
    assert_string_equal(env_get(env, "GREETING"), "hi web-2.demo on node-1");
    assert_string_equal(env_get(env, "LEVEL"), "debug");
    assert_string_equal(env_get(env, "N"), "3");
    assert_string_equal(env_get(env, "PATH"), "/bin");
    assert_null(env_get(env, "SECRET"));
    char **argv = cv_env_argv(s.tasks[0].argv, &s, &s.tasks[0], vars);
    assert_string_equal(argv[1], "--port=31005");
    assert_string_equal(argv[2], "debug");
    cv_env_free(argv);
    cv_env_free(env);
    json_decref(vars);
    json_decref(ports);
    json_decref(volumes);
    json_decref(j);
    cv_rspec_free(&s);
}

static void test_a_replica_with_a_load_file_is_told_where_it_is(void **state)
{
    (void)state;
    char err[256];
    cv_rspec_t s;
    json_t *j = spec_json();
    assert_int_equal(cv_rspec_parse(j, &s, err, sizeof(err)), 0);
    cv_env_where_t w = {"node-1", "127.0.0.1", NULL, NULL, NULL};
    json_t *vars = cv_env_vars(&s, &s.tasks[0], &w);
    assert_null(json_object_get(vars, "CONVERGE_LOAD_FILE"));
    json_decref(vars);
    w.load_file = "/a/replicas/s+2+1.load";
    vars = cv_env_vars(&s, &s.tasks[0], &w);
    char **env = cv_env_build(&s, &s.tasks[0], vars, NULL);
    assert_string_equal(env_get(env, "CONVERGE_LOAD_FILE"), "/a/replicas/s+2+1.load");
    cv_env_free(env);
    json_decref(vars);
    json_decref(j);
    cv_rspec_free(&s);
}

static void test_names_are_upper_cased_with_underscores(void **state)
{
    (void)state;
    char buf[64];
    cv_env_upper(buf, sizeof(buf), "http-api.v2");
    assert_string_equal(buf, "HTTP_API_V2");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_known_variables_are_replaced),
        cmocka_unit_test(test_unknown_variables_stay_as_written),
        cmocka_unit_test(test_an_unclosed_reference_stays),
        cmocka_unit_test(test_a_doubled_dollar_writes_a_literal_reference),
        cmocka_unit_test(test_values_are_not_substituted_again),
        cmocka_unit_test(test_every_replica_gets_its_converge_variables),
        cmocka_unit_test(test_a_replica_with_a_load_file_is_told_where_it_is),
        cmocka_unit_test(test_names_are_upper_cased_with_underscores),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
