/*
 * web_api_internal — what the stack documents (web_api.c) share with the
 * cluster's (web_api_cluster.c). Not part of web_api.h's surface.
 */
#ifndef WEB_API_INTERNAL_H
#define WEB_API_INTERNAL_H

#include <jansson.h>

#include "cv_status.h"

/* *status 503 and its document. */
json_t *web__unavailable(int *status);

/* Unix seconds now. */
double web__now(void);

/* The id of the stack a path names: 0, or -1 with *status 404 / 503 and
 * *err its document. */
int web__resolve(cli_t *cli, const char *stack, char id[CV_ID_MAX], int *status, json_t **err);

/* /api/cluster and /api/services/STACK/NAME. */
json_t *web__cluster_doc(cli_t *cli, int *status);
json_t *web__service_doc(cli_t *cli, const char *stack, const char *service, int *status);

#endif
