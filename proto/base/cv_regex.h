/*
 * cv_regex — regular expressions written by users, compiled only when the C
 * library can be trusted with them.
 *
 * Owns the check in front of regcomp(3) for the patterns users write: Mesos
 * LIKE / UNLIKE constraints (cv_mesos.h) and HOT allowed_pattern
 * (cv_template.h). glibc expands every bounded repetition and every "+" by
 * copying what is repeated, and its compile time and memory then grow with
 * the square of the copies: 40 bytes ("a" and 30 "+", or "((a?){100}){40}")
 * ask for gigabytes and seconds; a repetition of something that can match
 * the empty string ("((d*|e*){10})+") makes it compute closures of empty
 * loops for a time exponential in the pattern. Back-references, which
 * POSIX extended expressions do not have but glibc accepts, make regexec(3)
 * backtrack without bound or overflow the stack on values of a few dozen
 * bytes. So a pattern is refused when its size once expanded (counted the
 * way glibc expands it) exceeds CV_REGEX_MAX_NODES, when its groups nest
 * deeper than CV_REGEX_MAX_DEPTH, when it repeats what can match the empty
 * string, or when it holds a back-reference. Pure logic.
 */
#ifndef CV_REGEX_H
#define CV_REGEX_H

#include <regex.h>
#include <stddef.h>

#define CV_REGEX_MAX_NODES 3000
#define CV_REGEX_MAX_DEPTH 32

/*
 * Compiles `pattern` with regcomp(re, pattern, cflags) once it passes the
 * checks above; `cflags` includes REG_EXTENDED (the checks read extended
 * syntax). Returns 0 (then regfree(re) is the caller's), CV_ETOOBIG
 * for a pattern too large or too deeply nested, or CV_EPARSE for a
 * back-reference, a repetition of what can match the empty string, or a
 * pattern regcomp refuses (errstr is then regerror's text); the reason is
 * in errstr, and `re` needs no regfree after an error.
 */
int cv_regex_compile(regex_t *re, const char *pattern, int cflags, char *errstr,
                     size_t errstr_size);

#endif
