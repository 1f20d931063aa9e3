/*
 * cv_record — a resource record as stored in Redis (hash <stack>:res:<name>),
 * parsed from the flat HGETALL reply that the scripts return.
 * Field meanings are documented in docs/keyspace.md.
 */
#ifndef CV_RECORD_H
#define CV_RECORD_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "cv_hot.h"
#include "cv_resp.h"

typedef struct cv_record {
    bool exists; /* the record has a status: some action was recorded */
    char status[48];
    char action[16];
    char type[128]; /* the type that implements the version (registry applied) */
    /* The type as the template wrote it (what is reported); "" in a record
     * written before it was kept: taken as `type` (cv_record_declared_type). */
    char declared_type[128];
    char physical_id[CV_PHYSID_MAX];
    char uuid[48];
    char version[24]; /* "0" when the record does not exist */
    char policy[16];  /* deletion policy of this version: Delete, Retain, Snapshot */
    char reason[512]; /* of the last status change */
    uint64_t traversal;
    double started;
    json_t *props; /* owned, never NULL after parse */
    json_t *attrs;
    json_t *data;
    json_t *old; /* replaced versions awaiting cleanup: array of objects with
                    uuid, physical_id, type, declared_type, props, attrs, data, status,
                    policy, started */
} cv_record_t;

/* The type the template wrote for the recorded version: `declared_type`,
 * or `type` in a record that has none. */
const char *cv_record_declared_type(const cv_record_t *rec);

/* Parses a flat [field, value, ...] reply, its sealed values opened
 * (cv_seal.h). Returns 0, or CV_EIO when a sealed value cannot be opened
 * (this process lacks its key): the job must wait for a worker that can. */
int cv_record_parse(cv_record_t *rec, const cv_resp_t *flat);
void cv_record_clear(cv_record_t *rec);

/* The compact JSON text of a record's field (json_dumps JSON_COMPACT, to
 * free()): an empty object or array, what most records hold, without
 * jansson's encoder. NULL for NULL. */
char *cv_record_json(const json_t *v);

/* The same, sealed when the process seals (cv_seal.h): what a record's
 * `props` and `attrs` and a sync point's `attrs` are stored as, since they
 * may carry secrets (a hidden parameter, a RandomString's value). */
char *cv_record_json_sealed(const json_t *v);

/* A record's replaced versions `old` as stored: each version's `props` and
 * `attrs` sealed when the process seals; the rest plain, which the scripts
 * read (uuid, status). */
char *cv_record_old_json(const json_t *old);

/* What a settled node passes on to its successors' sync points:
 * {"id": ref, "attrs": attrs}, the attributes sealed when the process
 * seals. malloc'ed. */
char *cv_record_pass_json(const char *ref, const json_t *attrs);

/* Adds Heat's pseudo parameters (OS::stack_name, OS::stack_id,
 * OS::project_id, OS::region) to resolved parameters, keeping given ones:
 * templates may read them, only the engine knows their values. */
void cv_record_pseudo_params(json_t *params, const char *stack_id, const char *stack_name);

/* The deterministic uuid of a resource version: the same stack, resource and
 * traversal always give the same uuid, so a create retried after a crash
 * carries the same idempotency key. */
void cv_record_uuid(char out[37], const char *stack, const char *resource, uint64_t traversal);

/* One version of a resource as a type operation sees it: the current
 * version of a record, a replaced version, or a new one (empty). */
typedef struct cv_version {
    const char *stack;       /* stack id */
    const char *resource;    /* resource name */
    const char *uuid;        /* the version's idempotency key; may be NULL */
    const char *physical_id; /* NULL counts as "" */
    const json_t *props;     /* borrowed; may be NULL */
    const json_t *data;      /* copied; NULL counts as empty */
    const json_t *attrs;     /* copied; NULL counts as empty */
    double started;          /* when its recorded action started */
} cv_version_t;

/* Fills `st` for a type operation on version `v` at time `now`: the
 * engine's actions and the observer's looks build their state only here.
 * Free it with cv_record_state_clear. */
void cv_record_state(cv_rstate_t *st, const cv_version_t *v, double now);
void cv_record_state_clear(cv_rstate_t *st);

#endif
