/*
 * Internal to cv_redis: what its files share — the scripts' command
 * vectors, synchronous connections to one server, and one asynchronous
 * connection to one server (cv_redis_node.c), of which a cv_redis_t holds
 * one (a single Redis) or one per master (a Redis Cluster, cv_redis.c).
 */
#ifndef CV__REDIS_H
#define CV__REDIS_H

#include "cv_redis.h"

/* The command vector of a script call: EVALSHA sha (or EVAL text) numkeys
 * keys... args... (the variadic tail's keys after the fixed keys, its
 * arguments after the fixed arguments; NULL strings sent as ""). Refused
 * (CV_EINVAL, logged) when its keys are in two Redis Cluster slots. */
typedef struct cv__call_argv {
    int argc;
    const char **argv;
    size_t *lens;
    char numkeys[24];
    const char *sargv[64];
    size_t slens[64];
} cv__call_argv_t;

int cv__call_argv_init(cv__call_argv_t *c, cv_script_t s, const char *eval, const char *script,
                       const char *const *keys, const char *const *args, size_t nextra,
                       const char *const *extra_keys, const char *const *extra_args);
void cv__call_argv_free(cv__call_argv_t *c);

/* The script's SHA1 as SCRIPT LOAD answers it (the same on every server). */
const char *cv__redis_sha(cv_script_t s);

bool cv__redis_is_noscript(const redisReply *rep);

/* A synchronous connection to host:port with opts' credentials and
 * database; NULL with errstr, and *rcp (when not NULL) CV_EAUTH when the
 * credentials were refused, CV_EREDIS otherwise. */
redisContext *cv__redis_connect_sync_to(const cv_opts_t *opts, const char *host, int port, int *rcp,
                                        char *errstr, size_t errstr_size);

/* Loads script s on c; whether it worked. */
bool cv__redis_load_one(redisContext *c, cv_script_t s);

/* Loads every script on c (SCRIPT LOAD is idempotent). 0 or CV_EREDIS. */
int cv__redis_load_scripts(redisContext *c, const char *where, char *errstr, size_t errstr_size);

/* One entry of CLUSTER SLOTS, [start, end, [host, port, ...], replicas...]:
 * the range and its master (an empty host is `asked`, the node that
 * answered). Whether the entry has that shape. */
bool cv__redis_slot_range(const redisReply *e, const char *asked, long long *lo, long long *hi,
                          const char **host, long long *port);

/* ---- one asynchronous connection to one server (cv_redis_node.c) ---- */

typedef struct cv__rnode cv__rnode_t;

/* The node's owner hears of its state (as cv_redis_state_cb, naming the
 * node) and of its end: `gone` once it is closed and freed. */
typedef struct cv__rnode_owner {
    void (*state)(void *ud, cv__rnode_t *n, bool up, const char *why);
    void (*gone)(void *ud, cv__rnode_t *n);
    void *ud;
} cv__rnode_owner_t;

/* Loads the scripts (synchronously) and starts connecting. 0, CV_EAUTH or CV_EREDIS. */
int cv__rnode_open(cv__rnode_t **out, uv_loop_t *loop, const cv_opts_t *opts, const char *host,
                   int port, const cv__rnode_owner_t *owner, char *errstr, size_t errstr_size);
/* Graceful (replies due are awaited CLOSE_DEADLINE_MS); owner.gone follows. */
void cv__rnode_close(cv__rnode_t *n);
/* A reset: what was sent and not answered is discarded; reconnects. */
void cv__rnode_drop(cv__rnode_t *n, const char *why);

bool cv__rnode_connected(const cv__rnode_t *n);
bool cv__rnode_available(const cv__rnode_t *n);
bool cv__rnode_is(const cv__rnode_t *n, const char *host, int port);
bool cv__rnode_closing(const cv__rnode_t *n);     /* closed, waiting to be gone */
const char *cv__rnode_name(const cv__rnode_t *n); /* "host:port" */

/* Sends a command, even while the connection is being made (hiredis sends
 * it once connected). fn gets reply NULL if the connection is lost first.
 * 0, or CV_EREDIS when there is no connection at all. */
int cv__rnode_send(cv__rnode_t *n, int argc, const char **argv, const size_t *lens,
                   redisCallbackFn *fn, void *privdata);

/* What every reply tells the node: NULL is a connection going down, an
 * error saying Redis cannot serve is an outage (until the next ordinary
 * reply), NOSCRIPT means reloading the scripts. */
void cv__rnode_note(cv__rnode_t *n, const redisReply *rep);

#endif
