/*
 * cv_seal — encryption at rest of the values a stack keeps secret (hidden
 * parameters' values, resource properties and attributes), with libsodium's
 * XChaCha20-Poly1305 and a key ring read from a key file.
 *
 * A sealed value is a JSON string, the token
 *     cv:sealed:1:<key id>:<base64url of nonce || ciphertext>
 * whose plaintext is the JSON text of the value it replaces; the key id is
 * bound to the ciphertext as associated data. Sealed values sit anywhere in
 * the stored JSON (a whole record field, or one parameter's value), so the
 * Lua scripts, which never read these values, pass them through, and a
 * reader opens them by replacing each token, quotes included, with the
 * JSON text it seals (cv_unseal): no reader needs to know which values were
 * sealed.
 *
 * The key ring is the process's (cv_seal_use): every program that reads or
 * writes a stack loads the one key file of the deployment. The first key of
 * the file seals; every key opens. Rotation (docs/security.md): put the new
 * key first, keep the old one until `convergectl rekey` has re-sealed every
 * stored value, then remove it.
 *
 * Pure: the caller reads the key file.
 */
#ifndef CV_SEAL_H
#define CV_SEAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define CV_SEAL_PREFIX "cv:sealed:1:"
#define CV_SEAL_KEY_ID_MAX 32
#define CV_SEAL_KEYS_MAX 16

typedef struct cv_keyring cv_keyring_t;

/* Parses a key file's text: one key a line, "<id> <base64 of 32 bytes>",
 * the id 1 to CV_SEAL_KEY_ID_MAX of [A-Za-z0-9_-]; blank lines and lines
 * starting with '#' are skipped. At least one key, ids unique. NULL with
 * errstr naming the line on bad input. */
cv_keyring_t *cv_keyring_parse(const char *text, char *errstr, size_t errstr_size);
void cv_keyring_free(cv_keyring_t *ring);

/* The id of the key that seals (the file's first). */
const char *cv_keyring_current(const cv_keyring_t *ring);

/* Makes `ring` the process's (NULL: none; the previous one is freed). Not
 * for use from two threads at once: programs set it at start and from their
 * loop. */
void cv_seal_use(cv_keyring_t *ring);
const cv_keyring_t *cv_seal_ring(void);

/* Whether the process seals what it writes (it has a key ring). */
bool cv_seal_enabled(void);

/* A sealed copy of `v` (a JSON string token) when the process seals, else a
 * new reference to `v`. An empty object or array is never sealed: it holds
 * nothing to hide, and most records' attributes are one (a token would cost
 * a seal and ~90 bytes each time). NULL only when out of memory. */
json_t *cv_seal_json(const json_t *v);

/* The compact JSON text of `v`, sealed when the process seals: what a
 * writer stores for a secret-bearing field. malloc'ed; NULL when out of
 * memory. */
char *cv_seal_dumps(const json_t *v);

/* The compact JSON text of the object `obj` with the values of the members
 * named in the array `names` sealed (every member when `names` is NULL):
 * a stack's parameters with its hidden ones sealed. Sealed only when the
 * process seals. malloc'ed; NULL when out of memory. */
char *cv_seal_members_dumps(const json_t *obj, const json_t *names);

/* Whether `text` holds a sealed token. */
bool cv_sealed_in(const char *text, size_t len);

/* Opens every sealed token of the JSON text `text`: *out is a malloc'ed copy
 * with each token (a JSON string) replaced by the JSON text it seals, or
 * NULL when `text` holds none (nothing allocated). 0, or CV_EIO with errstr
 * naming the key id when a token cannot be opened: no key ring, a key id
 * the ring lacks, a token altered or cut. */
int cv_unseal(const char *text, size_t len, char **out, char *errstr, size_t errstr_size);

/* json_loads of `text` (JSON_DECODE_ANY) after cv_unseal. NULL on a parse
 * error; *rc (when not NULL) is CV_EIO, errstr filled, when a token could
 * not be opened, else 0. */
json_t *cv_unseal_loads(const char *text, int *rc, char *errstr, size_t errstr_size);

/* `text` with every sealed token re-sealed with the current key unless it
 * already is: *out malloc'ed, or NULL when nothing changed. 0, or CV_EIO
 * with errstr (a token cannot be opened). What `convergectl rekey` writes. */
int cv_reseal(const char *text, size_t len, char **out, char *errstr, size_t errstr_size);

#endif
