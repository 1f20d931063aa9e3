/*
 * cv_msg — the messages Converge processes exchange, and their msgpack codecs.
 *
 * Every message is a msgpack map with short keys and a version field "v".
 * Decoders are strict: a wrong type, a missing required field, an unknown
 * message type or version, an over-long string or trailing bytes are errors
 * (CV_EPROTO / CV_EVERSION / CV_ETOOBIG) with the reason in errstr, so that
 * a poison message is dead-lettered with a precise reason.
 *
 * Flows:
 *   CV_MSG_STACK   convergectl → converge.check: expand a traversal of a stack
 *   CV_MSG_CHECK   observer/engine → converge.check: converge one graph node
 *   CV_MSG_OBSERVE engine → converge.observe: observe one node until settled
 *   CV_MSG_DEAD    any worker → converge.dead: a message that cannot be handled
 *   CV_MSG_SIGNAL  convergectl → converge.check: apply the signals a resource
 *                  was sent (stored in Redis before the job; `signal` names
 *                  the one that asked, for logs and dead letters)
 */
#ifndef CV_MSG_H
#define CV_MSG_H

#include <stddef.h>
#include <stdint.h>

#define CV_MSG_VERSION 1
#define CV_ID_MAX 64    /* stack ids, worker ids (with the NUL) */
#define CV_NAME_MAX 256 /* resource names (with the NUL) */
#define CV_REASON_MAX 512
/* The most graph nodes of a traversal whose jobs stay in the express lane. */
#define CV_EXPRESS_NODES_MAX 200
/* The most graph nodes one CHECK message carries: its own and `nodes`. */
#define CV_MSG_NODES_MAX 64
/* The fewest messages n jobs published together go out in, while that
 * leaves each more than one: every partition, and so every engine, gets
 * some of a small stack's jobs. */
#define CV_MSG_SPREAD 16

typedef enum {
    CV_MSG_STACK = 1,
    CV_MSG_CHECK = 2,
    CV_MSG_OBSERVE = 3,
    CV_MSG_DEAD = 4,
    CV_MSG_SIGNAL = 5,
} cv_msg_type_t;

/* Graph-node phases: update nodes converge a resource to the definition;
 * cleanup nodes remove a resource version (delete, replaced, left the stack). */
typedef enum { CV_PHASE_UPDATE = 0, CV_PHASE_CLEANUP = 1 } cv_phase_t;

/* What a stack traversal does: the one table of traversal kinds, giving the
 * enum, the wire value (the "k" field) and the name used in Redis scripts,
 * logs and the CLI (cv_trav_kind_name / cv_trav_kind_parse). */
#define CV_TRAV_KIND_MAP(XX)                                                                       \
    XX(CREATE, 0)                                                                                  \
    XX(UPDATE, 1)                                                                                  \
    XX(DELETE, 2)                                                                                  \
    XX(ROLLBACK, 3)

typedef enum {
#define CV_TRAV_KIND_ENUM(name, value) CV_TRAV_##name = value,
    CV_TRAV_KIND_MAP(CV_TRAV_KIND_ENUM)
#undef CV_TRAV_KIND_ENUM
} cv_trav_kind_t;

typedef struct cv_msg {
    uint8_t type;               /* cv_msg_type_t */
    char stack[CV_ID_MAX];      /* stack id */
    uint64_t traversal;         /* every job names its traversal */
    char resource[CV_NAME_MAX]; /* CHECK, OBSERVE, SIGNAL */
    uint8_t phase;              /* CHECK, OBSERVE: cv_phase_t */
    uint8_t kind;               /* STACK: cv_trav_kind_t */
    /* OBSERVE: the record version the action wrote; CHECK: 0, or the
     * version at which an observer saw a walk's step end (a STEP request) */
    uint64_t version;
    uint32_t attempt; /* redelivery count kept by republishers */
    /* OBSERVE: 1 when the job watches an older traversal's action still in
     * flight for its own traversal, which then checks the node again. */
    uint8_t watch;
    /* STACK, CHECK, OBSERVE, SIGNAL: 1 when the job rides the express lane
     * (the topics' ".express" twins, consumed ahead of the others): a small
     * stack's jobs never queue behind a big one's. Jobs a job publishes
     * inherit it; an expansion of more than CV_EXPRESS_NODES_MAX nodes
     * publishes its roots, and so all below them, in the bulk lane. */
    uint8_t express;
    char signal[CV_ID_MAX]; /* SIGNAL: the signal's id */
    /* CHECK: the jobs of more graph nodes of the same stack and traversal,
     * carried by one Kafka message (an expansion's roots, the successors one
     * node made ready): their node names ("u/<resource>", "c/<resource>",
     * cv_node_name) joined by '/' (no resource name has one); at most
     * CV_MSG_NODES_MAX - 1 of them. Not owned; decoded, it points into the
     * decoded buffer. cv_msg_next_node hands them out one job at a time. */
    const char *nodes;
    size_t nodes_len;
    /* DEAD only */
    char reason[CV_REASON_MAX];
    const char *original; /* DEAD: the original bytes (not owned; points into the decoded buffer) */
    size_t original_len;
} cv_msg_t;

/* Sets m's phase and resource from a graph node name ("u/web", "c/db").
 * CV_EINVAL when it is not one. */
int cv_msg_set_node(cv_msg_t *m, const char *node, size_t len);

/* The jobs of a CHECK message one at a time: *pos starts at 0; each call
 * fills `out` with the message's own job first, then one per node of
 * `nodes` (out's `nodes` empty), and returns 1, or 0 when there is no more.
 * A decoded message's nodes were checked by the decoder. */
int cv_msg_next_node(const cv_msg_t *m, size_t *pos, cv_msg_t *out);

/* How many of n CHECK jobs published together go in one message: n spread
 * over CV_MSG_SPREAD messages, at least 1, at most CV_MSG_NODES_MAX. */
size_t cv_msg_batch_size(size_t n);

/* Encodes into a new malloc'd buffer; returns 0 or CV_EINVAL / CV_ENOMEM. */
int cv_msg_encode(const cv_msg_t *m, char **buf, size_t *len);

/* Decodes `buf`; returns 0 or a negative CV_E* with errstr saying why. */
int cv_msg_decode(const char *buf, size_t len, cv_msg_t *m, char *errstr, size_t errstr_size);

/* The Kafka key of a message: "stack/resource" for CHECK, OBSERVE and
 * SIGNAL, so one resource's jobs keep their order; stack jobs use "stack". Writes at most `size`
 * bytes; returns the length. */
size_t cv_msg_key(const cv_msg_t *m, char *key, size_t size);

const char *cv_msg_type_name(uint8_t type);
const char *cv_phase_name(uint8_t phase);
/* "CREATE", "UPDATE", "DELETE", "ROLLBACK"; "UNKNOWN" for any other value. */
const char *cv_trav_kind_name(uint8_t kind);

/* The inverse of cv_trav_kind_name: the cv_trav_kind_t named exactly `name`
 * (case-sensitive), or CV_EINVAL for NULL, "UNKNOWN" or any other string. */
int cv_trav_kind_parse(const char *name);

#endif
