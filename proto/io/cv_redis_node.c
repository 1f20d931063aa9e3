/*
 * One asynchronous connection to one Redis server, on a libuv loop: the
 * scripts loaded first (synchronously), AUTH and SELECT sent first, a lost
 * connection made again with capped exponential backoff, every attempt
 * and every change of availability told to the owner (cv_redis.c).
 */
#include "cv__redis.h"

#include "cv__redis_uv.h"

#include "cv_base.h"
#include "cv_log.h"

#include <hiredis/async.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define CLOSE_DEADLINE_MS 2000

struct cv__rnode {
    uv_loop_t *loop;
    const cv_opts_t *opts;
    char host[256];
    int port;
    char name[300]; /* host:port */
    cv__rnode_owner_t owner;
    redisAsyncContext *ac;
    bool connected;
    uv_timer_t reconnect_timer; /* also the close deadline, while closing */
    unsigned backoff_ms;
    bool closing;
    bool timer_closed;
    int close_refs;   /* the timer and the hiredis context, while closing */
    bool unavailable; /* connected, but Redis answers that it cannot serve */
};

static void report_state(cv__rnode_t *n, bool up, const char *why)
{
    n->owner.state(n->owner.ud, n, up, why);
}

/* While closing, the struct lives until both the timer handle is closed and
 * hiredis reported the disconnect (which it may do after the loop turn). */
static void close_ref_drop(cv__rnode_t *n)
{
    if (--n->close_refs == 0) {
        n->owner.gone(n->owner.ud, n);
        free(n);
    }
}

static void on_timer_closed(uv_handle_t *h)
{
    close_ref_drop(h->data);
}

static void close_timer(cv__rnode_t *n)
{
    if (n->timer_closed)
        return;
    n->timer_closed = true;
    uv_timer_stop(&n->reconnect_timer);
    uv_close((uv_handle_t *)&n->reconnect_timer, on_timer_closed);
}

static int load_scripts(cv__rnode_t *n, char *errstr, size_t errstr_size)
{
    int rc = CV_EREDIS;
    redisContext *c =
        cv__redis_connect_sync_to(n->opts, n->host, n->port, &rc, errstr, errstr_size);
    if (!c)
        return rc;
    rc = cv__redis_load_scripts(c, n->name, errstr, errstr_size);
    redisFree(c);
    return rc;
}

static void schedule_reconnect(cv__rnode_t *n);

static void on_connect(const redisAsyncContext *ac, int status)
{
    cv__rnode_t *n = ac->data;
    if (status != REDIS_OK && n->closing) {
        n->ac = NULL;
        close_timer(n);
        close_ref_drop(n);
        return;
    }
    if (status != REDIS_OK) {
        char why[160];
        snprintf(why, sizeof(why), "connect failed: %s", ac->errstr);
        n->ac = NULL;
        report_state(n, false, why);
        schedule_reconnect(n);
        return;
    }
    n->connected = true;
    n->unavailable = false;
    n->backoff_ms = 0;
    report_state(n, true, "");
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    cv__rnode_t *n = ac->data;
    n->connected = false;
    n->ac = NULL;
    if (n->closing) {
        close_timer(n);
        close_ref_drop(n);
        return;
    }
    char why[160];
    snprintf(why, sizeof(why), "connection lost: %s", status == REDIS_OK ? "closed" : ac->errstr);
    report_state(n, false, why);
    schedule_reconnect(n);
}

/* The script load just authenticated with the same credentials, so this
 * is a password changed in between: an outage like any other until the next
 * attempt fails at the script load, or succeeds. */
static void on_auth_refused(void *ud, const char *why)
{
    report_state(ud, false, why);
}

static int connect_async(cv__rnode_t *n, char *errstr, size_t errstr_size)
{
    int rc = load_scripts(n, errstr, errstr_size);
    if (rc)
        return rc;
    redisAsyncContext *ac = redisAsyncConnect(n->host, n->port);
    if (!ac || ac->err) {
        rc = cv_seterr(errstr, errstr_size, CV_EREDIS, "cannot reach Redis at %s: %s", n->name,
                       ac ? ac->errstr : "no memory");
        if (ac)
            redisAsyncFree(ac);
        return rc;
    }
    ac->data = n;
    if (cv__redis_uv_attach(ac, n->loop) != REDIS_OK) {
        redisAsyncFree(ac);
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "cannot watch the Redis connection");
    }
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    cv_redis_auth_async(ac, n->opts, on_auth_refused, n);
    if (n->opts->redis_db)
        redisAsyncCommand(ac, NULL, NULL, "SELECT %d", n->opts->redis_db);
    n->ac = ac;
    return 0;
}

static void on_reconnect_timer(uv_timer_t *t)
{
    cv__rnode_t *n = t->data;
    char err[256];
    if (connect_async(n, err, sizeof(err)) != 0) {
        report_state(n, false, err);
        schedule_reconnect(n);
    }
}

/* Capped exponential backoff with jitter, so a fleet does not reconnect in lockstep. */
static void schedule_reconnect(cv__rnode_t *n)
{
    if (n->closing)
        return;
    n->backoff_ms = n->backoff_ms ? n->backoff_ms * 2 : 100;
    if (n->backoff_ms > 5000)
        n->backoff_ms = 5000;
    unsigned delay = n->backoff_ms / 2 + (unsigned)rand() % (n->backoff_ms / 2 + 1);
    uv_timer_start(&n->reconnect_timer, on_reconnect_timer, delay, 0);
}

static void on_failed_open_closed(uv_handle_t *h)
{
    free(h->data);
}

int cv__rnode_open(cv__rnode_t **out, uv_loop_t *loop, const cv_opts_t *opts, const char *host,
                   int port, const cv__rnode_owner_t *owner, char *errstr, size_t errstr_size)
{
    cv__rnode_t *n = calloc(1, sizeof(*n));
    if (!n)
        return CV_ENOMEM;
    n->loop = loop;
    n->opts = opts;
    snprintf(n->host, sizeof(n->host), "%s", host);
    n->port = port;
    snprintf(n->name, sizeof(n->name), "%s:%d", host, port);
    n->owner = *owner;
    uv_timer_init(loop, &n->reconnect_timer);
    n->reconnect_timer.data = n;
    int rc = connect_async(n, errstr, errstr_size);
    if (rc) {
        /* The timer is not the struct's first member: free the struct. */
        uv_close((uv_handle_t *)&n->reconnect_timer, on_failed_open_closed);
        return rc;
    }
    *out = n;
    return 0;
}

/* Redis did not answer what was pending within the close deadline (it is
 * stopped, or the network is): drop the connection; pending callbacks get
 * no reply, as on any lost connection. */
static void on_close_deadline(uv_timer_t *t)
{
    cv__rnode_t *n = t->data;
    redisAsyncContext *ac = n->ac;
    if (!ac)
        return;
    redisAsyncFree(ac); /* on_disconnect closes the timer; n lives until then */
    if (n->ac == ac) {  /* it never connected: hiredis reports nothing */
        n->ac = NULL;
        close_timer(n);
        close_ref_drop(n);
    }
}

/* Aborted, not closed: a connection that stopped answering may have
 * commands written but not yet delivered, which the network could still
 * carry to Redis when it heals; a reset discards them with the socket. */
void cv__rnode_drop(cv__rnode_t *n, const char *why)
{
    redisAsyncContext *ac = n->ac;
    if (!ac || n->closing)
        return;
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    if (ac->c.fd >= 0)
        setsockopt(ac->c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    cv_debug("dropping the Redis connection to %s: %s", n->name, why);
    n->connected = false;
    uv_timer_stop(&n->reconnect_timer);
    redisAsyncFree(ac); /* pending callbacks get no reply; on_disconnect reconnects */
    if (n->ac == ac) {  /* it never connected: hiredis reports nothing */
        n->ac = NULL;
        report_state(n, false, why);
        schedule_reconnect(n);
    }
}

/* Graceful: replies still due are awaited (they finish jobs), but only for
 * CLOSE_DEADLINE_MS, so a stopped Redis cannot keep a worker from exiting. */
void cv__rnode_close(cv__rnode_t *n)
{
    n->closing = true;
    n->close_refs = n->ac ? 2 : 1;
    uv_timer_stop(&n->reconnect_timer);
    if (n->ac)
        redisAsyncDisconnect(n->ac); /* may report the disconnect at once */
    if (n->ac)
        uv_timer_start(&n->reconnect_timer, on_close_deadline, CLOSE_DEADLINE_MS, 0);
    else
        close_timer(n);
}

bool cv__rnode_connected(const cv__rnode_t *n)
{
    return n->connected;
}

bool cv__rnode_available(const cv__rnode_t *n)
{
    return n->connected && !n->unavailable;
}

bool cv__rnode_is(const cv__rnode_t *n, const char *host, int port)
{
    return n->port == port && strcmp(n->host, host) == 0;
}

bool cv__rnode_closing(const cv__rnode_t *n)
{
    return n->closing;
}

const char *cv__rnode_name(const cv__rnode_t *n)
{
    return n->name;
}

int cv__rnode_send(cv__rnode_t *n, int argc, const char **argv, const size_t *lens,
                   redisCallbackFn *fn, void *privdata)
{
    if (!n->ac || n->closing)
        return CV_EREDIS;
    return redisAsyncCommandArgv(n->ac, fn, privdata, argc, argv, lens) == REDIS_OK ? 0 : CV_EREDIS;
}

/* Redis answers but cannot serve: loading its AOF after a restart, a script
 * running too long, a replica without its master, a cluster failing over.
 * For the owner that is as much an outage as a lost connection, over at
 * the next ordinary reply. */
static bool cannot_serve(const redisReply *rep)
{
    static const char *const codes[] = {"LOADING ", "BUSY ", "MASTERDOWN ", "TRYAGAIN ",
                                        "CLUSTERDOWN "};
    if (rep->type != REDIS_REPLY_ERROR)
        return false;
    for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
        if (strncmp(rep->str, codes[i], strlen(codes[i])) == 0)
            return true;
    return false;
}

void cv__rnode_note(cv__rnode_t *n, const redisReply *rep)
{
    if (!rep) {
        n->connected = false; /* hiredis is tearing the connection down */
        return;
    }
    if (cannot_serve(rep)) {
        n->unavailable = true;
        report_state(n, false, rep->str);
    } else if (n->unavailable) {
        n->unavailable = false;
        report_state(n, true, "");
    }
    if (cv__redis_is_noscript(rep)) {
        /* Redis restarted without its script cache: reload, the caller retries. */
        char err[256];
        if (load_scripts(n, err, sizeof(err)) != 0)
            cv_warn("%s", err);
    }
}
