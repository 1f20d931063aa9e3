#include "cv_offsets.h"

#include <stddef.h>

void cv_track_init(cv_partition_track_t *t)
{
    t->head = t->tail = NULL;
    t->last = -1;
    t->committable = -1;
}

void cv_track_push(cv_partition_track_t *t, cv_offset_slot_t *slot, int64_t offset)
{
    slot->offset = offset;
    slot->next = NULL;
    slot->prev = t->tail;
    if (t->tail)
        t->tail->next = slot;
    else
        t->head = slot;
    t->tail = slot;
    t->last = offset;
}

bool cv_track_done(cv_partition_track_t *t, cv_offset_slot_t *slot)
{
    bool was_oldest = slot == t->head;
    if (slot->prev)
        slot->prev->next = slot->next;
    else
        t->head = slot->next;
    if (slot->next)
        slot->next->prev = slot->prev;
    else
        t->tail = slot->prev;
    slot->prev = slot->next = NULL;
    if (!was_oldest)
        return false;
    t->committable = t->head ? t->head->offset : t->last + 1;
    return true;
}
