/*
 * cv_log — the processes' logs on stderr, one record a line, in one of two
 * formats (docs/operating.md "Logs"):
 *
 *   text  2026-11-25T06:01:02.123Z info engine-h-42: message
 *   json  {"time":"2026-11-25T06:01:02.123Z","level":"info","process":"engine",
 *          "id":"engine-h-42","msg":"message"}
 *
 * The JSON keys are a stable interface: always these five, in this order,
 * every string escaped so that each line is valid JSON whatever bytes the
 * message holds (invalid UTF-8 becomes U+FFFD). A line is at most
 * CV_LOG_LINE_MAX bytes (PIPE_BUF), written with one write(2): lines of
 * concurrent writers to one pipe or O_APPEND file never interleave, and
 * librdkafka's threads may log too. Workers run under a supervisor that
 * collects stderr.
 *
 * Formatting (cv_log_format) is a pure function, apart from the write, so
 * that the encoder is tested without capturing stderr.
 */
#ifndef CV_LOG_H
#define CV_LOG_H

#include <stdbool.h>
#include <stddef.h>

enum { CV_LOG_DEBUG = 0, CV_LOG_INFO = 1, CV_LOG_WARN = 2, CV_LOG_ERROR = 3 };

typedef enum cv_log_format { CV_LOG_TEXT = 0, CV_LOG_JSON = 1 } cv_log_format_t;

/* A line's size limit: the atomic write size of a pipe on Linux. A longer
 * message is cut at a character boundary. */
#define CV_LOG_LINE_MAX 4096

/* The log options every long-running program takes (--log-format,
 * --log-level, --verbose), with their environment variables. */
typedef struct cv_log_opts {
    int level;
    cv_log_format_t format;
} cv_log_opts_t;

/* Text, info; then CONVERGE_LOG_FORMAT and CONVERGE_LOG_LEVEL when set.
 * 0, or CV_EINVAL with errstr naming the variable and the values allowed. */
int cv_log_opts_from_env(cv_log_opts_t *o, char *errstr, size_t errstr_size);

/* --log-format VALUE (text|json) and --log-level VALUE
 * (debug|info|warn|error): `option` is the option's name without dashes.
 * 0, or CV_EINVAL with errstr naming the option and the values allowed. */
int cv_log_opts_set(cv_log_opts_t *o, const char *option, const char *value, char *errstr,
                    size_t errstr_size);

/* The usage lines of those options, for a program's --help. */
#define CV_LOG_OPTS_USAGE                                                                          \
    "  --log-format F     text (default) or json: one JSON object a line, keys time,\n"            \
    "                     level, process, id, msg ($CONVERGE_LOG_FORMAT)\n"                        \
    "  --log-level L      debug, info (default), warn or error: the least severe level\n"          \
    "                     logged ($CONVERGE_LOG_LEVEL)\n"                                          \
    "  --verbose          the same as --log-level debug\n"

/* Text lines from `who` at `level` and above (the CLI, helper processes). */
void cv_log_init(const char *who, int level);

/* What a long-running program logs: `process` is its kind ("engine",
 * "observer", "agent"), `id` its instance (worker id, node). */
void cv_log_start(const char *process, const char *id, const cv_log_opts_t *opts);

/* Whether a record of `level` is written at threshold `threshold`. */
bool cv_log_passes(int threshold, int level);

/* The level's name ("info"); NULL for a level that is none. */
const char *cv_log_level_name(int level);

/* One record as a line ending in '\n', NUL-terminated, in buf (size at
 * least 256; CV_LOG_LINE_MAX makes room for any record): `time` Unix
 * seconds. Returns the line's length without the NUL. */
size_t cv_log_format(char *buf, size_t size, cv_log_format_t format, double time, int level,
                     const char *process, const char *id, const char *msg);

void cv_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define cv_debug(...) cv_log(CV_LOG_DEBUG, __VA_ARGS__)
#define cv_info(...) cv_log(CV_LOG_INFO, __VA_ARGS__)
#define cv_warn(...) cv_log(CV_LOG_WARN, __VA_ARGS__)
#define cv_error(...) cv_log(CV_LOG_ERROR, __VA_ARGS__)

/* Wall-clock Unix time in seconds with sub-second precision. */
double cv_now(void);

#endif
