/*
 * The cluster resource manager as a person reads it (cli_crmview.h): the
 * status hash parsed field by field, then drawn as text.
 */
#include "cli_crmview.h"
#include "cli_duration.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const phases[] = {"refresh", "placement", "constraint", "balancing"};
#define NPHASES (sizeof(phases) / sizeof(phases[0]))

/* ------------------------------------------------------------------------ */
/* The document                                                             */
/* ------------------------------------------------------------------------ */

/* How the contract says each field is written. */
typedef enum { F_TEXT, F_NUMBER, F_OBJECT, F_ARRAY_OR_OBJECT, F_ANY } field_kind_t;

static field_kind_t kind_of(const char *field)
{
    static const struct {
        const char *name;
        field_kind_t kind;
    } known[] = {
        {"holder", F_TEXT},
        {"why", F_TEXT},
        {"epoch", F_NUMBER},
        {"since", F_NUMBER},
        {"refresh", F_OBJECT},
        {"placement", F_OBJECT},
        {"constraint", F_OBJECT},
        {"balancing", F_OBJECT},
        {"window", F_OBJECT},
        {"state", F_OBJECT},
        {"imbalance", F_ARRAY_OR_OBJECT},
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(field, known[i].name) == 0)
            return known[i].kind;
    return F_ANY;
}

static void set_error(json_t *errors, const char *field, const char *why, const char *text)
{
    json_object_set_new(errors, field,
                        json_sprintf("%s: %.60s%s", why, text, strlen(text) > 60 ? "..." : ""));
}

/* A whole number written as text ("12", "1712345670.5" for since), or NULL. */
static json_t *number_of(const char *text)
{
    char *end;
    if (!text[0] || isspace((unsigned char)text[0]))
        return NULL;
    double d = strtod(text, &end);
    if (*end || !isfinite(d))
        return NULL;
    if (d == floor(d) && fabs(d) < 9e15)
        return json_integer((json_int_t)d);
    return json_real(d);
}

/* One field of the status hash into the document, as the contract says it
 * is written, or null with the reason in `errors`. */
static void put_field(json_t *doc, json_t *errors, const char *field, const char *text)
{
    field_kind_t kind = kind_of(field);
    const char *key = strcmp(field, "holder") == 0  ? "status_holder"
                      : strcmp(field, "epoch") == 0 ? "status_epoch"
                                                    : field;
    if (kind == F_TEXT) {
        json_object_set_new(doc, key, json_string(text));
        return;
    }
    if (kind == F_NUMBER) {
        json_t *n = number_of(text);
        if (!n)
            set_error(errors, field, "not a number", text);
        json_object_set_new(doc, key, n ? n : json_null());
        return;
    }
    json_t *v = json_loads(text, JSON_DECODE_ANY, NULL);
    if (kind == F_ANY && !v) {
        /* A field of a newer writer: as written. */
        json_object_set_new(doc, key, json_string(text));
        return;
    }
    const char *wrong = NULL;
    if (!v)
        wrong = "not JSON";
    else if (kind == F_OBJECT && !json_is_object(v))
        wrong = "not a JSON object";
    else if (kind == F_ARRAY_OR_OBJECT && !json_is_array(v) && !json_is_object(v))
        wrong = "not a JSON list";
    if (wrong) {
        set_error(errors, field, wrong, text);
        json_decref(v);
        v = json_null();
    }
    json_object_set_new(doc, key, v);
}

/* Holder and epoch from the lease value "<worker id>:<epoch>". */
static void put_lease(json_t *doc, const json_t *lease)
{
    const char *v = json_string_value(lease);
    const char *colon = v ? strrchr(v, ':') : NULL;
    size_t ndigits = colon ? strlen(colon + 1) : 0;
    bool epoch = colon && colon > v && ndigits > 0 && ndigits < 16 &&
                 strspn(colon + 1, "0123456789") == ndigits;
    json_object_set_new(doc, "holder",
                        !v || !v[0] ? json_null()
                        : epoch     ? json_stringn(v, (size_t)(colon - v))
                                    : json_string(v));
    json_object_set_new(doc, "epoch",
                        epoch ? json_integer(strtoll(colon + 1, NULL, 10)) : json_null());
}

json_t *cli_crm_doc(const json_t *raw)
{
    json_t *doc = json_object(), *errors = json_object();
    put_lease(doc, json_object_get(raw, "lease"));
    json_t *ms = json_object_get(raw, "lease_ms");
    json_object_set_new(doc, "lease_ms",
                        json_integer(json_is_integer(ms) ? json_integer_value(ms) : 0));
    const json_t *status = json_object_get(raw, "status");
    json_object_set_new(doc, "status", json_boolean(json_object_size(status) > 0));
    const char *field;
    json_t *v;
    json_object_foreach((json_t *)status, field, v)
    {
        if (json_is_string(v))
            put_field(doc, errors, field, json_string_value(v));
    }
    if (json_object_size(errors) > 0)
        json_object_set(doc, "errors", errors);
    json_decref(errors);
    return doc;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

/* A number as a person reads it: "3", "2.5", "-" when it is none. */
static void num_text(const json_t *v, char *buf, size_t size)
{
    if (json_is_number(v))
        snprintf(buf, size, "%g", json_number_value(v));
    else
        snprintf(buf, size, "-");
}

/* A ratio: "3.00"; null or a string when the least load is 0 ("inf"). */
static void ratio_text(const json_t *v, char *buf, size_t size)
{
    if (json_is_number(v))
        snprintf(buf, size, "%.2f", json_number_value(v));
    else if (json_is_string(v))
        snprintf(buf, size, "%s", json_string_value(v));
    else if (json_is_null(v))
        snprintf(buf, size, "inf");
    else
        snprintf(buf, size, "-");
}

static void ago_text(const json_t *at, double now, char *buf, size_t size)
{
    if (!json_is_number(at) || json_number_value(at) <= 0) {
        snprintf(buf, size, "-");
        return;
    }
    char d[32];
    cli_format_duration(now - json_number_value(at), d, sizeof(d));
    snprintf(buf, size, "%s ago", d);
}

/* Rows (arrays of strings, the header first) aligned under `indent`. */
static void table(FILE *f, const json_t *rows, const char *indent)
{
    size_t ncols = json_array_size(json_array_get(rows, 0)), width[16] = {0}, i;
    json_t *row;
    ncols = ncols > 16 ? 16 : ncols;
    json_array_foreach(rows, i, row) for (size_t c = 0; c < ncols; c++)
    {
        size_t w = strlen(json_string_value(json_array_get(row, c)));
        width[c] = w > width[c] ? w : width[c];
    }
    json_array_foreach(rows, i, row)
    {
        fputs(indent, f);
        for (size_t c = 0; c < ncols; c++) {
            const char *cell = json_string_value(json_array_get(row, c));
            if (c + 1 < ncols)
                fprintf(f, "%-*s  ", (int)width[c], cell);
            else
                fprintf(f, "%s\n", cell);
        }
    }
}

static void holder_line(FILE *f, const json_t *doc, double now)
{
    const char *holder = json_string_value(json_object_get(doc, "holder"));
    if (!holder) {
        fputs("No cluster resource manager holds the role ({cluster}:crm is free).\n", f);
        return;
    }
    fprintf(f, "Cluster resource manager: %s", holder);
    json_t *epoch = json_object_get(doc, "epoch");
    if (json_is_integer(epoch))
        fprintf(f, ", epoch %lld", (long long)json_integer_value(epoch));
    const char *sh = json_string_value(json_object_get(doc, "status_holder"));
    json_t *since = json_object_get(doc, "since");
    if (sh && strcmp(sh, holder) == 0 && json_is_number(since)) {
        char d[32];
        cli_format_duration(now - json_number_value(since), d, sizeof(d));
        fprintf(f, ", holds the role for %s", d);
    }
    json_int_t ms = json_integer_value(json_object_get(doc, "lease_ms"));
    if (ms > 0)
        fprintf(f, " (lease %.1fs left)", (double)ms / 1000);
    fputc('\n', f);
    if (sh && strcmp(sh, holder) != 0)
        fprintf(f, "The status below was written by %s, the previous holder.\n", sh);
}

static void phases_table(FILE *f, const json_t *doc, double now)
{
    json_t *rows = json_array();
    json_array_append_new(rows, json_pack("[ssss]", "PHASE", "LAST RUN", "MS", "MOVES"));
    for (size_t i = 0; i < NPHASES; i++) {
        const json_t *p = json_object_get(doc, phases[i]);
        char ago[48], ms[32], moves[32];
        ago_text(json_object_get(p, "at"), now, ago, sizeof(ago));
        num_text(json_object_get(p, "ms"), ms, sizeof(ms));
        num_text(json_object_get(p, "moves"), moves, sizeof(moves));
        json_array_append_new(
            rows, json_pack("[ssss]", phases[i], json_is_object(p) ? ago : "never", ms, moves));
    }
    fputs("Phases:\n", f);
    table(f, rows, "  ");
    json_decref(rows);
}

/* The imbalance list, whether written bare or inside an object. */
static const json_t *imbalance_list(const json_t *doc)
{
    const json_t *im = json_object_get(doc, "imbalance");
    return json_is_object(im) ? json_object_get(im, "imbalance") : im;
}

static const char *node_type_text(const json_t *e)
{
    const char *t = json_string_value(json_object_get(e, "nodeType"));
    return t ? t : "(all)";
}

static void imbalance_table(FILE *f, const json_t *doc)
{
    const json_t *list = imbalance_list(doc);
    if (json_array_size(list) == 0) {
        fputs(json_is_array(list) ? "Balance: the last balancing pass found no metric with load.\n"
                                  : "Balance: no balancing pass measured yet.\n",
              f);
        return;
    }
    json_t *rows = json_array();
    json_array_append_new(rows,
                          json_pack("[ssssssssss]", "METRIC", "NODE TYPE", "MAX", "MIN", "RATIO",
                                    "THRESHOLD", "ACTIVITY", "STRATEGY", "IMBALANCED", "AFTER"));
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        char max[32], min[32], ratio[32], thr[32], act[32], after[32];
        num_text(json_object_get(e, "max"), max, sizeof(max));
        num_text(json_object_get(e, "min"), min, sizeof(min));
        ratio_text(json_object_get(e, "ratio"), ratio, sizeof(ratio));
        num_text(json_object_get(e, "threshold"), thr, sizeof(thr));
        num_text(json_object_get(e, "activity"), act, sizeof(act));
        ratio_text(json_object_get(e, "after"), after, sizeof(after));
        const json_t *im = json_object_get(e, "imbalanced");
        const char *metric = json_string_value(json_object_get(e, "metric"));
        const char *strategy = json_string_value(json_object_get(e, "strategy"));
        json_array_append_new(
            rows, json_pack("[ssssssssss]", metric ? metric : "?", node_type_text(e), max, min,
                            ratio, thr, act, strategy ? strategy : "-",
                            json_is_boolean(im) ? (json_is_true(im) ? "yes" : "no") : "-", after));
    }
    fputs("Balance (last balancing pass; ratio = max/min node load):\n", f);
    table(f, rows, "  ");
    json_decref(rows);
}

static void window_line(FILE *f, const json_t *doc)
{
    const json_t *w = json_object_get(doc, "window");
    if (!json_is_object(w))
        return;
    char moves[32], throttled[32];
    num_text(json_object_get(w, "moves"), moves, sizeof(moves));
    num_text(json_object_get(w, "throttled"), throttled, sizeof(throttled));
    fprintf(f, "Moves in the throttle window: %s made, %s throttled", moves, throttled);
    const json_t *interval = json_object_get(w, "interval");
    if (json_is_number(interval))
        fprintf(f, " (window %gs)", json_number_value(interval));
    fputc('\n', f);
}

char *cli_crm_text(const json_t *doc, double now)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    holder_line(f, doc, now);
    if (!json_is_true(json_object_get(doc, "status"))) {
        fputs("No status yet: no cluster resource manager has written {cluster}:crm:status.\n", f);
        fclose(f);
        return text;
    }
    phases_table(f, doc, now);
    imbalance_table(f, doc);
    window_line(f, doc);
    const char *why = json_string_value(json_object_get(doc, "why"));
    if (why && why[0])
        fprintf(f, "Nothing moved: %s\n", why);
    const char *field;
    json_t *v;
    json_object_foreach(json_object_get(doc, "errors"), field, v)
    {
        fprintf(f, "Unreadable status field %s: %s\n", field, json_string_value(v));
    }
    fclose(f);
    return text;
}

/* "threshold 2, imbalanced" and the like: why the metric is or is not
 * out of balance. */
static void verdict(const json_t *e, char *buf, size_t size)
{
    char thr[32], act[32];
    num_text(json_object_get(e, "threshold"), thr, sizeof(thr));
    num_text(json_object_get(e, "activity"), act, sizeof(act));
    const json_t *im = json_object_get(e, "imbalanced");
    const char *strategy = json_string_value(json_object_get(e, "strategy"));
    bool defrag = strategy && strcmp(strategy, "defrag") == 0;
    double activity = json_number_value(json_object_get(e, "activity"));
    bool below = activity > 0 && json_number_value(json_object_get(e, "max")) <= activity;
    snprintf(buf, size, "threshold %s%s%s%s%s", thr, defrag ? ", defragmentation" : "",
             below ? ", below activity threshold " : "", below ? act : "",
             json_is_true(im)    ? ", imbalanced"
             : json_is_false(im) ? ", balanced"
                                 : "");
}

char *cli_crm_balance_text(const json_t *doc, double now)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    const json_t *list = imbalance_list(doc);
    if (json_array_size(list) > 0) {
        char ago[48];
        ago_text(json_object_get(json_object_get(doc, "balancing"), "at"), now, ago, sizeof(ago));
        fprintf(f, "Balance before -> after the last balancing pass%s%s:\n",
                strcmp(ago, "-") ? ", " : "", strcmp(ago, "-") ? ago : "");
    }
    size_t i;
    json_t *e;
    json_array_foreach(list, i, e)
    {
        char ratio[32], after[32], why[160];
        ratio_text(json_object_get(e, "ratio"), ratio, sizeof(ratio));
        ratio_text(json_object_get(e, "after"), after, sizeof(after));
        verdict(e, why, sizeof(why));
        const char *metric = json_string_value(json_object_get(e, "metric"));
        const char *type = json_string_value(json_object_get(e, "nodeType"));
        fprintf(f, "  %s%s%s max/min %s \u2192 %s (%s)\n", metric ? metric : "?",
                type ? " on node type " : "", type ? type : "", ratio, after, why);
    }
    fclose(f);
    return text;
}
