#include "engine.h"

#include "cv_log.h"

#include <stdio.h>
#include <stdlib.h>

static void on_dead_delivered(void *ud, int err)
{
    (void)err; /* a failed dead letter is logged by the producer; never block the partition */
    cv_job_finish(ud);
}

static void on_message(cv_job_t *job, const void *payload, size_t len, void *ud)
{
    cv_worker_t *w = ud;
    cv_msg_t m;
    char err[256], reason[320];
    w->stats.jobs++;
    int rc = cv_msg_decode(payload, len, &m, err, sizeof(err));
    if (rc == 0 && m.type != CV_MSG_STACK && m.type != CV_MSG_CHECK) {
        snprintf(err, sizeof(err), "message type %s does not belong on converge.check",
                 cv_msg_type_name(m.type));
        rc = -1;
    }
    if (rc) {
        snprintf(reason, sizeof(reason), "engine: %s", err);
        cv_worker_dead_letter(w, payload, len, reason, on_dead_delivered, job);
        return;
    }
    if (m.type == CV_MSG_STACK)
        cv__engine_stack_job(w, job, &m);
    else
        cv__engine_check_job(w, job, &m);
}

int main(int argc, char **argv)
{
    static const cv_worker_def_t def = {"engine", CV_TOPIC_CHECK, "converge-engine", on_message,
                                        NULL};
    return cv_worker_main(argc, argv, &def);
}
