#include "agent_conf.h"

#include "agent_logcap.h"
#include "agent_ports.h"

#include "cv_base.h"
#include "cv_io.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

void cv_agent_usage(FILE *out)
{
    fputs(
        "usage: converge-agent --dir DIR (--cluster FILE --node NAME | --name NAME [node "
        "options])\n"
        "                      [--redis URL] [--prefix P] [--address IP] [--ports LO-HI] "
        "[options]\n"
        "       converge-agent --simulate N [--cluster FILE | --nodes-prefix P] [options]\n"
        "\n"
        "Runs the replicas assigned to one cluster node (docs/services.md): registers the\n"
        "node in Redis, heartbeats, starts, watches, restarts and stops the replicas' processes,\n"
        "and reports them. Replicas keep running when the agent stops or dies; a restarted\n"
        "agent re-adopts them from DIR/replicas.\n"
        "\n"
        "The node:\n"
        "  --cluster FILE         a cluster manifest (JSON or YAML, as `convergectl place`\n"
        "                         reads); its settings (all but `nodes`) go to {cluster}:settings\n"
        "  --node NAME            the manifest's node this agent is\n"
        "  --name NAME            or the node from options: its name,\n"
        "  --type TYPE            node type, --fault-domain fd:/a/b, --upgrade-domain UD,\n"
        "  --property K=V         placement properties (repeatable; true/false and integers "
        "typed)\n"
        "  --capacity METRIC=N    capacities (repeatable)\n"
        "Where and how:\n"
        "  --redis URL            Redis (default $CONVERGE_REDIS or redis://127.0.0.1:6379/0;\n"
        "                         password: first line of $CONVERGE_REDIS_PASSWORD_FILE; a\n"
        "                         cluster's announced addresses: $CONVERGE_REDIS_ADDRESS_MAP)\n"
        "  --prefix P             key prefix (default $CONVERGE_PREFIX or cv:)\n"
        "  --dir DIR              the node's files: replicas/ (state), logs/, work/, volumes/\n"
        "  --address IP           the address replicas listen on (default 127.0.0.1)\n"
        "  --ports LO-HI          host ports for replicas (default 31000-31999)\n"
        "  --heartbeat-ttl MS     heartbeat TTL, refreshed every TTL/4 (default 3000)\n"
        "  --fence-ms MS          Redis unreachable this long stops stateful replicas (default "
        "5000);\n"
        "                         so does the fence guard (converge-agent --fence-guard DIR MS,\n"
        "                         started by the agent while it runs stateful replicas) when\n"
        "                         the agent itself is gone that long\n"
        "  --restart-reset-s S    healthy seconds that reset a restart counter (default 1800)\n"
        "  --log-cap BYTES        size of a replica's stdout/stderr file before it rotates to .1\n"
        "                         (default 1048576)\n"
        "  --stop-replicas-on-exit  on SIGTERM/SIGINT stop the replicas first (default: leave\n"
        "                         them running)\n"
        "  --simulate N           N simulated nodes in this process (no processes: replicas are\n"
        "                         healthy after a short simulated start); with --cluster, the\n"
        "                         file's first N nodes\n"
        "  --nodes-prefix P       simulated node names P0..P(N-1) over 3 FDs x 3 UDs (default "
        "sim-)\n"
        "  --log-format F         text (default) or json: one JSON object a line, keys time,\n"
        "                         level, process, id, msg ($CONVERGE_LOG_FORMAT)\n"
        "  --log-level L          debug, info (default), warn or error: the least severe\n"
        "                         level logged ($CONVERGE_LOG_LEVEL)\n"
        "  --metrics-addr A       serve Prometheus metrics on http://A/metrics: HOST:PORT\n"
        "                         (port 0: a free one, written to the node record), or none\n"
        "                         (default $CONVERGE_METRICS_ADDR or 127.0.0.1:0)\n"
        "What replicas may do (docs/security.md \"Replicas: what a submitter can do on a node\"):\n"
        "  --replica-user NAME    the unprivileged user replicas run as when the agent is root\n"
        "                         (default converge-replica, else nobody); a non-root agent runs\n"
        "                         them as itself\n"
        "  --allow PERM[,PERM]    permissions a service needs to use privilege (repeatable;\n"
        "                         default none): root (property user: root or 0), user (any\n"
        "                         other user), low-ports (fixed host ports below 1024), workdir\n"
        "                         (a workdir outside the replica's own directories), env\n"
        "                         (LD_* variables such as LD_PRELOAD), all; a refused replica\n"
        "                         is failed with the rule as its reason\n"
        "  --allow-exec PATH      only these programs may run (repeatable; absolute; a PATH\n"
        "                         ending in / allows what is below it; default any)\n"
        "  --isolation MODE       auto (default: the cgroup v2 or v1 hierarchy when the agent\n"
        "                         is root, else rlimits) or rlimits\n"
        "  --pids-max N           processes per task unless its resources.pids says (default\n"
        "                         1024; 0: no limit)\n"
        "  -v, --verbose          the same as --log-level debug\n"
        "  -h, --help             this text\n"
        "Exit status: 0 stopped by a signal, 2 bad options or node description. Redis\n"
        "unreachable at start is waited for (replicas keep running, the fence applies).\n",
        out);
}

enum {
    O_REDIS = 256,
    O_PREFIX,
    O_DIR,
    O_CLUSTER,
    O_NODE,
    O_NAME,
    O_TYPE,
    O_FD,
    O_UD,
    O_PROPERTY,
    O_CAPACITY,
    O_ADDRESS,
    O_PORTS,
    O_TTL,
    O_FENCE,
    O_RESET,
    O_LOGCAP,
    O_STOP,
    O_SIMULATE,
    O_NODES_PREFIX,
    O_LOG_FORMAT,
    O_LOG_LEVEL,
    O_METRICS_ADDR,
    O_ALLOW,
    O_ALLOW_EXEC,
    O_REPLICA_USER,
    O_ISOLATION,
    O_PIDS_MAX
};

static const struct option options[] = {{"redis", required_argument, NULL, O_REDIS},
                                        {"prefix", required_argument, NULL, O_PREFIX},
                                        {"dir", required_argument, NULL, O_DIR},
                                        {"cluster", required_argument, NULL, O_CLUSTER},
                                        {"node", required_argument, NULL, O_NODE},
                                        {"name", required_argument, NULL, O_NAME},
                                        {"type", required_argument, NULL, O_TYPE},
                                        {"fault-domain", required_argument, NULL, O_FD},
                                        {"upgrade-domain", required_argument, NULL, O_UD},
                                        {"property", required_argument, NULL, O_PROPERTY},
                                        {"capacity", required_argument, NULL, O_CAPACITY},
                                        {"address", required_argument, NULL, O_ADDRESS},
                                        {"ports", required_argument, NULL, O_PORTS},
                                        {"heartbeat-ttl", required_argument, NULL, O_TTL},
                                        {"fence-ms", required_argument, NULL, O_FENCE},
                                        {"restart-reset-s", required_argument, NULL, O_RESET},
                                        {"log-cap", required_argument, NULL, O_LOGCAP},
                                        {"stop-replicas-on-exit", no_argument, NULL, O_STOP},
                                        {"simulate", required_argument, NULL, O_SIMULATE},
                                        {"nodes-prefix", required_argument, NULL, O_NODES_PREFIX},
                                        {"verbose", no_argument, NULL, 'v'},
                                        {"log-format", required_argument, NULL, O_LOG_FORMAT},
                                        {"log-level", required_argument, NULL, O_LOG_LEVEL},
                                        {"metrics-addr", required_argument, NULL, O_METRICS_ADDR},
                                        {"allow", required_argument, NULL, O_ALLOW},
                                        {"allow-exec", required_argument, NULL, O_ALLOW_EXEC},
                                        {"replica-user", required_argument, NULL, O_REPLICA_USER},
                                        {"isolation", required_argument, NULL, O_ISOLATION},
                                        {"pids-max", required_argument, NULL, O_PIDS_MAX},
                                        {"help", no_argument, NULL, 'h'},
                                        {NULL, 0, NULL, 0}};

static int number(const char *opt, const char *text, double min, double max, double *out,
                  char *errstr, size_t errstr_size)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || *end || v < min || v > max)
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "--%s '%s': expected a number from %g to %g", opt, text, min, max);
    *out = v;
    return 0;
}

static int add_kv(const char **list, size_t *n, const char *opt, const char *v, char *errstr,
                  size_t errstr_size)
{
    if (*n == CV_AGENT_MAX_KV)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "--%s: more than %d", opt,
                         CV_AGENT_MAX_KV);
    list[(*n)++] = v;
    return 0;
}

static int apply(cv_agent_conf_t *c, int opt, const char *arg, char *errstr, size_t errstr_size)
{
    double v = 0;
    int rc = 0;
    switch (opt) {
    case O_REDIS:
        return cv_opts_set_redis(&c->opts, arg, errstr, errstr_size);
    case O_PREFIX:
        if (strlen(arg) >= sizeof(c->opts.prefix))
            return cv_seterr(errstr, errstr_size, CV_EINVAL, "--prefix: too long");
        strcpy(c->opts.prefix, arg);
        return 0;
    case O_DIR:
        c->dir = arg;
        return 0;
    case O_CLUSTER:
        c->cluster = arg;
        return 0;
    case O_NODE:
        c->node = arg;
        return 0;
    case O_NAME:
        c->name = arg;
        return 0;
    case O_TYPE:
        c->type = arg;
        return 0;
    case O_FD:
        c->fault_domain = arg;
        return 0;
    case O_UD:
        c->upgrade_domain = arg;
        return 0;
    case O_PROPERTY:
        return add_kv(c->props, &c->nprops, "property", arg, errstr, errstr_size);
    case O_CAPACITY:
        return add_kv(c->caps, &c->ncaps, "capacity", arg, errstr, errstr_size);
    case O_ADDRESS:
        c->address = arg;
        return 0;
    case O_PORTS:
        if (cv_ports_parse_range(arg, &c->port_lo, &c->port_hi) != 0)
            return cv_seterr(errstr, errstr_size, CV_EINVAL,
                             "--ports '%s': expected LO-HI, 1 <= LO <= HI <= 65535", arg);
        return 0;
    case O_TTL:
        rc = number("heartbeat-ttl", arg, 100, 3600000, &v, errstr, errstr_size);
        c->heartbeat_ttl_ms = (int)v;
        return rc;
    case O_FENCE:
        rc = number("fence-ms", arg, 100, 3600000, &v, errstr, errstr_size);
        c->fence_ms = (int)v;
        return rc;
    case O_RESET:
        rc = number("restart-reset-s", arg, 0, 1e9, &c->reset_s, errstr, errstr_size);
        return rc;
    case O_LOGCAP:
        rc = number("log-cap", arg, 0, 1e12, &v, errstr, errstr_size);
        c->log_cap = (long)v;
        return rc;
    case O_STOP:
        c->stop_on_exit = true;
        return 0;
    case O_SIMULATE:
        rc = number("simulate", arg, 1, 100000, &v, errstr, errstr_size);
        c->simulate = (int)v;
        return rc;
    case O_NODES_PREFIX:
        c->nodes_prefix = arg;
        return 0;
    case 'v':
        c->log.level = CV_LOG_DEBUG;
        return 0;
    case O_LOG_FORMAT:
        return cv_log_opts_set(&c->log, "log-format", arg, errstr, errstr_size);
    case O_LOG_LEVEL:
        return cv_log_opts_set(&c->log, "log-level", arg, errstr, errstr_size);
    case O_METRICS_ADDR: /* checked when served (agent_main.c) */
        c->metrics_addr = arg;
        return 0;
    case O_ALLOW:
        return cv_policy_allow(&c->policy, arg, errstr, errstr_size);
    case O_ALLOW_EXEC:
        return cv_policy_allow_exec(&c->policy, arg, errstr, errstr_size);
    case O_REPLICA_USER:
        c->replica_user = arg;
        return 0;
    case O_ISOLATION:
        if (strcmp(arg, "auto") != 0 && strcmp(arg, "rlimits") != 0)
            return cv_seterr(errstr, errstr_size, CV_EINVAL,
                             "--isolation '%s': expected auto or rlimits", arg);
        c->rlimits_only = strcmp(arg, "rlimits") == 0;
        return 0;
    case O_PIDS_MAX:
        rc = number("pids-max", arg, 0, 4194304, &v, errstr, errstr_size);
        c->pids_max = (long)v;
        return rc;
    case 'h':
        c->help = true;
        return 0;
    default:
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "unknown option (see --help)");
    }
}

static int check(const cv_agent_conf_t *c, char *errstr, size_t errstr_size)
{
    if (c->help)
        return 0;
    if (c->simulate)
        return 0;
    if (!c->dir)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "--dir DIR is required");
    if (c->cluster && !c->node)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "--cluster FILE needs --node NAME");
    if (!c->cluster && c->node)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "--node NAME needs --cluster FILE");
    if (c->cluster && c->name)
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "--name describes a node from options; with --cluster use --node");
    if (!c->cluster && !c->name)
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "the node description: name: required (--name, or --cluster and --node)");
    return 0;
}

int cv_agent_conf_parse(cv_agent_conf_t *c, int argc, char **argv, char *errstr, size_t errstr_size)
{
    memset(c, 0, sizeof(*c));
    int rc = cv_opts_from_env(&c->opts, errstr, errstr_size);
    if (rc == 0)
        rc = cv_log_opts_from_env(&c->log, errstr, errstr_size);
    if (rc)
        return rc;
    c->address = "127.0.0.1";
    c->port_lo = 31000;
    c->port_hi = 31999;
    c->heartbeat_ttl_ms = 3000;
    c->fence_ms = 5000;
    c->reset_s = 1800;
    c->log_cap = CV_LOG_CAP_DEFAULT;
    c->nodes_prefix = "sim-";
    c->pids_max = 1024;
    c->metrics_addr = getenv(CV_METRICS_ADDR_ENV) && *getenv(CV_METRICS_ADDR_ENV)
                          ? getenv(CV_METRICS_ADDR_ENV)
                          : CV_METRICS_ADDR_DEFAULT;
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, "vh", options, NULL)) != -1) {
        if (opt == '?')
            return cv_seterr(errstr, errstr_size, CV_EINVAL, "unknown option or missing value: %s",
                             argv[optind - 1]);
        if ((rc = apply(c, opt, optarg, errstr, errstr_size)) != 0)
            return rc;
    }
    if (optind < argc)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "unexpected argument '%s'", argv[optind]);
    return check(c, errstr, errstr_size);
}
