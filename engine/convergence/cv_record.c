#include "cv_record.h"

#include "cv_base.h"
#include "cv_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void copy_field(char *dst, size_t size, const json_t *o, const char *field)
{
    const char *v = json_string_value(json_object_get(o, field));
    snprintf(dst, size, "%s", v ? v : "");
}

/* A field's JSON, its sealed values opened (*rc CV_EIO when one cannot be). */
static json_t *json_field(const json_t *o, const char *field, int *rc)
{
    const char *v = json_string_value(json_object_get(o, field));
    int r = 0;
    json_t *j = v ? cv_unseal_loads(v, &r, NULL, 0) : NULL;
    if (r)
        *rc = r;
    return j ? j : json_object();
}

const char *cv_record_declared_type(const cv_record_t *rec)
{
    return rec->declared_type[0] ? rec->declared_type : rec->type;
}

int cv_record_parse(cv_record_t *rec, const cv_resp_t *flat)
{
    memset(rec, 0, sizeof(*rec));
    json_t *o = cv_resp_to_object(flat);
    copy_field(rec->status, sizeof(rec->status), o, "status");
    copy_field(rec->action, sizeof(rec->action), o, "action");
    copy_field(rec->type, sizeof(rec->type), o, "type");
    copy_field(rec->declared_type, sizeof(rec->declared_type), o, "declared_type");
    copy_field(rec->physical_id, sizeof(rec->physical_id), o, "physical_id");
    copy_field(rec->uuid, sizeof(rec->uuid), o, "uuid");
    copy_field(rec->version, sizeof(rec->version), o, "version");
    copy_field(rec->policy, sizeof(rec->policy), o, "policy");
    copy_field(rec->reason, sizeof(rec->reason), o, "reason");
    if (!rec->version[0])
        strcpy(rec->version, "0");
    const char *t = json_string_value(json_object_get(o, "traversal"));
    rec->traversal = t ? strtoull(t, NULL, 10) : 0;
    const char *s = json_string_value(json_object_get(o, "started"));
    rec->started = s ? strtod(s, NULL) : 0;
    int rc = 0;
    rec->props = json_field(o, "props", &rc);
    rec->attrs = json_field(o, "attrs", &rc);
    rec->data = json_field(o, "data", &rc);
    rec->old = json_field(o, "old", &rc);
    if (!json_is_array(rec->old)) {
        json_decref(rec->old);
        rec->old = json_array();
    }
    rec->exists = rec->status[0] != '\0';
    json_decref(o);
    return rc;
}

void cv_record_clear(cv_record_t *rec)
{
    json_decref(rec->props);
    json_decref(rec->attrs);
    json_decref(rec->data);
    json_decref(rec->old);
    rec->props = rec->attrs = rec->data = rec->old = NULL;
}

/* FNV-1a over the parts with two seeds gives 128 well-mixed bits; this is an
 * idempotency key, not a security token. The 0xff byte after each part keeps
 * ("ab","c") and ("a","bc") apart. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
    return cv_hash_more(cv_hash_more(h, s), "\xff");
}

/* `width` hexadecimal digits of v, most significant first. */
static char *put_hex(char *out, uint64_t v, int width)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = width - 1; i >= 0; i--, v >>= 4)
        out[i] = digits[v & 0xf];
    return out + width;
}

void cv_record_uuid(char out[37], const char *stack, const char *resource, uint64_t traversal)
{
    char trav[CV_U64_DIGITS + 1];
    cv_u64_str(trav, traversal);
    uint64_t a = fnv1a(fnv1a(fnv1a(CV_HASH_SEED, stack), resource), trav);
    uint64_t b = fnv1a(fnv1a(fnv1a(0x84222325cbf29ce4ULL, trav), resource), stack);
    /* Version 5 layout bits, so tools accept it as a UUID:
     * xxxxxxxx-xxxx-5xxx-Yxxx-xxxxxxxxxxxx. */
    char *p = put_hex(out, a >> 32, 8);
    *p++ = '-';
    p = put_hex(p, (a >> 16) & 0xffff, 4);
    *p++ = '-';
    *p++ = '5';
    p = put_hex(p, a & 0xfff, 3);
    *p++ = '-';
    p = put_hex(p, ((b >> 48) & 0x3fff) | 0x8000, 4);
    *p++ = '-';
    p = put_hex(p, b & 0xffffffffffffULL, 12);
    *p = '\0';
}

char *cv_record_json_sealed(const json_t *v)
{
    return cv_seal_enabled() && v ? cv_seal_dumps(v) : cv_record_json(v);
}

char *cv_record_old_json(const json_t *old)
{
    if (!cv_seal_enabled() || !json_is_array(old))
        return cv_record_json(old);
    json_t *copy = json_array();
    size_t i;
    json_t *e;
    json_array_foreach(old, i, e)
    {
        json_t *c = json_copy(e);
        static const char *const secret[] = {"props", "attrs"};
        for (size_t k = 0; c && k < 2; k++)
            if (json_object_get(c, secret[k]))
                json_object_set_new(c, secret[k], cv_seal_json(json_object_get(c, secret[k])));
        json_array_append_new(copy, c ? c : json_null());
    }
    char *text = cv_record_json(copy);
    json_decref(copy);
    return text;
}

char *cv_record_pass_json(const char *ref, const json_t *attrs)
{
    json_t *pass = json_pack("{s:s, s:o}", "id", ref ? ref : "", "attrs",
                             attrs ? cv_seal_json(attrs) : json_object());
    char *text = pass ? json_dumps(pass, JSON_COMPACT) : NULL;
    json_decref(pass);
    return text;
}

char *cv_record_json(const json_t *v)
{
    if (!v)
        return NULL;
    if (json_is_object(v) && json_object_size(v) == 0)
        return strdup("{}");
    if (json_is_array(v) && json_array_size(v) == 0)
        return strdup("[]");
    return json_dumps(v, JSON_COMPACT);
}

void cv_record_pseudo_params(json_t *params, const char *stack_id, const char *stack_name)
{
    const char *values[][2] = {{"OS::stack_name", stack_name},
                               {"OS::stack_id", stack_id},
                               {"OS::project_id", ""},
                               {"OS::region", ""}};
    for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
        if (!json_object_get(params, values[i][0]))
            json_object_set_new(params, values[i][0], json_string(values[i][1]));
}

void cv_record_state(cv_rstate_t *st, const cv_version_t *v, double now)
{
    memset(st, 0, sizeof(*st));
    st->stack_name = v->stack;
    st->resource_name = v->resource;
    st->uuid = v->uuid;
    st->props = v->props;
    st->now = now;
    st->action_started = v->started;
    snprintf(st->physical_id, sizeof(st->physical_id), "%s", v->physical_id ? v->physical_id : "");
    st->data = v->data ? json_deep_copy(v->data) : json_object();
    st->attrs = v->attrs ? json_deep_copy(v->attrs) : json_object();
}

void cv_record_state_clear(cv_rstate_t *st)
{
    json_decref(st->data);
    json_decref(st->attrs);
    st->data = st->attrs = NULL;
}
