/*
 * Specification of placement-constraint expressions (Service Fabric's
 * cluster description docs): the operators, their precedence, typed
 * comparison, nodes lacking a property, and syntax errors reported with
 * their column.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_pcexpr.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The node properties of the docs' NodeType01, as ClusterConfig.json spells
 * them: every value a string. */
#define SEED_NODETYPE01 "{\"HasSSD\": \"true\", \"NodeColor\": \"green\", \"SomeProperty\": \"5\"}"

static json_t *props_of(const char *json)
{
    json_t *v = json_loads(json, 0, NULL);
    if (!v)
        fail_msg("bad JSON in test: %s", json);
    return v;
}

/* Whether a node with properties `props_json` satisfies `expr`. */
static bool matches(const char *expr, const char *props_json)
{
    char err[256] = "";
    cv_pcexpr_t *e = NULL;
    int rc = cv_pcexpr_parse(expr, &e, err, sizeof(err));
    if (rc != 0)
        fail_msg("'%s' did not parse: %s", expr, err);
    json_t *props = props_of(props_json);
    bool m = cv_pcexpr_match(e, props);
    json_decref(props);
    cv_pcexpr_free(e);
    return m;
}

/* Asserts that `expr` fails to parse with `code` and exactly `message`. */
static void assert_parse_error(const char *expr, int code, const char *message)
{
    char err[256] = "";
    cv_pcexpr_t *e = NULL;
    int rc = cv_pcexpr_parse(expr, &e, err, sizeof(err));
    cv_pcexpr_free(e);
    assert_int_equal(rc, code);
    assert_null(e);
    assert_string_equal(err, message);
}

/* ---- the docs' examples ------------------------------------------------- */

static void test_seed_example_matches_nodetype01(void **state)
{
    (void)state;
    assert_true(matches("(HasSSD == true && SomeProperty >= 4)", SEED_NODETYPE01));
}

static void test_seed_example_refuses_a_node_below_the_threshold(void **state)
{
    (void)state;
    assert_false(matches("(HasSSD == true && SomeProperty >= 4)",
                         "{\"HasSSD\": \"true\", \"SomeProperty\": \"3\"}"));
}

static void test_seed_nested_parentheses_example(void **state)
{
    (void)state;
    const char *expr = "((OneProperty < 100) || ((AnotherProperty == false) && "
                       "(OneProperty >= 100)))";
    assert_true(matches(expr, "{\"OneProperty\": 50, \"AnotherProperty\": true}"));
    assert_true(matches(expr, "{\"OneProperty\": 150, \"AnotherProperty\": false}"));
    assert_false(matches(expr, "{\"OneProperty\": 150, \"AnotherProperty\": true}"));
}

static void test_seed_node_type_selector(void **state)
{
    (void)state;
    assert_true(matches("NodeType == NodeType01", "{\"NodeType\": \"NodeType01\"}"));
    assert_false(matches("(NodeType == NodeType03)", "{\"NodeType\": \"NodeType01\"}"));
}

/* ---- each operator ------------------------------------------------------ */

static void test_equal_operator(void **state)
{
    (void)state;
    assert_true(matches("Value == 5", "{\"Value\": 5}"));
    assert_false(matches("Value == 5", "{\"Value\": 6}"));
}

static void test_not_equal_operator(void **state)
{
    (void)state;
    assert_true(matches("NodeColor != green", "{\"NodeColor\": \"blue\"}"));
    assert_false(matches("NodeColor != green", SEED_NODETYPE01));
}

static void test_greater_than_is_strict(void **state)
{
    (void)state;
    assert_true(matches("Value > 5", "{\"Value\": 6}"));
    assert_false(matches("Value > 5", "{\"Value\": 5}"));
}

static void test_greater_or_equal_includes_equal(void **state)
{
    (void)state;
    assert_true(matches("Value >= 5", "{\"Value\": 5}"));
    assert_false(matches("Value >= 5", "{\"Value\": 4}"));
}

static void test_less_than_is_strict(void **state)
{
    (void)state;
    assert_true(matches("Value < 5", "{\"Value\": 4}"));
    assert_false(matches("Value < 5", "{\"Value\": 5}"));
}

static void test_less_or_equal_includes_equal(void **state)
{
    (void)state;
    assert_true(matches("Value <= 5", "{\"Value\": 5}"));
    assert_false(matches("Value <= 5", "{\"Value\": 6}"));
}

static void test_and_needs_both_sides(void **state)
{
    (void)state;
    assert_true(matches("A == 1 && B == 1", "{\"A\": 1, \"B\": 1}"));
    assert_false(matches("A == 1 && B == 1", "{\"A\": 1, \"B\": 0}"));
}

static void test_or_needs_either_side(void **state)
{
    (void)state;
    assert_true(matches("A == 1 || B == 1", "{\"A\": 0, \"B\": 1}"));
    assert_false(matches("A == 1 || B == 1", "{\"A\": 0, \"B\": 0}"));
}

static void test_not_negates_a_parenthesised_condition(void **state)
{
    (void)state;
    assert_true(matches("!(A == 1)", "{\"A\": 2}"));
    assert_false(matches("!(A == 1)", "{\"A\": 1}"));
}

static void test_double_negation_cancels(void **state)
{
    (void)state;
    assert_true(matches("!!(A == 1)", "{\"A\": 1}"));
}

/* ---- precedence and parentheses ----------------------------------------- */

static void test_and_binds_tighter_than_or(void **state)
{
    (void)state;
    /* A || (B && C), not (A || B) && C. */
    assert_true(matches("A == 1 || B == 1 && C == 1", "{\"A\": 1, \"B\": 0, \"C\": 0}"));
}

static void test_not_binds_tighter_than_and(void **state)
{
    (void)state;
    /* (!(A == 1)) && B == 1, not !(A == 1 && B == 1). */
    assert_false(matches("!A == 1 && B == 1", "{\"A\": 2, \"B\": 0}"));
    assert_true(matches("!A == 1 && B == 1", "{\"A\": 2, \"B\": 1}"));
}

static void test_parentheses_override_precedence(void **state)
{
    (void)state;
    assert_false(matches("(A == 1 || B == 1) && C == 1", "{\"A\": 1, \"B\": 0, \"C\": 0}"));
}

static void test_whitespace_is_free(void **state)
{
    (void)state;
    assert_true(matches("A==1&&(B>=2||C<0)", "{\"A\": 1, \"B\": 2, \"C\": 0}"));
    assert_true(matches(" \tA ==\n1 ", "{\"A\": 1}"));
}

static void test_a_long_or_chain_is_evaluated(void **state)
{
    (void)state;
    char expr[20000] = "";
    for (int i = 0; i < 1000; i++) {
        char term[32];
        snprintf(term, sizeof(term), "%sV == %d", i ? " || " : "", i);
        strcat(expr, term);
    }
    assert_true(matches(expr, "{\"V\": 999}"));
    assert_false(matches(expr, "{\"V\": 1000}"));
}

/* ---- typed comparison --------------------------------------------------- */

static void test_integers_compare_numerically_not_as_text(void **state)
{
    (void)state;
    assert_true(matches("Value > 9", "{\"Value\": 10}"));
}

static void test_a_string_spelling_an_integer_compares_numerically(void **state)
{
    (void)state;
    assert_true(matches("Value > 9", "{\"Value\": \"10\"}"));
    assert_true(matches("Value == 5", "{\"Value\": \"05\"}"));
}

static void test_signed_integer_literals(void **state)
{
    (void)state;
    assert_true(matches("Temp > -5", "{\"Temp\": -3}"));
    assert_false(matches("Temp > -5", "{\"Temp\": -10}"));
    assert_true(matches("Temp == +7", "{\"Temp\": 7}"));
}

static void test_the_64_bit_extremes_are_integers(void **state)
{
    (void)state;
    assert_true(matches("V == -9223372036854775808", "{\"V\": -9223372036854775808}"));
    assert_true(matches("V <= 9223372036854775807", "{\"V\": 9223372036854775807}"));
}

static void test_an_integer_against_a_word_is_unequal(void **state)
{
    (void)state;
    assert_false(matches("Value == 5", "{\"Value\": \"abc\"}"));
    assert_true(matches("Value != 5", "{\"Value\": \"abc\"}"));
}

static void test_an_integer_against_a_word_is_unordered_even_negated(void **state)
{
    (void)state;
    assert_false(matches("Value > 5", "{\"Value\": \"abc\"}"));
    assert_false(matches("!(Value > 5)", "{\"Value\": \"abc\"}"));
}

static void test_booleans_are_case_insensitive(void **state)
{
    (void)state;
    assert_true(matches("HasSSD == TRUE", "{\"HasSSD\": true}"));
    assert_true(matches("HasSSD == false", "{\"HasSSD\": \"False\"}"));
    assert_true(matches("HasSSD == true", "{\"HasSSD\": \"TRUE\"}"));
    assert_true(matches("HasSSD != True", "{\"HasSSD\": false}"));
}

static void test_a_boolean_is_not_an_integer(void **state)
{
    (void)state;
    assert_false(matches("HasSSD == 1", "{\"HasSSD\": true}"));
}

static void test_booleans_have_no_order(void **state)
{
    (void)state;
    assert_parse_error("HasSSD > true", CV_EPARSE,
                       "column 8: booleans compare only with == and !=");
}

static void test_strings_order_by_byte_order(void **state)
{
    (void)state;
    assert_true(matches("Name < m", "{\"Name\": \"apple\"}"));
    assert_false(matches("Name < m", "{\"Name\": \"zebra\"}"));
    assert_true(matches("Name < m", "{\"Name\": \"Zebra\"}"));
    assert_true(matches("Name >= apple", "{\"Name\": \"apple\"}"));
    assert_false(matches("Version >= v1.2", "{\"Version\": \"v1.10\"}"));
}

static void test_string_equality_is_exact(void **state)
{
    (void)state;
    assert_false(matches("NodeColor == green", "{\"NodeColor\": \"Green\"}"));
    assert_false(matches("NodeColor == green", "{\"NodeColor\": \"green \"}"));
}

static void test_quoted_strings_keep_spaces_and_operators(void **state)
{
    (void)state;
    assert_true(matches("Label == 'a && b'", "{\"Label\": \"a && b\"}"));
    assert_true(matches("Label == \"(x)\"", "{\"Label\": \"(x)\"}"));
    assert_true(matches("Label == ''", "{\"Label\": \"\"}"));
}

static void test_a_quoted_number_is_a_string(void **state)
{
    (void)state;
    /* As text "05" is not "5"; as a bare integer literal it is. */
    assert_false(matches("Value == '5'", "{\"Value\": \"05\"}"));
    assert_true(matches("Value == 5", "{\"Value\": \"05\"}"));
}

static void test_a_quoted_literal_spelling_the_node_type_compares_typed(void **state)
{
    (void)state;
    assert_true(matches("Value == '5'", "{\"Value\": 5}"));
    assert_true(matches("HasSSD == 'true'", "{\"HasSSD\": true}"));
}

static void test_a_quoted_true_is_a_string(void **state)
{
    (void)state;
    assert_true(matches("Flag == 'True'", "{\"Flag\": \"True\"}"));
    assert_false(matches("Flag == 'True'", "{\"Flag\": \"true\"}"));
}

static void test_bare_words_carry_domain_punctuation(void **state)
{
    (void)state;
    assert_true(matches("Domain == fd:/dc1/rack-1", "{\"Domain\": \"fd:/dc1/rack-1\"}"));
    assert_true(matches("Version == v1.2-rc+1", "{\"Version\": \"v1.2-rc+1\"}"));
}

static void test_property_names_may_contain_dots(void **state)
{
    (void)state;
    assert_true(matches("disk.ssd == true", "{\"disk.ssd\": true}"));
}

/* ---- missing properties ------------------------------------------------- */

static void test_a_missing_property_never_matches(void **state)
{
    (void)state;
    assert_false(matches("Color == red", "{}"));
    assert_false(matches("Color != red", "{}"));
    assert_false(matches("Value < 5", "{}"));
}

static void test_a_missing_property_does_not_match_under_not(void **state)
{
    (void)state;
    assert_false(matches("!(Color == red)", "{}"));
    assert_false(matches("!!(Color == red)", "{}"));
}

static void test_a_null_property_is_missing(void **state)
{
    (void)state;
    assert_false(matches("!(Color == red)", "{\"Color\": null}"));
}

static void test_missing_and_true_does_not_match(void **state)
{
    (void)state;
    assert_false(matches("Color == red && A == 1", "{\"A\": 1}"));
}

static void test_missing_and_false_is_false_so_its_negation_matches(void **state)
{
    (void)state;
    assert_true(matches("!(Color == red && A == 1)", "{\"A\": 2}"));
}

static void test_missing_or_true_matches(void **state)
{
    (void)state;
    assert_true(matches("Color == red || A == 1", "{\"A\": 1}"));
}

static void test_missing_or_false_does_not_match_even_negated(void **state)
{
    (void)state;
    assert_false(matches("Color == red || A == 1", "{\"A\": 2}"));
    assert_false(matches("!(Color == red || A == 1)", "{\"A\": 2}"));
}

static void test_no_properties_at_all_matches_nothing_that_reads_one(void **state)
{
    (void)state;
    cv_pcexpr_t *e = NULL;
    assert_int_equal(cv_pcexpr_parse("!(A == 1)", &e, NULL, 0), 0);
    assert_false(cv_pcexpr_match(e, NULL));
    cv_pcexpr_free(e);
}

/* ---- the empty expression ------------------------------------------------ */

static void test_an_empty_expression_matches_every_node(void **state)
{
    (void)state;
    assert_true(matches("", "{}"));
    assert_true(matches("", SEED_NODETYPE01));
}

static void test_a_blank_expression_matches_every_node(void **state)
{
    (void)state;
    assert_true(matches(" \t\n ", "{}"));
}

/* ---- syntax errors ------------------------------------------------------- */

static void test_a_missing_value_is_reported_where_it_should_be(void **state)
{
    (void)state;
    assert_parse_error("Value >= ", CV_EPARSE, "column 10: expected a value after '>='");
    assert_parse_error("Value >= )", CV_EPARSE, "column 10: expected a value after '>='");
}

static void test_an_unclosed_parenthesis_is_reported_at_its_opening(void **state)
{
    (void)state;
    assert_parse_error("A == 1 && (B == 2", CV_EPARSE, "column 11: unbalanced parenthesis");
}

static void test_a_stray_closing_parenthesis_is_reported_where_it_is(void **state)
{
    (void)state;
    assert_parse_error("(A == 1))", CV_EPARSE, "column 9: unbalanced parenthesis");
}

static void test_an_unexpected_character_is_named(void **state)
{
    (void)state;
    assert_parse_error("A == $x", CV_EPARSE, "column 6: unexpected character '$'");
    assert_parse_error("A == 1 # comment", CV_EPARSE, "column 8: unexpected character '#'");
}

static void test_a_property_alone_is_not_a_condition(void **state)
{
    (void)state;
    assert_parse_error("HasSSD", CV_EPARSE,
                       "column 7: expected a comparison operator after 'HasSSD' (a property "
                       "alone is not a condition; write HasSSD == true)");
}

static void test_a_single_equals_sign_is_refused(void **state)
{
    (void)state;
    assert_parse_error("A = 1", CV_EPARSE, "column 3: '=' is not an operator; write '=='");
}

static void test_two_conditions_need_a_connective(void **state)
{
    (void)state;
    assert_parse_error("A == 1 B == 2", CV_EPARSE, "column 8: expected '&&' or '||'");
    assert_parse_error("A == 1 & B == 2", CV_EPARSE, "column 8: expected '&&' or '||'");
}

static void test_a_connective_inside_parentheses_is_expected(void **state)
{
    (void)state;
    assert_parse_error("(A == 1 B == 2)", CV_EPARSE, "column 9: expected '&&', '||' or ')'");
}

static void test_a_dangling_connective_wants_a_property(void **state)
{
    (void)state;
    assert_parse_error("A == 1 &&", CV_EPARSE, "column 10: expected a property name");
}

static void test_a_literal_on_the_left_is_refused(void **state)
{
    (void)state;
    assert_parse_error("5 <= Value", CV_EPARSE, "column 1: expected a property name");
}

static void test_empty_parentheses_are_refused(void **state)
{
    (void)state;
    assert_parse_error("()", CV_EPARSE, "column 2: expected a property name");
}

static void test_an_unterminated_string_is_reported_at_its_quote(void **state)
{
    (void)state;
    assert_parse_error("Name == 'abc", CV_EPARSE, "column 9: unterminated string");
}

static void test_an_integer_beyond_64_bits_is_refused(void **state)
{
    (void)state;
    assert_parse_error("V == 9223372036854775808", CV_EPARSE, "column 6: integer out of range");
}

static void test_deep_nesting_is_refused(void **state)
{
    (void)state;
    char expr[256] = "";
    for (int i = 0; i < 65; i++)
        strcat(expr, "(");
    strcat(expr, "A == 1");
    for (int i = 0; i < 65; i++)
        strcat(expr, ")");
    assert_parse_error(expr, CV_ETOOBIG, "column 65: expression nested deeper than 64");
}

static void test_nesting_up_to_the_limit_is_accepted(void **state)
{
    (void)state;
    char expr[256] = "";
    for (int i = 0; i < 64; i++)
        strcat(expr, "(");
    strcat(expr, "A == 1");
    for (int i = 0; i < 64; i++)
        strcat(expr, ")");
    assert_true(matches(expr, "{\"A\": 1}"));
}

/* ---- introspection -------------------------------------------------------- */

static void test_properties_lists_each_name_once_in_order_of_use(void **state)
{
    (void)state;
    cv_pcexpr_t *e = NULL;
    assert_int_equal(
        cv_pcexpr_parse("(HasSSD == true && SomeProperty >= 4) || !(HasSSD == false)", &e, NULL, 0),
        0);
    json_t *names = json_array();
    cv_pcexpr_properties(e, names);
    char *dump = json_dumps(names, JSON_COMPACT);
    assert_string_equal(dump, "[\"HasSSD\",\"SomeProperty\"]");
    free(dump);
    json_decref(names);
    cv_pcexpr_free(e);
}

static void test_properties_appends_to_names_already_listed(void **state)
{
    (void)state;
    cv_pcexpr_t *e = NULL;
    assert_int_equal(cv_pcexpr_parse("B == 1 && A == 2", &e, NULL, 0), 0);
    json_t *names = json_pack("[s]", "A");
    cv_pcexpr_properties(e, names);
    char *dump = json_dumps(names, JSON_COMPACT);
    assert_string_equal(dump, "[\"A\",\"B\"]");
    free(dump);
    json_decref(names);
    cv_pcexpr_free(e);
}

static void test_the_empty_expression_reads_no_property(void **state)
{
    (void)state;
    cv_pcexpr_t *e = NULL;
    assert_int_equal(cv_pcexpr_parse("", &e, NULL, 0), 0);
    json_t *names = json_array();
    cv_pcexpr_properties(e, names);
    assert_int_equal(json_array_size(names), 0);
    json_decref(names);
    cv_pcexpr_free(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seed_example_matches_nodetype01),
        cmocka_unit_test(test_seed_example_refuses_a_node_below_the_threshold),
        cmocka_unit_test(test_seed_nested_parentheses_example),
        cmocka_unit_test(test_seed_node_type_selector),
        cmocka_unit_test(test_equal_operator),
        cmocka_unit_test(test_not_equal_operator),
        cmocka_unit_test(test_greater_than_is_strict),
        cmocka_unit_test(test_greater_or_equal_includes_equal),
        cmocka_unit_test(test_less_than_is_strict),
        cmocka_unit_test(test_less_or_equal_includes_equal),
        cmocka_unit_test(test_and_needs_both_sides),
        cmocka_unit_test(test_or_needs_either_side),
        cmocka_unit_test(test_not_negates_a_parenthesised_condition),
        cmocka_unit_test(test_double_negation_cancels),
        cmocka_unit_test(test_and_binds_tighter_than_or),
        cmocka_unit_test(test_not_binds_tighter_than_and),
        cmocka_unit_test(test_parentheses_override_precedence),
        cmocka_unit_test(test_whitespace_is_free),
        cmocka_unit_test(test_a_long_or_chain_is_evaluated),
        cmocka_unit_test(test_integers_compare_numerically_not_as_text),
        cmocka_unit_test(test_a_string_spelling_an_integer_compares_numerically),
        cmocka_unit_test(test_signed_integer_literals),
        cmocka_unit_test(test_the_64_bit_extremes_are_integers),
        cmocka_unit_test(test_an_integer_against_a_word_is_unequal),
        cmocka_unit_test(test_an_integer_against_a_word_is_unordered_even_negated),
        cmocka_unit_test(test_booleans_are_case_insensitive),
        cmocka_unit_test(test_a_boolean_is_not_an_integer),
        cmocka_unit_test(test_booleans_have_no_order),
        cmocka_unit_test(test_strings_order_by_byte_order),
        cmocka_unit_test(test_string_equality_is_exact),
        cmocka_unit_test(test_quoted_strings_keep_spaces_and_operators),
        cmocka_unit_test(test_a_quoted_number_is_a_string),
        cmocka_unit_test(test_a_quoted_literal_spelling_the_node_type_compares_typed),
        cmocka_unit_test(test_a_quoted_true_is_a_string),
        cmocka_unit_test(test_bare_words_carry_domain_punctuation),
        cmocka_unit_test(test_property_names_may_contain_dots),
        cmocka_unit_test(test_a_missing_property_never_matches),
        cmocka_unit_test(test_a_missing_property_does_not_match_under_not),
        cmocka_unit_test(test_a_null_property_is_missing),
        cmocka_unit_test(test_missing_and_true_does_not_match),
        cmocka_unit_test(test_missing_and_false_is_false_so_its_negation_matches),
        cmocka_unit_test(test_missing_or_true_matches),
        cmocka_unit_test(test_missing_or_false_does_not_match_even_negated),
        cmocka_unit_test(test_no_properties_at_all_matches_nothing_that_reads_one),
        cmocka_unit_test(test_an_empty_expression_matches_every_node),
        cmocka_unit_test(test_a_blank_expression_matches_every_node),
        cmocka_unit_test(test_a_missing_value_is_reported_where_it_should_be),
        cmocka_unit_test(test_an_unclosed_parenthesis_is_reported_at_its_opening),
        cmocka_unit_test(test_a_stray_closing_parenthesis_is_reported_where_it_is),
        cmocka_unit_test(test_an_unexpected_character_is_named),
        cmocka_unit_test(test_a_property_alone_is_not_a_condition),
        cmocka_unit_test(test_a_single_equals_sign_is_refused),
        cmocka_unit_test(test_two_conditions_need_a_connective),
        cmocka_unit_test(test_a_connective_inside_parentheses_is_expected),
        cmocka_unit_test(test_a_dangling_connective_wants_a_property),
        cmocka_unit_test(test_a_literal_on_the_left_is_refused),
        cmocka_unit_test(test_empty_parentheses_are_refused),
        cmocka_unit_test(test_an_unterminated_string_is_reported_at_its_quote),
        cmocka_unit_test(test_an_integer_beyond_64_bits_is_refused),
        cmocka_unit_test(test_deep_nesting_is_refused),
        cmocka_unit_test(test_nesting_up_to_the_limit_is_accepted),
        cmocka_unit_test(test_properties_lists_each_name_once_in_order_of_use),
        cmocka_unit_test(test_properties_appends_to_names_already_listed),
        cmocka_unit_test(test_the_empty_expression_reads_no_property),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
