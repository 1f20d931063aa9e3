/*
 * Specification of what a node agent lets a replica ask for
 * (agent/node/agent_policy.h, docs/security.md "Replicas: what a submitter can
 * do on a node"): each privileged property refused with the rule and the
 * option that would permit it, accepted once permitted; and the cgroup
 * values a task's resources become.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent_policy.h"
#include "agent_sandbox.h"
#include "cv_base.h"
#include "cv_hot.h"
#include "test_util.h"

#include <string.h>

/* The policy's verdict on a replica spec with `extra` members (JSON text
 * starting with ", "), or with `task_extra` members in its one task. */
static int check(const cv_policy_t *p, const char *extra, const char *task_extra, char *errstr,
                 size_t errstr_size)
{
    char text[2048], err[256];
    snprintf(text, sizeof(text),
             "{\"rid\": \"s/0/1\", \"name\": \"web-0.demo\", \"tasks\": [{\"name\": \"main\", "
             "\"command\": [\"sleep\", \"1\"]%s}]%s}",
             task_extra, extra);
    cv_rspec_t s;
    json_t *j = tu_json(text);
    assert_int_equal(cv_rspec_parse(j, &s, err, sizeof(err)), 0);
    json_decref(j);
    errstr[0] = '\0';
    int rc = cv_policy_check_spec(p, &s, errstr, errstr_size);
    cv_rspec_free(&s);
    return rc;
}

static int check_spec(const cv_policy_t *p, const char *extra, char *errstr, size_t errstr_size)
{
    return check(p, extra, "", errstr, errstr_size);
}

static void test_a_fixed_port_below_1024_needs_low_ports(void **state)
{
    (void)state;
    cv_policy_t p = {0};
    char why[512], err[128];
    assert_int_equal(
        check_spec(&p, ", \"ports\": [{\"name\": \"ssh\", \"port\": 22}]", why, sizeof(why)),
        CV_EVALIDATE);
    assert_string_equal(why,
                        "port ssh: host port 22 is below 1024: the agent needs --allow low-ports");
    /* An allocated port (0) and one above 1024 need nothing. */
    assert_int_equal(check_spec(&p,
                                ", \"ports\": [{\"name\": \"a\", \"port\": 0}, {\"name\": "
                                "\"b\", \"port\": 8080}]",
                                why, sizeof(why)),
                     0);
    assert_int_equal(cv_policy_allow(&p, "low-ports", err, sizeof(err)), 0);
    assert_int_equal(
        check_spec(&p, ", \"ports\": [{\"name\": \"ssh\", \"port\": 22}]", why, sizeof(why)), 0);
}

static void test_ld_variables_need_env_in_the_replica_and_in_a_task(void **state)
{
    (void)state;
    cv_policy_t p = {0};
    char why[512], err[128];
    assert_int_equal(
        check_spec(&p, ", \"env\": {\"LD_PRELOAD\": \"/tmp/evil.so\"}", why, sizeof(why)),
        CV_EVALIDATE);
    assert_string_equal(why, "env LD_PRELOAD: a variable that changes how programs are loaded: "
                             "the agent needs --allow env");
    assert_int_equal(check(&p, "", ", \"env\": {\"LD_LIBRARY_PATH\": \"/tmp\"}", why, sizeof(why)),
                     CV_EVALIDATE);
    assert_non_null(strstr(why, "task main: env LD_LIBRARY_PATH"));
    assert_int_equal(check_spec(&p, ", \"env\": {\"GREETING\": \"hi\"}", why, sizeof(why)), 0);
    assert_int_equal(cv_policy_allow(&p, "env", err, sizeof(err)), 0);
    assert_int_equal(check_spec(&p, ", \"env\": {\"LD_PRELOAD\": \"/x.so\"}", why, sizeof(why)), 0);
}

static void test_root_needs_allow_root_and_another_user_allow_user(void **state)
{
    (void)state;
    cv_policy_t p = {0};
    char why[512], err[128];
    /* No user: the agent's replica user (uid 999 here). */
    assert_int_equal(cv_policy_check_user(&p, NULL, -1, 999, true, why, sizeof(why)), 0);
    assert_int_equal(cv_policy_check_user(&p, "converge-replica", 999, 999, true, why, sizeof(why)),
                     0);
    assert_int_equal(cv_policy_check_user(&p, "root", 0, 999, true, why, sizeof(why)),
                     CV_EVALIDATE);
    assert_string_equal(why, "user root: running a replica as root needs the agent's --allow root");
    assert_int_equal(cv_policy_check_user(&p, "0", 0, 999, true, why, sizeof(why)), CV_EVALIDATE);
    assert_int_equal(cv_policy_check_user(&p, "www-data", 33, 999, true, why, sizeof(why)),
                     CV_EVALIDATE);
    assert_non_null(strstr(why, "--allow user"));
    assert_int_equal(cv_policy_check_user(&p, "nosuch", -1, 999, true, why, sizeof(why)),
                     CV_EVALIDATE);
    assert_string_equal(why, "user nosuch: no such user on this node");
    /* user does not give root; root gives both. */
    assert_int_equal(cv_policy_allow(&p, "user", err, sizeof(err)), 0);
    assert_int_equal(cv_policy_check_user(&p, "www-data", 33, 999, true, why, sizeof(why)), 0);
    assert_int_equal(cv_policy_check_user(&p, "root", 0, 999, true, why, sizeof(why)),
                     CV_EVALIDATE);
    cv_policy_t q = {0};
    assert_int_equal(cv_policy_allow(&q, "root", err, sizeof(err)), 0);
    assert_int_equal(cv_policy_check_user(&q, "root", 0, 999, true, why, sizeof(why)), 0);
}

static void test_a_non_root_agent_cannot_switch_users_even_when_allowed(void **state)
{
    (void)state;
    cv_policy_t p = {0};
    char why[512], err[128];
    assert_int_equal(cv_policy_allow(&p, "all", err, sizeof(err)), 0);
    assert_int_equal(cv_policy_check_user(&p, "root", 0, 1000, false, why, sizeof(why)),
                     CV_EVALIDATE);
    assert_non_null(strstr(why, "the agent does not run as root"));
}

static void test_a_workdir_outside_the_replica_s_own_needs_allow_workdir(void **state)
{
    (void)state;
    cv_policy_t p = {0};
    char why[512], err[128];
    const char *roots[] = {"/var/cv/work/web-0.demo", "/var/cv/volumes/s/web-0/data"};
    assert_int_equal(
        cv_policy_check_workdir(&p, "main", "/var/cv/work/web-0.demo", roots, 2, why, sizeof(why)),
        0);
    assert_int_equal(cv_policy_check_workdir(&p, "main", "/var/cv/work/web-0.demo/sub", roots, 2,
                                             why, sizeof(why)),
                     0);
    assert_int_equal(cv_policy_check_workdir(&p, "main", "/var/cv/volumes/s/web-0/data", roots, 2,
                                             why, sizeof(why)),
                     0);
    assert_int_equal(cv_policy_check_workdir(&p, "main", "/", roots, 2, why, sizeof(why)),
                     CV_EVALIDATE);
    assert_string_equal(why, "task main: workdir / is outside the replica's own directories: the "
                             "agent needs --allow workdir");
    /* A sibling sharing the prefix is not inside, nor is the agent's tree. */
    assert_int_equal(
        cv_policy_check_workdir(&p, "main", "/var/cv/work/web-0.demo2", roots, 2, why, sizeof(why)),
        CV_EVALIDATE);
    assert_int_equal(
        cv_policy_check_workdir(&p, "main", "/var/cv/replicas", roots, 2, why, sizeof(why)),
        CV_EVALIDATE);
    /* '..' never passes, permitted or not. */
    assert_int_equal(cv_policy_check_workdir(&p, "main", "/var/cv/work/web-0.demo/../web-1.demo",
                                             roots, 2, why, sizeof(why)),
                     CV_EVALIDATE);
    assert_int_equal(cv_policy_allow(&p, "workdir", err, sizeof(err)), 0);
    assert_int_equal(cv_policy_check_workdir(&p, "main", "/", roots, 2, why, sizeof(why)), 0);
    assert_int_equal(cv_policy_check_workdir(&p, "main", "/a/../b", roots, 2, why, sizeof(why)),
                     CV_EVALIDATE);
}

static void test_the_exec_allow_list_takes_programs_and_directories(void **state)
{
    (void)state;
    cv_policy_t p = {0};
    char why[512], err[128];
    assert_int_equal(cv_policy_check_exec(&p, "main", "/bin/rm", why, sizeof(why)), 0);
    assert_int_equal(cv_policy_allow_exec(&p, "/usr/bin/python3.11", err, sizeof(err)), 0);
    assert_int_equal(cv_policy_allow_exec(&p, "/opt/app/", err, sizeof(err)), 0);
    assert_int_equal(cv_policy_check_exec(&p, "main", "/usr/bin/python3.11", why, sizeof(why)), 0);
    assert_int_equal(cv_policy_check_exec(&p, "main", "/opt/app/bin/server", why, sizeof(why)), 0);
    assert_int_equal(cv_policy_check_exec(&p, "main", "/bin/rm", why, sizeof(why)), CV_EVALIDATE);
    assert_string_equal(why, "task main: program /bin/rm is not on the agent's --allow-exec list");
    assert_int_equal(cv_policy_check_exec(&p, "main", "/opt/application", why, sizeof(why)),
                     CV_EVALIDATE);
    assert_int_equal(cv_policy_allow_exec(&p, "python3", err, sizeof(err)), CV_EINVAL);
}

static void test_permission_names_parse_and_print(void **state)
{
    (void)state;
    cv_policy_t p = {0};
    char err[256], names[128];
    cv_policy_names(p.allow, names, sizeof(names));
    assert_string_equal(names, "none");
    assert_int_equal(cv_policy_allow(&p, "root,low-ports", err, sizeof(err)), 0);
    cv_policy_names(p.allow, names, sizeof(names));
    assert_string_equal(names, "root,low-ports");
    assert_int_equal(cv_policy_allow(&p, "root,everything", err, sizeof(err)), CV_EINVAL);
    assert_string_equal(err, "--allow 'everything': expected root, user, low-ports, workdir, env "
                             "or all");
    assert_int_equal(cv_policy_allow(&p, "all", err, sizeof(err)), 0);
    cv_policy_names(p.allow, names, sizeof(names));
    assert_string_equal(names, "root,user,low-ports,workdir,env");
}

static void test_cgroup_values_come_from_the_task_s_resources(void **state)
{
    (void)state;
    cv_rtask_t t = {.memory_mb = 64, .cpu = 0.5, .pids = 0};
    cv_cgroup_limits_t l;
    cv_cgroup_limits_of(&t, 1024, &l);
    assert_int_equal(l.memory_bytes, 64LL * 1024 * 1024);
    assert_int_equal(l.cpu_period_us, 100000);
    assert_int_equal(l.cpu_quota_us, 50000);
    assert_int_equal(l.pids_max, 1024);
    cv_cgroup_file_t f[8];
    size_t n = cv_limits_files(&l, false, f, 8);
    assert_int_equal(n, 5);
    assert_string_equal(f[0].file, "memory.limit_in_bytes");
    assert_string_equal(f[0].value, "67108864");
    assert_string_equal(f[1].file, "memory.memsw.limit_in_bytes");
    assert_true(f[1].optional);
    assert_string_equal(f[2].controller, "cpu");
    assert_string_equal(f[2].file, "cpu.cfs_period_us");
    assert_string_equal(f[2].value, "100000");
    assert_string_equal(f[3].file, "cpu.cfs_quota_us");
    assert_string_equal(f[3].value, "50000");
    assert_string_equal(f[4].controller, "pids");
    assert_string_equal(f[4].value, "1024");
    n = cv_limits_files(&l, true, f, 8);
    assert_int_equal(n, 4);
    assert_string_equal(f[0].file, "memory.max");
    assert_string_equal(f[1].file, "memory.swap.max");
    assert_string_equal(f[2].file, "cpu.max");
    assert_string_equal(f[2].value, "50000 100000");
    assert_string_equal(f[3].file, "pids.max");
}

static void test_no_resources_mean_only_the_agent_s_pids_limit(void **state)
{
    (void)state;
    cv_rtask_t t = {.memory_mb = 0};
    cv_cgroup_limits_t l;
    cv_cgroup_limits_of(&t, 0, &l);
    cv_cgroup_file_t f[8];
    assert_int_equal(cv_limits_files(&l, false, f, 8), 0);
    cv_rtask_t tiny = {.cpu = 0.001, .pids = 10};
    cv_cgroup_limits_of(&tiny, 1024, &l);
    assert_int_equal(l.cpu_quota_us, 1000); /* the kernel's least */
    assert_int_equal(l.pids_max, 10);
    cv_rtask_t many = {.cpu = 2};
    cv_cgroup_limits_of(&many, 1024, &l);
    assert_int_equal(l.cpu_quota_us, 200000); /* two cores */
}

static void test_the_helper_argv_confines_then_runs_the_program(void **state)
{
    (void)state;
    cv_sandbox_t sb = {.uid = 999};
    snprintf(sb.dir, sizeof(sb.dir), "/var/cv");
    const char *argv[] = {"python3", "-m", "http.server", NULL};
    const char *cg[] = {"/sys/fs/cgroup/memory/converge/n-1/x.main"};
    const char *binds[] = {"/var/cv/work/web-0.demo"};
    cv_sandbox_task_t t = {.program = "/usr/bin/python3.11",
                           .argv = argv,
                           .uid = 999,
                           .gid = 994,
                           .cgroups = cg,
                           .ncgroups = 1,
                           .binds = binds,
                           .nbinds = 1,
                           .hide = true,
                           .nofile = 256};
    char **v = cv_sandbox_argv(&sb, &t);
    const char *want[] = {"/proc/self/exe",
                          "--sandbox-exec",
                          "exec=/usr/bin/python3.11",
                          "uid=999",
                          "gid=994",
                          "cgroup=/sys/fs/cgroup/memory/converge/n-1/x.main",
                          "hide=/var/cv",
                          "bind=/var/cv/work/web-0.demo",
                          "nofile=256",
                          "--",
                          "python3",
                          "-m",
                          "http.server",
                          NULL};
    for (size_t i = 0; want[i]; i++)
        assert_string_equal(v[i], want[i]);
    assert_null(v[13]);
    for (size_t i = 0; v[i]; i++)
        free(v[i]);
    free(v);
}

static void test_validate_warns_of_what_the_agents_refuse(void **state)
{
    (void)state;
    char lines[8][CV_SERVICE_WARNING_MAX];
    json_t *props = tu_json("{\"command\": [\"sleep\", \"1\"], \"user\": \"root\", \"ports\": "
                            "[{\"name\": \"ssh\", \"port\": 22}, \"http\", {\"name\": \"x\", "
                            "\"port\": 8080}], \"workdir\": \"/\", \"env\": {\"LD_PRELOAD\": "
                            "\"/x.so\", \"A\": \"b\"}, \"tasks\": [{\"env\": {\"LD_AUDIT\": "
                            "\"y\"}, \"workdir\": \"data\"}]}");
    assert_int_equal(cv_service_privileges(props, lines, 8), 5);
    assert_string_equal(lines[0], "user: root: runs only on nodes whose agent has --allow root");
    assert_string_equal(lines[1], "ports[0].port: host port 22 is below 1024: runs only on nodes "
                                  "whose agent has --allow low-ports");
    assert_non_null(strstr(lines[2], "env.LD_PRELOAD"));
    assert_non_null(strstr(lines[3], "workdir: an absolute path"));
    assert_non_null(strstr(lines[4], "tasks[0].env.LD_AUDIT"));
    json_decref(props);
    /* A well-behaved service: nothing to say; a function call is not known yet. */
    props = tu_json("{\"command\": [\"sleep\", \"1\"], \"user\": {\"get_param\": \"u\"}, "
                    "\"ports\": [\"http\"], \"workdir\": \"data\"}");
    assert_int_equal(cv_service_privileges(props, lines, 8), 0);
    json_decref(props);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_a_fixed_port_below_1024_needs_low_ports),
        cmocka_unit_test(test_ld_variables_need_env_in_the_replica_and_in_a_task),
        cmocka_unit_test(test_root_needs_allow_root_and_another_user_allow_user),
        cmocka_unit_test(test_a_non_root_agent_cannot_switch_users_even_when_allowed),
        cmocka_unit_test(test_a_workdir_outside_the_replica_s_own_needs_allow_workdir),
        cmocka_unit_test(test_the_exec_allow_list_takes_programs_and_directories),
        cmocka_unit_test(test_permission_names_parse_and_print),
        cmocka_unit_test(test_cgroup_values_come_from_the_task_s_resources),
        cmocka_unit_test(test_no_resources_mean_only_the_agent_s_pids_limit),
        cmocka_unit_test(test_the_helper_argv_confines_then_runs_the_program),
        cmocka_unit_test(test_validate_warns_of_what_the_agents_refuse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
