/*
 * cv_resp — reading replies held as plain data (cv_resp.h).
 */
#include "cv_resp.h"

#include <stdbool.h>
#include <stdlib.h>

cv_answer_t cv_resp_answer(cv_script_t s, const cv_resp_t *r)
{
    if (!r || r->type == CV_RESP_ERROR)
        return CV_ANSWER_INVALID;
    const cv_resp_t *first = cv_resp_at(r, 0);
    cv_answer_t a = first && first->type == CV_RESP_STRING ? cv_script_answer(s, first->str)
                                                           : CV_ANSWER_INVALID;
    if (a == CV_ANSWER_INVALID && cv_script_shape(s) == CV_SCRIPT_VALUE)
        return CV_ANSWER_VALUE;
    return a;
}

const cv_resp_t *cv_resp_at(const cv_resp_t *r, size_t i)
{
    if (!r || r->type != CV_RESP_ARRAY || i >= r->elements)
        return NULL;
    return &r->element[i];
}

const char *cv_resp_str(const cv_resp_t *r, size_t i)
{
    const cv_resp_t *e = cv_resp_at(r, i);
    return e && e->type == CV_RESP_STRING ? e->str : "";
}

long long cv_resp_int(const cv_resp_t *r, size_t i)
{
    const cv_resp_t *e = cv_resp_at(r, i);
    if (e && e->type == CV_RESP_INTEGER)
        return e->integer;
    if (e && e->type == CV_RESP_STRING)
        return strtoll(e->str, NULL, 10);
    return 0;
}

size_t cv_resp_count(const cv_resp_t *r)
{
    return r && r->type == CV_RESP_ARRAY ? r->elements : 0;
}

const char *cv_resp_error(const cv_resp_t *r)
{
    return r && r->type == CV_RESP_ERROR ? r->str : NULL;
}

const cv_resp_t *cv_resp_part(const cv_resp_t *r, size_t i, size_t n)
{
    bool split = r && r->type == CV_RESP_ARRAY && r->elements == n && n > 0 &&
                 r->element[0].type == CV_RESP_ARRAY;
    return split ? &r->element[i] : r;
}

json_t *cv_resp_to_object(const cv_resp_t *flat)
{
    json_t *o = json_object();
    for (size_t i = 0; i + 1 < cv_resp_count(flat); i += 2) {
        const cv_resp_t *k = &flat->element[i], *v = &flat->element[i + 1];
        if (k->type == CV_RESP_STRING && v->type == CV_RESP_STRING)
            json_object_set_new(o, k->str, json_stringn(v->str, v->len));
    }
    return o;
}
