/*
 * cv_finishjob — a traversal's end on its own (cv_finishjob.h).
 */
#include "cv_finishjob.h"

#include "cv_base.h"

#include <string.h>

void cv_finishjob_init(cv_finishjob_t *f, const char *stack, uint64_t traversal, const char *worker)
{
    memset(f, 0, sizeof(*f));
    cv_str_copy(f->stack, sizeof(f->stack), stack);
    f->traversal = traversal;
    cv_str_copy(f->worker, sizeof(f->worker), worker);
    cv__flow_begin(&f->buf);
}

const cv_flow_t *cv_finishjob_start(cv_finishjob_t *f)
{
    cv_finishjob_reset(f);
    return cv_progress_finish(&f->progress, &f->buf, f->stack, f->traversal, f->worker);
}

const cv_flow_t *cv_finishjob_step(cv_finishjob_t *f, const cv_flow_in_t *in)
{
    cv__flow_begin(&f->buf);
    const cv_flow_t *a = cv_progress_step(&f->progress, &f->buf, in, &f->rc);
    if (a)
        return a;
    bool transient = f->rc == CV_EREDIS || f->rc == CV_EKAFKA;
    return cv__flow_end(&f->buf, transient ? CV_FLOW_RETRY : CV_FLOW_DONE);
}

void cv_finishjob_reset(cv_finishjob_t *f)
{
    cv_progress_clear(&f->progress);
    cv__flow_clear(&f->buf);
    cv__flow_begin(&f->buf);
    f->rc = 0;
}

int cv_finishjob_rc(const cv_finishjob_t *f)
{
    return f->rc;
}
