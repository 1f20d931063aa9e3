/*
 * converge-observer: consumes converge.observe. Each job watches one
 * resource (through its type's observe operation) until it is settled, then
 * records what it saw and moves the traversal on (cv_observejob, cv_progress).
 */
#include "observer.h"

#include "cv_live.h"
#include "cv_io.h"

static void on_message(cv_job_t *job, const void *payload, size_t len, void *ud)
{
    cv_worker_t *w = ud;
    cv_msg_t m;
    if (cv_worker_accept(w, job, payload, len, 1u << CV_MSG_OBSERVE, &m))
        return;
    cv__observer_observe_job(w, job, &m);
}

int main(int argc, char **argv)
{
    static const cv_worker_def_t def = {.role = "observer",
                                        .topic = CV_TOPIC_OBSERVE,
                                        .group = "converge-observer",
                                        .handler = on_message,
                                        .start = cv_live_loop_start,
                                        .stop = cv_live_loop_stop};
    return cv_worker_main(argc, argv, &def);
}
