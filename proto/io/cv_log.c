#include "cv_log.h"

#include "cv_base.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const char *const level_names[] = {"debug", "info", "warn", "error"};
enum { NLEVELS = sizeof(level_names) / sizeof(level_names[0]) };

/* Set once at start, before any thread that logs exists; read-only after. */
static char log_process[32] = "converge";
static char log_id[64] = "converge";
static int log_level = CV_LOG_INFO;
static cv_log_format_t log_format = CV_LOG_TEXT;

/* ------------------------------------------------------------------------ */
/* Options                                                                  */
/* ------------------------------------------------------------------------ */

static int parse_level(const char *s, int *level)
{
    for (int i = 0; i < NLEVELS; i++)
        if (strcmp(s, level_names[i]) == 0) {
            *level = i;
            return 0;
        }
    return CV_EINVAL;
}

static int parse_format(const char *s, cv_log_format_t *format)
{
    if (strcmp(s, "text") == 0)
        *format = CV_LOG_TEXT;
    else if (strcmp(s, "json") == 0)
        *format = CV_LOG_JSON;
    else
        return CV_EINVAL;
    return 0;
}

/* `what` names where the value came from: "--log-level" or the variable. */
static int set_one(cv_log_opts_t *o, bool format, const char *what, const char *value, char *errstr,
                   size_t errstr_size)
{
    if (format ? parse_format(value, &o->format) : parse_level(value, &o->level))
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "%s \"%s\": expected %s", what, value,
                         format ? "text or json" : "debug, info, warn or error");
    return 0;
}

int cv_log_opts_from_env(cv_log_opts_t *o, char *errstr, size_t errstr_size)
{
    o->level = CV_LOG_INFO;
    o->format = CV_LOG_TEXT;
    const char *format = getenv("CONVERGE_LOG_FORMAT"), *level = getenv("CONVERGE_LOG_LEVEL");
    if (format && *format && set_one(o, true, "CONVERGE_LOG_FORMAT", format, errstr, errstr_size))
        return CV_EINVAL;
    if (level && *level && set_one(o, false, "CONVERGE_LOG_LEVEL", level, errstr, errstr_size))
        return CV_EINVAL;
    return 0;
}

int cv_log_opts_set(cv_log_opts_t *o, const char *option, const char *value, char *errstr,
                    size_t errstr_size)
{
    bool format = strcmp(option, "log-format") == 0;
    if (!format && strcmp(option, "log-level") != 0)
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "--%s: not a log option", option);
    char what[32];
    snprintf(what, sizeof(what), "--%s", option);
    return set_one(o, format, what, value, errstr, errstr_size);
}

void cv_log_init(const char *who, int level)
{
    cv_log_opts_t opts = {.level = level, .format = CV_LOG_TEXT};
    cv_log_start(who, who, &opts);
}

void cv_log_start(const char *process, const char *id, const cv_log_opts_t *opts)
{
    snprintf(log_process, sizeof(log_process), "%s", process);
    snprintf(log_id, sizeof(log_id), "%s", id);
    log_level = opts->level;
    log_format = opts->format;
}

bool cv_log_passes(int threshold, int level)
{
    return level >= threshold && level >= 0 && level < NLEVELS;
}

const char *cv_log_level_name(int level)
{
    return level >= 0 && level < NLEVELS ? level_names[level] : NULL;
}

/* ------------------------------------------------------------------------ */
/* The encoder                                                              */
/* ------------------------------------------------------------------------ */

/* A line being built: `len` bytes used of `size`, one kept for the NUL. */
typedef struct line {
    char *buf;
    size_t size, len;
} line_t;

/* Appends n bytes when they fit with `reserve` bytes left over for what
 * must follow; false (nothing appended) when they do not. */
static bool put(line_t *l, const char *s, size_t n, size_t reserve)
{
    if (l->len + n + reserve + 1 > l->size)
        return false;
    memcpy(l->buf + l->len, s, n);
    l->len += n;
    l->buf[l->len] = '\0';
    return true;
}

static bool is_cont(unsigned char c)
{
    return (c & 0xC0) == 0x80;
}

/* The length of the well-formed UTF-8 sequence at s (1 to 4), 0 when the
 * bytes there are none: a stray continuation byte, an overlong form, a
 * surrogate, a code point past U+10FFFF, or a sequence cut short. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xC2 && c <= 0xDF)
        return is_cont(s[1]) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return s[1] >= lo && s[1] <= hi && is_cont(s[2]) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return s[1] >= lo && s[1] <= hi && is_cont(s[2]) && is_cont(s[3]) ? 4 : 0;
    }
    return 0;
}

/* The JSON form of the character at s: *n bytes of s are consumed, the
 * escaped form is written to piece (at least 7 bytes) or is s itself. */
static const char *json_piece(const unsigned char *s, size_t *n, char *piece, size_t *plen)
{
    static const char shorts[] = {['\b'] = 'b', ['\f'] = 'f', ['\n'] = 'n', ['\r'] = 'r',
                                  ['\t'] = 't', ['"'] = '"',  ['\\'] = '\\'};
    unsigned char c = s[0];
    *n = utf8_len(s);
    if (*n == 0) {
        *n = 1;
        *plen = 6;
        return "\\ufffd";
    }
    if (c < sizeof(shorts) && shorts[c]) {
        piece[0] = '\\';
        piece[1] = shorts[c];
        *plen = 2;
        return piece;
    }
    if (c < 0x20 || c == 0x7F) {
        *plen = (size_t)snprintf(piece, 7, "\\u%04x", c);
        return piece;
    }
    *plen = *n;
    return (const char *)s;
}

/* Appends `s` escaped as the inside of a JSON string, as much of it as
 * fits with `reserve` left over; a character is never cut. */
static void put_json_string(line_t *l, const char *s, size_t reserve)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        char piece[8];
        size_t n, plen;
        const char *out = json_piece(p, &n, piece, &plen);
        if (!put(l, out, plen, reserve))
            return;
        p += n;
    }
}

/* Appends `s` as it is, as much as fits with `reserve` left over, cut at
 * a UTF-8 character boundary when it is cut. */
static void put_raw(line_t *l, const char *s, size_t reserve)
{
    if (l->len + reserve + 1 >= l->size)
        return;
    size_t n = strlen(s), room = l->size - l->len - reserve - 1;
    if (n > room) {
        n = room;
        while (n > 0 && is_cont((unsigned char)s[n]))
            n--;
    }
    put(l, s, n, reserve);
}

static void put_time(line_t *l, double time)
{
    double whole = floor(time);
    time_t secs = (time_t)whole;
    long ms = (long)((time - whole) * 1000.0);
    if (ms > 999)
        ms = 999;
    struct tm tm;
    gmtime_r(&secs, &tm);
    char stamp[40];
    int n =
        snprintf(stamp, sizeof(stamp), "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
    put(l, stamp, (size_t)n, 0);
}

/* The JSON skeleton around the five values: pieces[i] precedes value i,
 * pieces[5] ends the line. */
static const char *const json_pieces[] = {"{\"time\":\"", "\",\"level\":\"", "\",\"process\":\"",
                                          "\",\"id\":\"", "\",\"msg\":\"",   "\"}\n"};

/* The bytes of the skeleton from pieces[from] on: what must still fit. */
static size_t json_rest(int from)
{
    size_t n = 0;
    for (int i = from; i < 6; i++)
        n += strlen(json_pieces[i]);
    return n;
}

static void format_json(line_t *l, double time, const char *level, const char *process,
                        const char *id, const char *msg)
{
    put(l, json_pieces[0], strlen(json_pieces[0]), json_rest(1));
    put_time(l, time);
    put(l, json_pieces[1], strlen(json_pieces[1]), json_rest(2));
    put_json_string(l, level, json_rest(2));
    const char *values[] = {process, id, msg};
    for (int i = 0; i < 3; i++) {
        put(l, json_pieces[2 + i], strlen(json_pieces[2 + i]), json_rest(3 + i));
        put_json_string(l, values[i], json_rest(3 + i));
    }
    put(l, json_pieces[5], strlen(json_pieces[5]), 0);
}

/* The text line as it always was: "<time> <level> <id>: <msg>". */
static void format_text(line_t *l, double time, const char *level, const char *id, const char *msg)
{
    put_time(l, time);
    put(l, " ", 1, 1);
    put_raw(l, level, 1);
    put(l, " ", 1, 1);
    put_raw(l, id, 3);
    put(l, ": ", 2, 1);
    put_raw(l, msg, 1);
    put(l, "\n", 1, 0);
}

size_t cv_log_format(char *buf, size_t size, cv_log_format_t format, double time, int level,
                     const char *process, const char *id, const char *msg)
{
    line_t l = {buf, size, 0};
    buf[0] = '\0';
    const char *name = cv_log_level_name(level);
    if (format == CV_LOG_JSON)
        format_json(&l, time, name ? name : "error", process, id, msg);
    else
        format_text(&l, time, name ? name : "error", id, msg);
    return l.len;
}

/* ------------------------------------------------------------------------ */
/* Writing                                                                  */
/* ------------------------------------------------------------------------ */

double cv_now(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

/* One write for the whole line (CV_LOG_LINE_MAX is PIPE_BUF); a second
 * only if a signal or a full disk cut the first short. */
static void write_line(const char *line, size_t len)
{
    while (len > 0) {
        ssize_t n = write(STDERR_FILENO, line, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        line += n;
        len -= (size_t)n;
    }
}

void cv_log(int level, const char *fmt, ...)
{
    if (!cv_log_passes(log_level, level))
        return;
    int saved = errno; /* a log between a call and its errno check changes nothing */
    char msg[CV_LOG_LINE_MAX], line[CV_LOG_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    size_t n =
        cv_log_format(line, sizeof(line), log_format, cv_now(), level, log_process, log_id, msg);
    write_line(line, n);
    errno = saved;
}
