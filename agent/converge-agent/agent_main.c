/*
 * converge-agent: the node agent (docs/services.md, "The node agent").
 * Reads its options and node description, connects to Redis, and runs one
 * node (agent_node) — or, with --simulate, many simulated ones on the same
 * loop and connection — until SIGTERM or SIGINT.
 */
#include "cv_node.h"

#include "cv_base.h"
#include "cv_io.h"
#include "cv_contract.h"
#include "cv_hot.h"

#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct agent {
    cv_agent_conf_t conf;
    cv_sandbox_t sb;
    char dir[PATH_MAX]; /* --dir made absolute: replicas run elsewhere */
    uv_loop_t *loop;
    cv_redis_t *redis;
    cv_redis_sub_t *sub;
    cv_anode_t **nodes;
    json_t *descs; /* the node descriptions, one per node */
    json_t *settings;
    size_t nnodes, stopped;
    char id[256];
    uv_signal_t sigterm, sigint;
    uv_timer_t connect_timer; /* until Redis could be reached once */
    bool stopping;
    cv_outage_t redis_outage;
} agent_t;

/* ------------------------------------------------------------------------ */
/* The node descriptions                                                    */
/* ------------------------------------------------------------------------ */

static json_t *read_manifest(const char *path, char *errstr, size_t errstr_size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(errstr, errstr_size, "%s: cannot read: %s", path, strerror(errno));
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    char buf[65536];
    size_t n;
    while (mem && (n = fread(buf, 1, sizeof(buf), f)) > 0)
        fwrite(buf, 1, n, mem);
    fclose(f);
    if (mem)
        fclose(mem);
    json_t *doc = text ? cv_yaml_load(text, len, path, errstr, errstr_size) : NULL;
    free(text);
    return doc;
}

/* Fills a->descs and a->settings from the options or the cluster file. */
static int describe(agent_t *a, char *errstr, size_t errstr_size)
{
    const cv_agent_conf_t *c = &a->conf;
    json_t *manifest = NULL;
    a->descs = json_array();
    if (c->cluster && !(manifest = read_manifest(c->cluster, errstr, errstr_size)))
        return 2;
    int rc = 0;
    if (c->simulate && manifest) {
        json_t *names = cv_desc_nodes(manifest);
        for (size_t i = 0; !rc && i < json_array_size(names) && (int)i < c->simulate; i++) {
            json_t *desc, *settings;
            rc = cv_desc_from_manifest(manifest, c->cluster,
                                       json_string_value(json_array_get(names, i)), &desc,
                                       &settings, errstr, errstr_size);
            if (!rc) {
                json_array_append_new(a->descs, desc);
                json_decref(a->settings);
                a->settings = settings;
            }
        }
        json_decref(names);
    } else if (c->simulate) {
        for (int i = 0; !rc && i < c->simulate; i++) {
            char name[128], fd[64], ud[64];
            snprintf(name, sizeof(name), "%s%d", c->nodes_prefix, i);
            snprintf(fd, sizeof(fd), "fd:/fd%d", i % 3);
            snprintf(ud, sizeof(ud), "ud%d", (i / 3) % 3);
            cv_desc_opts_t o = {name, c->type, fd, ud, c->props, c->nprops, c->caps, c->ncaps};
            json_t *desc;
            rc = cv_desc_from_opts(&o, NULL, &desc, errstr, errstr_size);
            if (!rc)
                json_array_append_new(a->descs, desc);
        }
    } else if (manifest) {
        json_t *desc;
        rc = cv_desc_from_manifest(manifest, c->cluster, c->node, &desc, &a->settings, errstr,
                                   errstr_size);
        if (!rc)
            json_array_append_new(a->descs, desc);
    } else {
        cv_desc_opts_t o = {c->name,  c->type,   c->fault_domain, c->upgrade_domain,
                            c->props, c->nprops, c->caps,         c->ncaps};
        json_t *desc;
        rc = cv_desc_from_opts(&o, NULL, &desc, errstr, errstr_size);
        if (!rc)
            json_array_append_new(a->descs, desc);
    }
    json_decref(manifest);
    return rc ? 2 : 0;
}

/* ------------------------------------------------------------------------ */
/* Running                                                                  */
/* ------------------------------------------------------------------------ */

static void on_notify(void *ud, const char *channel, const char *message)
{
    agent_t *a = ud;
    (void)message;
    for (size_t i = 0; i < a->nnodes; i++)
        if (!channel || strcmp(channel, cv_anode_channel(a->nodes[i])) == 0)
            cv_anode_resync(a->nodes[i]);
}

/* One log line when an outage starts and one when it ends, not one per attempt. */
static void on_redis_state(void *ud, bool up, const char *why)
{
    agent_t *a = ud;
    double took;
    if (!up && cv_outage_down(&a->redis_outage, cv_now(), why))
        cv_warn("Redis at %s:%d unreachable: %s", a->conf.opts.redis_host, a->conf.opts.redis_port,
                why);
    else if (up && cv_outage_up(&a->redis_outage, cv_now(), &took))
        cv_info("Redis at %s:%d reachable again after %.1f s", a->conf.opts.redis_host,
                a->conf.opts.redis_port, took);
}

/* The first connection: until then the nodes run their replicas (and their
 * fence clocks) without Redis. A stopped agent would leave its stateful
 * replicas running unfenced. */
static void on_connect_timer(uv_timer_t *t)
{
    agent_t *a = t->data;
    char err[512];
    if (cv_redis_open(&a->redis, a->loop, &a->conf.opts, err, sizeof(err)) != 0) {
        on_redis_state(a, false, err);
        return;
    }
    uv_timer_stop(t);
    cv_redis_on_state(a->redis, on_redis_state, a);
    on_redis_state(a, true, "");
    for (size_t i = 0; i < a->nnodes; i++)
        cv_anode_set_redis(a->nodes[i], a->redis);
}

static void on_node_stopped(void *ud)
{
    agent_t *a = ud;
    if (++a->stopped < a->nnodes)
        return;
    uv_close((uv_handle_t *)&a->connect_timer, NULL);
    cv_redis_sub_close(a->sub);
    a->sub = NULL;
    if (a->redis)
        cv_redis_close(a->redis);
    a->redis = NULL;
    cv_metrics_stop();
    for (size_t i = 0; i < a->nnodes; i++)
        cv_anode_free(a->nodes[i]);
    a->nnodes = 0;
    uv_close((uv_handle_t *)&a->sigterm, NULL);
    uv_close((uv_handle_t *)&a->sigint, NULL);
}

static void on_signal(uv_signal_t *s, int signum)
{
    agent_t *a = s->data;
    if (a->stopping)
        return;
    a->stopping = true;
    cv_info("signal %d: stopping; replicas %s", signum,
            a->conf.stop_on_exit ? "are stopped first" : "keep running");
    size_t n = a->nnodes;
    for (size_t i = 0; i < n; i++)
        cv_anode_shutdown(a->nodes[i], a->conf.stop_on_exit, on_node_stopped, a);
}

static int run(agent_t *a)
{
    char err[512];
    a->loop = uv_default_loop();
    /* converge_worker_info's id: the node's name (simulated: "sim") */
    const char *node =
        a->conf.simulate ? "sim"
                         : json_string_value(json_object_get(json_array_get(a->descs, 0), "name"));
    if (cv_metrics_serve(a->loop, a->conf.metrics_addr, CV_METRICS_AGENT, node ? node : a->id,
                         "agent", err, sizeof(err))) {
        fprintf(stderr, "converge-agent: %s\n", err);
        return 2;
    }
    cv_outage_init(&a->redis_outage, "redis");
    uv_timer_init(a->loop, &a->connect_timer);
    a->connect_timer.data = a;
    int rc = cv_redis_open(&a->redis, a->loop, &a->conf.opts, err, sizeof(err));
    if (rc == CV_EAUTH) {
        /* Configuration, not an outage: no retry will make the password right. */
        cv_error("%s", err);
        return 3;
    }
    if (rc != 0) {
        on_redis_state(a, false, err);
        a->redis = NULL;
        uv_timer_start(&a->connect_timer, on_connect_timer, 1000, 1000);
    } else
        cv_redis_on_state(a->redis, on_redis_state, a);
    a->nnodes = json_array_size(a->descs);
    a->nodes = calloc(a->nnodes, sizeof(*a->nodes));
    const char **channels = calloc(a->nnodes + 1, sizeof(char *));
    if (!a->nodes || !channels)
        return 3;
    for (size_t i = 0; i < a->nnodes; i++) {
        const json_t *desc = json_array_get(a->descs, i);
        cv_anode_conf_t nc = {.name = json_string_value(json_object_get(desc, "name")),
                              .desc = desc,
                              .settings = i == 0 ? a->settings : NULL,
                              .dir = a->conf.dir,
                              .address = a->conf.address,
                              .port_lo = a->conf.port_lo,
                              .port_hi = a->conf.port_hi,
                              .heartbeat_ttl_ms = a->conf.heartbeat_ttl_ms,
                              .fence_ms = a->conf.fence_ms,
                              .reset_s = a->conf.reset_s,
                              .log_cap = (size_t)a->conf.log_cap,
                              .simulate = a->conf.simulate > 0,
                              .agent_id = a->id,
                              .sb = &a->sb};
        a->nodes[i] = cv_anode_new(a->loop, a->redis, &nc);
        if (!a->nodes[i])
            return 3;
        channels[i] = cv_anode_channel(a->nodes[i]);
    }
    if (cv_redis_sub_open(&a->sub, a->loop, &a->conf.opts, channels, a->nnodes, on_notify, a)) {
        free(channels);
        return 3;
    }
    free(channels);
    for (size_t i = 0; i < a->nnodes; i++)
        cv_anode_start(a->nodes[i]);
    uv_signal_init(a->loop, &a->sigterm);
    uv_signal_init(a->loop, &a->sigint);
    a->sigterm.data = a->sigint.data = a;
    uv_signal_start(&a->sigterm, on_signal, SIGTERM);
    uv_signal_start(&a->sigint, on_signal, SIGINT);
    if (a->conf.simulate)
        cv_info("simulating %zu nodes: redis %s", a->nnodes, a->conf.opts.redis_url);
    else
        cv_info("node %s started: redis %s, dir %s, address %s, ports %d-%d",
                a->conf.node ? a->conf.node : a->conf.name, a->conf.opts.redis_url, a->conf.dir,
                a->conf.address, a->conf.port_lo, a->conf.port_hi);
    uv_run(a->loop, UV_RUN_DEFAULT);
    uv_loop_close(a->loop);
    free(a->nodes);
    cv_info("stopped");
    return 0;
}

int main(int argc, char **argv)
{
    static agent_t a;
    char err[1024];
    if (argc == 4 && strcmp(argv[1], "--fence-guard") == 0)
        return cv_guard_main(argv[2], atoi(argv[3]));
    if (argc > 1 && strcmp(argv[1], "--sandbox-exec") == 0)
        return cv_sandbox_main(argc, argv);
    if (cv_agent_conf_parse(&a.conf, argc, argv, err, sizeof(err)) != 0) {
        fprintf(stderr, "converge-agent: %s\n", err);
        return 2;
    }
    if (a.conf.help) {
        cv_agent_usage(stdout);
        return 0;
    }
    if (describe(&a, err, sizeof(err)) != 0) {
        fprintf(stderr, "converge-agent: %s\n", err);
        return 2;
    }
    if (cv_keys_set_prefix(a.conf.opts.prefix) != 0) {
        fprintf(stderr, "converge-agent: --prefix too long\n");
        return 2;
    }
    /* What the agent writes is its own: state files, logs, directories. */
    umask(077);
    if (a.conf.dir && cv_mkdirs(a.conf.dir) != 0) {
        fprintf(stderr, "converge-agent: --dir %s: cannot create it\n", a.conf.dir);
        return 2;
    }
    if (a.conf.dir && realpath(a.conf.dir, a.dir))
        a.conf.dir = a.dir;
    char host[64] = "host";
    gethostname(host, sizeof(host) - 1);
    snprintf(a.id, sizeof(a.id), "%s:%d:%.3f", host, (int)getpid(), cv_now());
    const char *who = a.conf.simulate
                          ? "agent-sim"
                          : json_string_value(json_object_get(json_array_get(a.descs, 0), "name"));
    char tag[160];
    snprintf(tag, sizeof(tag), "agent-%s", who);
    cv_log_start("agent", a.conf.simulate ? who : tag, &a.conf.log);
    cv_opts_warn_unauthenticated(&a.conf.opts, false);
    signal(SIGPIPE, SIG_IGN);
    srand((unsigned)getpid());
    a.sb.policy = a.conf.policy;
    a.sb.pids_default = a.conf.pids_max;
    if (!a.conf.simulate && cv_sandbox_init(&a.sb, a.conf.dir, who, a.conf.replica_user,
                                            a.conf.rlimits_only, err, sizeof(err)) != 0) {
        cv_error("%s", err);
        return 2;
    }
    int rc = run(&a);
    if (!a.conf.simulate)
        cv_cgroup_leave(a.sb.iso, a.sb.key);
    json_decref(a.descs);
    json_decref(a.settings);
    cv_opts_free(&a.conf.opts);
    return rc;
}
