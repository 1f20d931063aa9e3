/*
 * cv__rtype_internal — what the files of engine/hot share and nothing else
 * sees: the built-in type tables, the property conversions that the schema
 * and OS::Heat::Value both use, and the physical-id naming.
 */
#ifndef CV_RTYPE_INTERNAL_H
#define CV_RTYPE_INTERNAL_H

#include "cv_rtype.h"

extern const cv_rtype_t cv__rtype_none;
extern const cv_rtype_t cv__rtype_test_resource;
extern const cv_rtype_t cv__rtype_random_string;
extern const cv_rtype_t cv__rtype_value;
extern const cv_rtype_t cv__rtype_template;
extern const cv_rtype_t cv__rtype_resource_group;
extern const cv_rtype_t cv__rtype_resource_chain;
extern const cv_rtype_t cv__rtype_heat_stack;
extern const cv_rtype_t cv__rtype_delay;
extern const cv_rtype_t cv__rtype_software_config;
extern const cv_rtype_t cv__rtype_cloud_config;
extern const cv_rtype_t cv__rtype_multipart_mime;

/* What the config types share (rtype_software_config.c): nothing to delete,
 * complete at once, and their reference. */
int cv__config_remove(cv_rstate_t *st);
cv_observed_t cv__config_observe(cv_rstate_t *st, cv_action_t action);
/* get_resource of a config: its text (Converge has no config store to
 * look Heat's config id up in). */
const char *cv__config_reference_id(const char *resource_name, const char *physical_id,
                                    const json_t *attrs);

/* OS::Heat::Delay's wait for `action` ("CREATE", "DELETE"): min_wait plus
 * the jitter drawn from `uuid`, 0 for an action not listed. */
double cv__delay_wait_secs(const json_t *props, const char *uuid, const char *action);

/* OS::Heat::MultipartMime's message for `props` (schema applied), with the
 * boundary drawn from `uuid`, as Python's email package writes it;
 * malloc'ed, NULL when out of memory. */
char *cv__mime_message(const json_t *props, const char *uuid);
extern const cv_rtype_t cv__rtype_wait_condition_handle;
extern const cv_rtype_t cv__rtype_wait_condition;
extern const cv_rtype_t cv__rtype_autoscaling_group;
extern const cv_rtype_t cv__rtype_scaling_policy;
extern const cv_rtype_t cv__rtype_service;

/* Converge::Service (rtype_service_props.c): the property `name` of
 * `props` read into the form the service spec holds (defaults applied,
 * lists of names made lists of maps); NULL when absent, or with errstr
 * naming `where`.<name>... when it is wrong. */
json_t *cv__service_prop(const json_t *props, const char *name, const char *where, char *errstr,
                         size_t errstr_size);
/* The checks across properties: exactly one of command and tasks, a
 * health check's port among the ports. */
int cv__service_check_shape(const json_t *props, const char *where, char *errstr,
                            size_t errstr_size);
/* The type's validate hook: every literal property read, then the shape. */
int cv__service_validate(const json_t *props, const char *where, char *errstr, size_t errstr_size);
/* observe() of a version from the cluster snapshot in data.cluster
 * (rtype_service_observe.c), which it takes out of data again. */
cv_observed_t cv__service_observe(cv_rstate_t *st, cv_action_t action);

/* What every nested-stack type does to its resource (rtype_nested.c): the
 * physical id is the child stack's id, kept in data.stack. */
int cv__nested_create(cv_rstate_t *st);
int cv__nested_update(cv_rstate_t *st);
int cv__nested_remove(cv_rstate_t *st);
/* Observes a nested version from the child stack the observer read into
 * data.child (taken out of data again); `ops` give the attributes. */
cv_observed_t cv__nested_observe_child(cv_rstate_t *st, cv_action_t action,
                                       const cv_nested_ops_t *ops);

/* What the group types share (rtype_group_members.c). Whether the list
 * `list` holds the string `s`: */
bool cv__group_contains(const json_t *list, const char *s);
/* The attribute names of a member type: its own, or a template's outputs. */
json_t *cv__group_member_attr_names(const char *type, const json_t *files);
/* A member's definition from the group's ({type, properties, metadata});
 * `var` in its property strings replaced by `name` (NULL: no index var). */
json_t *cv__group_member(const json_t *def, const char *var, const char *name);
/* The child template's outputs for members `names`: "refs" and "a.<attr>"
 * for each of `attr_names`, the list over the members. */
json_t *cv__group_outputs(const json_t *names, const json_t *attr_names);
/* The child template of members `names`, with outputs "refs" and
 * "a.<attr>" for each of `attr_names` (lists in the order of `names`). */
json_t *cv__group_template(const json_t *def, const char *var, const json_t *names,
                           const json_t *attr_names);
/* Orders the members of the child template `resources` in `batches` (lists
 * of member names; names no longer members are skipped): every member of a
 * batch depends on every member of the batch before it, through an
 * OS::Heat::Delay "<pause_prefix><k>" of min_wait `pause` when `pause` > 0,
 * so that the child traversal acts on the batches in turn, as Heat's one
 * nested-stack update per batch does. */
void cv__group_order_batches(json_t *resources, const json_t *batches, double pause,
                             const char *pause_prefix);
/* Orders the child's `resources` by a group's rollout ({id, batches,
 * pause_time}; NULL: none): the members of its batches lose any other
 * order and follow each other, with pauses "rollout_<id>_pause_<k>" (new
 * for each rollout, as a Delay waits on its create). */
void cv__group_apply_rollout(json_t *resources, const json_t *rollout);
/* Whether every member a rollout's batches name is still in `names`: a
 * rollout is kept (a no-op update changes nothing) only while it is. */
bool cv__group_rollout_intact(const json_t *rollout, const json_t *names);
/* A group's attributes of its members' references, from the child's
 * outputs: refs, refs_map and resource.<n> — n the member's name, or with
 * `by_index` its position (an AutoScalingGroup's, oldest first). */
json_t *cv__group_refs(const json_t *outputs, const json_t *names, bool by_index);
/* The list of the members' values of `attr` among the child's outputs. */
const json_t *cv__group_member_values(const json_t *outputs, const char *attr);

/* rtype_group_mark.c: marks `attrs` as a group's of type `kind` with the
 * members `names`, in order (CV_RTYPE_GROUP_KEY); and a ResourceGroup's
 * removed_rsrc_list from its blacklist (Heat's sorted names). */
void cv__group_mark(json_t *attrs, const char *kind, const json_t *names);
json_t *cv__group_removed_list(const json_t *blacklist);

/* What ResourceGroup and ResourceChain share (rtype_resource_group.c): the
 * resource's attributes from the child's resolved outputs and data.names /
 * data.attrs (refs, refs_map, attributes, removed_rsrc_list, <attr>,
 * resource.<n>[.<attr>]); `own`'s attributes win over a member attribute of
 * that name. */
json_t *cv__group_attributes(const json_t *outputs, const json_t *data, const cv_rtype_t *own);

/* A group's update_policy batch_create (rtype_group_batch.c): the walk
 * (data.walk, cv_rtype.h) that creates `names` max_batch_size at a time when
 * the group is created (the policy is data.facade.update_policy). Non-zero
 * with errstr for an invalid policy. */
int cv__group_batch_create(const json_t *names, json_t *data, char *errstr, size_t errstr_size);
/* The numbers of a group's update_policy `which` ("batch_create",
 * "rolling_update") with Heat's defaults (max_batch_size 1, pause_time 0,
 * min_in_service 0; NULL `min_in_service`: the policy has none); non-zero
 * with Heat's Range message in errstr when one is out of range. */
int cv__group_policy(const json_t *policy, const char *which, double *size, double *pause,
                     double *min_in_service, char *errstr, size_t errstr_size);

/* A ResourceGroup's update_policy rolling_update (rtype_group_rolling.c).
 * Heat's ResourceGroup._get_batches: the batches of a rolling update from
 * `curr` members to `targ`, as a list of [size of the group after it,
 * members with the new definition in it] pairs. */
json_t *cv__group_rolling_batches(long long targ, long long curr, long long size, long long min);
/* Heat's _update_timeout: 0 with the seconds left for the update in *left,
 * or -1 when the pauses between `nbatches` batches use up the timeout. */
int cv__group_update_timeout(size_t nbatches, double pause, double timeout_secs, double *left);
/* Heat's walk of a ResourceGroup's members through a batched update
 * (ResourceGroup._replace: one nested update per batch of _get_batches,
 * each from _assemble_for_rolling_update and scaling/template.py's
 * member_definitions), as data.walk keeps it (cv_rtype.h). `members` are
 * [name, new] pairs, oldest first, `new` true for a member that has the new
 * definition already (no failed member: Heat counts those in the group's
 * capacity but leaves them out of the nested templates); `skip` the names
 * removal_policies took out. A step's members are [name, new] pairs in name
 * order: Heat's temporary members (min_in_service) appear in the steps that
 * create them and are gone from the last. With no member (batch_create) the
 * steps create `count` members `size` at a time. The walk is {"steps": how
 * many, "at": 0, "batches": Heat's [capacity, updated] per step, "state":
 * the members of step "state_at", "count"}: the plan and one step's members,
 * never every step's, which for N members in batches of one would be N²
 * names. NULL when out of memory. */
json_t *cv__group_walk_plan(const json_t *members, const json_t *skip, long long count,
                            long long size, long long min);
/* The members of the walk's step "at", worked out from the step kept one
 * batch at a time and kept in its place; NULL when out of memory. */
const json_t *cv__group_walk_current(json_t *walk, const json_t *skip);
/* One step of the walk: the members after a nested update to capacity `cap`
 * of which `upd` have the new definition, from `state` (oldest first), with
 * `targ` the group's count (in Heat's order: the kept members, then those
 * created; NULL when out of memory). */
json_t *cv__group_walk_step(const json_t *state, const json_t *skip, long long targ, long long cap,
                            long long upd);
/* The nested template of one step of the walk (Heat's
 * _assemble_for_rolling_update): each [name, new] member of `step` defined
 * by `new_def`, or by `old_def` (the resource_def the group had) while it
 * has not its turn yet, `var` replaced by its name; the outputs over the
 * step's members. */
json_t *cv__group_step_template(const json_t *new_def, const json_t *old_def, const char *var,
                                const json_t *step, const json_t *attr_names);
/* Plans the walk (data.walk, cv_rtype.h) of a rolling update to the members
 * `names` when `props`' resource_def differs from data.applied_def and the
 * update_policy (data.facade) has rolling_update; `blacklist` is the
 * group's new one. Non-zero with errstr, data untouched, for an invalid
 * policy (Heat's messages). */
int cv__group_rolling_update(const json_t *props, const json_t *names, const json_t *blacklist,
                             json_t *data, char *errstr, size_t errstr_size);

/* Returns a new reference holding `v` converted to `type` as Heat converts
 * property values, or NULL when it cannot be. */
json_t *cv__rtype_coerce(cv_prop_type_t type, const json_t *v);

/* The name of a property type as error messages spell it ("integer"). */
const char *cv__rtype_type_name(cv_prop_type_t type);

/* Writes `v` as compact JSON for an error message, shortened to fit `size`. */
void cv__rtype_describe(const json_t *v, char *out, size_t size);

/* Whether `v` or anything inside it is an intrinsic-function call. */
bool cv__rtype_contains_intrinsic(const json_t *v);

/* Whether any schema property differs between old and new once defaults are
 * applied; with `replacing_only`, only those without update_allowed count. */
bool cv__rtype_props_differ(const cv_rtype_t *type, const json_t *old_props,
                            const json_t *new_props, bool replacing_only);

/* Names st->physical_id "<stack>-<resource>-<first 12 chars of uuid>": the
 * same uuid always gives the same id, which keeps a retried create idempotent. */
void cv__rtype_set_physical_id(cv_rstate_t *st);

/* A number kept in a type's private data; `dflt` when absent or not a
 * number, so records written by older versions still observe. */
double cv__rtype_data_number(const json_t *data, const char *key, double dflt);
bool cv__rtype_data_bool(const json_t *data, const char *key);

/* `v` as YAML text, byte for byte what Heat's yaml.dump (PyYAML safe_dump,
 * default options) writes; malloc'ed, NULL when out of memory. */
char *cv__yaml_dump(const json_t *v);

#endif
