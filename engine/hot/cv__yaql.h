/*
 * cv__yaql — what the two halves of the yaql subset share: the parsed
 * expression (yaql_parse.c builds and checks it, yaql.c evaluates it).
 */
#ifndef CV__YAQL_H
#define CV__YAQL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define CV__YAQL_MAX_ARGS 16

/* $, $1/$2, literals (numbers, strings, true, false, null), .key,
 * .method(...), function(...), the binary operators (name holds the
 * operator: = != < > <= >= in + - * / mod and or), not, unary minus and
 * the `key => value` of dict(...). */
typedef enum {
    N_DOLLAR,
    N_ARG,
    N_NUM,
    N_STR,
    N_MEMBER,
    N_METHOD,
    N_CALL,
    N_BINOP,
    N_NOT,
    N_NEG,
    N_PAIR
} cv__yaql_kind_t;

typedef struct cv__yaql_node {
    cv__yaql_kind_t kind;
    char *name;                 /* member, method or function name */
    json_t *value;              /* literal */
    int arg;                    /* N_ARG: 1 for $1, 2 for $2 */
    struct cv__yaql_node *recv; /* member / method receiver, left operand */
    struct cv__yaql_node *args[CV__YAQL_MAX_ARGS];
    int nargs;
    struct cv__yaql_node *right; /* right operand */
} cv__yaql_node_t;

/* Heat's [yaql] defaults (heat/engine/hot/functions.py yaql_opts):
 * limit_iterators, the most items a collection may have where yaql takes
 * one or gives one back, and memory_quota, the most bytes (as Python's
 * sys.getsizeof counts them) a function's result may take. */
#define CV__YAQL_LIMIT_ITERATORS 200
#define CV__YAQL_MEMORY_QUOTA 10000

/* The tree of `s`, or NULL with yaql's parse error or the construct
 * outside the subset in `errstr`. */
cv__yaql_node_t *cv__yaql_parse(const char *s, char *errstr, size_t errstr_size);
/* Whether every method and function the tree calls is in the subset, with
 * an argument count it takes: 0, or -1 naming the one that is not. */
int cv__yaql_check_tree(const cv__yaql_node_t *n, char *errstr, size_t errstr_size);
void cv__yaql_free(cv__yaql_node_t *n);

#endif
