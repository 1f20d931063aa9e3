/*
 * convergectl resources: every resource of a stack's stored template, in
 * template order, with its record (status, reason, physical id,
 * attributes); then the resources that left the definition but still have
 * a record (removed, awaiting cleanup), by name. Each resource is followed
 * by the versions it replaced that await cleanup (the record's `old`).
 * Records are read with pipelined HGETALLs, a batch at a time, so a stack
 * of 10,000 resources costs a few round trips.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIPELINE_BATCH 1000

const char cli_resources_usage[] =
    "usage: convergectl resources NAME|ID [-o json]\n"
    "\n"
    "Lists the resources of the stack NAME (a nested stack's name as 'list\n"
    "--nested' prints it, or a stack's id ID: a nested stack's is the physical id\n"
    "of its parent's resource) in template order: name, type, status\n"
    "(INIT_COMPLETE when nothing was done to it yet), reason, physical id and, in\n"
    "JSON, attributes. Then the resources that left the template but are not\n"
    "deleted yet, shown as 'NAME (removed: awaiting cleanup)'. Below a resource,\n"
    "each older version of it that was replaced and awaits its deletion, shown as\n"
    "'NAME (replaced)'.\n"
    "\n"
    "  -o, --output FORMAT  text (default) or json: a list of {\"name\", \"type\",\n"
    "                       \"status\", \"reason\", \"physical_id\", \"nested_stack_id\",\n"
    "                       \"attributes\", \"replaced\": false, \"removed\": true|false}\n"
    "                       and, for a replaced version, {\"name\", \"replaced\": true,\n"
    "                       \"removed\", \"type\", \"status\", \"reason\": \"\",\n"
    "                       \"physical_id\", \"nested_stack_id\", \"attributes\"};\n"
    "                       nested_stack_id is the id of the stack a template\n"
    "                       resource, OS::Heat::Stack or resource group made (null\n"
    "                       for other resources): 'convergectl resources ID' lists\n"
    "                       its own resources\n"
    "                       (secrets among the attributes and reasons, as RandomString's\n"
    "                       value, shown as ******)\n" CLI_SHOW_SECRETS_USAGE
    "  -h, --help           show this help\n";

static const cli_opt_t resources_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_SHOW_SECRETS_OPT,
                                           CLI_OPTS_END};

/* The resources of the stored template that run (cli_def_resources). */
static int load_template_resources(cli_t *cli, const char *name, const char *id, json_t **out)
{
    cli_def_t d;
    int rc = cli_def_read(cli, name, id, &d);
    json_t *resources = rc == CLI_OK ? cli_def_resources(&d) : NULL;
    cli_def_free(&d);
    if (rc == CLI_OK && !json_is_object(resources))
        rc = cli_fail(CLI_SERVICE, "stack %s (%s): the stored template's resources are not a map",
                      name, id);
    if (rc == CLI_OK)
        *out = json_incref(resources);
    json_decref(resources);
    return rc;
}

/* The nested stack of a version whose data is the text `data`: a stack
 * id, or null. */
static json_t *nested_of(const char *data, const json_t *children)
{
    json_t *d = cli_json_parse(data, NULL);
    const char *child = cli_nested_stack_id(d, children);
    json_t *v = child ? json_string(child) : json_null();
    json_decref(d);
    return v;
}

/* One resource's row from its template entry (NULL when it left the
 * template) and its record (HGETALL). */
static json_t *resource_row(const char *name, const json_t *def, const redisReply *rec,
                            const json_t *children)
{
    json_t *row = json_object(), *types = json_object();
    json_object_set_new(row, "name", cli_json_str(name));
    json_object_set_new(row, "status", json_string("INIT_COMPLETE"));
    json_object_set_new(row, "reason", json_string(""));
    json_object_set_new(row, "physical_id", json_string(""));
    json_object_set_new(row, "nested_stack_id", json_null());
    json_t *empty = json_object();
    json_object_set(row, "attributes", empty);
    json_object_set_new(row, "replaced", json_false());
    json_object_set_new(row, "removed", json_boolean(def == NULL));
    for (size_t i = 0; i + 1 < rec->elements; i += 2) {
        const char *field = rec->element[i]->str;
        const redisReply *v = rec->element[i + 1];
        if (strcmp(field, "attrs") == 0) {
            json_t *attrs = cli_json_parse(v->str, empty);
            cv_rtype_attrs_shown(attrs);
            json_object_set_new(row, "attributes", attrs);
        } else if (strcmp(field, "data") == 0)
            json_object_set_new(row, "nested_stack_id", nested_of(v->str, children));
        else if (strcmp(field, "physical_id") == 0 || strcmp(field, "status") == 0 ||
                 strcmp(field, "reason") == 0)
            json_object_set_new(row, field, cli_json_strn(v->str, v->len));
        else if (strcmp(field, "type") == 0 || strcmp(field, "declared_type") == 0)
            json_object_set_new(types, field, cli_json_strn(v->str, v->len));
    }
    json_object_set_new(row, "type", cli_json_str(cli_reported_type(def, types)));
    json_decref(types);
    json_decref(empty);
    return row;
}

static json_t *entry_string(const json_t *entry, const char *field)
{
    const char *v = json_string_value(json_object_get(entry, field));
    return cli_json_str(v ? v : "");
}

/* The rows of the replaced versions listed in the record's `old` field. */
static void append_replaced(json_t *rows, const char *name, bool removed, const redisReply *rec,
                            const json_t *children)
{
    json_t *old = NULL;
    for (size_t i = 0; i + 1 < rec->elements && !old; i += 2)
        if (strcmp(rec->element[i]->str, "old") == 0)
            old = cli_json_parse(rec->element[i + 1]->str, NULL);
    size_t i;
    json_t *entry;
    json_array_foreach(old, i, entry)
    {
        json_t *attrs = json_object_get(entry, "attrs");
        cv_rtype_attrs_shown(attrs);
        json_t *row = json_object();
        json_object_set_new(row, "name", cli_json_str(name));
        json_object_set_new(row, "replaced", json_true());
        json_object_set_new(row, "removed", json_boolean(removed));
        json_object_set_new(row, "type", cli_json_str(cli_reported_type(NULL, entry)));
        json_object_set_new(row, "status", entry_string(entry, "status"));
        json_object_set_new(row, "reason", json_string(""));
        json_object_set_new(row, "physical_id", entry_string(entry, "physical_id"));
        const char *child = cli_nested_stack_id(json_object_get(entry, "data"), children);
        json_object_set_new(row, "nested_stack_id", child ? json_string(child) : json_null());
        json_object_set_new(row, "attributes",
                            json_is_object(attrs) ? json_incref(attrs) : json_object());
        json_array_append_new(rows, row);
    }
    json_decref(old);
}

/* Sends HGETALL res:<name> for names[from, from + n), then reads the
 * replies in order, appending the rows of each resource to `rows`. A
 * removed resource whose record is gone meanwhile has no row. */
static int fetch_batch(cli_t *cli, const char *id, const json_t *names, const json_t *resources,
                       const json_t *children, size_t from, size_t n, json_t *rows)
{
    redisContext *conn = NULL;
    for (size_t i = from; i < from + n; i++) {
        char key[CV_KEY_MAX];
        cv_key(key, sizeof(key), CV_KEY_RES, id, 0, json_string_value(json_array_get(names, i)));
        const char *argv[] = {"HGETALL", key};
        /* the keys of one stack: one slot, one connection */
        conn = cv_redis_sync_context(cli->redis, key);
        if (!conn)
            return cli_fail(CLI_SERVICE, "%s", cv_redis_sync_error(cli->redis));
        if (redisAppendCommandArgv(conn, 2, argv, NULL) != REDIS_OK)
            return cli_fail(CLI_SERVICE, "out of memory queueing Redis commands");
    }
    for (size_t i = from; i < from + n; i++) {
        const char *name = json_string_value(json_array_get(names, i));
        const json_t *def = json_object_get(resources, name);
        void *reply = NULL;
        if (redisGetReply(conn, &reply) != REDIS_OK)
            reply = NULL;
        redisReply *r = cli_redis_check(cli, reply, CLI_R(REDIS_REPLY_ARRAY), "HGETALL res");
        if (!r || !cli_reply_is_hash(cli, r, name)) {
            freeReplyObject(r);
            return CLI_SERVICE; /* the connection is dropped with the rest unread */
        }
        if (def || r->elements > 0) {
            json_array_append_new(rows, resource_row(name, def, r, children));
            append_replaced(rows, name, def == NULL, r, children);
        }
        freeReplyObject(r);
    }
    return CLI_OK;
}

static int fetch_rows(cli_t *cli, const char *id, const json_t *names, const json_t *resources,
                      json_t *rows)
{
    json_t *children = cli_stack_children(cli, id);
    if (!children)
        return CLI_SERVICE;
    size_t total = json_array_size(names);
    for (size_t at = 0; at < total; at += PIPELINE_BATCH) {
        size_t n = total - at < PIPELINE_BATCH ? total - at : PIPELINE_BATCH;
        int rc = fetch_batch(cli, id, names, resources, children, at, n, rows);
        if (rc) {
            json_decref(children);
            return rc;
        }
    }
    json_decref(children);
    return CLI_OK;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The names to list: the template's resources in order, then those that
 * have a record (the index hash) but left the template, sorted. */
static int list_names(cli_t *cli, const char *id, const json_t *resources, json_t **out)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_INDEX, id, 0, NULL);
    const char *argv[] = {"HKEYS", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    json_t *names = json_array();
    const char *name;
    json_t *def;
    json_object_foreach((json_t *)resources, name, def)
    {
        json_array_append_new(names, cli_json_str(name));
    }
    const char **removed = calloc(r->elements ? r->elements : 1, sizeof(*removed));
    if (!removed) {
        json_decref(names);
        freeReplyObject(r);
        return cli_fail(CLI_SERVICE, "out of memory listing %s", key);
    }
    size_t nremoved = 0;
    for (size_t i = 0; i < r->elements; i++)
        if (r->element[i]->type == REDIS_REPLY_STRING &&
            !json_object_get(resources, r->element[i]->str))
            removed[nremoved++] = r->element[i]->str;
    qsort(removed, nremoved, sizeof(*removed), by_name);
    for (size_t i = 0; i < nremoved; i++)
        json_array_append_new(names, cli_json_str(removed[i]));
    free(removed);
    freeReplyObject(r);
    *out = names;
    return CLI_OK;
}

static void print_text(const json_t *rows)
{
    json_t *table = json_array();
    json_array_append_new(table,
                          json_pack("[sssss]", "NAME", "TYPE", "STATUS", "PHYSICAL ID", "REASON"));
    size_t i;
    json_t *r;
    json_array_foreach(rows, i, r)
    {
        const char *name = json_string_value(json_object_get(r, "name"));
        const char *mark = json_is_true(json_object_get(r, "replaced")) ? " (replaced)"
                           : json_is_true(json_object_get(r, "removed"))
                               ? " (removed: awaiting cleanup)"
                               : "";
        json_t *line = json_array();
        json_array_append_new(line, json_sprintf("%s%s", name, mark));
        static const char *const cols[] = {"type", "status", "physical_id", "reason"};
        for (size_t c = 0; c < 4; c++)
            json_array_append(line, json_object_get(r, cols[c]));
        json_array_append_new(table, line);
    }
    cli_print_table(table);
    json_decref(table);
}

/* The rows with the stack's secrets masked (cli_secret.h). */
static int mask_rows(cli_t *cli, const char *name, const char *id, json_t *rows)
{
    cli_secrets_t secrets;
    int rc = cli_secret_read_stack(cli, name, id, &secrets);
    size_t i;
    json_t *row;
    json_array_foreach(rc == CLI_OK ? rows : NULL, i, row)
    {
        cli_secret_mask_resource(&secrets, json_string_value(json_object_get(row, "name")), row);
    }
    cli_secrets_free(&secrets);
    return rc;
}

static int list(cli_t *cli, const cli_stack_args_t *args)
{
    char id[CV_ID_MAX];
    json_t *resources = NULL, *names = NULL, *rows = json_array();
    int rc = cli_stack_resolve(cli, args->name, id);
    if (rc == CLI_OK)
        rc = load_template_resources(cli, args->name, id, &resources);
    if (rc == CLI_OK)
        rc = list_names(cli, id, resources, &names);
    if (rc == CLI_OK)
        rc = fetch_rows(cli, id, names, resources, rows);
    if (rc == CLI_OK && !args->show_secrets)
        rc = mask_rows(cli, args->name, id, rows);
    if (rc == CLI_OK && args->json)
        cli_print_json(rows);
    else if (rc == CLI_OK)
        print_text(rows);
    json_decref(resources);
    json_decref(names);
    json_decref(rows);
    return rc;
}

int cli_cmd_resources(cli_t *cli, int argc, char **argv)
{
    static const cli_stack_cmd_t cmd = {resources_opts, cli_resources_usage, 0, list};
    return cli_run_stack_cmd(cli, argc, argv, &cmd);
}
