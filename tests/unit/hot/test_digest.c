/*
 * cv__digest: the published test vectors of RFC 1321 (MD5), RFC 3174
 * (SHA-1) and FIPS 180-4 / RFC 6234 (SHA-224/256/384/512), including
 * messages that end on and just past a block's padding boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cv__digest.h"

static void assert_digest(const char *alg, const char *msg, size_t len, const char *want)
{
    char hex[CV__DIGEST_HEX_MAX];
    assert_int_equal(cv__digest_hex(alg, msg, len, hex), 0);
    assert_string_equal(hex, want);
}

#define ABC448 "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"

static void test_md5_matches_rfc_1321(void **state)
{
    (void)state;
    assert_digest("md5", "", 0, "d41d8cd98f00b204e9800998ecf8427e");
    assert_digest("md5", "a", 1, "0cc175b9c0f1b6a831c399e269772661");
    assert_digest("md5", "abc", 3, "900150983cd24fb0d6963f7d28e17f72");
    assert_digest("md5", "message digest", 14, "f96b697d7cb7938d525a2f31aaf161d0");
    assert_digest("md5", "abcdefghijklmnopqrstuvwxyz", 26, "c3fcd3d76192e4007dfb496cca67e13b");
    assert_digest(
        "md5", "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
        80, "57edf4a22be3c955ac49da2e2107b67a");
}

static void test_sha1_matches_rfc_3174(void **state)
{
    (void)state;
    assert_digest("sha1", "abc", 3, "a9993e364706816aba3e25717850c26c9cd0d89d");
    assert_digest("sha1", ABC448, 56, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
}

static void test_sha2_matches_fips_180_4(void **state)
{
    (void)state;
    assert_digest("sha224", "abc", 3, "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7");
    assert_digest("sha224", ABC448, 56, "75388b16512776cc5dba5da1fd890150b0c6455cb4f58b1952522525");
    assert_digest("sha256", "abc", 3,
                  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert_digest("sha256", ABC448, 56,
                  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    assert_digest("sha256", "", 0,
                  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert_digest(
        "sha384", "abc", 3,
        "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358b"
        "aeca134c825a7");
    assert_digest(
        "sha384", ABC448, 56,
        "3391fdddfc8dc7393707a65b1b4709397cf8b1d162af05abfe8f450de5f36bc6b0455a8520bc4e6f5"
        "fe95b1fe3c8452b");
    assert_digest(
        "sha512", "abc", 3,
        "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a83"
        "6ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f");
    assert_digest(
        "sha512", ABC448, 56,
        "204a8fc6dda82f0a0ced7beb8e08a41657c16ef468b228a8279be331a703c33596fd15c13b1b07f9a"
        "a1d3bea57789ca031ad85c7a71dd70354ec631238ca3445");
}

/* A million "a": many whole blocks, then the padding alone in a block. */
static void test_a_million_a_matches_the_published_digests(void **state)
{
    (void)state;
    size_t n = 1000000;
    char *a = malloc(n);
    assert_non_null(a);
    memset(a, 'a', n);
    assert_digest("md5", a, n, "7707d6ae4e027c70eea2a935c2296f21");
    assert_digest("sha1", a, n, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    assert_digest("sha224", a, n, "20794655980c91d8bbb4c1ea97618a4bf03f42581948b2ee4ee7ad67");
    assert_digest("sha256", a, n,
                  "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    assert_digest(
        "sha384", a, n,
        "9d0e1809716474cb086e834e310a4a1ced149e9c00f248527972cec5704c2a5b07b8b3dc38ecc4eba"
        "e97ddd87f3d8985");
    assert_digest(
        "sha512", a, n,
        "e718483d0ce769644e2e42c7bc15b4638e1f98b13b2044285632a803afa973ebde0ff244877ea60a4"
        "cb0432ce577c31beb009c5c2c49aa2e4eadb217ad8cc09b");
    free(a);
}

static void test_an_unknown_algorithm_is_refused(void **state)
{
    (void)state;
    char hex[CV__DIGEST_HEX_MAX];
    assert_int_equal(cv__digest_hex("sha3_256", "x", 1, hex), -1);
    assert_int_equal(cv__digest_hex("SHA256", "x", 1, hex), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_md5_matches_rfc_1321),
        cmocka_unit_test(test_sha1_matches_rfc_3174),
        cmocka_unit_test(test_sha2_matches_fips_180_4),
        cmocka_unit_test(test_a_million_a_matches_the_published_digests),
        cmocka_unit_test(test_an_unknown_algorithm_is_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
