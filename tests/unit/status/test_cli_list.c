/*
 * Specification of what `convergectl list` decides without Redis
 * (cli/status/cli_list.h): the --status and --name filters, nested stacks hidden
 * unless asked for, the listing order, and how ages are written
 * (cli/status/cli_duration.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cli_duration.h"
#include "cli_list.h"
#include "test_util.h"

static char err[256];

static json_t *row(const char *name, const char *status, int depth)
{
    return json_pack("{s:s, s:s, s:i}", "name", name, "status", status, "depth", depth);
}

static bool keeps(const cli_list_filter_t *f, const char *name, const char *status, int depth)
{
    json_t *r = row(name, status, depth);
    bool kept = cli_list_filter_match(f, r);
    json_decref(r);
    return kept;
}

static void test_no_filter_lists_every_top_level_stack_that_exists(void **state)
{
    (void)state;
    cli_list_filter_t f;
    cli_list_filter_init(&f);
    assert_true(keeps(&f, "web", "CREATE_COMPLETE", 0));
    assert_true(keeps(&f, "web", "UPDATE_IN_PROGRESS", 0));
    assert_true(keeps(&f, "web", "DELETE_FAILED", 0));
    assert_false(keeps(&f, "web", "DELETE_COMPLETE", 0)); /* deleted: gone */
    assert_false(keeps(&f, "web", "", 0));                /* no status record */
    cli_list_filter_free(&f);
}

static void test_nested_stacks_are_hidden_unless_asked_for(void **state)
{
    (void)state;
    cli_list_filter_t f;
    cli_list_filter_init(&f);
    assert_false(keeps(&f, "web-app-0123456789ab", "CREATE_COMPLETE", 1));
    f.nested = true;
    assert_true(keeps(&f, "web-app-0123456789ab", "CREATE_COMPLETE", 1));
    assert_true(keeps(&f, "web", "CREATE_COMPLETE", 0));
    cli_list_filter_free(&f);
}

static void test_a_full_status_matches_exactly(void **state)
{
    (void)state;
    cli_list_filter_t f;
    cli_list_filter_init(&f);
    assert_int_equal(0, cli_list_filter_add_status(&f, "CREATE_COMPLETE", err, sizeof(err)));
    assert_true(keeps(&f, "a", "CREATE_COMPLETE", 0));
    assert_false(keeps(&f, "a", "UPDATE_COMPLETE", 0));
    assert_false(keeps(&f, "a", "CREATE_FAILED", 0));
    cli_list_filter_free(&f);
}

static void test_a_state_alone_matches_every_action(void **state)
{
    (void)state;
    cli_list_filter_t f;
    cli_list_filter_init(&f);
    assert_int_equal(0, cli_list_filter_add_status(&f, "failed", err, sizeof(err)));
    assert_true(keeps(&f, "a", "CREATE_FAILED", 0));
    assert_true(keeps(&f, "a", "ROLLBACK_FAILED", 0));
    assert_false(keeps(&f, "a", "CREATE_COMPLETE", 0));
    cli_list_filter_free(&f);
    cli_list_filter_init(&f);
    assert_int_equal(0, cli_list_filter_add_status(&f, "IN_PROGRESS", err, sizeof(err)));
    assert_true(keeps(&f, "a", "UPDATE_IN_PROGRESS", 0));
    assert_false(keeps(&f, "a", "UPDATE_COMPLETE", 0));
    cli_list_filter_free(&f);
}

static void test_statuses_given_by_comma_and_repeated_are_any_of(void **state)
{
    (void)state;
    cli_list_filter_t f;
    cli_list_filter_init(&f);
    assert_int_equal(
        0, cli_list_filter_add_status(&f, "create_complete,UPDATE_COMPLETE", err, sizeof(err)));
    assert_int_equal(0, cli_list_filter_add_status(&f, "ROLLBACK_COMPLETE", err, sizeof(err)));
    assert_int_equal(3, json_array_size(f.statuses));
    assert_true(keeps(&f, "a", "CREATE_COMPLETE", 0));
    assert_true(keeps(&f, "a", "UPDATE_COMPLETE", 0));
    assert_true(keeps(&f, "a", "ROLLBACK_COMPLETE", 0));
    assert_false(keeps(&f, "a", "CREATE_IN_PROGRESS", 0));
    cli_list_filter_free(&f);
}

static void test_an_unknown_status_is_refused_by_name(void **state)
{
    (void)state;
    cli_list_filter_t f;
    cli_list_filter_init(&f);
    assert_int_equal(
        -1, cli_list_filter_add_status(&f, "CREATE_COMPLETE,CRAETE_FAILED", err, sizeof(err)));
    assert_contains(err, "'CRAETE_FAILED' is not a stack status");
    assert_int_equal(-1, cli_list_filter_add_status(&f, "DONE", err, sizeof(err)));
    assert_contains(err, "'DONE'");
    assert_int_equal(-1, cli_list_filter_add_status(&f, "_COMPLETE", err, sizeof(err)));
    assert_int_equal(-1, cli_list_filter_add_status(&f, "CREATE_", err, sizeof(err)));
    assert_int_equal(-1, cli_list_filter_add_status(&f, "CREATE_COMPLETE,", err, sizeof(err)));
    assert_int_equal(-1, cli_list_filter_add_status(&f, "", err, sizeof(err)));
    cli_list_filter_free(&f);
}

static void test_the_name_is_a_shell_pattern(void **state)
{
    (void)state;
    cli_list_filter_t f;
    cli_list_filter_init(&f);
    assert_int_equal(0, cli_list_filter_set_name(&f, "web-*", err, sizeof(err)));
    assert_true(keeps(&f, "web-1", "CREATE_COMPLETE", 0));
    assert_false(keeps(&f, "db-1", "CREATE_COMPLETE", 0));
    assert_int_equal(0, cli_list_filter_set_name(&f, "db", err, sizeof(err)));
    assert_true(keeps(&f, "db", "CREATE_COMPLETE", 0));
    assert_false(keeps(&f, "db-1", "CREATE_COMPLETE", 0)); /* no wildcard: the whole name */
    assert_int_equal(-1, cli_list_filter_set_name(&f, "", err, sizeof(err)));
    cli_list_filter_free(&f);
}

static void test_name_and_status_filters_both_apply(void **state)
{
    (void)state;
    cli_list_filter_t f;
    cli_list_filter_init(&f);
    cli_list_filter_set_name(&f, "web*", err, sizeof(err));
    cli_list_filter_add_status(&f, "FAILED", err, sizeof(err));
    assert_true(keeps(&f, "web", "CREATE_FAILED", 0));
    assert_false(keeps(&f, "web", "CREATE_COMPLETE", 0));
    assert_false(keeps(&f, "db", "CREATE_FAILED", 0));
    cli_list_filter_free(&f);
}

static json_t *stack(const char *id, const char *name, const char *parent)
{
    return json_pack("{s:s, s:s, s:s}", "id", id, "name", name, "parent", parent);
}

/* The names of `rows` in order, joined by spaces. */
static void names_of(const json_t *rows, char *buf, size_t size)
{
    buf[0] = '\0';
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        size_t n = strlen(buf);
        snprintf(buf + n, size - n, "%s%s", n ? " " : "",
                 json_string_value(json_object_get(r, "name")));
    }
}

static void test_nested_stacks_follow_their_parent_by_name(void **state)
{
    (void)state;
    json_t *rows = json_array();
    json_array_append_new(rows, stack("c2", "web-b", "p1"));
    json_array_append_new(rows, stack("p2", "db", ""));
    json_array_append_new(rows, stack("g1", "web-a-x", "c1"));
    json_array_append_new(rows, stack("p1", "web", ""));
    json_array_append_new(rows, stack("c1", "web-a", "p1"));
    json_array_append_new(rows, stack("c3", "db-a", "p2"));
    json_t *order = cli_list_order(rows);
    char names[256];
    names_of(order, names, sizeof(names));
    assert_string_equal(names, "db db-a web web-a web-a-x web-b");
    json_decref(order);
    json_decref(rows);
}

static void test_a_stack_whose_parent_is_not_listed_stands_alone(void **state)
{
    (void)state;
    json_t *rows = json_array();
    json_array_append_new(rows, stack("c1", "web-a", "filtered-out"));
    json_array_append_new(rows, stack("p2", "db", ""));
    json_t *order = cli_list_order(rows);
    char names[256];
    names_of(order, names, sizeof(names));
    assert_string_equal(names, "db web-a");
    json_decref(order);
    json_decref(rows);
}

static void test_records_that_loop_end_the_walk(void **state)
{
    (void)state;
    json_t *rows = json_array();
    json_array_append_new(rows, stack("a", "a", ""));
    json_array_append_new(rows, stack("b", "b", "a"));
    json_array_append_new(rows, stack("c", "c", "b"));
    json_array_append_new(rows, stack("x", "x", "y")); /* x and y: each other's parent */
    json_array_append_new(rows, stack("y", "y", "x"));
    json_t *order = cli_list_order(rows);
    char names[256];
    names_of(order, names, sizeof(names));
    assert_string_equal(names, "a b c");
    json_decref(order);
    json_decref(rows);
}

static void test_a_row_is_read_from_the_stack_hash_fields(void **state)
{
    (void)state;
    json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "name", "web", "status",
                            "CREATE_IN_PROGRESS", "traversal", "3", "done", "2", "total", "5",
                            "created", "1000.5", "depth", "1");
    json_t *r = cli_list_row("a1", rec, 1010.25);
    assert_string_equal(json_string_value(json_object_get(r, "id")), "a1");
    assert_string_equal(json_string_value(json_object_get(r, "name")), "web");
    assert_int_equal(json_integer_value(json_object_get(r, "traversal")), 3);
    assert_int_equal(json_integer_value(json_object_get(r, "total")), 5);
    assert_true(json_real_value(json_object_get(r, "age")) == 9.75);
    assert_int_equal(json_integer_value(json_object_get(r, "depth")), 1);
    /* fields the hash lacks: empty, or 0 */
    assert_string_equal(json_string_value(json_object_get(r, "reason")), "");
    assert_true(json_real_value(json_object_get(r, "updated")) == 0);
    json_decref(r);
    json_decref(rec);
}

static void test_durations_read_at_a_glance(void **state)
{
    (void)state;
    char b[32];
    cli_format_duration(0.45, b, sizeof(b));
    assert_string_equal(b, "0.4s");
    cli_format_duration(9.99, b, sizeof(b));
    assert_string_equal(b, "9.9s");
    cli_format_duration(42.7, b, sizeof(b));
    assert_string_equal(b, "42s");
    cli_format_duration(312, b, sizeof(b));
    assert_string_equal(b, "5m12s");
    cli_format_duration(3 * 3600 + 5 * 60 + 59, b, sizeof(b));
    assert_string_equal(b, "3h05m");
    cli_format_duration(2 * 86400 + 4 * 3600 + 1, b, sizeof(b));
    assert_string_equal(b, "2d04h");
    cli_format_duration(-1, b, sizeof(b));
    assert_string_equal(b, "-");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_filter_lists_every_top_level_stack_that_exists),
        cmocka_unit_test(test_nested_stacks_are_hidden_unless_asked_for),
        cmocka_unit_test(test_a_full_status_matches_exactly),
        cmocka_unit_test(test_a_state_alone_matches_every_action),
        cmocka_unit_test(test_statuses_given_by_comma_and_repeated_are_any_of),
        cmocka_unit_test(test_an_unknown_status_is_refused_by_name),
        cmocka_unit_test(test_the_name_is_a_shell_pattern),
        cmocka_unit_test(test_name_and_status_filters_both_apply),
        cmocka_unit_test(test_nested_stacks_follow_their_parent_by_name),
        cmocka_unit_test(test_a_stack_whose_parent_is_not_listed_stands_alone),
        cmocka_unit_test(test_records_that_loop_end_the_walk),
        cmocka_unit_test(test_a_row_is_read_from_the_stack_hash_fields),
        cmocka_unit_test(test_durations_read_at_a_glance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
