/* The public surface of the convergence library: the one header its users include. */
#ifndef CV_CONVERGENCE_H
#define CV_CONVERGENCE_H

#include "../cv_calls.h"
#include "../cv_checkjob.h"
#include "../cv_decide.h"
#include "../cv_expand.h"
#include "../cv_finishjob.h"
#include "../cv_flow.h"
#include "../cv_flowrun.h"
#include "../cv_gate.h"
#include "../cv_jobrun.h"
#include "../cv_observejob.h"
#include "../cv_poison.h"
#include "../cv_progress.h"
#include "../cv_purge.h"
#include "../cv_rdef.h"
#include "../cv_reaper.h"
#include "../cv_record.h"
#include "../cv_resp.h"
#include "../cv_stackjob.h"
#include "../cv_syncpoint.h"
#include "../cv_traversal.h"

#endif /* CV_CONVERGENCE_H */
