/*
 * cv_pcexpr — Service Fabric placement-constraint expressions:
 * "(HasSSD == true && SomeProperty >= 4) || NodeType != Front".
 *
 * Operators == != > >= < <=, && || !, parentheses. Comparison is typed:
 * integers compare numerically, booleans only with == and !=, strings by
 * byte order; a bare word on the right is a string (or true/false, or an
 * integer when it parses as one), quoted strings with '...' or "...".
 * A node lacking a property never matches a comparison that uses it (and
 * a negation of such a comparison does not match either — "unknown" is not
 * true). Pure logic.
 */
#ifndef CV_PCEXPR_H
#define CV_PCEXPR_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct cv_pcexpr cv_pcexpr_t;

/* Parses; on a syntax error returns CV_EPARSE with "column N: problem". */
int cv_pcexpr_parse(const char *text, cv_pcexpr_t **out, char *errstr, size_t errstr_size);

/* Whether a node with these properties (object of string / bool / integer)
 * satisfies the expression. */
bool cv_pcexpr_match(const cv_pcexpr_t *e, const json_t *props);

/* Appends the names of the properties the expression reads to `names` (array). */
void cv_pcexpr_properties(const cv_pcexpr_t *e, json_t *names);

void cv_pcexpr_free(cv_pcexpr_t *e);

#endif
