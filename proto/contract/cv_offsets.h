/*
 * cv_offsets — which offset of a partition may be committed.
 *
 * Jobs of one partition arrive in offset order but finish in any order. An
 * offset may be committed only when every job before it is finished (its
 * effect recorded in Redis), so a crash never skips unfinished work. The
 * tracker keeps, per partition, only the jobs still in flight, in offset
 * order: the committable offset is the oldest of them, or past the last job
 * when none is left. A finished job leaves the tracker at once, wherever it
 * is, so memory follows the jobs in flight, never the jobs finished behind a
 * slow one (a job waiting minutes for a child stack). Pure logic.
 */
#ifndef CV_OFFSETS_H
#define CV_OFFSETS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cv_offset_slot {
    int64_t offset;
    struct cv_offset_slot *prev, *next;
} cv_offset_slot_t;

typedef struct cv_partition_track {
    cv_offset_slot_t *head, *tail; /* the jobs in flight, oldest first */
    int64_t last;                  /* offset of the last job pushed; -1 none yet */
    /* The next offset to commit: the oldest job in flight, or last + 1; -1 none yet. */
    int64_t committable;
} cv_partition_track_t;

void cv_track_init(cv_partition_track_t *t);

/* Appends a job's slot (caller-owned, in the tracker until cv_track_done).
 * Offsets only grow; they may have gaps (compaction, transaction markers). */
void cv_track_push(cv_partition_track_t *t, cv_offset_slot_t *slot, int64_t offset);

/* Takes the finished job's slot out (it is the caller's again). Returns true
 * when the committable offset advanced. */
bool cv_track_done(cv_partition_track_t *t, cv_offset_slot_t *slot);

#endif
