/*
 * convergectl place: a dry run of the placement engine. Reads a cluster
 * manifest, a service description and optionally the current layout (JSON or
 * YAML files), and prints where the service's replicas would go, or with
 * --check the health reports of the layout. Contacts no service: the
 * placement library is pure logic and this command never connects —
 * except with --explain, which reads the live model of a running service
 * from Redis and explains its placement with the same library
 * (cli_explain.h).
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_placement.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cli_place_usage[] =
    "usage: convergectl place --cluster C.json --service S.json [--layout L.json]\n"
    "                         [--action new|replace|upgrade|fix|defrag] [-o json]\n"
    "       convergectl place --check --cluster C.json --layout L.json [-o json]\n"
    "       convergectl place --explain STACK SERVICE [-o json]\n"
    "\n"
    "Decides where the replicas of a service would go, contacting no service.\n"
    "Files are JSON or YAML. The cluster is in Converge's format or Service\n"
    "Fabric's ClusterConfig.json; the layout lists the services already placed\n"
    "({\"services\": [{<service>, \"placements\": [{\"replica\", \"role\", \"node\"}]}]}),\n"
    "possibly with replicas of the service being placed, which are kept.\n"
    "\n"
    "Prints {\"service\", \"policy\", \"placements\", \"unplaced\" (each with its\n"
    "constraint elimination sequence), \"health\", \"warnings\", \"rejected\"}.\n"
    "With --check, prints {\"health\": [reports of every violation in the layout],\n"
    "\"warnings\": [the cluster manifest's warnings]}.\n"
    "\n"
    "With --explain, explains the live placement of the running Converge::Service\n"
    "resource SERVICE of the stack STACK from the cluster in Redis: where each\n"
    "replica runs, where the placement library would put it now with the other\n"
    "replicas kept (and, when it finds no node, the constraint elimination\n"
    "sequence), the replicas the engine left unplaced with their sequences, and\n"
    "the health reports of the live placement. Nodes count as the engine counts\n"
    "them: up while their heartbeat lives and they are enabled and not\n"
    "blocklisted for the service; their load is what other services' replicas\n"
    "assigned to them declare. JSON: {\"svc\", \"stack_name\", \"resource\",\n"
    "\"state\", \"gen\", \"placement\", \"unplaced\", \"rejected\", \"check\": the\n"
    "place result with every live replica kept, \"replicas\": [{\"index\",\n"
    "\"node\", \"role\", \"choice\", \"moves\", \"eliminationSequence\"}]}.\n"
    "\n"
    "  --cluster FILE    the cluster manifest\n"
    "  --service FILE    the service description to place\n"
    "  --layout FILE     the services already placed (their loads count)\n"
    "  --action A        why the replicas are placed: new (default; the node buffer\n"
    "                    is kept free), replace, upgrade, fix or defrag\n"
    "                    (availability actions, which may use the buffer)\n"
    "  --check           report the health of --layout instead of placing\n"
    "  --explain         explain the live placement of STACK's SERVICE (Redis)\n"
    "  -o, --output F    json (default) or text; both print the same indented JSON\n"
    "                    (with --explain: text, the default, reads as sentences)\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 every replica placed (soft-constraint violations are listed\n"
    "in \"health\"), or with --check a layout without health reports; 1 the\n"
    "service was rejected or a replica is unplaced, or with --check some report;\n"
    "2 usage error or bad input (the message names the file, the path in it and\n"
    "the problem). With --explain: 0 every replica placed; 1 a replica unplaced\n"
    "or the service rejected; 2 usage error, unknown stack or service; 3 cannot\n"
    "reach Redis.\n";

enum { OPT_CLUSTER = 200, OPT_SERVICE, OPT_LAYOUT, OPT_ACTION, OPT_CHECK, OPT_EXPLAIN };

static const cli_opt_t place_opts[] = {
    CLI_HELP_OPT,
    CLI_OUTPUT_OPT,
    {OPT_CLUSTER, "--cluster", NULL, true},
    {OPT_SERVICE, "--service", NULL, true},
    {OPT_LAYOUT, "--layout", NULL, true},
    {OPT_ACTION, "--action", NULL, true},
    {OPT_CHECK, "--check", NULL, false},
    {OPT_EXPLAIN, "--explain", NULL, false},
    CLI_OPTS_END,
};

typedef struct place_args {
    const char *cluster, *service, *layout, *action_name;
    cv_place_action_t action;
    bool check, json, explain, output_given;
    const char *words[2]; /* --explain STACK SERVICE */
} place_args_t;

/* ------------------------------------------------------------------------ */
/* Arguments                                                                */
/* ------------------------------------------------------------------------ */

static int parse_action(const cli_args_t *a, place_args_t *out)
{
    static const char *const names[] = {"new", "replace", "upgrade", "fix", "defrag"};
    for (int i = 0; i < 5; i++) {
        if (strcmp(a->arg, names[i]) == 0) {
            out->action = (cv_place_action_t)i;
            out->action_name = a->arg;
            return CLI_OK;
        }
    }
    return cli_usage_error(
        a->cmd, "--action: expected new, replace, upgrade, fix or defrag, not '%s'", a->arg);
}

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    place_args_t *out = ctx;
    switch (id) {
    case CLI_OPT_OUTPUT:
        out->output_given = true;
        return cli_parse_output(a, &out->json);
    case OPT_EXPLAIN:
        out->explain = true;
        return CLI_OK;
    case CLI_ARG_WORD:
        return cli_take_word(a, out->words, 2);
    case OPT_CLUSTER:
        out->cluster = a->arg;
        return CLI_OK;
    case OPT_SERVICE:
        out->service = a->arg;
        return CLI_OK;
    case OPT_LAYOUT:
        out->layout = a->arg;
        return CLI_OK;
    case OPT_ACTION:
        return parse_action(a, out);
    case OPT_CHECK:
        out->check = true;
        return CLI_OK;
    default:
        return cli_usage_error(a->cmd, "unexpected argument '%s'", a->arg);
    }
}

/* Which files go with which mode. */
static int check_args(const place_args_t *p)
{
    if (p->explain && (p->cluster || p->service || p->layout || p->check || p->action_name))
        return cli_usage_error("place", "--explain takes STACK SERVICE and no manifest options");
    if (p->explain && !p->words[1])
        return cli_usage_error("place", "--explain needs a stack and a service: STACK SERVICE");
    if (p->explain)
        return CLI_OK;
    if (p->words[0])
        return cli_usage_error("place", "unexpected argument '%s'", p->words[0]);
    if (!p->cluster)
        return cli_usage_error("place", "--cluster is required");
    if (p->check && !p->layout)
        return cli_usage_error("place", "--check needs --layout (the layout to check)");
    if (p->check && (p->service || p->action_name))
        return cli_usage_error("place", "--check takes no --service or --action");
    if (!p->check && !p->service)
        return cli_usage_error("place", "--service is required (or --check with --layout)");
    return CLI_OK;
}

static int parse_args(int argc, char **argv, place_args_t *out)
{
    int rc = cli_parse_args(argc, argv, "place", place_opts, apply_opt, out);
    return rc == CLI_OK ? check_args(out) : rc;
}

/* ------------------------------------------------------------------------ */
/* Inputs                                                                   */
/* ------------------------------------------------------------------------ */

/* The tree of a JSON or YAML file; NULL with the problem reported. */
static json_t *read_doc(const char *path)
{
    char err[1024];
    size_t len;
    char *text = cli_read_file(path, &len);
    if (!text)
        return NULL;
    json_t *doc = cv_yaml_load(text, len, path, err, sizeof(err));
    free(text);
    if (!doc)
        cli_fail(CLI_USAGE, "%s", err);
    return doc;
}

typedef struct place_inputs {
    cv_cluster_t *cluster;
    cv_service_t *service;
    cv_layout_t *layout;
} place_inputs_t;

static int load_inputs(const place_args_t *p, place_inputs_t *in)
{
    const char *paths[3] = {p->cluster, p->service, p->layout};
    json_t *docs[3] = {NULL, NULL, NULL};
    char err[1024];
    int rc = CLI_OK;
    for (int i = 0; rc == CLI_OK && i < 3; i++)
        if (paths[i] && (docs[i] = read_doc(paths[i])) == NULL)
            rc = CLI_USAGE;
    if (!rc && cv_cluster_load(docs[0], p->cluster, &in->cluster, err, sizeof(err)) != 0)
        rc = cli_fail(CLI_USAGE, "%s", err);
    if (!rc && docs[1] && cv_service_load(docs[1], p->service, &in->service, err, sizeof(err)))
        rc = cli_fail(CLI_USAGE, "%s", err);
    if (!rc && docs[2] &&
        cv_layout_load(docs[2], p->layout, in->cluster, &in->layout, err, sizeof(err)) != 0)
        rc = cli_fail(CLI_USAGE, "%s", err);
    for (int i = 0; i < 3; i++)
        json_decref(docs[i]);
    return rc;
}

static void free_inputs(place_inputs_t *in)
{
    cv_layout_free(in->layout);
    cv_service_free(in->service);
    cv_cluster_free(in->cluster);
}

/* ------------------------------------------------------------------------ */
/* Running                                                                  */
/* ------------------------------------------------------------------------ */

/* {"health": [..], "warnings": [the manifest's warnings]}. */
static json_t *check_doc(const place_inputs_t *in)
{
    json_t *warnings = json_array();
    for (size_t i = 0; warnings && i < in->cluster->warnings.n; i++)
        json_array_append_new(warnings, cli_json_str(in->cluster->warnings.v[i]));
    json_t *health = cv_place_check(in->cluster, in->layout);
    if (!warnings || !health) {
        json_decref(warnings);
        json_decref(health);
        return NULL;
    }
    return json_pack("{s:o, s:o}", "health", health, "warnings", warnings);
}

/* 1 when the result shows a service not fully placed or an unhealthy layout. */
static int result_code(const json_t *result, bool check)
{
    if (check)
        return json_array_size(json_object_get(result, "health")) ? CLI_FAILED : CLI_OK;
    const json_t *rejected = json_object_get(result, "rejected");
    if ((rejected && !json_is_null(rejected)) ||
        json_array_size(json_object_get(result, "unplaced")) > 0)
        return CLI_FAILED;
    return CLI_OK;
}

static int run(const place_args_t *p)
{
    place_inputs_t in = {NULL, NULL, NULL};
    int rc = load_inputs(p, &in);
    if (rc == CLI_OK) {
        json_t *result =
            p->check ? check_doc(&in) : cv_place(in.cluster, in.service, in.layout, p->action);
        if (result) {
            cli_print_json(result);
            rc = result_code(result, p->check);
        } else {
            rc = cli_fail(CLI_FAILED, "place: out of memory");
        }
        json_decref(result);
    }
    free_inputs(&in);
    return rc;
}

/* ------------------------------------------------------------------------ */
/* --explain                                                                */
/* ------------------------------------------------------------------------ */

static int print_explanation(const json_t *doc, bool json)
{
    if (json) {
        cli_print_json(doc);
    } else {
        char *text = cli_explain_text(doc);
        if (!text)
            return cli_fail(CLI_SERVICE, "place: out of memory");
        fputs(text, stdout);
        free(text);
    }
    const json_t *rejected = json_object_get(doc, "rejected");
    size_t i;
    json_t *r;
    bool unplaced = json_array_size(json_object_get(doc, "unplaced")) > 0;
    json_array_foreach(json_object_get(doc, "replicas"), i, r)
    {
        unplaced = unplaced || json_is_null(json_object_get(r, "node"));
    }
    return unplaced || (rejected && !json_is_null(rejected)) ? CLI_FAILED : CLI_OK;
}

static int explain(cli_t *cli, const place_args_t *p)
{
    char id[CV_ID_MAX], err[1024];
    json_t *services = NULL, *model = NULL;
    int rc = cli_redis_connect(cli);
    if (rc == CLI_OK)
        rc = cli_stack_resolve(cli, p->words[0], id);
    if (rc == CLI_OK)
        rc = cli_live_stack_services(cli, p->words[0], id, p->words[1], &services);
    if (rc == CLI_OK && json_array_size(services) == 0)
        rc = cli_fail(CLI_FAILED, "service %s of stack %s is not created yet (no service id)",
                      p->words[1], p->words[0]);
    if (rc == CLI_OK)
        rc = cli_live_read(cli, CLI_LIVE_NODES, &model);
    json_t *svcs = json_array();
    if (rc == CLI_OK) {
        json_array_append(svcs, json_object_get(json_array_get(services, 0), "svc"));
        rc = cli_live_read_services(cli, svcs, json_object_get(model, "services"));
    }
    if (rc == CLI_OK) {
        const char *svc = json_string_value(json_array_get(svcs, 0));
        json_t *doc = cli_explain(model, svc, err, sizeof(err));
        rc = doc ? print_explanation(doc, p->json) : cli_fail(CLI_FAILED, "place: %s", err);
        json_decref(doc);
    }
    json_decref(svcs);
    json_decref(model);
    json_decref(services);
    return rc;
}

int cli_cmd_place(cli_t *cli, int argc, char **argv)
{
    place_args_t p;
    memset(&p, 0, sizeof(p));
    p.json = true;
    p.action = CV_PLACE_NEW;
    int rc = parse_args(argc, argv, &p);
    if (rc == CLI_HELP) {
        fputs(cli_place_usage, stdout);
        return CLI_OK;
    }
    if (rc == CLI_OK && p.explain) {
        p.json = p.output_given && p.json;
        return explain(cli, &p);
    }
    return rc == CLI_OK ? run(&p) : rc;
}
