/*
 * Template files: found, read, keyed and checked to lie inside the root
 * template's folder (the submit tool uploads nothing else).
 */
#include "cli_files.h"

#include "cli_common.h"
#include "cli_template.h"
#include "cv_rtype.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct walk {
    char root[PATH_MAX]; /* the root template's folder, resolved */
    json_t *files;       /* key -> tree */
} walk_t;

static int collect(walk_t *w, const char *fname, const char *dir, json_t *tree);

/* The key of `type` named from folder `dir` (relative to the root), with
 * the file's real path in `real`. */
static int resolve(const walk_t *w, const char *fname, const char *where, const char *dir,
                   const char *type, char *key, size_t keysz, char *real)
{
    if (type[0] == '/' || strstr(type, "://"))
        return cli_fail(CLI_USAGE,
                        "%s: %s: template file \"%s\": only paths relative to the template are "
                        "uploaded",
                        fname, where, type);
    char joined[PATH_MAX * 2];
    snprintf(joined, sizeof(joined), "%s/%s%s%s", w->root, dir, dir[0] ? "/" : "", type);
    if (!realpath(joined, real))
        return cli_fail(CLI_USAGE, "%s: %s: cannot read template file \"%s\": %s", fname, where,
                        type, strerror(errno));
    size_t n = strlen(w->root);
    if (strncmp(real, w->root, n) != 0 || real[n] != '/')
        return cli_fail(CLI_USAGE,
                        "%s: %s: template file \"%s\" is outside the template's folder %s; "
                        "refused",
                        fname, where, type, w->root);
    snprintf(key, keysz, "%s", real + n + 1);
    return CLI_OK;
}

/* Reads the file `type` names (once per key) and rewrites `holder.type`. */
static int take_file(walk_t *w, const char *fname, const char *where, const char *dir,
                     json_t *holder)
{
    const char *type = json_string_value(json_object_get(holder, "type"));
    if (!type || !cv_rtype_is_template_file(type))
        return CLI_OK;
    char key[PATH_MAX], real[PATH_MAX];
    int rc = resolve(w, fname, where, dir, type, key, sizeof(key), real);
    if (rc)
        return rc;
    json_object_set_new(holder, "type", json_string(key));
    if (json_object_get(w->files, key))
        return CLI_OK; /* read already: a loop is the validator's to name */
    json_t *child = NULL;
    rc = cli_template_read(real, &child);
    if (rc)
        return rc;
    json_object_set_new(w->files, key, child);
    char child_dir[PATH_MAX];
    snprintf(child_dir, sizeof(child_dir), "%s", key);
    char *slash = strrchr(child_dir, '/');
    if (slash)
        *slash = '\0';
    else
        child_dir[0] = '\0';
    return collect(w, key, child_dir, child);
}

static int collect(walk_t *w, const char *fname, const char *dir, json_t *tree)
{
    json_t *resources = json_object_get(tree, "resources");
    const char *name;
    json_t *def;
    int rc = CLI_OK;
    if (!json_is_object(resources))
        return CLI_OK;
    json_object_foreach(resources, name, def)
    {
        if (rc || !json_is_object(def))
            continue;
        char where[512];
        snprintf(where, sizeof(where), "resources.%s.type", name);
        rc = take_file(w, fname, where, dir, def);
        const char *type = json_string_value(json_object_get(def, "type"));
        json_t *member = json_object_get(json_object_get(def, "properties"), "resource_def");
        if (rc == CLI_OK && type && strcmp(type, "OS::Heat::ResourceGroup") == 0 &&
            json_is_object(member)) {
            snprintf(where, sizeof(where), "resources.%s.properties.resource_def.type", name);
            rc = take_file(w, fname, where, dir, member);
        }
    }
    return rc;
}

int cli_files_collect(const char *path, json_t *tree, json_t **files)
{
    walk_t w;
    char copy[PATH_MAX];
    snprintf(copy, sizeof(copy), "%s", path);
    char *slash = strrchr(copy, '/');
    const char *dir = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
    if (!realpath(dir, w.root))
        return cli_fail(CLI_USAGE, "%s: cannot resolve its folder: %s", path, strerror(errno));
    w.files = json_object();
    int rc = collect(&w, path, "", tree);
    if (rc) {
        json_decref(w.files);
        return rc;
    }
    *files = w.files;
    return CLI_OK;
}
