/*
 * Reading a stack's definition and starting traversals of existing stacks.
 */
#include "cli_traversal.h"

#include "cli_output.h"
#include "cli_secret.h"
#include "cv_contract.h"

#include "cv_io.h"
#include "cv_hot.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The stored definition                                                    */
/* ------------------------------------------------------------------------ */

static char *dup_reply(const redisReply *r)
{
    return r->type == REDIS_REPLY_STRING ? strndup(r->str, r->len) : NULL;
}

/* The stored parameters with each sealed value as CLI_SECRET_MASK. */
static json_t *masked_params(const char *text)
{
    json_t *params = json_loads(text, 0, NULL);
    const char *name;
    json_t *v;
    json_object_foreach(params, name, v)
    {
        if (json_is_string(v) &&
            strncmp(json_string_value(v), CV_SEAL_PREFIX, strlen(CV_SEAL_PREFIX)) == 0)
            json_object_set_new(params, name, json_string(CLI_SECRET_MASK));
    }
    return params;
}

int cli_def_read(cli_t *cli, const char *name, const char *id, cli_def_t *d)
{
    memset(d, 0, sizeof(*d));
    char key[CV_KEY_MAX];
    cv_key(key, sizeof(key), CV_KEY_DEF, id, 0, NULL);
    const char *argv[] = {"HMGET", key, "template", "params", "fname", "files", "env"};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_ARRAY), 7, argv, NULL);
    if (!r)
        return CLI_SERVICE;
    if (r->elements == 5) {
        char *env = dup_reply(r->element[4]);
        d->env = env ? json_loads(env, 0, NULL) : NULL;
        free(env);
        d->template_text = dup_reply(r->element[0]);
        d->params_text = dup_reply(r->element[1]);
        d->fname = dup_reply(r->element[2]);
        char *files = dup_reply(r->element[3]);
        d->files = files ? json_loads(files, 0, NULL) : NULL;
        free(files);
    }
    if (!json_is_object(d->files)) {
        json_decref(d->files);
        d->files = json_object();
    }
    if (!json_is_object(d->env)) {
        json_decref(d->env);
        d->env = json_object();
    }
    freeReplyObject(r);
    if (!d->fname)
        d->fname = strdup("");
    if (d->template_text)
        d->tree = json_loads(d->template_text, 0, NULL);
    char why[512] = "";
    int sealed = 0;
    if (d->params_text)
        d->params = cv_unseal_loads(d->params_text, &sealed, why, sizeof(why));
    if (sealed) {
        d->params = masked_params(d->params_text);
        d->masked = true;
        cli_sealed_warn(why);
    }
    if (!json_is_object(d->tree))
        return cli_fail(CLI_SERVICE, "stack %s (%s): %s holds no template as JSON", name, id, key);
    if (!json_is_object(d->params))
        return cli_fail(CLI_SERVICE, "stack %s (%s): %s holds no parameters as a JSON object", name,
                        id, key);
    return CLI_OK;
}

void cli_def_free(cli_def_t *d)
{
    free(d->template_text);
    free(d->params_text);
    free(d->fname);
    json_decref(d->tree);
    json_decref(d->params);
    json_decref(d->files);
    json_decref(d->env);
    memset(d, 0, sizeof(*d));
}

json_t *cli_def_resources(const cli_def_t *d)
{
    cv_tpl_opts_t opts = {.files = d->files, .env = d->env};
    cv_template_t *parsed = NULL;
    char err[512];
    if (cv_template_from_json_opts(d->tree, "template", d->params, &opts, &parsed, err,
                                   sizeof(err)) == 0) {
        json_t *out = json_object();
        for (size_t i = 0; out && i < parsed->nresources; i++)
            json_object_set_new(out, parsed->resources[i].name,
                                json_pack("{s:s, s:s}", "type", parsed->resources[i].type,
                                          "declared_type", parsed->resources[i].declared_type));
        cv_template_free(parsed);
        return out;
    }
    json_t *section = json_object_get(d->tree, "resources");
    return section && !json_is_null(section) ? json_incref(section) : json_object();
}

bool cli_def_has_resource(const cli_def_t *d, const char *resource)
{
    json_t *resources = cli_def_resources(d);
    bool has = json_is_object(resources) && json_object_get(resources, resource);
    json_decref(resources);
    return has;
}

/* ------------------------------------------------------------------------ */
/* Starting a traversal                                                     */
/* ------------------------------------------------------------------------ */

/* How long a begin waits for a replica of a Redis Cluster master to have
 * it; past that it goes on (a cluster without replicas, or one lagging). */
#define WAIT_REPLICA_MS 1000

redisReply *cli_begin_script(cli_t *cli, const cv_stack_begin_t *b)
{
    char k[3][CV_KEY_MAX];
    cv_key(k[0], CV_KEY_MAX, CV_KEY_STACK, b->stack, 0, NULL);
    cv_key(k[1], CV_KEY_MAX, CV_KEY_DEF, b->stack, 0, NULL);
    cv_key(k[2], CV_KEY_MAX, CV_KEY_EVENTS, b->stack, 0, NULL);
    cv_stack_begin_keys_t keys = {.stack = k[0], .def = k[1], .events = k[2]};
    cv_stack_begin_args_t args;
    cv_script_stack_begin_args(&args, b, "convergectl");
    redisReply *r =
        cv_redis_script_sync(cli->redis, CV_SCRIPT_STACK_BEGIN, keys.v, args.v, 0, NULL, NULL);
    /* What convergectl acknowledges must outlive the failover of its master:
     * on a Redis Cluster, the traversal is on a replica before its job goes
     * out and the user is told (docs/redis-cluster.md). */
    if (r && r->type != REDIS_REPLY_ERROR)
        cv_redis_sync_wait(cli->redis, k[0], 1, WAIT_REPLICA_MS);
    return r;
}

/* The traversal in a reply already checked to be an array; frees it. */
static int traversal_of(redisReply *r, uint64_t *traversal)
{
    int rc = CLI_OK;
    const redisReply *t = cv_reply_at(r, CV_STACK_BEGIN_R_TRAVERSAL);
    if (cv_reply_answer(CV_SCRIPT_STACK_BEGIN, r) == CV_ANSWER_VALUE && r->elements == 1 &&
        t->type == REDIS_REPLY_INTEGER && t->integer > 0)
        *traversal = (uint64_t)t->integer;
    else
        rc = cli_fail(CLI_SERVICE, "stack_begin answered something other than {traversal}");
    freeReplyObject(r);
    return rc;
}

int cli_begin_traversal(cli_t *cli, redisReply *r, uint64_t *traversal)
{
    r = cli_redis_check(cli, r, CLI_R(REDIS_REPLY_ARRAY), "stack_begin");
    return r ? traversal_of(r, traversal) : CLI_SERVICE;
}

/* stack_begin: the new traversal in *traversal. */
static int begin(cli_t *cli, const cli_begin_t *b, uint64_t *traversal)
{
    cv_stack_begin_t sb = {.kind = b->kind,
                           .stack = b->id,
                           .name = b->name,
                           .tpl = b->template_json,
                           .params = b->params_json,
                           .files = b->files_json,
                           .env = b->env_json,
                           .fname = b->fname,
                           .rollback = b->rollback,
                           .drift = b->drift,
                           .upgrade = b->upgrade,
                           .cancel = b->cancel};
    redisReply *r = cli_begin_script(cli, &sb);
    if (r && r->type == REDIS_REPLY_ERROR && strncmp(r->str, "ENOENT", 6) == 0) {
        freeReplyObject(r);
        return cli_fail(CLI_USAGE, "stack %s (%s) has no status record; nothing was changed",
                        b->name, b->id);
    }
    /* Lost or refused, the script may have run or not: say how to find out. */
    r = cli_redis_check(cli, r, CLI_R(REDIS_REPLY_ARRAY), "stack_begin");
    if (!r)
        return cli_fail(CLI_SERVICE,
                        "stack %s may or may not be %s_IN_PROGRESS now; check with "
                        "'convergectl status %s'",
                        b->name, cv_trav_kind_name((uint8_t)b->kind), b->name);
    return traversal_of(r, traversal);
}

int cli_traversal_start(cli_t *cli, const cli_begin_t *b)
{
    const char *kind = cv_trav_kind_name((uint8_t)b->kind);
    uint64_t traversal = 0;
    int rc = cli->producer ? CLI_OK : cli_kafka_connect(cli);
    if (rc == CLI_OK)
        rc = begin(cli, b, &traversal);
    if (rc)
        return rc;
    if (b->started)
        *b->started = traversal;
    if (cli_publish_stack(cli, b->id, traversal, b->kind) != CLI_OK)
        return cli_fail(CLI_SERVICE,
                        "stack %s is %s_IN_PROGRESS (traversal %llu) but no worker was told; "
                        "run 'convergectl %s' once Kafka is back",
                        b->name, kind, (unsigned long long)traversal, b->retry);
    printf("stack %s (%s) %s_IN_PROGRESS\n", b->name, b->id, kind);
    fflush(stdout);
    return CLI_OK;
}
