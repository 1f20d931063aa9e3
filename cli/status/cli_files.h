/*
 * cli_files — the template files a stack brings with it: the templates of
 * template resources (type "db.yaml") and of group members, read relative
 * to the file that names them, refused outside the root template's folder.
 */
#ifndef CLI_FILES_H
#define CLI_FILES_H

#include <jansson.h>

/*
 * Reads every template file that `tree` (loaded from `path`) names as a
 * resource type or a ResourceGroup member type, recursively. Each is keyed
 * by its path relative to the root template's folder, and every type that
 * names one is rewritten to that key, in `tree` and in the files, so that a
 * type means the same file wherever the engine reads it. Returns CLI_OK with
 * a new object in *files (empty when none), or CLI_USAGE (reported, naming
 * the template, the resource and the file).
 */
int cli_files_collect(const char *path, json_t *tree, json_t **files);

/*
 * The template files an environment's `resource_registry` maps types to
 * (`My::DB: db.yaml`, also under `resources:`), read relative to the
 * environment file `env_path` as heatclient reads them and keyed as
 * cli_files_collect keys them for the template `tpl_path` (refused outside
 * its folder); each value is rewritten to its key and the files (and theirs,
 * recursively) are added to `files`. CLI_OK or CLI_USAGE (reported).
 */
int cli_files_collect_registry(const char *tpl_path, const char *env_path, json_t *registry,
                               json_t *files);

#endif
