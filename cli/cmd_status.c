/*
 * convergectl status: a stack's status, progress, per-status resource
 * counts and outputs — a read, so it exits 0 whatever the stack's state.
 */
#include "cli_commands.h"
#include "cli_output.h"
#include "cli_stack.h"
#include "cli_traversal.h"

#include "cv_keys.h"
#include "cv_template.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char cli_status_usage[] =
    "usage: convergectl status NAME [-o json]\n"
    "\n"
    "Shows the status of the stack NAME: status, reason, traversal, progress\n"
    "(graph nodes done/total), resources per status, outputs and whether a failed\n"
    "create or update is rolled back. Exits 0 whatever the stack's status; 2 when\n"
    "there is no such stack.\n"
    "\n"
    "  -o, --output FORMAT  text (default) or json: {\"name\", \"id\", \"status\",\n"
    "                       \"reason\", \"traversal\", \"resources\": {STATUS: count},\n"
    "                       \"total\", \"done\", \"outputs\", \"created\", \"updated\",\n"
    "                       \"rollback\": true|false, \"nested\": {\"stacks\",\n"
    "                       \"resources\": {STATUS: count}, \"total\", \"done\"},\n"
    "                       \"parameters\": {NAME: value}} where nested sums every\n"
    "                       nested stack below this one and parameters are the\n"
    "                       stack's values (hidden ones shown as ******), and\n"
    "                       \"waiting_hooks\": [{\"resource\", \"hook\", \"since\"}], the\n"
    "                       resources paused on a hook (convergectl hook-clear)\n"
    "  -h, --help           show this help\n";

static const cli_opt_t status_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_OPTS_END};

/* The template declares the parameter hidden (a boolean as Heat reads one). */
static bool is_hidden(const json_t *decl)
{
    const json_t *flag = json_object_get(decl, "hidden");
    const char *text = json_string_value(flag);
    return json_is_true(flag) || (json_is_integer(flag) && json_integer_value(flag) == 1) ||
           (text && (strcasecmp(text, "true") == 0 || strcasecmp(text, "yes") == 0 ||
                     strcasecmp(text, "on") == 0 || strcmp(text, "1") == 0 ||
                     strcasecmp(text, "t") == 0 || strcasecmp(text, "y") == 0));
}

/* The stack's parameter values as Heat's stack show gives them: a hidden
 * one's value is never shown. A new object. */
static json_t *shown_parameters(const cli_def_t *d)
{
    json_t *out = json_object();
    const json_t *decls = json_object_get(d->tree, "parameters");
    const char *name;
    json_t *v;
    json_object_foreach(d->params, name, v)
    {
        bool hidden = is_hidden(json_object_get(decls, name));
        json_object_set_new(out, name, hidden ? json_string("******") : json_incref(v));
    }
    return out;
}

/* Appends the resources of stack `id`'s traversal `traversal` paused on a
 * hook (the hooks hash, hook_wait.lua) to `out` as {"resource", "hook",
 * "since"}, named by their path from the stack shown (`prefix`), then
 * those of its nested stacks. CLI_OK or CLI_SERVICE. */
static int hooks_of(cli_t *cli, const char *id, long long traversal, const char *prefix, int depth,
                    json_t *out)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_HOOKS, id, 0, NULL);
    const char *argv[] = {"HGETALL", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    for (size_t i = 0; i + 1 < r->elements; i += 2) {
        json_t *e = json_loadb(r->element[i + 1]->str, r->element[i + 1]->len, 0, NULL);
        const char *hook = json_string_value(json_object_get(e, "waiting"));
        const char *trav = json_string_value(json_object_get(e, "traversal"));
        const char *since = json_string_value(json_object_get(e, "since"));
        if (hook && trav && strtoll(trav, NULL, 10) == traversal)
            json_array_append_new(out, json_pack("{s:s+, s:s, s:f}", "resource", prefix,
                                                 r->element[i]->str, "hook", hook, "since",
                                                 since ? atof(since) : 0.0));
        json_decref(e);
    }
    freeReplyObject(r);
    if (depth >= CV_TEMPLATE_MAX_DEPTH * 2)
        return CLI_OK;
    cv_key(key, sizeof(key), CV_KEY_CHILDREN, id, 0, NULL);
    const char *members[] = {"SMEMBERS", key};
    if (!(r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, members, NULL)))
        return CLI_SERVICE;
    int rc = CLI_OK;
    for (size_t i = 0; rc == CLI_OK && i < r->elements; i++) {
        cli_stack_t child;
        bool found = false;
        rc = cli_stack_read(cli, r->element[i]->str, &child, &found);
        char path[CV_NAME_MAX * 4] = "", skey[CV_KEY_MAX];
        cv_key(skey, sizeof(skey), CV_KEY_STACK, r->element[i]->str, 0, NULL);
        const char *hget[] = {"HGET", skey, "parent_resource"};
        redisReply *pr = rc == CLI_OK && found && strstr(child.status, "_IN_PROGRESS")
                             ? cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 3, hget, NULL)
                             : NULL;
        if (pr && pr->type == REDIS_REPLY_STRING) {
            snprintf(path, sizeof(path), "%s%s/", prefix, pr->str);
            rc = hooks_of(cli, child.id, child.traversal, path, depth + 1, out);
        }
        if (pr)
            freeReplyObject(pr);
        cli_stack_free(&child);
    }
    freeReplyObject(r);
    return rc;
}

static json_t *waiting_hooks(cli_t *cli, const cli_stack_t *s)
{
    json_t *out = json_array();
    if (hooks_of(cli, s->id, s->traversal, "", 0, out) == CLI_OK)
        return out;
    json_decref(out);
    return NULL;
}

static void print_json(const cli_stack_t *s, json_t *counts, json_t *nested, json_t *extra)
{
    json_t *doc = json_object();
    json_object_set_new(doc, "name", cli_json_str(s->name));
    json_object_set_new(doc, "id", cli_json_str(s->id));
    json_object_set_new(doc, "status", cli_json_str(s->status));
    json_object_set_new(doc, "reason", cli_json_str(s->reason));
    json_object_set_new(doc, "traversal", json_integer(s->traversal));
    json_object_set(doc, "resources", counts);
    json_object_set_new(doc, "total", json_integer(s->total));
    json_object_set_new(doc, "done", json_integer(s->done));
    json_object_set(doc, "outputs", s->outputs);
    json_object_set_new(doc, "created", json_real(s->created));
    json_object_set_new(doc, "updated", json_real(s->updated));
    json_object_set_new(doc, "rollback", json_boolean(s->rollback));
    json_object_set(doc, "nested", nested);
    json_object_update(doc, extra);
    cli_print_json(doc);
    json_decref(doc);
}

static void print_counts(const char *label, json_t *counts)
{
    printf("%s", label);
    if (json_object_size(counts) == 0)
        printf("none");
    const char *status, *sep = "";
    json_t *n;
    json_object_foreach(counts, status, n)
    {
        printf("%s%s %lld", sep, status, (long long)json_integer_value(n));
        sep = ", ";
    }
    printf("\n");
}

static void print_text(const cli_stack_t *s, json_t *counts, json_t *nested, const json_t *hooks)
{
    char created[40] = "-", updated[40] = "-";
    if (s->created > 0)
        cli_iso_time(s->created, created, sizeof(created));
    if (s->updated > 0)
        cli_iso_time(s->updated, updated, sizeof(updated));
    printf("name:       %s\n", s->name);
    printf("id:         %s\n", s->id);
    printf("status:     %s\n", s->status);
    printf("reason:     %s\n", s->reason);
    printf("traversal:  %lld\n", s->traversal);
    printf("progress:   %lld/%lld\n", s->done, s->total);
    print_counts("resources:  ", counts);
    if (json_integer_value(json_object_get(nested, "stacks")) > 0) {
        printf("nested:     %lld stacks, progress %lld/%lld\n",
               (long long)json_integer_value(json_object_get(nested, "stacks")),
               (long long)json_integer_value(json_object_get(nested, "done")),
               (long long)json_integer_value(json_object_get(nested, "total")));
        print_counts("            ", json_object_get(nested, "resources"));
    }
    printf("created:    %s\n", created);
    printf("updated:    %s\n", updated);
    printf("rollback:   %s\n", s->rollback ? "enabled" : "disabled");
    size_t i;
    const json_t *h;
    json_array_foreach(hooks, i, h)
    {
        char since[40];
        cli_iso_time(json_real_value(json_object_get(h, "since")), since, sizeof(since));
        printf("waiting:    %s on hook %s since %s (convergectl hook-clear %s %s)\n",
               json_string_value(json_object_get(h, "resource")),
               json_string_value(json_object_get(h, "hook")), since, s->name,
               json_string_value(json_object_get(h, "resource")));
    }
    printf("outputs:%s\n", json_object_size(s->outputs) ? "" : "    none");
    cli_print_outputs(s->outputs, "  ");
}

static int show(cli_t *cli, const cli_stack_args_t *args)
{
    char id[CV_ID_MAX];
    int rc = cli_lookup(cli, args->name, id);
    if (rc)
        return rc;
    cli_stack_t s;
    bool found = false;
    rc = cli_stack_read(cli, id, &s, &found);
    json_t *counts = NULL, *nested = NULL;
    if (rc == CLI_OK && !found)
        rc = cli_fail(CLI_USAGE, "stack %s (%s) has no status record", args->name, id);
    if (rc == CLI_OK && !(counts = cli_stack_counts(cli, id)))
        rc = CLI_SERVICE;
    if (rc == CLI_OK && !(nested = cli_stack_nested(cli, id)))
        rc = CLI_SERVICE;
    cli_def_t def;
    memset(&def, 0, sizeof(def));
    json_t *extra = json_object(), *hooks = NULL;
    if (rc == CLI_OK && args->json && (rc = cli_def_read(cli, args->name, id, &def)) == CLI_OK)
        json_object_set_new(extra, "parameters", shown_parameters(&def));
    if (rc == CLI_OK && !(hooks = waiting_hooks(cli, &s)))
        rc = CLI_SERVICE;
    json_object_set_new(extra, "waiting_hooks", hooks ? hooks : json_array());
    if (rc == CLI_OK && args->json)
        print_json(&s, counts, nested, extra);
    else if (rc == CLI_OK)
        print_text(&s, counts, nested, json_object_get(extra, "waiting_hooks"));
    json_decref(counts);
    json_decref(nested);
    json_decref(extra);
    cli_def_free(&def);
    cli_stack_free(&s);
    return rc;
}

int cli_cmd_status(cli_t *cli, int argc, char **argv)
{
    static const cli_stack_cmd_t cmd = {status_opts, cli_status_usage, 0, show};
    return cli_run_stack_cmd(cli, argc, argv, &cmd);
}
