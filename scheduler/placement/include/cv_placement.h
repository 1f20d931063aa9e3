/* The public surface of the placement library: the one header its users include. */
#ifndef CV_PLACEMENT_H
#define CV_PLACEMENT_H

#include "../cv_balance.h"
#include "../cv_cluster.h"
#include "../cv_mesos.h"
#include "../cv_pcexpr.h"
#include "../cv_place.h"
#include "../cv_reconcile.h"

#endif /* CV_PLACEMENT_H */
