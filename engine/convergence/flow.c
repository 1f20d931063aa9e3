/*
 * cv_flow — the answers of the step machines and the storage they are
 * built in (cv_flow.h).
 */
#include "cv_flow.h"

#include "cv_base.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const cv_resp_t *cv_flow_reply(const cv_flow_in_t *in, size_t i)
{
    return in && i < in->nreplies ? in->replies[i] : NULL;
}

const char *cv_flow_kind_name(cv_flow_kind_t kind)
{
    switch (kind) {
#define CV_FLOW_KIND_NAME(name)                                                                    \
    case CV_FLOW_##name:                                                                           \
        return #name;
        CV_FLOW_KIND_MAP(CV_FLOW_KIND_NAME)
#undef CV_FLOW_KIND_NAME
    }
    return "?";
}

/* Room for one more of `size` bytes in *arr (count n, capacity *cap). */
static bool grow(void **arr, size_t n, size_t *cap, size_t size)
{
    if (n < *cap)
        return true;
    size_t want = *cap ? 2 * *cap : 4;
    void *more = realloc(*arr, want * size);
    if (!more)
        return false;
    *arr = more;
    *cap = want;
    return true;
}

void *cv__flow_own(cv_flow_buf_t *b, void *p)
{
    if (!p || !grow((void **)&b->owned, b->nowned, &b->ownedcap, sizeof(void *))) {
        free(p);
        return NULL;
    }
    b->owned[b->nowned++] = p;
    return p;
}

void cv__flow_begin(cv_flow_buf_t *b)
{
    for (size_t i = 0; i < b->nowned; i++)
        free(b->owned[i]);
    for (size_t i = 0; i < b->ncalls; i++) {
        cv_call_free(b->calls[i]);
        free(b->calls[i]);
    }
    for (size_t i = 0; i < b->a.nlogs; i++)
        free(b->a.logs[i].text);
    b->nowned = b->ncalls = 0;
    cv_flow_cmd_t *cmds = b->a.cmds;
    cv_msg_t *msgs = b->a.msgs;
    cv_flow_log_t *logs = b->a.logs;
    memset(&b->a, 0, sizeof(b->a));
    b->a.cmds = cmds;
    b->a.msgs = msgs;
    b->a.logs = logs;
    b->a.kind = CV_FLOW_DONE;
}

void cv__flow_clear(cv_flow_buf_t *b)
{
    cv__flow_begin(b);
    free(b->a.cmds);
    free(b->a.msgs);
    free(b->a.logs);
    free(b->owned);
    free(b->calls);
    memset(b, 0, sizeof(*b));
    b->a.kind = CV_FLOW_DONE;
}

const cv_flow_t *cv__flow_end(cv_flow_buf_t *b, cv_flow_kind_t kind)
{
    b->a.kind = kind;
    return &b->a;
}

const cv_flow_t *cv__flow_later(cv_flow_buf_t *b, unsigned delay_ms)
{
    b->a.delay_ms = delay_ms;
    return cv__flow_end(b, CV_FLOW_LATER);
}

static int add_cmd(cv_flow_buf_t *b, const cv_flow_cmd_t *cmd)
{
    if (!grow((void **)&b->a.cmds, b->a.ncmds, &b->cmdcap, sizeof(*cmd)))
        return CV_ENOMEM;
    b->a.cmds[b->a.ncmds++] = *cmd;
    return 0;
}

cv_call_t *cv__flow_call(cv_flow_buf_t *b, bool reply)
{
    /* Not zeroed (6 KB): a builder fills what it uses, and the tail is
     * what cv_call_free reads. */
    cv_call_t *call = malloc(sizeof(*call));
    if (call) {
        call->tail = NULL;
        call->nextra = 0;
    }
    if (!call || !grow((void **)&b->calls, b->ncalls, &b->callcap, sizeof(call))) {
        free(call);
        return NULL;
    }
    if (cv__flow_call_of(b, call, reply) != 0) {
        free(call);
        return NULL;
    }
    b->calls[b->ncalls++] = call;
    return call;
}

int cv__flow_call_of(cv_flow_buf_t *b, cv_call_t *call, bool reply)
{
    cv_flow_cmd_t cmd = {.call = call, .reply = reply};
    return add_cmd(b, &cmd);
}

int cv__flow_argv(cv_flow_buf_t *b, bool reply, int argc, const char *const *argv)
{
    size_t text = 0;
    for (int i = 0; i < argc; i++)
        text += strlen(argv[i]) + 1;
    char **copy = cv__flow_own(b, malloc((size_t)argc * sizeof(char *) + text));
    if (!copy)
        return CV_ENOMEM;
    char *p = (char *)(copy + argc);
    for (int i = 0; i < argc; i++) {
        size_t len = strlen(argv[i]) + 1;
        memcpy(p, argv[i], len);
        copy[i] = p;
        p += len;
    }
    cv_flow_cmd_t cmd = {.argc = argc, .argv = (const char *const *)copy, .reply = reply};
    return add_cmd(b, &cmd);
}

int cv__flow_msg(cv_flow_buf_t *b, const cv_msg_t *m)
{
    if (!grow((void **)&b->a.msgs, b->a.nmsgs, &b->msgcap, sizeof(*m)))
        return CV_ENOMEM;
    cv_msg_t copy = *m;
    if (m->nodes_len > 0) {
        char *nodes = cv__flow_own(b, malloc(m->nodes_len));
        if (!nodes)
            return CV_ENOMEM;
        memcpy(nodes, m->nodes, m->nodes_len);
        copy.nodes = nodes;
    }
    b->a.msgs[b->a.nmsgs++] = copy;
    return 0;
}

int cv__flow_nodes(cv_flow_buf_t *b, const char *stack, uint64_t traversal,
                   const char *const *nodes, size_t n, bool express)
{
    cv_msg_t m = {.type = CV_MSG_CHECK, .traversal = traversal, .express = express};
    cv_str_copy(m.stack, sizeof(m.stack), stack);
    if (n == 0 || n > CV_MSG_NODES_MAX || cv_msg_set_node(&m, nodes[0], strlen(nodes[0])) != 0)
        return CV_EINVAL;
    char list[(CV_MSG_NODES_MAX - 1) * (CV_NAME_MAX + 2)];
    size_t len = 0;
    for (size_t i = 1; i < n; i++) {
        size_t k = strlen(nodes[i]);
        if (k > CV_NAME_MAX + 1)
            return CV_EINVAL;
        if (i > 1)
            list[len++] = '/';
        memcpy(list + len, nodes[i], k);
        len += k;
    }
    m.nodes = list;
    m.nodes_len = len;
    return cv__flow_msg(b, &m);
}

void cv__flow_log(cv_flow_buf_t *b, int level, const char *fmt, ...)
{
    if (!grow((void **)&b->a.logs, b->a.nlogs, &b->logcap, sizeof(*b->a.logs)))
        return;
    va_list ap;
    va_start(ap, fmt);
    char *text = NULL;
    if (vasprintf(&text, fmt, ap) < 0)
        text = NULL;
    va_end(ap);
    if (text)
        b->a.logs[b->a.nlogs++] = (cv_flow_log_t){.level = level, .text = text};
}

void cv__flow_count(cv_flow_buf_t *b, cv_flow_counter_t c)
{
    b->a.counts[c]++;
}

const char *cv__flow_keep(cv_flow_buf_t *b, const char *s)
{
    return cv__flow_own(b, strdup(s ? s : ""));
}
