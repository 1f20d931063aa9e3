/*
 * msg_seeds — writes the seed corpus of fuzz_msg: one file per message,
 * encoded by the real encoder, covering every message type with its
 * optional fields absent and present. Run by hand when the wire format
 * changes: msg_seeds tests/fuzz/corpus/msg
 */
#include "cv_contract.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_seed(const char *dir, const char *name, const cv_msg_t *m)
{
    char *buf = NULL, path[4096];
    size_t len = 0;
    if (cv_msg_encode(m, &buf, &len) != 0) {
        fprintf(stderr, "msg_seeds: %s does not encode\n", name);
        return 1;
    }
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    size_t written = f ? fwrite(buf, 1, len, f) : 0;
    int rc = !f || written != len;
    if (f && fclose(f) != 0)
        rc = 1;
    if (rc)
        fprintf(stderr, "msg_seeds: cannot write %s\n", path);
    free(buf);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: msg_seeds DIR\n");
        return 2;
    }
    const char *dir = argv[1];
    cv_msg_t stack = {.type = CV_MSG_STACK, .traversal = 1, .kind = CV_TRAV_CREATE};
    strcpy(stack.stack, "hello");
    cv_msg_t rollback = stack;
    rollback.kind = CV_TRAV_ROLLBACK;
    rollback.traversal = 42;
    rollback.attempt = 3;

    cv_msg_t check = {.type = CV_MSG_CHECK, .traversal = 7, .phase = CV_PHASE_UPDATE};
    strcpy(check.stack, "hello");
    strcpy(check.resource, "web_server");
    cv_msg_t cleanup = check;
    cleanup.phase = CV_PHASE_CLEANUP;
    cleanup.traversal = 1ULL << 40;
    cleanup.attempt = 70000;
    cv_msg_t batch = check; /* the jobs of three more nodes in one message */
    batch.express = 1;
    batch.nodes = "u/db/c/old server/u/lb";
    batch.nodes_len = strlen(batch.nodes);

    cv_msg_t observe = {.type = CV_MSG_OBSERVE, .traversal = 3, .phase = CV_PHASE_UPDATE};
    strcpy(observe.stack, "st-1");
    strcpy(observe.resource, "db");
    observe.version = UINT64_MAX;
    observe.attempt = 1;

    cv_msg_t signal = {.type = CV_MSG_SIGNAL, .attempt = 2};
    strcpy(signal.stack, "0b9d2bbbc67670f2");
    strcpy(signal.resource, "wait_handle");
    strcpy(signal.signal, "36b5aab737a18ff2745d153bf2ec37d4");

    /* A dead letter carrying a CHECK job, and one carrying bytes that never
     * decoded (so it names no stack). */
    char *orig = NULL;
    size_t orig_len = 0;
    if (cv_msg_encode(&check, &orig, &orig_len) != 0)
        return 1;
    cv_msg_t dead = {.type = CV_MSG_DEAD, .traversal = 7, .original = orig};
    dead.original_len = orig_len;
    strcpy(dead.stack, "hello");
    strcpy(dead.resource, "web_server");
    strcpy(dead.reason, "resource type OS::Nova::Server is not supported");
    static const char junk[] = "\x81\xa1v\x07 and then some";
    cv_msg_t poison = {.type = CV_MSG_DEAD, .original = junk, .original_len = sizeof(junk) - 1};
    strcpy(poison.reason, "unsupported message version 7");

    int rc = write_seed(dir, "stack_create", &stack) |
             write_seed(dir, "stack_rollback", &rollback) |
             write_seed(dir, "check_update", &check) | write_seed(dir, "check_cleanup", &cleanup) |
             write_seed(dir, "check_batch", &batch) | write_seed(dir, "observe", &observe) |
             write_seed(dir, "dead_check", &dead) | write_seed(dir, "dead_poison", &poison) |
             write_seed(dir, "signal", &signal);
    free(orig);
    return rc;
}
