/* The public surface of the hot library: the one header its users include. */
#ifndef CV_HOT_H
#define CV_HOT_H

#include "../cv_env.h"
#include "../cv_rtype.h"
#include "../cv_scaling.h"
#include "../cv_service.h"
#include "../cv_template.h"

#endif /* CV_HOT_H */
