/*
 * cv_balance — not written yet: the default settings and no move.
 */
#include "cv_balance.h"

json_t *cv_balance_settings(const json_t *settings, char *errstr, size_t errstr_size)
{
    (void)settings;
    (void)errstr;
    (void)errstr_size;
    return json_pack("{s:f, s:f, s:f, s:f, s:{}, s:{}}", "PLBRefreshGap", 0.1,
                     "MinPlacementInterval", 1.0, "MinConstraintCheckInterval", 1.0,
                     "MinLoadBalancingInterval", 5.0, "metrics", "nodeTypes");
}

json_t *cv_balance(const json_t *model, cv_balance_phase_t phase, const json_t *state, char *errstr,
                   size_t errstr_size)
{
    (void)model;
    (void)errstr;
    (void)errstr_size;
    return json_pack("{s:s, s:[], s:[], s:i, s:n, s:O}", "phase",
                     phase == CV_BALANCE_CONSTRAINT ? "constraint" : "balancing", "moves",
                     "imbalance", "throttled", 0, "why", "state", state);
}
