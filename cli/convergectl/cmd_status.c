/*
 * convergectl status: a stack's status, progress, per-status resource
 * counts and outputs — a read, so it exits 0 whatever the stack's state.
 * For a stack in progress, also what its traversal waits on right now
 * (cli_waiting) and whether it stalled.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STALLED_AFTER 60.0 /* seconds without progress before a stack is called stalled */
#define TEXT_READY_MAX 10  /* ready resources named in text; the rest counted */

const char cli_status_usage[] =
    "usage: convergectl status NAME|ID [-o json] [--stalled-after SECONDS]\n"
    "\n"
    "Shows the status of the stack NAME (a nested stack's name as 'list --nested'\n"
    "prints it, or a stack's id ID: a nested stack's is the physical id of its\n"
    "parent's resource): status, reason, traversal, progress (graph nodes\n"
    "done/total), resources per status, outputs and whether a failed create or\n"
    "update is rolled back.\n"
    "\n"
    "For a stack in progress it also says what the traversal waits on now: each\n"
    "resource in action, for how long and why (an engine acting under worker W's\n"
    "lease; the observers waiting for its type, e.g. a TestResource's wait and the\n"
    "time left; a nested stack, named with its status; a hook; signals), the\n"
    "resources ready whose job no worker has taken yet, and how many wait for\n"
    "others. A stack whose work has not moved for longer than --stalled-after\n"
    "seconds is marked stalled.\n"
    "\n"
    "Exits 0 whatever the stack's status; 2 when there is no such stack.\n"
    "\n"
    "  -o, --output FORMAT  text (default) or json: {\"name\", \"id\", \"status\",\n"
    "                       \"reason\", \"traversal\", \"resources\": {STATUS: count},\n"
    "                       \"total\", \"done\", \"outputs\", \"created\", \"updated\",\n"
    "                       \"rollback\": true|false, \"parent\", \"parent_resource\"\n"
    "                       (\"\" for a top-level stack), \"nested\": {\"stacks\",\n"
    "                       \"resources\": {STATUS: count}, \"total\", \"done\"},\n"
    "                       \"stalled\": true|false, \"waiting\": null when settled,\n"
    "                       else {\"phase\": expanding|acting|finishing, \"reason\",\n"
    "                       \"idle\", \"stalled\", \"stalled_after\", \"in_action\":\n"
    "                       [{\"resource\", \"node\", \"traversal\",\n"
    "                       \"action\", \"type\", \"physical_id\", \"replaced\", \"since\",\n"
    "                       \"for\", \"waiting_on\": lease|type|child_stack|hook|signal,\n"
    "                       \"reason\", ...}], \"ready\": [{\"resource\", \"node\",\n"
    "                       \"reason\"}], \"blocked\": n}} (docs/keyspace.md lists\n"
    "                       every field) where nested sums every nested stack below\n"
    "                       this one; \"parameters\": {NAME: value}, the stack's\n"
    "                       values as Heat's stack show gives them: text (numbers\n"
    "                       as Python writes them, booleans True/False, lists\n"
    "                       joined with ',', json values as JSON text), hidden\n"
    "                       ones ******, with OS::stack_id, OS::stack_name and\n"
    "                       OS::project_id; \"waiting_hooks\":\n"
    "                       [{\"resource\", \"hook\", \"since\"}], the resources of the\n"
    "                       stack and its nested stacks (by path, PARENT/RESOURCE)\n"
    "                       paused on a hook (convergectl hook-clear)\n" CLI_SHOW_SECRETS_USAGE
    "      --stalled-after SECONDS\n"
    "                       a stack in progress whose work has not moved for this\n"
    "                       long is stalled (default 60)\n"
    "  -h, --help           show this help\n";

enum { OPT_STALLED_AFTER = 200 };

static const cli_opt_t status_opts[] = {CLI_HELP_OPT,
                                        CLI_OUTPUT_OPT,
                                        {OPT_STALLED_AFTER, "--stalled-after", NULL, true},
                                        CLI_SHOW_SECRETS_OPT,
                                        CLI_OPTS_END};

typedef struct status_args {
    const char *name;
    bool json;
    double stalled_after;
    bool show_secrets;
} status_args_t;

static int apply(const cli_args_t *a, int id, void *ctx)
{
    status_args_t *s = ctx;
    switch (id) {
    case CLI_OPT_OUTPUT:
        return cli_parse_output(a, &s->json);
    case OPT_STALLED_AFTER:
        return cli_parse_seconds(a, &s->stalled_after);
    case CLI_OPT_SHOW_SECRETS:
        s->show_secrets = true;
        return CLI_OK;
    default:
        return cli_take_word(a, &s->name, 1);
    }
}

/* ------------------------------------------------------------------------ */
/* Parameters and hooks (the stack's environment)                           */
/* ------------------------------------------------------------------------ */

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

/* ------------------------------------------------------------------------ */
/* JSON                                                                     */
/* ------------------------------------------------------------------------ */

static void print_json(const cli_stack_t *s, json_t *counts, json_t *nested, json_t *waiting,
                       json_t *extra)
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
    json_object_set_new(doc, "parent", cli_json_str(s->parent));
    json_object_set_new(doc, "parent_resource", cli_json_str(s->parent_resource));
    json_object_set(doc, "nested", nested);
    json_object_set_new(doc, "stalled",
                        json_boolean(json_is_true(json_object_get(waiting, "stalled"))));
    json_object_set_new(doc, "waiting", waiting ? json_incref(waiting) : json_null());
    json_object_update(doc, extra);
    cli_print_json(doc);
    json_decref(doc);
}

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

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

static const char *str(const json_t *obj, const char *field)
{
    const char *s = json_string_value(json_object_get(obj, field));
    return s ? s : "";
}

/* "  web   CREATE for 1.2s: the observer waits for ..." */
static void print_in_action(const json_t *list)
{
    size_t i, width = 0;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        size_t n =
            strlen(str(e, "resource")) + (json_is_true(json_object_get(e, "replaced")) ? 11 : 0);
        width = n > width ? n : width;
    }
    json_array_foreach(list, i, e)
    {
        char name[CV_NAME_MAX + 16], span[32] = "";
        snprintf(name, sizeof(name), "%s%s", str(e, "resource"),
                 json_is_true(json_object_get(e, "replaced")) ? " (replaced)" : "");
        const json_t *since = json_object_get(e, "for");
        if (json_is_number(since)) {
            char d[24];
            cli_format_duration(json_number_value(since), d, sizeof(d));
            snprintf(span, sizeof(span), " for %s", d);
        }
        const char *action = str(e, "action");
        printf("  %-*s  %s%s: %s\n", (int)width, name, action[0] ? action : "acting", span,
               str(e, "reason"));
    }
}

static void print_ready(const json_t *list)
{
    size_t n = json_array_size(list);
    printf("ready:      ");
    for (size_t i = 0; i < n && i < TEXT_READY_MAX; i++)
        printf("%s%s", i ? ", " : "", str(json_array_get(list, i), "resource"));
    if (n > TEXT_READY_MAX)
        printf(" and %zu more", n - TEXT_READY_MAX);
    printf(" (CHECK job published, no worker holds the lease yet)\n");
}

static void print_waiting(const json_t *w)
{
    const json_t *in_action = json_object_get(w, "in_action");
    const json_t *ready = json_object_get(w, "ready");
    long long blocked = (long long)json_integer_value(json_object_get(w, "blocked"));
    if (str(w, "reason")[0])
        printf("waiting:    %s\n", str(w, "reason"));
    else if (json_array_size(in_action) == 0)
        printf("waiting:    no resource is in action\n");
    else
        printf("waiting:\n");
    print_in_action(in_action);
    if (json_array_size(ready) > 0)
        print_ready(ready);
    if (blocked > 0)
        printf("blocked:    %lld waiting for others to be done first\n", blocked);
}

static void print_status_line(const cli_stack_t *s, const json_t *waiting)
{
    printf("status:     %s", s->status);
    if (json_is_true(json_object_get(waiting, "stalled"))) {
        char idle[24], after[24];
        cli_format_duration(json_number_value(json_object_get(waiting, "idle")), idle,
                            sizeof(idle));
        cli_format_duration(json_number_value(json_object_get(waiting, "stalled_after")), after,
                            sizeof(after));
        printf(" (stalled: no progress for %s, more than %s)", idle, after);
    }
    printf("\n");
}

static void print_text(const cli_stack_t *s, json_t *counts, json_t *nested, json_t *waiting)
{
    char created[40] = "-", updated[40] = "-";
    if (s->created > 0)
        cli_iso_time(s->created, created, sizeof(created));
    if (s->updated > 0)
        cli_iso_time(s->updated, updated, sizeof(updated));
    printf("name:       %s\n", s->name);
    printf("id:         %s\n", s->id);
    if (s->parent[0])
        printf("parent:     %s (resource %s)\n", s->parent, s->parent_resource);
    print_status_line(s, waiting);
    char *reason = cli_limit_hints(s->reason); /* the engines' hints, for a user */
    printf("reason:     %s\n", reason ? reason : s->reason);
    free(reason);
    printf("traversal:  %lld\n", s->traversal);
    printf("progress:   %lld/%lld\n", s->done, s->total);
    if (waiting)
        print_waiting(waiting);
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
    printf("outputs:%s\n", json_object_size(s->outputs) ? "" : "    none");
    cli_print_outputs(s->outputs, "  ");
}

/* ------------------------------------------------------------------------ */
/* The command                                                              */
/* ------------------------------------------------------------------------ */

/* The reason, what the traversal waits on and the parameters (in
 * *params, new) with the stack's secrets masked (cli_secret.h): a hidden
 * parameter's value, and a parameter a parent's secret filled. The outputs
 * show what they compute, as in Heat. */
static int mask_status(cli_t *cli, const char *id, const cli_def_t *def, cli_stack_t *s,
                       json_t **waiting, json_t **params)
{
    cli_secrets_t secrets;
    int rc = cli_secret_read(cli, id, def, &secrets);
    if (rc == CLI_OK) {
        char *reason = cli_secret_mask_text(&secrets, s->reason);
        if (!reason)
            rc = cli_fail(CLI_SERVICE, "out of memory masking the reason of stack %s", s->name);
        else {
            free(s->reason);
            s->reason = reason;
        }
    }
    if (rc == CLI_OK && *waiting) {
        json_t *masked = cli_secret_mask(&secrets, *waiting);
        json_decref(*waiting);
        *waiting = masked;
    }
    if (rc == CLI_OK) {
        json_t *shown = cli_secret_show_params(def->tree, def->params, s->id, s->name, false);
        *params = cli_secret_mask(&secrets, shown);
        json_decref(shown);
    }
    cli_secrets_free(&secrets);
    return rc;
}

static int show(cli_t *cli, const status_args_t *args)
{
    char id[CV_ID_MAX];
    int rc = cli_stack_resolve(cli, args->name, id);
    if (rc)
        return rc;
    cli_stack_t s;
    bool found = false;
    rc = cli_stack_read(cli, id, &s, &found);
    json_t *counts = NULL, *nested = NULL, *waiting = NULL;
    if (rc == CLI_OK && !found)
        rc = cli_fail(CLI_USAGE, "stack %s (%s) has no status record", args->name, id);
    if (rc == CLI_OK && !(counts = cli_stack_counts(cli, id)))
        rc = CLI_SERVICE;
    if (rc == CLI_OK && !(nested = cli_stack_nested(cli, id)))
        rc = CLI_SERVICE;
    if (rc == CLI_OK && !cli_stack_settled(&s))
        rc = cli_waiting_read(cli, args->name, id, args->stalled_after, &waiting);
    cli_def_t def;
    memset(&def, 0, sizeof(def));
    json_t *extra = json_object(), *hooks = NULL;
    if (rc == CLI_OK)
        rc = cli_def_read(cli, s.name, id, &def);
    json_t *params = NULL;
    if (rc == CLI_OK && !args->show_secrets)
        rc = mask_status(cli, id, &def, &s, &waiting, &params);
    if (rc == CLI_OK && args->json)
        json_object_set_new(
            extra, "parameters",
            params ? params : cli_secret_show_params(def.tree, def.params, s.id, s.name, true));
    else
        json_decref(params);
    if (rc == CLI_OK && args->json && !(hooks = waiting_hooks(cli, &s)))
        rc = CLI_SERVICE;
    json_object_set_new(extra, "waiting_hooks", hooks ? hooks : json_array());
    if (rc == CLI_OK && args->json)
        print_json(&s, counts, nested, waiting, extra);
    else if (rc == CLI_OK)
        print_text(&s, counts, nested, waiting);
    json_decref(extra);
    cli_def_free(&def);
    json_decref(counts);
    json_decref(nested);
    json_decref(waiting);
    cli_stack_free(&s);
    return rc;
}

int cli_cmd_status(cli_t *cli, int argc, char **argv)
{
    status_args_t args = {.stalled_after = STALLED_AFTER};
    int rc = cli_parse_args(argc, argv, argv[0], status_opts, apply, &args);
    if (rc == CLI_HELP) {
        fputs(cli_status_usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK && !args.name)
        rc = cli_usage_error(argv[0], "no stack name given");
    if (rc == CLI_OK)
        rc = cli_redis_connect(cli);
    return rc == CLI_OK ? show(cli, &args) : rc;
}
