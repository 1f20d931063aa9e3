#include "cv_redis.h"

#include "cv__redis_uv.h"

#include "cv_error.h"
#include "cv_log.h"

#include <hiredis/async.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* Generated from proto/lua by CMake (embed_lua.cmake). */
extern const struct {
    const char *name;
    const char *text;
} cv_lua_sources[];

static char *script_texts[CV_SCRIPT__COUNT];

/* The SHA1 of each script as SCRIPT LOAD answered it: the same on every
 * server for the same text, so one copy serves the synchronous path of the
 * whole process ("" until a first call loads it). */
static char sync_shas[CV_SCRIPT__COUNT][41];

struct cv_redis {
    uv_loop_t *loop;
    const cv_opts_t *opts;
    redisAsyncContext *ac;
    bool connected;
    char shas[CV_SCRIPT__COUNT][41];
    uv_timer_t reconnect_timer; /* also the close deadline, while closing */
    unsigned backoff_ms;
    bool closing;
    bool timer_closed;
    int close_refs; /* the timer and the hiredis context, while closing */
    cv_redis_state_cb state_cb;
    void *state_ud;
    bool unavailable; /* connected, but Redis answers that it cannot serve */
};

/* Every attempt is reported; the listener (the worker's outage record)
 * makes one log line of a whole outage. */
static void report_state(cv_redis_t *r, bool up, const char *why)
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

/* While closing, the struct lives until both the timer handle is closed and
 * hiredis reported the disconnect (which it may do after the loop turn). */
static void close_ref_drop(struct cv_redis *r)
{
    if (--r->close_refs == 0)
        free(r);
}

static void on_timer_closed(uv_handle_t *h)
{
    close_ref_drop(h->data);
}

static void close_timer(cv_redis_t *r)
{
    if (r->timer_closed)
        return;
    r->timer_closed = true;
    uv_timer_stop(&r->reconnect_timer);
    uv_close((uv_handle_t *)&r->reconnect_timer, on_timer_closed);
}

static const char *lua_source(const char *name)
{
    for (size_t i = 0; cv_lua_sources[i].name; i++)
        if (strcmp(cv_lua_sources[i].name, name) == 0)
            return cv_lua_sources[i].text;
    return NULL;
}

/* Each script is the shared prelude followed by its body, built once. */
const char *cv_redis_script_text(cv_script_t s)
{
    if (!script_texts[s]) {
        const char *lib = lua_source("lib"), *body = lua_source(cv_script_name(s));
        if (!lib || !body)
            abort(); /* a missing script is a build error, never a runtime condition */
        size_t n = strlen(lib) + strlen(body) + 2;
        script_texts[s] = malloc(n);
        if (!script_texts[s])
            abort();
        snprintf(script_texts[s], n, "%s\n%s", lib, body);
    }
    return script_texts[s];
}

/* AUTH first, when there is a password: CV_EAUTH naming the user when refused. */
static int auth_sync(redisContext *c, const cv_opts_t *opts, char *errstr, size_t errstr_size)
{
    const char *argv[3];
    int argc = cv_opts_redis_auth_argv(opts, argv);
    if (argc == 0)
        return 0;
    redisReply *r = redisCommandArgv(c, argc, argv, NULL);
    int rc = 0;
    if (!r)
        rc = cv_seterr(errstr, errstr_size, CV_EREDIS, "lost Redis at %s:%d during AUTH: %s",
                       opts->redis_host, opts->redis_port, c->errstr);
    else if (r->type == REDIS_REPLY_ERROR)
        rc = cv_redis_auth_refused(opts, r->str, errstr, errstr_size);
    freeReplyObject(r);
    return rc;
}

/* cv_redis_connect_sync, also saying why it failed in *rcp: CV_EAUTH when
 * the credentials were refused, CV_EREDIS otherwise. */
static redisContext *connect_sync(const cv_opts_t *opts, int *rcp, char *errstr, size_t errstr_size)
{
    struct timeval tv = {3, 0};
    redisContext *c = redisConnectWithTimeout(opts->redis_host, opts->redis_port, tv);
    if (!c || c->err) {
        cv_seterr(errstr, errstr_size, CV_EREDIS, "cannot reach Redis at %s:%d: %s",
                  opts->redis_host, opts->redis_port, c ? c->errstr : "out of memory");
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, (struct timeval){10, 0});
    int rc = auth_sync(c, opts, errstr, errstr_size);
    if (rc) {
        if (rcp)
            *rcp = rc;
        redisFree(c);
        return NULL;
    }
    if (opts->redis_db) {
        redisReply *r = redisCommand(c, "SELECT %d", opts->redis_db);
        bool ok = r && r->type != REDIS_REPLY_ERROR;
        freeReplyObject(r);
        if (!ok) {
            cv_seterr(errstr, errstr_size, CV_EREDIS, "Redis at %s:%d refused SELECT %d",
                      opts->redis_host, opts->redis_port, opts->redis_db);
            redisFree(c);
            return NULL;
        }
    }
    return c;
}

redisContext *cv_redis_connect_sync(const cv_opts_t *opts, char *errstr, size_t errstr_size)
{
    return connect_sync(opts, NULL, errstr, errstr_size);
}

/* The command vector of a script call: EVALSHA sha (or EVAL text) numkeys keys... args...
 * (with the variadic tail's keys after the fixed keys, its arguments after
 * the fixed arguments). NULL strings are sent as "". */
typedef struct call_argv {
    int argc;
    const char **argv;
    size_t *lens;
    char numkeys[24];
    const char *sargv[64];
    size_t slens[64];
} call_argv_t;

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

static int call_argv_init(call_argv_t *c, cv_script_t s, const char *eval, const char *script,
                          const char *const *keys, const char *const *args, size_t nextra,
                          const char *const *extra_keys, const char *const *extra_args)
{
    size_t nkeys = cv_script_nkeys(s), nargs = cv_script_nargs(s);
    if (!cv_script_variadic(s))
        nextra = 0;
    size_t argc = 3 + nkeys + nargs + 2 * nextra;
    bool small = argc <= sizeof(c->sargv) / sizeof(c->sargv[0]);
    c->argv = small ? c->sargv : malloc(argc * sizeof(*c->argv));
    c->lens = small ? c->slens : malloc(argc * sizeof(*c->lens));
    if (!c->argv || !c->lens) {
        if (!small) {
            free(c->argv);
            free(c->lens);
        }
        return CV_ENOMEM;
    }
    snprintf(c->numkeys, sizeof(c->numkeys), "%zu", nkeys + nextra);
    size_t n = 0;
    c->argv[n++] = eval;
    c->argv[n++] = script;
    c->argv[n++] = c->numkeys;
    for (size_t i = 0; i < nkeys; i++)
        c->argv[n++] = or_empty(keys[i]);
    for (size_t i = 0; i < nextra; i++)
        c->argv[n++] = or_empty(extra_keys[i]);
    for (size_t i = 0; i < nargs; i++)
        c->argv[n++] = or_empty(args[i]);
    for (size_t i = 0; i < nextra; i++)
        c->argv[n++] = or_empty(extra_args[i]);
    for (size_t i = 0; i < n; i++)
        c->lens[i] = strlen(c->argv[i]);
    c->argc = (int)n;
    return 0;
}

static void call_argv_free(call_argv_t *c)
{
    if (c->argv != c->sargv)
        free(c->argv);
    if (c->lens != c->slens)
        free(c->lens);
}

static bool is_noscript(const redisReply *rep)
{
    return rep && rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "NOSCRIPT", 8) == 0;
}

static bool load_sync(redisContext *c, cv_script_t s)
{
    redisReply *rep = redisCommand(c, "SCRIPT LOAD %s", cv_redis_script_text(s));
    bool ok = rep && rep->type == REDIS_REPLY_STRING && rep->len == 40;
    if (ok)
        memcpy(sync_shas[s], rep->str, 41);
    freeReplyObject(rep);
    return ok;
}

redisReply *cv_redis_script_sync(redisContext *c, cv_script_t s, const char *const *keys,
                                 const char *const *args, size_t nextra,
                                 const char *const *extra_keys, const char *const *extra_args)
{
    /* A server that refuses SCRIPT LOAD (LOADING, ...) gets EVAL: it then
     * answers the caller with the same refusal. */
    bool loaded = sync_shas[s][0] || load_sync(c, s);
    call_argv_t call;
    if (call_argv_init(&call, s, loaded ? "EVALSHA" : "EVAL",
                       loaded ? sync_shas[s] : cv_redis_script_text(s), keys, args, nextra,
                       extra_keys, extra_args) != 0)
        return NULL;
    redisReply *rep = redisCommandArgv(c, call.argc, call.argv, call.lens);
    if (is_noscript(rep) && load_sync(c, s)) {
        /* A server without the script (restarted, or another one): once more. */
        freeReplyObject(rep);
        rep = redisCommandArgv(c, call.argc, call.argv, call.lens);
    }
    call_argv_free(&call);
    return rep;
}

/* SCRIPT LOAD is idempotent and returns the SHA1 the server will use. */
static int load_scripts(cv_redis_t *r, char *errstr, size_t errstr_size)
{
    int rc = CV_EREDIS;
    redisContext *c = connect_sync(r->opts, &rc, errstr, errstr_size);
    if (!c)
        return rc;
    rc = 0;
    for (int s = 0; s < CV_SCRIPT__COUNT && rc == 0; s++) {
        redisReply *rep = redisCommand(c, "SCRIPT LOAD %s", cv_redis_script_text((cv_script_t)s));
        if (rep && rep->type == REDIS_REPLY_STRING && rep->len == 40) {
            memcpy(r->shas[s], rep->str, 41);
            memcpy(sync_shas[s], rep->str, 41);
        } else
            rc = cv_seterr(errstr, errstr_size, CV_EREDIS, "loading script %s failed: %s",
                           cv_script_name((cv_script_t)s), rep && rep->str ? rep->str : c->errstr);
        freeReplyObject(rep);
    }
    redisFree(c);
    return rc;
}

static void schedule_reconnect(cv_redis_t *r);

static void on_connect(const redisAsyncContext *ac, int status)
{
    cv_redis_t *r = ac->data;
    if (status != REDIS_OK && r->closing) {
        r->ac = NULL;
        close_timer(r);
        close_ref_drop(r);
        return;
    }
    if (status != REDIS_OK) {
        char why[160];
        snprintf(why, sizeof(why), "connect failed: %s", ac->errstr);
        r->ac = NULL;
        report_state(r, false, why);
        schedule_reconnect(r);
        return;
    }
    r->connected = true;
    r->unavailable = false;
    r->backoff_ms = 0;
    report_state(r, true, "");
}

static void on_disconnect(const redisAsyncContext *ac, int status)
{
    cv_redis_t *r = ac->data;
    r->connected = false;
    r->ac = NULL;
    if (r->closing) {
        close_timer(r);
        close_ref_drop(r);
        return;
    }
    char why[160];
    snprintf(why, sizeof(why), "connection lost: %s", status == REDIS_OK ? "closed" : ac->errstr);
    report_state(r, false, why);
    schedule_reconnect(r);
}

/* The script load just authenticated with the same credentials, so this
 * is a password changed in between: an outage like any other until the next
 * attempt fails at the script load, or succeeds. */
static void on_auth_refused(void *ud, const char *why)
{
    report_state(ud, false, why);
}

static int connect_async(cv_redis_t *r, char *errstr, size_t errstr_size)
{
    int rc = load_scripts(r, errstr, errstr_size);
    if (rc)
        return rc;
    redisAsyncContext *ac = redisAsyncConnect(r->opts->redis_host, r->opts->redis_port);
    if (!ac || ac->err) {
        rc = cv_seterr(errstr, errstr_size, CV_EREDIS, "cannot reach Redis at %s:%d: %s",
                       r->opts->redis_host, r->opts->redis_port, ac ? ac->errstr : "no memory");
        if (ac)
            redisAsyncFree(ac);
        return rc;
    }
    ac->data = r;
    if (cv__redis_uv_attach(ac, r->loop) != REDIS_OK) {
        redisAsyncFree(ac);
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "cannot watch the Redis connection");
    }
    redisAsyncSetConnectCallback(ac, on_connect);
    redisAsyncSetDisconnectCallback(ac, on_disconnect);
    cv_redis_auth_async(ac, r->opts, on_auth_refused, r);
    if (r->opts->redis_db)
        redisAsyncCommand(ac, NULL, NULL, "SELECT %d", r->opts->redis_db);
    r->ac = ac;
    return 0;
}

static void on_reconnect_timer(uv_timer_t *t)
{
    cv_redis_t *r = t->data;
    char err[256];
    if (connect_async(r, err, sizeof(err)) != 0) {
        report_state(r, false, err);
        schedule_reconnect(r);
    }
}

/* Capped exponential backoff with jitter, so a fleet does not reconnect in lockstep. */
static void schedule_reconnect(cv_redis_t *r)
{
    if (r->closing)
        return;
    r->backoff_ms = r->backoff_ms ? r->backoff_ms * 2 : 100;
    if (r->backoff_ms > 5000)
        r->backoff_ms = 5000;
    unsigned delay = r->backoff_ms / 2 + (unsigned)rand() % (r->backoff_ms / 2 + 1);
    uv_timer_start(&r->reconnect_timer, on_reconnect_timer, delay, 0);
}

static void on_failed_open_closed(uv_handle_t *h)
{
    free(h->data);
}

int cv_redis_open(cv_redis_t **out, uv_loop_t *loop, const cv_opts_t *opts, char *errstr,
                  size_t errstr_size)
{
    cv_redis_t *r = calloc(1, sizeof(*r));
    if (!r)
        return CV_ENOMEM;
    r->loop = loop;
    r->opts = opts;
    uv_timer_init(loop, &r->reconnect_timer);
    r->reconnect_timer.data = r;
    int rc = connect_async(r, errstr, errstr_size);
    if (rc) {
        /* The timer is not the struct's first member: free the struct. */
        uv_close((uv_handle_t *)&r->reconnect_timer, on_failed_open_closed);
        return rc;
    }
    *out = r;
    return 0;
}

/* Redis did not answer what was pending within the close deadline (it is
 * stopped, or the network is): drop the connection; pending callbacks get
 * no reply, as on any lost connection. */
static void on_close_deadline(uv_timer_t *t)
{
    cv_redis_t *r = t->data;
    redisAsyncContext *ac = r->ac;
    if (!ac)
        return;
    redisAsyncFree(ac); /* on_disconnect closes the timer; r lives until then */
    if (r->ac == ac) {  /* it never connected: hiredis reports nothing */
        r->ac = NULL;
        close_timer(r);
        close_ref_drop(r);
    }
}

/* Aborted, not closed: a connection that stopped answering may have
 * commands written but not yet delivered, which the network could still
 * carry to Redis when it heals; a reset discards them with the socket. */
void cv_redis_drop(cv_redis_t *r, const char *why)
{
    redisAsyncContext *ac = r->ac;
    if (!ac || r->closing)
        return;
    struct linger lg = {.l_onoff = 1, .l_linger = 0};
    if (ac->c.fd >= 0)
        setsockopt(ac->c.fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    cv_debug("dropping the Redis connection: %s", why);
    r->connected = false;
    uv_timer_stop(&r->reconnect_timer);
    redisAsyncFree(ac); /* pending callbacks get no reply; on_disconnect reconnects */
    if (r->ac == ac) {  /* it never connected: hiredis reports nothing */
        r->ac = NULL;
        report_state(r, false, why);
        schedule_reconnect(r);
    }
}

#define CLOSE_DEADLINE_MS 2000

/* Graceful: replies still due are awaited (they finish jobs), but only for
 * CLOSE_DEADLINE_MS, so a stopped Redis cannot keep a worker from exiting. */
void cv_redis_close(cv_redis_t *r)
{
    if (!r)
        return;
    r->closing = true;
    r->close_refs = r->ac ? 2 : 1;
    uv_timer_stop(&r->reconnect_timer);
    if (r->ac)
        redisAsyncDisconnect(r->ac); /* may report the disconnect at once */
    if (r->ac)
        uv_timer_start(&r->reconnect_timer, on_close_deadline, CLOSE_DEADLINE_MS, 0);
    else
        close_timer(r);
}

bool cv_redis_connected(const cv_redis_t *r)
{
    return r->connected;
}

bool cv_redis_available(const cv_redis_t *r)
{
    return r->connected && !r->unavailable;
}

typedef struct pending {
    cv_redis_t *r;
    cv_redis_cb cb;
    void *ud;
} pending_t;

/* Redis answers but cannot serve: loading its AOF after a restart, a script
 * running too long, a replica without its master, a cluster failing over.
 * For the listener that is as much an outage as a lost connection, over at
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

static void note_availability(cv_redis_t *r, const redisReply *rep)
{
    if (cannot_serve(rep)) {
        r->unavailable = true;
        report_state(r, false, rep->str);
    } else if (r->unavailable) {
        r->unavailable = false;
        report_state(r, true, "");
    }
}

static void on_reply(redisAsyncContext *ac, void *reply, void *privdata)
{
    pending_t *p = privdata;
    redisReply *rep = reply;
    (void)ac;
    if (!rep)
        p->r->connected = false; /* hiredis is tearing the connection down */
    else
        note_availability(p->r, rep);
    if (is_noscript(rep)) {
        /* Redis restarted without its script cache: reload, the caller retries. */
        char err[256];
        if (load_scripts(p->r, err, sizeof(err)) != 0)
            cv_warn("%s", err);
    }
    p->cb(p->r, rep, p->ud);
    free(p);
}

int cv_redis_argv(cv_redis_t *r, int argc, const char **argv, const size_t *lens, cv_redis_cb cb,
                  void *ud)
{
    if (!r->ac || !r->connected)
        return CV_EREDIS;
    pending_t *p = malloc(sizeof(*p));
    if (!p)
        return CV_ENOMEM;
    *p = (pending_t){r, cb, ud};
    if (redisAsyncCommandArgv(r->ac, cb ? on_reply : NULL, cb ? p : NULL, argc, argv, lens) !=
        REDIS_OK) {
        free(p);
        return CV_EREDIS;
    }
    if (!cb)
        free(p);
    return 0;
}

int cv_redis_call(cv_redis_t *r, cv_script_t s, const char *const *keys, const char *const *args,
                  size_t nextra, const char *const *extra_keys, const char *const *extra_args,
                  cv_redis_cb cb, void *ud)
{
    call_argv_t call;
    int rc =
        call_argv_init(&call, s, "EVALSHA", r->shas[s], keys, args, nextra, extra_keys, extra_args);
    if (rc)
        return rc;
    rc = cv_redis_argv(r, call.argc, call.argv, call.lens, cb, ud);
    call_argv_free(&call);
    return rc;
}

cv_answer_t cv_reply_answer(cv_script_t s, const redisReply *rep)
{
    if (!rep || rep->type == REDIS_REPLY_ERROR)
        return CV_ANSWER_INVALID;
    const redisReply *first = rep->type == REDIS_REPLY_ARRAY ? cv_reply_at(rep, 0) : NULL;
    cv_answer_t a = first && first->type == REDIS_REPLY_STRING ? cv_script_answer(s, first->str)
                                                               : CV_ANSWER_INVALID;
    if (a == CV_ANSWER_INVALID && cv_script_shape(s) == CV_SCRIPT_VALUE)
        return CV_ANSWER_VALUE;
    return a;
}

const redisReply *cv_reply_at(const redisReply *r, size_t i)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || i >= r->elements)
        return NULL;
    return r->element[i];
}

const char *cv_reply_str(const redisReply *r, size_t i)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || i >= r->elements)
        return "";
    const redisReply *e = r->element[i];
    if (e->type == REDIS_REPLY_STRING || e->type == REDIS_REPLY_STATUS)
        return e->str;
    return "";
}

long long cv_reply_int(const redisReply *r, size_t i)
{
    if (!r || r->type != REDIS_REPLY_ARRAY || i >= r->elements)
        return 0;
    const redisReply *e = r->element[i];
    if (e->type == REDIS_REPLY_INTEGER)
        return e->integer;
    if (e->type == REDIS_REPLY_STRING)
        return strtoll(e->str, NULL, 10);
    return 0;
}
