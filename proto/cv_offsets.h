/*
 * cv_offsets — which offset of a partition may be committed.
 *
 * Jobs of one partition arrive in offset order but finish in any order. An
 * offset may be committed only when every job before it is finished (its
 * effect recorded in Redis), so a crash never skips unfinished work. The
 * tracker keeps, per partition, a FIFO of the jobs in flight; finishing one
 * advances the committable offset over the finished prefix. Pure logic.
 */
#ifndef CV_OFFSETS_H
#define CV_OFFSETS_H

#include <stdbool.h>
#include <stdint.h>

typedef struct cv_offset_slot {
    int64_t offset;
    bool done;
    struct cv_offset_slot *next;
} cv_offset_slot_t;

typedef struct cv_partition_track {
    cv_offset_slot_t *head, *tail;
    int64_t committable; /* next offset to commit (last finished prefix + 1); -1 none yet */
} cv_partition_track_t;

void cv_track_init(cv_partition_track_t *t);

/* Appends a job's slot (caller-owned, lives until popped). */
void cv_track_push(cv_partition_track_t *t, cv_offset_slot_t *slot, int64_t offset);

/*
 * Marks `slot` done and pops the finished prefix, calling `release` for each
 * popped slot. Returns true when the committable offset advanced.
 */
bool cv_track_done(cv_partition_track_t *t, cv_offset_slot_t *slot,
                   void (*release)(cv_offset_slot_t *slot, void *ud), void *ud);

#endif
