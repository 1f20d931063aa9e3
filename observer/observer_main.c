/*
 * converge-observer: consumes converge.observe. Each job watches one
 * resource (through its type's observe operation) until it is settled, then
 * records what it saw and moves the traversal on (cv_progress).
 */
#include "observer.h"

#include "cv_log.h"

#include <stdio.h>

static void on_dead_delivered(void *ud, int err)
{
    (void)err;
    cv_job_finish(ud);
}

static void on_message(cv_job_t *job, const void *payload, size_t len, void *ud)
{
    cv_worker_t *w = ud;
    cv_msg_t m;
    char err[256], reason[320];
    w->stats.jobs++;
    int rc = cv_msg_decode(payload, len, &m, err, sizeof(err));
    if (rc == 0 && m.type != CV_MSG_OBSERVE) {
        snprintf(err, sizeof(err), "message type %s does not belong on converge.observe",
                 cv_msg_type_name(m.type));
        rc = -1;
    }
    if (rc) {
        snprintf(reason, sizeof(reason), "observer: %s", err);
        cv_worker_dead_letter(w, payload, len, reason, on_dead_delivered, job);
        return;
    }
    cv__observer_observe_job(w, job, &m);
}

int main(int argc, char **argv)
{
    static const cv_worker_def_t def = {"observer", CV_TOPIC_OBSERVE, "converge-observer",
                                        on_message, NULL};
    return cv_worker_main(argc, argv, &def);
}
