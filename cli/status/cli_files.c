/*
 * Template files and get_file files: found, read, keyed and checked to lie
 * inside the root template's folder (the submit tool uploads nothing else).
 * A template file is uploaded as its tree, a get_file file as its text;
 * both are keyed by their path relative to the root template's folder, and
 * the template is rewritten to name that key, as Heat's client rewrites
 * them to the URLs it uploads under.
 */
#include "cli_files.h"

#include "cli_common.h"
#include "cli_template.h"
#include "cv_hot.h"

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
    const char *what = strstr(where, "get_file") ? "get_file file" : "template file";
    if (type[0] == '/' || strstr(type, "://"))
        return cli_fail(CLI_USAGE,
                        "%s: %s: %s \"%s\": only paths relative to the template are "
                        "uploaded",
                        fname, where, what, type);
    char joined[PATH_MAX * 2];
    snprintf(joined, sizeof(joined), "%s/%s%s%s", w->root, dir, dir[0] ? "/" : "", type);
    if (!realpath(joined, real))
        return cli_fail(CLI_USAGE, "%s: %s: cannot read %s \"%s\": %s", fname, where, what, type,
                        strerror(errno));
    size_t n = strlen(w->root);
    if (strncmp(real, w->root, n) != 0 || real[n] != '/')
        return cli_fail(CLI_USAGE,
                        "%s: %s: %s \"%s\" is outside the template's folder %s; "
                        "refused",
                        fname, where, what, type, w->root);
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
    if (json_is_string(json_object_get(w->files, key)))
        return cli_fail(CLI_USAGE,
                        "%s: %s: \"%s\" is read by get_file too; a file is either a "
                        "template or get_file's text",
                        fname, where, type);
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

/* Uploads the file a {get_file: "path"} call names, as text, and rewrites
 * the call to name its key. A computed argument is left to the engine,
 * which refuses it (Heat's client cannot upload it either). */
static int take_text(walk_t *w, const char *fname, const char *where, const char *dir, json_t *call)
{
    const char *path = json_string_value(json_object_get(call, "get_file"));
    if (!path)
        return CLI_OK;
    char key[PATH_MAX], real[PATH_MAX];
    int rc = resolve(w, fname, where, dir, path, key, sizeof(key), real);
    if (rc)
        return rc;
    json_object_set_new(call, "get_file", json_string(key));
    const json_t *known = json_object_get(w->files, key);
    if (json_is_object(known))
        return cli_fail(CLI_USAGE,
                        "%s: %s: \"%s\" is a template file too; a file is either a "
                        "template or get_file's text",
                        fname, where, path);
    if (known)
        return CLI_OK;
    size_t len;
    char *text = cli_read_file(real, &len);
    if (!text)
        return CLI_USAGE;
    json_t *s = json_stringn(text, len);
    free(text);
    if (!s)
        return cli_fail(CLI_USAGE, "%s: %s: get_file file \"%s\" is not UTF-8 text", fname, where,
                        path);
    json_object_set_new(w->files, key, s);
    return CLI_OK;
}

/* Every get_file call in `v` (resources and outputs: conditions cannot
 * call it). */
static int take_texts(walk_t *w, const char *fname, const char *where, const char *dir, json_t *v)
{
    if (cv_is_intrinsic(v) && json_object_get(v, "get_file"))
        return take_text(w, fname, where, dir, v);
    int rc = CLI_OK;
    size_t i;
    json_t *item;
    json_array_foreach(v, i, item)
    {
        if (rc == CLI_OK)
            rc = take_texts(w, fname, where, dir, item);
    }
    const char *key;
    json_object_foreach(v, key, item)
    {
        if (rc == CLI_OK)
            rc = take_texts(w, fname, where, dir, item);
    }
    return rc;
}

static int collect(walk_t *w, const char *fname, const char *dir, json_t *tree)
{
    json_t *resources = json_object_get(tree, "resources");
    const char *name;
    json_t *def;
    int rc = take_texts(w, fname, "get_file", dir, resources);
    rc = rc ? rc : take_texts(w, fname, "get_file", dir, json_object_get(tree, "outputs"));
    if (rc || !json_is_object(resources))
        return rc;
    json_object_foreach(resources, name, def)
    {
        if (rc || !json_is_object(def))
            continue;
        char where[512];
        snprintf(where, sizeof(where), "resources.%s.type", name);
        rc = take_file(w, fname, where, dir, def);
        /* A group's member type may be a template file too. */
        const char *type = json_string_value(json_object_get(def, "type"));
        const char *key = !type                                             ? NULL
                          : strcmp(type, "OS::Heat::ResourceGroup") == 0    ? "resource_def"
                          : strcmp(type, "OS::Heat::AutoScalingGroup") == 0 ? "resource"
                                                                            : NULL;
        json_t *member = key ? json_object_get(json_object_get(def, "properties"), key) : NULL;
        if (rc == CLI_OK && json_is_object(member)) {
            snprintf(where, sizeof(where), "resources.%s.properties.%s.type", name, key);
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

/* ---------------------------------------------------------------- environments */

/* A registry value naming a template file, read from the environment file's
 * folder `env_dir` (absolute) as heatclient reads it, keyed like the
 * template's own files; the value is rewritten to the key. */
static int take_registry_file(walk_t *w, const char *fname, const char *where, const char *env_dir,
                              json_t *holder, const char *k)
{
    const char *value = json_string_value(json_object_get(holder, k));
    if (!value || !cv_rtype_is_template_file(value))
        return CLI_OK;
    char dir[PATH_MAX] = "";
    size_t n = strlen(w->root);
    if (strcmp(env_dir, w->root) != 0) {
        if (strncmp(env_dir, w->root, n) != 0 || env_dir[n] != '/')
            return cli_fail(CLI_USAGE,
                            "%s: %s: template file \"%s\" is outside the template's folder %s; "
                            "refused",
                            fname, where, value, w->root);
        snprintf(dir, sizeof(dir), "%s", env_dir + n + 1);
    }
    json_t *probe = json_pack("{s:s}", "type", value);
    int rc = take_file(w, fname, where, dir, probe);
    if (rc == CLI_OK)
        json_object_set(holder, k, json_object_get(probe, "type"));
    json_decref(probe);
    return rc;
}

static int walk_registry(walk_t *w, const char *fname, const char *env_dir, json_t *reg,
                         const char *at)
{
    const char *k;
    json_t *v;
    int rc = CLI_OK;
    json_object_foreach(reg, k, v)
    {
        char where[768];
        snprintf(where, sizeof(where), "%s.%s", at, k);
        if (json_is_object(v))
            rc = walk_registry(w, fname, env_dir, v, where);
        else if (!cv_rtype_is_template_file(k))
            rc = take_registry_file(w, fname, where, env_dir, reg, k);
        if (rc)
            return rc;
    }
    return CLI_OK;
}

int cli_files_collect_registry(const char *tpl_path, const char *env_path, json_t *registry,
                               json_t *files)
{
    walk_t w;
    char copy[PATH_MAX], env_dir[PATH_MAX];
    snprintf(copy, sizeof(copy), "%s", tpl_path);
    char *slash = strrchr(copy, '/');
    const char *dir = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
    if (!realpath(dir, w.root))
        return cli_fail(CLI_USAGE, "%s: cannot resolve its folder: %s", tpl_path, strerror(errno));
    snprintf(copy, sizeof(copy), "%s", env_path);
    slash = strrchr(copy, '/');
    dir = slash ? (slash == copy ? "/" : (*slash = '\0', copy)) : ".";
    if (!realpath(dir, env_dir))
        return cli_fail(CLI_USAGE, "%s: cannot resolve its folder: %s", env_path, strerror(errno));
    w.files = files;
    return json_is_object(registry)
               ? walk_registry(&w, env_path, env_dir, registry, "resource_registry")
               : CLI_OK;
}
