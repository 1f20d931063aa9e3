/*
 * agent_loadfile — the loads a replica reports about itself (docs/crm.md
 * "Dynamic load"): the file its CONVERGE_LOAD_FILE names, one `METRIC=VALUE`
 * a line, read by the agent with every report and put into the report's
 * `load` beside the measured values (a reported value wins).
 *
 * What a line may be: `METRIC=VALUE` with blanks allowed around both parts,
 * METRIC one of the replica's declared metrics (its spec's `load`), VALUE a
 * finite number of 0 or more; empty lines and lines starting with '#' are
 * skipped. Every other line is bad: ignored, counted, the first one kept for
 * the agent's warning. A later line for the same metric wins. Only the first
 * CV_LOADFILE_MAX bytes are read: a replica cannot make its agent read
 * without bound. Pure logic: no I/O.
 */
#ifndef AGENT_LOADFILE_H
#define AGENT_LOADFILE_H

#include <jansson.h>
#include <stddef.h>

/* Bytes of a load file the agent reads; what follows is ignored (a bad line). */
#define CV_LOADFILE_MAX 16384

/* What was wrong in a file: how many lines, and the first one. */
typedef struct cv_loadfile_bad {
    int count;
    int first_line;  /* 1-based; 0 when count is 0 */
    char first[192]; /* "line 3: 'CPU=x': the value is not a number" */
} cv_loadfile_bad_t;

/* The path of the load file of `rid` under the agent's directory `dir`:
 * <dir>/loads/<rid with '/' as '+'>/load. The folder is the replica's own,
 * the one place of the agent's directory its mount namespace shows it as
 * writable, so that it can write the file through a temporary file and a
 * rename there. */
void cv_loadfile_path(char *buf, size_t size, const char *dir, const char *rid);

/* The loads of `text` (len bytes; `truncated` when the file was longer than
 * what was read) for the metrics of `declared` (metric -> load): a new
 * object metric -> number (integers stay integers), possibly empty. */
json_t *cv_loadfile_parse(const char *text, size_t len, int truncated, const json_t *declared,
                          cv_loadfile_bad_t *bad);

#endif
