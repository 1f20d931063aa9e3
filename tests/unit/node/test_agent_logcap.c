/*
 * Specification of the size caps of replicas' log files
 * (agent/node/agent_logcap.h): a file over the cap moves to .1 and starts empty,
 * and a writer with O_APPEND continues at the new start.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_logcap.h"
#include "test_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static off_t size_of(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static void test_only_files_over_the_cap_are_due(void **state)
{
    (void)state;
    assert_false(cv_logcap_due(100, 100));
    assert_true(cv_logcap_due(101, 100));
    assert_false(cv_logcap_due(1 << 30, 0)); /* no cap */
}

static void test_a_full_file_rotates_and_the_writer_goes_on(void **state)
{
    (void)state;
    char dir[] = "/tmp/cv-logcap-XXXXXX", path[128], old[140];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof(path), "%s/main.out", dir);
    snprintf(old, sizeof(old), "%s.1", path);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "0123456789", 10), 10);
    assert_int_equal(cv_logcap_rotate(path, 10), 0); /* at the cap: stays */
    assert_int_equal(write(fd, "abc", 3), 3);
    assert_int_equal(cv_logcap_rotate(path, 10), 1);
    assert_int_equal(size_of(path), 0);
    assert_int_equal(size_of(old), 13);
    assert_int_equal(write(fd, "xy", 2), 2);
    assert_int_equal(size_of(path), 2); /* no hole: O_APPEND writes at the new end */
    close(fd);
    unlink(path);
    unlink(old);
    rmdir(dir);
}

static void test_a_missing_file_is_nothing_to_do(void **state)
{
    (void)state;
    assert_int_equal(cv_logcap_rotate("/tmp/cv-logcap-no-such-file", 10), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_only_files_over_the_cap_are_due),
        cmocka_unit_test(test_a_full_file_rotates_and_the_writer_goes_on),
        cmocka_unit_test(test_a_missing_file_is_nothing_to_do),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
