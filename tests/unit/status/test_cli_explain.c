/*
 * Specification of `convergectl place --explain` without Redis
 * (cli/status/cli_explain.h): the live model becomes the placement library's
 * inputs as the live engine builds them, and each replica is explained by
 * cv_place with the others kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_explain.h"
#include "test_util.h"

/* Three nodes of 1024 MemoryMB in three fault and upgrade domains; n1 and
 * n3 are in zone a. Another service's replica takes 900 MemoryMB of n3.
 * Service w wants 3 replicas of 256 MemoryMB in zone a; index 0 runs on n1. */
static json_t *model(void)
{
    return tu_json(
        "{\"now\": 1000,"
        " \"settings\": {\"nodeTypes\": {\"T\": {\"capacities\": {\"MemoryMB\": 1024}}}},"
        " \"nodes\": {"
        "  \"n1\": {\"name\": \"n1\", \"type\": \"T\", \"faultDomain\": \"fd:/r0\", "
        "\"upgradeDomain\": \"UD0\", \"properties\": {\"zone\": \"a\"}},"
        "  \"n2\": {\"name\": \"n2\", \"type\": \"T\", \"faultDomain\": \"fd:/r1\", "
        "\"upgradeDomain\": \"UD1\", \"properties\": {\"zone\": \"b\"}},"
        "  \"n3\": {\"name\": \"n3\", \"type\": \"T\", \"faultDomain\": \"fd:/r2\", "
        "\"upgradeDomain\": \"UD2\", \"properties\": {\"zone\": \"a\"}}},"
        " \"node\": {},"
        " \"alive\": {\"n1\": 3000, \"n2\": 3000, \"n3\": 3000},"
        " \"assign\": {\"n1\": {\"w/0/1\": {\"rid\": \"w/0/1\", \"load\": {\"MemoryMB\": 256}}},"
        "             \"n3\": {\"o/0/1\": {\"rid\": \"o/0/1\", \"load\": {\"MemoryMB\": 900}}}},"
        " \"report\": {},"
        " \"services\": {\"w\": {\"stack_name\": \"demo\", \"resource\": \"web\", \"state\": "
        "\"active\", \"gen\": \"1\","
        "   \"spec\": {\"name\": \"w\", \"serviceType\": \"web\", \"replicas\": 3, \"stateful\": "
        "false,"
        "            \"placementConstraints\": \"zone == a\","
        "            \"metrics\": [{\"name\": \"MemoryMB\", \"primaryLoad\": 256}], \"process\": "
        "{}},"
        "   \"placement\": [{\"index\": 0, \"rid\": \"w/0/1\", \"node\": \"n1\", \"role\": "
        "\"instance\", \"since\": 900}],"
        "   \"unplaced\": []}}}");
}

static json_t *explain(const json_t *m)
{
    char err[512] = "";
    json_t *doc = cli_explain(m, "w", err, sizeof(err));
    if (!doc)
        fail_msg("cli_explain: %s", err);
    return doc;
}

static const json_t *replica(const json_t *doc, size_t i)
{
    return json_array_get(json_object_get(doc, "replicas"), i);
}

/* The nodes a step of an elimination sequence names, as "n1 n2". */
static void eliminated(const json_t *seq, const char *constraint, char *buf, size_t size)
{
    size_t i, j;
    json_t *step, *node;
    buf[0] = 0;
    json_array_foreach(seq, i, step)
    {
        if (strcmp(json_string_value(json_object_get(step, "constraint")), constraint) != 0)
            continue;
        json_array_foreach(json_object_get(step, "eliminated"), j, node)
        {
            snprintf(buf + strlen(buf), size - strlen(buf), "%s%s", buf[0] ? " " : "",
                     json_string_value(node));
        }
    }
}

static void test_a_running_replica_is_explained_where_it_runs(void **state)
{
    (void)state;
    json_t *m = model(), *doc = explain(m);
    const json_t *r0 = replica(doc, 0);
    assert_int_equal(json_array_size(json_object_get(doc, "replicas")), 3);
    assert_string_equal(json_string_value(json_object_get(r0, "node")), "n1");
    assert_string_equal(json_string_value(json_object_get(r0, "choice")), "n1");
    assert_false(json_is_true(json_object_get(r0, "moves")));
    assert_null(json_object_get(r0, "eliminationSequence"));
    json_decref(doc);
    json_decref(m);
}

static void test_an_unplaceable_replica_gets_its_elimination_sequence(void **state)
{
    (void)state;
    json_t *m = model(), *doc = explain(m);
    const json_t *r1 = replica(doc, 1);
    char buf[128];
    assert_true(json_is_null(json_object_get(r1, "node")));
    assert_true(json_is_null(json_object_get(r1, "choice")));
    const json_t *seq = json_object_get(r1, "eliminationSequence");
    eliminated(seq, "PlacementConstraint", buf, sizeof(buf));
    assert_string_equal(buf, "n2");
    eliminated(seq, "NodeCapacity", buf, sizeof(buf)); /* 900 + 256 > 1024 */
    assert_string_equal(buf, "n3");
    eliminated(seq, "ReplicaExclusion", buf, sizeof(buf)); /* index 0 runs there */
    assert_string_equal(buf, "n1");
    /* The whole-service check keeps index 0 and leaves 1 and 2 unplaced. */
    const json_t *check = json_object_get(doc, "check");
    assert_int_equal(json_array_size(json_object_get(check, "placements")), 1);
    assert_int_equal(json_array_size(json_object_get(check, "unplaced")), 2);
    json_decref(doc);
    json_decref(m);
}

static void test_the_other_services_declared_load_counts_not_the_services_own(void **state)
{
    (void)state;
    json_t *m = model();
    /* Without the other service's replica, n3 takes index 1. */
    json_object_del(json_object_get(json_object_get(m, "assign"), "n3"), "o/0/1");
    json_t *doc = explain(m);
    assert_string_equal(json_string_value(json_object_get(replica(doc, 1), "choice")), "n3");
    json_decref(doc);
    json_decref(m);
}

static void test_a_draining_or_down_node_takes_no_replica(void **state)
{
    (void)state;
    json_t *m = model();
    json_object_del(json_object_get(json_object_get(m, "assign"), "n3"), "o/0/1");
    json_object_set_new(json_object_get(m, "node"), "n3", tu_json("{\"admin\": \"draining\"}"));
    json_t *doc = explain(m);
    char buf[128];
    assert_true(json_is_null(json_object_get(replica(doc, 1), "choice")));
    eliminated(json_object_get(replica(doc, 1), "eliminationSequence"), "NodeStatus", buf,
               sizeof(buf));
    assert_string_equal(buf, "n3");
    json_decref(doc);
    json_object_set_new(json_object_get(m, "node"), "n3", json_object());
    json_object_set_new(json_object_get(m, "alive"), "n3", json_integer(0));
    doc = explain(m);
    assert_true(json_is_null(json_object_get(replica(doc, 1), "choice")));
    json_decref(doc);
    json_decref(m);
}

static void test_a_blocklisted_node_is_disabled_for_the_service_until_its_time(void **state)
{
    (void)state;
    json_t *m = model();
    json_t *rec = json_object_get(json_object_get(m, "services"), "w");
    json_object_del(json_object_get(json_object_get(m, "assign"), "n3"), "o/0/1");
    json_object_set_new(rec, "blocklist", tu_json("{\"n3\": 2000}"));
    json_t *doc = explain(m);
    assert_true(json_is_null(json_object_get(replica(doc, 1), "choice")));
    json_decref(doc);
    json_object_set_new(rec, "blocklist", tu_json("{\"n3\": 500}")); /* expired */
    doc = explain(m);
    assert_string_equal(json_string_value(json_object_get(replica(doc, 1), "choice")), "n3");
    json_decref(doc);
    json_decref(m);
}

static void test_the_text_names_each_replica_and_the_eliminating_constraints(void **state)
{
    (void)state;
    json_t *m = model(), *doc = explain(m);
    char *text = cli_explain_text(doc);
    assert_contains(text, "Service web of stack demo (w)");
    assert_contains(text, "n1");
    assert_contains(text, "Replica 1 finds no node; elimination sequence:");
    assert_contains(text, "PlacementConstraint  eliminated 1 node(s): n2");
    free(text);
    json_decref(doc);
    json_decref(m);
}

static void test_the_engines_sequence_is_shown_only_when_it_says_something_else(void **state)
{
    (void)state;
    json_t *m = model(), *doc = explain(m);
    json_t *rec = json_object_get(json_object_get(m, "services"), "w");
    /* The engine recorded what cv_place says now: said once. */
    json_object_set_new(rec, "unplaced",
                        json_pack("[{s:i, s:O}]", "index", 1, "eliminationSequence",
                                  json_object_get(replica(doc, 1), "eliminationSequence")));
    json_decref(doc);
    doc = explain(m);
    char *text = cli_explain_text(doc);
    assert_null(strstr(text, "The engine left replica 1"));
    free(text);
    json_decref(doc);
    /* An older record that differs is shown as the engine's. */
    json_object_set_new(rec, "unplaced",
                        tu_json("[{\"index\": 1, \"eliminationSequence\": [{\"constraint\": "
                                "\"NodeCapacity\", \"eliminated\": [\"n1\", \"n2\", \"n3\"]}]}]"));
    doc = explain(m);
    text = cli_explain_text(doc);
    assert_contains(text, "The engine left replica 1 unplaced; its elimination sequence then:");
    assert_contains(text, "NodeCapacity         eliminated 3 node(s): n1 n2 n3");
    free(text);
    json_decref(doc);
    json_decref(m);
}

static void test_a_service_scaled_to_zero_has_nothing_to_explain(void **state)
{
    (void)state;
    json_t *m = model();
    json_t *spec = json_object_get(json_object_get(json_object_get(m, "services"), "w"), "spec");
    json_object_set_new(spec, "replicas", json_integer(0));
    json_t *doc = explain(m);
    assert_int_equal(json_array_size(json_object_get(doc, "replicas")), 0);
    assert_int_equal(json_array_size(json_object_get(json_object_get(doc, "check"), "unplaced")),
                     0);
    json_decref(doc);
    json_decref(m);
}

static void test_an_unknown_service_or_bad_spec_is_an_error(void **state)
{
    (void)state;
    json_t *m = model();
    char err[256];
    assert_null(cli_explain(m, "nope", err, sizeof(err)));
    assert_contains(err, "service nope has no record");
    json_object_set_new(json_object_get(json_object_get(m, "services"), "w"), "spec",
                        tu_json("{\"replicas\": 2, \"placementConstraints\": \"zone ==\"}"));
    assert_null(cli_explain(m, "w", err, sizeof(err)));
    assert_contains(err, "placementConstraints");
    json_decref(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_running_replica_is_explained_where_it_runs),
        cmocka_unit_test(test_an_unplaceable_replica_gets_its_elimination_sequence),
        cmocka_unit_test(test_the_other_services_declared_load_counts_not_the_services_own),
        cmocka_unit_test(test_a_draining_or_down_node_takes_no_replica),
        cmocka_unit_test(test_a_blocklisted_node_is_disabled_for_the_service_until_its_time),
        cmocka_unit_test(test_the_text_names_each_replica_and_the_eliminating_constraints),
        cmocka_unit_test(test_the_engines_sequence_is_shown_only_when_it_says_something_else),
        cmocka_unit_test(test_a_service_scaled_to_zero_has_nothing_to_explain),
        cmocka_unit_test(test_an_unknown_service_or_bad_spec_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
