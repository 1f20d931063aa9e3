/*
 * web_reads — converge-web's Redis reads, off the loop. The API documents
 * are built by convergectl's synchronous readers (web_api.h); each runs on
 * libuv's thread pool and its document comes back to the loop in a
 * callback, so the loop keeps serving pages, streams and other requests
 * while Redis answers, or while it does not (hiredis's timeout).
 *
 * Reads run one at a time, in the order asked: one connection serves them
 * all (made when first needed, again after one failed), and the readers'
 * lazily built tables need no locks. A console's load is a few pages and
 * streams; one reader keeps up with it.
 */
#ifndef WEB_READS_H
#define WEB_READS_H

#include <jansson.h>
#include <stdbool.h>
#include <uv.h>

#include "cv_status.h"

typedef struct web_reads web_reads_t;

/* A read: runs on a pool thread with the connection; sets *status (200,
 * 400, 404 or 503) and returns the document (NULL allowed). */
typedef json_t *(*web_read_fn)(cli_t *cli, void *arg, int *status);

/* Its answer, on the loop; owns doc (may be NULL). */
typedef void (*web_read_done)(json_t *doc, int status, void *arg);

/* The reads of `cli` (its options; its connection is the readers'). */
web_reads_t *web_reads_new(uv_loop_t *loop, cli_t *cli);

/* Queues fn(cli, arg) behind the reads already asked; done(doc, status,
 * arg) follows on the loop. With no connection to Redis (and none to be
 * made), done gets a 503 document without fn being run. */
void web_reads_ask(web_reads_t *r, web_read_fn fn, web_read_done done, void *arg);

/* Reads asked and not answered yet. */
size_t web_reads_pending(const web_reads_t *r);

/* Frees r once no read is pending (the caller runs the loop until then). */
void web_reads_free(web_reads_t *r);

#endif
