/*
 * Specification of the message codecs: every message type round-trips,
 * only the fields a type uses are on the wire, and the decoder refuses
 * anything else with CV_EPROTO / CV_EVERSION / CV_ETOOBIG and a reason naming
 * the field — and never crashes, whatever the bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_base.h"
#include "cv_msg.h"

#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- fixtures */

static cv_msg_t stack_msg(void)
{
    cv_msg_t m = {.type = CV_MSG_STACK, .traversal = 7, .kind = CV_TRAV_UPDATE};
    strcpy(m.stack, "st-1");
    return m;
}

static cv_msg_t check_msg(void)
{
    cv_msg_t m = {.type = CV_MSG_CHECK, .traversal = 1ULL << 40, .phase = CV_PHASE_CLEANUP};
    strcpy(m.stack, "st-1");
    strcpy(m.resource, "web_server");
    return m;
}

static cv_msg_t observe_msg(void)
{
    cv_msg_t m = {.type = CV_MSG_OBSERVE, .traversal = 3, .phase = CV_PHASE_UPDATE};
    strcpy(m.stack, "st-1");
    strcpy(m.resource, "db");
    m.version = UINT64_MAX;
    m.attempt = 4;
    return m;
}

static cv_msg_t signal_msg(void)
{
    cv_msg_t m = {.type = CV_MSG_SIGNAL};
    strcpy(m.stack, "st-1");
    strcpy(m.resource, "wait_handle");
    strcpy(m.signal, "5f0c2a9e1d7b4c3a");
    return m;
}

static cv_msg_t dead_msg(void)
{
    static const char original[] = "\x81\xa1v\x07 and then some";
    cv_msg_t m = {.type = CV_MSG_DEAD, .original = original, .original_len = sizeof(original)};
    strcpy(m.reason, "unsupported message version 7");
    return m;
}

typedef struct wire {
    char *buf;
    size_t len;
} wire_t;

static wire_t encode(const cv_msg_t *m)
{
    wire_t w;
    assert_int_equal(cv_msg_encode(m, &w.buf, &w.len), 0);
    return w;
}

static int decode(const wire_t *w, cv_msg_t *m, char *errstr, size_t errstr_size)
{
    return cv_msg_decode(w->buf, w->len, m, errstr, errstr_size);
}

static void assert_same_msg(const cv_msg_t *a, const cv_msg_t *b)
{
    assert_int_equal(a->type, b->type);
    assert_string_equal(a->stack, b->stack);
    assert_true(a->traversal == b->traversal);
    assert_string_equal(a->resource, b->resource);
    assert_int_equal(a->phase, b->phase);
    assert_int_equal(a->kind, b->kind);
    assert_true(a->version == b->version);
    assert_int_equal(a->attempt, b->attempt);
    assert_string_equal(a->reason, b->reason);
    assert_string_equal(a->signal, b->signal);
    assert_int_equal(a->original_len, b->original_len);
    if (a->original_len)
        assert_memory_equal(a->original, b->original, a->original_len);
    assert_int_equal(a->nodes_len, b->nodes_len);
    if (a->nodes_len)
        assert_memory_equal(a->nodes, b->nodes, a->nodes_len);
}

static void round_trip(const cv_msg_t *m)
{
    wire_t w = encode(m);
    cv_msg_t out;
    char err[256] = "";
    assert_int_equal(decode(&w, &out, err, sizeof(err)), 0);
    assert_same_msg(m, &out);
    free(w.buf);
}

/*
 * Re-packs an encoded message with its key `drop` left out (NULL: none) and
 * `add` (may be NULL) called to append `nadd` more entries: how the tests
 * craft messages that the encoder itself would never produce.
 */
typedef void (*adder_t)(msgpack_packer *pk);

static wire_t rebuild(const cv_msg_t *m, const char *drop, adder_t add, size_t nadd)
{
    wire_t in = encode(m);
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    assert_int_equal(msgpack_unpack_next(&up, in.buf, in.len, &off), MSGPACK_UNPACK_SUCCESS);
    msgpack_object_map *map = &up.data.via.map;
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    size_t keep = 0;
    for (uint32_t i = 0; i < map->size; i++)
        keep += !drop || map->ptr[i].key.via.str.size != strlen(drop) ||
                memcmp(map->ptr[i].key.via.str.ptr, drop, strlen(drop)) != 0;
    msgpack_pack_map(&pk, keep + nadd);
    for (uint32_t i = 0; i < map->size; i++) {
        const msgpack_object_str *k = &map->ptr[i].key.via.str;
        if (drop && k->size == strlen(drop) && memcmp(k->ptr, drop, k->size) == 0)
            continue;
        msgpack_pack_object(&pk, map->ptr[i].key);
        msgpack_pack_object(&pk, map->ptr[i].val);
    }
    if (add)
        add(&pk);
    msgpack_unpacked_destroy(&up);
    free(in.buf);
    size_t len = sb.size;
    return (wire_t){msgpack_sbuffer_release(&sb), len};
}

/* A map of the `n` entries that `add` packs, and nothing else. */
static wire_t packed(adder_t add, size_t n)
{
    msgpack_sbuffer sb;
    msgpack_packer pk;
    msgpack_sbuffer_init(&sb);
    msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
    msgpack_pack_map(&pk, n);
    add(&pk);
    size_t len = sb.size;
    return (wire_t){msgpack_sbuffer_release(&sb), len};
}

static void pack_key(msgpack_packer *pk, const char *key)
{
    msgpack_pack_str_with_body(pk, key, strlen(key));
}

static void pack_kv_str(msgpack_packer *pk, const char *key, const char *s, size_t n)
{
    pack_key(pk, key);
    msgpack_pack_str_with_body(pk, s, n);
}

/* Decodes `w` expecting `rc` with `needle` in the reason; frees w. */
static void expect_error(wire_t w, int rc, const char *needle)
{
    cv_msg_t out;
    char err[256] = "";
    int got = decode(&w, &out, err, sizeof(err));
    if (got != rc || !strstr(err, needle))
        fail_msg("expected %s with \"%s\", got %s: \"%s\"", cv_err_name(rc), needle,
                 cv_err_name(got), err);
    free(w.buf);
}

/* The keys of an encoded message, space-separated, in wire order. */
static void wire_keys(const wire_t *w, char *out, size_t size)
{
    msgpack_unpacked up;
    msgpack_unpacked_init(&up);
    size_t off = 0;
    assert_int_equal(msgpack_unpack_next(&up, w->buf, w->len, &off), MSGPACK_UNPACK_SUCCESS);
    out[0] = '\0';
    for (uint32_t i = 0; i < up.data.via.map.size; i++) {
        const msgpack_object_str *k = &up.data.via.map.ptr[i].key.via.str;
        snprintf(out + strlen(out), size - strlen(out), "%s%.*s", i ? " " : "", (int)k->size,
                 k->ptr);
    }
    msgpack_unpacked_destroy(&up);
}

/* ---------------------------------------------------------------- round trips */

static void test_every_message_type_round_trips(void **state)
{
    (void)state;
    cv_msg_t msgs[] = {stack_msg(), check_msg(), observe_msg(), dead_msg(), signal_msg()};
    for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++)
        round_trip(&msgs[i]);
}

static void test_every_traversal_kind_and_phase_round_trips(void **state)
{
    (void)state;
    for (uint8_t k = CV_TRAV_CREATE; k <= CV_TRAV_ROLLBACK; k++) {
        cv_msg_t m = stack_msg();
        m.kind = k;
        round_trip(&m);
    }
    for (uint8_t p = CV_PHASE_UPDATE; p <= CV_PHASE_CLEANUP; p++) {
        cv_msg_t m = check_msg();
        m.phase = p;
        round_trip(&m);
    }
}

static void test_strings_of_the_maximum_length_round_trip(void **state)
{
    (void)state;
    cv_msg_t m = check_msg();
    memset(m.stack, 's', CV_ID_MAX - 1);
    memset(m.resource, 'r', CV_NAME_MAX - 1);
    round_trip(&m);
    cv_msg_t d = dead_msg();
    memset(d.reason, 'w', CV_REASON_MAX - 1);
    d.reason[CV_REASON_MAX - 1] = '\0';
    round_trip(&d);
}

static void test_only_the_fields_a_type_uses_are_encoded(void **state)
{
    (void)state;
    char keys[128];
    cv_msg_t m = stack_msg();
    strcpy(m.resource, "ignored"); /* not a STACK field */
    m.version = 9;
    wire_t w = encode(&m);
    wire_keys(&w, keys, sizeof(keys));
    assert_string_equal(keys, "v t s tr k");
    free(w.buf);

    m = check_msg();
    w = encode(&m);
    wire_keys(&w, keys, sizeof(keys));
    assert_string_equal(keys, "v t s tr r p");
    free(w.buf);

    m = observe_msg();
    w = encode(&m);
    wire_keys(&w, keys, sizeof(keys));
    assert_string_equal(keys, "v t s tr r p ver at");
    free(w.buf);

    m = dead_msg();
    w = encode(&m);
    wire_keys(&w, keys, sizeof(keys));
    assert_string_equal(keys, "v t why orig");
    free(w.buf);

    m = signal_msg();
    m.traversal = 4; /* a signal is not tied to a traversal */
    m.phase = CV_PHASE_CLEANUP;
    w = encode(&m);
    wire_keys(&w, keys, sizeof(keys));
    assert_string_equal(keys, "v t s r sig");
    free(w.buf);
}

static void test_the_express_lane_travels_only_when_set(void **state)
{
    (void)state;
    char keys[128];
    cv_msg_t msgs[] = {stack_msg(), check_msg(), observe_msg(), signal_msg()};
    for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
        msgs[i].express = 1;
        round_trip(&msgs[i]);
    }
    cv_msg_t m = check_msg();
    m.express = 1;
    wire_t w = encode(&m);
    wire_keys(&w, keys, sizeof(keys));
    assert_string_equal(keys, "v t s tr r p x");
    free(w.buf);
    m = dead_msg();
    m.express = 1; /* a dead letter rides no lane */
    w = encode(&m);
    wire_keys(&w, keys, sizeof(keys));
    assert_string_equal(keys, "v t why orig");
    free(w.buf);
}

static void test_a_signal_id_of_the_maximum_length_round_trips(void **state)
{
    (void)state;
    cv_msg_t m = signal_msg();
    memset(m.signal, 'i', CV_ID_MAX - 1);
    m.signal[CV_ID_MAX - 1] = '\0';
    m.attempt = 3;
    round_trip(&m);
}

static void test_a_signal_without_its_id_is_not_encoded(void **state)
{
    (void)state;
    char *buf;
    size_t len;
    cv_msg_t m = signal_msg();
    m.signal[0] = '\0';
    assert_int_equal(cv_msg_encode(&m, &buf, &len), CV_EINVAL);
    m = signal_msg();
    memset(m.signal, 'i', CV_ID_MAX); /* no room for the NUL */
    assert_int_equal(cv_msg_encode(&m, &buf, &len), CV_EINVAL);
}

static void test_a_dead_letter_names_its_stack_when_known(void **state)
{
    (void)state;
    cv_msg_t m = dead_msg();
    strcpy(m.stack, "st-9");
    m.traversal = 12;
    strcpy(m.resource, "web");
    m.attempt = 3;
    char keys[128];
    wire_t w = encode(&m);
    wire_keys(&w, keys, sizeof(keys));
    assert_string_equal(keys, "v t s tr r at why orig");
    free(w.buf);
    round_trip(&m);
}

static void test_a_dead_letters_original_points_into_the_input(void **state)
{
    (void)state;
    cv_msg_t m = dead_msg();
    wire_t w = encode(&m);
    cv_msg_t out;
    assert_int_equal(decode(&w, &out, NULL, 0), 0);
    assert_true(out.original >= w.buf && out.original + out.original_len <= w.buf + w.len);
    free(w.buf);
}

static void test_an_empty_original_round_trips(void **state)
{
    (void)state;
    cv_msg_t m = dead_msg();
    m.original = NULL;
    m.original_len = 0;
    round_trip(&m);
}

/* ---------------------------------------------------------------- encoder refusals */

static void expect_encode_einval(const cv_msg_t *m)
{
    char *buf = NULL;
    size_t len = 0;
    assert_int_equal(cv_msg_encode(m, &buf, &len), CV_EINVAL);
    assert_null(buf);
}

static void test_encoder_refuses_what_the_decoder_would(void **state)
{
    (void)state;
    cv_msg_t m = stack_msg();
    m.type = 9;
    expect_encode_einval(&m);
    m = stack_msg();
    m.stack[0] = '\0';
    expect_encode_einval(&m);
    m = stack_msg();
    m.kind = CV_TRAV_ROLLBACK + 1;
    expect_encode_einval(&m);
    m = check_msg();
    m.phase = CV_PHASE_CLEANUP + 1;
    expect_encode_einval(&m);
    m = check_msg();
    m.resource[0] = '\0';
    expect_encode_einval(&m);
    m = check_msg();
    memset(m.stack, 'x', sizeof(m.stack)); /* no NUL */
    expect_encode_einval(&m);
    m = dead_msg();
    m.original = NULL;
    expect_encode_einval(&m);
}

/* ---------------------------------------------------------------- decoder refusals */

static void add_nothing(msgpack_packer *pk)
{
    (void)pk;
}

static void test_missing_version_is_eproto(void **state)
{
    (void)state;
    cv_msg_t m = check_msg();
    expect_error(rebuild(&m, "v", NULL, 0), CV_EPROTO, "missing field v");
}

static void add_version_7(msgpack_packer *pk)
{
    pack_key(pk, "v");
    msgpack_pack_uint64(pk, 7);
}

static void test_another_version_is_eversion(void **state)
{
    (void)state;
    cv_msg_t m = check_msg();
    expect_error(rebuild(&m, "v", add_version_7, 1), CV_EVERSION, "unsupported message version 7");
}

static void add_version_as_string(msgpack_packer *pk)
{
    pack_kv_str(pk, "v", "1", 1);
}

static void test_a_version_of_the_wrong_type_is_eproto(void **state)
{
    (void)state;
    cv_msg_t m = check_msg();
    expect_error(rebuild(&m, "v", add_version_as_string, 1), CV_EPROTO, "field v");
}

/* v 7 with a "t" and an "s" of shapes version 1 would refuse. */
static void add_future_message(msgpack_packer *pk)
{
    pack_kv_str(pk, "t", "a future type", 13);
    pack_key(pk, "s");
    msgpack_pack_array(pk, 0);
    add_version_7(pk);
}

static void test_a_future_version_is_reported_before_its_fields(void **state)
{
    (void)state;
    expect_error(packed(add_future_message, 3), CV_EVERSION, "unsupported message version 7");
}

static void add_type_9(msgpack_packer *pk)
{
    pack_key(pk, "t");
    msgpack_pack_uint64(pk, 9);
}

static void test_an_unknown_type_is_eproto(void **state)
{
    (void)state;
    cv_msg_t m = check_msg();
    expect_error(rebuild(&m, "t", add_type_9, 1), CV_EPROTO, "unknown message type 9");
    expect_error(rebuild(&m, "t", NULL, 0), CV_EPROTO, "missing field t");
}

static void test_every_required_field_is_required(void **state)
{
    (void)state;
    static const struct {
        cv_msg_t (*make)(void);
        const char *fields[6];
    } cases[] = {
        {stack_msg, {"s", "tr", "k"}},
        {check_msg, {"s", "tr", "r", "p"}},
        {observe_msg, {"s", "tr", "r", "p", "ver"}},
        {dead_msg, {"why", "orig"}},
        {signal_msg, {"s", "r", "sig"}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cv_msg_t m = cases[i].make();
        for (size_t f = 0; cases[i].fields[f]; f++) {
            char needle[32];
            snprintf(needle, sizeof(needle), "missing field %s ", cases[i].fields[f]);
            expect_error(rebuild(&m, cases[i].fields[f], NULL, 0), CV_EPROTO, needle);
        }
    }
}

/* Each known field given a value of the wrong msgpack type. */
static const char *wrong_key;

static void add_wrong_type(msgpack_packer *pk)
{
    pack_key(pk, wrong_key);
    if (strcmp(wrong_key, "s") == 0 || strcmp(wrong_key, "r") == 0 ||
        strcmp(wrong_key, "why") == 0 || strcmp(wrong_key, "sig") == 0)
        msgpack_pack_uint64(pk, 5);
    else if (strcmp(wrong_key, "orig") == 0)
        msgpack_pack_str_with_body(pk, "text", 4);
    else
        msgpack_pack_str_with_body(pk, "5", 1);
}

static void test_a_known_field_of_the_wrong_type_is_eproto(void **state)
{
    (void)state;
    static const char *const keys[] = {"t",   "s",  "tr",  "r",    "p",  "k",
                                       "ver", "at", "why", "orig", "sig"};
    cv_msg_t m = observe_msg();
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        char needle[32];
        wrong_key = keys[i];
        snprintf(needle, sizeof(needle), "field %s: expected", keys[i]);
        expect_error(rebuild(&m, keys[i], add_wrong_type, 1), CV_EPROTO, needle);
    }
}

static void add_negative_traversal(msgpack_packer *pk)
{
    pack_key(pk, "tr");
    msgpack_pack_int64(pk, -1);
}

static void add_float_version(msgpack_packer *pk)
{
    pack_key(pk, "ver");
    msgpack_pack_double(pk, 1.0);
}

static void test_negative_and_float_integers_are_eproto(void **state)
{
    (void)state;
    cv_msg_t m = observe_msg();
    expect_error(rebuild(&m, "tr", add_negative_traversal, 1), CV_EPROTO,
                 "field tr: expected unsigned integer, got negative integer");
    expect_error(rebuild(&m, "ver", add_float_version, 1), CV_EPROTO,
                 "field ver: expected unsigned integer, got float");
}

static void add_phase_2(msgpack_packer *pk)
{
    pack_key(pk, "p");
    msgpack_pack_uint64(pk, 2);
}

static void add_kind_4(msgpack_packer *pk)
{
    pack_key(pk, "k");
    msgpack_pack_uint64(pk, 4);
}

static void add_huge_attempt(msgpack_packer *pk)
{
    pack_key(pk, "at");
    msgpack_pack_uint64(pk, (uint64_t)UINT32_MAX + 1);
}

static void add_express_2(msgpack_packer *pk)
{
    pack_key(pk, "x");
    msgpack_pack_uint64(pk, 2);
}

static void test_out_of_range_enums_are_eproto(void **state)
{
    (void)state;
    cv_msg_t c = check_msg();
    expect_error(rebuild(&c, "p", add_phase_2, 1), CV_EPROTO, "field p: 2 is out of range");
    cv_msg_t s = stack_msg();
    expect_error(rebuild(&s, "k", add_kind_4, 1), CV_EPROTO, "field k: 4 is out of range");
    expect_error(rebuild(&c, "at", add_huge_attempt, 1), CV_EPROTO, "field at");
    expect_error(rebuild(&c, "x", add_express_2, 1), CV_EPROTO, "field x: 2 is out of range");
}

static size_t long_len;

static void add_long_stack(msgpack_packer *pk)
{
    char s[CV_ID_MAX + 8];
    memset(s, 'x', sizeof(s));
    pack_kv_str(pk, "s", s, long_len);
}

static void add_long_resource(msgpack_packer *pk)
{
    char s[CV_NAME_MAX + 8];
    memset(s, 'x', sizeof(s));
    pack_kv_str(pk, "r", s, long_len);
}

static void add_long_reason(msgpack_packer *pk)
{
    char s[CV_REASON_MAX + 8];
    memset(s, 'x', sizeof(s));
    pack_kv_str(pk, "why", s, long_len);
}

static void test_too_long_strings_are_etoobig(void **state)
{
    (void)state;
    cv_msg_t c = check_msg();
    long_len = CV_ID_MAX;
    expect_error(rebuild(&c, "s", add_long_stack, 1), CV_ETOOBIG, "field s: 64 bytes");
    long_len = CV_NAME_MAX;
    expect_error(rebuild(&c, "r", add_long_resource, 1), CV_ETOOBIG, "field r: 256 bytes");
    cv_msg_t d = dead_msg();
    long_len = CV_REASON_MAX;
    expect_error(rebuild(&d, "why", add_long_reason, 1), CV_ETOOBIG, "field why: 512 bytes");
}

static void add_empty_stack(msgpack_packer *pk)
{
    pack_kv_str(pk, "s", "", 0);
}

static void add_empty_resource(msgpack_packer *pk)
{
    pack_kv_str(pk, "r", "", 0);
}

static void add_empty_signal(msgpack_packer *pk)
{
    pack_kv_str(pk, "sig", "", 0);
}

static void add_stack_with_nul(msgpack_packer *pk)
{
    pack_kv_str(pk, "s", "st\0ck", 5);
}

static void test_empty_ids_and_nul_bytes_are_eproto(void **state)
{
    (void)state;
    cv_msg_t c = check_msg();
    expect_error(rebuild(&c, "s", add_empty_stack, 1), CV_EPROTO, "field s: empty stack id");
    expect_error(rebuild(&c, "r", add_empty_resource, 1), CV_EPROTO, "field r: empty");
    expect_error(rebuild(&c, "s", add_stack_with_nul, 1), CV_EPROTO, "field s: contains a NUL");
    cv_msg_t d = dead_msg();
    expect_error(rebuild(&d, NULL, add_empty_stack, 1), CV_EPROTO, "field s: empty stack id");
    cv_msg_t g = signal_msg();
    expect_error(rebuild(&g, "sig", add_empty_signal, 1), CV_EPROTO, "field sig: empty signal id");
    expect_error(rebuild(&g, "r", add_empty_resource, 1), CV_EPROTO, "field r: empty");
}

static void add_duplicate_stack(msgpack_packer *pk)
{
    pack_kv_str(pk, "s", "other", 5);
}

static void test_a_field_given_twice_is_eproto(void **state)
{
    (void)state;
    cv_msg_t c = check_msg();
    expect_error(rebuild(&c, NULL, add_duplicate_stack, 1), CV_EPROTO, "field s: given twice");
}

static void add_unknown_fields(msgpack_packer *pk)
{
    pack_key(pk, "future");
    msgpack_pack_array(pk, 2);
    msgpack_pack_map(pk, 1);
    pack_kv_str(pk, "x", "y", 1);
    msgpack_pack_double(pk, 2.5);
    pack_key(pk, "zz");
    msgpack_pack_nil(pk);
}

static void test_unknown_keys_are_ignored(void **state)
{
    (void)state;
    cv_msg_t c = check_msg();
    wire_t w = rebuild(&c, NULL, add_unknown_fields, 2);
    cv_msg_t out;
    char err[256] = "";
    assert_int_equal(decode(&w, &out, err, sizeof(err)), 0);
    assert_same_msg(&c, &out);
    free(w.buf);
}

/* Fields that exist, but not in a STACK message. */
static void add_fields_of_other_types(msgpack_packer *pk)
{
    pack_kv_str(pk, "r", "web", 3);
    pack_kv_str(pk, "why", "no reason", 9);
    pack_key(pk, "ver");
    msgpack_pack_uint64(pk, 9);
}

/* Found by fuzzing (tests/fuzz/corpus/msg/regress_foreign_fields): such
 * fields were kept, so re-encoding the message (a republished job) lost
 * them and decoded to another value. They are skipped like unknown keys. */
static void test_fields_a_type_does_not_carry_are_skipped(void **state)
{
    (void)state;
    cv_msg_t s = stack_msg();
    wire_t w = rebuild(&s, NULL, add_fields_of_other_types, 3);
    cv_msg_t out;
    char err[256] = "";
    assert_int_equal(decode(&w, &out, err, sizeof(err)), 0);
    assert_same_msg(&s, &out);
    free(w.buf);
    round_trip(&out);
}

static void add_integer_key(msgpack_packer *pk)
{
    msgpack_pack_uint64(pk, 1);
    msgpack_pack_uint64(pk, 1);
}

static void test_a_non_string_key_is_eproto(void **state)
{
    (void)state;
    cv_msg_t c = check_msg();
    expect_error(rebuild(&c, NULL, add_integer_key, 1), CV_EPROTO, "expected string");
}

static void test_a_message_that_is_not_a_map_is_eproto(void **state)
{
    (void)state;
    wire_t w = {malloc(3), 3};
    memcpy(w.buf, "\x92\x01\x02", 3); /* [1, 2] */
    expect_error(w, CV_EPROTO, "not a map");
    wire_t e = {malloc(1), 0};
    expect_error(e, CV_EPROTO, "empty message");
}

static void test_trailing_bytes_are_eproto(void **state)
{
    (void)state;
    cv_msg_t c = check_msg();
    wire_t w = encode(&c);
    char *longer = malloc(w.len + 2);
    memcpy(longer, w.buf, w.len);
    longer[w.len] = '\x01';
    longer[w.len + 1] = '\x02';
    free(w.buf);
    expect_error((wire_t){longer, w.len + 2}, CV_EPROTO, "2 trailing bytes");
}

static void test_every_truncation_is_rejected(void **state)
{
    (void)state;
    cv_msg_t msgs[] = {stack_msg(), check_msg(), observe_msg(), dead_msg(), signal_msg()};
    for (size_t i = 0; i < sizeof(msgs) / sizeof(msgs[0]); i++) {
        wire_t w = encode(&msgs[i]);
        for (size_t n = 0; n < w.len; n++) {
            /* A copy of exactly n bytes, so ASan sees any read past it. */
            char *prefix = malloc(n ? n : 1);
            memcpy(prefix, w.buf, n);
            cv_msg_t out;
            char err[256];
            if (cv_msg_decode(prefix, n, &out, err, sizeof(err)) != CV_EPROTO)
                fail_msg("prefix of %zu/%zu bytes of message %zu accepted", n, w.len, i);
            free(prefix);
        }
        free(w.buf);
    }
}

static void test_a_hostile_container_size_is_refused_without_allocating(void **state)
{
    (void)state;
    static const char *const hostile[] = {
        "\xdf\xff\xff\xff\xff",              /* map of 2^32-1 entries */
        "\x81\xa1v\xdd\xff\xff\xff\xff",     /* v: array of 2^32-1 */
        "\x81\xa1v\xdb\xff\xff\xff\xff",     /* v: str of 4 GiB */
        "\x81\xa1v\xc9\xff\xff\xff\xff\x01", /* v: ext of 4 GiB */
        "\x81\xa1v\xc1",                     /* the never-used byte */
    };
    static const size_t lens[] = {5, 8, 8, 9, 4};
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        wire_t w = {malloc(lens[i]), lens[i]};
        memcpy(w.buf, hostile[i], lens[i]);
        expect_error(w, CV_EPROTO, "");
    }
}

static void test_deep_nesting_is_refused_not_recursed(void **state)
{
    (void)state;
    enum { DEPTH = 100000 };
    wire_t w = {malloc(DEPTH + 16), 0};
    const char head[] = "\x83\xa1v\x01\xa1t\x01\xa1x";
    memcpy(w.buf, head, sizeof(head) - 1);
    w.len = sizeof(head) - 1;
    memset(w.buf + w.len, 0x91, DEPTH); /* [[[[...]]]] */
    w.len += DEPTH;
    w.buf[w.len++] = 0x01;
    expect_error(w, CV_EPROTO, "nested deeper than");
}

/* xorshift64*: a fixed seed keeps the fuzz cases the same on every run. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static void check_decoded_sane(const cv_msg_t *m)
{
    assert_true(memchr(m->stack, '\0', sizeof(m->stack)) != NULL);
    assert_true(memchr(m->resource, '\0', sizeof(m->resource)) != NULL);
    assert_true(memchr(m->reason, '\0', sizeof(m->reason)) != NULL);
    assert_true(memchr(m->signal, '\0', sizeof(m->signal)) != NULL);
    assert_true(m->type >= CV_MSG_STACK && m->type <= CV_MSG_SIGNAL);
}

static void test_random_garbage_never_crashes(void **state)
{
    (void)state;
    uint64_t seed = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 100000; i++) {
        size_t len = rng_next(&seed) % 48;
        char *buf = malloc(len ? len : 1);
        for (size_t k = 0; k < len; k++)
            buf[k] = (char)rng_next(&seed);
        if (len > 0 && i % 2) /* half of them start like a small map */
            buf[0] = (char)(0x80 | (buf[0] & 0x0f));
        cv_msg_t out;
        char err[64];
        if (cv_msg_decode(buf, len, &out, err, sizeof(err)) == 0)
            check_decoded_sane(&out);
        free(buf);
    }
}

static void test_mutated_messages_never_crash(void **state)
{
    (void)state;
    uint64_t seed = 42;
    cv_msg_t msgs[] = {stack_msg(), check_msg(), observe_msg(), dead_msg(), signal_msg()};
    for (int i = 0; i < 100000; i++) {
        wire_t w = encode(&msgs[i % 4]);
        int flips = 1 + (int)(rng_next(&seed) % 4);
        for (int f = 0; f < flips; f++)
            w.buf[rng_next(&seed) % w.len] = (char)rng_next(&seed);
        cv_msg_t out;
        char err[64];
        if (decode(&w, &out, err, sizeof(err)) == 0)
            check_decoded_sane(&out);
        free(w.buf);
    }
}

static void test_decode_clears_the_message_on_error(void **state)
{
    (void)state;
    cv_msg_t c = check_msg();
    wire_t w = rebuild(&c, "tr", add_nothing, 0);
    cv_msg_t out = observe_msg();
    assert_int_equal(decode(&w, &out, NULL, 0), CV_EPROTO);
    assert_int_equal(out.type, 0);
    assert_string_equal(out.stack, "");
    free(w.buf);
}

/* ---------------------------------------------------------------- keys and names */

static void test_the_key_of_a_resource_job_is_stack_slash_resource(void **state)
{
    (void)state;
    char key[CV_ID_MAX + CV_NAME_MAX];
    cv_msg_t c = check_msg();
    assert_int_equal(cv_msg_key(&c, key, sizeof(key)), strlen("st-1/web_server"));
    assert_string_equal(key, "st-1/web_server");
    cv_msg_t o = observe_msg();
    cv_msg_key(&o, key, sizeof(key));
    assert_string_equal(key, "st-1/db");
    cv_msg_t g = signal_msg();
    cv_msg_key(&g, key, sizeof(key));
    assert_string_equal(key, "st-1/wait_handle");
    cv_msg_t s = stack_msg();
    assert_int_equal(cv_msg_key(&s, key, sizeof(key)), 4);
    assert_string_equal(key, "st-1");
}

static void test_a_short_key_buffer_truncates_and_returns_what_was_written(void **state)
{
    (void)state;
    char key[8];
    cv_msg_t c = check_msg();
    assert_int_equal(cv_msg_key(&c, key, sizeof(key)), 7);
    assert_string_equal(key, "st-1/we");
    assert_int_equal(cv_msg_key(&c, key, 0), 0);
}

static void test_names_of_types_phases_and_kinds(void **state)
{
    (void)state;
    assert_string_equal(cv_msg_type_name(CV_MSG_STACK), "STACK");
    assert_string_equal(cv_msg_type_name(CV_MSG_CHECK), "CHECK");
    assert_string_equal(cv_msg_type_name(CV_MSG_OBSERVE), "OBSERVE");
    assert_string_equal(cv_msg_type_name(CV_MSG_DEAD), "DEAD");
    assert_string_equal(cv_msg_type_name(CV_MSG_SIGNAL), "SIGNAL");
    assert_string_equal(cv_msg_type_name(0), "UNKNOWN");
    assert_string_equal(cv_phase_name(CV_PHASE_UPDATE), "update");
    assert_string_equal(cv_phase_name(CV_PHASE_CLEANUP), "cleanup");
    assert_string_equal(cv_phase_name(7), "unknown");
    assert_string_equal(cv_trav_kind_name(CV_TRAV_CREATE), "CREATE");
    assert_string_equal(cv_trav_kind_name(CV_TRAV_UPDATE), "UPDATE");
    assert_string_equal(cv_trav_kind_name(CV_TRAV_DELETE), "DELETE");
    assert_string_equal(cv_trav_kind_name(CV_TRAV_ROLLBACK), "ROLLBACK");
    assert_string_equal(cv_trav_kind_name(9), "UNKNOWN");
}

static void test_every_traversal_kind_name_parses_back_to_its_kind(void **state)
{
    (void)state;
    for (int k = CV_TRAV_CREATE; k <= CV_TRAV_ROLLBACK; k++)
        assert_int_equal(cv_trav_kind_parse(cv_trav_kind_name((uint8_t)k)), k);
    assert_int_equal(cv_trav_kind_parse("CREATE"), CV_TRAV_CREATE);
    assert_int_equal(cv_trav_kind_parse("UPDATE"), CV_TRAV_UPDATE);
    assert_int_equal(cv_trav_kind_parse("DELETE"), CV_TRAV_DELETE);
    assert_int_equal(cv_trav_kind_parse("ROLLBACK"), CV_TRAV_ROLLBACK);
}

static void test_an_unknown_traversal_kind_name_is_einval(void **state)
{
    (void)state;
    assert_int_equal(cv_trav_kind_parse(NULL), CV_EINVAL);
    assert_int_equal(cv_trav_kind_parse(""), CV_EINVAL);
    assert_int_equal(cv_trav_kind_parse("UNKNOWN"), CV_EINVAL);
    assert_int_equal(cv_trav_kind_parse("create"), CV_EINVAL);
    assert_int_equal(cv_trav_kind_parse("CREATE "), CV_EINVAL);
    assert_int_equal(cv_trav_kind_parse("CREAT"), CV_EINVAL);
}

/* ---------------------------------------------------------------- batches of nodes */

/* The jobs cv_msg_next_node hands out, as "u/web c/db ...". */
static void jobs_of(const cv_msg_t *m, char *out, size_t size)
{
    cv_msg_t one;
    size_t len = 0;
    out[0] = '\0';
    for (size_t pos = 0; cv_msg_next_node(m, &pos, &one);) {
        assert_null(one.nodes);
        assert_int_equal(one.nodes_len, 0);
        assert_string_equal(one.stack, m->stack);
        assert_true(one.traversal == m->traversal);
        assert_int_equal(one.express, m->express);
        len += (size_t)snprintf(out + len, size - len, "%s%c/%s", len ? " " : "",
                                one.phase == CV_PHASE_CLEANUP ? 'c' : 'u', one.resource);
    }
}

static void test_a_check_carrying_more_nodes_round_trips_and_hands_out_each_job(void **state)
{
    (void)state;
    cv_msg_t m = check_msg();
    m.express = 1;
    static const char list[] = "u/db/c/old server/u/x";
    m.nodes = list;
    m.nodes_len = strlen(list);
    wire_t w = encode(&m);
    cv_msg_t out;
    char err[256] = "", jobs[512];
    assert_int_equal(decode(&w, &out, err, sizeof(err)), 0);
    assert_same_msg(&m, &out);
    /* decoded, the list points into the buffer it came in */
    assert_true(out.nodes > w.buf && out.nodes < w.buf + w.len);
    jobs_of(&out, jobs, sizeof(jobs));
    assert_string_equal(jobs, "c/web_server u/db c/old server u/x");
    free(w.buf);
}

static void test_a_check_alone_is_one_job(void **state)
{
    (void)state;
    cv_msg_t m = check_msg();
    char jobs[512];
    jobs_of(&m, jobs, sizeof(jobs));
    assert_string_equal(jobs, "c/web_server");
    cv_msg_t s = stack_msg(), one;
    size_t pos = 0;
    assert_int_equal(cv_msg_next_node(&s, &pos, &one), 1); /* any message is its own job */
    assert_int_equal(cv_msg_next_node(&s, &pos, &one), 0);
}

static void test_the_most_nodes_a_message_carries_round_trip(void **state)
{
    (void)state;
    cv_msg_t m = check_msg();
    char list[(CV_MSG_NODES_MAX - 1) * (CV_NAME_MAX + 2)];
    size_t len = 0;
    for (int i = 0; i < CV_MSG_NODES_MAX - 1; i++) {
        if (i)
            list[len++] = '/';
        list[len++] = 'u';
        list[len++] = '/';
        memset(list + len, 'a' + i % 26, CV_NAME_MAX - 1); /* the longest resource name */
        len += CV_NAME_MAX - 1;
    }
    m.nodes = list;
    m.nodes_len = len;
    round_trip(&m);
    wire_t w = encode(&m);
    cv_msg_t out, one;
    char err[256] = "";
    assert_int_equal(decode(&w, &out, err, sizeof(err)), 0);
    int n = 0;
    for (size_t pos = 0; cv_msg_next_node(&out, &pos, &one); n++)
        assert_int_equal(strlen(one.resource), n ? CV_NAME_MAX - 1 : strlen("web_server"));
    assert_int_equal(n, CV_MSG_NODES_MAX);
    free(w.buf);
}

static const char *bad_nodes;

static void add_bad_nodes(msgpack_packer *pk)
{
    pack_kv_str(pk, "ns", bad_nodes, strlen(bad_nodes));
}

static void add_nodes_as_array(msgpack_packer *pk)
{
    pack_key(pk, "ns");
    msgpack_pack_array(pk, 1);
    msgpack_pack_str_with_body(pk, "u/a", 3);
}

static void expect_bad_nodes(const char *list, int err, const char *reason)
{
    cv_msg_t c = check_msg();
    bad_nodes = list;
    expect_error(rebuild(&c, NULL, add_bad_nodes, 1), err, reason);
    c.nodes = list;
    c.nodes_len = strlen(list);
    char *buf;
    size_t len;
    assert_int_equal(cv_msg_encode(&c, &buf, &len), CV_EINVAL); /* nor would it be sent */
}

static void test_a_nodes_list_that_is_not_one_of_node_names_is_refused(void **state)
{
    (void)state;
    expect_bad_nodes("web", CV_EPROTO, "field ns: node 1 (\"web\") is not a graph node name");
    expect_bad_nodes("u/a/x/b", CV_EPROTO, "field ns: node 2 (\"x/b\")");
    expect_bad_nodes("u/a/", CV_EPROTO, "field ns: node 2 (\"\")");
    expect_bad_nodes("u/", CV_EPROTO, "field ns: node 1 (\"u/\")");
    expect_bad_nodes("u/a//u/b", CV_EPROTO, "field ns: node 2");
    cv_msg_t c = check_msg();
    expect_error(rebuild(&c, NULL, add_nodes_as_array, 1), CV_EPROTO,
                 "field ns: expected string, got array");
}

static char many_nodes[CV_MSG_NODES_MAX * 4];

static void test_more_nodes_than_a_message_carries_are_etoobig(void **state)
{
    (void)state;
    size_t len = 0;
    for (int i = 0; i < CV_MSG_NODES_MAX; i++) /* one more than the message's own */
        len += (size_t)snprintf(many_nodes + len, sizeof(many_nodes) - len, "%su/%c", i ? "/" : "",
                                'a' + i % 26);
    expect_bad_nodes(many_nodes, CV_ETOOBIG, "field ns: more than 63 nodes in one message");
}

static void test_nodes_travel_only_on_a_check(void **state)
{
    (void)state;
    cv_msg_t o = observe_msg();
    o.nodes = "u/a";
    o.nodes_len = 3;
    wire_t w = encode(&o);
    cv_msg_t out;
    char err[256] = "";
    assert_int_equal(decode(&w, &out, err, sizeof(err)), 0);
    assert_null(out.nodes);
    assert_int_equal(out.nodes_len, 0);
    free(w.buf);
}

static void test_jobs_published_together_spread_over_16_messages_of_at_most_64(void **state)
{
    (void)state;
    assert_int_equal(cv_msg_batch_size(0), 1);
    assert_int_equal(cv_msg_batch_size(1), 1);
    assert_int_equal(cv_msg_batch_size(16), 1);   /* 16 messages of one */
    assert_int_equal(cv_msg_batch_size(17), 2);   /* 9 messages */
    assert_int_equal(cv_msg_batch_size(201), 13); /* 16 messages */
    assert_int_equal(cv_msg_batch_size(1024), 64);
    assert_int_equal(cv_msg_batch_size(10000), CV_MSG_NODES_MAX); /* 157 messages */
}

static void test_a_node_name_sets_phase_and_resource(void **state)
{
    (void)state;
    cv_msg_t m = check_msg();
    assert_int_equal(cv_msg_set_node(&m, "u/app", 5), 0);
    assert_int_equal(m.phase, CV_PHASE_UPDATE);
    assert_string_equal(m.resource, "app");
    assert_int_equal(cv_msg_set_node(&m, "c/db", 4), 0);
    assert_int_equal(m.phase, CV_PHASE_CLEANUP);
    assert_string_equal(m.resource, "db");
    assert_int_equal(cv_msg_set_node(&m, "x/db", 4), CV_EINVAL);
    assert_int_equal(cv_msg_set_node(&m, "u/", 2), CV_EINVAL);
    assert_int_equal(cv_msg_set_node(&m, "u/a/b", 5), CV_EINVAL);
    assert_string_equal(m.resource, "db"); /* untouched when refused */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_message_type_round_trips),
        cmocka_unit_test(test_every_traversal_kind_and_phase_round_trips),
        cmocka_unit_test(test_strings_of_the_maximum_length_round_trip),
        cmocka_unit_test(test_only_the_fields_a_type_uses_are_encoded),
        cmocka_unit_test(test_a_dead_letter_names_its_stack_when_known),
        cmocka_unit_test(test_a_dead_letters_original_points_into_the_input),
        cmocka_unit_test(test_an_empty_original_round_trips),
        cmocka_unit_test(test_encoder_refuses_what_the_decoder_would),
        cmocka_unit_test(test_missing_version_is_eproto),
        cmocka_unit_test(test_another_version_is_eversion),
        cmocka_unit_test(test_a_version_of_the_wrong_type_is_eproto),
        cmocka_unit_test(test_a_future_version_is_reported_before_its_fields),
        cmocka_unit_test(test_an_unknown_type_is_eproto),
        cmocka_unit_test(test_every_required_field_is_required),
        cmocka_unit_test(test_a_known_field_of_the_wrong_type_is_eproto),
        cmocka_unit_test(test_negative_and_float_integers_are_eproto),
        cmocka_unit_test(test_out_of_range_enums_are_eproto),
        cmocka_unit_test(test_too_long_strings_are_etoobig),
        cmocka_unit_test(test_empty_ids_and_nul_bytes_are_eproto),
        cmocka_unit_test(test_a_field_given_twice_is_eproto),
        cmocka_unit_test(test_unknown_keys_are_ignored),
        cmocka_unit_test(test_fields_a_type_does_not_carry_are_skipped),
        cmocka_unit_test(test_a_non_string_key_is_eproto),
        cmocka_unit_test(test_a_message_that_is_not_a_map_is_eproto),
        cmocka_unit_test(test_trailing_bytes_are_eproto),
        cmocka_unit_test(test_every_truncation_is_rejected),
        cmocka_unit_test(test_a_hostile_container_size_is_refused_without_allocating),
        cmocka_unit_test(test_deep_nesting_is_refused_not_recursed),
        cmocka_unit_test(test_random_garbage_never_crashes),
        cmocka_unit_test(test_mutated_messages_never_crash),
        cmocka_unit_test(test_decode_clears_the_message_on_error),
        cmocka_unit_test(test_the_key_of_a_resource_job_is_stack_slash_resource),
        cmocka_unit_test(test_a_short_key_buffer_truncates_and_returns_what_was_written),
        cmocka_unit_test(test_names_of_types_phases_and_kinds),
        cmocka_unit_test(test_the_express_lane_travels_only_when_set),
        cmocka_unit_test(test_a_signal_id_of_the_maximum_length_round_trips),
        cmocka_unit_test(test_a_signal_without_its_id_is_not_encoded),
        cmocka_unit_test(test_every_traversal_kind_name_parses_back_to_its_kind),
        cmocka_unit_test(test_an_unknown_traversal_kind_name_is_einval),
        cmocka_unit_test(test_a_check_carrying_more_nodes_round_trips_and_hands_out_each_job),
        cmocka_unit_test(test_a_check_alone_is_one_job),
        cmocka_unit_test(test_the_most_nodes_a_message_carries_round_trip),
        cmocka_unit_test(test_a_nodes_list_that_is_not_one_of_node_names_is_refused),
        cmocka_unit_test(test_more_nodes_than_a_message_carries_are_etoobig),
        cmocka_unit_test(test_nodes_travel_only_on_a_check),
        cmocka_unit_test(test_a_node_name_sets_phase_and_resource),
        cmocka_unit_test(test_jobs_published_together_spread_over_16_messages_of_at_most_64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
