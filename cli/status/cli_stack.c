/*
 * Reading, printing and waiting on a stack's status record.
 */
#include "cli_stack.h"
#include "cli_output.h"
#include "cli_secret_io.h"

#include "cv_contract.h"
#include "cv_io.h"
#include "cv_hot.h"

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
    else if (strcmp(field, "parent") == 0)
        snprintf(s->parent, sizeof(s->parent), "%s", value);
    else if (strcmp(field, "parent_resource") == 0)
        snprintf(s->parent_resource, sizeof(s->parent_resource), "%s", value);
}

/* HGETALL `key`, checked to be field/value pairs; NULL on failure (reported). */
static redisReply *hgetall(cli_t *cli, const char *key)
{
    const char *argv[] = {"HGETALL", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (r && !cli_reply_is_hash(cli, r, key)) {
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

/* Fills *s (zeroed, its id set) from the stack hash `r`. */
static void stack_from_hash(cli_stack_t *s, const redisReply *r)
{
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        set_field(s, r->element[i]->str, r->element[i + 1]->str);
    if (!json_is_object(s->outputs)) {
        json_decref(s->outputs);
        s->outputs = json_object();
    }
    if (!s->reason)
        s->reason = strdup("");
}

int cli_stack_read(cli_t *cli, const char *id, cli_stack_t *s, bool *found)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->id, sizeof(s->id), "%s", id);
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACK, id, 0, NULL);
    redisReply *r = hgetall(cli, key);
    if (!r)
        return CLI_SERVICE;
    *found = r->elements > 0;
    stack_from_hash(s, r);
    freeReplyObject(r);
    return CLI_OK;
}

void cli_stack_free(cli_stack_t *s)
{
    free(s->reason);
    json_decref(s->outputs);
    s->reason = NULL;
    s->outputs = NULL;
}

int cli_stack_unname(cli_t *cli, const char *name, const char *id, bool *removed)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_STACKS, NULL, 0, NULL);
    cv_stack_unname_keys_t keys = {.stacks = key};
    cv_stack_unname_args_t args = {.name = name, .id = id};
    redisReply *r = cli_redis_check(
        cli,
        cv_redis_script_sync(cli->redis, CV_SCRIPT_STACK_UNNAME, keys.v, args.v, 0, NULL, NULL),
        CLI_R(REDIS_REPLY_INTEGER), "stack_unname");
    if (r && removed)
        *removed = r->integer == 1;
    bool answered = r != NULL;
    freeReplyObject(r);
    return answered ? CLI_OK : CLI_SERVICE;
}

int cli_stack_find(cli_t *cli, const char *name, cli_stack_t *s)
{
    char id[CV_ID_MAX];
    memset(s, 0, sizeof(*s));
    int rc = cli_stack_resolve(cli, name, id);
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

/* The counts hash `r` as an object: resource status -> number. */
static json_t *counts_from_hash(const redisReply *r)
{
    json_t *counts = json_object();
    for (size_t i = 0; i + 1 < r->elements; i += 2)
        json_object_set_new(counts, r->element[i]->str,
                            json_integer(strtoll(r->element[i + 1]->str, NULL, 10)));
    return counts;
}

json_t *cli_stack_counts(cli_t *cli, const char *id)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_COUNTS, id, 0, NULL);
    redisReply *r = hgetall(cli, key);
    json_t *counts = r ? counts_from_hash(r) : NULL;
    freeReplyObject(r);
    return counts;
}

json_t *cli_stack_children(cli_t *cli, const char *id)
{
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_CHILDREN, id, 0, NULL);
    const char *argv[] = {"SMEMBERS", key};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 2, argv, NULL);
    if (!r)
        return NULL;
    json_t *children = json_object();
    for (size_t i = 0; i < r->elements; i++)
        if (r->element[i]->type == REDIS_REPLY_STRING)
            json_object_set_new(children, r->element[i]->str, json_true());
    freeReplyObject(r);
    return children;
}

const char *cli_nested_stack_id(const json_t *data, const json_t *children)
{
    const char *child = json_string_value(json_object_get(data, "stack"));
    return child && json_object_get(children, child) ? child : NULL;
}

/* ------------------------------------------------------------------------ */
/* Status                                                                   */
/* ------------------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
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
/* Nested stacks                                                            */
/* ------------------------------------------------------------------------ */

/* Deeper than templates may nest, in case a record points in a loop. */
#define NESTED_LEVELS (CV_TEMPLATE_MAX_DEPTH + 1)

/* A stack of the nesting tree, read a level at a time: each level is read
 * with a few pipelined round trips, whatever its number of stacks. */
typedef struct nested {
    const char *id; /* in the parent's `children` reply */
    bool counted;   /* has a record and is not DELETE_COMPLETE */
    long long total, done;
    json_t *counts;       /* counted: its counts hash */
    redisReply *children; /* SMEMBERS of its children, when read */
    size_t first, n;      /* its children in the next level */
} nested_t;

typedef struct level {
    nested_t *v;
    size_t n;
} level_t;

/* The commands of one round trip: one per key, and their replies. */
typedef struct batch {
    size_t n;
    cli_redis_cmd_t *cmds;
    char (*keys)[CV_KEY_MAX];
    redisReply **replies;
} batch_t;

static int batch_init(batch_t *b, size_t max)
{
    b->n = 0;
    b->cmds = calloc(max + 1, sizeof(*b->cmds));
    b->keys = calloc(max + 1, sizeof(*b->keys));
    b->replies = calloc(max + 1, sizeof(*b->replies));
    if (b->cmds && b->keys && b->replies)
        return CLI_OK;
    return cli_fail(CLI_SERVICE, "out of memory reading nested stacks");
}

/* Queues `verb` on the key of `kind` of the stack `id`. */
static void batch_add(batch_t *b, const char *verb, const char *id, cv_key_kind_t kind)
{
    cv_key(b->keys[b->n], CV_KEY_MAX, kind, id, 0, NULL);
    b->cmds[b->n] = (cli_redis_cmd_t){2, {verb, b->keys[b->n]}};
    b->n++;
}

static int batch_run(cli_t *cli, batch_t *b)
{
    return cli_redis_pipeline(cli, b->n, b->cmds, CLI_R(REDIS_REPLY_ARRAY), b->replies);
}

/* Frees the replies not taken (taken ones are set to NULL). */
static void batch_free(batch_t *b)
{
    for (size_t i = 0; b->replies && i < b->n; i++)
        freeReplyObject(b->replies[i]);
    free(b->cmds);
    free(b->keys);
    free(b->replies);
}

/* What the record of `k` says, from its stack hash `r`. */
static int take_record(cli_t *cli, nested_t *k, const redisReply *r, const char *key)
{
    if (!cli_reply_is_hash(cli, r, key))
        return CLI_SERVICE;
    cli_stack_t s;
    memset(&s, 0, sizeof(s));
    stack_from_hash(&s, r);
    k->counted = r->elements > 0 && strcmp(s.status, "DELETE_COMPLETE") != 0;
    k->total = s.total;
    k->done = s.done;
    cli_stack_free(&s);
    return CLI_OK;
}

/* The stack hashes of a level: which stacks count. */
static int read_records(cli_t *cli, level_t *lv)
{
    batch_t b;
    int rc = batch_init(&b, lv->n);
    for (size_t i = 0; rc == CLI_OK && i < lv->n; i++)
        batch_add(&b, "HGETALL", lv->v[i].id, CV_KEY_STACK);
    if (rc == CLI_OK)
        rc = batch_run(cli, &b);
    for (size_t i = 0; rc == CLI_OK && i < lv->n; i++)
        rc = take_record(cli, &lv->v[i], b.replies[i], b.keys[i]);
    batch_free(&b);
    return rc;
}

/* Takes the replies of read_more, in the order it queued them. */
static int take_more(cli_t *cli, level_t *lv, batch_t *b, bool counts, bool children)
{
    size_t at = 0;
    for (size_t i = 0; i < lv->n; i++) {
        nested_t *k = &lv->v[i];
        if (k->counted && counts) {
            if (!cli_reply_is_hash(cli, b->replies[at], b->keys[at]))
                return CLI_SERVICE;
            k->counts = counts_from_hash(b->replies[at++]);
        }
        if (k->counted && children) {
            k->children = b->replies[at];
            b->replies[at++] = NULL;
        }
    }
    return CLI_OK;
}

/* The counts hashes and/or the children sets of the counted stacks. */
static int read_more(cli_t *cli, level_t *lv, bool counts, bool children)
{
    batch_t b;
    int rc = batch_init(&b, 2 * lv->n);
    for (size_t i = 0; rc == CLI_OK && i < lv->n; i++) {
        if (lv->v[i].counted && counts)
            batch_add(&b, "HGETALL", lv->v[i].id, CV_KEY_COUNTS);
        if (lv->v[i].counted && children)
            batch_add(&b, "SMEMBERS", lv->v[i].id, CV_KEY_CHILDREN);
    }
    if (rc == CLI_OK)
        rc = batch_run(cli, &b);
    if (rc == CLI_OK)
        rc = take_more(cli, lv, &b, counts, children);
    batch_free(&b);
    return rc;
}

/* The stacks of the level below `up`: the children of each, in order. */
static int next_level(const level_t *up, level_t *down)
{
    size_t n = 0;
    for (size_t i = 0; i < up->n; i++)
        n += up->v[i].children ? up->v[i].children->elements : 0;
    down->n = 0;
    down->v = calloc(n + 1, sizeof(*down->v));
    if (!down->v)
        return cli_fail(CLI_SERVICE, "out of memory reading nested stacks");
    for (size_t i = 0; i < up->n; i++) {
        nested_t *p = &up->v[i];
        p->first = down->n;
        p->n = p->children ? p->children->elements : 0;
        for (size_t c = 0; c < p->n; c++)
            down->v[down->n++].id = p->children->element[c]->str;
    }
    return CLI_OK;
}

/* levels[0] holds the stack itself; reads the levels below it. */
static int read_levels(cli_t *cli, level_t *levels)
{
    int rc = read_more(cli, &levels[0], false, true);
    for (int d = 1; rc == CLI_OK && d <= NESTED_LEVELS; d++) {
        rc = next_level(&levels[d - 1], &levels[d]);
        if (rc == CLI_OK)
            rc = read_records(cli, &levels[d]);
        if (rc == CLI_OK)
            rc = read_more(cli, &levels[d], true, d < NESTED_LEVELS);
    }
    return rc;
}

static void free_levels(level_t *levels)
{
    for (int d = 0; d <= NESTED_LEVELS; d++) {
        for (size_t i = 0; i < levels[d].n; i++) {
            json_decref(levels[d].v[i].counts);
            freeReplyObject(levels[d].v[i].children);
        }
        if (d > 0)
            free(levels[d].v);
    }
}

static void add_int(json_t *obj, const char *key, json_int_t n)
{
    json_object_set_new(obj, key, json_integer(json_integer_value(json_object_get(obj, key)) + n));
}

/* Adds the counted children of levels[d].v[i] and theirs into `sum`, depth
 * first: a status is listed where it was first met, stack by stack. */
static void add_children(const level_t *levels, int d, size_t i, json_t *sum)
{
    const nested_t *p = &levels[d].v[i];
    for (size_t c = p->first; c < p->first + p->n; c++) {
        const nested_t *k = &levels[d + 1].v[c];
        if (!k->counted)
            continue;
        add_int(sum, "stacks", 1);
        add_int(sum, "total", k->total);
        add_int(sum, "done", k->done);
        const char *status;
        json_t *n;
        json_object_foreach(k->counts, status, n)
        {
            add_int(json_object_get(sum, "resources"), status, json_integer_value(n));
        }
        add_children(levels, d + 1, c, sum);
    }
}

json_t *cli_stack_nested(cli_t *cli, const char *id)
{
    nested_t root = {.id = id, .counted = true};
    level_t levels[NESTED_LEVELS + 1] = {{&root, 1}};
    int rc = read_levels(cli, levels);
    json_t *sum = NULL;
    if (rc == CLI_OK) {
        sum = json_pack("{s:i, s:{}, s:i, s:i}", "stacks", 0, "resources", "total", 0, "done", 0);
        add_children(levels, 0, 0, sum);
    }
    free_levels(levels);
    return sum;
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
    char *reason = s->reason[0] ? cli_limit_hints(s->reason) : NULL;
    if (s->reason[0])
        printf("  reason: %s\n", reason ? reason : s->reason);
    free(reason);
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

int cli_stack_follow(cli_t *cli, const char *id, double timeout, const char *action, uint64_t from)
{
    cli_stack_t s;
    int rc = cli_stack_wait(cli, id, timeout, NULL, NULL, &s);
    if (rc == CLI_TIMEOUT)
        cli_stack_report_timeout(&s, timeout);
    if (rc == CLI_OK)
        rc = cli_secret_mask_reason(cli, id, &s.reason); /* docs/security.md "Secrets" */
    if (rc == CLI_OK) {
        cli_stack_print_final(&s);
        rc = cli_stack_outcome(&s, action);
        /* Why, not only that: the resources that failed, as Heat's
         * `stack failures list` shows them. A list that cannot be read is
         * reported, and the outcome stands. */
        if (rc != CLI_OK)
            (void)cli_stack_print_failures(cli, &s, from);
        fflush(stdout);
        if (rc == CLI_FAILED && strcmp(action, "ROLLBACK") != 0 &&
            strcmp(s.action, "ROLLBACK") == 0)
            cli_fail(rc, "the %s of stack %s did not take effect: a rollback followed (%s)", action,
                     s.name, s.status);
        else if (rc == CLI_FAILED && rollback_pending(&s))
            cli_fail(
                rc,
                "stack %s has rollback enabled, but no rollback had started when the wait ended",
                s.name);
    }
    cli_stack_free(&s);
    return rc;
}
