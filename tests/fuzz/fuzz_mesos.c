/*
 * fuzz_mesos — the BCS/Mesos constraint parser (scheduler/placement/cv_mesos.h)
 * on arbitrary JSON text, and the judge on a fixed small cluster.
 *
 * The parser takes a JSON tree, so the bytes are read with jansson first;
 * bytes that are not JSON test nothing of ours. A constraint that parses
 * must have a text for elimination sequences and be judged on every node,
 * with and without replicas placed, without crashing or leaking; a refusal
 * must say why.
 */
#include "cv_base.h"
#include "cv_placement.h"
#define FUZZ_NAME "fuzz_mesos"
#include "fuzz_util.h"

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NNODES 5

static json_t *nodes[NNODES];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init(argc, argv);
    nodes[0] = json_pack("{s:s,s:s,s:s,s:i,s:s}", "hostname", "h1", "IDC", "sh-1", "rack", "r1",
                         "port", 15, "zone", "a");
    nodes[1] = json_pack("{s:s,s:s,s:s,s:f,s:b}", "NodeName", "h2", "IDC", "sz", "rack", "r1",
                         "port", 2.5, "ssd", 1);
    nodes[2] = json_pack("{s:s,s:s,s:s,s:s,s:n}", "hostname", "h3", "IDC", "cd", "rack", "r2",
                         "port", "20", "zone", "b");
    nodes[3] = json_pack("{s:s,s:[s],s:{}}", "hostname", "h4", "IDC", "x", "rack", "r3");
    nodes[4] = json_object();
    return 0;
}

/* Judges every node as the next replica, first on an empty cluster, then
 * with replicas on the first nodes (some of them twice). */
static void judge(const cv_mconstraint_t *c)
{
    const json_t *const *all = (const json_t *const *)nodes;
    const json_t *placed[] = {nodes[0], nodes[2], nodes[0], nodes[3]};
    static const int replicas[] = {0, 3, 9};
    for (size_t r = 0; r < sizeof(replicas) / sizeof(replicas[0]); r++) {
        for (size_t i = 0; i < NNODES; i++) {
            cv_mesos_ctx_t ctx = {.node = nodes[i],
                                  .placed = r ? placed : NULL,
                                  .nplaced = r ? sizeof(placed) / sizeof(placed[0]) : 0,
                                  .replicas = replicas[r],
                                  .eligible = all,
                                  .neligible = r == 2 ? 0 : NNODES};
            (void)cv_mconstraint_allows(c, &ctx);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    json_t *spec = json_loadb((const char *)data, size, JSON_DECODE_ANY, NULL);
    if (!spec)
        return 0;
    cv_mconstraint_t *c = NULL;
    char err[512] = "";
    int rc = cv_mconstraint_parse(spec, "svc.json: constraints", &c, err, sizeof(err));
    if (rc != 0) {
        if (c || !err[0] || (rc != CV_EVALIDATE && rc != CV_ETOOBIG && rc != CV_ENOMEM))
            fail("refused without a reason", cv_err_name(rc));
    } else {
        if (!c || !cv_mconstraint_text(c))
            fail("parsed without a text", "");
        judge(c);
    }
    cv_mconstraint_free(c);
    json_decref(spec);
    return 0;
}
