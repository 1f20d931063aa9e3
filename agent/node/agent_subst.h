/*
 * agent_subst — ${VAR} substitution in a replica's command, environment and
 * working directory (the ${...} variables of BCS's Mesos scheduling document).
 *
 * ${NAME} is replaced by the value `lookup` gives for NAME; a name it does
 * not know is left as written (so a shell command's own ${HOME} reaches the
 * shell), and so is a "${" without its "}". "$${" writes a literal "${".
 * Values are not substituted again. Pure logic: no I/O.
 */
#ifndef AGENT_SUBST_H
#define AGENT_SUBST_H

/* The value of variable `name` (NUL-terminated), or NULL when unknown. */
typedef const char *(*cv_subst_lookup)(void *ud, const char *name);

/* A new string (free it), or NULL when out of memory. */
char *cv_subst(const char *text, cv_subst_lookup lookup, void *ud);

#endif
