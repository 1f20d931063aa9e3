/* The pure parts of the worker runtime: option parsing, records, idempotency keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <hiredis/hiredis.h>
#include <jansson.h>

#include "cv_base.h"
#include "cv_io.h"
#include "cv_flowrun.h"
#include "cv_record.h"

static void test_redis_url_gives_host_port_and_database(void **state)
{
    (void)state;
    cv_opts_t o;
    memset(&o, 0, sizeof(o));
    assert_int_equal(cv_opts_set_redis(&o, "redis://10.1.2.3:6390/4", NULL, 0), 0);
    assert_string_equal(o.redis_host, "10.1.2.3");
    assert_int_equal(o.redis_port, 6390);
    assert_int_equal(o.redis_db, 4);
    assert_int_equal(cv_opts_set_redis(&o, "localhost", NULL, 0), 0);
    assert_string_equal(o.redis_host, "localhost");
    assert_int_equal(o.redis_port, 6379);
    assert_int_equal(o.redis_db, 0);
}

static void test_a_cluster_url_gives_its_seeds_and_credentials(void **state)
{
    (void)state;
    cv_opts_t o;
    memset(&o, 0, sizeof(o));
    assert_int_equal(
        cv_opts_set_redis(&o, "redis+cluster://u:p%40ss@h1:7001,h2,10.0.0.3:7003/0", NULL, 0), 0);
    assert_true(o.redis_cluster);
    assert_int_equal(o.nredis_seeds, 3);
    assert_string_equal(o.redis_seeds[0].host, "h1");
    assert_int_equal(o.redis_seeds[0].port, 7001);
    assert_string_equal(o.redis_seeds[1].host, "h2");
    assert_int_equal(o.redis_seeds[1].port, 6379);
    assert_string_equal(o.redis_seeds[2].host, "10.0.0.3");
    assert_int_equal(o.redis_seeds[2].port, 7003);
    assert_string_equal(o.redis_host, "h1"); /* messages name the first seed */
    assert_int_equal(o.redis_port, 7001);
    assert_string_equal(o.redis_user, "u");
    assert_string_equal(o.redis_pass, "p@ss");
    assert_string_equal(o.redis_url, "redis+cluster://u:***@h1:7001,h2,10.0.0.3:7003/0");
    /* and a plain URL after it is a single Redis again */
    assert_int_equal(cv_opts_set_redis(&o, "redis://h:1", NULL, 0), 0);
    assert_false(o.redis_cluster);
    assert_int_equal(o.nredis_seeds, 1);
}

static void test_bad_cluster_urls_are_refused_with_the_reason(void **state)
{
    (void)state;
    cv_opts_t o;
    char err[256];
    memset(&o, 0, sizeof(o));
    assert_int_equal(cv_opts_set_redis(&o, "redis+cluster://h1:1,h2:2/3", err, sizeof(err)),
                     CV_EINVAL);
    assert_non_null(strstr(err, "database 0 only"));
    assert_int_equal(cv_opts_set_redis(&o, "redis://h1:1,h2:2", err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "redis+cluster://"));
    assert_int_equal(cv_opts_set_redis(&o, "redis+cluster://h1:1,", err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "no host"));
    assert_int_equal(cv_opts_set_redis(&o, "redis+cluster://h1:1,h2:0", err, sizeof(err)),
                     CV_EINVAL);
    assert_non_null(strstr(err, "bad port"));
    char many[512] = "redis+cluster://h:1";
    for (int i = 0; i < 16; i++)
        strcat(many, ",h:1");
    assert_int_equal(cv_opts_set_redis(&o, many, err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "more than 16 seeds"));
}

static void test_bad_redis_urls_are_refused_with_the_reason(void **state)
{
    (void)state;
    cv_opts_t o;
    char err[256];
    memset(&o, 0, sizeof(o));
    assert_int_equal(cv_opts_set_redis(&o, "redis://:6379", err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "no host"));
    assert_int_equal(cv_opts_set_redis(&o, "redis://h:99999", err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "bad port"));
    assert_int_equal(cv_opts_set_redis(&o, "redis://h:1/x", err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "database"));
}

static void test_redis_url_credentials_are_percent_decoded(void **state)
{
    (void)state;
    cv_opts_t o;
    memset(&o, 0, sizeof(o));
    assert_int_equal(cv_opts_set_redis(&o, "redis://converge-worker:p%40ss%3Aw@h:6390/2", NULL, 0),
                     0);
    assert_string_equal(o.redis_user, "converge-worker");
    assert_string_equal(o.redis_pass, "p@ss:w");
    assert_string_equal(o.redis_host, "h");
    assert_int_equal(o.redis_port, 6390);
    assert_int_equal(o.redis_db, 2);
    assert_string_equal(o.redis_url, "redis://converge-worker:***@h:6390/2");
    const char *argv[3];
    assert_int_equal(cv_opts_redis_auth_argv(&o, argv), 3);
    assert_string_equal(argv[1], "converge-worker");
    assert_string_equal(argv[2], "p@ss:w");
}

static void test_a_password_without_user_authenticates_the_default_user(void **state)
{
    (void)state;
    cv_opts_t o;
    memset(&o, 0, sizeof(o));
    assert_int_equal(cv_opts_set_redis(&o, "redis://:secret@h:1/0", NULL, 0), 0);
    assert_string_equal(cv_opts_redis_user(&o), "default");
    const char *argv[3];
    assert_int_equal(cv_opts_redis_auth_argv(&o, argv), 2);
    assert_string_equal(argv[1], "secret");
    assert_int_equal(cv_opts_set_redis(&o, "redis://h:1/0", NULL, 0), 0);
    assert_int_equal(cv_opts_redis_auth_argv(&o, argv), 0); /* no password: no AUTH */
}

static void test_bad_credentials_are_refused_without_showing_the_password(void **state)
{
    (void)state;
    cv_opts_t o;
    char err[256];
    memset(&o, 0, sizeof(o));
    assert_int_equal(cv_opts_set_redis(&o, "redis://u:s3cr%zzet@h:1/0", err, sizeof(err)),
                     CV_EINVAL);
    assert_non_null(strstr(err, "bad user or password"));
    assert_null(strstr(err, "s3cr"));
    assert_int_equal(cv_opts_set_redis(&o, "redis://u:s3cret@h:x/0", err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "redis://u:***@h:x/0"));
    assert_int_equal(cv_opts_set_redis(&o, "redis://u:%00@h:1/0", err, sizeof(err)), CV_EINVAL);
}

static void test_redaction_hides_only_the_password(void **state)
{
    (void)state;
    char out[128];
    cv_opts_redact_url("redis://u:p@w@h:1/0", out, sizeof(out));
    assert_string_equal(out, "redis://u:***@h:1/0");
    cv_opts_redact_url(":pw@h:1", out, sizeof(out));
    assert_string_equal(out, ":***@h:1");
    cv_opts_redact_url("redis://user@h:1/0", out, sizeof(out));
    assert_string_equal(out, "redis://user@h:1/0");
    cv_opts_redact_url("redis://h:1/a@b", out, sizeof(out));
    assert_string_equal(out, "redis://h:1/a@b");
}

static void test_the_password_file_wins_over_the_url(void **state)
{
    (void)state;
    char path[] = "/tmp/cv-test-pass-XXXXXX", err[256];
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "from-file\nignored\n", 19), 19);
    close(fd);
    cv_opts_t o;
    memset(&o, 0, sizeof(o));
    assert_int_equal(cv_opts_read_redis_password(&o, path, err, sizeof(err)), 0);
    assert_int_equal(cv_opts_set_redis(&o, "redis://u:from-url@h:1/0", err, sizeof(err)), 0);
    assert_string_equal(o.redis_user, "u");
    assert_string_equal(o.redis_pass, "from-file");
    fd = open(path, O_WRONLY | O_TRUNC);
    close(fd);
    assert_int_equal(cv_opts_read_redis_password(&o, path, err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, path));
    unlink(path);
    assert_int_equal(cv_opts_read_redis_password(&o, path, err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "cannot read"));
}

static void test_kafka_options_are_split_and_checked(void **state)
{
    (void)state;
    cv_opts_t o;
    char err[256];
    memset(&o, 0, sizeof(o));
    assert_int_equal(cv_opts_add_kafka(&o, "a=1,b=x=y,,c=", err, sizeof(err)), 0);
    assert_int_equal(o.nkafka_opts, 3);
    assert_string_equal(o.kafka_opts[1], "b=x=y");
    assert_int_equal(cv_opts_add_kafka(&o, "novalue", err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "novalue"));
    cv_opts_free(&o);
    assert_int_equal(o.nkafka_opts, 0);
}

static void test_kafka_password_file_is_read_and_secrets_are_not_echoed(void **state)
{
    (void)state;
    cv_opts_t o;
    char err[256], path[] = "/tmp/cv-test-kpass-XXXXXX";
    memset(&o, 0, sizeof(o));
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "s3cr,et\nrest\n", 13), 13);
    close(fd);
    assert_int_equal(cv_opts_read_kafka_password(&o, path, err, sizeof(err)), 0);
    assert_string_equal(o.kafka_pass, "s3cr,et");
    unlink(path);
    assert_int_equal(cv_opts_read_kafka_password(&o, path, err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "Kafka password file"));
    /* The rest of a password cut at a comma is not echoed in the error. */
    assert_int_equal(cv_opts_add_kafka(&o, "sasl.password=ab,cd", err, sizeof(err)), CV_EINVAL);
    assert_null(strstr(err, "cd"));
    assert_true(cv_opts_kafka_key_is_secret("ssl.key.password", 16));
    assert_true(cv_opts_kafka_key_is_secret("sasl.oauthbearer.client.secret", 30));
    assert_false(cv_opts_kafka_key_is_secret("sasl.username", 13));
    cv_opts_free(&o);
    assert_string_equal(o.kafka_pass, "");
}

/* A flat HGETALL-style reply built by hand. */
static redisReply *flat_reply(const char *const *kv, size_t n)
{
    redisReply *r = calloc(1, sizeof(*r));
    r->type = REDIS_REPLY_ARRAY;
    r->elements = n;
    r->element = calloc(n, sizeof(*r->element));
    for (size_t i = 0; i < n; i++) {
        r->element[i] = calloc(1, sizeof(redisReply));
        r->element[i]->type = REDIS_REPLY_STRING;
        r->element[i]->str = strdup(kv[i]);
        r->element[i]->len = strlen(kv[i]);
    }
    return r;
}

static void test_record_is_parsed_with_json_fields(void **state)
{
    (void)state;
    const char *kv[] = {"status",    "CREATE_COMPLETE",
                        "version",   "3",
                        "traversal", "7",
                        "props",     "{\"value\":\"x\"}",
                        "old",       "[{\"uuid\":\"u1\"}]",
                        "started",   "12.5",
                        "policy",    "Retain"};
    redisReply *r = flat_reply(kv, sizeof(kv) / sizeof(kv[0]));
    cv_resp_t *v = cv_flowrun_resp(r, false); /* as the workers read replies */
    cv_record_t rec;
    assert_int_equal(cv_record_parse(&rec, v), 0);
    free(v);
    assert_true(rec.exists);
    assert_string_equal(rec.version, "3");
    assert_int_equal(rec.traversal, 7);
    assert_string_equal(json_string_value(json_object_get(rec.props, "value")), "x");
    assert_int_equal(json_array_size(rec.old), 1);
    assert_true(rec.started == 12.5);
    assert_string_equal(rec.policy, "Retain");
    assert_int_equal(json_object_size(rec.attrs), 0); /* absent JSON fields are empty */
    cv_record_clear(&rec);
    freeReplyObject(r);
}

static void test_missing_record_has_version_zero_and_does_not_exist(void **state)
{
    (void)state;
    redisReply *r = flat_reply(NULL, 0);
    cv_resp_t *v = cv_flowrun_resp(r, true);
    cv_record_t rec;
    cv_record_parse(&rec, v);
    free(v);
    assert_false(rec.exists);
    assert_string_equal(rec.version, "0");
    assert_true(json_is_array(rec.old));
    cv_record_clear(&rec);
    freeReplyObject(r);
}

static void test_uuid_is_the_same_for_the_same_version_and_differs_otherwise(void **state)
{
    (void)state;
    char a[37], b[37], c[37], d[37];
    cv_record_uuid(a, "s1", "web", 2);
    cv_record_uuid(b, "s1", "web", 2);
    cv_record_uuid(c, "s1", "web", 3);
    cv_record_uuid(d, "s1w", "eb", 2); /* parts are separated, not concatenated */
    assert_string_equal(a, b);
    assert_string_not_equal(a, c);
    assert_string_not_equal(a, d);
    assert_int_equal(strlen(a), 36);
    assert_int_equal(a[14], '5');
    /* An idempotency key kept in records: the same across releases. */
    cv_record_uuid(a, "a", "web_server", 1);
    assert_string_equal(a, "caf5937e-7717-5caa-9f02-4337979b0109");
}

static void test_the_address_map_routes_announced_addresses_only(void **state)
{
    (void)state;
    cv_opts_t o;
    memset(&o, 0, sizeof(o));
    assert_int_equal(cv_opts_set_redis_map(
                         &o, "127.0.0.1:24001=127.0.0.1:25001,node-2:6380=10.0.0.2:7380", NULL, 0),
                     0);
    assert_int_equal(o.nredis_map, 2);
    const char *host = "127.0.0.1";
    int port = 24001;
    cv_opts_redis_route(&o, &host, &port);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 25001);
    host = "node-2", port = 6380;
    cv_opts_redis_route(&o, &host, &port);
    assert_string_equal(host, "10.0.0.2");
    assert_int_equal(port, 7380);
    host = "127.0.0.1", port = 24002; /* not in the map: itself */
    cv_opts_redis_route(&o, &host, &port);
    assert_string_equal(host, "127.0.0.1");
    assert_int_equal(port, 24002);
    host = "node-2", port = 6381; /* the port counts too */
    cv_opts_redis_route(&o, &host, &port);
    assert_int_equal(port, 6381);
    assert_int_equal(cv_opts_set_redis_map(&o, "", NULL, 0), 0);
    assert_int_equal(o.nredis_map, 0);
}

static void test_a_bad_address_map_is_refused_naming_the_entry(void **state)
{
    (void)state;
    cv_opts_t o;
    memset(&o, 0, sizeof(o));
    char err[256];
    const char *bad[] = {"h:1",     "h:1=h",       "h=h:2",    ":1=h:2",
                         "h:1=h:0", "h:1=h:99999", "h:1=h:2x", "a:1=b:2,h:1=:2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_int_equal(cv_opts_set_redis_map(&o, bad[i], err, sizeof(err)), CV_EINVAL);
        assert_non_null(strstr(err, "CONVERGE_REDIS_ADDRESS_MAP: bad entry"));
        assert_int_equal(o.nredis_map, 0); /* nothing half-applied */
    }
    assert_non_null(strstr(err, "\"h:1=:2\""));
    char many[2048] = "";
    for (int i = 1; i <= CV_REDIS_MAP_MAX + 1; i++)
        snprintf(many + strlen(many), sizeof(many) - strlen(many), "%sh:%d=h:%d", i > 1 ? "," : "",
                 i, i + 1000);
    assert_int_equal(cv_opts_set_redis_map(&o, many, err, sizeof(err)), CV_EINVAL);
    assert_non_null(strstr(err, "more than"));
}

static void test_pseudo_parameters_fill_in_but_never_override(void **state)
{
    (void)state;
    json_t *p = json_pack("{s:s}", "OS::region", "eu");
    cv_record_pseudo_params(p, "id1", "web");
    assert_string_equal(json_string_value(json_object_get(p, "OS::stack_name")), "web");
    assert_string_equal(json_string_value(json_object_get(p, "OS::stack_id")), "id1");
    assert_string_equal(json_string_value(json_object_get(p, "OS::region")), "eu");
    json_decref(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_redis_url_gives_host_port_and_database),
        cmocka_unit_test(test_a_cluster_url_gives_its_seeds_and_credentials),
        cmocka_unit_test(test_bad_cluster_urls_are_refused_with_the_reason),
        cmocka_unit_test(test_bad_redis_urls_are_refused_with_the_reason),
        cmocka_unit_test(test_redis_url_credentials_are_percent_decoded),
        cmocka_unit_test(test_a_password_without_user_authenticates_the_default_user),
        cmocka_unit_test(test_bad_credentials_are_refused_without_showing_the_password),
        cmocka_unit_test(test_redaction_hides_only_the_password),
        cmocka_unit_test(test_the_password_file_wins_over_the_url),
        cmocka_unit_test(test_the_address_map_routes_announced_addresses_only),
        cmocka_unit_test(test_a_bad_address_map_is_refused_naming_the_entry),
        cmocka_unit_test(test_kafka_options_are_split_and_checked),
        cmocka_unit_test(test_kafka_password_file_is_read_and_secrets_are_not_echoed),
        cmocka_unit_test(test_record_is_parsed_with_json_fields),
        cmocka_unit_test(test_missing_record_has_version_zero_and_does_not_exist),
        cmocka_unit_test(test_uuid_is_the_same_for_the_same_version_and_differs_otherwise),
        cmocka_unit_test(test_pseudo_parameters_fill_in_but_never_override),
    };
    return cmocka_run_group_tests_name("runtime_pure", tests, NULL, NULL);
}
