/*
 * cv_regex — the checks in front of regcomp(3) for patterns users write
 * (why: cv_regex.h).
 *
 * One pass over the pattern with a stack of groups. Each group keeps the
 * size of what it has finished and of its last piece (the one a following
 * repetition applies to), and whether they can match the empty string.
 * Sizes follow glibc's expansion: "x*" and "x?" are x plus one node, "x+"
 * is "xx*", "x{m}" m copies, "x{m,}" m+1 and "x{m,n}" n copies of x, each
 * with a node of its own; they saturate just past the limit, so nothing
 * overflows. A bracket expression is one node whatever its length.
 *
 * A repetition of a piece that can match the empty string ("(a*)+",
 * "(a|b?){3}", "a**") is refused: glibc turns it into a loop of empty
 * transitions, and computing their closures takes time exponential in the
 * pattern ("((d*|e*){10})+" takes seconds, "((d*)+)+..." never ends).
 * Without such loops its cost stays polynomial in the size bounded here.
 *
 * Anything this reading does not take as syntax is a literal: regcomp has
 * the last word on validity.
 */
#include "cv_regex.h"

#include "cv_error.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAP ((size_t)CV_REGEX_MAX_NODES + 1)

static size_t add(size_t a, size_t b)
{
    return a + b > CAP ? CAP : a + b;
}

static size_t mul(size_t a, size_t b)
{
    return b && a > CAP / b ? CAP : add(a * b, 0);
}

/* The ']' closing the bracket expression that opens at p, or NULL. A ']'
 * right after "[" or "[^" is a member, as are "[:class:]", "[=c=]" and
 * "[.c.]" whatever they hold. */
static const char *bracket_end(const char *p)
{
    p += 1 + (p[1] == '^');
    if (*p == ']')
        p++;
    while (*p && *p != ']') {
        if (p[0] == '[' && (p[1] == ':' || p[1] == '=' || p[1] == '.')) {
            const char *close = p + 2;
            while (*close && !(close[0] == p[1] && close[1] == ']'))
                close++;
            if (!*close)
                return NULL;
            p = close + 2;
        } else {
            p++;
        }
    }
    return *p ? p : NULL;
}

/* An interval "{m}", "{m,}", "{,n}" or "{m,n}" at p. */
typedef struct interval {
    size_t min, copies; /* copies: how many of its operand glibc makes */
    const char *end;    /* the closing brace */
} interval_t;

static size_t digits(const char **p, bool *any)
{
    size_t n = 0;
    for (*any = false; **p >= '0' && **p <= '9'; (*p)++, *any = true)
        n = n < CAP ? n * 10 + (size_t)(**p - '0') : CAP;
    return n;
}

static bool read_interval(const char *p, interval_t *iv)
{
    bool has_min, has_max = false, comma;
    size_t max = 0;
    p++;
    iv->min = digits(&p, &has_min);
    comma = *p == ',';
    if (comma) {
        p++;
        max = digits(&p, &has_max);
    }
    if (*p != '}' || (!has_min && !has_max))
        return false;
    iv->copies = has_max ? max : comma ? iv->min + 1 : iv->min;
    iv->end = p;
    return true;
}

typedef struct group {
    size_t done;     /* finished pieces and alternatives */
    size_t last;     /* the last piece: what a repetition repeats; 0 when none */
    bool any_empty;  /* a finished alternative can match the empty string */
    bool alt_empty;  /* so can the alternative being read, so far */
    bool last_empty; /* and the last piece */
} group_t;

static const group_t empty_group = {0, 0, false, true, false};

/* The last piece joins the alternative being read. */
static void settle(group_t *g)
{
    if (g->last)
        g->alt_empty = g->alt_empty && g->last_empty;
    g->done = add(g->done, g->last);
    g->last = 0;
}

static void start_piece(group_t *g, size_t size, bool empty)
{
    settle(g);
    g->last = size;
    g->last_empty = empty;
}

/* Applies the repetition at *p to g->last: 1 when done, 0 when *p is no
 * repetition here (a literal, or regcomp's error), or an error. */
static int repeat(group_t *g, const char **p, char *errstr, size_t errstr_size)
{
    interval_t iv = {0, 1, *p};
    if (!g->last || !strchr("*?+{", **p) || (**p == '{' && !read_interval(*p, &iv)))
        return 0;
    if (g->last_empty)
        return cv_seterr(errstr, errstr_size, CV_EPARSE,
                         "a repetition of something that can match the empty string (such "
                         "as \"(a*)+\" or \"(a|b?){3}\") is not supported");
    if (**p == '+')
        g->last = add(mul(g->last, 2), 1);
    else
        g->last = mul(add(g->last, 1), iv.copies ? iv.copies : 1);
    g->last_empty = **p == '*' || **p == '?' || (**p == '{' && iv.min == 0);
    *p = iv.end;
    return 1;
}

/* Zero-width escapes (GNU): word boundaries and buffer ends. */
static bool zero_width_escape(char c)
{
    return c && strchr("bB<>`'", c) != NULL;
}

static int check(const char *p, char *errstr, size_t errstr_size)
{
    group_t stack[CV_REGEX_MAX_DEPTH + 1] = {empty_group};
    int depth = 0;
    for (; *p; p++) {
        group_t *g = &stack[depth];
        int rc = repeat(g, &p, errstr, errstr_size);
        if (rc < 0)
            return rc;
        if (rc > 0)
            continue;
        if (*p == '\\' && p[1] >= '1' && p[1] <= '9')
            return cv_seterr(errstr, errstr_size, CV_EPARSE,
                             "back-references (\\%c) are not supported", p[1]);
        if (*p == '\\') {
            start_piece(g, 1, zero_width_escape(p[1]));
            p += p[1] != '\0';
        } else if (*p == '[') {
            const char *end = bracket_end(p);
            start_piece(g, 1, false);
            p = end ? end : p + strlen(p) - 1; /* unclosed: regcomp refuses it */
        } else if (*p == '(') {
            if (depth == CV_REGEX_MAX_DEPTH)
                return cv_seterr(errstr, errstr_size, CV_ETOOBIG, "groups nested deeper than %d",
                                 CV_REGEX_MAX_DEPTH);
            settle(g);
            stack[++depth] = empty_group;
        } else if (*p == ')' && depth > 0) {
            settle(g);
            size_t size = add(g->done, 1);
            bool empty = g->any_empty || g->alt_empty;
            start_piece(&stack[--depth], size, empty);
        } else if (*p == '|') {
            settle(g);
            g->done = add(g->done, 1);
            g->any_empty = g->any_empty || g->alt_empty;
            g->alt_empty = true;
        } else {
            start_piece(g, 1, *p == '^' || *p == '$');
        }
    }
    size_t total = 0;
    for (int i = 0; i <= depth; i++)
        total = add(total, add(stack[i].done, stack[i].last));
    if (total > CV_REGEX_MAX_NODES)
        return cv_seterr(errstr, errstr_size, CV_ETOOBIG,
                         "too complex: its repetitions expand to more than %d elements",
                         CV_REGEX_MAX_NODES);
    return 0;
}

int cv_regex_compile(regex_t *re, const char *pattern, int cflags, char *errstr, size_t errstr_size)
{
    int rc = check(pattern, errstr, errstr_size);
    if (rc != 0)
        return rc;
    rc = regcomp(re, pattern, cflags);
    if (rc != 0) {
        char why[256];
        regerror(rc, re, why, sizeof(why));
        return cv_seterr(errstr, errstr_size, CV_EPARSE, "%s", why);
    }
    return 0;
}
