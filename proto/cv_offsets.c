#include "cv_offsets.h"

#include <stddef.h>

void cv_track_init(cv_partition_track_t *t)
{
    t->head = t->tail = NULL;
    t->committable = -1;
}

void cv_track_push(cv_partition_track_t *t, cv_offset_slot_t *slot, int64_t offset)
{
    slot->offset = offset;
    slot->done = false;
    slot->next = NULL;
    if (t->tail)
        t->tail->next = slot;
    else
        t->head = slot;
    t->tail = slot;
}

bool cv_track_done(cv_partition_track_t *t, cv_offset_slot_t *slot,
                   void (*release)(cv_offset_slot_t *slot, void *ud), void *ud)
{
    bool advanced = false;
    slot->done = true;
    while (t->head && t->head->done) {
        cv_offset_slot_t *s = t->head;
        t->head = s->next;
        if (!t->head)
            t->tail = NULL;
        t->committable = s->offset + 1;
        advanced = true;
        release(s, ud);
    }
    return advanced;
}
