/* The public surface of the io library: the one header its users include. */
#ifndef CV_IO_H
#define CV_IO_H

#include "../cv_http.h"
#include "../cv_isolation.h"
#include "../cv_kafka.h"
#include "../cv_kafka_conf.h"
#include "../cv_keyfile.h"
#include "../cv_lease.h"
#include "../cv_log.h"
#include "../cv_metrics.h"
#include "../cv_opts.h"
#include "../cv_outage.h"
#include "../cv_redis.h"
#include "../cv_redis_sub.h"
#include "../cv_worker.h"

#endif /* CV_IO_H */
