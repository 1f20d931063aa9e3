/*
 * cv_msg — msgpack codecs of the messages between Converge processes.
 *
 * Two declarative tables drive both directions: `fields` says how each short
 * key maps to a cv_msg_t member and what msgpack type it must have, `kinds`
 * which fields each message type carries and requires. Decoding is strict
 * because a message that cannot be trusted must be dead-lettered with a
 * precise reason, never half-handled. Pure logic, no I/O.
 */
#include "cv_msg.h"

#include "cv_base.h"

#include <msgpack.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- the tables */

enum {
    F_V = 1u << 0,
    F_T = 1u << 1,
    F_S = 1u << 2,
    F_TR = 1u << 3,
    F_R = 1u << 4,
    F_P = 1u << 5,
    F_K = 1u << 6,
    F_VER = 1u << 7,
    F_AT = 1u << 8,
    F_WHY = 1u << 9,
    F_ORIG = 1u << 10,
    F_W = 1u << 11,
    F_SIG = 1u << 12,
    F_X = 1u << 13,
    F_NS = 1u << 14,
};

/* FT_NODES: a string of node names joined by '/', kept where it was decoded. */
typedef enum { FT_UINT, FT_STR, FT_BIN, FT_NODES } field_type_t;

typedef struct field {
    const char *key;
    unsigned bit;
    field_type_t ftype;
    size_t offset; /* of the member in cv_msg_t */
    size_t size;   /* FT_UINT: width in bytes; FT_STR: buffer size with the NUL */
    uint64_t max;  /* FT_UINT: largest valid value */
} field_t;

#define MEMBER(m) offsetof(cv_msg_t, m), sizeof(((cv_msg_t *)0)->m)

static const field_t fields[] = {
    {"v", F_V, FT_UINT, 0, 0, UINT64_MAX}, /* not stored: see check_version() */
    {"t", F_T, FT_UINT, MEMBER(type), UINT8_MAX},
    {"s", F_S, FT_STR, MEMBER(stack), 0},
    {"tr", F_TR, FT_UINT, MEMBER(traversal), UINT64_MAX},
    {"r", F_R, FT_STR, MEMBER(resource), 0},
    {"p", F_P, FT_UINT, MEMBER(phase), CV_PHASE_CLEANUP},
    {"k", F_K, FT_UINT, MEMBER(kind), CV_TRAV_ROLLBACK},
    {"ver", F_VER, FT_UINT, MEMBER(version), UINT64_MAX},
    {"at", F_AT, FT_UINT, MEMBER(attempt), UINT32_MAX},
    {"why", F_WHY, FT_STR, MEMBER(reason), 0},
    {"orig", F_ORIG, FT_BIN, offsetof(cv_msg_t, original), 0, 0},
    {"w", F_W, FT_UINT, MEMBER(watch), 1},
    {"sig", F_SIG, FT_STR, MEMBER(signal), 0},
    {"x", F_X, FT_UINT, MEMBER(express), 1},
    {"ns", F_NS, FT_NODES, offsetof(cv_msg_t, nodes), 0, 0},
};

#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

/* `optional` fields are encoded only when set (non-zero, non-empty): the
 * attempt counter is zero on first delivery, and a dead letter names its
 * stack only when the original could be decoded that far. */
typedef struct kind {
    uint8_t type;
    const char *name;
    unsigned required;
    unsigned optional;
} kind_t;

static const kind_t kinds[] = {
    {CV_MSG_STACK, "STACK", F_S | F_TR | F_K, F_AT | F_X},
    {CV_MSG_CHECK, "CHECK", F_S | F_TR | F_R | F_P, F_AT | F_X | F_NS | F_VER},
    {CV_MSG_OBSERVE, "OBSERVE", F_S | F_TR | F_R | F_P | F_VER, F_AT | F_W | F_X},
    {CV_MSG_DEAD, "DEAD", F_WHY | F_ORIG, F_S | F_TR | F_R | F_AT},
    {CV_MSG_SIGNAL, "SIGNAL", F_S | F_R | F_SIG, F_AT | F_X},
};

static const kind_t *find_kind(uint64_t type)
{
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (kinds[i].type == type)
            return &kinds[i];
    return NULL;
}

static uint64_t get_uint(const cv_msg_t *m, const field_t *f)
{
    const char *p = (const char *)m + f->offset;
    switch (f->size) {
    case 1:
        return *(const uint8_t *)p;
    case 4:
        return *(const uint32_t *)p;
    default:
        return *(const uint64_t *)p;
    }
}

static void set_uint(cv_msg_t *m, const field_t *f, uint64_t v)
{
    char *p = (char *)m + f->offset;
    switch (f->size) {
    case 1:
        *(uint8_t *)p = (uint8_t)v;
        break;
    case 4:
        *(uint32_t *)p = (uint32_t)v;
        break;
    default:
        *(uint64_t *)p = v;
    }
}

static const char *get_str(const cv_msg_t *m, const field_t *f)
{
    return (const char *)m + f->offset;
}

/* Whether s[0, len) is a graph node name (cv_node_name): "u/" or "c/",
 * then a resource name of 1 to CV_NAME_MAX - 1 bytes without NUL or '/'. */
static bool is_node(const char *s, size_t len)
{
    return len > 2 && len - 2 < CV_NAME_MAX && (s[0] == 'u' || s[0] == 'c') && s[1] == '/' &&
           !memchr(s, '\0', len) && !memchr(s + 2, '/', len - 2);
}

/* The end of the node name starting at s[at] in a `nodes` list: its
 * resource name runs to the next '/' after the "u/" or "c/". */
static size_t node_end(const char *s, size_t len, size_t at)
{
    if (len - at <= 2)
        return len;
    const char *slash = memchr(s + at + 2, '/', len - at - 2);
    return slash ? (size_t)(slash - s) : len;
}

/* Checks a `nodes` list: 1 to CV_MSG_NODES_MAX - 1 node names joined by '/'. */
static int check_nodes(const char *s, size_t len, char *errstr, size_t errstr_size)
{
    size_t n = 0;
    for (size_t at = 0; at <= len; n++) {
        size_t end = node_end(s, len, at);
        if (n + 1 >= CV_MSG_NODES_MAX)
            return cv_seterr(errstr, errstr_size, CV_ETOOBIG,
                             "field ns: more than %d nodes in one message", CV_MSG_NODES_MAX - 1);
        if (!is_node(s + at, end - at))
            return cv_seterr(errstr, errstr_size, CV_EPROTO,
                             "field ns: node %zu (\"%.*s\") is not a graph node name "
                             "(\"u/<resource>\" or \"c/<resource>\")",
                             n + 1, (int)(end - at < 64 ? end - at : 64), s + at);
        at = end + 1;
    }
    return 0;
}

/* ---------------------------------------------------------------- encoding */

static bool is_set(const cv_msg_t *m, const field_t *f)
{
    switch (f->ftype) {
    case FT_UINT:
        return get_uint(m, f) != 0;
    case FT_STR:
        return get_str(m, f)[0] != '\0';
    case FT_NODES:
        return m->nodes_len > 0;
    case FT_BIN:
        break;
    }
    return m->original_len > 0;
}

/* Refuses what the decoder would refuse, so that every encoded message
 * decodes back to itself. */
static int check_encodable(const cv_msg_t *m, const kind_t *k, unsigned present)
{
    for (size_t i = 0; i < NFIELDS; i++) {
        const field_t *f = &fields[i];
        if (!(present & f->bit))
            continue;
        if (f->ftype == FT_STR && strnlen(get_str(m, f), f->size) == f->size)
            return CV_EINVAL;
        if (f->ftype == FT_UINT && get_uint(m, f) > f->max)
            return CV_EINVAL;
    }
    if ((present & F_S) && m->stack[0] == '\0')
        return CV_EINVAL;
    if ((k->required & F_R) && m->resource[0] == '\0')
        return CV_EINVAL;
    if ((k->required & F_SIG) && m->signal[0] == '\0')
        return CV_EINVAL;
    if ((present & F_ORIG) && !m->original && m->original_len > 0)
        return CV_EINVAL;
    if ((present & F_NS) && (!m->nodes || check_nodes(m->nodes, m->nodes_len, NULL, 0) != 0))
        return CV_EINVAL;
    return 0;
}

static int pack_field(msgpack_packer *pk, const cv_msg_t *m, const field_t *f)
{
    size_t klen = strlen(f->key);
    if (msgpack_pack_str_with_body(pk, f->key, klen) != 0)
        return -1;
    switch (f->ftype) {
    case FT_UINT:
        return msgpack_pack_uint64(pk, get_uint(m, f));
    case FT_STR: {
        const char *s = get_str(m, f);
        return msgpack_pack_str_with_body(pk, s, strlen(s));
    }
    case FT_NODES:
        return msgpack_pack_str_with_body(pk, m->nodes, m->nodes_len);
    case FT_BIN:
        break;
    }
    /* "" rather than NULL: memcpy must never see a null pointer. */
    return msgpack_pack_bin_with_body(pk, m->original ? m->original : "", m->original_len);
}

/* The fields a message of kind `k` carries: "v", "t", the required ones and
 * the optional ones that are set. */
static unsigned fields_to_encode(const cv_msg_t *m, const kind_t *k)
{
    unsigned present = F_V | F_T | k->required;
    for (size_t i = 0; i < NFIELDS; i++)
        if ((k->optional & fields[i].bit) && is_set(m, &fields[i]))
            present |= fields[i].bit;
    return present;
}

int cv_msg_encode(const cv_msg_t *m, char **buf, size_t *len)
{
    const kind_t *k = find_kind(m->type);
    if (!k)
        return CV_EINVAL;
    unsigned present = fields_to_encode(m, k);
    int rc = check_encodable(m, k, present);
    if (rc != 0)
        return rc;
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    size_t n = 0;
    for (size_t i = 0; i < NFIELDS; i++)
        n += (present & fields[i].bit) != 0;
    bool ok = msgpack_pack_map(&pk, n) == 0;
    for (size_t i = 0; ok && i < NFIELDS; i++) {
        if (fields[i].bit == F_V)
            ok = msgpack_pack_str_with_body(&pk, "v", 1) == 0 &&
                 msgpack_pack_uint64(&pk, CV_MSG_VERSION) == 0;
        else if (present & fields[i].bit)
            ok = pack_field(&pk, m, &fields[i]) == 0;
    }
    if (!ok) {
        msgpack_sbuffer_destroy(&sb);
        return CV_ENOMEM;
    }
    *len = sb.size;
    *buf = msgpack_sbuffer_release(&sb);
    return 0;
}

/* ---------------------------------------------------------------- framing */

/*
 * Checks that buf is exactly one well-formed msgpack value before msgpack-c
 * unpacks it. msgpack-c allocates a container's entries as soon as it reads
 * the header, so five hostile bytes claiming a map of 2^32 entries would ask
 * for 128 GiB; here every claimed element must fit in the bytes that remain,
 * which bounds the allocation by the message size. Nesting is capped below
 * msgpack-c's own limit (32) so that a deep value is reported as such; our
 * messages are flat. Iterative, with a stack of elements left per level.
 */
#define MAX_DEPTH 16

typedef struct scan {
    const unsigned char *p;
    size_t len, off;
} scan_t;

static bool scan_take(scan_t *sc, size_t n)
{
    if (sc->len - sc->off < n)
        return false;
    sc->off += n;
    return true;
}

static bool scan_be(scan_t *sc, size_t width, uint64_t *out)
{
    if (sc->len - sc->off < width)
        return false;
    *out = 0;
    for (size_t i = 0; i < width; i++)
        *out = *out << 8 | sc->p[sc->off + i];
    sc->off += width;
    return true;
}

/* The payload size of a str/bin/ext whose length has `width` bytes. */
static bool scan_payload(scan_t *sc, size_t width, size_t extra)
{
    uint64_t n;
    return scan_be(sc, width, &n) && scan_take(sc, extra) && n <= sc->len - sc->off &&
           scan_take(sc, (size_t)n);
}

/* Reads one value's header; *elements is how many values it contains. */
static int scan_one(scan_t *sc, uint64_t *elements, char *errstr, size_t errstr_size)
{
    size_t at = sc->off;
    unsigned char b = sc->p[sc->off++];
    uint64_t n = 0, per = 1;
    bool ok = true;
    if (b <= 0x7f || b >= 0xe0 || b == 0xc0 || b == 0xc2 || b == 0xc3)
        return 0;
    if (b == 0xc1)
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "invalid msgpack byte 0xc1 at offset %zu",
                         at);
    if ((b & 0xf0) == 0x80) {
        n = b & 0x0f;
        per = 2;
    } else if ((b & 0xf0) == 0x90) {
        n = b & 0x0f;
    } else if ((b & 0xe0) == 0xa0) {
        ok = scan_take(sc, b & 0x1f);
    } else if (b >= 0xc4 && b <= 0xc6) { /* bin 8/16/32 */
        ok = scan_payload(sc, (size_t)1 << (b - 0xc4), 0);
    } else if (b >= 0xc7 && b <= 0xc9) { /* ext 8/16/32 */
        ok = scan_payload(sc, (size_t)1 << (b - 0xc7), 1);
    } else if (b >= 0xca && b <= 0xd3) { /* float, uint, int */
        static const unsigned char width[] = {4, 8, 1, 2, 4, 8, 1, 2, 4, 8};
        ok = scan_take(sc, width[b - 0xca]);
    } else if (b >= 0xd4 && b <= 0xd8) { /* fixext 1..16 */
        ok = scan_take(sc, 1 + ((size_t)1 << (b - 0xd4)));
    } else if (b >= 0xd9 && b <= 0xdb) { /* str 8/16/32 */
        ok = scan_payload(sc, (size_t)1 << (b - 0xd9), 0);
    } else if (b == 0xdc || b == 0xdd) {
        ok = scan_be(sc, b == 0xdc ? 2 : 4, &n);
    } else { /* 0xde, 0xdf */
        ok = scan_be(sc, b == 0xde ? 2 : 4, &n);
        per = 2;
    }
    if (!ok)
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "truncated message (value at offset %zu)",
                         at);
    if (n * per > sc->len - sc->off)
        return cv_seterr(errstr, errstr_size, CV_EPROTO,
                         "container at offset %zu claims %llu entries but only %zu bytes remain",
                         at, (unsigned long long)n, sc->len - sc->off);
    *elements = n * per;
    return 0;
}

static int scan_frame(const char *buf, size_t len, char *errstr, size_t errstr_size)
{
    scan_t sc = {(const unsigned char *)buf, len, 0};
    uint64_t left[MAX_DEPTH] = {1};
    int depth = 0;
    while (depth >= 0) {
        if (left[depth] == 0) {
            depth--;
            continue;
        }
        left[depth]--;
        if (sc.off == sc.len)
            return cv_seterr(errstr, errstr_size, CV_EPROTO, "truncated message (%zu bytes)", len);
        uint64_t elements = 0;
        int rc = scan_one(&sc, &elements, errstr, errstr_size);
        if (rc != 0)
            return rc;
        if (elements == 0)
            continue;
        if (depth + 1 == MAX_DEPTH)
            return cv_seterr(errstr, errstr_size, CV_EPROTO,
                             "value nested deeper than %d levels at offset %zu", MAX_DEPTH, sc.off);
        left[++depth] = elements;
    }
    if (sc.off != len)
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "%zu trailing bytes after the message",
                         len - sc.off);
    return 0;
}

/* ---------------------------------------------------------------- decoding */

static const char *object_type_name(msgpack_object_type t)
{
    switch (t) {
    case MSGPACK_OBJECT_NIL:
        return "nil";
    case MSGPACK_OBJECT_BOOLEAN:
        return "boolean";
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        return "unsigned integer";
    case MSGPACK_OBJECT_NEGATIVE_INTEGER:
        return "negative integer";
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64:
        return "float";
    case MSGPACK_OBJECT_STR:
        return "string";
    case MSGPACK_OBJECT_ARRAY:
        return "array";
    case MSGPACK_OBJECT_MAP:
        return "map";
    case MSGPACK_OBJECT_BIN:
        return "binary";
    case MSGPACK_OBJECT_EXT:
        return "ext";
    }
    return "unknown";
}

static const char *field_type_name(field_type_t t)
{
    return t == FT_UINT ? "unsigned integer" : t == FT_BIN ? "binary" : "string";
}

static const field_t *find_field(const msgpack_object *key)
{
    if (key->type != MSGPACK_OBJECT_STR)
        return NULL;
    for (size_t i = 0; i < NFIELDS; i++)
        if (strlen(fields[i].key) == key->via.str.size &&
            memcmp(fields[i].key, key->via.str.ptr, key->via.str.size) == 0)
            return &fields[i];
    return NULL;
}

static int decode_str(cv_msg_t *m, const field_t *f, const msgpack_object_str *s, char *errstr,
                      size_t errstr_size)
{
    if (s->size > f->size - 1)
        return cv_seterr(errstr, errstr_size, CV_ETOOBIG,
                         "field %s: %u bytes, longer than the limit of %zu", f->key, s->size,
                         f->size - 1);
    if (memchr(s->ptr, '\0', s->size))
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "field %s: contains a NUL byte", f->key);
    char *dst = (char *)m + f->offset;
    memcpy(dst, s->ptr, s->size);
    dst[s->size] = '\0';
    return 0;
}

/* Stores one known field after checking its msgpack type and range. */
static int decode_field(cv_msg_t *m, const field_t *f, const msgpack_object *v, char *errstr,
                        size_t errstr_size)
{
    static const msgpack_object_type wanted[] = {
        [FT_UINT] = MSGPACK_OBJECT_POSITIVE_INTEGER,
        [FT_STR] = MSGPACK_OBJECT_STR,
        [FT_BIN] = MSGPACK_OBJECT_BIN,
        [FT_NODES] = MSGPACK_OBJECT_STR,
    };
    if (v->type != wanted[f->ftype])
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "field %s: expected %s, got %s", f->key,
                         field_type_name(f->ftype), object_type_name(v->type));
    switch (f->ftype) {
    case FT_UINT:
        if (v->via.u64 > f->max)
            return cv_seterr(errstr, errstr_size, CV_EPROTO,
                             "field %s: %llu is out of range (at most %llu)", f->key,
                             (unsigned long long)v->via.u64, (unsigned long long)f->max);
        set_uint(m, f, v->via.u64);
        return 0;
    case FT_STR:
        return decode_str(m, f, &v->via.str, errstr, errstr_size);
    case FT_NODES: {
        int rc = check_nodes(v->via.str.ptr, v->via.str.size, errstr, errstr_size);
        if (rc == 0) {
            m->nodes = v->via.str.ptr;
            m->nodes_len = v->via.str.size;
        }
        return rc;
    }
    case FT_BIN:
        break;
    }
    m->original = v->via.bin.ptr;
    m->original_len = v->via.bin.size;
    return 0;
}

/* The version is read before anything else, so that a message of another
 * version is reported as such even if its other fields changed shape. */
static int check_version(const msgpack_object_map *map, char *errstr, size_t errstr_size)
{
    for (uint32_t i = 0; i < map->size; i++) {
        const field_t *f = find_field(&map->ptr[i].key);
        if (!f || f->bit != F_V)
            continue;
        const msgpack_object *v = &map->ptr[i].val;
        if (v->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
            return cv_seterr(errstr, errstr_size, CV_EPROTO,
                             "field v: expected unsigned integer, got %s",
                             object_type_name(v->type));
        if (v->via.u64 != CV_MSG_VERSION)
            return cv_seterr(errstr, errstr_size, CV_EVERSION, "unsupported message version %llu",
                             (unsigned long long)v->via.u64);
        return 0;
    }
    return cv_seterr(errstr, errstr_size, CV_EPROTO, "missing field v (message version)");
}

/* Unknown keys are skipped so that a newer sender may add fields. */
static int decode_fields(const msgpack_object_map *map, cv_msg_t *m, unsigned *seen, char *errstr,
                         size_t errstr_size)
{
    for (uint32_t i = 0; i < map->size; i++) {
        const msgpack_object *key = &map->ptr[i].key;
        if (key->type != MSGPACK_OBJECT_STR)
            return cv_seterr(errstr, errstr_size, CV_EPROTO, "key %u: expected string, got %s", i,
                             object_type_name(key->type));
        const field_t *f = find_field(key);
        if (!f)
            continue;
        if (*seen & f->bit)
            return cv_seterr(errstr, errstr_size, CV_EPROTO, "field %s: given twice", f->key);
        *seen |= f->bit;
        if (f->bit == F_V)
            continue;
        int rc = decode_field(m, f, &map->ptr[i].val, errstr, errstr_size);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static int check_kind(const cv_msg_t *m, unsigned seen, char *errstr, size_t errstr_size)
{
    if (!(seen & F_T))
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "missing field t (message type)");
    const kind_t *k = find_kind(m->type);
    if (!k)
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "field t: unknown message type %u",
                         m->type);
    for (size_t i = 0; i < NFIELDS; i++)
        if ((k->required & fields[i].bit) && !(seen & fields[i].bit))
            return cv_seterr(errstr, errstr_size, CV_EPROTO, "missing field %s (required in %s)",
                             fields[i].key, k->name);
    if ((seen & F_S) && m->stack[0] == '\0')
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "field s: empty stack id");
    if ((k->required & F_R) && m->resource[0] == '\0')
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "field r: empty resource name");
    if ((k->required & F_SIG) && m->signal[0] == '\0')
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "field sig: empty signal id");
    return 0;
}

/* A known field that the message's type does not carry is skipped like an
 * unknown key, once its type was checked: the decoded message then holds
 * exactly what an encoding of it carries, so a republished job is the job
 * that was received. */
static void drop_foreign_fields(cv_msg_t *m)
{
    const kind_t *k = find_kind(m->type);
    for (size_t i = 0; i < NFIELDS; i++) {
        const field_t *f = &fields[i];
        if ((F_V | F_T | k->required | k->optional) & f->bit)
            continue;
        if (f->ftype == FT_UINT) {
            set_uint(m, f, 0);
        } else if (f->ftype == FT_STR) {
            memset((char *)m + f->offset, 0, f->size);
        } else if (f->ftype == FT_NODES) {
            m->nodes = NULL;
            m->nodes_len = 0;
        } else {
            m->original = NULL;
            m->original_len = 0;
        }
    }
}

static int decode_object(const msgpack_object *root, cv_msg_t *m, char *errstr, size_t errstr_size)
{
    if (root->type != MSGPACK_OBJECT_MAP)
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "message is a %s, not a map",
                         object_type_name(root->type));
    unsigned seen = 0;
    int rc = check_version(&root->via.map, errstr, errstr_size);
    if (rc == 0)
        rc = decode_fields(&root->via.map, m, &seen, errstr, errstr_size);
    if (rc == 0)
        rc = check_kind(m, seen, errstr, errstr_size);
    if (rc == 0)
        drop_foreign_fields(m);
    return rc;
}

int cv_msg_decode(const char *buf, size_t len, cv_msg_t *m, char *errstr, size_t errstr_size)
{
    memset(m, 0, sizeof(*m));
    if (!buf || len == 0)
        return cv_seterr(errstr, errstr_size, CV_EPROTO, "empty message");
    int rc = scan_frame(buf, len, errstr, errstr_size);
    if (rc != 0)
        return rc;
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    msgpack_unpack_return ur = msgpack_unpack_next(&up, buf, len, &off);
    if (ur == MSGPACK_UNPACK_NOMEM_ERROR)
        rc = cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory decoding a message");
    else if (ur != MSGPACK_UNPACK_SUCCESS)
        rc = cv_seterr(errstr, errstr_size, CV_EPROTO, "malformed msgpack");
    else
        rc = decode_object(&up.data, m, errstr, errstr_size);
    msgpack_unpacked_destroy(&up);
    if (rc != 0)
        memset(m, 0, sizeof(*m));
    return rc;
}

/* ---------------------------------------------------------------- batches of nodes */

size_t cv_msg_batch_size(size_t n)
{
    size_t per = (n + CV_MSG_SPREAD - 1) / CV_MSG_SPREAD;
    return per < 1 ? 1 : per > CV_MSG_NODES_MAX ? CV_MSG_NODES_MAX : per;
}

int cv_msg_set_node(cv_msg_t *m, const char *node, size_t len)
{
    if (!is_node(node, len))
        return CV_EINVAL;
    m->phase = node[0] == 'c' ? CV_PHASE_CLEANUP : CV_PHASE_UPDATE;
    memcpy(m->resource, node + 2, len - 2);
    m->resource[len - 2] = '\0';
    return 0;
}

int cv_msg_next_node(const cv_msg_t *m, size_t *pos, cv_msg_t *out)
{
    /* *pos: 0 before the message's own job, then 1 + the offset in `nodes`
     * of the next node name. */
    if (*pos > m->nodes_len || (*pos > 0 && m->nodes_len == 0))
        return 0;
    *out = *m;
    out->nodes = NULL;
    out->nodes_len = 0;
    if (*pos == 0) {
        *pos = 1;
        return 1;
    }
    size_t at = *pos - 1;
    size_t end = node_end(m->nodes, m->nodes_len, at);
    *pos = end + 2;
    return cv_msg_set_node(out, m->nodes + at, end - at) == 0;
}

/* ---------------------------------------------------------------- names and keys */

/* Like snprintf, but returns what was written, never more than size - 1,
 * so the result is always safe to use as the key's length. */
size_t cv_msg_key(const cv_msg_t *m, char *key, size_t size)
{
    if (size == 0)
        return 0;
    int n = (m->type == CV_MSG_CHECK || m->type == CV_MSG_OBSERVE || m->type == CV_MSG_SIGNAL)
                ? snprintf(key, size, "%s/%s", m->stack, m->resource)
                : snprintf(key, size, "%s", m->stack);
    if (n < 0) {
        key[0] = '\0';
        return 0;
    }
    return (size_t)n < size ? (size_t)n : size - 1;
}

const char *cv_msg_type_name(uint8_t type)
{
    const kind_t *k = find_kind(type);
    return k ? k->name : "UNKNOWN";
}

/* Lower case, as the design names graph nodes ("update" / "cleanup"). */
const char *cv_phase_name(uint8_t phase)
{
    switch (phase) {
    case CV_PHASE_UPDATE:
        return "update";
    case CV_PHASE_CLEANUP:
        return "cleanup";
    default:
        return "unknown";
    }
}

/* The names of the traversal kinds, indexed by kind; both directions use it. */
static const char *const trav_kind_names[] = {
#define TRAV_KIND_NAME(name, value) [value] = #name,
    CV_TRAV_KIND_MAP(TRAV_KIND_NAME)
#undef TRAV_KIND_NAME
};

#define NTRAV_KINDS (sizeof(trav_kind_names) / sizeof(trav_kind_names[0]))

const char *cv_trav_kind_name(uint8_t kind)
{
    if (kind >= NTRAV_KINDS || !trav_kind_names[kind])
        return "UNKNOWN";
    return trav_kind_names[kind];
}

int cv_trav_kind_parse(const char *name)
{
    if (!name)
        return CV_EINVAL;
    for (size_t k = 0; k < NTRAV_KINDS; k++)
        if (trav_kind_names[k] && strcmp(trav_kind_names[k], name) == 0)
            return (int)k;
    return CV_EINVAL;
}
