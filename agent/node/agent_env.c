#include "agent_env.h"

#include "agent_subst.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cv_env_upper(char *buf, size_t size, const char *name)
{
    size_t n = 0;
    for (; name[n] && n + 1 < size; n++)
        buf[n] = isalnum((unsigned char)name[n]) ? (char)toupper((unsigned char)name[n]) : '_';
    buf[n] = '\0';
}

static void set_str(json_t *o, const char *k, const char *v)
{
    json_object_set_new(o, k, json_string(v ? v : ""));
}

/* CONVERGE_<KIND>_<NAME> for each member of `named` (name -> value). */
static void named_vars(json_t *vars, const char *kind, const json_t *named)
{
    const char *name;
    const json_t *v;
    json_object_foreach((json_t *)named, name, v)
    {
        char upper[128], key[192], num[32];
        cv_env_upper(upper, sizeof(upper), name);
        snprintf(key, sizeof(key), "CONVERGE_%s_%s", kind, upper);
        if (json_is_integer(v)) {
            snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
            set_str(vars, key, num);
        } else
            set_str(vars, key, json_string_value(v));
    }
}

json_t *cv_env_vars(const cv_rspec_t *s, const cv_rtask_t *t, const cv_env_where_t *w)
{
    json_t *vars = json_object();
    char index[32];
    snprintf(index, sizeof(index), "%d", s->index);
    set_str(vars, "CONVERGE_INDEX", index);
    set_str(vars, "CONVERGE_NAME", s->name);
    set_str(vars, "CONVERGE_NODE", w->node);
    set_str(vars, "CONVERGE_SERVICE", s->service);
    set_str(vars, "CONVERGE_STACK", s->stack_name);
    set_str(vars, "CONVERGE_STACK_ID", s->stack);
    set_str(vars, "CONVERGE_ROLE", s->role);
    set_str(vars, "CONVERGE_RID", s->rid);
    set_str(vars, "CONVERGE_TASK", t ? t->name : "");
    set_str(vars, "CONVERGE_ADDRESS", w->address);
    if (w->load_file && w->load_file[0])
        set_str(vars, "CONVERGE_LOAD_FILE", w->load_file);
    named_vars(vars, "PORT", w->ports);
    named_vars(vars, "VOLUME", w->volumes);
    return vars;
}

typedef struct lookup_ctx {
    const json_t *vars, *renv, *tenv;
} lookup_ctx_t;

static const char *lookup(void *ud, const char *name)
{
    const lookup_ctx_t *c = ud;
    const char *v = json_string_value(json_object_get(c->vars, name));
    if (!v)
        v = json_string_value(json_object_get(c->tenv, name));
    if (!v)
        v = json_string_value(json_object_get(c->renv, name));
    return v;
}

char *cv_env_subst(const char *text, const cv_rspec_t *s, const cv_rtask_t *t, const json_t *vars)
{
    lookup_ctx_t c = {vars, s->env, t ? t->env : NULL};
    return cv_subst(text, lookup, &c);
}

static void put(json_t *env, const char *k, char *v)
{
    if (v)
        json_object_set_new(env, k, json_string(v));
    free(v);
}

/* The spec's env values as strings: numbers and booleans as JSON writes them. */
static char *value_text(const json_t *v)
{
    if (json_is_string(v))
        return strdup(json_string_value(v));
    return json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
}

static void spec_env(json_t *env, const json_t *from, const cv_rspec_t *s, const cv_rtask_t *t,
                     const json_t *vars)
{
    const char *k;
    const json_t *v;
    json_object_foreach((json_t *)from, k, v)
    {
        char *text = value_text(v);
        if (text)
            put(env, k, cv_env_subst(text, s, t, vars));
        free(text);
    }
}

char **cv_env_build(const cv_rspec_t *s, const cv_rtask_t *t, const json_t *vars,
                    char *const *inherit)
{
    static const char *const kept[] = {"PATH", "HOME", "LANG", "TMPDIR", "USER", NULL};
    json_t *env = json_object();
    for (char *const *e = inherit; e && *e; e++)
        for (const char *const *k = kept; *k; k++) {
            size_t n = strlen(*k);
            if (strncmp(*e, *k, n) == 0 && (*e)[n] == '=')
                json_object_set_new(env, *k, json_string(*e + n + 1));
        }
    spec_env(env, s->env, s, t, vars);
    spec_env(env, t ? t->env : NULL, s, t, vars);
    json_object_update(env, (json_t *)vars);
    char **out = calloc(json_object_size(env) + 1, sizeof(char *));
    size_t n = 0;
    const char *k;
    const json_t *v;
    json_object_foreach(env, k, v)
    {
        if (out && asprintf(&out[n], "%s=%s", k, json_string_value(v)) >= 0)
            n++;
    }
    json_decref(env);
    return out;
}

char **cv_env_argv(const char *const *argv, const cv_rspec_t *s, const cv_rtask_t *t,
                   const json_t *vars)
{
    size_t n = 0;
    while (argv[n])
        n++;
    char **out = calloc(n + 1, sizeof(char *));
    for (size_t i = 0; out && i < n; i++)
        out[i] = cv_env_subst(argv[i], s, t, vars);
    return out;
}

void cv_env_free(char **v)
{
    for (size_t i = 0; v && v[i]; i++)
        free(v[i]);
    free(v);
}
