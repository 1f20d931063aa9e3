/*
 * agent_env — the environment of a replica's task: the variables Converge
 * gives every replica (CONVERGE_INDEX, CONVERGE_NAME, CONVERGE_NODE,
 * CONVERGE_SERVICE, CONVERGE_STACK, CONVERGE_STACK_ID, CONVERGE_ROLE,
 * CONVERGE_RID, CONVERGE_TASK, CONVERGE_ADDRESS, CONVERGE_LOAD_FILE,
 * CONVERGE_PORT_<NAME>, CONVERGE_VOLUME_<NAME>; <NAME> upper-cased, other
 * characters as '_'),
 * the replica's `env` and the task's `env` with ${VAR} substituted
 * (agent_subst) from those same variables, and PATH, HOME, LANG, TMPDIR and
 * USER from the agent's own environment unless the spec sets them.
 * Converge's variables win over the spec's. Pure logic: no I/O.
 */
#ifndef AGENT_ENV_H
#define AGENT_ENV_H

#include "agent_spec.h"

#include <jansson.h>

/* Where a replica runs: what its CONVERGE_* variables say. */
typedef struct cv_env_where {
    const char *node, *address;
    const json_t *ports;   /* port name -> host port */
    const json_t *volumes; /* volume name -> directory */
    const char *load_file; /* where the replica may report its loads; NULL: none */
} cv_env_where_t;

/* The CONVERGE_* variables of task t (a new object: name -> string). */
json_t *cv_env_vars(const cv_rspec_t *s, const cv_rtask_t *t, const cv_env_where_t *w);

/* "text" with ${VAR} from vars, then the replica's and the task's env (as
 * written). A new string, or NULL when out of memory. */
char *cv_env_subst(const char *text, const cv_rspec_t *s, const cv_rtask_t *t, const json_t *vars);

/* The task's whole environment, NULL-terminated "K=V" strings (free with
 * cv_env_free); `inherit` is the agent's environment (environ). */
char **cv_env_build(const cv_rspec_t *s, const cv_rtask_t *t, const json_t *vars,
                    char *const *inherit);

/* The task's argv with ${VAR} substituted (free with cv_env_free). */
char **cv_env_argv(const char *const *argv, const cv_rspec_t *s, const cv_rtask_t *t,
                   const json_t *vars);

void cv_env_free(char **v);

/* "http-api" -> "HTTP_API". */
void cv_env_upper(char *buf, size_t size, const char *name);

#endif
