/*
 * yaql — the subset of yaql expressions that Heat's own tests use.
 */
#include "cv__template_internal.h"

json_t *cv__yaql_eval(const char *expression, const json_t *data, char *msg, size_t msg_size)
{
    (void)data;
    return cv__fn_fail(msg, msg_size, "yaql expression not supported: %s", expression);
}
