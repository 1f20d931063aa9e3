/*
 * The type operations a CHECK outcome names (cv_decide.h decides which):
 * create a version, update it in place, remove it, start the deletes of
 * replaced versions. Each nested version's child-stack traversal is planned
 * here and begun by engine_nested.c before the action is recorded.
 */
#include "engine_check.h"

#include "cv_error.h"

#include <stdio.h>
#include <string.h>

static cv_version_t current_version(const check_t *c)
{
    return (cv_version_t){.stack = c->run.msg.stack,
                          .resource = c->run.msg.resource,
                          .uuid = c->out.uuid,
                          .physical_id = c->rec.physical_id,
                          .props = c->rec.props,
                          .data = c->rec.data,
                          .attrs = c->rec.attrs,
                          .started = c->rec.started};
}

/* Starts the delete of one replaced version (an entry of c->out.old, which
 * gets the type's data); non-zero when it cannot start. */
static int remove_replaced(check_t *c, json_t *entry)
{
    const char *type_name = json_string_value(json_object_get(entry, "type"));
    const cv_rtype_t *type = cv_rtype_lookup(type_name);
    const char *uuid = json_string_value(json_object_get(entry, "uuid"));
    cv_version_t v = {.stack = c->run.msg.stack,
                      .resource = c->run.msg.resource,
                      .uuid = uuid,
                      .physical_id = json_string_value(json_object_get(entry, "physical_id")),
                      .props = json_object_get(entry, "props"),
                      .data = json_object_get(entry, "data"),
                      .attrs = json_object_get(entry, "attrs"),
                      .started = c->rec.started};
    cv_rstate_t st;
    cv_record_state(&st, &v, c->now);
    int rc = type->remove(&st);
    if (rc == 0 && type->nested) {
        char token[96];
        cv_check_replaced_token(token, sizeof(token), uuid, c->rec.version);
        rc = cv__nested_plan(c, "DELETE", st.physical_id, type_name, NULL, st.data, token,
                             st.reason, sizeof(st.reason));
    }
    if (rc == 0)
        json_object_set(entry, "data", st.data);
    else
        snprintf(c->st.reason, sizeof(c->st.reason), "%s", st.reason);
    cv_record_state_clear(&st);
    return rc;
}

static int remove_listed(check_t *c)
{
    size_t i;
    json_t *index;
    json_array_foreach(c->out.deletes, i, index)
    {
        if (remove_replaced(c, json_array_get(c->out.old, (size_t)json_integer_value(index))) != 0)
            return CV_EFAILED;
    }
    return 0;
}

/* The type's operation on the version the outcome acts on. */
static int operate(check_t *c)
{
    const cv_rtype_t *type = c->out.type;
    cv_version_t v = current_version(c);
    switch (c->out.kind) {
    case CV_CHECK_CREATE:
    case CV_CHECK_REPLACE:
        v.physical_id = NULL;
        v.data = v.attrs = NULL;
        v.props = c->out.props;
        cv_record_state(&c->st, &v, c->now);
        return type->create(&c->st);
    case CV_CHECK_UPDATE:
        v.props = c->out.props;
        cv_record_state(&c->st, &v, c->now);
        c->st.old_props = c->rec.props;
        return type->update(&c->st);
    case CV_CHECK_DELETE_CURRENT:
        cv_record_state(&c->st, &v, c->now);
        return type->remove(&c->st);
    default:
        return 0; /* DELETE_REPLACED: the replaced versions only */
    }
}

int cv__converge_act(check_t *c)
{
    if (c->out.deletes && remove_listed(c) != 0)
        return CV_EFAILED;
    if (operate(c) != 0)
        return CV_EFAILED;
    if (!c->out.nested)
        return 0;
    /* A delete names the child the record names; a create or update the one
     * the type named. */
    bool deleting = c->out.kind == CV_CHECK_DELETE_CURRENT;
    return cv__nested_plan(c, c->out.child_op, deleting ? c->rec.physical_id : c->st.physical_id,
                           c->out.type_name, deleting ? NULL : c->out.props, c->st.data,
                           c->out.child_token, c->st.reason, sizeof(c->st.reason));
}
