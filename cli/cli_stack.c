/*
 * Reading, printing and waiting on a stack's status record.
 */
#include "cli_stack.h"

#include "cv_keys.h"
#include "cv_template.h"

#include "cv_keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLL_MS 100
/* How long a failure that the workers are to roll back may stay FAILED
 * before the wait believes no rollback is coming. */
#define ROLLBACK_GRACE 10.0

/* ------------------------------------------------------------------------ */
/* Reading                                                                  */
/* ------------------------------------------------------------------------ */

static void set_field(cli_stack_t *s, const char *field, const char *value)
{
    if (strcmp(field, "name") == 0)
        snprintf(s->name, sizeof(s->name), "%s", value);
    else if (strcmp(field, "status") == 0)
        snprintf(s->status, sizeof(s->status), "%s", value);
    else if (strcmp(field, "action") == 0)
        snprintf(s->action, sizeof(s->action), "%s", value);
    else if (strcmp(field, "rollback") == 0)
        s->rollback = strcmp(value, "1") == 0;
    else if (strcmp(field, "reason") == 0 && !s->reason)
        s->reason = strdup(value);
    else if (strcmp(field, "traversal") == 0)
        s->traversal = strtoll(value, NULL, 10);
    else if (strcmp(field, "total") == 0)
        s->total = strtoll(value, NULL, 10);
    else if (strcmp(field, "done") == 0)
        s->done = strtoll(value, NULL, 10);
    else if (strcmp(field, "created") == 0)
        s->created = strtod(value, NULL);
    else if (strcmp(field, "updated") == 0)
        s->updated = strtod(value, NULL);
    else if (strcmp(field, "outputs") == 0 && !s->outputs)
        s->outputs = json_loads(value, 0, NULL);
}

int cli_stack_read(cli_t *cli, const char *id, cli_stack_t *s, bool *found)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->id, sizeof(s->id), "%s", id);
    char key[CV_KEY_MAX];
    cv_key_stack(key, sizeof(key), id, "stack");
    const char *argv[] = {"HGETALL", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (!r || !cli_reply_is_hash(cli, r, key)) {
        freeReplyObject(r);
        return CLI_SERVICE;
    }
    *found = r->elements > 0;
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        set_field(s, r->element[i]->str, r->element[i + 1]->str);
    freeReplyObject(r);
    if (!json_is_object(s->outputs)) {
        json_decref(s->outputs);
        s->outputs = json_object();
    }
    if (!s->reason)
        s->reason = strdup("");
    return CLI_OK;
}

void cli_stack_free(cli_stack_t *s)
{
    free(s->reason);
    json_decref(s->outputs);
    s->reason = NULL;
    s->outputs = NULL;
}

int cli_stack_find(cli_t *cli, const char *name, cli_stack_t *s)
{
    char id[CV_ID_MAX];
    memset(s, 0, sizeof(*s));
    int rc = cli_lookup(cli, name, id);
    if (rc)
        return rc;
    bool found = false;
    rc = cli_stack_read(cli, id, s, &found);
    if (rc == CLI_OK && !found)
        rc = cli_fail(CLI_USAGE, "stack %s (%s) has no status record", name, id);
    if (rc == CLI_OK && !s->name[0])
        snprintf(s->name, sizeof(s->name), "%s", name);
    return rc;
}

json_t *cli_stack_counts(cli_t *cli, const char *id)
{
    char key[CV_KEY_MAX];
    cv_key_stack(key, sizeof(key), id, "counts");
    const char *argv[] = {"HGETALL", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (!r || !cli_reply_is_hash(cli, r, key)) {
        freeReplyObject(r);
        return NULL;
    }
    json_t *counts = json_object();
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        json_object_set_new(counts, r->element[i]->str,
                            json_integer(strtoll(r->element[i + 1]->str, NULL, 10)));
    freeReplyObject(r);
    return counts;
}

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void add_counts(json_t *sum, const json_t *counts)
{
    const char *status;
    json_t *n;
    json_object_foreach((json_t *)counts, status, n)
    {
        json_int_t have = json_integer_value(json_object_get(sum, status));
        json_object_set_new(sum, status, json_integer(have + json_integer_value(n)));
    }
}

/* Adds the children of `id` (and theirs, up to `depth` levels) into `sum`. */
static int sum_nested(cli_t *cli, const char *id, int depth, json_t *sum)
{
    char key[CV_KEY_MAX];
    cv_key_stack(key, sizeof(key), id, "children");
    const char *argv[] = {"SMEMBERS", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    int rc = CLI_OK;
    for (size_t i = 0; rc == CLI_OK && i < r->elements; i++) {
        const char *child = r->element[i]->str;
        cli_stack_t s;
        bool found = false;
        rc = cli_stack_read(cli, child, &s, &found);
        json_t *counts = NULL;
        if (rc == CLI_OK && found && strcmp(s.status, "DELETE_COMPLETE") != 0) {
            counts = cli_stack_counts(cli, child);
            rc = counts ? CLI_OK : CLI_SERVICE;
        }
        if (counts) {
            json_object_set_new(
                sum, "stacks",
                json_integer(json_integer_value(json_object_get(sum, "stacks")) + 1));
            json_object_set_new(
                sum, "total",
                json_integer(json_integer_value(json_object_get(sum, "total")) + s.total));
            json_object_set_new(
                sum, "done",
                json_integer(json_integer_value(json_object_get(sum, "done")) + s.done));
            add_counts(json_object_get(sum, "resources"), counts);
            if (depth > 1)
                rc = sum_nested(cli, child, depth - 1, sum);
        }
        json_decref(counts);
        cli_stack_free(&s);
    }
    freeReplyObject(r);
    return rc;
}

json_t *cli_stack_nested(cli_t *cli, const char *id)
{
    json_t *sum =
        json_pack("{s:i, s:{}, s:i, s:i}", "stacks", 0, "resources", "total", 0, "done", 0);
    /* Deeper than templates may nest, in case a record points in a loop. */
    if (sum_nested(cli, id, CV_TEMPLATE_MAX_DEPTH + 1, sum) != CLI_OK) {
        json_decref(sum);
        return NULL;
    }
    return sum;
}

bool cli_stack_settled(const cli_stack_t *s)
{
    return s->status[0] && !ends_with(s->status, "_IN_PROGRESS");
}

int cli_stack_outcome(const cli_stack_t *s, const char *action)
{
    if (!action)
        return ends_with(s->status, "_COMPLETE") ? CLI_OK : CLI_FAILED;
    size_t n = strlen(action);
    return strncmp(s->status, action, n) == 0 && strcmp(s->status + n, "_COMPLETE") == 0
               ? CLI_OK
               : CLI_FAILED;
}

/* ------------------------------------------------------------------------ */
/* Printing                                                                 */
/* ------------------------------------------------------------------------ */

void cli_stack_print_line(const cli_stack_t *s)
{
    printf("stack %s (%s) %s\n", s->name, s->id, s->status[0] ? s->status : "(no status)");
}

void cli_print_outputs(const json_t *outputs, const char *indent)
{
    const char *name;
    json_t *value;
    json_object_foreach((json_t *)outputs, name, value)
    {
        if (json_is_string(value)) {
            printf("%s%s: %s\n", indent, name, json_string_value(value));
            continue;
        }
        char *text = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
        printf("%s%s: %s\n", indent, name, text ? text : "?");
        free(text);
    }
}

void cli_stack_print_final(const cli_stack_t *s)
{
    cli_stack_print_line(s);
    if (s->reason[0])
        printf("  reason: %s\n", s->reason);
    if (json_object_size(s->outputs) > 0) {
        printf("  outputs:\n");
        cli_print_outputs(s->outputs, "    ");
    }
}

/* ------------------------------------------------------------------------ */
/* Waiting                                                                  */
/* ------------------------------------------------------------------------ */

int cli_stack_report_timeout(const cli_stack_t *s, double timeout)
{
    return cli_fail(CLI_TIMEOUT, "timed out after %g s: stack %s (%s) is still %s (%lld/%lld done)",
                    timeout, s->name, s->id, s->status, s->done, s->total);
}

/* A failed create or update that the workers will roll back next. */
static bool rollback_pending(const cli_stack_t *s)
{
    return s->rollback &&
           (strcmp(s->status, "CREATE_FAILED") == 0 || strcmp(s->status, "UPDATE_FAILED") == 0);
}

int cli_stack_wait(cli_t *cli, const char *id, double timeout, cli_tick_fn tick, void *ud,
                   cli_stack_t *s)
{
    double start = cli_monotonic();
    double failed_since = -1; /* elapsed time when a pending rollback was first seen */
    char name[CV_NAME_MAX + CV_ID_MAX + 4]; /* "NAME (id)" once known */
    snprintf(name, sizeof(name), "%s", id);
    for (;;) {
        bool found = false;
        int rc = cli_stack_read(cli, id, s, &found);
        if (rc)
            return rc;
        if (!found)
            return cli_fail(CLI_FAILED, "stack %s no longer exists", name);
        snprintf(name, sizeof(name), "%s (%s)", s->name, id);
        double elapsed = cli_monotonic() - start;
        if (tick)
            tick(s, elapsed, ud);
        bool pending = cli_stack_settled(s) && rollback_pending(s);
        if (!pending)
            failed_since = -1;
        else if (failed_since < 0)
            failed_since = elapsed;
        if (cli_stack_settled(s) && (!pending || elapsed - failed_since >= ROLLBACK_GRACE))
            return CLI_OK;
        if (timeout > 0 && elapsed >= timeout)
            return pending ? CLI_OK : CLI_TIMEOUT; /* a failure is an answer too */
        cli_stack_free(s);
        cli_sleep_ms(POLL_MS);
    }
}

int cli_stack_follow(cli_t *cli, const char *id, double timeout, const char *action)
{
    cli_stack_t s;
    int rc = cli_stack_wait(cli, id, timeout, NULL, NULL, &s);
    if (rc == CLI_TIMEOUT)
        cli_stack_report_timeout(&s, timeout);
    if (rc == CLI_OK) {
        cli_stack_print_final(&s);
        fflush(stdout);
        rc = cli_stack_outcome(&s, action);
        if (rc != CLI_OK && strcmp(action, "ROLLBACK") != 0 && strcmp(s.action, "ROLLBACK") == 0)
            cli_fail(rc, "the %s of stack %s did not take effect: a rollback followed (%s)", action,
                     s.name, s.status);
        else if (rc != CLI_OK && rollback_pending(&s))
            cli_fail(
                rc,
                "stack %s has rollback enabled, but no rollback had started when the wait ended",
                s.name);
    }
    cli_stack_free(&s);
    return rc;
}
