/*
 * The converge-engine process: consumes converge.check. A STACK job expands a
 * traversal (graph, definitions, root jobs); a CHECK job converges one graph
 * node under the resource's lease and hands it to the observers.
 * Internal to the engine binary.
 */
#ifndef CV_ENGINE_H
#define CV_ENGINE_H

#include "cv_kafka.h"
#include "cv_msg.h"
#include "cv_worker.h"

/* Both take ownership of nothing; each finishes `job` exactly once. */
void cv__engine_stack_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m);
void cv__engine_check_job(cv_worker_t *w, cv_job_t *job, const cv_msg_t *m);

/*
 * Clears the hook `hook` ("" : the one it waits on) that resource
 * `resource` of stack `stack` is paused on (hook_clear.lua: the event "Hook
 * <hook> is cleared"), then publishes the CHECK job that lets it go on:
 * what a signal {"unset_hook": HOOK} does (engine_hooks.c). cb gets 0,
 * CV_ENOENT with Heat's refusal in `message` (the resource does not wait on
 * that hook), or CV_EREDIS / CV_EKAFKA (try again: clearing twice refuses
 * the second, and a cleared hook's job is published again by the reaper).
 * Returns 0, or non-zero when the script could not be sent (cb not called).
 */
typedef void (*cv_hook_cleared_cb)(void *ud, int rc, const char *message);
int cv__hook_clear(cv_worker_t *w, const char *stack, const char *resource, const char *hook,
                   cv_hook_cleared_cb cb, void *ud);

#endif
