/*
 * scenario_runner — runs random schedules of the scenarios against one
 * Redis (tests/scenario/run.sh starts it) and reports, per scenario, the
 * schedules whose invariants broke, each with the command that replays it.
 * One schedule is scen_schedule.c; this file is the command line, the
 * self-test, and the sharing of schedules among --jobs processes (default
 * 4), each on a Redis database of its own: every schedule is
 * self-contained, so the split changes nothing but the time taken.
 *
 * usage: scenario_runner (--socket PATH | --port N) [--schedules N]
 *        [--scenario NAME] [--seed S] [--first-seed S] [--trace]
 *        [--self-test] [--list] [--jobs N]
 * Schedule i of a scenario uses seed first-seed + i.
 */
#include "scen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SHOWN_PER_SCENARIO 3 /* violations printed per scenario */

typedef struct options {
    const char *socket;
    int port;
    unsigned long schedules;
    const char *scenario;
    uint64_t seed;
    bool have_seed;
    uint64_t first_seed;
    bool trace, self_test, list;
    unsigned jobs; /* worker processes, each on its own Redis database */
} options_t;

/* ---- the command line ---- */

static void usage(FILE *out)
{
    fprintf(out, "usage: scenario_runner (--socket PATH | --port N) [--schedules N] "
                 "[--scenario NAME] [--seed S] [--first-seed S] [--trace] [--self-test] "
                 "[--list] [--jobs N]\n");
}

static int parse(int argc, char **argv, options_t *o)
{
    *o = (options_t){.schedules = 10000, .first_seed = 1, .jobs = 4};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = strcmp(a, "--socket") == 0 || strcmp(a, "--port") == 0 ||
                     strcmp(a, "--schedules") == 0 || strcmp(a, "--scenario") == 0 ||
                     strcmp(a, "--seed") == 0 || strcmp(a, "--first-seed") == 0 ||
                     strcmp(a, "--jobs") == 0;
        if (takes && !v)
            return -1;
        if (strcmp(a, "--socket") == 0)
            o->socket = v;
        else if (strcmp(a, "--port") == 0)
            o->port = atoi(v);
        else if (strcmp(a, "--schedules") == 0)
            o->schedules = strtoul(v, NULL, 10);
        else if (strcmp(a, "--scenario") == 0)
            o->scenario = v;
        else if (strcmp(a, "--seed") == 0) {
            o->seed = strtoull(v, NULL, 10);
            o->have_seed = true;
        } else if (strcmp(a, "--first-seed") == 0)
            o->first_seed = strtoull(v, NULL, 10);
        else if (strcmp(a, "--jobs") == 0)
            o->jobs = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(a, "--trace") == 0)
            o->trace = true;
        else if (strcmp(a, "--self-test") == 0)
            o->self_test = true;
        else if (strcmp(a, "--list") == 0)
            o->list = true;
        else
            return -1;
        i += takes;
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The checker must see a broken invariant: each sabotage must be reported,
 * and the same schedule unsabotaged must pass. */
static int self_test(void)
{
    static const struct {
        scen_sabotage_t s;
        const char *what;
    } cases[] = {
        {SCEN_SABOTAGE_NONE, "no sabotage: every invariant holds"},
        {SCEN_SABOTAGE_SYNC_POINT, "one sync-point satisfaction dropped"},
        {SCEN_SABOTAGE_RECORD, "one record's status corrupted"},
        {SCEN_SABOTAGE_LEDGER, "one create counted twice in the ledger"},
        {SCEN_SABOTAGE_ORDER, "an action started before its parent completed"},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        scen_world_t w;
        char why[1024];
        int rc = scen_run_schedule(scen_find("create"), 1, false, cases[i].s, &w, why, sizeof(why));
        bool ok = cases[i].s == SCEN_SABOTAGE_NONE ? rc == 0 : rc != 0;
        printf("self-test: %-48s %s%s%s\n", cases[i].what, ok ? "ok" : "NOT DETECTED",
               rc ? ": " : "", rc ? why : "");
        failed += !ok;
        scen_world_free(&w);
    }
    printf("self-test: %s\n", failed ? "FAILED" : "the checker reports every broken invariant");
    return failed ? 1 : 0;
}

/* What one worker process (--jobs) found for one scenario. */
typedef struct tally {
    unsigned long n, bad;
    uint64_t deliveries, kills, losses, dups, reaps, pauses, takeovers;
    double secs;
    unsigned nshown;
    char shown[SHOWN_PER_SCENARIO][1536]; /* the first violations' reports */
} tally_t;

typedef struct results {
    tally_t t[16];
    uint64_t round_trips;
} results_t;

/* Keeps the report of one of the first violations. */
static void keep_report(tally_t *t, const char *report)
{
    if (t->nshown < SHOWN_PER_SCENARIO)
        snprintf(t->shown[t->nshown++], sizeof(t->shown[0]), "%s", report);
}

static void note_report(tally_t *t, const char *what, const scen_def_t *def, uint64_t seed,
                        const char *why)
{
    char report[1536];
    snprintf(report, sizeof(report),
             "%s %s seed %llu: %s\n  replay: tests/scenario/run.sh --scenario %s --seed %llu "
             "--trace\n",
             what, def->name, (unsigned long long)seed, why, def->name, (unsigned long long)seed);
    keep_report(t, report);
}

/* Schedules i of every selected scenario with i % jobs == part. */
static void run_share(const options_t *o, const scen_def_t *only, unsigned part, results_t *res)
{
    size_t nscen = only ? 1 : scen_ndefs;
    for (size_t s = 0; s < nscen; s++) {
        const scen_def_t *def = only ? only : &scen_defs[s];
        tally_t *t = &res->t[s];
        unsigned long n = o->have_seed ? 1 : o->schedules / nscen + (s < o->schedules % nscen);
        double ts = now_s();
        for (unsigned long i = part; i < n; i += o->jobs) {
            uint64_t seed = o->have_seed ? o->seed : o->first_seed + i;
            scen_world_t w;
            char why[1024];
            int rc =
                scen_run_schedule(def, seed, o->trace, SCEN_SABOTAGE_NONE, &w, why, sizeof(why));
            t->n++;
            if (rc != 0) {
                t->bad++;
                note_report(t, "VIOLATION", def, seed, why);
            }
            t->deliveries += w.deliveries;
            t->kills += w.kills;
            t->losses += w.losses;
            t->dups += w.dups;
            t->reaps += w.reaps;
            t->pauses += w.pauses;
            t->takeovers += w.takeovers;
            scen_world_free(&w);
        }
        t->secs = now_s() - ts;
    }
    res->round_trips = scen_redis_round_trips();
}

static int write_all(int fd, const void *buf, size_t len)
{
    for (const char *p = buf; len > 0;) {
        ssize_t n = write(fd, p, len);
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
    for (char *p = buf; len > 0;) {
        ssize_t n = read(fd, p, len);
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Forks o->jobs workers, each on its own Redis database (FLUSHDB between
 * schedules touches only its own), and adds up what they found. */
static int run_parallel(const options_t *o, const scen_def_t *only, results_t *sum)
{
    memset(sum, 0, sizeof(*sum));
    pid_t pids[16];
    int fds[16];
    for (unsigned c = 0; c < o->jobs; c++) {
        int p[2];
        if (pipe(p) != 0)
            return -1;
        pids[c] = fork();
        if (pids[c] < 0)
            return -1;
        if (pids[c] == 0) {
            close(p[0]);
            char err[256], db[16];
            if (scen_redis_open(o->socket, o->port, err, sizeof(err)) != 0) {
                fprintf(stderr, "scenario_runner: %s\n", err);
                _exit(3);
            }
            snprintf(db, sizeof(db), "%u", c);
            const char *select[] = {"SELECT", db};
            freeReplyObject(scen_cmd(2, select));
            results_t *res = calloc(1, sizeof(*res));
            run_share(o, only, c, res);
            int rc = write_all(p[1], res, sizeof(*res));
            _exit(rc ? 3 : 0);
        }
        close(p[1]);
        fds[c] = p[0];
    }
    int failed = 0;
    results_t *res = calloc(1, sizeof(*res));
    for (unsigned c = 0; c < o->jobs; c++) {
        int status = 0;
        if (read_all(fds[c], res, sizeof(*res)) != 0)
            failed = -1;
        close(fds[c]);
        waitpid(pids[c], &status, 0);
        if (failed || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            failed = -1;
            continue;
        }
        sum->round_trips += res->round_trips;
        for (size_t s = 0; s < 16; s++) {
            tally_t *a = &sum->t[s], *b = &res->t[s];
            a->n += b->n;
            a->bad += b->bad;
            a->deliveries += b->deliveries;
            a->kills += b->kills;
            a->losses += b->losses;
            a->dups += b->dups;
            a->reaps += b->reaps;
            a->pauses += b->pauses;
            a->takeovers += b->takeovers;
            a->secs = b->secs > a->secs ? b->secs : a->secs;
            for (unsigned k = 0; k < b->nshown; k++)
                keep_report(a, b->shown[k]);
        }
    }
    free(res);
    return failed;
}

int main(int argc, char **argv)
{
    options_t o;
    if (parse(argc, argv, &o) != 0 || (!o.socket && !o.port && !o.list)) {
        usage(stderr);
        return 2;
    }
    if (o.list) {
        for (size_t i = 0; i < scen_ndefs; i++)
            printf("%-24s %s\n", scen_defs[i].name, scen_defs[i].summary);
        return 0;
    }
    const scen_def_t *only = o.scenario ? scen_find(o.scenario) : NULL;
    if (o.jobs < 1 || o.jobs > 16) {
        fprintf(stderr, "scenario_runner: --jobs takes 1 to 16\n");
        return 2;
    }
    if (o.scenario && !only) {
        fprintf(stderr, "scenario_runner: no scenario %s (--list names them)\n", o.scenario);
        return 2;
    }
    char err[256];
    if (scen_redis_open(o.socket, o.port, err, sizeof(err)) != 0) {
        fprintf(stderr, "scenario_runner: %s\n", err);
        return 3;
    }
    if (o.self_test) {
        int rc = self_test();
        scen_redis_close();
        return rc;
    }
    if (o.have_seed || o.trace)
        o.jobs = 1;
    size_t nscen = only ? 1 : scen_ndefs;
    unsigned passed = 0, failed = 0;
    unsigned long total = 0;
    double t0 = now_s();
    results_t *res = calloc(1, sizeof(*res));
    if (o.jobs == 1) {
        run_share(&o, only, 0, res);
    } else if (run_parallel(&o, only, res) != 0) {
        fprintf(stderr, "scenario_runner: a worker process failed\n");
        return 3;
    }
    double secs = now_s() - t0;
    for (size_t s = 0; s < nscen; s++) {
        const scen_def_t *def = only ? only : &scen_defs[s];
        const tally_t *t = &res->t[s];
        for (unsigned k = 0; k < t->nshown; k++)
            fputs(t->shown[k], stdout);
        printf("%-24s %5lu schedules, %lu violated; per schedule %.1f "
               "deliveries; %llu kills, %llu lease takeovers, %llu pauses, %llu losses, %llu "
               "duplicates, %llu reaper passes\n",
               def->name, t->n, t->bad, t->n ? (double)t->deliveries / (double)t->n : 0.0,
               (unsigned long long)t->kills, (unsigned long long)t->takeovers,
               (unsigned long long)t->pauses, (unsigned long long)t->losses,
               (unsigned long long)t->dups, (unsigned long long)t->reaps);
        total += t->n;
        if (t->bad)
            failed++;
        else
            passed++;
    }
    printf("%lu schedules in %.1f s with %u processes: %.0f schedules/s, %.0f Redis round "
           "trips/s\n",
           total, secs, o.jobs, secs > 0 ? (double)total / secs : 0.0,
           secs > 0 ? (double)res->round_trips / secs : 0.0);
    printf("scenarios: %u passed, %u failed\n", passed, failed);
    free(res);
    scen_redis_close();
    return failed ? 1 : 0;
}
