/*
 * convergectl node disable|enable|drain NAME: the operator's word on a
 * node, the `admin` field of {cluster}:node:<node> (docs/services.md). The
 * placement engine places nothing new on a node that is not enabled; the
 * cluster loop moves the replicas off a draining one. This command only
 * records the decision: it moves nothing itself.
 */
#include "cli_commands.h"

#include "cv_contract.h"

#include <stdio.h>
#include <string.h>

const char cli_node_usage[] =
    "usage: convergectl node disable|enable|drain NAME\n"
    "\n"
    "Sets the administrative state of the node NAME:\n"
    "  disable  the node takes no new replicas; those it runs stay\n"
    "  drain    the node takes no new replicas and the cluster loop of the\n"
    "           observers moves the ones it runs to other nodes\n"
    "  enable   the node takes replicas again\n"
    "The state is kept in the node's record ({cluster}:node:NAME, field admin)\n"
    "and survives a restart of its agent. 'convergectl nodes' shows it.\n"
    "\n"
    "  -h, --help  show this help\n"
    "\n"
    "Exit status: 0 done; 1 no node NAME is registered; 2 usage error;\n"
    "3 cannot reach Redis.\n";

static const cli_opt_t node_opts[] = {CLI_HELP_OPT, CLI_OPTS_END};

typedef struct node_args {
    const char *words[2]; /* the action, the node */
} node_args_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    node_args_t *out = ctx;
    if (id == CLI_ARG_WORD)
        return cli_take_word(a, out->words, 2);
    return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
}

/* The admin value of an action, or NULL. */
static const char *admin_of(const char *action)
{
    static const char *const map[][2] = {
        {"disable", "disabled"}, {"enable", "enabled"}, {"drain", "draining"}};
    for (size_t i = 0; i < 3; i++)
        if (strcmp(action, map[i][0]) == 0)
            return map[i][1];
    return NULL;
}

static int set_admin(cli_t *cli, const char *node, const char *admin)
{
    char nodes_key[CV_KEY_MAX], node_key[CV_KEY_MAX];
    cv_key(nodes_key, sizeof(nodes_key), CV_KEY_NODES, NULL, 0, NULL);
    cv_key(node_key, sizeof(node_key), CV_KEY_NODE, NULL, 0, node);
    const char *hexists[] = {"HEXISTS", nodes_key, node};
    redisReply *r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_INTEGER), 3, hexists, NULL);
    if (!r)
        return CLI_SERVICE;
    bool known = r->integer == 1;
    freeReplyObject(r);
    if (!known)
        return cli_fail(CLI_FAILED,
                        "node %s not found: no converge-agent registered it (see "
                        "'convergectl nodes')",
                        node);
    const char *hset[] = {"HSET", node_key, "admin", admin};
    r = cli_redis_argv(cli, CLI_R(REDIS_REPLY_INTEGER), 4, hset, NULL);
    if (!r)
        return CLI_SERVICE;
    freeReplyObject(r);
    printf("node %s: %s\n", node, admin);
    return CLI_OK;
}

int cli_cmd_node(cli_t *cli, int argc, char **argv)
{
    node_args_t p = {{NULL, NULL}};
    int rc = cli_parse_args(argc, argv, "node", node_opts, apply_opt, &p);
    if (rc == CLI_HELP) {
        fputs(cli_node_usage, stdout);
        return CLI_OK;
    }
    if (rc != CLI_OK)
        return rc;
    if (!p.words[0] || !p.words[1])
        return cli_usage_error("node", "expected an action and a node: disable|enable|drain NAME");
    const char *admin = admin_of(p.words[0]);
    if (!admin)
        return cli_usage_error("node", "unknown action '%s' (expected disable, enable or drain)",
                               p.words[0]);
    rc = cli_redis_connect(cli);
    return rc == CLI_OK ? set_admin(cli, p.words[1], admin) : rc;
}
