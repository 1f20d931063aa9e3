/*
 * cli_secret — what the readers of a stack (convergectl's status,
 * resources, resource-show, events, template-show and the console's API)
 * must not show, and the masking itself. Pure: the caller reads the
 * definitions and records (cli_secret_io.h) and hands them in.
 *
 * What is secret (docs/security.md "Secrets"):
 *   - the value of a hidden parameter (Heat's `hidden: true`, read as Heat
 *     reads the boolean), given or defaulted;
 *   - an attribute its type marks sensitive (OS::Heat::RandomString's
 *     `value`, and `show`, which holds every attribute), and the reference
 *     id of a type that marks it so (get_resource of a RandomString gives
 *     the string);
 *   - every attribute of a group (OS::Heat::ResourceGroup,
 *     AutoScalingGroup, ResourceChain) whose members are of such a type:
 *     its `refs`, `attributes` and `resource.N...` carry the members' values;
 *   - a property its type marks sensitive, and a property whose expression
 *     reads any of the above (get_param of a hidden parameter, get_attr of
 *     a sensitive attribute or of such a group, get_resource of a sensitive
 *     reference, and
 *     their CloudFormation spellings Ref and Fn::GetAtt): the whole
 *     property is masked, whatever function transformed the secret;
 *   - the same values wherever else they turn up: in a nested stack (whose
 *     parameters and properties its parent's secrets fill), an event's
 *     reason, a copy in another resource's attributes. Every string equal
 *     to a secret value is masked; a secret of CLI_SECRET_EMBEDDED_MIN
 *     characters or more is also masked inside longer text
 *     ("postgres://app:******@db"). A shorter one would mask unrelated text
 *     ("on", "1"), so it is masked only where it is a whole value.
 *
 * Outputs are not masked: an output shows what it computes, as in Heat.
 */
#ifndef CLI_SECRET_H
#define CLI_SECRET_H

#include <jansson.h>
#include <stdbool.h>

#define CLI_SECRET_MASK "******"
#define CLI_SECRET_EMBEDDED_MIN 4

typedef struct cli_secrets {
    json_t *values; /* the secret texts, longest first, each once */
    json_t *props;  /* resource -> [names of its secret properties] (the stack's own) */
    json_t *types;  /* resource -> the type that implements it (registry applied) */
    json_t *groups; /* resource -> true: a group whose members keep secrets (every attribute) */
    json_t *exact;  /* secret text -> true: the whole-value lookup */
    /* Which 3-byte beginnings of a secret long enough to be masked inside
     * text exist (a bitmap, built at the first mask after a change): text
     * none of whose positions begins one holds no secret, whatever their
     * number, so masking a 2,000-resource stack costs one scan per string. */
    unsigned char *starts;
} cli_secrets_t;

void cli_secrets_init(cli_secrets_t *s);
void cli_secrets_free(cli_secrets_t *s);

/* Learns a definition: the values of its hidden parameters (from `params`,
 * the stored values, else the declaration's default) are secret. With
 * `own` (the stack whose readers mask), also each resource's type (the
 * `resource_registry` of `env` applied) and which of its properties are
 * secret. `tree` is the stored template, `env` the stored environment. */
void cli_secret_learn_def(cli_secrets_t *s, const json_t *tree, const json_t *params,
                          const json_t *env, bool own);

/* Whether a resource of type `type` records secret attributes: the
 * resources whose records cli_secret_io reads. */
bool cli_secret_type_records(const char *type);

/* Learns the secret attributes of a record of type `type` whose
 * attributes are `attrs`. */
void cli_secret_learn_attrs(cli_secrets_t *s, const char *type, const json_t *attrs);

/* Adds one secret text (ignored when empty). */
void cli_secret_add(cli_secrets_t *s, const char *text);

/* A copy of `v` with every secret value in its strings (and numbers that
 * read as one) masked; map keys are names and stay. A new reference. */
json_t *cli_secret_mask(const cli_secrets_t *s, const json_t *v);

/* `text` with every secret value masked: a new string (free it). */
char *cli_secret_mask_text(const cli_secrets_t *s, const char *text);

/* The properties `props` of the stack's resource `resource`: its secret
 * properties as CLI_SECRET_MASK, the rest cli_secret_mask'ed. */
json_t *cli_secret_mask_props(const cli_secrets_t *s, const char *resource, const json_t *props);

/* The attributes `attrs` of a resource of type `type`: the sensitive ones
 * (and within `show` too) as CLI_SECRET_MASK, the rest cli_secret_mask'ed. */
json_t *cli_secret_mask_attrs(const cli_secrets_t *s, const char *type, const json_t *attrs);

/* Whether the stack's resource `resource` is a group whose members keep
 * secrets: every attribute of it is CLI_SECRET_MASK. */
bool cli_secret_group(const cli_secrets_t *s, const char *resource);

/* Masks, in place, the fields of a resource document that carry values
 * (rows of resources and of the console, resource-show and its replaced
 * versions): "properties" as those of the stack's resource `resource`,
 * "attributes" as those of the document's "type" (all of them for a group
 * whose members keep secrets), "data", "reason" and
 * "physical_id" by value. Other fields are names and states, not values. */
void cli_secret_mask_resource(const cli_secrets_t *s, const char *resource, json_t *doc);

/* The parameter values `params` of template `tree`, typed as stored: a
 * hidden one's value as CLI_SECRET_MASK. A new object. */
json_t *cli_secret_mask_params(const json_t *tree, const json_t *params);

/* The parameter values `params` (typed, as stored) of template `tree`, as
 * Heat's stack show gives them (heat/engine/api.py format_stack:
 * parameters.map(str)): every value as text — a number as Python writes
 * it, a boolean "True"/"False", a comma_delimited_list joined with ",", a
 * json value as json.dumps writes it — a hidden one's as CLI_SECRET_MASK
 * unless `show_hidden`, and the pseudo parameters OS::stack_id,
 * OS::project_id ("": Converge has no projects) and OS::stack_name from
 * `stack_id` and `stack_name`. A new object. */
json_t *cli_secret_show_params(const json_t *tree, const json_t *params, const char *stack_id,
                               const char *stack_name, bool show_hidden);

/* The template `tree` as a reader may see it: a hidden parameter's
 * default masked, then every secret value (cli_secret_mask). */
json_t *cli_secret_mask_template(const cli_secrets_t *s, const json_t *tree);

#endif
