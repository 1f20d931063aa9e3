/*
 * agent_logcap — size caps of the replicas' stdout/stderr files.
 *
 * A replica writes its output straight into its log files (opened
 * O_APPEND, no pipe through the agent, so the process outlives the agent and
 * never gets SIGPIPE when the agent dies). The agent looks at the files
 * every second: one over the cap has its content copied to "<file>.1"
 * (replacing the previous one) and is truncated to zero; the process's
 * O_APPEND writes then continue at the new end. A file may thus grow past
 * the cap by what is written in one second, and at most two generations
 * are kept.
 */
#ifndef AGENT_LOGCAP_H
#define AGENT_LOGCAP_H

#include <stddef.h>
#include <sys/types.h>

#define CV_LOG_CAP_DEFAULT (1024 * 1024)

/* Whether a file of `size` bytes must be rotated under `cap` (0: no cap). */
int cv_logcap_due(off_t size, size_t cap);

/* Rotates `path` when it is over `cap`: 1 rotated, 0 not needed (or no such
 * file), or a negative errno. */
int cv_logcap_rotate(const char *path, size_t cap);

#endif
