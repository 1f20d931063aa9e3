/* Internal: librdkafka configuration shared by the producer and the consumer. */
#ifndef CV_KAFKA_CONF_H
#define CV_KAFKA_CONF_H

#include <librdkafka/rdkafka.h>
#include <stddef.h>

#include "cv_opts.h"

/* defaults: NULL-terminated key, value, key, value... list. */
rd_kafka_conf_t *cv__kafka_conf(const cv_opts_t *opts, const char *const *defaults, char *errstr,
                                size_t errstr_size);

#endif
