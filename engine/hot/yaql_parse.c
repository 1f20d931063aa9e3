/*
 * yaql_parse — the parser of the yaql subset (see yaql.c): recursive
 * descent into a small tree, refusing what the subset does not cover with
 * "yaql expression not supported: <the construct>" and reporting real
 * syntax errors in yaql's words, then a check of the methods and functions
 * called against the table of the subset.
 */
#include "cv__template_internal.h"
#include "cv__yaql.h"
#include "cv_base.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct parser {
    const char *s;
    size_t at;
    int depth;
    char *errstr;
    size_t errstr_size;
    bool failed;
} parser_t;

void cv__yaql_free(cv__yaql_node_t *n)
{
    if (!n)
        return;
    free(n->name);
    json_decref(n->value);
    cv__yaql_free(n->recv);
    cv__yaql_free(n->right);
    for (int i = 0; i < n->nargs; i++)
        cv__yaql_free(n->args[i]);
    free(n);
}

static cv__yaql_node_t *perr(parser_t *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static cv__yaql_node_t *perr(parser_t *p, const char *fmt, ...)
{
    if (!p->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->errstr, p->errstr_size, fmt, ap);
        va_end(ap);
        p->failed = true;
    }
    return NULL;
}

/* A token where the subset has none: an operator or a word (and, or, in,
 * not...) of full yaql is named as unsupported, since the expression may
 * well be valid yaql; anything else is a syntax error in yaql's words. */
static cv__yaql_node_t *syntax(parser_t *p)
{
    const char *at = p->s + p->at;
    if (*at == '\0')
        return perr(p, "Bad expression Parse error: unexpected end of statement.");
    if (strchr("*/%<>=!&|?~^", *at)) {
        size_t n = strspn(at, "*/%<>=!&|?~^");
        return perr(p, "yaql expression not supported: the operator %.*s", (int)n, at);
    }
    if (isalpha((unsigned char)*at)) {
        size_t n = 0;
        while (isalnum((unsigned char)at[n]) || at[n] == '_')
            n++;
        return perr(p, "yaql expression not supported: the operator %.*s", (int)n, at);
    }
    return perr(p, "Bad expression Parse error: unexpected '%c' at position %zu.", *at, p->at);
}

static cv__yaql_node_t *unsupported(parser_t *p, const char *what, const char *name)
{
    return perr(p, "yaql expression not supported: %s%s", what, name ? name : "");
}

static void skip_space(parser_t *p)
{
    while (isspace((unsigned char)p->s[p->at]))
        p->at++;
}

static bool eat(parser_t *p, char c)
{
    skip_space(p);
    if (p->s[p->at] != c)
        return false;
    p->at++;
    return true;
}

static cv__yaql_node_t *new_node(cv__yaql_kind_t kind)
{
    cv__yaql_node_t *n = calloc(1, sizeof(*n));
    if (n)
        n->kind = kind;
    return n;
}

static char *ident(parser_t *p)
{
    skip_space(p);
    size_t start = p->at;
    while (isalnum((unsigned char)p->s[p->at]) || p->s[p->at] == '_')
        p->at++;
    if (p->at == start || isdigit((unsigned char)p->s[start]))
        return NULL;
    return strndup(p->s + start, p->at - start);
}

static cv__yaql_node_t *expr(parser_t *p);
static cv__yaql_node_t *pair_or_expr(parser_t *p);

/* "(a, b)" after a method or function name. */
static bool call_args(parser_t *p, cv__yaql_node_t *n)
{
    if (eat(p, ')'))
        return true;
    do {
        if (n->nargs == CV__YAQL_MAX_ARGS) {
            unsupported(p, "more than 4 arguments to ", n->name);
            return false;
        }
        if (!(n->args[n->nargs++] = pair_or_expr(p)))
            return false;
    } while (eat(p, ','));
    if (!eat(p, ')')) {
        syntax(p);
        return false;
    }
    return true;
}

static cv__yaql_node_t *string_literal(parser_t *p, char quote)
{
    cv_buf_t text = {0};
    while (!text.failed && p->s[p->at] && p->s[p->at] != quote) {
        char c = p->s[p->at++];
        if (c == '\\' && p->s[p->at])
            c = p->s[p->at++];
        cv_buf_putc(&text, c);
    }
    bool failed = text.failed, unclosed = p->s[p->at] != quote;
    if (failed || unclosed) {
        cv_buf_free(&text);
        return failed ? perr(p, "out of memory") : syntax(p);
    }
    p->at++;
    cv__yaql_node_t *n = new_node(N_STR);
    if (n)
        n->value = json_stringn(cv_buf_str(&text), text.len);
    cv_buf_free(&text);
    if (!n || !n->value) {
        cv__yaql_free(n);
        return perr(p, "yaql: a string that is not UTF-8");
    }
    return n;
}

static cv__yaql_node_t *number_literal(parser_t *p)
{
    const char *start = p->s + p->at;
    char *end;
    bool real = false;
    for (const char *c = start; isdigit((unsigned char)*c) || *c == '.'; c++)
        real = real || *c == '.';
    cv__yaql_node_t *n = new_node(N_NUM);
    if (!n)
        return perr(p, "out of memory");
    if (real) {
        double d = strtod(start, &end);
        n->value = json_real(d);
    } else {
        long long i = strtoll(start, &end, 10);
        n->value = json_integer(i);
    }
    p->at += (size_t)(end - start);
    return n;
}

/* $, $1, $2 */
static cv__yaql_node_t *dollar(parser_t *p)
{
    cv__yaql_node_t *n = new_node(N_DOLLAR);
    if (!n)
        return perr(p, "out of memory");
    if (isdigit((unsigned char)p->s[p->at])) {
        int i = p->s[p->at++] - '0';
        if (isdigit((unsigned char)p->s[p->at]) || i < 1 || i > 2) {
            cv__yaql_free(n);
            return unsupported(p, "the variable $", "3 and above");
        }
        n->kind = N_ARG;
        n->arg = i;
    } else if (isalpha((unsigned char)p->s[p->at])) {
        cv__yaql_free(n);
        return unsupported(p, "named variables", NULL);
    }
    return n;
}

static cv__yaql_node_t *primary(parser_t *p)
{
    skip_space(p);
    char c = p->s[p->at];
    if (c == '$') {
        p->at++;
        return dollar(p);
    }
    if (isdigit((unsigned char)c))
        return number_literal(p);
    if (c == '\'' || c == '"') {
        p->at++;
        return string_literal(p, c);
    }
    if (c == '(') {
        p->at++;
        cv__yaql_node_t *inner = expr(p);
        if (inner && !eat(p, ')')) {
            cv__yaql_free(inner);
            return syntax(p);
        }
        return inner;
    }
    if (c == '[' || c == '{')
        return unsupported(p, c == '[' ? "list literals" : "map literals", NULL);
    char *name = ident(p);
    if (!name)
        return syntax(p);
    cv__yaql_node_t *n = new_node(N_CALL);
    if (!n) {
        free(name);
        return perr(p, "out of memory");
    }
    n->name = name;
    if (!eat(p, '(')) {
        json_t *constant = strcmp(name, "true") == 0    ? json_true()
                           : strcmp(name, "false") == 0 ? json_false()
                           : strcmp(name, "null") == 0  ? json_null()
                                                        : NULL;
        if (!constant) {
            unsupported(p, "the name ", name);
            cv__yaql_free(n);
            return NULL;
        }
        n->kind = N_NUM;
        n->value = constant;
        return n;
    }
    if (!call_args(p, n)) {
        cv__yaql_free(n);
        return NULL;
    }
    return n;
}

static cv__yaql_node_t *postfix(parser_t *p)
{
    cv__yaql_node_t *n = primary(p);
    for (;;) {
        skip_space(p);
        if (!n || p->s[p->at] != '.')
            return n;
        p->at++;
        char *name = ident(p);
        if (!name) {
            cv__yaql_free(n);
            return syntax(p);
        }
        cv__yaql_node_t *m = new_node(N_MEMBER);
        if (!m) {
            free(name);
            cv__yaql_free(n);
            return perr(p, "out of memory");
        }
        m->name = name;
        m->recv = n;
        if (eat(p, '(')) {
            m->kind = N_METHOD;
            if (!call_args(p, m)) {
                cv__yaql_free(m);
                return NULL;
            }
        }
        n = m;
    }
}

/* ---------------------------------------------------------------- operators */

/* Whether the word `w` is next (not the start of a longer name); eaten if so. */
static bool eat_word(parser_t *p, const char *w)
{
    skip_space(p);
    size_t n = strlen(w);
    const char *at = p->s + p->at;
    if (strncmp(at, w, n) != 0 || isalnum((unsigned char)at[n]) || at[n] == '_')
        return false;
    p->at += n;
    return true;
}

/* The symbol `op` is next and not the start of a longer one of the
 * operators yaql has ("<" of "<=", "=" of "=>"); eaten if so. */
static bool eat_symbol(parser_t *p, const char *op)
{
    skip_space(p);
    size_t n = strlen(op);
    const char *at = p->s + p->at;
    if (strncmp(at, op, n) != 0)
        return false;
    if (n == 1 && strchr("<>=!", op[0]) && (at[1] == '=' || at[1] == '>' || at[1] == '~'))
        return false;
    if (n == 1 && op[0] == '-' && at[1] == '>')
        return false;
    p->at += n;
    return true;
}

static cv__yaql_node_t *binop(parser_t *p, const char *op, cv__yaql_node_t *left,
                              cv__yaql_node_t *right)
{
    cv__yaql_node_t *n = left && right ? new_node(N_BINOP) : NULL;
    if (n)
        n->name = strdup(op);
    if (!n || !n->name) {
        cv__yaql_free(left);
        cv__yaql_free(right);
        cv__yaql_free(n);
        return p->failed ? NULL : perr(p, "out of memory");
    }
    n->recv = left;
    n->right = right;
    return n;
}

/* One level of left-associative binary operators, yaql's precedence
 * groups (yaql/language/factory.py) from `ops` down to `next`. */
typedef cv__yaql_node_t *(*level_fn)(parser_t *p);

static cv__yaql_node_t *left_assoc(parser_t *p, const char *const *ops, level_fn next)
{
    cv__yaql_node_t *n = next(p);
    for (bool more = n != NULL; more;) {
        more = false;
        for (size_t i = 0; ops[i] && !more; i++) {
            bool word = isalpha((unsigned char)ops[i][0]);
            if (word ? eat_word(p, ops[i]) : eat_symbol(p, ops[i])) {
                n = binop(p, ops[i], n, next(p));
                more = n != NULL;
            }
        }
    }
    return n;
}

static cv__yaql_node_t *unary(parser_t *p);

static cv__yaql_node_t *prefix(parser_t *p, cv__yaql_kind_t kind, level_fn operand)
{
    if (++p->depth > MAX_DEPTH) {
        p->depth--;
        return unsupported(p, "expressions nested deeper than 64", NULL);
    }
    cv__yaql_node_t *inner = operand(p), *n = inner ? new_node(kind) : NULL;
    p->depth--;
    if (inner && !n) {
        cv__yaql_free(inner);
        return perr(p, "out of memory");
    }
    if (n)
        n->recv = inner;
    return n;
}

/* Unary + and - bind tighter than * (yaql's order). */
static cv__yaql_node_t *unary(parser_t *p)
{
    if (eat_symbol(p, "-"))
        return prefix(p, N_NEG, unary);
    if (eat_symbol(p, "+"))
        return unary(p);
    return postfix(p);
}

static cv__yaql_node_t *product(parser_t *p)
{
    static const char *const ops[] = {"*", "/", "mod", NULL};
    return left_assoc(p, ops, unary);
}

static cv__yaql_node_t *sum(parser_t *p)
{
    static const char *const ops[] = {"+", "-", NULL};
    return left_assoc(p, ops, product);
}

static cv__yaql_node_t *comparison(parser_t *p)
{
    static const char *const ops[] = {">=", "<=", "!=", ">", "<", "=", "in", NULL};
    return left_assoc(p, ops, sum);
}

static cv__yaql_node_t *negation(parser_t *p)
{
    if (eat_word(p, "not"))
        return prefix(p, N_NOT, negation);
    return comparison(p);
}

static cv__yaql_node_t *conjunction(parser_t *p)
{
    static const char *const ops[] = {"and", NULL};
    return left_assoc(p, ops, negation);
}

static cv__yaql_node_t *disjunction(parser_t *p)
{
    static const char *const ops[] = {"or", NULL};
    return left_assoc(p, ops, conjunction);
}

static cv__yaql_node_t *expr(parser_t *p)
{
    if (++p->depth > MAX_DEPTH) {
        p->depth--;
        return unsupported(p, "expressions nested deeper than 64", NULL);
    }
    cv__yaql_node_t *n = disjunction(p);
    p->depth--;
    return n;
}

/* An argument: an expression, or `key => value` (dict's keyword pairs,
 * yaql's name-value operator, the loosest of all). */
static cv__yaql_node_t *pair_or_expr(parser_t *p)
{
    /* `name => value`: a bare name before => is yaql's keyword, a string. */
    size_t start = p->at;
    char *name = ident(p);
    cv__yaql_node_t *key = NULL;
    if (name && eat_symbol(p, "=>") && (key = new_node(N_STR)))
        key->value = json_string(name);
    free(name);
    if (key) {
        p->at -= 2; /* the => again, for below */
    } else {
        p->at = start;
        key = expr(p);
    }
    if (!key || !eat_symbol(p, "=>"))
        return key;
    cv__yaql_node_t *n = binop(p, "=>", key, expr(p));
    if (n)
        n->kind = N_PAIR;
    return n;
}

cv__yaql_node_t *cv__yaql_parse(const char *s, char *errstr, size_t errstr_size)
{
    parser_t p = {.s = s, .errstr = errstr, .errstr_size = errstr_size};
    cv__yaql_node_t *n = expr(&p);
    skip_space(&p);
    if (n && p.s[p.at]) {
        cv__yaql_free(n);
        n = syntax(&p);
    }
    return n;
}

/* ---------------------------------------------------------------- methods */

/* What a method or function name means, checked before anything runs
 * (-1: any number of arguments). */
static const struct {
    const char *name;
    int min_args, max_args;
    bool method, function;
} known[] = {
    {"sum", 0, 0, true, true},       {"len", 0, 0, true, true},
    {"contains", 1, 1, true, false}, {"select", 1, 1, true, false},
    {"where", 1, 1, true, false},    {"distinct", 0, 0, true, false},
    {"reduce", 1, 1, true, false},   {"mergeWith", 1, 1, true, false},
    {"min", 0, 1, true, true},       {"max", 0, 1, true, true},
    {"keys", 0, 0, true, false},     {"values", 0, 0, true, false},
    {"toDict", 1, 2, true, false},   {"toUpper", 0, 0, true, false},
    {"toLower", 0, 0, true, false},  {"int", 1, 1, false, true},
    {"dict", 0, -1, false, true},    {"list", 0, -1, false, true},
};

/* dict(...) takes either `key => value` pairs or one list of pairs; a
 * pair anywhere else is yaql's keyword argument, which nothing here takes. */
static int check_pairs(const cv__yaql_node_t *n, char *errstr, size_t errstr_size)
{
    bool dict = n->kind == N_CALL && strcmp(n->name, "dict") == 0;
    for (int i = 0; i < n->nargs; i++) {
        bool pair = n->args[i]->kind == N_PAIR;
        if (pair != (dict && (pair || n->nargs > 1))) {
            snprintf(errstr, errstr_size, "yaql expression not supported: %s in %s()",
                     pair ? "a keyword argument" : "an argument that is not key => value", n->name);
            return -1;
        }
    }
    return 0;
}

int cv__yaql_check_tree(const cv__yaql_node_t *n, char *errstr, size_t errstr_size)
{
    if (!n)
        return 0;
    if (n->kind == N_METHOD || n->kind == N_CALL) {
        size_t i = 0, nk = sizeof(known) / sizeof(known[0]);
        bool method = n->kind == N_METHOD;
        while (i < nk && !(strcmp(known[i].name, n->name) == 0 &&
                           (method ? known[i].method : known[i].function)))
            i++;
        /* len(x), min(a, b): a function takes the receiver as its first argument. */
        int nargs = n->nargs - (method ? 0 : (i < nk && known[i].method ? 1 : 0));
        if (i == nk || nargs < known[i].min_args ||
            (known[i].max_args >= 0 && nargs > known[i].max_args)) {
            snprintf(errstr, errstr_size,
                     "yaql expression not supported: %s %s() with %d argument%s",
                     method ? "method" : "function", n->name, n->nargs, n->nargs == 1 ? "" : "s");
            return -1;
        }
    }
    if ((n->kind == N_METHOD || n->kind == N_CALL) && check_pairs(n, errstr, errstr_size) != 0)
        return -1;
    int rc = cv__yaql_check_tree(n->recv, errstr, errstr_size);
    rc = rc ? rc : cv__yaql_check_tree(n->right, errstr, errstr_size);
    for (int i = 0; rc == 0 && i < n->nargs; i++)
        rc = cv__yaql_check_tree(n->args[i], errstr, errstr_size);
    return rc;
}
