/*
 * reconcile_move — carrying out the moves the cluster resource manager
 * asked for (the service's `moves`: docs/crm.md "Moves"). Not written yet:
 * every move waits as it is.
 */
#include "reconcile_internal.h"

void cv__rc_moves(rc_ctx_t *x)
{
    (void)x;
}
