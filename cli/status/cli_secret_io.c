/*
 * Reading what a stack's readers must hide (cli_secret_io.h).
 */
#include "cli_secret_io.h"

#include "cli_output.h"
#include "cli_stack.h"

#include "cv_contract.h"

#include <stdlib.h>
#include <string.h>

/* Deeper than any nesting the workers accept (template resources and
 * groups both count), so that a malformed parent chain cannot loop. */
#define ANCESTORS_MAX 32

/* The records (type, attrs) of the resources of `s->types` whose type keeps
 * secret attributes, in one round trip; their secrets are learned. */
static int learn_records(cli_t *cli, const char *id, cli_secrets_t *s)
{
    const char *name;
    json_t *type, *names = json_array();
    json_object_foreach(s->types, name, type)
    {
        if (cli_secret_type_records(json_string_value(type)))
            json_array_append_new(names, json_string(name));
    }
    size_t n = json_array_size(names);
    cli_redis_cmd_t *cmds = calloc(n ? n : 1, sizeof(*cmds));
    redisReply **replies = calloc(n ? n : 1, sizeof(*replies));
    char(*keys)[CV_KEY_MAX] = calloc(n ? n : 1, sizeof(*keys));
    int rc = cmds && replies && keys ? CLI_OK : cli_fail(CLI_SERVICE, "out of memory");
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        cv_key(keys[i], CV_KEY_MAX, CV_KEY_RES, id, 0, json_string_value(json_array_get(names, i)));
        cmds[i] = (cli_redis_cmd_t){4, {"HMGET", keys[i], "type", "attrs"}};
    }
    if (rc == CLI_OK && n > 0)
        rc = cli_redis_pipeline(cli, n, cmds, CLI_R(REDIS_REPLY_ARRAY), replies);
    for (size_t i = 0; rc == CLI_OK && i < n; i++) {
        const redisReply *r = replies[i];
        const char *own = json_string_value(
            json_object_get(s->types, json_string_value(json_array_get(names, i))));
        if (r->elements == 2 && r->element[1]->type == REDIS_REPLY_STRING) {
            const char *rec_type = r->element[0]->type == REDIS_REPLY_STRING && r->element[0]->len
                                       ? r->element[0]->str
                                       : own;
            json_t *attrs = cli_json_parse(r->element[1]->str, NULL);
            cli_secret_learn_attrs(s, rec_type, attrs);
            json_decref(attrs);
        }
        freeReplyObject(replies[i]);
    }
    free(keys);
    free(replies);
    free(cmds);
    json_decref(names);
    return rc;
}

/* Whether stack `id` has a definition: a stack deleted and purged
 * meanwhile has none, and no secret left to mask. */
static int def_exists(cli_t *cli, const char *id, bool *exists)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_DEF, id, 0, NULL);
    return cli_key_exists(cli, key, exists);
}

/* Learns the secret values of the stack `id` above the one read. */
static int learn_ancestor(cli_t *cli, const char *id, cli_secrets_t *into)
{
    bool exists = false;
    int rc = def_exists(cli, id, &exists);
    if (rc != CLI_OK || !exists)
        return rc;
    cli_def_t d;
    cli_secrets_t s;
    cli_secrets_init(&s);
    rc = cli_def_read(cli, id, id, &d);
    if (rc == CLI_OK) {
        cli_secret_learn_def(&s, d.tree, d.params, d.env, true);
        rc = learn_records(cli, id, &s);
    }
    for (size_t i = 0; rc == CLI_OK && i < json_array_size(s.values); i++)
        cli_secret_add(into, json_string_value(json_array_get(s.values, i)));
    cli_secrets_free(&s);
    cli_def_free(&d);
    return rc;
}

/* The parent of stack `id` in `parent` ("" for a top-level stack). */
static int parent_of(cli_t *cli, const char *id, char parent[CV_ID_MAX])
{
    cli_stack_t st;
    bool found = false;
    int rc = cli_stack_read(cli, id, &st, &found);
    parent[0] = '\0';
    if (rc == CLI_OK && found)
        memcpy(parent, st.parent, CV_ID_MAX);
    cli_stack_free(&st);
    return rc;
}

int cli_secret_read(cli_t *cli, const char *id, const cli_def_t *d, cli_secrets_t *out)
{
    cli_secrets_init(out);
    cli_secret_learn_def(out, d->tree, d->params, d->env, true);
    int rc = learn_records(cli, id, out);
    char at[CV_ID_MAX], parent[CV_ID_MAX];
    snprintf(at, sizeof(at), "%s", id);
    for (int depth = 0; rc == CLI_OK && depth < ANCESTORS_MAX; depth++) {
        rc = parent_of(cli, at, parent);
        if (rc != CLI_OK || !parent[0])
            break;
        rc = learn_ancestor(cli, parent, out);
        memcpy(at, parent, CV_ID_MAX);
    }
    return rc;
}

int cli_secret_read_stack(cli_t *cli, const char *name, const char *id, cli_secrets_t *out)
{
    cli_def_t d;
    int rc = cli_def_read(cli, name, id, &d);
    if (rc == CLI_OK)
        rc = cli_secret_read(cli, id, &d, out);
    else
        cli_secrets_init(out);
    cli_def_free(&d);
    return rc;
}

int cli_secret_mask_reason(cli_t *cli, const char *id, char **reason)
{
    if (!*reason || !(*reason)[0])
        return CLI_OK;
    bool exists = false;
    int rc = def_exists(cli, id, &exists);
    if (rc != CLI_OK || !exists)
        return rc;
    cli_secrets_t secrets;
    rc = cli_secret_read_stack(cli, id, id, &secrets);
    char *masked = rc == CLI_OK ? cli_secret_mask_text(&secrets, *reason) : NULL;
    if (rc == CLI_OK && !masked)
        rc = cli_fail(CLI_SERVICE, "out of memory masking the reason of stack %s", id);
    if (masked) {
        free(*reason);
        *reason = masked;
    }
    cli_secrets_free(&secrets);
    return rc;
}

int cli_secret_mask_list(cli_t *cli, json_t *rows)
{
    size_t i;
    json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (!strstr(cli_field_str(row, "status"), "FAILED") || !cli_field_str(row, "reason")[0])
            continue;
        bool exists = false;
        int rc = def_exists(cli, cli_field_str(row, "id"), &exists);
        if (rc != CLI_OK)
            return rc;
        if (!exists)
            continue;
        cli_secrets_t secrets;
        rc = cli_secret_read_stack(cli, cli_field_str(row, "name"), cli_field_str(row, "id"),
                                   &secrets);
        if (rc == CLI_OK)
            cli_secret_mask_resource(&secrets, "", row);
        cli_secrets_free(&secrets);
        if (rc != CLI_OK)
            return rc;
    }
    return CLI_OK;
}
