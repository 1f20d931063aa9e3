/*
 * cv_log — one-line logs on stderr: time, level, worker id, message.
 * Workers are run under a supervisor that collects stderr.
 */
#ifndef CV_LOG_H
#define CV_LOG_H

enum { CV_LOG_DEBUG = 0, CV_LOG_INFO = 1, CV_LOG_WARN = 2, CV_LOG_ERROR = 3 };

void cv_log_init(const char *who, int level);
void cv_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define cv_debug(...) cv_log(CV_LOG_DEBUG, __VA_ARGS__)
#define cv_info(...) cv_log(CV_LOG_INFO, __VA_ARGS__)
#define cv_warn(...) cv_log(CV_LOG_WARN, __VA_ARGS__)
#define cv_error(...) cv_log(CV_LOG_ERROR, __VA_ARGS__)

/* Wall-clock Unix time in seconds with sub-second precision. */
double cv_now(void);

#endif
