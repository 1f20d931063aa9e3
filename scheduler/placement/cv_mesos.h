/*
 * cv_mesos — BCS/Mesos-style constraints on node attributes (after the Mesos
 * scheduling document of BCS, Tencent's BlueKing Container Service):
 * UNIQUE, MAXPER n, CLUSTER value-or-set, LIKE regex, UNLIKE regex,
 * GROUPBY values (an even spread: 9 over 3 values is 3/3/3, 8 is 3/3/2),
 * parameters typed string, set, scalar, range; combined with "and" / "or".
 *
 * JSON form (in a service description):
 *   {"and": [ ["hostname", "UNIQUE"],
 *             {"or": [ ["IDC", "LIKE", "sh.*"], ["IDC", "CLUSTER", ["sz", "cd"]] ]} ]}
 * A bare list is one constraint; ["rack", "MAXPER", 2]; ["zone", "GROUPBY", ["a","b","c"]]
 * (GROUPBY without values spreads over the values the candidate nodes have).
 * Scalars compare numerically, ranges ["10", "20"] or {"begin":10,"end":20} bound
 * a scalar attribute. Regexes are POSIX extended, anchored to the whole value.
 * Pure logic.
 */
#ifndef CV_MESOS_H
#define CV_MESOS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct cv_mconstraint cv_mconstraint_t;

/* Parses the JSON form; errors name `where` (a JSON path) and the problem. */
int cv_mconstraint_parse(const json_t *spec, const char *where, cv_mconstraint_t **out,
                         char *errstr, size_t errstr_size);
void cv_mconstraint_free(cv_mconstraint_t *c);

/*
 * What a constraint needs to judge one more replica on one candidate node:
 * the candidate's attributes, the attributes of the nodes that already hold a
 * replica of this service (one entry per replica), the service's replica
 * count, and the attributes of every node still eligible (for GROUPBY without
 * values, which spreads over the values present).
 */
typedef struct cv_mesos_ctx {
    const json_t *node;
    const json_t *const *placed;
    size_t nplaced;
    int replicas;
    const json_t *const *eligible;
    size_t neligible;
} cv_mesos_ctx_t;

/* Whether the replica may go on ctx->node. */
bool cv_mconstraint_allows(const cv_mconstraint_t *c, const cv_mesos_ctx_t *ctx);

/* A short text of the constraint for elimination sequences: "hostname UNIQUE". */
const char *cv_mconstraint_text(const cv_mconstraint_t *c);

#endif
