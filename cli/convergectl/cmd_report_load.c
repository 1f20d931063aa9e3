/*
 * convergectl report-load NAME SERVICE INDEX METRIC=VALUE...: loads reported
 * for one replica of a Converge::Service (docs/crm.md "Dynamic load"). They
 * go into {cluster}:load:<svc>, field <index>, as the replica's whole set of
 * reported metrics with the time of the report; the cluster resource
 * manager's next pass counts them before the agent's measures and the
 * declared loads. The new values are merged with the stored ones under
 * WATCH, so two reports of one replica at once lose neither.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_contract.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char cli_report_load_usage[] =
    "usage: convergectl report-load NAME SERVICE INDEX METRIC=VALUE... [-o json]\n"
    "\n"
    "Reports the load of replica INDEX of the Converge::Service resource SERVICE\n"
    "of the stack NAME for one or more of the service's metrics (its `metrics`\n"
    "property). VALUE is a number of 0 or more; 'METRIC=' (no value) removes the\n"
    "metric's reported load. The values are kept, with the time of the report,\n"
    "beside those reported before for other metrics ({cluster}:load:<service id>,\n"
    "field INDEX) until a report removes them; the cluster resource manager\n"
    "counts a reported load before the load the node's agent measured and the\n"
    "load the service declares (docs/crm.md \"Dynamic load\"). A replica can also\n"
    "report its own loads in the file named by its CONVERGE_LOAD_FILE.\n"
    "\n"
    "  -o, --output FORMAT  text (default) or json: the replica's reported loads\n"
    "                       as stored, {METRIC: VALUE, ..., \"time\": Unix s}\n"
    "  -h, --help           show this help\n"
    "\n"
    "Exit status: 0 stored; 2 usage error, unknown stack, SERVICE is no\n"
    "Converge::Service resource of it (or it has no service yet), INDEX is no\n"
    "replica of it, METRIC none of its metrics, or VALUE not a number of 0 or\n"
    "more: nothing stored; 3 cannot reach Redis.\n";

#define CMD "report-load"
#define MAX_PAIRS 64
#define WATCH_TRIES 20

static const cli_opt_t report_load_opts[] = {CLI_HELP_OPT, CLI_OUTPUT_OPT, CLI_OPTS_END};

typedef struct report_args {
    const char *words[3]; /* the stack, the service, the index */
    const char *pairs[MAX_PAIRS];
    int npairs;
    bool json;
} report_args_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    report_args_t *out = ctx;
    if (id == CLI_OPT_OUTPUT)
        return cli_parse_output(a, &out->json);
    if (id != CLI_ARG_WORD)
        return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
    if (!out->words[2])
        return cli_take_word(a, out->words, 3);
    if (out->npairs == MAX_PAIRS)
        return cli_usage_error(a->cmd, "at most %d METRIC=VALUE at once", MAX_PAIRS);
    out->pairs[out->npairs++] = a->arg;
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* The arguments                                                            */
/* ------------------------------------------------------------------------ */

static int parse_index(const char *text, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!isdigit((unsigned char)text[0]) || *end || errno || v > 1000000)
        return cli_usage_error(CMD, "INDEX '%s' is not a replica index (a whole number, 0 or more)",
                               text);
    *out = v;
    return CLI_OK;
}

/* METRIC=VALUE into `changes` (metric -> number, or null to remove). */
static int parse_pair(const char *pair, json_t *changes)
{
    const char *eq = strchr(pair, '=');
    if (!eq)
        return cli_usage_error(CMD, "'%s': expected METRIC=VALUE", pair);
    if (eq == pair)
        return cli_usage_error(CMD, "'%s': no metric name before '='", pair);
    char metric[256];
    if ((size_t)(eq - pair) >= sizeof(metric))
        return cli_usage_error(CMD, "'%s': the metric name is too long", pair);
    memcpy(metric, pair, (size_t)(eq - pair));
    metric[eq - pair] = '\0';
    if (strcmp(metric, "time") == 0)
        return cli_usage_error(CMD, "'%s': 'time' is the time of the report, not a metric", pair);
    const char *value = eq + 1;
    if (!value[0]) {
        /* jansson refuses a key that is not UTF-8: no metric is named so. */
        if (json_object_set_new(changes, metric, json_null()) != 0)
            return cli_usage_error(CMD, "'%s': the metric name is not UTF-8", pair);
        return CLI_OK;
    }
    char *end;
    errno = 0;
    double d = strtod(value, &end);
    bool plain = strspn(value, "0123456789.eE+-") == strlen(value);
    if (!plain || *end || errno || !isfinite(d))
        return cli_usage_error(CMD, "'%s': the value '%s' of %s is not a number", pair, value,
                               metric);
    if (d < 0)
        return cli_usage_error(CMD, "'%s': the value of %s must be 0 or more", pair, metric);
    bool whole = strspn(value, "0123456789") == strlen(value) && d <= 9e15;
    if (json_object_set_new(changes, metric, whole ? json_integer((json_int_t)d) : json_real(d)))
        return cli_usage_error(CMD, "'%s': the metric name is not UTF-8", pair);
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* The service                                                              */
/* ------------------------------------------------------------------------ */

typedef struct target {
    char svc[512];
    long replicas;
    json_t *metrics; /* names, in the spec's order */
} target_t;

static int read_spec(cli_t *cli, const char *resource, target_t *t)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_SVC, NULL, 0, t->svc);
    const char *argv[] = {"HGET", key, "spec"};
    redisReply *r = cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 3, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    json_t *spec = r->type == REDIS_REPLY_STRING ? json_loadb(r->str, r->len, 0, NULL) : NULL;
    bool absent = r->type == REDIS_REPLY_NIL;
    freeReplyObject(r);
    if (absent)
        return cli_fail(CLI_USAGE, "%s: service %s (%s) is not in the cluster (deleted?)", CMD,
                        resource, t->svc);
    if (!json_is_object(spec)) {
        json_decref(spec);
        return cli_fail(CLI_SERVICE, "%s: the spec of service %s in %s is not a JSON object", CMD,
                        t->svc, key);
    }
    t->replicas = (long)json_integer_value(json_object_get(spec, "replicas"));
    t->metrics = json_array();
    size_t i;
    json_t *m;
    json_array_foreach(json_object_get(spec, "metrics"), i, m)
    {
        if (json_is_string(json_object_get(m, "name")))
            json_array_append(t->metrics, json_object_get(m, "name"));
    }
    json_decref(spec);
    return CLI_OK;
}

/* The service id and spec of the stack's resource. */
static int find_target(cli_t *cli, const report_args_t *p, target_t *t)
{
    char id[CV_ID_MAX];
    json_t *services = NULL;
    int rc = cli_stack_resolve(cli, p->words[0], id);
    if (rc == CLI_OK)
        rc = cli_live_stack_services(cli, p->words[0], id, p->words[1], &services);
    if (rc != CLI_OK)
        return rc;
    const char *svc = json_string_value(json_object_get(json_array_get(services, 0), "svc"));
    if (svc)
        snprintf(t->svc, sizeof(t->svc), "%s", svc);
    json_decref(services);
    if (!svc)
        return cli_fail(CLI_USAGE, "%s: resource %s of stack %s has no service yet (not created)",
                        CMD, p->words[1], p->words[0]);
    return read_spec(cli, p->words[1], t);
}

static bool has_metric(const target_t *t, const char *name)
{
    size_t i;
    json_t *m;
    json_array_foreach(t->metrics, i, m)
    {
        if (strcmp(json_string_value(m), name) == 0)
            return true;
    }
    return false;
}

static int check_against(const report_args_t *p, const target_t *t, long index,
                         const json_t *changes)
{
    if (index >= t->replicas)
        return t->replicas > 0
                   ? cli_fail(CLI_USAGE,
                              "%s: INDEX %ld is no replica of %s: its replicas are 0 to %ld", CMD,
                              index, p->words[1], t->replicas - 1)
                   : cli_fail(CLI_USAGE, "%s: INDEX %ld is no replica of %s: it has no replicas",
                              CMD, index, p->words[1]);
    const char *metric;
    json_t *v;
    json_object_foreach((json_t *)changes, metric, v)
    {
        if (has_metric(t, metric))
            continue;
        char *names = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&names, &len);
        size_t i;
        json_t *m;
        json_array_foreach(t->metrics, i, m)
        {
            if (f)
                fprintf(f, "%s%s", i ? ", " : "", json_string_value(m));
        }
        if (f)
            fclose(f);
        int rc = json_array_size(t->metrics)
                     ? cli_fail(CLI_USAGE, "%s: metric %s is not one of the metrics of %s (%s)",
                                CMD, metric, p->words[1], names ? names : "")
                     : cli_fail(CLI_USAGE, "%s: metric %s: service %s has no metrics", CMD, metric,
                                p->words[1]);
        free(names);
        return rc;
    }
    return CLI_OK;
}

/* ------------------------------------------------------------------------ */
/* The write                                                                */
/* ------------------------------------------------------------------------ */

/* The stored loads with `changes` applied and the time set; NULL when no
 * metric is left (the field is then removed). */
static json_t *merged(const redisReply *stored, const json_t *changes)
{
    json_t *loads =
        stored->type == REDIS_REPLY_STRING ? json_loadb(stored->str, stored->len, 0, NULL) : NULL;
    if (!json_is_object(loads)) {
        json_decref(loads);
        loads = json_object();
    }
    const char *metric;
    json_t *v;
    json_object_foreach((json_t *)changes, metric, v)
    {
        if (json_is_null(v))
            json_object_del(loads, metric);
        else
            json_object_set(loads, metric, v);
    }
    json_object_del(loads, "time");
    if (json_object_size(loads) == 0) {
        json_decref(loads);
        return NULL;
    }
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    json_object_set_new(loads, "time",
                        json_real(round((ts.tv_sec + ts.tv_nsec / 1e9) * 1e3) / 1e3));
    return loads;
}

/* One WATCH/HGET/MULTI/EXEC round: CLI_OK with *done when EXEC ran (then
 * *out is what was stored, or NULL when the field was removed). */
static int try_write(cli_t *cli, const char *key, const char *field, const json_t *changes,
                     bool *done, json_t **out)
{
    const char *watch[] = {"WATCH", key}, *hget[] = {"HGET", key, field}, *multi[] = {"MULTI"},
               *exec[] = {"EXEC"};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_STATUS), 2, watch, NULL);
    if (!r)
        return CLI_SERVICE;
    freeReplyObject(r);
    r = cli_redis_argv(cli, CLI_R_STRING_OR_NIL, 3, hget, NULL);
    if (!r)
        return CLI_SERVICE;
    *out = merged(r, changes);
    freeReplyObject(r);
    char *text = *out ? json_dumps(*out, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
    const char *hset[] = {"HSET", key, field, text}, *hdel[] = {"HDEL", key, field};
    r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_STATUS), 1, multi, NULL);
    freeReplyObject(r);
    redisReply *q =
        r ? cli_redis_argv(cli, CLI_R(REDIS_REPLY_STATUS), text ? 4 : 3, text ? hset : hdel, NULL)
          : NULL;
    freeReplyObject(q);
    free(text);
    if (!q)
        return CLI_SERVICE;
    r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY) | CLI_R(REDIS_REPLY_NIL), 1, exec, NULL);
    if (!r)
        return CLI_SERVICE;
    *done = r->type == REDIS_REPLY_ARRAY;
    freeReplyObject(r);
    return CLI_OK;
}

static int store(cli_t *cli, const target_t *t, long index, const json_t *changes, json_t **out)
{
    char key[CV_KEY_MAX], field[32];
    cv_key(key, sizeof(key), CV_KEY_LOAD, NULL, 0, t->svc);
    snprintf(field, sizeof(field), "%ld", index);
    for (int i = 0; i < WATCH_TRIES; i++) {
        bool done = false;
        *out = NULL;
        int rc = try_write(cli, key, field, changes, &done, out);
        if (rc != CLI_OK || done)
            return rc;
        json_decref(*out);
        *out = NULL;
    }
    return cli_fail(CLI_SERVICE, "%s: %s changed under every one of %d tries; try again", CMD, key,
                    WATCH_TRIES);
}

/* The answer: the replica's reported loads in the order of the service's
 * metrics. */
static void print_result(const report_args_t *p, const target_t *t, long index, const json_t *loads)
{
    if (p->json) {
        json_t *doc = loads ? json_incref((json_t *)loads) : json_object();
        cli_print_json(doc);
        json_decref(doc);
        return;
    }
    printf("replica %s-%ld.%s reports", p->words[1], index, p->words[0]);
    int n = 0;
    size_t i;
    json_t *m;
    json_array_foreach(t->metrics, i, m)
    {
        const json_t *v = json_object_get(loads, json_string_value(m));
        if (v)
            printf("%s %s %g", n++ ? "," : "", json_string_value(m), json_number_value(v));
    }
    printf("%s\n", n ? "" : " no load of its own");
}

static int report(cli_t *cli, const report_args_t *p)
{
    long index = 0;
    json_t *changes = json_object();
    int rc = parse_index(p->words[2], &index);
    for (int i = 0; rc == CLI_OK && i < p->npairs; i++)
        rc = parse_pair(p->pairs[i], changes);
    if (rc == CLI_OK)
        rc = cli_redis_connect(cli);
    target_t t = {.metrics = NULL};
    if (rc == CLI_OK)
        rc = find_target(cli, p, &t);
    if (rc == CLI_OK)
        rc = check_against(p, &t, index, changes);
    json_t *loads = NULL;
    if (rc == CLI_OK)
        rc = store(cli, &t, index, changes, &loads);
    if (rc == CLI_OK)
        print_result(p, &t, index, loads);
    json_decref(loads);
    json_decref(t.metrics);
    json_decref(changes);
    return rc;
}

int cli_cmd_report_load(cli_t *cli, int argc, char **argv)
{
    report_args_t p = {.npairs = 0};
    int rc = cli_parse_args(argc, argv, CMD, report_load_opts, apply_opt, &p);
    if (rc == CLI_HELP) {
        fputs(cli_report_load_usage, stdout);
        return CLI_OK;
    }
    if (rc != CLI_OK)
        return rc;
    if (!p.words[2])
        return cli_usage_error(CMD, "expected NAME SERVICE INDEX METRIC=VALUE...");
    if (p.npairs == 0)
        return cli_usage_error(CMD, "no METRIC=VALUE given");
    return report(cli, &p);
}
