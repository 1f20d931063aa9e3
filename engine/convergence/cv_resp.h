/*
 * cv_resp — what a Redis command answered, as plain data.
 *
 * The job flows (cv_flow.h) read script replies without knowing how they
 * came: the workers turn hiredis's replies into these (cv_flowrun_resp), the
 * scenario harness does the same with its synchronous ones, and a unit test
 * writes them as JSON. An array's elements are contiguous; strings are
 * NUL-terminated and belong to whoever made the value. The accessors are
 * those of cv_redis.h (cv_reply_*), with the same answers for the same
 * shapes, so a flow reads a reply exactly as a callback did.
 */
#ifndef CV_RESP_H
#define CV_RESP_H

#include <jansson.h>
#include <stddef.h>

#include "cv_contract.h"

typedef enum {
    CV_RESP_NIL,
    CV_RESP_INTEGER,
    CV_RESP_STRING, /* also a status reply */
    CV_RESP_ARRAY,
    CV_RESP_ERROR,
} cv_resp_type_t;

typedef struct cv_resp cv_resp_t;
struct cv_resp {
    cv_resp_type_t type;
    long long integer;        /* INTEGER */
    const char *str;          /* STRING, ERROR */
    size_t len;               /* of str */
    const cv_resp_t *element; /* ARRAY: `elements` values in a row */
    size_t elements;
};

/* What a reply of script s answers (cv_reply_answer): its first element's
 * word for an answer-shaped row, CV_ANSWER_VALUE for a value-shaped row's
 * value, CV_ANSWER_INVALID for NULL (no reply: the connection failed), an
 * error, or a word not in the row. */
cv_answer_t cv_resp_answer(cv_script_t s, const cv_resp_t *r);

/* Element i of an array; NULL when absent. */
const cv_resp_t *cv_resp_at(const cv_resp_t *r, size_t i);
/* Element i as a string ("" when absent or not a string) / as an integer
 * (0 when absent; a string is read as a number). */
const char *cv_resp_str(const cv_resp_t *r, size_t i);
long long cv_resp_int(const cv_resp_t *r, size_t i);
/* The number of elements of an array (0 for anything else, NULL too). */
size_t cv_resp_count(const cv_resp_t *r);
/* An error reply's text, or NULL when r is none. */
const char *cv_resp_error(const cv_resp_t *r);

/* Part i of a reply to a call made for n parts at once (cv_reply_part):
 * element i when the reply is a list of n lists, else the reply itself, so
 * that an error or no reply is every part's. */
const cv_resp_t *cv_resp_part(const cv_resp_t *r, size_t i, size_t n);

/* A flat [field, value, ...] reply as an object of strings (every value
 * that is no string is left out). */
json_t *cv_resp_to_object(const cv_resp_t *flat);

#endif
