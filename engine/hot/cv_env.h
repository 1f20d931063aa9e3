/*
 * cv_env — Heat environments: reading environment files, merging several
 * in order as Heat merges repeated `-e` files, and what the merged
 * environment's `resource_registry` says about a resource (the type that
 * implements it, its restricted actions, its hooks) and about the
 * environment of a nested stack.
 *
 * An environment is a JSON object with Heat's sections: `parameters`,
 * `parameter_defaults`, `resource_registry`, `event_sinks`,
 * `encrypted_param_names` (`parameter_merge_strategies` is consumed by the
 * merge and not kept). Pure logic: no I/O.
 */
#ifndef CV_ENV_H
#define CV_ENV_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Reads one environment file into a new tree: a map of Heat's sections,
 * each of the right kind; `hooks` and `restricted_actions` in the registry
 * hold only the values Heat accepts (Heat's messages). An empty file is an
 * empty environment. NULL with "FNAME: where: problem" in errstr.
 */
json_t *cv_env_read(const char *text, size_t len, const char *fname, char *errstr,
                    size_t errstr_size);

/*
 * Merges the environment file `file` (cv_env_read) into `env` as Heat's
 * merge_environments does: `parameters` and `parameter_defaults` by the
 * file's `parameter_merge_strategies` (overwrite, merge, deep_merge; per
 * parameter or `default`) and the type `param_decls` (the template's
 * parameters section) declares — once a section holds values, names the
 * template does not declare are ignored —, the other sections key by key
 * (a later file's key replaces an earlier one's: `resource_registry.resources`
 * as a whole). `strategies` (an object kept across the files of one merge)
 * remembers each parameter's strategy: a file that asks another one fails,
 * as in Heat. Returns 0 or CV_EVALIDATE with Heat's message in errstr.
 */
int cv_env_merge(json_t *env, json_t *strategies, const json_t *file, const json_t *param_decls,
                 const char *fname, char *errstr, size_t errstr_size);

/*
 * The type that implements resource `resource` (NULL: none named) of type
 * `type` under `registry`, as Heat's ResourceRegistry.get_resource_info
 * finds it: a per-resource mapping (`resources: {name: {type: ...}}`) before
 * a global one, an exact type before a wildcard (`OS::*: Other::*`), a
 * mapping followed to its end, a template file (`*.yaml`, `*.template`)
 * ending it. Writes the type into `out` (the type itself when nothing maps
 * it) and, when `via` is not NULL, a new JSON array (or NULL) of the registry
 * path of the template-file mapping that ended it, which a nested stack's
 * environment leaves out (cv_env_child).
 */
void cv_env_resolve_type(const json_t *registry, const char *type, const char *resource, char *out,
                         size_t size, json_t **via);

/* Restricted actions and hooks of a resource, from every `resources`
 * pattern (fnmatch, as Heat) that matches its name. */
enum { CV_ENV_RESTRICT_UPDATE = 1, CV_ENV_RESTRICT_REPLACE = 2 };
enum { CV_ENV_HOOK_PRE_CREATE = 1, CV_ENV_HOOK_PRE_UPDATE = 2, CV_ENV_HOOK_PRE_DELETE = 4 };
unsigned cv_env_restricted_actions(const json_t *registry, const char *resource);
unsigned cv_env_hooks(const json_t *registry, const char *resource);

/*
 * The environment of the nested stack of resource `resource` (a template
 * resource or a group), as Heat's get_child_environment makes it: no
 * `parameters` (the child's come from the resource's properties), the
 * parent's `parameter_defaults` and registry, without the template-file
 * mapping `via` that made the resource a nested stack (cv_env_resolve_type;
 * NULL: none), and the registry's `resources` replaced by what the sections
 * matching `resource` hold (wildcards first, the exact name last).
 * A new object.
 */
json_t *cv_env_child(const json_t *env, const char *resource, const json_t *via);

#endif
