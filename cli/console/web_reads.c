/*
 * converge-web's reads on the thread pool (web_reads.h).
 */
#include "web_reads.h"

#include "web_api.h"

#include "cv_io.h"

#include <stdlib.h>

typedef struct read {
    uv_work_t work;
    web_reads_t *reads;
    web_read_fn fn;
    web_read_done done;
    void *arg;
    json_t *doc;
    int status;
    struct read *next;
} read_t;

struct web_reads {
    uv_loop_t *loop;
    cli_t *cli;
    read_t *head, *tail; /* asked; head is running when `running` */
    bool running;
    size_t pending;
};

web_reads_t *web_reads_new(uv_loop_t *loop, cli_t *cli)
{
    web_reads_t *r = calloc(1, sizeof(*r));
    if (!r)
        abort(); /* at start only: nothing to serve without it */
    r->loop = loop;
    r->cli = cli;
    return r;
}

/* On a pool thread; the only code touching the connection while it runs. */
static void run(uv_work_t *w)
{
    read_t *rd = w->data;
    cli_t *cli = rd->reads->cli;
    if (!cli->redis && cli_redis_connect(cli) != CLI_OK) {
        rd->status = 503;
        rd->doc = web_api_error("cannot reach Redis at %s", cli->opts.redis_url);
        return;
    }
    /* The key file rotated is read here, where no other read runs: the
     * reads are the only users of the key ring (cv_keyfile.h). */
    cv_keyfile_refresh();
    rd->status = 200;
    rd->doc = rd->fn(cli, rd->arg, &rd->status);
}

static void start_next(web_reads_t *r);

static void finished(uv_work_t *w, int status)
{
    (void)status; /* never cancelled: reads are not */
    read_t *rd = w->data;
    web_reads_t *r = rd->reads;
    r->head = rd->next;
    if (!r->head)
        r->tail = NULL;
    r->running = false;
    r->pending--;
    rd->done(rd->doc, rd->status, rd->arg);
    free(rd);
    start_next(r);
}

static void start_next(web_reads_t *r)
{
    if (r->running || !r->head)
        return;
    r->running = true;
    r->head->work.data = r->head;
    if (uv_queue_work(r->loop, &r->head->work, run, finished) != 0)
        abort(); /* only for a NULL callback: a bug */
}

void web_reads_ask(web_reads_t *r, web_read_fn fn, web_read_done done, void *arg)
{
    read_t *rd = calloc(1, sizeof(*rd));
    if (!rd) {
        done(web_api_error("out of memory"), 503, arg);
        return;
    }
    *rd = (read_t){.reads = r, .fn = fn, .done = done, .arg = arg};
    if (r->tail)
        r->tail->next = rd;
    else
        r->head = rd;
    r->tail = rd;
    r->pending++;
    start_next(r);
}

size_t web_reads_pending(const web_reads_t *r)
{
    return r->pending;
}

void web_reads_free(web_reads_t *r)
{
    free(r);
}
