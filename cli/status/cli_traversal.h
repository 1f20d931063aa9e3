/*
 * cli_traversal — changing a stack that exists: reading its stored
 * definition (the `def` hash), starting a traversal (the stack_begin script)
 * and handing it to the workers (one STACK job). The shared path of update,
 * rollback, cancel and converge.
 *
 * The traversal is started only after every check passed and Kafka
 * answered; if the job cannot be published afterwards the stack is left
 * *_IN_PROGRESS with no worker told, and the message says so and how to
 * recover (run the command again: a newer traversal supersedes it).
 */
#ifndef CLI_TRAVERSAL_H
#define CLI_TRAVERSAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cli_common.h"
#include "cv_contract.h"

typedef struct cli_def {
    char *template_text; /* as stored: the template as JSON */
    char *params_text;   /* as stored: resolved parameter values as JSON */
    char *fname;         /* the template's file name */
    json_t *tree;        /* template_text parsed */
    json_t *params;      /* params_text parsed: an object */
    json_t *files;       /* stored template files: an object ({} when none) */
    json_t *env;         /* stored environment: an object ({} when none) */
    bool masked;         /* sealed parameters this client has no key for: shown as ****** */
} cli_def_t;

/* Reads the definition of stack `name` (id `id`): CLI_OK, or CLI_SERVICE
 * (reported) when it is missing or not JSON. Parameters sealed with a key
 * this client lacks (cv_seal.h) are "******", `masked` set (cli_sealed_warn
 * said why): a reader shows them so; a writer must refuse. Free with cli_def_free, read
 * or not. */
int cli_def_read(cli_t *cli, const char *name, const char *id, cli_def_t *d);
void cli_def_free(cli_def_t *d);

/* The resources of the stored template that run with the stored parameters
 * and environment, as name -> {"type", "declared_type"} in template order
 * (`type` the one that implements it, the environment's registry applied;
 * `declared_type` the one the template wrote, cli_reported_type): a resource whose
 * condition is false is not one of them, as in Heat. The `resources`
 * section as written when the stored template no longer parses (it may
 * then be no map); an empty object when it has none. A new reference. */
json_t *cli_def_resources(const cli_def_t *d);

/* Whether `resource` is one of cli_def_resources(d): a resource that its
 * condition leaves out is no resource of the stack, as any unknown name. */
bool cli_def_has_resource(const cli_def_t *d, const char *resource);

typedef struct cli_begin {
    const char *retry; /* the command that recovers when the job cannot be published */
    const char *name;  /* the stack */
    const char *id;
    cv_trav_kind_t kind;
    const char *template_json; /* UPDATE: the definition to store; "" otherwise */
    const char *params_json;
    const char *files_json; /* UPDATE: template files to store; "" or NULL keeps them */
    const char *env_json;   /* UPDATE: the environment to store; "" or NULL keeps it */
    const char *fname;
    const char *rollback; /* "1", "0", or "" to keep the stack's setting */
    const char *drift;    /* converge drift of its services: "1", "0", or "" to keep */
    const char *upgrade;  /* UPDATE by upgrade domain: "1", "0", or "" to keep */
    bool cancel;          /* the ROLLBACK of `convergectl cancel` */
    uint64_t *started;    /* when not NULL: gets the traversal begun */
} cli_begin_t;

/* Runs the stack_begin script for b (its arguments built by
 * cv_script_stack_begin_args, as the workers' are; the client is
 * "convergectl"): the reply as it came (NULL: the connection was lost), so
 * that the caller can tell the errors it expects (ENOENT, EEXIST) before
 * cli_begin_traversal. */
redisReply *cli_begin_script(cli_t *cli, const cv_stack_begin_t *b);

/* The traversal a stack_begin reply started, in *traversal; frees `r`.
 * CLI_OK, or CLI_SERVICE (reported) when r is not {traversal}. */
int cli_begin_traversal(cli_t *cli, redisReply *r, uint64_t *traversal);

/* Connects to Kafka (unless connected), runs stack_begin, publishes the
 * STACK job and prints "stack NAME (ID) KIND_IN_PROGRESS". CLI_OK,
 * CLI_USAGE (the stack has no status record) or CLI_SERVICE; every
 * failure is reported, saying whether anything was stored. */
int cli_traversal_start(cli_t *cli, const cli_begin_t *b);

#endif
