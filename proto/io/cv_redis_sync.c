/*
 * cv_redis_sync — the CLI's Redis: one synchronous connection, or for a
 * Redis Cluster one per master, made when first needed, with the slot map
 * CLUSTER SLOTS gave and MOVED / ASK followed (docs/architecture.md).
 */
#include "cv__redis.h"

#include "cv_base.h"
#include "cv_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYNC_NODES_MAX 64
#define REDIRECTS_MAX 5

typedef struct snode {
    char host[256];
    int port;
    redisContext *c; /* NULL until first needed, or after it failed */
    int replicas;    /* connected replicas, as INFO said; -1 until asked */
} snode_t;

struct cv_redis_sync {
    const cv_opts_t *opts;
    bool cluster;
    snode_t nodes[SYNC_NODES_MAX];
    int nnodes;
    int16_t slots[CV_SLOTS];
    int last; /* the node of the last command with a key */
    char err[512];
};

static int node_add(cv_redis_sync_t *s, const char *host, int port)
{
    for (int i = 0; i < s->nnodes; i++)
        if (s->nodes[i].port == port && strcmp(s->nodes[i].host, host) == 0)
            return i;
    if (s->nnodes == SYNC_NODES_MAX) {
        snprintf(s->err, sizeof(s->err), "more than %d Redis nodes", SYNC_NODES_MAX);
        return -1;
    }
    snode_t *n = &s->nodes[s->nnodes];
    snprintf(n->host, sizeof(n->host), "%s", host);
    n->port = port;
    n->c = NULL;
    n->replicas = -1;
    return s->nnodes++;
}

/* A node the cluster announced: added at the address the map says. */
static int node_add_announced(cv_redis_sync_t *s, const char *host, int port)
{
    cv_opts_redis_route(s->opts, &host, &port);
    return node_add(s, host, port);
}

static redisContext *node_context(cv_redis_sync_t *s, int i, int *rcp)
{
    snode_t *n = &s->nodes[i];
    if (n->c && n->c->err) { /* a failed connection is made again once */
        redisFree(n->c);
        n->c = NULL;
    }
    if (!n->c)
        n->c = cv__redis_connect_sync_to(s->opts, n->host, n->port, rcp, s->err, sizeof(s->err));
    return n->c;
}

static int map_slots(cv_redis_sync_t *s, redisContext *c, const char *asked)
{
    redisReply *rep = redisCommand(c, "CLUSTER SLOTS");
    int rc = -1;
    if (!rep || rep->type != REDIS_REPLY_ARRAY) {
        snprintf(s->err, sizeof(s->err), "Redis Cluster node %s: CLUSTER SLOTS: %s", asked,
                 rep && rep->str ? rep->str : c->errstr);
    } else {
        rc = 0;
        for (size_t i = 0; i < rep->elements && rc == 0; i++) {
            long long lo, hi, port;
            const char *host;
            int n = -1;
            if (cv__redis_slot_range(rep->element[i], asked, &lo, &hi, &host, &port))
                n = node_add_announced(s, host, (int)port);
            for (long long k = lo; n >= 0 && k <= hi; k++)
                s->slots[k] = (int16_t)n;
            if (n < 0 && !s->err[0])
                snprintf(s->err, sizeof(s->err), "CLUSTER SLOTS: a malformed entry");
            rc = n < 0 ? -1 : 0;
        }
    }
    freeReplyObject(rep);
    return rc;
}

cv_redis_sync_t *cv_redis_sync_open(const cv_opts_t *opts, int *rcp, char *errstr,
                                    size_t errstr_size)
{
    cv_redis_sync_t *s = calloc(1, sizeof(*s));
    if (!s) {
        cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory");
        return NULL;
    }
    s->opts = opts;
    s->cluster = opts->redis_cluster;
    memset(s->slots, 0xff, sizeof(s->slots));
    int rc = CV_EREDIS;
    for (int i = 0; i < opts->nredis_seeds && rc != CV_EAUTH; i++) {
        const cv_redis_addr_t *seed = &opts->redis_seeds[i];
        int n = node_add(s, seed->host, seed->port);
        redisContext *c = n >= 0 ? node_context(s, n, &rc) : NULL;
        if (c && (!s->cluster || map_slots(s, c, seed->host) == 0)) {
            s->last = n;
            return s;
        }
    }
    cv_seterr(errstr, errstr_size, rc, "%s", s->err);
    if (rcp)
        *rcp = rc;
    cv_redis_sync_close(s);
    return NULL;
}

void cv_redis_sync_close(cv_redis_sync_t *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->nnodes; i++)
        redisFree(s->nodes[i].c);
    free(s);
}

const char *cv_redis_sync_error(const cv_redis_sync_t *s)
{
    return s->err;
}

/* The node of `key` (NULL: the last one used). */
static int node_of(cv_redis_sync_t *s, const char *key, size_t len)
{
    if (!s->cluster || !key)
        return s->last;
    int n = s->slots[cv_slot(key, len)];
    if (n < 0)
        snprintf(s->err, sizeof(s->err), "no Redis Cluster node serves the slot of %s", key);
    return n;
}

redisContext *cv_redis_sync_context(cv_redis_sync_t *s, const char *key)
{
    s->err[0] = '\0';
    int n = node_of(s, key, key ? strlen(key) : 0);
    if (n < 0)
        return NULL;
    s->last = n;
    return node_context(s, n, NULL);
}

int cv_redis_sync_masters(cv_redis_sync_t *s, redisContext **out, int max)
{
    s->err[0] = '\0';
    bool serves[SYNC_NODES_MAX] = {false};
    if (!s->cluster)
        serves[s->last] = true;
    for (int slot = 0; s->cluster && slot < CV_SLOTS; slot++)
        if (s->slots[slot] >= 0)
            serves[s->slots[slot]] = true;
    int n = 0;
    for (int i = 0; i < s->nnodes && n < max; i++) {
        if (!serves[i])
            continue;
        if ((out[n] = node_context(s, i, NULL)) == NULL)
            return -1;
        n++;
    }
    return n;
}

redisReply *cv_redis_sync_argv(cv_redis_sync_t *s, int argc, const char **argv, const size_t *lens)
{
    s->err[0] = '\0';
    int k = cv_slot_key_index(argc, argv);
    int n = k >= 0 ? node_of(s, argv[k], lens ? lens[k] : strlen(argv[k])) : s->last;
    bool ask = false;
    for (int hop = 0; n >= 0 && hop <= REDIRECTS_MAX; hop++) {
        redisContext *c = node_context(s, n, NULL);
        if (!c)
            return NULL;
        if (ask) {
            const char *asking[] = {"ASKING"};
            freeReplyObject(redisCommandArgv(c, 1, asking, NULL));
        }
        redisReply *rep = redisCommandArgv(c, argc, argv, lens);
        if (!rep) {
            snprintf(s->err, sizeof(s->err), "%s", c->errstr);
            return NULL;
        }
        cv_slot_redirect_t to;
        if (!s->cluster || rep->type != REDIS_REPLY_ERROR ||
            cv_slot_redirect_parse(rep->str, &to) != 0 || hop == REDIRECTS_MAX) {
            if (k >= 0 && !ask)
                s->last = n;
            return rep;
        }
        freeReplyObject(rep);
        ask = to.ask;
        n = node_add_announced(s, to.host, to.port);
        if (n >= 0 && !ask)
            s->slots[to.slot] = (int16_t)n;
    }
    return NULL;
}

/* How many replicas the master `n` has connected (asked once). */
static int replicas_of(snode_t *n)
{
    if (n->replicas < 0) {
        redisReply *rep = redisCommand(n->c, "INFO replication");
        const char *at =
            rep && rep->type == REDIS_REPLY_STRING ? strstr(rep->str, "connected_slaves:") : NULL;
        n->replicas = at ? atoi(at + strlen("connected_slaves:")) : 0;
        freeReplyObject(rep);
    }
    return n->replicas;
}

long long cv_redis_sync_wait(cv_redis_sync_t *s, const char *key, int replicas, int timeout_ms)
{
    if (!s->cluster)
        return 0;
    redisContext *c = cv_redis_sync_context(s, key);
    if (c && replicas > replicas_of(&s->nodes[s->last]))
        replicas = replicas_of(&s->nodes[s->last]); /* none to wait for: no wait */
    if (c && replicas == 0)
        return 0;
    redisReply *rep = c ? redisCommand(c, "WAIT %d %d", replicas, timeout_ms) : NULL;
    long long n = rep && rep->type == REDIS_REPLY_INTEGER ? rep->integer : -1;
    if (rep && n < 0)
        snprintf(s->err, sizeof(s->err), "WAIT: %s", rep->str ? rep->str : "unexpected reply");
    freeReplyObject(rep);
    return n;
}

redisReply *cv_redis_script_sync(cv_redis_sync_t *s, cv_script_t script, const char *const *keys,
                                 const char *const *args, size_t nextra,
                                 const char *const *extra_keys, const char *const *extra_args)
{
    /* A server that refuses SCRIPT LOAD (LOADING, ...) gets EVAL: it then
     * answers the caller with the same refusal. */
    const char *key = cv_script_nkeys(script) ? keys[0] : NULL;
    redisContext *c = cv_redis_sync_context(s, key);
    bool loaded = cv__redis_sha(script)[0] || (c && cv__redis_load_one(c, script));
    cv__call_argv_t call;
    if (!c || cv__call_argv_init(&call, script, loaded ? "EVALSHA" : "EVAL",
                                 loaded ? cv__redis_sha(script) : cv_redis_script_text(script),
                                 keys, args, nextra, extra_keys, extra_args) != 0)
        return NULL;
    redisReply *rep = cv_redis_sync_argv(s, call.argc, call.argv, call.lens);
    if (cv__redis_is_noscript(rep) && (c = cv_redis_sync_context(s, key)) &&
        cv__redis_load_one(c, script)) {
        /* A server without the script (restarted, or another one): once more. */
        freeReplyObject(rep);
        rep = cv_redis_sync_argv(s, call.argc, call.argv, call.lens);
    }
    cv__call_argv_free(&call);
    return rep;
}
