/* The public surface of the base library: the one header its users include. */
#ifndef CV_BASE_H
#define CV_BASE_H

#include "../cv_buf.h"
#include "../cv_error.h"
#include "../cv_graph.h"
#include "../cv_hash.h"
#include "../cv_httpreq.h"
#include "../cv_prom.h"
#include "../cv_regex.h"
#include "../cv_str.h"
#include "../cv_vec.h"

#endif /* CV_BASE_H */
