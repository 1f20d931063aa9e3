/*
 * Internal to the STACK step machine (cv_stackjob.h): stackjob.c is the
 * job's line (the definition read and checked, the expansion put in place,
 * the roots published); stackjob_write.c writes the expansion's drafts.
 */
#ifndef CV__STACKJOB_H
#define CV__STACKJOB_H

#include "cv_stackjob.h"

/* Adds to the answer the commands that write this expansion's drafts (each
 * emptied first, then filled in batches, each with its time to live: an
 * expansion that dies leaves nothing for long); 0 or CV_ENOMEM. They are
 * sent and forgotten: commands on one connection run in order, so the
 * stack_expanded that follows sees them all, and a lost connection fails
 * that script too. */
int cv__stackjob_write_drafts(cv_stackjob_t *x);

#endif
