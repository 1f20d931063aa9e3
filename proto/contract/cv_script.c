#include "cv_script.h"

#include "cv_msg.h"

#include <string.h>

#define CV__SCRIPT_NAME_STR(field) #field,
#define CV__SCRIPT_ANSWER(WORD) CV_ANSWER_##WORD,
#define CV__SCRIPT_LISTS(name, NAME, shape, variadic)                                              \
    static const char *const name##_keys[] = {CV_##NAME##_KEYS(CV__SCRIPT_NAME_STR) NULL};         \
    static const char *const name##_args[] = {CV_##NAME##_ARGS(CV__SCRIPT_NAME_STR) NULL};         \
    static const cv_answer_t name##_answers[] = {CV_##NAME##_ANSWERS(CV__SCRIPT_ANSWER)            \
                                                     CV_ANSWER_INVALID};
CV_SCRIPT_TABLE(CV__SCRIPT_LISTS)
#undef CV__SCRIPT_LISTS

static const struct row {
    const char *name;
    size_t nkeys, nargs;
    bool variadic;
    cv_script_shape_t shape;
    const char *const *keys, *const *args;
    const cv_answer_t *answers;
} rows[CV_SCRIPT__COUNT] = {
#define CV__SCRIPT_ROW(name, NAME, shape, variadic)                                                \
    [CV_SCRIPT_##NAME] = {#name, CV_##NAME##_NKEYS, CV_##NAME##_NARGS, variadic,                   \
                          shape, name##_keys,       name##_args,       name##_answers},
    CV_SCRIPT_TABLE(CV__SCRIPT_ROW)
#undef CV__SCRIPT_ROW
};

static const char *const answer_names[] = {
#define CV__ANSWER_NAME(WORD) #WORD,
    CV_ANSWER_LIST(CV__ANSWER_NAME)
#undef CV__ANSWER_NAME
        "VALUE",
    "INVALID",
};

const char *cv_script_name(cv_script_t s)
{
    return rows[s].name;
}

size_t cv_script_nkeys(cv_script_t s)
{
    return rows[s].nkeys;
}

size_t cv_script_nargs(cv_script_t s)
{
    return rows[s].nargs;
}

bool cv_script_variadic(cv_script_t s)
{
    return rows[s].variadic;
}

cv_script_shape_t cv_script_shape(cv_script_t s)
{
    return rows[s].shape;
}

const char *cv_script_key_name(cv_script_t s, size_t i)
{
    return i < rows[s].nkeys ? rows[s].keys[i] : NULL;
}

const char *cv_script_arg_name(cv_script_t s, size_t i)
{
    return i < rows[s].nargs ? rows[s].args[i] : NULL;
}

const cv_answer_t *cv_script_answers(cv_script_t s)
{
    return rows[s].answers;
}

const char *cv_answer_name(cv_answer_t a)
{
    return (unsigned)a <= CV_ANSWER_INVALID ? answer_names[a] : "INVALID";
}

cv_answer_t cv_script_answer(cv_script_t s, const char *first_element)
{
    if (!first_element)
        return CV_ANSWER_INVALID;
    for (const cv_answer_t *a = rows[s].answers; *a != CV_ANSWER_INVALID; a++)
        if (strcmp(answer_names[*a], first_element) == 0)
            return *a;
    return CV_ANSWER_INVALID;
}

static const char *or_empty(const char *s)
{
    return s ? s : "";
}

void cv_script_stack_begin_args(cv_stack_begin_args_t *a, const cv_stack_begin_t *b,
                                const char *client)
{
    *a = (cv_stack_begin_args_t){
        .kind = cv_trav_kind_name((uint8_t)b->kind),
        .name = or_empty(b->name),
        .id = b->stack,
        .template = or_empty(b->tpl),
        .params = or_empty(b->params),
        .fname = or_empty(b->fname),
        .client = client,
        .rollback = or_empty(b->rollback),
        .rerun = b->rerun ? "1" : "",
        .files = or_empty(b->files),
        .parent = or_empty(b->parent),
        .token = or_empty(b->token),
        .cancel = b->cancel ? "1" : "",
        .env = or_empty(b->env),
        .drift = or_empty(b->drift),
        .upgrade = or_empty(b->upgrade),
    };
}
