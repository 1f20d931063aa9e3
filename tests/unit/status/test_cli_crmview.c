/*
 * Specification of what `convergectl crm` and `nodes --map` show of the
 * cluster resource manager (cli/status/cli_crmview.h, docs/crm.md "Status"): the
 * holder and epoch from the lease, every status field parsed, the phases,
 * the imbalance table, the window and why nothing moved, and a status that
 * is missing, half written or malformed shown for what it has.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_crmview.h"
#include "test_util.h"

#define NOW 1000.0

/* A holder of epoch 7 whose status says it all: balancing found CPU
 * imbalanced on the whole cluster (3 against its threshold 2) and moved to
 * 1.2; MemoryMB on node type A stayed below its activity threshold. */
static json_t *full_raw(void)
{
    json_t *raw = tu_json("{\"now\": 1000, \"lease\": \"observer-1:7\", \"lease_ms\": 2400,"
                          " \"status\": {}}");
    json_t *st = json_object_get(raw, "status");
    json_object_set_new(st, "holder", json_string("observer-1"));
    json_object_set_new(st, "epoch", json_string("7"));
    json_object_set_new(st, "since", json_string("870"));
    json_object_set_new(st, "refresh", json_string("{\"at\": 999.9, \"ms\": 2, \"moves\": 0}"));
    json_object_set_new(st, "placement", json_string("{\"at\": 999.5, \"ms\": 15, \"moves\": 0}"));
    json_object_set_new(st, "constraint", json_string("{\"at\": 999.5, \"ms\": 3, \"moves\": 1}"));
    json_object_set_new(st, "balancing", json_string("{\"at\": 996.8, \"ms\": 40, \"moves\": 2}"));
    json_object_set_new(
        st, "imbalance",
        json_string("[{\"metric\": \"CPU\", \"nodeType\": null, \"max\": 3, \"min\": 1,"
                    "  \"ratio\": 3, \"threshold\": 2, \"activity\": 0, \"strategy\": \"balance\","
                    "  \"imbalanced\": true, \"after\": 1.2},"
                    " {\"metric\": \"MemoryMB\", \"nodeType\": \"A\", \"max\": 1000, \"min\": 0,"
                    "  \"ratio\": null, \"threshold\": 1, \"activity\": 1536,"
                    "  \"strategy\": \"balance\", \"imbalanced\": false, \"after\": null}]"));
    json_object_set_new(st, "window",
                        json_string("{\"moves\": 3, \"throttled\": 1, \"interval\": 600}"));
    json_object_set_new(st, "why", json_string("MemoryMB: below activity threshold 1536"));
    json_object_set_new(st, "state", json_string("{\"windows\": {}}"));
    return raw;
}

static char *text_of(const json_t *raw)
{
    json_t *doc = cli_crm_doc(raw);
    char *text = cli_crm_text(doc, NOW);
    json_decref(doc);
    return text;
}

static void test_holder_and_epoch_come_from_the_lease_value(void **state)
{
    (void)state;
    json_t *raw = full_raw();
    json_t *doc = cli_crm_doc(raw);
    assert_string_equal(json_string_value(json_object_get(doc, "holder")), "observer-1");
    assert_int_equal(json_integer_value(json_object_get(doc, "epoch")), 7);
    assert_int_equal(json_integer_value(json_object_get(doc, "lease_ms")), 2400);
    assert_true(json_is_true(json_object_get(doc, "status")));
    json_decref(doc);
    /* A worker id with colons: the epoch is what follows the last one. */
    json_object_set_new(raw, "lease", json_string("host:a:12"));
    doc = cli_crm_doc(raw);
    assert_string_equal(json_string_value(json_object_get(doc, "holder")), "host:a");
    assert_int_equal(json_integer_value(json_object_get(doc, "epoch")), 12);
    json_decref(doc);
    /* A lease without an epoch (the cluster loop before fencing): a worker id. */
    json_object_set_new(raw, "lease", json_string("observer-2"));
    doc = cli_crm_doc(raw);
    assert_string_equal(json_string_value(json_object_get(doc, "holder")), "observer-2");
    assert_true(json_is_null(json_object_get(doc, "epoch")));
    json_decref(doc);
    json_decref(raw);
}

static void test_every_status_field_is_parsed_into_the_document(void **state)
{
    (void)state;
    json_t *raw = full_raw();
    json_object_set_new(json_object_get(raw, "status"), "future", json_string("plain text"));
    json_t *doc = cli_crm_doc(raw);
    assert_string_equal(json_string_value(json_object_get(doc, "status_holder")), "observer-1");
    assert_int_equal(json_integer_value(json_object_get(doc, "status_epoch")), 7);
    assert_int_equal(json_integer_value(json_object_get(doc, "since")), 870);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(doc, "balancing"), "moves")), 2);
    assert_int_equal(json_array_size(json_object_get(doc, "imbalance")), 2);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(doc, "window"), "throttled")), 1);
    assert_string_equal(json_string_value(json_object_get(doc, "why")),
                        "MemoryMB: below activity threshold 1536");
    assert_true(json_is_object(json_object_get(doc, "state")));
    assert_string_equal(json_string_value(json_object_get(doc, "future")), "plain text");
    assert_null(json_object_get(doc, "errors"));
    json_decref(doc);
    json_decref(raw);
}

static void test_the_text_shows_holder_phases_balance_window_and_why(void **state)
{
    (void)state;
    json_t *raw = full_raw();
    char *t = text_of(raw);
    assert_contains(t, "Cluster resource manager: observer-1, epoch 7, holds the role for 2m10s "
                       "(lease 2.4s left)\n");
    assert_contains(t, "  PHASE       LAST RUN  MS  MOVES\n");
    assert_contains(t, "  refresh     0.1s ago  2   0\n");
    assert_contains(t, "  constraint  0.5s ago  3   1\n");
    assert_contains(t, "  balancing   3.2s ago  40  2\n");
    assert_contains(t, "  METRIC    NODE TYPE  MAX   MIN  RATIO  THRESHOLD  ACTIVITY  STRATEGY  "
                       "IMBALANCED  AFTER\n");
    assert_contains(t, "  CPU       (all)      3     1    3.00   2          0         balance   "
                       "yes         1.20\n");
    assert_contains(t, "  MemoryMB  A          1000  0    inf    1          1536      balance   "
                       "no          inf\n");
    assert_contains(t, "Moves in the throttle window: 3 made, 1 throttled (window 600s)\n");
    assert_contains(t, "Nothing moved: MemoryMB: below activity threshold 1536\n");
    free(t);
    json_decref(raw);
}

static void test_no_holder_and_no_status_say_so(void **state)
{
    (void)state;
    json_t *raw = tu_json("{\"now\": 1000, \"lease\": null, \"lease_ms\": 0, \"status\": {}}");
    json_t *doc = cli_crm_doc(raw);
    assert_true(json_is_null(json_object_get(doc, "holder")));
    assert_true(json_is_false(json_object_get(doc, "status")));
    char *t = cli_crm_text(doc, NOW);
    assert_string_equal(t, "No cluster resource manager holds the role ({cluster}:crm is free).\n"
                           "No status yet: no cluster resource manager has written "
                           "{cluster}:crm:status.\n");
    free(t);
    t = cli_crm_balance_text(doc, NOW);
    assert_string_equal(t, "");
    free(t);
    json_decref(doc);
    json_decref(raw);
}

static void test_a_half_written_status_shows_what_it_has(void **state)
{
    (void)state;
    json_t *raw = tu_json("{\"now\": 1000, \"lease\": \"observer-1:2\", \"lease_ms\": 100,"
                          " \"status\": {\"epoch\": \"2\", \"refresh\": "
                          "\"{\\\"at\\\": 999, \\\"ms\\\": 1, \\\"moves\\\": 0}\"}}");
    char *t = text_of(raw);
    assert_contains(t, "Cluster resource manager: observer-1, epoch 2 (lease 0.1s left)\n");
    assert_contains(t, "  refresh     1.0s ago  1   0\n");
    assert_contains(t, "  balancing   never     -   -\n");
    assert_contains(t, "Balance: no balancing pass measured yet.\n");
    free(t);
    /* A pass that found nothing to measure says so. */
    json_object_set_new(json_object_get(raw, "status"), "imbalance", json_string("[]"));
    t = text_of(raw);
    assert_contains(t, "Balance: the last balancing pass found no metric with load.\n");
    free(t);
    json_decref(raw);
}

static void test_malformed_fields_are_named_and_the_rest_shown(void **state)
{
    (void)state;
    json_t *raw = full_raw();
    json_t *st = json_object_get(raw, "status");
    json_object_set_new(st, "balancing", json_string("{not json"));
    json_object_set_new(st, "imbalance", json_string("42"));
    json_object_set_new(st, "epoch", json_string("seven"));
    json_object_set_new(st, "window", json_string("[1, 2]"));
    json_t *doc = cli_crm_doc(raw);
    json_t *errors = json_object_get(doc, "errors");
    assert_string_equal(json_string_value(json_object_get(errors, "balancing")),
                        "not JSON: {not json");
    assert_string_equal(json_string_value(json_object_get(errors, "imbalance")),
                        "not a JSON list: 42");
    assert_string_equal(json_string_value(json_object_get(errors, "epoch")), "not a number: seven");
    assert_string_equal(json_string_value(json_object_get(errors, "window")),
                        "not a JSON object: [1, 2]");
    assert_true(json_is_null(json_object_get(doc, "balancing")));
    char *t = cli_crm_text(doc, NOW);
    assert_contains(t, "  balancing   never");
    assert_contains(t, "  placement   0.5s ago");
    assert_contains(t, "Unreadable status field balancing: not JSON: {not json\n");
    assert_contains(t, "Nothing moved: MemoryMB");
    free(t);
    json_decref(doc);
    /* Entries of the wrong shape inside the imbalance list: dashes, no crash. */
    json_object_set_new(st, "imbalance", json_string("[1, {\"metric\": 5, \"ratio\": \"x\"}]"));
    doc = cli_crm_doc(raw);
    t = cli_crm_text(doc, NOW);
    assert_contains(t, "  ?       (all)      -    -    -      -          -         -         -"
                       "           -\n");
    free(t);
    t = cli_crm_balance_text(doc, NOW);
    assert_contains(t, "  ? max/min - \u2192 - (threshold -)\n");
    free(t);
    json_decref(doc);
    json_decref(raw);
}

static void test_the_map_lines_show_each_metric_before_and_after(void **state)
{
    (void)state;
    json_t *raw = full_raw();
    json_t *doc = cli_crm_doc(raw);
    char *t = cli_crm_balance_text(doc, NOW);
    assert_string_equal(t, "Balance before -> after the last balancing pass, 3.2s ago:\n"
                           "  CPU max/min 3.00 \u2192 1.20 (threshold 2, imbalanced)\n"
                           "  MemoryMB on node type A max/min inf \u2192 inf (threshold 1, below "
                           "activity threshold 1536, balanced)\n");
    free(t);
    json_decref(doc);
    json_decref(raw);
}

static void test_a_status_from_a_previous_holder_is_said_to_be_so(void **state)
{
    (void)state;
    json_t *raw = full_raw();
    json_object_set_new(raw, "lease", json_string("observer-2:8"));
    char *t = text_of(raw);
    assert_contains(t, "Cluster resource manager: observer-2, epoch 8 (lease 2.4s left)\n"
                       "The status below was written by observer-1, the previous holder.\n");
    free(t);
    json_decref(raw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_holder_and_epoch_come_from_the_lease_value),
        cmocka_unit_test(test_every_status_field_is_parsed_into_the_document),
        cmocka_unit_test(test_the_text_shows_holder_phases_balance_window_and_why),
        cmocka_unit_test(test_no_holder_and_no_status_say_so),
        cmocka_unit_test(test_a_half_written_status_shows_what_it_has),
        cmocka_unit_test(test_malformed_fields_are_named_and_the_rest_shown),
        cmocka_unit_test(test_the_map_lines_show_each_metric_before_and_after),
        cmocka_unit_test(test_a_status_from_a_previous_holder_is_said_to_be_so),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
