/*
 * convergectl place: a dry run of the placement engine. Reads a cluster
 * manifest, a service description and optionally the current layout (JSON or
 * YAML files), and prints where the service's replicas would go, or with
 * --check the health reports of the layout. Contacts no service: the
 * placement library is pure logic and this command never connects.
 */
#include "cli_commands.h"
#include "cli_output.h"
#include "cli_template.h"

#include "cv_cluster.h"
#include "cv_placement.h"
#include "cv_template.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char cli_place_usage[] =
    "usage: convergectl place --cluster C.json --service S.json [--layout L.json]\n"
    "                         [--action new|replace|upgrade|fix|defrag] [-o json]\n"
    "       convergectl place --check --cluster C.json --layout L.json [-o json]\n"
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
    "  --cluster FILE    the cluster manifest\n"
    "  --service FILE    the service description to place\n"
    "  --layout FILE     the services already placed (their loads count)\n"
    "  --action A        why the replicas are placed: new (default; the node buffer\n"
    "                    is kept free), replace, upgrade, fix or defrag\n"
    "                    (availability actions, which may use the buffer)\n"
    "  --check           report the health of --layout instead of placing\n"
    "  -o, --output F    json (default) or text; both print the same indented JSON\n"
    "  -h, --help        show this help\n"
    "\n"
    "Exit status: 0 every replica placed (soft-constraint violations are listed\n"
    "in \"health\"), or with --check a layout without health reports; 1 the\n"
    "service was rejected or a replica is unplaced, or with --check some report;\n"
    "2 usage error or bad input (the message names the file, the path in it and\n"
    "the problem).\n";

enum { OPT_CLUSTER = 200, OPT_SERVICE, OPT_LAYOUT, OPT_ACTION, OPT_CHECK };

static const cli_opt_t place_opts[] = {
    CLI_HELP_OPT,
    CLI_OUTPUT_OPT,
    {OPT_CLUSTER, "--cluster", NULL, true},
    {OPT_SERVICE, "--service", NULL, true},
    {OPT_LAYOUT, "--layout", NULL, true},
    {OPT_ACTION, "--action", NULL, true},
    {OPT_CHECK, "--check", NULL, false},
    CLI_OPTS_END,
};

typedef struct place_args {
    const char *cluster, *service, *layout, *action_name;
    cv_place_action_t action;
    bool check, json;
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
        return cli_parse_output(a, &out->json);
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
    for (size_t i = 0; warnings && i < in->cluster->nwarnings; i++)
        json_array_append_new(warnings, cli_json_str(in->cluster->warnings[i]));
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

int cli_cmd_place(cli_t *cli, int argc, char **argv)
{
    (void)cli;
    place_args_t p;
    memset(&p, 0, sizeof(p));
    p.json = true;
    p.action = CV_PLACE_NEW;
    int rc = parse_args(argc, argv, &p);
    if (rc == CLI_HELP) {
        fputs(cli_place_usage, stdout);
        return CLI_OK;
    }
    return rc == CLI_OK ? run(&p) : rc;
}
