/*
 * Specification of a ResourceChain's update when a type is appended to
 * `resources` (Heat's ResourceChain.handle_update: update_with_template of
 * the new child_template): the members already there keep their
 * definitions (the nested update leaves them alone), the new member comes
 * after the last one, and the refs output grows with it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "test_json_fixture.h"
#include "test_rtype_config.h"

#define CHAIN "OS::Heat::ResourceChain"

static json_t *define(const char *props_sq, json_t *data)
{
    const cv_rtype_t *t = tr_type(CHAIN);
    json_t *raw = js(props_sq), *props = tr_props(t, raw), *tpl = NULL, *params = NULL;
    char err[512] = "";
    if (t->nested->definition(CHAIN, props, NULL, data, &tpl, &params, err, sizeof(err)) != 0)
        fail_msg("definition failed: %s", err);
    json_decref(params);
    json_decref(props);
    json_decref(raw);
    return tpl;
}

static void test_an_appended_type_is_a_member_after_the_last(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_t *before = define("{'resources': ['OS::Heat::Delay', 'OS::Heat::Delay']}", data);
    json_t *after =
        define("{'resources': ['OS::Heat::Delay', 'OS::Heat::Delay', 'OS::Heat::None']}", data);
    const json_t *old_res = json_object_get(before, "resources");
    const json_t *res = json_object_get(after, "resources");
    assert_true(json_equal(json_object_get(old_res, "0"), json_object_get(res, "0")));
    assert_true(json_equal(json_object_get(old_res, "1"), json_object_get(res, "1")));
    assert_json_sq(json_object_get(res, "2"), "{'type': 'OS::Heat::None', 'depends_on': ['1']}");
    assert_json_sq(
        json_object_get(json_object_get(after, "outputs"), "refs"),
        "{'value': [{'get_resource': '0'}, {'get_resource': '1'}, {'get_resource': '2'}]}");
    assert_json_sq(json_object_get(data, "names"), "['0', '1', '2']");
    json_decref(after);
    json_decref(before);
    json_decref(data);
}

/* concurrent: no member waits for another, the appended one neither. */
static void test_a_concurrent_chain_grows_without_dependencies(void **state)
{
    (void)state;
    json_t *data = json_object();
    json_t *tpl = define("{'resources': ['OS::Heat::None', 'OS::Heat::None', 'OS::Heat::None'],"
                         " 'concurrent': true}",
                         data);
    const char *key;
    const json_t *m;
    json_object_foreach(json_object_get(tpl, "resources"), key, m)
    {
        if (json_object_get(m, "depends_on"))
            fail_msg("member %s of a concurrent chain waits for another", key);
    }
    json_decref(tpl);
    json_decref(data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_appended_type_is_a_member_after_the_last),
        cmocka_unit_test(test_a_concurrent_chain_grows_without_dependencies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
