/*
 * convergectl validate: checks a template with its parameters exactly as
 * submit would, against the limits the engines published when Redis can be
 * reached (cli_template_fetch_limits) and otherwise contacting no service.
 * What submit checks against the live cluster (the metrics of services) is
 * checked against a cluster manifest given with --cluster.
 */
#include "cli_commands.h"
#include "cv_status.h"

#include "cv_placement.h"
#include "cv_hot.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

const char cli_validate_usage[] =
    "usage: convergectl validate TEMPLATE [-P NAME=VALUE]... [--param-file ENV]...\n"
    "                            [--cluster FILE]\n"
    "\n"
    "Checks a template and its parameters as submit does: against the limits the\n"
    "engines published in Redis when it can be reached, else the local ones.\n"
    "Prints 'TEMPLATE: valid (N resources, M parameters, K outputs)', or every\n"
    "problem found, one a line (each naming the file, the place in it and the rule\n"
    "broken), and exits 2. As Heat does, the functions that read only parameters\n"
    "and literals are evaluated: a call that fails with the values given fails here.\n"
    "\n"
    "  -P, --parameter NAME=VALUE  a parameter value (a string, converted to the\n"
    "                              declared type); the last one of a name wins\n"
    "  --param-file ENV            a Heat environment file (parameters,\n"
    "                              parameter_defaults, parameter_merge_strategies,\n"
    "                              resource_registry); repeatable, merged in order\n"
    "                              as Heat merges -e files; -P values override it\n"
    "  --cluster FILE              a cluster manifest (JSON or YAML, as `place` reads):\n"
    "                              the metrics of Converge::Service resources must be\n"
    "                              capacities of its nodes or node types, as submit\n"
    "                              checks against the live cluster\n"
    "  -h, --help                  show this help\n";

enum { OPT_CLUSTER = 200 };

static const cli_opt_t validate_opts[] = {
    CLI_HELP_OPT, CLI_TEMPLATE_OPTS, {OPT_CLUSTER, "--cluster", NULL, true}, CLI_OPTS_END};

typedef struct validate {
    const char *path;
    const char *cluster;
    cli_tpl_input_t in;
} validate_t;

static int apply_opt(const cli_args_t *a, int id, void *ctx)
{
    validate_t *v = ctx;
    if (id == CLI_ARG_WORD)
        return cli_take_word(a, &v->path, 1);
    if (id == OPT_CLUSTER) {
        v->cluster = a->arg;
        return CLI_OK;
    }
    return cli_tpl_input_option(&v->in, a, id);
}

/* The manifest at `path` as the agents and `place` load it (nodes, live
 * and cluster resource manager settings), then the services' metrics
 * against it. */
static int check_cluster(const char *path, const cli_loaded_t *t, const char *fname)
{
    char err[1024];
    size_t len;
    char *text = cli_read_file(path, &len);
    if (!text)
        return CLI_USAGE;
    json_t *manifest = cv_yaml_load(text, len, path, err, sizeof(err));
    free(text);
    cv_cluster_t *c = NULL;
    int rc = !manifest ? cli_fail(CLI_USAGE, "%s", err)
             : cv_cluster_load(manifest, path, &c, err, sizeof(err)) != 0
                 ? cli_fail(CLI_USAGE, "%s", err)
                 : cli_service_check_manifest(t->tree, fname, manifest);
    cv_cluster_free(c);
    json_decref(manifest);
    return rc;
}

/* A courtesy: what the node agents will refuse unless allowed (they decide). */
static void warn_privileges(const cv_template_t *tpl)
{
    char lines[8][CV_SERVICE_WARNING_MAX];
    for (size_t i = 0; i < tpl->nresources; i++) {
        const cv_tpl_resource_t *r = &tpl->resources[i];
        size_t n = cv_service_is(r->type) ? cv_service_privileges(r->properties, lines, 8) : 0;
        for (size_t k = 0; k < n; k++)
            fprintf(stderr, "warning: resources.%s.properties.%s\n", r->name, lines[k]);
    }
}

static int parse_args(int argc, char **argv, validate_t *v)
{
    int rc = cli_parse_args(argc, argv, "validate", validate_opts, apply_opt, v);
    return rc == CLI_OK && !v->path ? cli_usage_error("validate", "no template given") : rc;
}

int cli_cmd_validate(cli_t *cli, int argc, char **argv)
{
    validate_t v = {.path = NULL};
    cli_tpl_input_init(&v.in);
    int rc = parse_args(argc, argv, &v);
    if (rc == CLI_HELP) {
        fputs(cli_validate_usage, stdout);
        rc = CLI_OK;
    } else if (rc == CLI_OK) {
        cli_loaded_t t = {.tpl = NULL};
        rc = cli_template_fetch_limits(cli);
        if (rc == CLI_OK)
            rc = cli_template_load(v.path, &v.in, &t);
        if (rc == CLI_OK && v.cluster)
            rc = check_cluster(v.cluster, &t, v.path);
        if (rc == CLI_OK)
            warn_privileges(t.tpl);
        if (rc == CLI_OK)
            printf("%s: valid (%zu resources, %zu parameters, %zu outputs)\n", v.path,
                   t.tpl->nresources, json_object_size(t.tpl->parameters),
                   json_object_size(t.tpl->outputs));
        cli_loaded_free(&t);
    }
    cli_tpl_input_free(&v.in);
    return rc;
}
