/*
 * cv_slot — Redis Cluster's key slot: CRC16 (XMODEM) of the key, or of the
 * part inside its first non-empty {hash tag}, modulo 16384. A script or a
 * transaction may touch the keys of one slot only, so every key one script
 * call names must give the same slot (cv_slot_common). Pure.
 */
#ifndef CV_SLOT_H
#define CV_SLOT_H

#include <stddef.h>

#define CV_SLOTS 16384

/* The slot of key[0..len). */
unsigned cv_slot(const char *key, size_t len);

/* The slot every one of the n keys (NUL-terminated; NULL ones skipped) is
 * in, or -1 when two are in different slots; 0 when there is none. */
int cv_slot_common(const char *const *keys, size_t n);

/* Which argument of a command is the key that routes it to a node: 1 for
 * most commands, 3 for EVAL / EVALSHA with keys; -1 for a command without
 * keys (PING, TIME, SCRIPT, PUBLISH, ...), which any node serves. */
int cv_slot_key_index(int argc, const char *const *argv);

/* A redirection a cluster node answers: "MOVED <slot> <host>:<port>" (the
 * slot lives there now) or "ASK <slot> <host>:<port>" (this once, after
 * ASKING, while the slot migrates). */
typedef struct cv_slot_redirect {
    int ask; /* 1: ASK, 0: MOVED */
    unsigned slot;
    char host[256];
    int port;
} cv_slot_redirect_t;

/* Parses an error reply's text; 0, or -1 when it is no redirection. */
int cv_slot_redirect_parse(const char *err, cv_slot_redirect_t *out);

#endif
