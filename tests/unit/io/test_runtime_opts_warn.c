/*
 * Specification of the unauthenticated-connection check (proto/io/cv_opts.h,
 * cv_opts_unauthenticated): a Redis without a password and a Kafka without
 * SASL (or a TLS client certificate) are named, with their addresses;
 * credentials silence it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "cv_opts.h"

#include <string.h>

static void opts(cv_opts_t *o, const char *kafka_opts)
{
    memset(o, 0, sizeof(*o));
    assert_int_equal(cv_opts_set_redis(o, "redis://127.0.0.1:6390/0", NULL, 0), 0);
    strcpy(o->kafka, "127.0.0.1:9092");
    if (kafka_opts)
        assert_int_equal(cv_opts_add_kafka(o, kafka_opts, NULL, 0), 0);
}

static void test_no_credentials_names_redis_and_kafka(void **state)
{
    (void)state;
    cv_opts_t o;
    char what[512];
    opts(&o, NULL);
    assert_true(cv_opts_unauthenticated(&o, true, what, sizeof(what)) > 0);
    assert_string_equal(what, "Redis at redis://127.0.0.1:6390/0 (no password) and Kafka at "
                              "127.0.0.1:9092 (no SASL)");
    /* a program that does not use Kafka is not told about it */
    cv_opts_unauthenticated(&o, false, what, sizeof(what));
    assert_string_equal(what, "Redis at redis://127.0.0.1:6390/0 (no password)");
    cv_opts_free(&o);
}

static void test_credentials_for_both_silence_it(void **state)
{
    (void)state;
    cv_opts_t o;
    char what[512];
    opts(&o, "security.protocol=SASL_SSL,sasl.mechanisms=PLAIN,sasl.username=converge-worker");
    strcpy(o.redis_pass, "secret");
    assert_int_equal(cv_opts_unauthenticated(&o, true, what, sizeof(what)), 0);
    assert_string_equal(what, "");
    cv_opts_free(&o);
}

static void test_kafka_is_authenticated_by_sasl_or_a_client_certificate(void **state)
{
    (void)state;
    cv_opts_t o;
    char what[512];
    opts(&o, "security.protocol=ssl,ssl.ca.location=/ca.crt");
    strcpy(o.redis_pass, "secret");
    assert_false(cv_opts_kafka_authenticated(&o)); /* TLS alone: the server is checked, not us */
    cv_opts_unauthenticated(&o, true, what, sizeof(what));
    assert_string_equal(what, "Kafka at 127.0.0.1:9092 (no SASL)");
    cv_opts_free(&o);
    opts(&o, "security.protocol=SSL,ssl.certificate.location=/c.crt");
    assert_true(cv_opts_kafka_authenticated(&o));
    cv_opts_free(&o);
    opts(&o, "security.protocol=sasl_plaintext");
    assert_true(cv_opts_kafka_authenticated(&o));
    cv_opts_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_credentials_names_redis_and_kafka),
        cmocka_unit_test(test_credentials_for_both_silence_it),
        cmocka_unit_test(test_kafka_is_authenticated_by_sasl_or_a_client_certificate),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
