/*
 * What the asynchronous and the synchronous sides of cv_redis share: the
 * scripts (their text, their SHA1, the command vector of a call, the one
 * slot rule) and a synchronous connection to one server (each server's
 * script load, the CLI's nodes); plus reading replies.
 */
#include "cv__redis.h"

#include "cv_base.h"
#include "cv_log.h"
#include "cv_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Generated from proto/lua by CMake (embed_lua.cmake). */
extern const struct {
    const char *name;
    const char *text;
} cv_lua_sources[];

static char *script_texts[CV_SCRIPT__COUNT];

/* The SHA1 of each script as SCRIPT LOAD answered it: the same on every
 * server for the same text, so one copy serves the whole process ("" until
 * a first load). */
static char shas[CV_SCRIPT__COUNT][41];

static const char *lua_source(const char *name)
{
    for (size_t i = 0; cv_lua_sources[i].name; i++)
        if (strcmp(cv_lua_sources[i].name, name) == 0)
            return cv_lua_sources[i].text;
    return NULL;
}

static long events_max = CV_REDIS_EVENTS_MAX;

void cv_redis_set_events_max(long n)
{
    events_max = n < 0 ? 0 : n;
}

/* Each script is the shared prelude followed by its body, built once; the
 * prelude's settings (lib.lua's `events_max`) come first. */
const char *cv_redis_script_text(cv_script_t s)
{
    if (!script_texts[s]) {
        const char *lib = lua_source("lib"), *body = lua_source(cv_script_name(s));
        if (!lib || !body)
            abort(); /* a missing script is a build error, never a runtime condition */
        size_t n = strlen(lib) + strlen(body) + 64;
        script_texts[s] = malloc(n);
        if (!script_texts[s])
            abort();
        snprintf(script_texts[s], n, "local events_max = %ld\n%s\n%s", events_max, lib, body);
    }
    return script_texts[s];
}

const char *cv__redis_sha(cv_script_t s)
{
    return shas[s];
}

/* AUTH first, when there is a password: CV_EAUTH naming the user when refused. */
static int auth_sync(redisContext *c, const cv_opts_t *opts, const char *where, char *errstr,
                     size_t errstr_size)
{
    const char *argv[3];
    int argc = cv_opts_redis_auth_argv(opts, argv);
    if (argc == 0)
        return 0;
    redisReply *r = redisCommandArgv(c, argc, argv, NULL);
    int rc = 0;
    if (!r)
        rc = cv_seterr(errstr, errstr_size, CV_EREDIS, "lost Redis at %s during AUTH: %s", where,
                       c->errstr);
    else if (r->type == REDIS_REPLY_ERROR)
        rc = cv_redis_auth_refused(opts, r->str, errstr, errstr_size);
    freeReplyObject(r);
    return rc;
}

static bool select_db(redisContext *c, int db)
{
    if (!db)
        return true;
    redisReply *r = redisCommand(c, "SELECT %d", db);
    bool ok = r && r->type != REDIS_REPLY_ERROR;
    freeReplyObject(r);
    return ok;
}

redisContext *cv__redis_connect_sync_to(const cv_opts_t *opts, const char *host, int port, int *rcp,
                                        char *errstr, size_t errstr_size)
{
    char where[300];
    snprintf(where, sizeof(where), "%s:%d", host, port);
    struct timeval tv = {3, 0};
    redisContext *c = redisConnectWithTimeout(host, port, tv);
    if (rcp)
        *rcp = CV_EREDIS;
    if (!c || c->err) {
        cv_seterr(errstr, errstr_size, CV_EREDIS, "cannot reach Redis at %s: %s", where,
                  c ? c->errstr : "out of memory");
        redisFree(c);
        return NULL;
    }
    redisSetTimeout(c, (struct timeval){10, 0});
    int rc = auth_sync(c, opts, where, errstr, errstr_size);
    if (!rc && !select_db(c, opts->redis_db))
        rc = cv_seterr(errstr, errstr_size, CV_EREDIS, "Redis at %s refused SELECT %d", where,
                       opts->redis_db);
    if (rc) {
        if (rcp)
            *rcp = rc;
        redisFree(c);
        return NULL;
    }
    return c;
}

bool cv__redis_load_one(redisContext *c, cv_script_t s)
{
    redisReply *rep = redisCommand(c, "SCRIPT LOAD %s", cv_redis_script_text(s));
    bool ok = rep && rep->type == REDIS_REPLY_STRING && rep->len == 40;
    if (ok)
        memcpy(shas[s], rep->str, 41);
    freeReplyObject(rep);
    return ok;
}

int cv__redis_load_scripts(redisContext *c, const char *where, char *errstr, size_t errstr_size)
{
    for (int s = 0; s < CV_SCRIPT__COUNT; s++)
        if (!cv__redis_load_one(c, (cv_script_t)s))
            return cv_seterr(errstr, errstr_size, CV_EREDIS,
                             "loading script %s into Redis at %s failed: %s",
                             cv_script_name((cv_script_t)s), where, c->err ? c->errstr : "refused");
    return 0;
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

/* Redis Cluster runs a script only when all its keys are in one slot; a
 * single Redis would run it, so the rule is kept here for both, and a call
 * that breaks it is a bug in the caller's keys: refused, and said loudly. */
static int check_one_slot(cv_script_t s, const char *const *keys, size_t n)
{
    if (cv_slot_common(keys, n) >= 0)
        return 0;
    for (size_t i = 1; i < n; i++)
        if (cv_slot(keys[i], strlen(keys[i])) != cv_slot(keys[0], strlen(keys[0]))) {
            cv_error("script %s refused: its keys %s and %s are in different Redis Cluster "
                     "slots",
                     cv_script_name(s), keys[0], keys[i]);
            break;
        }
    return CV_EINVAL;
}

void cv__call_argv_free(cv__call_argv_t *c)
{
    if (c->argv != c->sargv)
        free(c->argv);
    if (c->lens != c->slens)
        free(c->lens);
}

int cv__call_argv_init(cv__call_argv_t *c, cv_script_t s, const char *eval, const char *script,
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
    int rc = check_one_slot(s, c->argv + 3, nkeys + nextra);
    if (rc)
        cv__call_argv_free(c);
    return rc;
}

bool cv__redis_is_noscript(const redisReply *rep)
{
    return rep && rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "NOSCRIPT", 8) == 0;
}

/* One range of CLUSTER SLOTS: [start, end, [host, port, ...], replicas...].
 * An empty host means the node that answered. */
bool cv__redis_slot_range(const redisReply *e, const char *asked, long long *lo, long long *hi,
                          const char **host, long long *port)
{
    if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
        e->element[0]->type != REDIS_REPLY_INTEGER || e->element[1]->type != REDIS_REPLY_INTEGER)
        return false;
    const redisReply *m = e->element[2];
    if (m->type != REDIS_REPLY_ARRAY || m->elements < 2 ||
        m->element[0]->type != REDIS_REPLY_STRING || m->element[1]->type != REDIS_REPLY_INTEGER)
        return false;
    *lo = e->element[0]->integer;
    *hi = e->element[1]->integer;
    *host = m->element[0]->str[0] ? m->element[0]->str : asked;
    *port = m->element[1]->integer;
    return *lo >= 0 && *lo <= *hi && *hi<CV_SLOTS && * port> 0 && *port <= 65535;
}

redisReply *cv_redis_script_on(redisContext *c, cv_script_t s, const char *const *keys,
                               const char *const *args, size_t nextra,
                               const char *const *extra_keys, const char *const *extra_args)
{
    /* A server that refuses SCRIPT LOAD (LOADING, ...) gets EVAL: it then
     * answers the caller with the same refusal. */
    bool loaded = shas[s][0] || cv__redis_load_one(c, s);
    cv__call_argv_t call;
    if (cv__call_argv_init(&call, s, loaded ? "EVALSHA" : "EVAL",
                           loaded ? shas[s] : cv_redis_script_text(s), keys, args, nextra,
                           extra_keys, extra_args) != 0)
        return NULL;
    redisReply *rep = redisCommandArgv(c, call.argc, call.argv, call.lens);
    if (cv__redis_is_noscript(rep) && cv__redis_load_one(c, s)) {
        /* A server without the script (restarted, or another one): once more. */
        freeReplyObject(rep);
        rep = redisCommandArgv(c, call.argc, call.argv, call.lens);
    }
    cv__call_argv_free(&call);
    return rep;
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

redisReply *cv_reply_part(redisReply *rep, size_t i, size_t n)
{
    bool split = rep && rep->type == REDIS_REPLY_ARRAY && rep->elements == n && n > 0 &&
                 rep->element[0]->type == REDIS_REPLY_ARRAY;
    return split ? rep->element[i] : rep;
}
