/*
 * cv_template — the Heat Orchestration Template (HOT) language.
 *
 * Owns: loading YAML/JSON text into a jansson tree (with line numbers in
 * syntax errors), the HOT sections (heat_template_version, description,
 * parameters, conditions, resources, outputs), parameter typing and
 * constraints, conditions and the functions decided when the template is
 * parsed with its parameters (if, get_file), the intrinsic functions
 * resolved at run time (get_param, get_resource, get_attr, str_replace,
 * list_join, ..., filter, contains, yaql), dependency extraction and
 * whole-template validation against the resource-type registry
 * (cv_rtype.h) and the dependency graph (cv_graph.h).
 *
 * Pure logic: no I/O besides what the caller hands in as text.
 * Every error message names where it is ("resources.web.properties.length")
 * and the rule that was broken.
 */
#ifndef CV_TEMPLATE_H
#define CV_TEMPLATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct cv_tpl_resource {
    char *name;
    /* The type that implements the resource: the environment's
     * resource_registry applied (a built-in type or a template file). It
     * drives behaviour; declared_type is what the template wrote, what Heat
     * reports (its Resource.type()) in resource lists, shows and events. */
    char *type;
    char *declared_type;
    json_t *properties;    /* as written: intrinsics unresolved; {} when absent */
    json_t *metadata;      /* {} when absent */
    char *deletion_policy; /* "Delete" (default), "Retain" or "Snapshot" */
    json_t *external_id;   /* adopted physical resource: a string or an intrinsic; NULL none */
    json_t *update_policy; /* as written: intrinsics unresolved; {} when absent */
    char **depends;        /* depends_on ∪ get_resource/get_attr targets; sorted, unique */
    size_t ndepends;
} cv_tpl_resource_t;

/* The template as it runs with its parameter values: a resource whose
 * condition is false is not among `resources`, an output whose condition
 * is false has the value null, every `if` took its branch and every
 * get_file is the file's text. */
typedef struct cv_template {
    char *version;                /* canonical dated version, e.g. "2018-08-31" */
    char *description;            /* "" when absent */
    json_t *parameters;           /* name -> resolved, typed value (defaults applied) */
    json_t *hidden;               /* array of the names of hidden parameters */
    cv_tpl_resource_t *resources; /* in template order */
    size_t nresources;
    json_t *outputs; /* name -> {"value": expr, "description": str} */
} cv_template_t;

/* Whether the parameter declaration `decl` says hidden, read as Heat reads
 * the boolean (oslo's bool_from_string: true, "yes", 1, "on", ...). */
bool cv_template_param_hidden(const json_t *decl);

/*
 * Parses YAML (JSON is YAML) into a new jansson tree. Plain scalars are typed
 * as YAML 1.1 core would (null, true/false/yes/no/on/off, integers, floats),
 * everything else, including dates such as 2018-08-31, is a string. On error
 * returns NULL and writes "FNAME:LINE:COL: problem" into errstr.
 */
json_t *cv_yaml_load(const char *text, size_t len, const char *fname, char *errstr,
                     size_t errstr_size);

/*
 * Reads a Heat environment file. Its `parameters:` are merged into `params`
 * (overriding values already there). Its `parameter_defaults:` go into
 * `defaults` when it is not NULL — as in Heat they apply only to parameters
 * a template declares, which only the caller can tell (cv_env_apply_defaults)
 * — and otherwise into `params` for names not there yet.
 * Returns 0 or CV_EPARSE/CV_EVALIDATE.
 */
int cv_env_load(const char *text, size_t len, const char *fname, json_t *params, json_t *defaults,
                char *errstr, size_t errstr_size);

/* Adds to `params` each of `defaults` that the template tree `tpl` declares
 * in its parameters section and that `params` does not have yet. */
void cv_env_apply_defaults(json_t *params, const json_t *defaults, const json_t *tpl);

/* The key of a stored environment that lists the names of the parameters a
 * user gave (files' `parameters:` and command-line values), as opposed to
 * those parameter_defaults or the template's defaults filled: Heat keeps
 * them apart (env.params vs env.param_defaults), and a PATCH update keeps
 * only the former, so that new parameter_defaults reach the rest. Not part
 * of what a nested stack inherits (cv_env_child). */
#define CV_ENV_GIVEN "given_parameters"

/*
 * Parses and validates a template. `param_values` (may be NULL) maps
 * parameter names to user-given values (strings from the command line, or
 * typed JSON values from an environment file); each is converted to the
 * declared type and checked against the constraints. Returns 0 and a new
 * template in *out, or a negative CV_E* code with the first problem in errstr.
 */
int cv_template_parse(const char *text, size_t len, const char *fname, const json_t *param_values,
                      cv_template_t **out, char *errstr, size_t errstr_size);

/* Same, from an already loaded tree (what the engine stores is JSON). */
int cv_template_from_json(const json_t *root, const char *fname, const json_t *param_values,
                          cv_template_t **out, char *errstr, size_t errstr_size);

/* How deep template resources and groups may nest by default (Heat's
 * max_nested_stack_depth). */
#define CV_TEMPLATE_MAX_DEPTH 5

/*
 * The templates a nested template is inside of, innermost first: a
 * template that appears again among them includes itself, which would
 * recurse without end. A template file is known by its name, an inline
 * template (OS::Heat::Stack's `template`) by its tree.
 */
typedef struct cv_tpl_chain {
    const char *file;   /* the template file's name; NULL: an inline template */
    const char *label;  /* how messages name it: the file, or the resource holding it */
    const json_t *tree; /* the template */
    const struct cv_tpl_chain *up;
} cv_tpl_chain_t;

/* What a stack brings besides its template. */
typedef struct cv_tpl_opts {
    /* Template files of template resources (type "db.yaml"): name -> tree.
     * A type naming a file not in it is an error. NULL: none. */
    const json_t *files;
    int depth;     /* nesting depth of this template: 0 for a stack's own */
    int max_depth; /* 0: CV_TEMPLATE_MAX_DEPTH */
    /* A nested template checked before its parent's properties resolve:
     * parameters without a value and without a default are not an error. */
    int params_later;
    /* The stack's merged environment (cv_env.h): its resource_registry maps
     * resource types, its parameter_defaults count as defaults of nested
     * templates' parameters. NULL: none. */
    const json_t *env;
    /* The templates this one is nested in (NULL: none known): a template
     * resource naming one of them is refused as a recursion. */
    const cv_tpl_chain_t *chain;
    /* Do not evaluate property values with the parameters (template_fold.c):
     * for a traversal that only removes what a stored definition made (a
     * delete), which must be possible whatever that definition holds, even
     * a call that validation refuses now but a lax client, or an older
     * Converge, let through. Every other check applies. */
    int no_eval;
} cv_tpl_opts_t;

/* cv_template_from_json with files and nesting: every template resource and
 * group member is checked against its template (properties against its
 * parameters, get_attr against its outputs), recursively up to max_depth. */
int cv_template_from_json_opts(const json_t *root, const char *fname, const json_t *param_values,
                               const cv_tpl_opts_t *opts, cv_template_t **out, char *errstr,
                               size_t errstr_size);

void cv_template_free(cv_template_t *tpl);

/*
 * What a stack expands into, counted from its parsed template before
 * anything is expanded, so that a group of 10^9 members costs no more to
 * refuse than one of 10.
 *
 * `resources` is the stack's own: its resources and the members its groups
 * (count), autoscaling groups (max_size, the most they may grow to) and
 * resource chains (the length of `resources`, a repeat's included) expand
 * into. `total` is one traversal's: those and, recursively, every resource
 * of the nested stacks below (template resources, OS::Heat::Stack, the
 * members' own stacks). What only a resource's attribute can tell (a count
 * from get_attr) is not known yet and counts 0 here: the engine counts it
 * again when that resource is created (cv_template_count_nested).
 */
typedef struct cv_tpl_count {
    size_t resources;
    size_t total;
} cv_tpl_count_t;

struct cv_limits; /* cv_limits.h: the bounds a count is held to */

/*
 * Counts `tpl` (parsed from the tree `root` with `opts`, which gives its
 * files, environment, depth and the templates it is nested in), stopping
 * as soon as a count passes its limit (resources, traversal_resources):
 * CV_ETOOBIG then, with errstr naming
 * the resource, the count so far and the limit, e.g. "app.yaml:
 * resources.big: number of resources 1000000001 exceeds the limit of
 * 100000 (CONVERGE_MAX_RESOURCES, or the workers' --max-resources)". A nested stack deeper
 * than limits->nesting_depth is CV_ETOOBIG too, and a template that includes itself
 * (through OS::Heat::Stack or template resources) CV_EVALIDATE naming the
 * cycle. 0 and *out otherwise. Pure: parses the nested templates it counts.
 */
int cv_template_count(const cv_template_t *tpl, const json_t *root, const char *fname,
                      const cv_tpl_opts_t *opts, const struct cv_limits *limits,
                      cv_tpl_count_t *out, char *errstr, size_t errstr_size);

/*
 * The same for one nested resource about to be created or updated with
 * its resolved properties `props`: what its child stack will hold, before
 * the child's template is built. For the engine's check of a group whose
 * count was not known when its stack was counted. `opts->depth` is the
 * depth of the stack holding the resource.
 */
int cv_template_count_nested(const char *type, const json_t *props, const char *where,
                             const cv_tpl_opts_t *opts, const struct cv_limits *limits,
                             cv_tpl_count_t *out, char *errstr, size_t errstr_size);

/*
 * cv_limits_check worded for whoever reads it, convergectl's user first:
 * the limit is named by the setting that changes it, "... exceeds the
 * limit of 100000 (CONVERGE_MAX_RESOURCES, or the workers'
 * --max-resources)", not by an option convergectl does not have.
 */
int cv_template_limit_check(const struct cv_limits *l, int which, size_t value, const char *where,
                            char *errstr, size_t errstr_size);

/* Returns the resource named `name`, or NULL. */
const cv_tpl_resource_t *cv_template_resource(const cv_template_t *tpl, const char *name);

/*
 * What resolution may look up. `resource` returns 0 and the physical id and
 * attributes (an object, possibly empty) of a resource that get_resource or
 * get_attr names, or CV_ENOENT when it is not known.
 */
typedef struct cv_resolve_ctx {
    const json_t *parameters;
    int (*resource)(void *ud, const char *name, const char **physical_id,
                    const json_t **attributes);
    void *ud;
} cv_resolve_ctx_t;

/*
 * Evaluates every intrinsic function inside `expr`; returns a new reference,
 * or NULL with errstr naming `where` and the problem. get_attr of an
 * attribute the resource does not have yields JSON null, as in Heat. One
 * resolution copies and builds at most 16 MiB (values of get_param and
 * get_attr, strings of str_replace and list_join) and fails past that:
 * repeated calls would otherwise turn a few hundred bytes into gigabytes.
 */
json_t *cv_intrinsic_resolve(const json_t *expr, const cv_resolve_ctx_t *ctx, const char *where,
                             char *errstr, size_t errstr_size);

/*
 * Appends to the array `out` the names of the resources that `expr`
 * references through get_resource / get_attr (possibly with duplicates).
 */
void cv_intrinsic_references(const json_t *expr, json_t *out);

#endif
