/*
 * fuzz_msg — the message codecs (proto/contract/cv_msg.h) on arbitrary bytes.
 *
 * Decoding: cv_msg_decode never crashes, leaks or reads past the buffer,
 * refuses with one of its documented codes and a reason, and a message it
 * accepts encodes again, decodes to the same value and re-encodes to the
 * same bytes.
 *
 * Encoding: the same bytes, read as the fields of a cv_msg_t, check the
 * other direction. The encoder must accept exactly the messages that the
 * header describes as valid (a known type, its required fields set,
 * strings terminated within their buffers, values in range), and what it
 * encodes must decode to the message as sent: the fields of its type.
 */
#include "cv_base.h"
#include "cv_contract.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- what a type carries */

enum { W_S = 1, W_TR = 2, W_R = 4, W_P = 8, W_K = 16, W_VER = 32, W_AT = 64, W_WHY = 128 };

/* The fields each message type carries (cv_msg.h's "Flows" and cv_msg_t's
 * comments); DEAD also carries the original bytes. */
static unsigned carried(uint8_t type)
{
    switch (type) {
    case CV_MSG_STACK:
        return W_S | W_TR | W_K | W_AT;
    case CV_MSG_CHECK:
        return W_S | W_TR | W_R | W_P | W_VER | W_AT;
    case CV_MSG_OBSERVE:
        return W_S | W_TR | W_R | W_P | W_VER | W_AT;
    case CV_MSG_DEAD:
        return W_S | W_TR | W_R | W_AT | W_WHY;
    default:
        return 0;
    }
}

static void fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_msg: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    abort();
}

static bool same_msg(const cv_msg_t *a, const cv_msg_t *b)
{
    return a->type == b->type && strcmp(a->stack, b->stack) == 0 && a->traversal == b->traversal &&
           strcmp(a->resource, b->resource) == 0 && a->phase == b->phase && a->kind == b->kind &&
           a->version == b->version && a->attempt == b->attempt &&
           strcmp(a->reason, b->reason) == 0 && a->original_len == b->original_len &&
           (a->original_len == 0 || memcmp(a->original, b->original, a->original_len) == 0) &&
           a->nodes_len == b->nodes_len &&
           (a->nodes_len == 0 || memcmp(a->nodes, b->nodes, a->nodes_len) == 0);
}

/* cv_msg_key never writes past `size` and returns the length it wrote. */
static void check_key(const cv_msg_t *m)
{
    static const size_t sizes[] = {0, 1, 2, 7, CV_ID_MAX, CV_ID_MAX + CV_NAME_MAX + 1};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char *key = malloc(sizes[i] ? sizes[i] : 1);
        if (!key)
            return;
        size_t n = cv_msg_key(m, key, sizes[i]);
        if (sizes[i] && (n >= sizes[i] || strlen(key) != n))
            fail("cv_msg_key", "returned length disagrees with the key written");
        if (!sizes[i] && n)
            fail("cv_msg_key", "wrote into a buffer of size 0");
        free(key);
    }
    if (!cv_msg_type_name(m->type) || !cv_phase_name(m->phase) || !cv_trav_kind_name(m->kind))
        fail("names", "NULL name");
}

/* `m` encodes, decodes to itself and re-encodes to the same bytes. */
static void check_roundtrip(const cv_msg_t *m, const char *what)
{
    char *buf = NULL, *again = NULL, err[256] = "";
    size_t len = 0, again_len = 0;
    cv_msg_t back;
    if (cv_msg_encode(m, &buf, &len) != 0)
        fail(what, "a message that decoded does not encode");
    if (cv_msg_decode(buf, len, &back, err, sizeof(err)) != 0)
        fail(what, err);
    if (!same_msg(m, &back))
        fail(what, "decodes to another value");
    if (cv_msg_encode(&back, &again, &again_len) != 0 || again_len != len ||
        memcmp(buf, again, len) != 0)
        fail(what, "re-encoding differs");
    free(again);
    free(buf);
}

static void fuzz_decode(const uint8_t *data, size_t size)
{
    cv_msg_t m;
    char err[256] = "";
    int rc = cv_msg_decode((const char *)data, size, &m, err, sizeof(err));
    if (rc != 0) {
        if (rc != CV_EPROTO && rc != CV_EVERSION && rc != CV_ETOOBIG && rc != CV_ENOMEM)
            fail("decode: undocumented error code", cv_err_name(rc));
        if (!err[0])
            fail("decode", "refused without a reason");
        return;
    }
    check_key(&m);
    check_roundtrip(&m, "decode round trip");
}

/* ---------------------------------------------------------------- messages from bytes */

typedef struct input {
    const uint8_t *p;
    size_t left;
} input_t;

static uint64_t take_uint(input_t *in, size_t width)
{
    uint64_t v = 0;
    for (size_t i = 0; i < width && in->left; i++, in->p++, in->left--)
        v = v << 8 | *in->p;
    return v;
}

/* A string field: up to `size` bytes; a full buffer is left unterminated,
 * which the encoder must refuse when the field is sent. */
static void take_str(input_t *in, char *dst, size_t size)
{
    size_t n = (size_t)take_uint(in, 1) % (size + 1);
    if (n > in->left)
        n = in->left;
    memset(dst, 0, size);
    memcpy(dst, in->p, n);
    in->p += n;
    in->left -= n;
}

static bool terminated(const char *s, size_t size)
{
    return memchr(s, '\0', size) != NULL;
}

/* Whether cv_msg.h calls `m` valid: what the encoder must accept. */
static bool valid(const cv_msg_t *m)
{
    unsigned w = carried(m->type);
    bool dead = m->type == CV_MSG_DEAD;
    if (!w)
        return false;
    if (!terminated(m->stack, sizeof(m->stack)) || (!dead && m->stack[0] == '\0'))
        return false;
    if ((w & W_R) && !terminated(m->resource, sizeof(m->resource)))
        return false;
    if ((w & W_R) && !dead && m->resource[0] == '\0')
        return false;
    if ((w & W_P) && m->phase > CV_PHASE_CLEANUP)
        return false;
    if ((w & W_K) && m->kind > CV_TRAV_ROLLBACK)
        return false;
    if (dead && !terminated(m->reason, sizeof(m->reason)))
        return false;
    return !dead || m->original || m->original_len == 0;
}

/* The message the receiver gets: the fields of its type, nothing else. */
static cv_msg_t as_received(const cv_msg_t *m)
{
    unsigned w = carried(m->type);
    cv_msg_t r = {.type = m->type};
    if (w & W_S)
        memcpy(r.stack, m->stack, sizeof(r.stack));
    if (w & W_TR)
        r.traversal = m->traversal;
    if (w & W_R)
        memcpy(r.resource, m->resource, sizeof(r.resource));
    if (w & W_P)
        r.phase = m->phase;
    if (w & W_K)
        r.kind = m->kind;
    if (w & W_VER)
        r.version = m->version;
    if (w & W_AT)
        r.attempt = m->attempt;
    if (w & W_WHY) {
        memcpy(r.reason, m->reason, sizeof(r.reason));
        r.original = m->original;
        r.original_len = m->original_len;
    }
    return r;
}

static void fuzz_encode(const uint8_t *data, size_t size)
{
    input_t in = {data, size};
    cv_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = (uint8_t)(take_uint(&in, 1) % 6);
    take_str(&in, m.stack, sizeof(m.stack));
    take_str(&in, m.resource, sizeof(m.resource));
    take_str(&in, m.reason, sizeof(m.reason));
    m.traversal = take_uint(&in, 8);
    m.version = take_uint(&in, 8);
    m.attempt = (uint32_t)take_uint(&in, 4);
    m.phase = (uint8_t)(take_uint(&in, 1) % 3);
    m.kind = (uint8_t)(take_uint(&in, 1) % 5);
    /* The original bytes: the rest of the input, or none, or a length
     * without bytes (which the encoder must refuse). */
    switch (take_uint(&in, 1) % 3) {
    case 0:
        m.original = (const char *)in.p;
        m.original_len = in.left;
        break;
    case 1:
        m.original_len = (size_t)take_uint(&in, 1);
        break;
    default:
        break;
    }
    char *buf = NULL;
    size_t len = 0;
    int rc = cv_msg_encode(&m, &buf, &len);
    if (rc != 0 && rc != CV_EINVAL)
        fail("encode: undocumented error code", cv_err_name(rc));
    if ((rc == 0) != valid(&m))
        fail("encode", rc == 0 ? "accepted an invalid message" : "refused a valid message");
    if (rc != 0)
        return;
    cv_msg_t sent = as_received(&m), back;
    char err[256] = "";
    if (cv_msg_decode(buf, len, &back, err, sizeof(err)) != 0)
        fail("encoded message does not decode", err);
    if (!same_msg(&sent, &back))
        fail("encode", "decodes to another value than was sent");
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_decode(data, size);
    fuzz_encode(data, size);
    return 0;
}
