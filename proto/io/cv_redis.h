/*
 * cv_redis — the asynchronous Redis connection of a worker.
 *
 * hiredis async on the worker's libuv loop, so commands issued back to back
 * are pipelined on one connection. Scripts (proto/lua) are loaded at connect
 * and called by SHA; after a Redis restart (NOSCRIPT) they are reloaded and
 * the caller sees an error reply and retries its job. A lost connection is
 * re-established with capped exponential backoff; callbacks of commands in
 * flight receive reply == NULL.
 */
#ifndef CV_REDIS_H
#define CV_REDIS_H

#include <hiredis/async.h>
#include <hiredis/hiredis.h>
#include <stdbool.h>
#include <stddef.h>
#include <uv.h>

#include "cv_opts.h"
#include "cv_contract.h"

typedef struct cv_redis cv_redis_t;

/* reply is NULL when the connection was lost; it is freed after the call. */
typedef void (*cv_redis_cb)(cv_redis_t *r, redisReply *reply, void *ud);

/* Connects (synchronously loading the scripts first). Returns 0 or CV_EREDIS. */
int cv_redis_open(cv_redis_t **out, uv_loop_t *loop, const cv_opts_t *opts, char *errstr,
                  size_t errstr_size);
void cv_redis_close(cv_redis_t *r);

/* Whether the connection is up right now. A command whose reply is NULL
 * (the connection was lost under it) sees false already. */
bool cv_redis_connected(const cv_redis_t *r);

/* Drops the connection at once, discarding what was sent and not yet
 * delivered (a reset, not a close), and reconnects as after any lost
 * connection; pending callbacks get no reply. For a connection that stopped
 * answering, whose queued commands must not reach Redis when the network
 * heals. */
void cv_redis_drop(cv_redis_t *r, const char *why);

/* Connected, and the last reply was not Redis saying it cannot serve
 * (LOADING, BUSY, MASTERDOWN, TRYAGAIN, CLUSTERDOWN). */
bool cv_redis_available(const cv_redis_t *r);

/* Called when the connection comes up (up, why "") or is lost or cannot be
 * made (!up, why says what happened) — on every attempt while Redis is away,
 * so the listener decides what an outage is — and when Redis answers that it
 * cannot serve (!up) or serves again (up). Without a listener these are
 * logged as warnings. */
typedef void (*cv_redis_state_cb)(void *ud, bool up, const char *why);
void cv_redis_on_state(cv_redis_t *r, cv_redis_state_cb cb, void *ud);

/* Sends a command given as an argument vector. Returns 0, or CV_EREDIS when
 * not connected (cb is then not called). */
int cv_redis_argv(cv_redis_t *r, int argc, const char **argv, const size_t *lens, cv_redis_cb cb,
                  void *ud);

/* Calls script s: EVALSHA with the row's keys and arguments (the counts
 * are the row's, cv_script.def) and, for a variadic row, `nextra` more of
 * each. keys and args are the v[] of the script's cv_<name>_keys_t /
 * cv_<name>_args_t; a NULL among them is sent as "". Returns 0, or
 * CV_EREDIS when not connected (cb is then not called). */
int cv_redis_call(cv_redis_t *r, cv_script_t s, const char *const *keys, const char *const *args,
                  size_t nextra, const char *const *extra_keys, const char *const *extra_args,
                  cv_redis_cb cb, void *ud);

/* Full text of a script (prelude + body). */
const char *cv_redis_script_text(cv_script_t s);

/* The bound of a stack's event stream every script's events keep (about
 * that many, the newest; 0: unbounded): CV_REDIS_EVENTS_MAX unless set
 * before the first script is loaded (--max-events-per-stack,
 * $CONVERGE_MAX_EVENTS_PER_STACK). */
#define CV_REDIS_EVENTS_MAX 1000
void cv_redis_set_events_max(long n);

/* Fills errstr with "Redis at host:port refused the credentials of user U:
 * why" (never the password); returns CV_EAUTH. */
int cv_redis_auth_refused(const cv_opts_t *opts, const char *why, char *errstr, size_t errstr_size);

/* Sends AUTH (when opts has a password) as the first command of an async
 * connection; a refusal is reported to on_refused with the sentence of
 * cv_redis_auth_refused, and the connection is then closed. */
void cv_redis_auth_async(redisAsyncContext *ac, const cv_opts_t *opts,
                         void (*on_refused)(void *ud, const char *why), void *ud);

/* ---- synchronous, for the CLI: a single Redis or a Redis Cluster ---- */

/* One connection per node, each made when first needed; in a cluster every
 * command goes to the master of its key's slot, MOVED and ASK followed. A
 * command without keys (MULTI, EXEC, TIME) goes where the last command with
 * a key went, so that a transaction stays on its key's node. */
typedef struct cv_redis_sync cv_redis_sync_t;

/* NULL with errstr (and *rcp CV_EAUTH when the credentials were refused,
 * else CV_EREDIS) on failure. */
cv_redis_sync_t *cv_redis_sync_open(const cv_opts_t *opts, int *rcp, char *errstr,
                                    size_t errstr_size);
void cv_redis_sync_close(cv_redis_sync_t *s);

/* The reply (free it with freeReplyObject), or NULL when the connection
 * failed (cv_redis_sync_error says why). */
redisReply *cv_redis_sync_argv(cv_redis_sync_t *s, int argc, const char **argv, const size_t *lens);

/* The connections of every node that serves slots (a Redis Cluster's
 * masters; the one server otherwise), into out (at most max): what a
 * command without a key, such as SCAN, must be sent to each of. Their
 * number, or -1 when one cannot be made (cv_redis_sync_error says why). */
int cv_redis_sync_masters(cv_redis_sync_t *s, redisContext **out, int max);

/* The connection serving `key`, to pipeline commands on keys of its slot
 * (redisAppendCommandArgv / redisGetReply); NULL when it cannot be made. */
redisContext *cv_redis_sync_context(cv_redis_sync_t *s, const char *key);

/* WAIT on the node serving `key`: how many replicas have every write made
 * there so far, once `replicas` (at most as many as the master has
 * connected) have it or after timeout_ms; -1 when the node cannot be
 * reached. On a single Redis, or a master without replicas, it answers 0
 * at once: nothing to wait for. */
long long cv_redis_sync_wait(cv_redis_sync_t *s, const char *key, int replicas, int timeout_ms);

/* Why the last call failed ("" when it did not). */
const char *cv_redis_sync_error(const cv_redis_sync_t *s);

/* cv_redis_script_sync on one server's connection (a single Redis). */
redisReply *cv_redis_script_on(redisContext *c, cv_script_t s, const char *const *keys,
                               const char *const *args, size_t nextra,
                               const char *const *extra_keys, const char *const *extra_args);

/* cv_redis_call, synchronously: EVALSHA of the script's SHA, loaded once
 * (SCRIPT LOAD) and again only when the server answers NOSCRIPT (another
 * server, or one restarted). Returns the reply (free it with
 * freeReplyObject) or NULL when the connection failed. */
redisReply *cv_redis_script_sync(cv_redis_sync_t *s, cv_script_t script, const char *const *keys,
                                 const char *const *args, size_t nextra,
                                 const char *const *extra_keys, const char *const *extra_args);

/* What a reply of script s answers: its first element's word for an
 * answer-shaped row (cv_script_answer), CV_ANSWER_VALUE for a value-shaped
 * row's value, CV_ANSWER_INVALID for NULL (connection lost), an error reply,
 * or a word not in the row. */
cv_answer_t cv_reply_answer(cv_script_t s, const redisReply *rep);

/* Element i of an array reply as a string ("" when absent or not a
 * string) / as an integer (0 when absent). Pass a named position:
 * cv_reply_str(rep, CV_CHECK_BEGIN_R_GRAPH_ENTRY). */
const char *cv_reply_str(const redisReply *r, size_t i);
long long cv_reply_int(const redisReply *r, size_t i);
/* Element i itself; NULL when absent. */
const redisReply *cv_reply_at(const redisReply *r, size_t i);

/* The answer of part i of a script call made for n parts at once (the
 * nodes of one message): element i when the reply is a list of n lists;
 * the reply itself otherwise, so that an error or a lost connection (NULL)
 * is every part's answer. */
redisReply *cv_reply_part(redisReply *rep, size_t i, size_t n);

#endif
