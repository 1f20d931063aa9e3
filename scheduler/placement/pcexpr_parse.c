/*
 * pcexpr_parse — the parser of placement-constraint expressions (cv_pcexpr.h).
 *
 * Grammar, by increasing precedence (a hand-written recursive descent):
 *
 *   expr       := and ( "||" and )*
 *   and        := unary ( "&&" unary )*
 *   unary      := "!" unary | primary
 *   primary    := "(" expr ")" | comparison
 *   comparison := NAME ( "==" | "!=" | ">" | ">=" | "<" | "<=" ) VALUE
 *
 * NAME is [A-Za-z_][A-Za-z0-9_.]*. VALUE is a quoted string ('..' or "..",
 * no escapes) or a bare word: an integer when it spells one (optional sign,
 * signed 64-bit), true / false in any case, otherwise a string. A property
 * alone is not a condition (Service Fabric's docs show none; "HasSSD" is
 * refused with a hint to write "HasSSD == true"), and since "!" has nothing
 * else to apply to, "!A == 1" negates the comparison. An empty expression
 * matches every node. Booleans only take == and != (refused at parse time).
 *
 * Errors are "column N: problem", N the 1-based byte column of the offending
 * token (an unclosed "(" is reported where it opens). And-chains and
 * or-chains are n-ary nodes, so a long chain costs no recursion depth;
 * nesting ("(" and "!") is bounded by MAX_DEPTH.
 */
#include "pcexpr_internal.h"

#include "cv_base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_DEPTH 64

static const char *const op_text[] = {"==", "!=", ">", ">=", "<", "<="};

/* ------------------------------------------------------------------------ */
/* Nodes                                                                    */
/* ------------------------------------------------------------------------ */

static cv_pcexpr_t *node_new(pc_kind_t kind)
{
    cv_pcexpr_t *e = calloc(1, sizeof(*e));
    if (e)
        e->kind = kind;
    return e;
}

/* Appends `kid` to `e`; on failure frees neither. */
static int node_add(cv_pcexpr_t *e, cv_pcexpr_t *kid)
{
    return cv_vec_push(&e->kids, kid);
}

/* ------------------------------------------------------------------------ */
/* Lexing helpers                                                           */
/* ------------------------------------------------------------------------ */

typedef struct parser {
    const char *text;
    size_t pos;
    int depth;
    char *errstr;
    size_t errstr_size;
} parser_t;

static bool is_name_start(char c)
{
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool is_name_char(char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9') || c == '.';
}

/* Characters of a bare-word value: names, numbers, and the punctuation that
 * node names, domains and versions carry ("fd:/dc1", "v1.2-rc"). */
static bool is_word_char(char c)
{
    return is_name_char(c) || c == '-' || c == '+' || c == ':' || c == '/';
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Whether `c` can begin or continue any token of the language. */
static bool is_known_char(char c)
{
    return is_word_char(c) || strchr("()!=<>&|'\"", c) != NULL;
}

static void skip_ws(parser_t *p)
{
    while (is_space(p->text[p->pos]))
        p->pos++;
}

static char cur(const parser_t *p)
{
    return p->text[p->pos];
}

static bool at(const parser_t *p, const char *tok)
{
    return strncmp(p->text + p->pos, tok, strlen(tok)) == 0;
}

/* Fails with "column N: <message>", N being the 1-based byte column of `pos`. */
static int fail_at(parser_t *p, size_t pos, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int fail_at(parser_t *p, size_t pos, int err, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    return cv_seterr(p->errstr, p->errstr_size, err, "column %zu: %s", pos + 1, msg);
}

/* Fails at the current position: a character outside the language is named
 * as such, anything else (including the end) gets "expected <what>". */
static int expected(parser_t *p, const char *what)
{
    unsigned char c = (unsigned char)cur(p);
    if (c && !is_known_char((char)c)) {
        if (c >= 0x20 && c < 0x7f)
            return fail_at(p, p->pos, CV_EPARSE, "unexpected character '%c'", c);
        return fail_at(p, p->pos, CV_EPARSE, "unexpected byte 0x%02x", c);
    }
    return fail_at(p, p->pos, CV_EPARSE, "expected %s", what);
}

/* ------------------------------------------------------------------------ */
/* Parser                                                                   */
/* ------------------------------------------------------------------------ */

static int parse_or(parser_t *p, cv_pcexpr_t **out);

static int lex_operator(parser_t *p, pc_op_t *op)
{
    /* Two-character operators first so ">=" is not read as ">". */
    static const pc_op_t order[] = {OP_EQ, OP_NE, OP_GE, OP_LE, OP_GT, OP_LT};
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
        if (at(p, op_text[order[i]])) {
            *op = order[i];
            p->pos += strlen(op_text[order[i]]);
            return 1;
        }
    }
    return 0;
}

/* Reads the right-hand value of a comparison into `e`. */
static int lex_value(parser_t *p, cv_pcexpr_t *e, size_t op_pos)
{
    skip_ws(p);
    size_t start = p->pos;
    char q = cur(p);
    if (q == '\'' || q == '"') {
        const char *end = strchr(p->text + start + 1, q);
        if (!end)
            return fail_at(p, start, CV_EPARSE, "unterminated string");
        size_t len = (size_t)(end - (p->text + start + 1));
        e->lit = LIT_STR;
        e->sval = strndup(p->text + start + 1, len);
        if (!e->sval)
            return cv_seterr(p->errstr, p->errstr_size, CV_ENOMEM, "out of memory");
        p->pos = start + len + 2;
        return 0;
    }
    while (is_word_char(cur(p)))
        p->pos++;
    if (p->pos == start) {
        char what[32];
        snprintf(what, sizeof(what), "a value after '%s'", op_text[e->op]);
        return expected(p, what);
    }
    char *word = strndup(p->text + start, p->pos - start);
    if (!word)
        return cv_seterr(p->errstr, p->errstr_size, CV_ENOMEM, "out of memory");
    int isint = cv__pcexpr_int64(word, &e->ival);
    if (isint < 0) {
        free(word);
        return fail_at(p, start, CV_EPARSE, "integer out of range");
    }
    if (isint) {
        e->lit = LIT_INT;
        free(word);
    } else if (strcasecmp(word, "true") == 0 || strcasecmp(word, "false") == 0) {
        e->lit = LIT_BOOL;
        e->bval = strcasecmp(word, "true") == 0;
        free(word);
        if (e->op != OP_EQ && e->op != OP_NE)
            return fail_at(p, op_pos, CV_EPARSE, "booleans compare only with == and !=");
    } else {
        e->lit = LIT_STR;
        e->sval = word;
    }
    return 0;
}

static int parse_comparison(parser_t *p, cv_pcexpr_t **out)
{
    skip_ws(p);
    size_t start = p->pos;
    if (!is_name_start(cur(p)))
        return expected(p, "a property name");
    while (is_name_char(cur(p)))
        p->pos++;
    cv_pcexpr_t *e = node_new(PC_CMP);
    if (!e || !(e->name = strndup(p->text + start, p->pos - start))) {
        cv_pcexpr_free(e);
        return cv_seterr(p->errstr, p->errstr_size, CV_ENOMEM, "out of memory");
    }
    skip_ws(p);
    size_t op_pos = p->pos;
    int rc;
    if (!lex_operator(p, &e->op)) {
        if (cur(p) == '=')
            rc = fail_at(p, op_pos, CV_EPARSE, "'=' is not an operator; write '=='");
        else if (!cur(p) || cur(p) == ')' || at(p, "&&") || at(p, "||"))
            rc = fail_at(p, op_pos, CV_EPARSE,
                         "expected a comparison operator after '%s' (a property alone is "
                         "not a condition; write %s == true)",
                         e->name, e->name);
        else {
            char what[128];
            snprintf(what, sizeof(what), "a comparison operator after '%.64s'", e->name);
            rc = expected(p, what);
        }
        cv_pcexpr_free(e);
        return rc;
    }
    if ((rc = lex_value(p, e, op_pos)) < 0) {
        cv_pcexpr_free(e);
        return rc;
    }
    *out = e;
    return 0;
}

/* Steps over the operator at the current position and parses its operand
 * one level deeper: the parser recurses there, so the depth is bounded. */
static int parse_nested(parser_t *p, int (*parse)(parser_t *p, cv_pcexpr_t **out),
                        cv_pcexpr_t **out)
{
    size_t op = p->pos++;
    if (++p->depth > MAX_DEPTH)
        return fail_at(p, op, CV_ETOOBIG, "expression nested deeper than %d", MAX_DEPTH);
    int rc = parse(p, out);
    if (rc >= 0)
        p->depth--;
    return rc;
}

static int parse_primary(parser_t *p, cv_pcexpr_t **out)
{
    skip_ws(p);
    if (cur(p) != '(')
        return parse_comparison(p, out);
    size_t open = p->pos;
    cv_pcexpr_t *inner = NULL;
    int rc = parse_nested(p, parse_or, &inner);
    if (rc < 0)
        return rc;
    skip_ws(p);
    if (cur(p) != ')') {
        if (!cur(p))
            rc = fail_at(p, open, CV_EPARSE, "unbalanced parenthesis");
        else
            rc = expected(p, "'&&', '||' or ')'");
        cv_pcexpr_free(inner);
        return rc;
    }
    p->pos++;
    *out = inner;
    return 0;
}

static int parse_unary(parser_t *p, cv_pcexpr_t **out)
{
    skip_ws(p);
    if (cur(p) != '!' || at(p, "!="))
        return parse_primary(p, out);
    cv_pcexpr_t *kid = NULL;
    int rc = parse_nested(p, parse_unary, &kid);
    if (rc < 0)
        return rc;
    cv_pcexpr_t *e = node_new(PC_NOT);
    if (!e || node_add(e, kid) < 0) {
        cv_pcexpr_free(e);
        cv_pcexpr_free(kid);
        return cv_seterr(p->errstr, p->errstr_size, CV_ENOMEM, "out of memory");
    }
    *out = e;
    return 0;
}

/* Parses `operand (tok operand)*` into one n-ary node of `kind` (or the lone
 * operand itself). */
static int parse_chain(parser_t *p, pc_kind_t kind, const char *tok,
                       int (*operand)(parser_t *, cv_pcexpr_t **), cv_pcexpr_t **out)
{
    cv_pcexpr_t *first = NULL;
    int rc = operand(p, &first);
    if (rc < 0)
        return rc;
    skip_ws(p);
    if (!at(p, tok)) {
        *out = first;
        return 0;
    }
    cv_pcexpr_t *e = node_new(kind);
    if (!e || node_add(e, first) < 0) {
        cv_pcexpr_free(e);
        cv_pcexpr_free(first);
        return cv_seterr(p->errstr, p->errstr_size, CV_ENOMEM, "out of memory");
    }
    while (skip_ws(p), at(p, tok)) {
        p->pos += strlen(tok);
        cv_pcexpr_t *next = NULL;
        if ((rc = operand(p, &next)) < 0) {
            cv_pcexpr_free(e);
            return rc;
        }
        if (node_add(e, next) < 0) {
            cv_pcexpr_free(next);
            cv_pcexpr_free(e);
            return cv_seterr(p->errstr, p->errstr_size, CV_ENOMEM, "out of memory");
        }
    }
    *out = e;
    return 0;
}

static int parse_and(parser_t *p, cv_pcexpr_t **out)
{
    return parse_chain(p, PC_AND, "&&", parse_unary, out);
}

static int parse_or(parser_t *p, cv_pcexpr_t **out)
{
    return parse_chain(p, PC_OR, "||", parse_and, out);
}

int cv_pcexpr_parse(const char *text, cv_pcexpr_t **out, char *errstr, size_t errstr_size)
{
    parser_t p = {.text = text, .errstr = errstr, .errstr_size = errstr_size};
    *out = NULL;
    skip_ws(&p);
    if (!cur(&p)) {
        if (!(*out = node_new(PC_TRUE)))
            return cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
        return 0;
    }
    cv_pcexpr_t *e = NULL;
    int rc = parse_or(&p, &e);
    if (rc < 0)
        return rc;
    skip_ws(&p);
    if (cur(&p)) {
        if (cur(&p) == ')')
            rc = fail_at(&p, p.pos, CV_EPARSE, "unbalanced parenthesis");
        else
            rc = expected(&p, "'&&' or '||'");
        cv_pcexpr_free(e);
        return rc;
    }
    *out = e;
    return 0;
}
