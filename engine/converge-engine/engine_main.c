#include "engine.h"

#include "cv_io.h"
#include "cv_convergence.h"

static void *limits; /* the publisher of the engine's limits (engine_limits.c) */

static void *start_reaper(cv_worker_t *w)
{
    limits = cv__engine_limits_start(w);
    return cv_reaper_start(w);
}

static void stop_reaper(void *reaper)
{
    cv__engine_limits_stop(limits);
    cv_reaper_stop(reaper);
}

static void on_message(cv_job_t *job, const void *payload, size_t len, void *ud)
{
    cv_worker_t *w = ud;
    cv_msg_t m;
    if (cv_worker_accept(w, job, payload, len,
                         1u << CV_MSG_STACK | 1u << CV_MSG_CHECK | 1u << CV_MSG_SIGNAL, &m))
        return;
    if (m.type == CV_MSG_STACK)
        cv__engine_stack_job(w, job, &m);
    else if (m.type == CV_MSG_SIGNAL)
        cv__engine_signal_job(w, job, &m);
    else
        cv__engine_check_job(w, job, &m);
}

int main(int argc, char **argv)
{
    static const cv_worker_def_t def = {.role = "engine",
                                        .topic = CV_TOPIC_CHECK,
                                        .group = "converge-engine",
                                        .handler = on_message,
                                        .start = start_reaper,
                                        .stop = stop_reaper};
    return cv_worker_main(argc, argv, &def);
}
