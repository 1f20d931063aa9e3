/*
 * cv_redis — a worker's Redis: one node (a single Redis) or one node per
 * master of a Redis Cluster (cv_redis_node.c), behind one interface.
 *
 * In a cluster, a command goes to the master of its key's slot (cv_slot)
 * by the slot map CLUSTER SLOTS gave. A node answering MOVED (the slot has
 * moved: after a failover, a resharding) gets the command sent on to the
 * named node and the map read again; ASK (a slot migrating) sends it there
 * once, after ASKING. A lost node makes the map be read again every
 * REFRESH_MS until every slot has a master that answers: that is how a
 * failover to a replica is found. Until then the cluster counts as an
 * outage for the listener, as a lost single Redis does.
 */
#include "cv__redis.h"

#include "cv_base.h"
#include "cv_log.h"
#include "cv_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NODES_MAX 64
#define REFRESH_MS 250
#define REDIRECTS_MAX 5

struct cv_redis {
    uv_loop_t *loop;
    const cv_opts_t *opts;
    bool cluster;
    cv__rnode_t *nodes[NODES_MAX]; /* a single Redis: nodes[0] */
    int16_t slots[CV_SLOTS];       /* cluster: index into nodes of each slot's master, or -1 */
    int owned[NODES_MAX];          /* how many slots each node is the master of */
    bool mapped;                   /* every slot has a master */
    bool refreshing;               /* a CLUSTER SLOTS is under way */
    bool up;                       /* what the listener was last told, for a cluster */
    uv_timer_t refresh_timer;
    cv_redis_state_cb state_cb;
    void *state_ud;
    bool closing;
    int live; /* while closing: nodes not yet gone, and the timer */
};

typedef struct pending {
    cv_redis_t *r;
    cv_redis_cb cb;
    void *ud;
    cv__rnode_t *node;
    int redirects;
    /* a cluster's command, kept to send it on after MOVED / ASK */
    int argc;
    const char **argv;
    size_t *lens;
} pending_t;

static void report(cv_redis_t *r, bool up, const char *why)
{
    if (r->state_cb)
        r->state_cb(r->state_ud, up, why);
    else if (up)
        cv_info("connected to Redis at %s:%d", r->opts->redis_host, r->opts->redis_port);
    else
        cv_warn("Redis at %s:%d: %s", r->opts->redis_host, r->opts->redis_port, why);
}

void cv_redis_on_state(cv_redis_t *r, cv_redis_state_cb cb, void *ud)
{
    r->state_cb = cb;
    r->state_ud = ud;
}

/* ---------------------------------------------------------------- nodes */

static int node_index(const cv_redis_t *r, const cv__rnode_t *n)
{
    for (int i = 0; i < NODES_MAX; i++)
        if (r->nodes[i] == n)
            return i;
    return -1;
}

static bool owns_slots(const cv_redis_t *r, int i)
{
    return r->owned[i] > 0;
}

/* Slot s is node i's now (-1: nobody's). */
static void set_slot(cv_redis_t *r, unsigned s, int i)
{
    if (r->slots[s] >= 0)
        r->owned[r->slots[s]]--;
    r->slots[s] = (int16_t)i;
    if (i >= 0)
        r->owned[i]++;
}

/* Every master of the map answers (a single Redis: it answers). */
static bool all_masters(const cv_redis_t *r, bool (*ok)(const cv__rnode_t *))
{
    if (!r->cluster)
        return r->nodes[0] && ok(r->nodes[0]);
    if (!r->mapped)
        return false;
    for (int i = 0; i < NODES_MAX; i++)
        if (r->nodes[i] && !ok(r->nodes[i]) && owns_slots(r, i))
            return false;
    return true;
}

static void refresh_soon(cv_redis_t *r);

static void on_node_state(void *ud, cv__rnode_t *n, bool up, const char *why)
{
    cv_redis_t *r = ud;
    if (r->closing)
        return;
    if (!r->cluster) {
        report(r, up, why);
        return;
    }
    if (!up) {
        char line[512];
        snprintf(line, sizeof(line), "cluster node %s: %s", cv__rnode_name(n), why);
        r->up = false;
        report(r, false, line);
        refresh_soon(r);
    } else if (!r->up && all_masters(r, cv__rnode_available)) {
        r->up = true;
        report(r, true, "");
    }
}

static void maybe_free(cv_redis_t *r)
{
    if (r->closing && r->live == 0)
        free(r);
}

static void on_node_gone(void *ud, cv__rnode_t *n)
{
    cv_redis_t *r = ud;
    int i = node_index(r, n);
    if (i >= 0)
        r->nodes[i] = NULL;
    if (r->closing) {
        r->live--;
        maybe_free(r);
    }
}

/* The node the cluster announces at host:port (reached where the address
 * map says), connected to now if it is new; NULL when that fails (said) or
 * there is no room. */
static cv__rnode_t *node_at(cv_redis_t *r, const char *host, int port, char *errstr,
                            size_t errstr_size)
{
    int free_slot = -1;
    cv_opts_redis_route(r->opts, &host, &port);
    for (int i = 0; i < NODES_MAX; i++) {
        if (r->nodes[i] && !cv__rnode_closing(r->nodes[i]) && cv__rnode_is(r->nodes[i], host, port))
            return r->nodes[i];
        if (!r->nodes[i] && free_slot < 0)
            free_slot = i;
    }
    if (free_slot < 0) {
        snprintf(errstr, errstr_size, "more than %d Redis nodes", NODES_MAX);
        return NULL;
    }
    cv__rnode_owner_t owner = {on_node_state, on_node_gone, r};
    if (cv__rnode_open(&r->nodes[free_slot], r->loop, r->opts, host, port, &owner, errstr,
                       errstr_size) != 0)
        return NULL;
    return r->nodes[free_slot];
}

/* ---------------------------------------------------------------- the slot map */

/* Lays CLUSTER SLOTS over the map, connecting to masters not known yet and
 * closing the nodes that no longer hold a slot. 0, or -1 with err. */
static int apply_slots(cv_redis_t *r, const redisReply *rep, const char *asked, char *errstr,
                       size_t errstr_size)
{
    if (!rep || rep->type != REDIS_REPLY_ARRAY) {
        snprintf(errstr, errstr_size, "CLUSTER SLOTS: %s",
                 rep && rep->str ? rep->str : "no answer");
        return -1;
    }
    int16_t slots[CV_SLOTS];
    memset(slots, 0xff, sizeof(slots));
    size_t covered = 0;
    for (size_t i = 0; i < rep->elements; i++) {
        long long lo, hi, port;
        const char *host;
        if (!cv__redis_slot_range(rep->element[i], asked, &lo, &hi, &host, &port)) {
            snprintf(errstr, errstr_size,
                     "CLUSTER SLOTS: an entry is not [start, end, [host, port]]");
            return -1;
        }
        cv__rnode_t *n = node_at(r, host, (int)port, errstr, errstr_size);
        if (!n)
            return -1;
        for (long long s = lo; s <= hi; s++)
            slots[s] = (int16_t)node_index(r, n);
        covered += (size_t)(hi - lo + 1);
    }
    for (unsigned k = 0; k < CV_SLOTS; k++)
        set_slot(r, k, slots[k]);
    r->mapped = covered == CV_SLOTS;
    for (int i = 0; i < NODES_MAX; i++)
        if (r->nodes[i] && !owns_slots(r, i))
            cv__rnode_close(r->nodes[i]); /* a failed master, or one that gave its slots away */
    if (!r->mapped)
        snprintf(errstr, errstr_size, "the Redis Cluster serves %zu of %d slots", covered,
                 CV_SLOTS);
    return r->mapped ? 0 : -1;
}

static void on_slots(redisAsyncContext *ac, void *reply, void *privdata)
{
    pending_t *p = privdata;
    cv_redis_t *r = p->r;
    (void)ac;
    r->refreshing = false;
    cv__rnode_note(p->node, reply);
    char err[512] = "";
    if (!r->closing && reply && apply_slots(r, reply, "", err, sizeof(err)) == 0 &&
        all_masters(r, cv__rnode_available)) {
        if (!r->up) {
            r->up = true;
            report(r, true, "");
        }
    } else if (!r->closing) {
        if (err[0])
            cv_debug("Redis Cluster: %s", err);
        refresh_soon(r);
    }
    free(p);
}

static void refresh_now(cv_redis_t *r)
{
    if (r->refreshing || r->closing)
        return;
    for (int i = 0; i < NODES_MAX; i++) {
        cv__rnode_t *n = r->nodes[i];
        if (!n || !cv__rnode_connected(n))
            continue;
        pending_t *p = calloc(1, sizeof(*p));
        if (!p)
            break;
        *p = (pending_t){.r = r, .node = n};
        const char *argv[] = {"CLUSTER", "SLOTS"};
        if (cv__rnode_send(n, 2, argv, NULL, on_slots, p) == 0) {
            r->refreshing = true;
            return;
        }
        free(p);
    }
    refresh_soon(r); /* no node answers yet */
}

static void on_refresh_timer(uv_timer_t *t)
{
    refresh_now(t->data);
}

static void refresh_soon(cv_redis_t *r)
{
    if (r->cluster && !r->closing && !uv_is_active((uv_handle_t *)&r->refresh_timer))
        uv_timer_start(&r->refresh_timer, on_refresh_timer, REFRESH_MS, 0);
}

/* ---------------------------------------------------------------- open, close */

/* The first seed that answers CLUSTER SLOTS gives the map. */
static int open_cluster(cv_redis_t *r, char *errstr, size_t errstr_size)
{
    int rc = CV_EREDIS;
    for (int i = 0; i < r->opts->nredis_seeds; i++) {
        const cv_redis_addr_t *seed = &r->opts->redis_seeds[i];
        redisContext *c =
            cv__redis_connect_sync_to(r->opts, seed->host, seed->port, &rc, errstr, errstr_size);
        if (!c) {
            if (rc == CV_EAUTH)
                return rc;
            continue;
        }
        redisReply *rep = redisCommand(c, "CLUSTER SLOTS");
        char err[512];
        int ok = apply_slots(r, rep, seed->host, err, sizeof(err));
        freeReplyObject(rep);
        redisFree(c);
        if (ok == 0) {
            r->up = true;
            return 0;
        }
        rc = cv_seterr(errstr, errstr_size, CV_EREDIS, "Redis Cluster seed %s:%d: %s", seed->host,
                       seed->port, err);
    }
    return rc;
}

int cv_redis_open(cv_redis_t **out, uv_loop_t *loop, const cv_opts_t *opts, char *errstr,
                  size_t errstr_size)
{
    cv_redis_t *r = calloc(1, sizeof(*r));
    if (!r)
        return CV_ENOMEM;
    r->loop = loop;
    r->opts = opts;
    r->cluster = opts->redis_cluster;
    memset(r->slots, 0xff, sizeof(r->slots));
    uv_timer_init(loop, &r->refresh_timer);
    r->refresh_timer.data = r;
    cv__rnode_owner_t owner = {on_node_state, on_node_gone, r};
    int rc = r->cluster ? open_cluster(r, errstr, errstr_size)
                        : cv__rnode_open(&r->nodes[0], loop, opts, opts->redis_host,
                                         opts->redis_port, &owner, errstr, errstr_size);
    if (rc) {
        cv_redis_close(r);
        return rc;
    }
    *out = r;
    return 0;
}

static void on_timer_closed(uv_handle_t *h)
{
    cv_redis_t *r = h->data;
    r->live--;
    maybe_free(r);
}

void cv_redis_close(cv_redis_t *r)
{
    if (!r)
        return;
    r->closing = true;
    r->live = 1;
    for (int i = 0; i < NODES_MAX; i++)
        if (r->nodes[i])
            r->live++;
    uv_timer_stop(&r->refresh_timer);
    uv_close((uv_handle_t *)&r->refresh_timer, on_timer_closed);
    for (int i = 0; i < NODES_MAX; i++)
        if (r->nodes[i])
            cv__rnode_close(r->nodes[i]);
}

void cv_redis_drop(cv_redis_t *r, const char *why)
{
    for (int i = 0; i < NODES_MAX; i++)
        if (r->nodes[i])
            cv__rnode_drop(r->nodes[i], why);
}

bool cv_redis_connected(const cv_redis_t *r)
{
    return all_masters(r, cv__rnode_connected);
}

bool cv_redis_available(const cv_redis_t *r)
{
    return all_masters(r, cv__rnode_available);
}

/* ---------------------------------------------------------------- commands */

/* The node a command goes to: the master of its key's slot, or for a
 * command without keys any node that is connected. */
static cv__rnode_t *route(const cv_redis_t *r, int argc, const char **argv, const size_t *lens)
{
    if (!r->cluster)
        return r->nodes[0];
    int k = cv_slot_key_index(argc, argv);
    if (k >= 0) {
        int i = r->slots[cv_slot(argv[k], lens ? lens[k] : strlen(argv[k]))];
        return i >= 0 ? r->nodes[i] : NULL;
    }
    for (int i = 0; i < NODES_MAX; i++)
        if (r->nodes[i] && cv__rnode_connected(r->nodes[i]))
            return r->nodes[i];
    return NULL;
}

/* A copy of the command in one block, for sending it on. */
static bool keep_command(pending_t *p, int argc, const char **argv, const size_t *lens)
{
    size_t bytes = (size_t)argc * (sizeof(char *) + sizeof(size_t));
    for (int i = 0; i < argc; i++)
        bytes += (lens ? lens[i] : strlen(argv[i])) + 1;
    char *block = malloc(bytes);
    if (!block)
        return false;
    p->argc = argc;
    p->argv = (const char **)block;
    p->lens = (size_t *)(block + (size_t)argc * sizeof(char *));
    char *data = block + (size_t)argc * (sizeof(char *) + sizeof(size_t));
    for (int i = 0; i < argc; i++) {
        p->lens[i] = lens ? lens[i] : strlen(argv[i]);
        memcpy(data, argv[i], p->lens[i]);
        data[p->lens[i]] = '\0';
        p->argv[i] = data;
        data += p->lens[i] + 1;
    }
    return true;
}

static void pending_free(pending_t *p)
{
    free(p->argv);
    free(p);
}

static void on_reply(redisAsyncContext *ac, void *reply, void *privdata);

/* MOVED: the slot's master is another node now; ASK: this once, there. */
static bool redirect(pending_t *p, const redisReply *rep)
{
    cv_redis_t *r = p->r;
    cv_slot_redirect_t to;
    if (!r->cluster || r->closing || !rep || rep->type != REDIS_REPLY_ERROR ||
        cv_slot_redirect_parse(rep->str, &to) != 0 || p->redirects >= REDIRECTS_MAX)
        return false;
    char err[512];
    cv__rnode_t *n = node_at(r, to.host, to.port, err, sizeof(err));
    if (!n) {
        cv_warn("Redis Cluster: %s (%s)", err, rep->str);
        return false;
    }
    if (!to.ask) {
        set_slot(r, to.slot, node_index(r, n));
        refresh_soon(r); /* more slots may have moved with it */
    } else {
        const char *asking[] = {"ASKING"};
        if (cv__rnode_send(n, 1, asking, NULL, NULL, NULL) != 0)
            return false;
    }
    p->node = n;
    p->redirects++;
    return cv__rnode_send(n, p->argc, p->argv, p->lens, on_reply, p) == 0;
}

static void on_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    pending_t *p = privdata;
    redisReply *rep = reply;
    (void)ac;
    cv__rnode_note(p->node, rep);
    if (redirect(p, rep))
        return;
    p->cb(p->r, rep, p->ud);
    pending_free(p);
}

int cv_redis_argv(cv_redis_t *r, int argc, const char **argv, const size_t *lens, cv_redis_cb cb,
                  void *ud)
{
    cv__rnode_t *n = r->closing ? NULL : route(r, argc, argv, lens);
    if (!n || !cv__rnode_connected(n))
        return CV_EREDIS;
    if (!cb) /* nobody waits for the answer: nothing to send on either */
        return cv__rnode_send(n, argc, argv, lens, NULL, NULL);
    pending_t *p = calloc(1, sizeof(*p));
    if (!p || (r->cluster && !keep_command(p, argc, argv, lens))) {
        free(p);
        return CV_ENOMEM;
    }
    p->r = r;
    p->cb = cb;
    p->ud = ud;
    p->node = n;
    if (cv__rnode_send(n, argc, argv, lens, on_reply, p) != 0) {
        pending_free(p);
        return CV_EREDIS;
    }
    return 0;
}

int cv_redis_call(cv_redis_t *r, cv_script_t s, const char *const *keys, const char *const *args,
                  size_t nextra, const char *const *extra_keys, const char *const *extra_args,
                  cv_redis_cb cb, void *ud)
{
    cv__call_argv_t call;
    int rc = cv__call_argv_init(&call, s, "EVALSHA", cv__redis_sha(s), keys, args, nextra,
                                extra_keys, extra_args);
    if (rc)
        return rc;
    rc = cv_redis_argv(r, call.argc, call.argv, call.lens, cb, ud);
    cv__call_argv_free(&call);
    return rc;
}
