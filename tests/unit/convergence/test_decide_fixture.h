/*
 * The fixture of the CHECK decision tests (cv_check_decide): everything
 * check_begin.lua loads for job "r" of stack "stk", traversal 5, an update
 * traversal unless a test says, and the outcome. Shared by the decision
 * table's tests and external_id's.
 */
#ifndef CV_TEST_DECIDE_FIXTURE_H
#define CV_TEST_DECIDE_FIXTURE_H

#include "cv_decide.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

#define NOW 1700000000.0

typedef struct fixture {
    cv_msg_t job;
    cv_record_t rec;
    json_t *rdef; /* the definition as the rdef hash stores it; decoded by decide() */
    json_t *params, *sp, *files;
    cv_rdef_t def;
    const char *load_error;
    const char *stack_action; /* the traversal's kind: UPDATE unless a test says */
    cv_check_outcome_t out;
} fixture_t;

static inline int setup(void **state)
{
    fixture_t *f = calloc(1, sizeof(*f));
    f->job.type = CV_MSG_CHECK;
    snprintf(f->job.stack, sizeof(f->job.stack), "%s", "stk");
    snprintf(f->job.resource, sizeof(f->job.resource), "%s", "r");
    f->job.phase = CV_PHASE_UPDATE;
    f->job.traversal = 5;
    strcpy(f->rec.version, "0");
    f->rec.props = json_object();
    f->rec.attrs = json_object();
    f->rec.data = json_object();
    f->rec.old = json_array();
    f->params = json_object();
    f->sp = json_object();
    f->stack_action = "UPDATE";
    *state = f;
    return 0;
}

static inline int teardown(void **state)
{
    fixture_t *f = *state;
    cv_check_outcome_clear(&f->out);
    cv_record_clear(&f->rec);
    json_decref(f->rdef);
    cv_rdef_clear(&f->def);
    json_decref(f->params);
    json_decref(f->sp);
    json_decref(f->files);
    free(f);
    return 0;
}

/* The definition as check_begin hands it over: its JSON text, decoded. */
static inline const cv_rdef_t *decoded(fixture_t *f)
{
    cv_rdef_clear(&f->def);
    if (!f->rdef)
        return NULL;
    char *text = json_dumps(f->rdef, JSON_COMPACT), err[128];
    int rc = cv_rdef_decode(&f->def, text, err, sizeof(err));
    free(text);
    if (rc)
        fail_msg("%s", err);
    return &f->def;
}

static inline const cv_check_outcome_t *decide(fixture_t *f)
{
    cv_check_input_t in = {.job = &f->job,
                           .rec = &f->rec,
                           .rdef = decoded(f),
                           .params = f->params,
                           .sp = f->sp,
                           .files = f->files,
                           .now = NOW,
                           .load_error = f->load_error,
                           .stack_action = f->stack_action};
    cv_check_outcome_clear(&f->out);
    cv_check_decide(&in, &f->out);
    return &f->out;
}

#define assert_kind(out, k)                                                                        \
    assert_string_equal(cv_check_kind_name((out)->kind), cv_check_kind_name(CV_CHECK_##k))

#endif
