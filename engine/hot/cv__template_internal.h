/*
 * cv__template_internal — what the files of engine/hot share and
 * nothing else sees: the parse context every validation step reports
 * through, the location path ("resources.web.properties.length") that
 * names where a problem is, the intrinsic-function table, and the
 * Python-compatible formatting of scalars that Heat templates rely on.
 */
#ifndef CV__TEMPLATE_INTERNAL_H
#define CV__TEMPLATE_INTERNAL_H

#include "cv_base.h"
#include "cv_template.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* ---------------------------------------------------------------- locations */

/* A dotted location inside a document. Long keys are cut rather than
 * failing: the path only ever feeds error messages. */
typedef struct cv__path {
    char buf[1024];
    size_t len;
} cv__path_t;

void cv__path_init(cv__path_t *p, const char *start);
/* Append ".key" (or "key" on an empty path) / "[index]"; return the length
 * before, to hand back to cv__path_pop. */
size_t cv__path_key(cv__path_t *p, const char *key);
size_t cv__path_index(cv__path_t *p, size_t index);
void cv__path_pop(cv__path_t *p, size_t len);

/* ---------------------------------------------------------------- parse context */

/* Versions compare as yyyymmdd integers: features arrive in dated releases. */
enum {
    CV__V20130523 = 20130523,
    CV__V20141016 = 20141016,
    CV__V20150430 = 20150430,
    CV__V20151015 = 20151015,
    CV__V20160408 = 20160408,
    CV__V20161014 = 20161014,
    CV__V20170224 = 20170224,
    CV__V20170901 = 20170901,
    CV__V20180302 = 20180302,
    CV__V20180831 = 20180831,
    CV__V20210416 = 20210416,
};

typedef struct cv__tpl_ctx {
    const char *fname;
    long version;             /* yyyymmdd */
    const json_t *param_defs; /* the parameters section; {} when absent */
    const json_t *resources;  /* the resources that run (conditions applied); {} when none */
    cv_tpl_opts_t opts;       /* files and nesting depth */
    char *errstr;
    size_t errstr_size;
} cv__tpl_ctx_t;

/* Writes "<fname>: <where>: <message>" and returns `err`. */
int cv__tpl_err(const cv__tpl_ctx_t *ctx, int err, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Every problem of checks that do not depend on each other, reported as
 * one message (template_errors.c). Each check reports into ctx->errstr as
 * usual; cv__errs_take keeps what it wrote. */
typedef struct cv__errs {
    const cv__tpl_ctx_t *ctx;
    CV_VEC(char *) msgs; /* the messages so far */
    int first;           /* the first problem's code */
    int fatal;           /* CV_ENOMEM: stop at once */
} cv__errs_t;

void cv__errs_init(cv__errs_t *e, const cv__tpl_ctx_t *ctx);
/* Takes the outcome of one check: 0 to go on with the next (its problem,
 * if any, kept), or CV_ENOMEM to stop. */
int cv__errs_take(cv__errs_t *e, int rc);
/* 0 when no check failed; else the first problem's code, with every
 * message kept (as many as fit, then how many more) in ctx->errstr. */
int cv__errs_end(cv__errs_t *e);

/*
 * The property values `v` of a resource as far as they are known before
 * anything runs (template_fold.c): every call that reads only parameters
 * with values and literals replaced by its value, evaluated as the engine
 * evaluates it; calls reading resources or values not known yet kept,
 * their arguments folded. NULL with *rc and the problem (naming the place
 * under `where`) in ctx->errstr when an evaluation fails.
 */
json_t *cv__tpl_fold(const cv__tpl_ctx_t *ctx, const cv_template_t *tpl, const json_t *v,
                     const char *where, int *rc);

/* Parameters section: fills tpl->parameters (typed values) and tpl->hidden. */
int cv__tpl_params(const cv__tpl_ctx_t *ctx, const json_t *values, cv_template_t *tpl);

/* Checks one parameter value (already converted) against the constraints of
 * the declaration `def` at `param_path`; `where` names the value in errors
 * and `hidden` keeps it out of them. */
int cv__param_constraints(const cv__tpl_ctx_t *ctx, const char *param_path, const char *where,
                          const char *type, const json_t *def, const json_t *value, bool hidden);

/* Heat's conversions of parameter values, each a new reference or NULL when
 * `v` cannot be read as that type. */
json_t *cv__param_to_number(const json_t *v);
json_t *cv__param_to_string(const json_t *v);
json_t *cv__param_to_boolean(const json_t *v);

/* A parameter value for an error message: "******" when hidden. */
void cv__param_shown(const json_t *v, bool hidden, char *out, size_t size);

/* The conditions of a template being parsed (template_conditions.c). */
typedef struct cv__conds {
    const cv__tpl_ctx_t *ctx;
    const cv_template_t *tpl; /* its parameters are what conditions read */
    const json_t *defs;       /* the conditions section; {} when absent */
    json_t *values;           /* name -> true / false, or null while being evaluated */
    json_t *empty;
} cv__conds_t;

/* Checks the conditions section of `root` and evaluates every condition
 * with tpl->parameters; clear `c` afterwards, whatever it returns. */
int cv__conds_init(cv__conds_t *c, const cv__tpl_ctx_t *ctx, const json_t *root,
                   const cv_template_t *tpl);
void cv__conds_clear(cv__conds_t *c);

/* A `condition:` of a resource or output, or the first argument of `if`:
 * a name, a boolean or a condition expression, evaluated into *out. */
int cv__cond_value(cv__conds_t *c, const json_t *cond, const char *where, bool *out);

/*
 * The template as it runs (template_running.c): evaluates the conditions
 * section with tpl->parameters and returns, as new trees, the resources
 * section without the resources whose condition is false and the outputs
 * section with the value of those whose condition is false set to null;
 * in them every `if` replaced by the branch it takes, every get_file by the
 * file's text, and `condition` keys removed.
 */
int cv__tpl_conditions(const cv__tpl_ctx_t *ctx, const json_t *root, const cv_template_t *tpl,
                       json_t **resources, json_t **outputs);

/* Resources section: fills tpl->resources. Each resource's problem goes
 * into `errs`; returns CV_ENOMEM, else 0. */
int cv__tpl_resources(const cv__tpl_ctx_t *ctx, cv_template_t *tpl, cv__errs_t *errs);

/* Sets res->depends: `depends_on` (a name, a list of names or NULL) and the
 * targets of get_resource / get_attr in res->properties and res->metadata,
 * sorted and unique. */
int cv__tpl_depends(cv_tpl_resource_t *res, const json_t *depends_on);

/* Checks the properties `props` (as written) of a resource of type
 * `type` at `where`: the schema of a registered type, the parameters of a
 * template file, a group's member definition; nested templates recursively. */
int cv__tpl_check_props(const cv__tpl_ctx_t *ctx, const char *type, const json_t *props,
                        const char *where);

/* The type that implements resource `resource` (NULL: a group member) of
 * type `type` under the stack's environment (env_registry.c): `type` itself
 * when no registry maps it; otherwise written into buf. */
const char *cv__tpl_mapped_type(const cv__tpl_ctx_t *ctx, const char *type, const char *resource,
                                char *buf, size_t size);

/* The environment (a new object) under which the nested template of
 * resource `resource`, declared with type `declared`, is checked: Heat's
 * child environment (cv_env_child), so that a mapping that wraps the type
 * it maps does not apply again inside. NULL: the stack has no environment,
 * or the resource is not a nested stack. */
json_t *cv__tpl_child_env(const cv__tpl_ctx_t *ctx, const char *resource, const char *declared,
                          const char *type);

/* The template among `chain` (innermost first) that is the template file
 * `file` or has the tree `tree` (either may be NULL), or NULL: finding one
 * means a template includes itself (template_limits.c). */
const cv_tpl_chain_t *cv__tpl_chain_find(const cv_tpl_chain_t *chain, const char *file,
                                         const json_t *tree);

/* Writes "<where>: recursion: template a includes itself (a -> b -> <label>)..."
 * naming the cycle from `found` down `chain` to `label` (the template that
 * is `found` again); returns CV_ECYCLE. */
int cv__tpl_chain_cycle(const cv_tpl_chain_t *chain, const cv_tpl_chain_t *found, const char *label,
                        const char *where, char *errstr, size_t errstr_size);

/* Whether `type` (registered or a template file) is known to this stack. */
bool cv__tpl_type_known(const cv__tpl_ctx_t *ctx, const char *type);

/* Whether a resource of type `type` declared as `def` (its definition) has
 * the attribute `attr`: true when it cannot be known before running. */
bool cv__tpl_has_attr(const cv__tpl_ctx_t *ctx, const char *type, const json_t *def,
                      const char *attr);

/* Heat validates a group's nested stack with the outputs the parent's
 * get_attr calls need (validate_nested_stack), so a member attribute that a
 * path into a ResourceGroup or AutoScalingGroup names must be one its
 * members have, when the group starts with members. For get_attr `args` of
 * a resource of `type` declared as `def`: 0, or CV_EVALIDATE with Heat's
 * message ("The Referenced Attribute (0 bad) is incorrect.") in `errstr`. */
int cv__tpl_group_path_check(const cv__tpl_ctx_t *ctx, const char *type, const json_t *def,
                             const json_t *args, char *errstr, size_t errstr_size);

/* Fails with the cycle named when the resources' dependencies loop. */
int cv__tpl_check_cycles(const cv__tpl_ctx_t *ctx, const cv_template_t *tpl);

/* Whether `name` is one of Heat's pseudo parameters (OS::stack_name...). */
bool cv__tpl_param_pseudo(const char *name);

/* Whether `name` is a parameter that get_param may name: declared in the
 * template, or one of Heat's pseudo parameters (OS::stack_name...). */
bool cv__tpl_param_known(const cv__tpl_ctx_t *ctx, const char *name);

/*
 * Checks every intrinsic-function call inside `v` (properties, metadata or
 * an output value) for well-formed arguments and references to declared
 * parameters and existing resources. `self` is the resource being checked
 * (it may not refer to itself) or NULL for outputs.
 */
int cv__tpl_check_intrinsics(const cv__tpl_ctx_t *ctx, const json_t *v, cv__path_t *path,
                             const char *self);

/* ---------------------------------------------------------------- functions */

typedef enum {
    CV__FN_NONE = 0, /* plain data */
    CV__FN_GET_PARAM,
    CV__FN_GET_RESOURCE,
    CV__FN_GET_ATTR,
    CV__FN_STR_REPLACE,
    CV__FN_LIST_JOIN,
    CV__FN_STR_SPLIT,
    CV__FN_LIST_CONCAT,
    CV__FN_LIST_CONCAT_UNIQUE,
    CV__FN_MAP_MERGE,
    CV__FN_MAP_REPLACE,
    CV__FN_STR_REPLACE_STRICT,
    CV__FN_STR_REPLACE_VSTRICT,
    CV__FN_DIGEST,
    CV__FN_REPEAT,
    CV__FN_MAKE_URL,
    CV__FN_FILTER,
    CV__FN_CONTAINS,
    CV__FN_RESOURCE_FACADE,
    CV__FN_YAQL,
    CV__FN_UNSUPPORTED, /* a Heat function we do not implement, or one Heat removed */
    CV__FN_DATA         /* {CV__DATA_KEY: map}: the map is plain data (see below) */
} cv__fn_t;

/*
 * A one-key map whose key names a function that the template's version
 * does not define is plain data in Heat ({list_concat: ...} in a
 * 2016-04-08 template is a map named list_concat). What runs later (the
 * resolver, the engine) does not know the version, so when the template
 * is parsed such a map M is stored as {CV__DATA_KEY: M} (template_running.c),
 * which every reader takes as M, its values still evaluated. A map the
 * user wrote with this key is wrapped the same way, so it stays data too.
 */
#define CV__DATA_KEY "Converge::Data"

/* Classifies `v`: a map of exactly one key naming a function is a call, and
 * then *name and *arg are set (for CV__FN_DATA, *arg is the plain map); any
 * other value is plain data. Versions are not looked at: the parsed
 * template already holds CV__DATA_KEY where the version says data. */
cv__fn_t cv__fn_of(const json_t *v, const char **name, const json_t **arg);

/* What a name is in a version's function table (Heat's `functions`), or,
 * for cv__hot_condition, in a condition (`_parser_condition_functions`). */
typedef enum {
    CV__HOT_DATA,     /* not in the table: a one-key map of it is plain data */
    CV__HOT_FUNCTION, /* a function */
    CV__HOT_REMOVED,  /* hot_funcs.Removed: refused with Heat's words */
    CV__HOT_INVALID   /* a condition may not call it (function.Invalid) */
} cv__hot_kind_t;

cv__hot_kind_t cv__hot_function(const char *name, long version);
cv__hot_kind_t cv__hot_condition(const char *name, long version);

/* Whether `v` is a one-key map that is plain data in `version` (or carries
 * CV__DATA_KEY itself) and so is stored wrapped. */
bool cv__hot_plain_data(const json_t *v, long version);

/* Heat's texts for a Removed function (InvalidTemplateVersion), a function
 * a condition may not call (function.Invalid), and a template section the
 * version does not have (InvalidTemplateSection). */
#define CV__HOT_REMOVED_MSG                                                                        \
    "The template version is invalid: The function %s is not supported in this version of HOT."
#define CV__HOT_INVALID_MSG "The function \"%s\" is invalid in this context"
#define CV__HOT_SECTION_MSG "The template section is invalid: %s"

/*
 * How much one resolution may copy and build (see intrinsic.c): sizes are
 * counted roughly, as the text of strings plus CV__NODE_BYTES per value.
 */
#define CV__MAX_RESOLVED_BYTES (16 * 1024 * 1024)
/* How a resolution past it says so ("<fn>: " CV__TOO_LARGE_PHRASE " N bytes"). */
#define CV__TOO_LARGE_PHRASE "the resolved value would be larger than"
#define CV__NODE_BYTES 32

/* What a resolution may still copy and build. `exceeded` is set when it
 * failed for going past that, so that a caller can tell a value too large
 * from a wrong template without reading the message meant for users. */
typedef struct cv__budget {
    size_t left;
    bool exceeded;
} cv__budget_t;

/*
 * The functions of intrinsic_lists.c, applied to arguments already
 * resolved. Each returns a new value, or NULL with a message (without the
 * location, which the resolver adds) in `errstr`. `budget` is what the
 * resolution may still build; each takes from it what its result costs.
 */
json_t *cv__fn_str_split(const json_t *args, cv__budget_t *budget, char *errstr,
                         size_t errstr_size);
json_t *cv__fn_list_concat(const char *fn, const json_t *args, bool unique, cv__budget_t *budget,
                           char *errstr, size_t errstr_size);

/* How those functions report: the message in `errstr`, NULL returned. */
json_t *cv__fn_fail(char *errstr, size_t errstr_size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "<fn>: <what>, got <value>". */
json_t *cv__fn_fail_got(char *errstr, size_t errstr_size, const char *fn, const char *what,
                        const json_t *got);
/* "<fn>: the resolved value would be larger than ... bytes", with
 * budget->exceeded set. */
json_t *cv__fn_too_large(cv__budget_t *budget, char *errstr, size_t errstr_size, const char *fn);

/* The same for intrinsic_maps.c. */
json_t *cv__fn_map_merge(const json_t *args, cv__budget_t *budget, char *errstr,
                         size_t errstr_size);
json_t *cv__fn_map_replace(const json_t *args, cv__budget_t *budget, char *errstr,
                           size_t errstr_size);

/* The same for intrinsic_repeat.c. */
json_t *cv__fn_repeat(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size);

/* The same for intrinsic_url.c. */
json_t *cv__fn_make_url(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size);
/* Whether `port` is a port make_url accepts (as Heat checks it, also at
 * validation); its text in the URL in `text`, else a message in `errstr`. */
bool cv__url_port_ok(const json_t *port, const json_t *args, char *text, size_t size, char *errstr,
                     size_t errstr_size);

/* The same for intrinsic_digest.c. */
json_t *cv__fn_digest(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size);

/* The value at the path args[from...] below `v` (intrinsic_paths.c), or
 * NULL; get_param also reads a numeric string as an index
 * (`numeric_strings`). A character picked out of a string is a new value,
 * handed back in *made for the caller to release (NULL otherwise). */
const json_t *cv__path_walk(const json_t *v, const json_t *args, size_t from, bool numeric_strings,
                            json_t **made);

/* get_attr args ([group, attr, path...]) of a group's attributes, read as
 * Heat's get_attribute of the group's type reads them (intrinsic_group.c):
 * 0 with *out a new reference (JSON null for nothing), a negative CV_E*
 * with Heat's message in `errstr`, or 1 when `attrs` are not a group's (they
 * carry no CV_RTYPE_GROUP_KEY) and the path is walked as for any resource. */
int cv__group_get_attr(const json_t *attrs, const json_t *args, json_t **out, char *errstr,
                       size_t errstr_size);

/* The size a copy of `v` counts against the budget, counted until it
 * passes `limit`. */
size_t cv__resolved_size(const json_t *v, size_t limit);

/* cv_intrinsic_resolve within what is left of a budget shared by several
 * resolutions (budget->left, which it lowers by what it copied and built).
 * budget->exceeded says whether this resolution failed for going past it. */
json_t *cv__intrinsic_resolve_within(const json_t *expr, const cv_resolve_ctx_t *ctx,
                                     const char *where, cv__budget_t *budget, char *errstr,
                                     size_t errstr_size);

/*
 * yaql (yaql.c): evaluates `expression` with `$` bound to {"data": data},
 * for the subset of yaql that Heat's own tests use. NULL with a message in
 * `errstr` for a bad expression, a failed evaluation, or a construct outside
 * the subset ("yaql expression not supported: <construct>").
 */
json_t *cv__yaql_eval(const char *expression, const json_t *data, char *errstr, size_t errstr_size);
/* Parses and checks `expression` only: 0, or -1 with the message. */
int cv__yaql_check(const char *expression, char *errstr, size_t errstr_size);
/* Heat's messages for the yaql function's arguments. */
#define CV__YAQL_USAGE                                                                             \
    "\"yaql\" syntax should be yaql:\n              expression: $.data.var1.sum()\n              " \
    "data:\n                var1: [3, 2, 1]"
#define CV__YAQL_NOT_MAP "Arguments to \"yaql\" must be a map."
#define CV__YAQL_NOT_STRING "The \"expression\" argument to yaql must contain a string."
/* The yaql function over resolved arguments (intrinsic.c's contract). */
json_t *cv__fn_yaql(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size);

/* Python's == (1 == 1.0, True == 1, containers item by item), `value in
 * sequence` (a list's items or a substring) and truth, as Heat's functions
 * see JSON values. */
bool cv__py_equal(const json_t *a, const json_t *b);
bool cv__py_in(const json_t *value, const json_t *seq);
bool cv__py_truthy(const json_t *v);

/* resource_facade (template_facade.c): whether `arg` is one of what a
 * facade has, and Heat's message when it is not. */
bool cv__facade_key(const json_t *arg);
#define CV__FACADE_USAGE                                                                           \
    "Incorrect arguments to \"resource_facade\" should be one of: metadata, deletion_policy, "     \
    "update_policy"

/* filter and contains (intrinsic_lists.c), like the functions above. */
json_t *cv__fn_filter(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size);
json_t *cv__fn_contains(const json_t *args, char *errstr, size_t errstr_size);

/* ---------------------------------------------------------------- scalars */

/* Formats a number as Python's str() does ("5", "1.5", "1e+16", "100.0"),
 * since that is how Heat turns numbers into strings. */
void cv__fmt_number(const json_t *num, char *out, size_t size);

/* Compact JSON of `v` for an error message, shortened to fit `size`. */
void cv__describe(const json_t *v, char *out, size_t size);

/* The name of a JSON type as messages spell it ("a string", "a list"). */
const char *cv__type_name(const json_t *v);

/* Serialises a list or map as Heat's jsonutils.dumps(sort_keys=True) does,
 * for list_join items and str_replace values. Returns a malloc'd string. */
char *cv__dump_sorted(const json_t *v);

/* The typed value of a plain, untagged YAML scalar (NULL: out of memory or
 * invalid UTF-8), and of a scalar tagged !!<tag> (NULL and *bad when the text
 * does not fit the tag). */
json_t *cv__yaml_plain(const char *s, size_t len);
json_t *cv__yaml_tagged(const char *tag, const char *s, size_t len, bool *bad);

/* cv_yaml_load, but an empty document is json null when allow_empty. */
json_t *cv__yaml_load(const char *text, size_t len, const char *fname, bool allow_empty,
                      char *errstr, size_t errstr_size);

#endif
