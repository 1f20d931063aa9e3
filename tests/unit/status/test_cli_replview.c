/*
 * Specification of what `convergectl replicas` and `convergectl health`
 * decide without Redis (cli/status/cli_replview.h): a replica row joins the
 * service's placement with its node's report; health reports are sorted
 * Error first and expire as Service Fabric's do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_replview.h"
#include "test_util.h"

/* Service web of stack demo: index 0 on n1 (reported healthy), index 1 on
 * n2 (no report yet), index 2 on n3 (node down), index 3 unplaced. */
static json_t *model(void)
{
    return tu_json(
        "{\"now\": 2000,"
        " \"nodes\": {\"n1\": {}, \"n2\": {}, \"n3\": {}},"
        " \"alive\": {\"n1\": 3000, \"n2\": 3000, \"n3\": 0},"
        " \"assign\": {\"n1\": {\"w/0/1\": {\"rid\": \"w/0/1\", \"name\": \"web-0.demo\"}}},"
        " \"report\": {\"n1\": {\"w/0/1\": {\"rid\": \"w/0/1\", \"state\": \"healthy\", \"pid\": "
        "4242,"
        "   \"restarts\": 2, \"since\": 1990, \"address\": \"127.0.0.1\","
        "   \"ports\": {\"http\": 31001, \"admin\": 31002}}}},"
        " \"services\": {\"w\": {\"stack_name\": \"demo\", \"resource\": \"web\","
        "   \"placement\": [{\"index\": 2, \"rid\": \"w/2/1\", \"node\": \"n3\", \"role\": "
        "\"instance\", \"since\": 1000},"
        "                   {\"index\": 0, \"rid\": \"w/0/1\", \"node\": \"n1\", \"role\": "
        "\"instance\", \"since\": 1000},"
        "                   {\"index\": 1, \"rid\": \"w/1/1\", \"node\": \"n2\", \"role\": "
        "\"instance\", \"since\": 1500}],"
        "   \"unplaced\": [{\"index\": 3, \"eliminationSequence\": ["
        "      {\"constraint\": \"PlacementConstraint\", \"eliminated\": [\"n1\", \"n2\"]},"
        "      {\"constraint\": \"NodeCapacity\", \"eliminated\": []},"
        "      {\"constraint\": \"FaultDomain\", \"eliminated\": [\"n3\"]}]}]}}}");
}

static json_t *rows_of(json_t *m)
{
    json_t *services = tu_json("[{\"resource\": \"web\", \"svc\": \"w\"}]");
    json_t *rows = cli_replica_rows(m, services);
    json_decref(services);
    return rows;
}

static const char *field(const json_t *rows, size_t i, const char *key)
{
    return json_string_value(json_object_get(json_array_get(rows, i), key));
}

static void test_replicas_are_listed_by_index_with_their_names(void **state)
{
    (void)state;
    json_t *m = model(), *rows = rows_of(m);
    assert_int_equal(json_array_size(rows), 4);
    for (size_t i = 0; i < 4; i++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(rows, i), "index")), i);
    assert_string_equal(field(rows, 0, "name"), "web-0.demo");
    assert_string_equal(field(rows, 1, "name"), "web-1.demo"); /* from the record */
    json_decref(rows);
    json_decref(m);
}

static void test_a_reported_replica_shows_its_process(void **state)
{
    (void)state;
    json_t *m = model(), *rows = rows_of(m);
    const json_t *r = json_array_get(rows, 0);
    assert_string_equal(field(rows, 0, "status"), "healthy");
    assert_string_equal(field(rows, 0, "health"), "ok");
    assert_string_equal(field(rows, 0, "node"), "n1");
    assert_int_equal(json_integer_value(json_object_get(r, "pid")), 4242);
    assert_int_equal(json_integer_value(json_object_get(r, "restarts")), 2);
    assert_int_equal((int)json_number_value(json_object_get(r, "since")), 1990);
    assert_string_equal(field(rows, 0, "endpoint"), "127.0.0.1:31002"); /* admin < http */
    assert_string_equal(json_string_value(json_object_get(json_object_get(r, "endpoints"), "http")),
                        "127.0.0.1:31001");
    json_decref(rows);
    json_decref(m);
}

static void test_a_replica_without_report_is_assigned(void **state)
{
    (void)state;
    json_t *m = model(), *rows = rows_of(m);
    assert_string_equal(field(rows, 1, "status"), "assigned");
    assert_true(json_is_null(json_object_get(json_array_get(rows, 1), "pid")));
    assert_int_equal((int)json_number_value(json_object_get(json_array_get(rows, 1), "since")),
                     1500);
    json_decref(rows);
    json_decref(m);
}

static void test_a_replica_on_a_down_node_is_node_down(void **state)
{
    (void)state;
    json_t *m = model(), *rows = rows_of(m);
    assert_string_equal(field(rows, 2, "status"), "node_down");
    assert_string_equal(field(rows, 2, "reason"), "the node's heartbeat expired");
    json_decref(rows);
    json_decref(m);
}

static void test_a_replica_running_another_digest_is_outdated(void **state)
{
    (void)state;
    json_t *m = model();
    json_t *spec = json_object_get(json_object_get(json_object_get(m, "assign"), "n1"), "w/0/1");
    json_t *report = json_object_get(json_object_get(json_object_get(m, "report"), "n1"), "w/0/1");
    json_object_set_new(spec, "digest", json_string("new"));
    json_object_set_new(report, "digest", json_string("old"));
    json_t *rows = rows_of(m);
    assert_string_equal(field(rows, 0, "status"), "outdated");
    json_decref(rows);
    json_object_set_new(report, "digest", json_string("new"));
    rows = rows_of(m);
    assert_string_equal(field(rows, 0, "status"), "healthy");
    json_decref(rows);
    json_decref(m);
}

static void test_an_unplaced_replica_says_what_eliminated_the_nodes(void **state)
{
    (void)state;
    json_t *m = model(), *rows = rows_of(m);
    assert_string_equal(field(rows, 3, "status"), "unplaced");
    assert_true(json_is_null(json_object_get(json_array_get(rows, 3), "node")));
    assert_string_equal(
        field(rows, 3, "reason"),
        "PlacementConstraint eliminated 2 node(s); FaultDomain eliminated 1 node(s)");
    json_decref(rows);
    json_decref(m);
}

static void test_the_replica_table_shows_ages_and_reasons(void **state)
{
    (void)state;
    json_t *m = model(), *rows = rows_of(m), *table = cli_replica_table(rows, 2000);
    json_t *first = json_array_get(table, 1), *down = json_array_get(table, 3);
    assert_string_equal(json_string_value(json_array_get(first, 1)), "0");
    assert_string_equal(json_string_value(json_array_get(first, 6)), "4242");
    assert_string_equal(json_string_value(json_array_get(first, 9)), "10s");
    assert_string_equal(json_string_value(json_array_get(first, 10)), "127.0.0.1:31002");
    assert_string_equal(json_string_value(json_array_get(down, 5)),
                        "node_down (the node's heartbeat expired)");
    json_t *unplaced = json_array_get(table, 4);
    assert_string_equal(json_string_value(json_array_get(unplaced, 3)), "-");
    assert_string_equal(json_string_value(json_array_get(unplaced, 7)), ""); /* never ran */
    json_decref(table);
    json_decref(rows);
    json_decref(m);
}

static json_t *reports(void)
{
    return tu_json(
        "{\"a|1\": {\"source\": \"a\", \"property\": \"1\", \"state\": \"Ok\", \"time\": 990,"
        "           \"timeToLive\": 60, \"removeWhenExpired\": true, \"description\": \"fine\"},"
        " \"b|2\": {\"source\": \"b\", \"property\": \"2\", \"state\": \"Warning\", \"time\": 100,"
        "           \"timeToLive\": 0, \"description\": \"never expires\"},"
        " \"c|3\": {\"source\": \"c\", \"property\": \"3\", \"state\": \"Warning\", \"time\": 100,"
        "           \"timeToLive\": 60, \"removeWhenExpired\": true, \"description\": \"gone\"},"
        " \"d|4\": {\"source\": \"d\", \"property\": \"4\", \"state\": \"Ok\", \"time\": 100,"
        "           \"timeToLive\": 60, \"removeWhenExpired\": false, \"description\": \"stale\"},"
        " \"e|5\": {\"source\": \"e\", \"property\": \"5\", \"state\": \"Error\", \"time\": 999,"
        "           \"description\": \"broken\"},"
        " \"f|6\": {\"error\": \"not JSON: x\"}}");
}

static void test_health_reports_are_sorted_error_first(void **state)
{
    (void)state;
    json_t *r = reports(), *rows = cli_health_rows(r, 1000);
    assert_int_equal(json_array_size(rows), 5);
    assert_string_equal(field(rows, 0, "state"), "Error");
    assert_string_equal(field(rows, 0, "source"), "d"); /* expired, kept: an Error */
    assert_string_equal(field(rows, 1, "source"), "e");
    assert_string_equal(field(rows, 2, "source"), "f|6"); /* unreadable: an Error */
    assert_string_equal(field(rows, 3, "source"), "b");
    assert_string_equal(field(rows, 4, "source"), "a");
    json_decref(rows);
    json_decref(r);
}

static void test_an_expired_report_is_removed_or_turns_to_error(void **state)
{
    (void)state;
    json_t *r = reports(), *rows = cli_health_rows(r, 1000);
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        assert_string_not_equal(json_string_value(json_object_get(row, "source")), "c");
    }
    assert_true(json_is_true(json_object_get(json_array_get(rows, 0), "expired")));
    assert_true(json_is_false(json_object_get(json_array_get(rows, 1), "expired")));
    json_t *table = cli_health_table(rows, 1000);
    assert_string_equal(json_string_value(json_array_get(json_array_get(table, 1), 4)),
                        "(expired) stale");
    json_decref(table);
    json_decref(rows);
    json_decref(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_replicas_are_listed_by_index_with_their_names),
        cmocka_unit_test(test_a_reported_replica_shows_its_process),
        cmocka_unit_test(test_a_replica_without_report_is_assigned),
        cmocka_unit_test(test_a_replica_on_a_down_node_is_node_down),
        cmocka_unit_test(test_a_replica_running_another_digest_is_outdated),
        cmocka_unit_test(test_an_unplaced_replica_says_what_eliminated_the_nodes),
        cmocka_unit_test(test_the_replica_table_shows_ages_and_reasons),
        cmocka_unit_test(test_health_reports_are_sorted_error_first),
        cmocka_unit_test(test_an_expired_report_is_removed_or_turns_to_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
