/*
 * cv_rtype — resource types: a table of operations per type.
 *
 * A type declares its property schema and attribute names (used by template
 * validation) and implements create / update / delete / observe on a
 * cv_rstate_t. Actions never block: a "wait" is recorded in the state's
 * private `data` (e.g. when the action started and how long it takes) and
 * observe() answers IN_PROGRESS with a retry time until it has passed.
 *
 * Every create is given the resource version's uuid; a type must produce the
 * same physical resource for the same uuid, so a create retried after a crash
 * never makes a second one.
 */
#ifndef CV_RTYPE_H
#define CV_RTYPE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define CV_PHYSID_MAX 256

typedef enum {
    CV_PROP_STRING,
    CV_PROP_NUMBER,
    CV_PROP_INTEGER,
    CV_PROP_BOOLEAN,
    CV_PROP_LIST,
    CV_PROP_MAP,
    CV_PROP_ANY
} cv_prop_type_t;

typedef struct cv_prop_schema {
    const char *name;
    cv_prop_type_t type;
    bool required;
    const char *default_json; /* JSON text of the default; NULL for none */
    bool update_allowed;      /* false: a change needs replacement */
} cv_prop_schema_t;

typedef enum { CV_ACTION_CREATE = 0, CV_ACTION_UPDATE = 1, CV_ACTION_DELETE = 2 } cv_action_t;

/* NEXT_STEP: a nested resource's walk (cv_rtype_walk_pending) finished a
 * step and its pause: the engine is to begin the next one. */
typedef enum {
    CV_OBSERVED_COMPLETE = 0,
    CV_OBSERVED_IN_PROGRESS = 1,
    CV_OBSERVED_FAILED = 2,
    CV_OBSERVED_NEXT_STEP = 3
} cv_observed_t;

/* The engine fills the inputs; a type's operation fills or updates the rest. */
typedef struct cv_rstate {
    const char *stack_name;
    const char *resource_name;
    const char *uuid;        /* this resource version's idempotency key */
    const json_t *props;     /* desired, resolved, schema applied */
    const json_t *old_props; /* update only: the previous properties */
    double now;              /* Unix seconds */
    double action_started;   /* observe: when the recorded action started */
    char physical_id[CV_PHYSID_MAX];
    json_t *data;  /* type-private state kept in the record; owned, never NULL */
    json_t *attrs; /* attributes; owned, never NULL */
    char reason[512];
    double retry_at; /* observe IN_PROGRESS: when to look again */
    /* signal: the version's recorded status (CREATE_COMPLETE, ...); NULL
     * when unknown (convergectl's check of the data before sending). */
    const char *status;
} cv_rstate_t;

/*
 * Types whose resource is a stack of its own (template resources and
 * OS::Heat::ResourceGroup). The engine creates, updates and deletes the
 * child stack; these pure operations say what it contains and what the
 * resource's attributes are once it is complete.
 */
typedef struct cv_nested_ops {
    /* The child stack's template and parameters for the resource `type_name`
     * with properties `props` (schema applied). `files` maps template-file
     * names to their trees (may be NULL). `data` is the type's private state,
     * carried from the previous version and updated in place (a group keeps
     * its member names and removed names there). */
    int (*definition)(const char *type_name, const json_t *props, const json_t *files, json_t *data,
                      json_t **tpl, json_t **params, char *errstr, size_t errstr_size);
    /* The resource's attributes from the child stack's resolved outputs. */
    json_t *(*attributes)(const json_t *outputs, const json_t *data);
} cv_nested_ops_t;

typedef struct cv_rtype {
    const char *name;
    const cv_prop_schema_t *props;
    size_t nprops;
    const char *const *attrs; /* NULL-terminated attribute names */
    /* Type-specific checks after the schema, on literal property values only;
     * values still holding intrinsic functions are skipped. May be NULL. */
    int (*validate)(const json_t *props, const char *where, char *errstr, size_t errstr_size);
    int (*create)(cv_rstate_t *st);
    int (*update)(cv_rstate_t *st);
    int (*remove)(cv_rstate_t *st);
    cv_observed_t (*observe)(cv_rstate_t *st, cv_action_t action);
    /* The type's own replacement rule, beyond the schema's (a changed property
     * without update_allowed always replaces). May be NULL. */
    bool (*needs_replacement)(const json_t *old_props, const json_t *new_props);
    /* Non-NULL for a nested-stack type: create/update/remove only name the
     * child stack (the physical id; the engine begins its traversals), and
     * observe reads the child's status, which the observer puts into
     * data.child: {"exists", "status", "traversal", "reason", "outputs"}. */
    const cv_nested_ops_t *nested;
    /* A changed property never needs an action (Heat's _needs_update is
     * False): OS::Heat::None stubs out other types and stays as created. */
    bool never_updates;
    /* What get_resource of the resource gives (Heat's get_reference_id),
     * from its physical id and attributes; NULL: the physical id. Returns
     * a string owned by `attrs` or `physical_id`, or NULL for the default. */
    const char *(*reference_id)(const char *resource_name, const char *physical_id,
                                const json_t *attrs);
    /* Applies one signal to the version (Heat's handle_signal), without I/O:
     * `details` is the signal's data (JSON null when none was given); the
     * operation changes st->data and st->attrs and writes the text of the
     * SIGNAL event into st->reason. A refused signal is CV_EINVAL with
     * Heat's message in errstr, st untouched. NULL: the type takes no
     * signals ("signal is not supported for resource.", as in Heat). */
    int (*signal)(cv_rstate_t *st, const json_t *details, char *errstr, size_t errstr_size);
    /* A waiting type: the property holding the physical id of the resource
     * whose signals it waits for. Before every look the observer finds that
     * resource among the version's dependencies and hands its record to
     * observe() in st->data as "watched": {"name", "type", "data"} (name ""
     * when no dependency has that id); observe() takes it out again. A signal
     * to the watched resource has the waiter looked at at once. NULL: none. */
    const char *watches;
    /* Secrets of the type (Heat's RandomString value, which its
     * data_set(redact=True) keeps encrypted): the NULL-terminated names of
     * the properties and attributes whose values every reader shows as
     * ****** (cli_secret.h), and whether get_resource of it gives a secret
     * (its reference id is one). NULL, false: none. */
    const char *const *sensitive_props;
    const char *const *sensitive_attrs;
    bool sensitive_reference;
} cv_rtype_t;

/* Returns the registered type called `name`, or NULL. */
const cv_rtype_t *cv_rtype_find(const char *name);

/* Whether `name` names a template file (".yaml", ".yml", ".template"): the
 * type of a template resource, as in Heat. */
bool cv_rtype_is_template_file(const char *name);

/* The type that acts for `name`: a registered type, the template-resource
 * type for a template file name, or NULL. */
const cv_rtype_t *cv_rtype_lookup(const char *name);

/* `v` with every occurrence of `var` inside its strings (not map keys)
 * replaced by `value`: a group member's properties with its index. */
json_t *cv_rtype_substitute(const json_t *v, const char *var, const char *value);

/* The id of the child stack of a nested-stack resource version: 16 hex
 * characters derived from the version's uuid, so a retried create names the
 * same child. `out` holds at least 17 bytes. */
void cv_rtype_child_stack_id(char *out, const char *uuid);

/* The reference id of a resource of type `type_name` (any name; an unknown
 * type gives its physical id): what get_resource of it, and a group's refs of
 * it, resolve to. Physical ids shown to users stay the physical ids. */
const char *cv_rtype_reference_id(const char *type_name, const char *resource_name,
                                  const char *physical_id, const json_t *attrs);

/*
 * A walk: one action of a nested resource carried out as several traversals
 * of its child, with a pause between two — Heat's batches of a group's
 * update_policy, each one nested-stack update. data.walk is {"steps": how
 * many, "at": k, "pause": seconds, ...}: the type's definition() builds the
 * child of step k (what a step holds, and what else the walk keeps, is the
 * type's). Once the child's traversal
 * of a step has ended and the pause since has passed, observe() answers
 * NEXT_STEP; the engine then advances `at` (cv_rtype_walk_next) and begins
 * the child's next traversal. The last step's end completes the action and
 * drops data.walk.
 */
/* Whether `data` holds a walk with a step after the current one. */
bool cv_rtype_walk_pending(const json_t *data);
/* Moves the walk of `data` on to its next step; CV_ENOENT when none. */
int cv_rtype_walk_next(json_t *data);

/* Adopts an existing physical resource (a resource's external_id) in place
 * of a create, as Heat's ADOPT: the physical id is `external_id`, no type
 * operation runs, and data.external_id says so to later traversals. */
int cv_rtype_adopt(cv_rstate_t *st, const char *external_id);

/* The external_id a recorded version was adopted with; NULL when created. */
const char *cv_rtype_adopted_id(const json_t *data);

/*
 * The attribute under which the group types (OS::Heat::ResourceGroup,
 * OS::Heat::ResourceChain, OS::Heat::AutoScalingGroup) tell get_attr that
 * a path into their attributes is read as Heat's get_attribute of that type
 * reads it, not as a plain walk: {"kind": the type's name, "members": the
 * member names in order (an AutoScalingGroup's oldest first)}. The member
 * values it reads are the group's other attributes: "resource.<name>" (a
 * ResourceGroup's and chain's member reference ids), "refs_map",
 * "attributes" / "outputs" (attribute -> member name -> value). The key
 * starts with a control character, which no template output is named with;
 * it is the engine's own and not shown (cv_rtype_attrs_shown).
 */
#define CV_RTYPE_GROUP_KEY "\001group"

/* `attrs` without the keys that are the engine's own (CV_RTYPE_GROUP_KEY):
 * what users see as a resource's attributes. Changes `attrs` in place. */
void cv_rtype_attrs_shown(json_t *attrs);

/* Whether `attr` is an attribute of `type` ("show" is one of every type). */
bool cv_rtype_has_attr(const cv_rtype_t *type, const char *attr);

/* Whether the type marks property `prop` or attribute `attr` secret; the
 * attribute "show" (every attribute at once) is secret when any attribute
 * is. A NULL type (unknown) marks nothing. */
bool cv_rtype_prop_sensitive(const cv_rtype_t *type, const char *prop);
bool cv_rtype_attr_sensitive(const cv_rtype_t *type, const char *attr);

/*
 * Checks `props` against the type's schema and returns a new object with the
 * defaults applied. Unknown properties, missing required ones and values of
 * the wrong type are errors naming `where`.property. With `literal_only`,
 * values that are still intrinsic-function calls ({"get_param": ...}) pass
 * the type check (they are checked again once resolved). Numeric strings are
 * accepted for numbers, "true"/"false" for booleans, numbers and booleans for
 * strings, as Heat does. Returns NULL with errstr on error.
 */
json_t *cv_rtype_apply_schema(const cv_rtype_t *type, const json_t *props, const char *where,
                              bool literal_only, char *errstr, size_t errstr_size);

/* Whether changing old → new properties needs a replacement (a changed property
 * without update_allowed, or a type rule such as TestResource update_replace). */
bool cv_rtype_needs_replacement(const cv_rtype_t *type, const json_t *old_props,
                                const json_t *new_props);

/* Writes a number as Heat (Python) writes one into text: integers as such,
 * reals as the shortest digits that read back the same, "100.0", "1e+16". */
void cv_format_number(const json_t *num, char *out, size_t size);

/* Whether `v` is an intrinsic-function call: an object of one key that names one. */
bool cv_is_intrinsic(const json_t *v);

#endif
