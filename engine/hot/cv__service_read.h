/*
 * cv__service_read — what the files reading Converge::Service's properties
 * share (rtype_service_read.c: the readers of values of any property;
 * rtype_service_props.c: the processes, ports, volumes and the table;
 * rtype_service_policies.c: placement, metrics and the policies). A reader
 * checks one value at `path` (below the properties, "health_check.type")
 * and returns it in the form the service spec holds, a new reference, or
 * NULL with the error written through the reader: "<where>.<path>: ...".
 */
#ifndef CV__SERVICE_READ_H
#define CV__SERVICE_READ_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define CV__SVC_PATH_MAX 256

typedef struct cv__svc_reader {
    const char *where; /* "resources.web.properties" */
    char *errstr;
    size_t errstr_size;
} cv__svc_reader_t;

typedef json_t *(*cv__svc_field_fn)(const cv__svc_reader_t *r, const char *path, const json_t *v);

/* One key of a map property and its reader. */
typedef struct cv__svc_field {
    const char *key;
    cv__svc_field_fn read;
} cv__svc_field_t;

/* Writes "<where>.<path>: <message>"; returns CV_EVALIDATE. */
int cv__svc_bad(const cv__svc_reader_t *r, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* "expected <type>, got <value>". */
int cv__svc_bad_type(const cv__svc_reader_t *r, const char *path, const char *expected,
                     const json_t *v);

/* A string, or a number or boolean spelled as one (Heat's String). */
json_t *cv__svc_string(const cv__svc_reader_t *r, const char *path, const json_t *v);
/* A number in [min, max] (max < 0: none), an integer when `integer`;
 * Heat's Range message otherwise. */
json_t *cv__svc_number(const cv__svc_reader_t *r, const char *path, const json_t *v, bool integer,
                       double min, double max);
/* One of `allowed` (NULL-terminated, matched ignoring case) in its
 * spelling there; Heat's AllowedValues message otherwise. */
json_t *cv__svc_choice(const cv__svc_reader_t *r, const char *path, const json_t *v,
                       const char *const *allowed);
/* A letter or _, then letters, digits, _ and the characters of `extra`. */
json_t *cv__svc_name(const cv__svc_reader_t *r, const char *path, const json_t *v,
                     const char *extra);
json_t *cv__svc_bool(const cv__svc_reader_t *r, const char *path, const json_t *v);
/* A map read key by key with `fields` (an unknown key is an error; null
 * values are left out); defaults are the caller's. */
json_t *cv__svc_fields(const cv__svc_reader_t *r, const char *path, const json_t *v,
                       const cv__svc_field_t *fields);
/* Whether obj[key] is set; if not, "required property is missing" at
 * path.key is the error. */
bool cv__svc_require(const cv__svc_reader_t *r, const char *path, const json_t *obj,
                     const char *key);
/* Sets obj[key] to `v` (taken) unless it is set. */
void cv__svc_default(json_t *obj, const char *key, json_t *v);
/* A list of maps, or of names each read as {"name": name}, by `read`;
 * names unique. */
json_t *cv__svc_named_list(const cv__svc_reader_t *r, const char *path, const json_t *v,
                           cv__svc_field_fn read);

/* Property readers one file has and another uses. */
json_t *cv__svc_read_command(const cv__svc_reader_t *r, const char *path, const json_t *v);
json_t *cv__svc_read_port_name(const cv__svc_reader_t *r, const char *path, const json_t *v);
json_t *cv__svc_read_metrics(const cv__svc_reader_t *r, const char *path, const json_t *v);
json_t *cv__svc_read_placement(const cv__svc_reader_t *r, const char *path, const json_t *v);
json_t *cv__svc_read_constraints(const cv__svc_reader_t *r, const char *path, const json_t *v);
json_t *cv__svc_read_spread(const cv__svc_reader_t *r, const char *path, const json_t *v);
json_t *cv__svc_read_affinity(const cv__svc_reader_t *r, const char *path, const json_t *v);
json_t *cv__svc_read_health(const cv__svc_reader_t *r, const char *path, const json_t *v);
json_t *cv__svc_read_restart(const cv__svc_reader_t *r, const char *path, const json_t *v);
json_t *cv__svc_read_kill(const cv__svc_reader_t *r, const char *path, const json_t *v);
json_t *cv__svc_read_update_policy(const cv__svc_reader_t *r, const char *path, const json_t *v);
json_t *cv__svc_read_move_cost(const cv__svc_reader_t *r, const char *path, const json_t *v);

#endif
