/*
 * Specification of BCS/Mesos attribute constraints (BCS's Mesos scheduling
 * document): each operator, the parameter types, nodes lacking the
 * attribute, GROUPBY's even spread under sequential placement, and/or
 * nesting, the text used in elimination sequences and parse errors naming
 * their JSON path.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_mesos.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHERE "svc.json: constraints"

static json_t *json_of(const char *text)
{
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (!v)
        fail_msg("bad JSON in test: %s", text);
    return v;
}

static cv_mconstraint_t *parse_ok(const char *spec_json)
{
    char err[512] = "";
    json_t *spec = json_of(spec_json);
    cv_mconstraint_t *c = NULL;
    int rc = cv_mconstraint_parse(spec, WHERE, &c, err, sizeof(err));
    json_decref(spec);
    if (rc != 0)
        fail_msg("%s did not parse: %s", spec_json, err);
    return c;
}

/* Asserts that `spec_json` is refused with `code` and exactly `message`. */
static void assert_parse_error(const char *spec_json, int code, const char *message)
{
    char err[512] = "";
    json_t *spec = json_of(spec_json);
    cv_mconstraint_t *c = NULL;
    int rc = cv_mconstraint_parse(spec, WHERE, &c, err, sizeof(err));
    json_decref(spec);
    cv_mconstraint_free(c);
    assert_int_equal(rc, code);
    assert_null(c);
    assert_string_equal(err, message);
}

/*
 * Whether one more replica of a service of `replicas` may go on `node_json`,
 * with replicas already on the nodes of `placed_json` (an array of node
 * attribute objects, one per replica) and `eligible_json` still eligible.
 */
static bool allows_with(const char *spec_json, const char *node_json, const char *placed_json,
                        int replicas, const char *eligible_json)
{
    cv_mconstraint_t *c = parse_ok(spec_json);
    json_t *node = json_of(node_json);
    json_t *placed = json_of(placed_json ? placed_json : "[]");
    json_t *eligible = json_of(eligible_json ? eligible_json : "[]");
    const json_t *pp[64], *ep[64];
    size_t np = json_array_size(placed), ne = json_array_size(eligible);
    assert_true(np <= 64 && ne <= 64);
    for (size_t i = 0; i < np; i++)
        pp[i] = json_array_get(placed, i);
    for (size_t i = 0; i < ne; i++)
        ep[i] = json_array_get(eligible, i);
    cv_mesos_ctx_t ctx = {.node = node,
                          .placed = pp,
                          .nplaced = np,
                          .replicas = replicas,
                          .eligible = ep,
                          .neligible = ne};
    bool ok = cv_mconstraint_allows(c, &ctx);
    json_decref(node);
    json_decref(placed);
    json_decref(eligible);
    cv_mconstraint_free(c);
    return ok;
}

static bool allows(const char *spec_json, const char *node_json, const char *placed_json)
{
    return allows_with(spec_json, node_json, placed_json, 3, NULL);
}

static void assert_text(const char *spec_json, const char *text)
{
    cv_mconstraint_t *c = parse_ok(spec_json);
    assert_string_equal(cv_mconstraint_text(c), text);
    cv_mconstraint_free(c);
}

/* ---- UNIQUE -------------------------------------------------------------- */

static void test_unique_refuses_a_value_that_holds_a_replica(void **state)
{
    (void)state;
    assert_false(allows("[\"IDC\", \"UNIQUE\"]", "{\"IDC\": \"sh\"}",
                        "[{\"IDC\": \"sz\"}, {\"IDC\": \"sh\"}]"));
}

static void test_unique_allows_a_value_without_a_replica(void **state)
{
    (void)state;
    assert_true(allows("[\"IDC\", \"UNIQUE\"]", "{\"IDC\": \"cd\"}",
                       "[{\"IDC\": \"sz\"}, {\"IDC\": \"sh\"}]"));
}

static void test_unique_compares_integer_and_string_values_as_text(void **state)
{
    (void)state;
    assert_false(allows("[\"rack\", \"UNIQUE\"]", "{\"rack\": 5}", "[{\"rack\": \"5\"}]"));
}

static void test_unique_hostname_reads_the_node_name(void **state)
{
    (void)state;
    assert_false(
        allows("[\"hostname\", \"UNIQUE\"]", "{\"NodeName\": \"N1\"}", "[{\"NodeName\": \"N1\"}]"));
    assert_true(
        allows("[\"hostname\", \"UNIQUE\"]", "{\"NodeName\": \"N2\"}", "[{\"NodeName\": \"N1\"}]"));
}

static void test_unique_prefers_a_hostname_attribute_to_the_node_name(void **state)
{
    (void)state;
    /* Two node names, one host: UNIQUE hostname keeps them apart. */
    assert_false(allows("[\"hostname\", \"UNIQUE\"]",
                        "{\"NodeName\": \"N2\", \"hostname\": \"h1\"}",
                        "[{\"NodeName\": \"N1\", \"hostname\": \"h1\"}]"));
}

static void test_unique_refuses_a_node_lacking_the_attribute(void **state)
{
    (void)state;
    assert_false(allows("[\"IDC\", \"UNIQUE\"]", "{\"rack\": \"r1\"}", NULL));
}

static void test_unique_takes_no_parameter(void **state)
{
    (void)state;
    assert_parse_error("[\"IDC\", \"UNIQUE\", 1]", CV_EVALIDATE,
                       WHERE "[2]: UNIQUE takes no parameter");
}

/* ---- MAXPER -------------------------------------------------------------- */

static void test_maxper_allows_up_to_n_replicas_per_value(void **state)
{
    (void)state;
    /* The BCS document: hostname MAXPER 2, at most two instances per host. */
    const char *spec = "[\"hostname\", \"MAXPER\", 2]";
    assert_true(allows(spec, "{\"hostname\": \"h1\"}", "[]"));
    assert_true(allows(spec, "{\"hostname\": \"h1\"}", "[{\"hostname\": \"h1\"}]"));
    assert_false(
        allows(spec, "{\"hostname\": \"h1\"}", "[{\"hostname\": \"h1\"}, {\"hostname\": \"h1\"}]"));
}

static void test_maxper_counts_each_value_separately(void **state)
{
    (void)state;
    assert_true(allows("[\"rack\", \"MAXPER\", 2]", "{\"rack\": \"r2\"}",
                       "[{\"rack\": \"r1\"}, {\"rack\": \"r1\"}, {\"rack\": \"r2\"}]"));
}

static void test_maxper_accepts_the_count_as_a_string(void **state)
{
    (void)state;
    assert_false(
        allows("[\"rack\", \"MAXPER\", \"1\"]", "{\"rack\": \"r1\"}", "[{\"rack\": \"r1\"}]"));
}

static void test_maxper_accepts_an_integral_scalar(void **state)
{
    (void)state;
    assert_true(
        allows("[\"rack\", \"MAXPER\", 2.0]", "{\"rack\": \"r1\"}", "[{\"rack\": \"r1\"}]"));
}

static void test_maxper_refuses_a_node_lacking_the_attribute(void **state)
{
    (void)state;
    assert_false(allows("[\"rack\", \"MAXPER\", 5]", "{\"IDC\": \"sh\"}", NULL));
}

static void test_placed_replicas_on_unlabelled_nodes_count_for_no_value(void **state)
{
    (void)state;
    assert_true(allows("[\"rack\", \"MAXPER\", 1]", "{\"rack\": \"r1\"}",
                       "[{\"IDC\": \"sh\"}, {\"IDC\": \"sz\"}]"));
}

static void test_maxper_needs_a_positive_integer(void **state)
{
    (void)state;
    assert_parse_error("[\"rack\", \"MAXPER\", 0]", CV_EVALIDATE,
                       WHERE "[2]: MAXPER takes a positive integer");
    assert_parse_error("[\"rack\", \"MAXPER\", 1.5]", CV_EVALIDATE,
                       WHERE "[2]: MAXPER takes a positive integer");
    assert_parse_error("[\"rack\", \"MAXPER\", \"two\"]", CV_EVALIDATE,
                       WHERE "[2]: MAXPER takes a positive integer");
    assert_parse_error("[\"rack\", \"MAXPER\"]", CV_EVALIDATE,
                       WHERE ": MAXPER takes a positive integer");
}

/* ---- CLUSTER ------------------------------------------------------------- */

static void test_cluster_string_allows_only_that_value(void **state)
{
    (void)state;
    assert_true(allows("[\"IDC\", \"CLUSTER\", \"sh\"]", "{\"IDC\": \"sh\"}", NULL));
    assert_false(allows("[\"IDC\", \"CLUSTER\", \"sh\"]", "{\"IDC\": \"shanghai\"}", NULL));
}

static void test_cluster_set_allows_the_listed_values(void **state)
{
    (void)state;
    /* The BCS document: InnerIP CLUSTER [127.0.0.2, 127.0.0.3]. */
    const char *spec = "[\"InnerIP\", \"CLUSTER\", [\"127.0.0.2\", \"127.0.0.3\"]]";
    assert_true(allows(spec, "{\"InnerIP\": \"127.0.0.2\"}", NULL));
    assert_true(allows(spec, "{\"InnerIP\": \"127.0.0.3\"}", NULL));
    assert_false(allows(spec, "{\"InnerIP\": \"127.0.0.4\"}", NULL));
}

static void test_cluster_scalar_compares_numerically(void **state)
{
    (void)state;
    const char *spec = "[\"generation\", \"CLUSTER\", 2015]";
    assert_true(allows(spec, "{\"generation\": 2015}", NULL));
    assert_true(allows(spec, "{\"generation\": \"2015.0\"}", NULL));
    assert_false(allows(spec, "{\"generation\": 2016}", NULL));
}

static void test_cluster_scalar_refuses_a_non_numeric_value(void **state)
{
    (void)state;
    assert_false(allows("[\"generation\", \"CLUSTER\", 2015]", "{\"generation\": \"new\"}", NULL));
}

static void test_cluster_range_object_bounds_are_inclusive(void **state)
{
    (void)state;
    const char *spec = "[\"port\", \"CLUSTER\", {\"begin\": 10, \"end\": 20}]";
    assert_true(allows(spec, "{\"port\": 10}", NULL));
    assert_true(allows(spec, "{\"port\": 15}", NULL));
    assert_true(allows(spec, "{\"port\": \"20\"}", NULL));
    assert_false(allows(spec, "{\"port\": 9}", NULL));
    assert_false(allows(spec, "{\"port\": 21}", NULL));
}

static void test_cluster_range_as_two_integer_strings(void **state)
{
    (void)state;
    const char *spec = "[\"port\", \"CLUSTER\", [\"10\", \"20\"]]";
    assert_true(allows(spec, "{\"port\": 15}", NULL));
    assert_false(allows(spec, "{\"port\": 25}", NULL));
}

static void test_cluster_explicit_set_of_integers_is_not_a_range(void **state)
{
    (void)state;
    const char *spec = "[\"rack\", \"CLUSTER\", {\"set\": [\"1\", \"3\"]}]";
    assert_true(allows(spec, "{\"rack\": 3}", NULL));
    assert_false(allows(spec, "{\"rack\": 2}", NULL));
}

static void test_cluster_range_refuses_a_non_numeric_value(void **state)
{
    (void)state;
    assert_false(
        allows("[\"port\", \"CLUSTER\", {\"begin\": 10, \"end\": 20}]", "{\"port\": \"x\"}", NULL));
}

static void test_cluster_refuses_a_node_lacking_the_attribute(void **state)
{
    (void)state;
    assert_false(allows("[\"IDC\", \"CLUSTER\", [\"sz\", \"cd\"]]", "{\"rack\": \"r1\"}", NULL));
}

static void test_cluster_range_with_begin_above_end_is_refused(void **state)
{
    (void)state;
    assert_parse_error("[\"port\", \"CLUSTER\", {\"begin\": 20, \"end\": 10}]", CV_EVALIDATE,
                       WHERE "[2]: a range's begin is above its end");
}

static void test_cluster_range_with_fractional_bounds_is_refused(void **state)
{
    (void)state;
    assert_parse_error("[\"port\", \"CLUSTER\", {\"begin\": 1.5, \"end\": 10}]", CV_EVALIDATE,
                       WHERE "[2]: a range is bounded by integers");
}

static void test_cluster_set_of_non_strings_is_refused(void **state)
{
    (void)state;
    assert_parse_error("[\"IDC\", \"CLUSTER\", [\"sz\", 3, \"cd\"]]", CV_EVALIDATE,
                       WHERE "[2][1]: a set holds strings");
}

/* ---- LIKE and UNLIKE ----------------------------------------------------- */

static void test_like_matches_the_seed_ip_prefix(void **state)
{
    (void)state;
    /* The BCS document: InnerIP LIKE "127.0.0.*", hosts whose first three parts are 127.0.0. */
    const char *spec = "[\"InnerIP\", \"LIKE\", \"127.0.0.*\"]";
    assert_true(allows(spec, "{\"InnerIP\": \"127.0.0.23\"}", NULL));
    assert_false(allows(spec, "{\"InnerIP\": \"10.127.0.0.1\"}", NULL));
}

static void test_like_is_anchored_at_both_ends(void **state)
{
    (void)state;
    assert_true(allows("[\"IDC\", \"LIKE\", \"sh.*\"]", "{\"IDC\": \"sh-nanhui\"}", NULL));
    assert_false(allows("[\"IDC\", \"LIKE\", \"sh\"]", "{\"IDC\": \"sh-nanhui\"}", NULL));
    assert_false(allows("[\"IDC\", \"LIKE\", \"nanhui\"]", "{\"IDC\": \"sh-nanhui\"}", NULL));
}

static void test_like_alternation_is_anchored_as_a_whole(void **state)
{
    (void)state;
    const char *spec = "[\"IDC\", \"LIKE\", \"sh|sz\"]";
    assert_true(allows(spec, "{\"IDC\": \"sz\"}", NULL));
    assert_false(allows(spec, "{\"IDC\": \"shx\"}", NULL));
    assert_false(allows(spec, "{\"IDC\": \"xsz\"}", NULL));
    /* The longer alternative wins where the shorter is only a prefix. */
    assert_true(allows("[\"IDC\", \"LIKE\", \"sh|shx\"]", "{\"IDC\": \"shx\"}", NULL));
}

static void test_like_reads_integer_attributes_as_text(void **state)
{
    (void)state;
    assert_true(allows("[\"rack\", \"LIKE\", \"1[0-9]\"]", "{\"rack\": 12}", NULL));
    assert_false(allows("[\"rack\", \"LIKE\", \"1[0-9]\"]", "{\"rack\": 120}", NULL));
}

static void test_like_refuses_a_node_lacking_the_attribute(void **state)
{
    (void)state;
    assert_false(allows("[\"IDC\", \"LIKE\", \".*\"]", "{\"rack\": \"r1\"}", NULL));
}

static void test_unlike_refuses_a_matching_value(void **state)
{
    (void)state;
    assert_false(allows("[\"IDC\", \"UNLIKE\", \"sh.*\"]", "{\"IDC\": \"sh-nanhui\"}", NULL));
}

static void test_unlike_allows_a_value_that_does_not_match_whole(void **state)
{
    (void)state;
    assert_true(allows("[\"IDC\", \"UNLIKE\", \"sh\"]", "{\"IDC\": \"sh-nanhui\"}", NULL));
}

static void test_unlike_allows_a_node_lacking_the_attribute(void **state)
{
    (void)state;
    assert_true(allows("[\"IDC\", \"UNLIKE\", \"sh.*\"]", "{\"rack\": \"r1\"}", NULL));
}

static void test_an_invalid_regex_is_refused_with_its_path(void **state)
{
    (void)state;
    char err[512] = "";
    json_t *spec = json_of("{\"and\": [[\"IDC\", \"LIKE\", \"sh[\"]]}");
    cv_mconstraint_t *c = NULL;
    assert_int_equal(cv_mconstraint_parse(spec, WHERE, &c, err, sizeof(err)), CV_EVALIDATE);
    json_decref(spec);
    assert_null(c);
    const char *prefix = WHERE ".and[0][2]: invalid regular expression 'sh[': ";
    assert_memory_equal(err, prefix, strlen(prefix));
}

/* Found by fuzzing (tests/fuzz/corpus/mesos/regress_regex_*): glibc's
 * regcomp would take gigabytes or minutes on these. */
static void test_a_regex_too_costly_to_compile_is_refused_with_its_reason(void **state)
{
    (void)state;
    assert_parse_error(
        "[\"IDC\", \"UNLIKE\", \"s[hZ].++++++++++++++++++++++++++++++*\"]", CV_EVALIDATE,
        WHERE "[2]: invalid regular expression 's[hZ].++++++++++++++++++++++++++++++*': "
              "too complex: its repetitions expand to more than 3000 elements");
    char err[512] = "";
    json_t *spec = json_of("[\"IDC\", \"LIKE\", \"s+++*++++?I\"]");
    cv_mconstraint_t *c = NULL;
    assert_int_equal(cv_mconstraint_parse(spec, WHERE, &c, err, sizeof(err)), CV_EVALIDATE);
    json_decref(spec);
    assert_null(c);
    assert_non_null(strstr(err, "can match the empty string"));
}

static void test_like_needs_a_string(void **state)
{
    (void)state;
    assert_parse_error("[\"IDC\", \"LIKE\", [\"sh\"]]", CV_EVALIDATE,
                       WHERE "[2]: LIKE takes a regular expression (a string)");
}

/* ---- GROUPBY ------------------------------------------------------------- */

/*
 * Places `replicas` one after another, each on the first node (in the order
 * given) that holds no replica yet and that the constraint allows, the way a
 * first-fit placer would; writes the district of each placement into `order`
 * (one letter per replica) and returns how many were placed.
 */
static size_t place_sequentially(const char *spec, const char *nodes_json, int replicas,
                                 char *order)
{
    cv_mconstraint_t *c = parse_ok(spec);
    json_t *nodes = json_of(nodes_json);
    size_t n = json_array_size(nodes), nplaced = 0;
    const json_t *placed[64], *eligible[64];
    bool used[64] = {false};
    assert_true(n <= 64);
    for (int r = 0; r < replicas; r++) {
        size_t neligible = 0;
        for (size_t i = 0; i < n; i++)
            if (!used[i])
                eligible[neligible++] = json_array_get(nodes, i);
        bool done = false;
        for (size_t i = 0; i < n && !done; i++) {
            if (used[i])
                continue;
            cv_mesos_ctx_t ctx = {.node = json_array_get(nodes, i),
                                  .placed = placed,
                                  .nplaced = nplaced,
                                  .replicas = replicas,
                                  .eligible = eligible,
                                  .neligible = neligible};
            if (cv_mconstraint_allows(c, &ctx)) {
                used[i] = true;
                placed[nplaced] = ctx.node;
                order[nplaced++] = json_string_value(json_object_get(ctx.node, "district"))[1];
                done = true;
            }
        }
        if (!done)
            break;
    }
    order[nplaced] = '\0';
    json_decref(nodes);
    cv_mconstraint_free(c);
    return nplaced;
}

/* Four nodes in each of the BCS document's districts, sh first: a first-fit placer
 * would fill sh before anything else if the constraint let it. */
#define DISTRICT_NODES                                                                             \
    "[{\"NodeName\": \"a1\", \"district\": \"sh\"}, {\"NodeName\": \"a2\", \"district\": \"sh\"}," \
    " {\"NodeName\": \"a3\", \"district\": \"sh\"}, {\"NodeName\": \"a4\", \"district\": \"sh\"}," \
    " {\"NodeName\": \"b1\", \"district\": \"sz\"}, {\"NodeName\": \"b2\", \"district\": \"sz\"}," \
    " {\"NodeName\": \"b3\", \"district\": \"sz\"}, {\"NodeName\": \"b4\", \"district\": \"sz\"}," \
    " {\"NodeName\": \"c1\", \"district\": \"cd\"}, {\"NodeName\": \"c2\", \"district\": \"cd\"}," \
    " {\"NodeName\": \"c3\", \"district\": \"cd\"}, {\"NodeName\": \"c4\", \"district\": \"cd\"}]"

#define SEED_GROUPBY "[\"district\", \"GROUPBY\", [\"sh\", \"sz\", \"cd\"]]"

static void test_groupby_spreads_nine_as_three_three_three(void **state)
{
    (void)state;
    char order[64];
    assert_int_equal(place_sequentially(SEED_GROUPBY, DISTRICT_NODES, 9, order), 9);
    /* The second letter of each district: h = sh, z = sz, d = cd. */
    assert_string_equal(order, "hhhzzzddd");
}

static void test_groupby_spreads_eight_as_three_three_two(void **state)
{
    (void)state;
    char order[64];
    assert_int_equal(place_sequentially(SEED_GROUPBY, DISTRICT_NODES, 8, order), 8);
    assert_string_equal(order, "hhhzzzdd");
}

static void test_groupby_spreads_seven_as_three_two_two(void **state)
{
    (void)state;
    /* 3/3/1 would respect ceil(7/3) = 3 yet not be even. */
    char order[64];
    assert_int_equal(place_sequentially(SEED_GROUPBY, DISTRICT_NODES, 7, order), 7);
    assert_string_equal(order, "hhhzzdd");
}

static void test_groupby_never_puts_a_fourth_of_eight_in_one_group(void **state)
{
    (void)state;
    const char *three_in_sh =
        "[{\"district\": \"sh\"}, {\"district\": \"sh\"}, {\"district\": \"sh\"}]";
    assert_false(allows_with(SEED_GROUPBY, "{\"district\": \"sh\"}", three_in_sh, 8, NULL));
    assert_true(allows_with(SEED_GROUPBY, "{\"district\": \"sz\"}", three_in_sh, 8, NULL));
}

static void test_groupby_with_fewer_replicas_than_groups_puts_one_per_group(void **state)
{
    (void)state;
    char order[64];
    assert_int_equal(place_sequentially(SEED_GROUPBY, DISTRICT_NODES, 2, order), 2);
    assert_string_equal(order, "hz");
}

static void test_groupby_refuses_a_value_outside_the_groups(void **state)
{
    (void)state;
    assert_false(allows_with(SEED_GROUPBY, "{\"district\": \"bj\"}", NULL, 9, NULL));
}

static void test_groupby_refuses_a_node_lacking_the_attribute(void **state)
{
    (void)state;
    assert_false(allows_with(SEED_GROUPBY, "{\"IDC\": \"sh\"}", NULL, 9, NULL));
}

static void test_groupby_without_values_spreads_over_the_eligible_values(void **state)
{
    (void)state;
    char order[64];
    const char *nodes = "[{\"district\": \"sh\"}, {\"district\": \"sh\"}, {\"district\": \"sh\"},"
                        " {\"district\": \"sz\"}, {\"district\": \"sz\"}, {\"district\": \"sz\"}]";
    assert_int_equal(place_sequentially("[\"district\", \"GROUPBY\"]", nodes, 4, order), 4);
    assert_string_equal(order, "hhzz");
}

static void test_groupby_without_values_keeps_a_group_whose_nodes_are_all_used(void **state)
{
    (void)state;
    /* cd's only node holds a replica and is no longer eligible; cd is still
     * one of three groups, so 3 replicas go one per group. */
    assert_false(allows_with("[\"district\", \"GROUPBY\"]", "{\"district\": \"sh\"}",
                             "[{\"district\": \"cd\"}, {\"district\": \"sh\"}]", 3,
                             "[{\"district\": \"sh\"}, {\"district\": \"sz\"}]"));
}

static void test_groupby_with_a_number_is_refused(void **state)
{
    (void)state;
    assert_parse_error("[\"district\", \"GROUPBY\", 3]", CV_EVALIDATE,
                       WHERE "[2]: GROUPBY takes a set of values, or none");
}

static void test_groupby_refuses_a_value_listed_twice(void **state)
{
    (void)state;
    assert_parse_error("[\"district\", \"GROUPBY\", [\"sh\", \"sz\", \"sh\"]]", CV_EVALIDATE,
                       WHERE "[2][2]: GROUPBY lists 'sh' twice");
}

/* ---- operators, combinations --------------------------------------------- */

static void test_operators_are_case_insensitive(void **state)
{
    (void)state;
    assert_false(allows("[\"IDC\", \"unique\"]", "{\"IDC\": \"sh\"}", "[{\"IDC\": \"sh\"}]"));
    assert_true(allows("[\"IDC\", \"Like\", \"s.*\"]", "{\"IDC\": \"sh\"}", NULL));
}

static void test_and_requires_every_constraint(void **state)
{
    (void)state;
    const char *spec = "{\"and\": [[\"IDC\", \"CLUSTER\", \"sh\"], [\"rack\", \"UNIQUE\"]]}";
    assert_true(allows(spec, "{\"IDC\": \"sh\", \"rack\": \"r2\"}", "[{\"rack\": \"r1\"}]"));
    assert_false(allows(spec, "{\"IDC\": \"sh\", \"rack\": \"r1\"}", "[{\"rack\": \"r1\"}]"));
    assert_false(allows(spec, "{\"IDC\": \"sz\", \"rack\": \"r2\"}", "[{\"rack\": \"r1\"}]"));
}

static void test_or_requires_any_constraint(void **state)
{
    (void)state;
    const char *spec = "{\"or\": [[\"IDC\", \"LIKE\", \"sh.*\"], [\"IDC\", \"CLUSTER\", "
                       "[\"sz\", \"cd\"]]]}";
    assert_true(allows(spec, "{\"IDC\": \"sh-nanhui\"}", NULL));
    assert_true(allows(spec, "{\"IDC\": \"cd\"}", NULL));
    assert_false(allows(spec, "{\"IDC\": \"bj\"}", NULL));
}

#define ISSUE_EXAMPLE                                                                              \
    "{\"and\": [[\"hostname\", \"UNIQUE\"], {\"or\": [[\"IDC\", \"LIKE\", \"sh.*\"],"              \
    " [\"IDC\", \"CLUSTER\", [\"sz\", \"cd\"]]]}]}"

static void test_nested_and_or_from_the_issue(void **state)
{
    (void)state;
    const char *placed = "[{\"hostname\": \"h1\", \"IDC\": \"sh-nh\"}]";
    assert_true(allows(ISSUE_EXAMPLE, "{\"hostname\": \"h2\", \"IDC\": \"sz\"}", placed));
    assert_false(allows(ISSUE_EXAMPLE, "{\"hostname\": \"h1\", \"IDC\": \"sz\"}", placed));
    assert_false(allows(ISSUE_EXAMPLE, "{\"hostname\": \"h3\", \"IDC\": \"bj\"}", placed));
}

static void test_combination_keys_are_case_insensitive(void **state)
{
    (void)state;
    assert_false(allows("{\"AND\": [[\"IDC\", \"CLUSTER\", \"sh\"]]}", "{\"IDC\": \"sz\"}", NULL));
}

/* Builds `depth` nested {"and": [..]} around one leaf. */
static char *nested_and(int depth)
{
    size_t size = (size_t)depth * 16 + 64;
    char *s = malloc(size);
    s[0] = '\0';
    for (int i = 0; i < depth; i++)
        strcat(s, "{\"and\": [");
    strcat(s, "[\"IDC\", \"CLUSTER\", \"sh\"]");
    for (int i = 0; i < depth; i++)
        strcat(s, "]}");
    return s;
}

static void test_nesting_32_deep_is_accepted(void **state)
{
    (void)state;
    char *spec = nested_and(32);
    assert_true(allows(spec, "{\"IDC\": \"sh\"}", NULL));
    free(spec);
}

static void test_nesting_33_deep_is_refused(void **state)
{
    (void)state;
    char *spec = nested_and(33);
    char err[2048] = "";
    json_t *j = json_of(spec);
    cv_mconstraint_t *c = NULL;
    assert_int_equal(cv_mconstraint_parse(j, "c", &c, err, sizeof(err)), CV_ETOOBIG);
    assert_null(c);
    char want[2048] = "c";
    for (int i = 0; i < 32; i++)
        strcat(want, ".and[0]");
    strcat(want, ".and: and/or nested deeper than 32");
    assert_string_equal(err, want);
    json_decref(j);
    free(spec);
}

/* ---- text --------------------------------------------------------------- */

static void test_text_of_each_operator(void **state)
{
    (void)state;
    assert_text("[\"hostname\", \"UNIQUE\"]", "hostname UNIQUE");
    assert_text("[\"hostname\", \"maxper\", 2]", "hostname MAXPER 2");
    assert_text("[\"IDC\", \"LIKE\", \"sh.*\"]", "IDC LIKE sh.*");
    assert_text("[\"IDC\", \"UNLIKE\", \"sh.*\"]", "IDC UNLIKE sh.*");
    assert_text("[\"IDC\", \"CLUSTER\", \"sh\"]", "IDC CLUSTER sh");
    assert_text("[\"district\", \"GROUPBY\"]", "district GROUPBY");
}

static void test_text_of_each_parameter_type(void **state)
{
    (void)state;
    assert_text("[\"IDC\", \"CLUSTER\", [\"sz\", \"cd\"]]", "IDC CLUSTER {sz,cd}");
    assert_text("[\"gen\", \"CLUSTER\", 2015]", "gen CLUSTER 2015");
    assert_text("[\"gen\", \"CLUSTER\", 0.5]", "gen CLUSTER 0.5");
    assert_text("[\"port\", \"CLUSTER\", {\"begin\": 10, \"end\": 20}]", "port CLUSTER [10-20]");
    assert_text(SEED_GROUPBY, "district GROUPBY {sh,sz,cd}");
}

static void test_text_of_a_combination(void **state)
{
    (void)state;
    assert_text(ISSUE_EXAMPLE, "and(hostname UNIQUE, or(IDC LIKE sh.*, IDC CLUSTER {sz,cd}))");
}

/* ---- parse errors name the path ----------------------------------------- */

static void test_an_unknown_operator_is_named_with_its_path(void **state)
{
    (void)state;
    assert_parse_error("{\"and\": [[\"hostname\", \"UNIQUE\"], {\"or\": [[\"IDC\", \"LIKES\", "
                       "\"sh.*\"]]}]}",
                       CV_EVALIDATE,
                       WHERE ".and[1].or[0][1]: unknown operator 'LIKES' (expected UNIQUE, "
                             "MAXPER, CLUSTER, LIKE, UNLIKE or GROUPBY)");
}

static void test_a_leaf_needs_two_or_three_elements(void **state)
{
    (void)state;
    assert_parse_error("{\"and\": [[\"hostname\"]]}", CV_EVALIDATE,
                       WHERE ".and[0]: a constraint is [attribute, OPERATOR] or [attribute, "
                             "OPERATOR, parameter]");
}

static void test_the_attribute_must_be_a_non_empty_string(void **state)
{
    (void)state;
    assert_parse_error("[\"\", \"UNIQUE\"]", CV_EVALIDATE,
                       WHERE "[0]: the attribute must be a non-empty string");
}

static void test_a_combination_needs_and_or_or(void **state)
{
    (void)state;
    assert_parse_error("{\"xor\": [[\"IDC\", \"UNIQUE\"]]}", CV_EVALIDATE,
                       WHERE ": a combination is {\"and\": [..]} or {\"or\": [..]}");
}

static void test_a_combination_needs_a_non_empty_list(void **state)
{
    (void)state;
    assert_parse_error("{\"or\": []}", CV_EVALIDATE,
                       WHERE ".or: expected a non-empty list of constraints");
}

static void test_a_constraint_is_a_list_or_an_object(void **state)
{
    (void)state;
    assert_parse_error("{\"and\": [\"hostname UNIQUE\"]}", CV_EVALIDATE,
                       WHERE ".and[0]: expected a constraint list or an {\"and\"/\"or\": [..]} "
                             "object");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unique_refuses_a_value_that_holds_a_replica),
        cmocka_unit_test(test_unique_allows_a_value_without_a_replica),
        cmocka_unit_test(test_unique_compares_integer_and_string_values_as_text),
        cmocka_unit_test(test_unique_hostname_reads_the_node_name),
        cmocka_unit_test(test_unique_prefers_a_hostname_attribute_to_the_node_name),
        cmocka_unit_test(test_unique_refuses_a_node_lacking_the_attribute),
        cmocka_unit_test(test_unique_takes_no_parameter),
        cmocka_unit_test(test_maxper_allows_up_to_n_replicas_per_value),
        cmocka_unit_test(test_maxper_counts_each_value_separately),
        cmocka_unit_test(test_maxper_accepts_the_count_as_a_string),
        cmocka_unit_test(test_maxper_accepts_an_integral_scalar),
        cmocka_unit_test(test_maxper_refuses_a_node_lacking_the_attribute),
        cmocka_unit_test(test_placed_replicas_on_unlabelled_nodes_count_for_no_value),
        cmocka_unit_test(test_maxper_needs_a_positive_integer),
        cmocka_unit_test(test_cluster_string_allows_only_that_value),
        cmocka_unit_test(test_cluster_set_allows_the_listed_values),
        cmocka_unit_test(test_cluster_scalar_compares_numerically),
        cmocka_unit_test(test_cluster_scalar_refuses_a_non_numeric_value),
        cmocka_unit_test(test_cluster_range_object_bounds_are_inclusive),
        cmocka_unit_test(test_cluster_range_as_two_integer_strings),
        cmocka_unit_test(test_cluster_explicit_set_of_integers_is_not_a_range),
        cmocka_unit_test(test_cluster_range_refuses_a_non_numeric_value),
        cmocka_unit_test(test_cluster_refuses_a_node_lacking_the_attribute),
        cmocka_unit_test(test_cluster_range_with_begin_above_end_is_refused),
        cmocka_unit_test(test_cluster_range_with_fractional_bounds_is_refused),
        cmocka_unit_test(test_cluster_set_of_non_strings_is_refused),
        cmocka_unit_test(test_like_matches_the_seed_ip_prefix),
        cmocka_unit_test(test_like_is_anchored_at_both_ends),
        cmocka_unit_test(test_like_alternation_is_anchored_as_a_whole),
        cmocka_unit_test(test_like_reads_integer_attributes_as_text),
        cmocka_unit_test(test_like_refuses_a_node_lacking_the_attribute),
        cmocka_unit_test(test_unlike_refuses_a_matching_value),
        cmocka_unit_test(test_unlike_allows_a_value_that_does_not_match_whole),
        cmocka_unit_test(test_unlike_allows_a_node_lacking_the_attribute),
        cmocka_unit_test(test_an_invalid_regex_is_refused_with_its_path),
        cmocka_unit_test(test_a_regex_too_costly_to_compile_is_refused_with_its_reason),
        cmocka_unit_test(test_like_needs_a_string),
        cmocka_unit_test(test_groupby_spreads_nine_as_three_three_three),
        cmocka_unit_test(test_groupby_spreads_eight_as_three_three_two),
        cmocka_unit_test(test_groupby_spreads_seven_as_three_two_two),
        cmocka_unit_test(test_groupby_never_puts_a_fourth_of_eight_in_one_group),
        cmocka_unit_test(test_groupby_with_fewer_replicas_than_groups_puts_one_per_group),
        cmocka_unit_test(test_groupby_refuses_a_value_outside_the_groups),
        cmocka_unit_test(test_groupby_refuses_a_node_lacking_the_attribute),
        cmocka_unit_test(test_groupby_without_values_spreads_over_the_eligible_values),
        cmocka_unit_test(test_groupby_without_values_keeps_a_group_whose_nodes_are_all_used),
        cmocka_unit_test(test_groupby_with_a_number_is_refused),
        cmocka_unit_test(test_groupby_refuses_a_value_listed_twice),
        cmocka_unit_test(test_operators_are_case_insensitive),
        cmocka_unit_test(test_and_requires_every_constraint),
        cmocka_unit_test(test_or_requires_any_constraint),
        cmocka_unit_test(test_nested_and_or_from_the_issue),
        cmocka_unit_test(test_combination_keys_are_case_insensitive),
        cmocka_unit_test(test_nesting_32_deep_is_accepted),
        cmocka_unit_test(test_nesting_33_deep_is_refused),
        cmocka_unit_test(test_text_of_each_operator),
        cmocka_unit_test(test_text_of_each_parameter_type),
        cmocka_unit_test(test_text_of_a_combination),
        cmocka_unit_test(test_an_unknown_operator_is_named_with_its_path),
        cmocka_unit_test(test_a_leaf_needs_two_or_three_elements),
        cmocka_unit_test(test_the_attribute_must_be_a_non_empty_string),
        cmocka_unit_test(test_a_combination_needs_and_or_or),
        cmocka_unit_test(test_a_combination_needs_a_non_empty_list),
        cmocka_unit_test(test_a_constraint_is_a_list_or_an_object),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
