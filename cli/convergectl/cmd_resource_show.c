/*
 * convergectl resource-show: one resource of a stack, all its record holds
 * — Heat's `openstack stack resource show` (its message for an unknown
 * resource), with the resolved properties and the type's private data that
 * Converge records beside the attributes.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cli_resource_show_usage[] =
    "usage: convergectl resource-show NAME|ID RESOURCE [-o json]\n"
    "\n"
    "Shows the resource RESOURCE of the stack NAME (or of the stack with id ID: a\n"
    "nested stack): its type, status, reason, physical id, the nested stack it is\n"
    "(template resources, OS::Heat::Stack, resource groups: then 'convergectl\n"
    "status|resources|events NESTED_STACK_ID' read that stack), its properties as\n"
    "resolved for its last action, its attributes, the type's private data, the\n"
    "resources it depends on and those that depend on it, and the replaced\n"
    "versions of it that await their deletion. A resource of the template that\n"
    "nothing was done to yet is INIT_COMPLETE with no properties (null). Exits 2\n"
    "when there is no such stack or resource (a resource whose condition is false\n"
    "is none, as in Heat).\n"
    "\n"
    "  -o, --output FORMAT  text (default) or json: {\"name\", \"stack\", \"stack_id\",\n"
    "                       \"type\", \"status\", \"action\", \"reason\", \"physical_id\",\n"
    "                       \"nested_stack_id\" (or null), \"properties\", \"attributes\",\n"
    "                       \"data\", \"depends_on\", \"required_by\", \"removed\",\n"
    "                       \"uuid\", \"version\", \"traversal\", \"started\", \"updated\",\n"
    "                       \"worker\", \"policy\", \"replaced\": [{\"uuid\", \"physical_id\",\n"
    "                       \"nested_stack_id\", \"type\", \"status\", \"properties\",\n"
    "                       \"attributes\", \"data\", \"policy\", \"started\"}]}\n"
    "\n"
    "Secrets are shown as ******: a property that reads a hidden parameter or a\n"
    "RandomString, RandomString's value, and those values wherever they appear.\n"
    "\n" CLI_SHOW_SECRETS_USAGE "  -h, --help           show this help\n";

static const cli_opt_t resource_show_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_SHOW_SECRETS_OPT,
                                               CLI_OPTS_END};

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */

/* HGETALL `kind` of the stack (the resource's record, the index) as an
 * object of its string fields; NULL on failure (reported). */
static json_t *read_hash(cli_t *cli, cv_key_kind_t kind, const char *id, const char *name)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), kind, id, 0, name);
    const char *argv[] = {"HGETALL", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (!r)
        return NULL;
    json_t *obj = NULL;
    if (cli_reply_is_hash(cli, r, key)) {
        obj = json_object();
        for (size_t i = 0; i + 1 < r->elements; i += 2)
            json_object_set_new(obj, r->element[i]->str,
                                cli_json_strn(r->element[i + 1]->str, r->element[i + 1]->len));
    }
    freeReplyObject(r);
    return obj;
}

static const char *field(const json_t *obj, const char *name)
{
    const char *s = json_string_value(json_object_get(obj, name));
    return s ? s : "";
}

/* The resources whose recorded version depends on `name` (the index). */
static json_t *required_by(const json_t *index, const char *name)
{
    json_t *out = json_array();
    const char *other;
    json_t *deps_text;
    json_object_foreach((json_t *)index, other, deps_text)
    {
        json_t *deps = cli_json_parse(json_string_value(deps_text), NULL);
        size_t i;
        json_t *d;
        json_array_foreach(deps, i, d)
        {
            if (json_is_string(d) && strcmp(json_string_value(d), name) == 0) {
                json_array_append_new(out, json_string(other));
                break;
            }
        }
        json_decref(deps);
    }
    return out;
}

/* ------------------------------------------------------------------------ */
/* The document                                                             */
/* ------------------------------------------------------------------------ */

static json_t *number_or_null(const char *text)
{
    return text[0] ? json_real(strtod(text, NULL)) : json_null();
}

/* A replaced version, as the record's `old` keeps it. */
static json_t *replaced_doc(const json_t *v, const json_t *children)
{
    const json_t *data = json_object_get(v, "data");
    const char *child = cli_nested_stack_id(data, children);
    json_t *doc = json_object();
    static const char *const strs[] = {"uuid", "physical_id", "status", "policy"};
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
        json_object_set_new(doc, strs[i], cli_json_str(field(v, strs[i])));
    json_object_set_new(doc, "type", cli_json_str(cli_reported_type(NULL, v)));
    json_object_set_new(doc, "nested_stack_id", child ? json_string(child) : json_null());
    json_object_set_new(doc, "properties", json_incref(json_object_get(v, "props")));
    json_t *attrs = json_deep_copy(json_object_get(v, "attrs"));
    cv_rtype_attrs_shown(attrs);
    json_object_set_new(doc, "attributes", attrs);
    json_object_set_new(doc, "data", json_incref(json_object_get(v, "data")));
    json_object_set(doc, "started", json_object_get(v, "started"));
    return doc;
}

/* The record's JSON field `name` parsed, or `fallback`. */
static json_t *parsed(const json_t *rec, const char *name, json_t *fallback)
{
    json_t *v = cli_json_parse(field(rec, name), fallback);
    return v ? v : json_null();
}

static void set_replaced(json_t *doc, const json_t *rec, const json_t *children)
{
    json_t *old = parsed(rec, "old", NULL), *list = json_array();
    size_t i;
    json_t *v;
    json_array_foreach(old, i, v)
    {
        json_array_append_new(list, replaced_doc(v, children));
    }
    json_object_set_new(doc, "replaced", list);
    json_decref(old);
}

typedef struct found {
    const char *stack, *id, *name;
    const json_t *def;      /* the template's entry, or NULL: the resource left it */
    const json_t *rec;      /* the record ({} when none) */
    const json_t *index;    /* resource -> its dependencies as JSON */
    const json_t *children; /* the stack's nested stacks */
} found_t;

static json_t *resource_doc(const found_t *f)
{
    json_t *doc = json_object(), *empty = json_object();
    bool recorded = json_object_size(f->rec) > 0;
    const char *type = cli_reported_type(f->def, f->rec);
    json_t *data = parsed(f->rec, "data", empty);
    const char *child = cli_nested_stack_id(data, f->children);
    json_object_set_new(doc, "name", cli_json_str(f->name));
    json_object_set_new(doc, "stack", cli_json_str(f->stack));
    json_object_set_new(doc, "stack_id", cli_json_str(f->id));
    json_object_set_new(doc, "type", cli_json_str(type));
    json_object_set_new(doc, "status",
                        cli_json_str(recorded ? field(f->rec, "status") : "INIT_COMPLETE"));
    json_object_set_new(doc, "action", cli_json_str(recorded ? field(f->rec, "action") : "INIT"));
    json_object_set_new(doc, "reason", cli_json_str(field(f->rec, "reason")));
    json_object_set_new(doc, "physical_id", cli_json_str(field(f->rec, "physical_id")));
    json_object_set_new(doc, "nested_stack_id", child ? json_string(child) : json_null());
    json_object_set_new(doc, "properties", recorded ? parsed(f->rec, "props", NULL) : json_null());
    json_t *attrs = parsed(f->rec, "attrs", empty);
    cv_rtype_attrs_shown(attrs);
    json_object_set_new(doc, "attributes", attrs);
    json_object_set_new(doc, "data", data);
    json_t *deps = cli_json_parse(field(f->index, f->name), NULL);
    json_object_set_new(doc, "depends_on", json_is_array(deps) ? deps : json_array());
    if (!json_is_array(deps))
        json_decref(deps);
    json_object_set_new(doc, "required_by", required_by(f->index, f->name));
    json_object_set_new(doc, "removed", json_boolean(f->def == NULL));
    json_object_set_new(doc, "uuid", cli_json_str(field(f->rec, "uuid")));
    json_object_set_new(doc, "version", json_integer(strtoll(field(f->rec, "version"), NULL, 10)));
    json_object_set_new(doc, "traversal",
                        json_integer(strtoll(field(f->rec, "traversal"), NULL, 10)));
    json_object_set_new(doc, "started", number_or_null(field(f->rec, "started")));
    json_object_set_new(doc, "updated", number_or_null(field(f->rec, "updated")));
    json_object_set_new(doc, "worker", cli_json_str(field(f->rec, "worker")));
    json_object_set_new(doc, "policy", cli_json_str(field(f->rec, "policy")));
    set_replaced(doc, f->rec, f->children);
    json_decref(empty);
    return doc;
}

static void print_text(const json_t *doc)
{
    static const char *const fields[] = {
        "name",        "stack",           "type",       "status",     "reason",
        "physical_id", "nested_stack_id", "properties", "attributes", "data",
        "depends_on",  "required_by",     "uuid",       "traversal",  "worker",
        "policy",      "replaced",        NULL};
    cli_show_fields(doc, fields);
}

/* ------------------------------------------------------------------------ */
/* The command                                                              */
/* ------------------------------------------------------------------------ */

/* The document and its replaced versions with the stack's secrets masked
 * (cli_secret.h). */
static int mask_doc(cli_t *cli, const char *id, const cli_def_t *d, const char *name, json_t *doc)
{
    cli_secrets_t secrets;
    int rc = cli_secret_read(cli, id, d, &secrets);
    if (rc == CLI_OK) {
        cli_secret_mask_resource(&secrets, name, doc);
        size_t i;
        json_t *old;
        json_array_foreach(json_object_get(doc, "replaced"), i, old)
        {
            cli_secret_mask_resource(&secrets, name, old);
        }
    }
    cli_secrets_free(&secrets);
    return rc;
}

static int show(cli_t *cli, const cli_show_args_t *a)
{
    char id[CV_ID_MAX];
    int rc = cli_stack_resolve(cli, a->name, id);
    if (rc)
        return rc;
    cli_def_t d;
    cli_stack_t s;
    bool exists = false;
    json_t *rec = NULL, *index = NULL, *children = NULL;
    rc = cli_stack_read(cli, id, &s, &exists);
    if (rc == CLI_OK)
        rc = cli_def_read(cli, a->name, id, &d);
    else
        memset(&d, 0, sizeof(d));
    if (rc == CLI_OK && !((rec = read_hash(cli, CV_KEY_RES, id, a->word)) &&
                          (index = read_hash(cli, CV_KEY_INDEX, id, NULL)) &&
                          (children = cli_stack_children(cli, id))))
        rc = CLI_SERVICE;
    /* A resource its condition leaves out is not in the stack, as in Heat
     * (but for a record still awaiting cleanup). */
    json_t *running = rc == CLI_OK ? cli_def_resources(&d) : NULL;
    const json_t *def = json_object_get(running, a->word);
    if (rc == CLI_OK && !def && json_object_size(rec) == 0)
        rc = cli_fail(CLI_USAGE, "The Resource (%s) could not be found in Stack %s.", a->word,
                      s.name[0] ? s.name : a->name);
    if (rc == CLI_OK) {
        found_t f = {s.name[0] ? s.name : a->name, id, a->word, def, rec, index, children};
        json_t *doc = resource_doc(&f);
        if (!a->show_secrets)
            rc = mask_doc(cli, id, &d, a->word, doc);
        if (rc == CLI_OK && a->json)
            cli_print_json(doc);
        else if (rc == CLI_OK)
            print_text(doc);
        json_decref(doc);
    }
    json_decref(running);
    json_decref(rec);
    json_decref(index);
    json_decref(children);
    cli_def_free(&d);
    cli_stack_free(&s);
    return rc;
}

int cli_cmd_resource_show(cli_t *cli, int argc, char **argv)
{
    cli_show_args_t a;
    int rc = cli_show_parse(cli, argc, argv, resource_show_opts, cli_resource_show_usage, 2,
                            "resource name", &a);
    if (rc == CLI_HELP)
        return CLI_OK;
    return rc == CLI_OK ? show(cli, &a) : rc;
}
