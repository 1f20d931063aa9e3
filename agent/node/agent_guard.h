/*
 * agent_guard — the fence of stateful replicas when their agent is gone.
 *
 * An agent that cannot reach Redis for longer than its fence time stops its
 * stateful replicas itself; an agent killed or stopped cannot, and the
 * cluster loop re-places its stateful replicas after that time plus a
 * margin. So while a node runs stateful replicas, a small guard process
 * (converge-agent --fence-guard DIR FENCE_MS, detached like the replicas)
 * watches the agent's proof of life: the file <dir>/fence.alive, touched
 * at every heartbeat Redis accepted. Older than the fence time, the guard
 * kills every stateful replica process of the state files (pid and start
 * time checked), so an index never runs in two places. It exits once no
 * stateful replica process is left; the agent starts it again when it runs
 * one.
 */
#ifndef AGENT_GUARD_H
#define AGENT_GUARD_H

#include <jansson.h>
#include <stdbool.h>

/* The processes of the stateful replicas among `states` (agent_state.h's
 * objects) that are not stopped: a new array of {"pid", "start_time"}.
 * Pure. */
json_t *cv_guard_targets(const json_t *states);

/* Whether a proof of life touched at `touched` (Unix s; 0: never) is older
 * than the fence at `now`. Pure. */
bool cv_guard_stale(double touched, double now, int fence_ms);

/* The agent's proof of life: touches <dir>/fence.alive. */
void cv_guard_touch(const char *dir);

/* Starts the guard of `dir` unless it runs (its pid file
 * <dir>/fence.guard holds its pid and start time): the agent's own
 * executable (/proc/self/exe, so a rebuilt binary changes nothing). */
void cv_guard_ensure(const char *dir, int fence_ms);

/* The guard process: returns its exit status. */
int cv_guard_main(const char *dir, int fence_ms);

#endif
