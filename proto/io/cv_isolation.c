#include "cv_isolation.h"

cv_isolation_t cv_isolation_decide(const cv_isolation_in_t *in, const char **why)
{
    bool redis_down = in->redis_down_since > 0, kafka_down = in->kafka_down_since > 0;
    const char *cut = "";
    cv_isolation_t d = CV_ISOLATION_CONSUME;
    if (in->isolated) {
        if (redis_down || kafka_down) {
            d = CV_ISOLATION_STEP_ASIDE;
            cut = redis_down ? "redis" : "kafka";
        }
    } else if (redis_down != kafka_down) {
        double since = redis_down ? in->redis_down_since : in->kafka_down_since;
        if (in->now - since >= in->bound) {
            d = CV_ISOLATION_STEP_ASIDE;
            cut = redis_down ? "redis" : "kafka";
        }
    }
    if (why)
        *why = cut;
    return d;
}
