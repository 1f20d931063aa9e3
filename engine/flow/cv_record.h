/*
 * cv_record — a resource record as stored in Redis (hash <stack>:res:<name>),
 * parsed from the flat HGETALL reply that the scripts return.
 * Field meanings are documented in docs/keyspace.md.
 */
#ifndef CV_RECORD_H
#define CV_RECORD_H

#include <hiredis/hiredis.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cv_rtype.h"

typedef struct cv_record {
    bool exists; /* the record has a status: some action was recorded */
    char status[48];
    char action[16];
    char type[128];
    char physical_id[CV_PHYSID_MAX];
    char uuid[48];
    char version[24]; /* "0" when the record does not exist */
    char policy[16];  /* deletion policy of this version: Delete, Retain, Snapshot */
    uint64_t traversal;
    double started;
    json_t *props; /* owned, never NULL after parse */
    json_t *attrs;
    json_t *data;
    json_t *old; /* replaced versions awaiting cleanup: array of objects with
                    uuid, physical_id, type, props, attrs, data, status, policy, started */
} cv_record_t;

/* Parses a flat [field, value, ...] reply. Returns 0 or CV_EPROTO. */
int cv_record_parse(cv_record_t *rec, const redisReply *flat);
void cv_record_clear(cv_record_t *rec);

/* Parses a flat [field, value, ...] reply into an object of strings. */
json_t *cv_reply_to_object(const redisReply *flat);

/* Adds Heat's pseudo parameters (OS::stack_name, OS::stack_id,
 * OS::project_id, OS::region) to resolved parameters, keeping given ones:
 * templates may read them, only the engine knows their values. */
void cv_record_pseudo_params(json_t *params, const char *stack_id, const char *stack_name);

/* The deterministic uuid of a resource version: the same stack, resource and
 * traversal always give the same uuid, so a create retried after a crash
 * carries the same idempotency key. */
void cv_record_uuid(char out[37], const char *stack, const char *resource, uint64_t traversal);

#endif
