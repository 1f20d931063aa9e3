#include "cv_seal.h"

#include "cv_base.h"

#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_BYTES crypto_aead_xchacha20poly1305_ietf_KEYBYTES
#define NONCE_BYTES crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG_BYTES crypto_aead_xchacha20poly1305_ietf_ABYTES
#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING

typedef struct seal_key {
    char id[CV_SEAL_KEY_ID_MAX + 1];
    unsigned char key[KEY_BYTES];
} seal_key_t;

struct cv_keyring {
    size_t n;
    seal_key_t keys[CV_SEAL_KEYS_MAX];
};

static cv_keyring_t *process_ring;

static bool id_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
}

static const seal_key_t *find_key(const cv_keyring_t *ring, const char *id, size_t len)
{
    for (size_t i = 0; ring && i < ring->n; i++)
        if (strlen(ring->keys[i].id) == len && memcmp(ring->keys[i].id, id, len) == 0)
            return &ring->keys[i];
    return NULL;
}

/* One line "<id> <base64 key>" into k; 0 or CV_EINVAL with errstr. */
static int parse_line(const cv_keyring_t *ring, seal_key_t *k, const char *line, size_t len,
                      int lineno, char *errstr, size_t errstr_size)
{
    size_t idlen = 0;
    while (idlen < len && id_char(line[idlen]))
        idlen++;
    if (idlen == 0 || idlen > CV_SEAL_KEY_ID_MAX || idlen == len ||
        (line[idlen] != ' ' && line[idlen] != '\t'))
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "line %d: expected \"<id> <base64 key>\", the id 1 to %d of "
                         "[A-Za-z0-9_-]",
                         lineno, CV_SEAL_KEY_ID_MAX);
    if (find_key(ring, line, idlen))
        return cv_seterr(errstr, errstr_size, CV_EINVAL, "line %d: key id %.*s given twice", lineno,
                         (int)idlen, line);
    memcpy(k->id, line, idlen);
    k->id[idlen] = '\0';
    const char *b = line + idlen;
    size_t blen = len - idlen;
    while (blen && (*b == ' ' || *b == '\t'))
        b++, blen--;
    while (blen && (b[blen - 1] == ' ' || b[blen - 1] == '\t' || b[blen - 1] == '\r'))
        blen--;
    size_t got = 0;
    if (sodium_base642bin(k->key, sizeof(k->key), b, blen, NULL, &got, NULL,
                          sodium_base64_VARIANT_ORIGINAL) != 0 ||
        got != KEY_BYTES)
        return cv_seterr(errstr, errstr_size, CV_EINVAL,
                         "line %d: key %s is not the base64 of %d bytes", lineno, k->id,
                         (int)KEY_BYTES);
    return 0;
}

cv_keyring_t *cv_keyring_parse(const char *text, char *errstr, size_t errstr_size)
{
    if (sodium_init() < 0) {
        cv_seterr(errstr, errstr_size, CV_EINVAL, "libsodium cannot start");
        return NULL;
    }
    cv_keyring_t *ring = calloc(1, sizeof(*ring));
    if (!ring)
        return NULL;
    int lineno = 0;
    for (const char *p = text; *p;) {
        const char *end = strchr(p, '\n');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        lineno++;
        bool blank = strspn(p, " \t\r") >= len;
        if (!blank && p[0] != '#') {
            if (ring->n == CV_SEAL_KEYS_MAX) {
                cv_seterr(errstr, errstr_size, CV_EINVAL, "line %d: more than %d keys", lineno,
                          CV_SEAL_KEYS_MAX);
                cv_keyring_free(ring);
                return NULL;
            }
            if (parse_line(ring, &ring->keys[ring->n], p, len, lineno, errstr, errstr_size) != 0) {
                cv_keyring_free(ring);
                return NULL;
            }
            ring->n++;
        }
        p += len + (end ? 1 : 0);
    }
    if (ring->n == 0) {
        cv_seterr(errstr, errstr_size, CV_EINVAL, "no key (a line \"<id> <base64 key>\")");
        cv_keyring_free(ring);
        return NULL;
    }
    return ring;
}

void cv_keyring_free(cv_keyring_t *ring)
{
    if (ring)
        sodium_memzero(ring, sizeof(*ring));
    free(ring);
}

const char *cv_keyring_current(const cv_keyring_t *ring)
{
    return ring ? ring->keys[0].id : "";
}

void cv_seal_use(cv_keyring_t *ring)
{
    if (ring != process_ring)
        cv_keyring_free(process_ring);
    process_ring = ring;
}

const cv_keyring_t *cv_seal_ring(void)
{
    return process_ring;
}

bool cv_seal_enabled(void)
{
    return process_ring != NULL;
}

/* The token sealing `plain` with the ring's current key; malloc'ed. */
static char *seal_text(const cv_keyring_t *ring, const char *plain, size_t len)
{
    const seal_key_t *k = &ring->keys[0];
    size_t idlen = strlen(k->id), blen = NONCE_BYTES + len + TAG_BYTES;
    unsigned char *box = malloc(blen);
    size_t tlen = strlen(CV_SEAL_PREFIX) + idlen + 1 + sodium_base64_ENCODED_LEN(blen, B64);
    char *token = malloc(tlen);
    if (!box || !token) {
        free(box);
        free(token);
        return NULL;
    }
    randombytes_buf(box, NONCE_BYTES);
    crypto_aead_xchacha20poly1305_ietf_encrypt(
        box + NONCE_BYTES, NULL, (const unsigned char *)plain, len, (const unsigned char *)k->id,
        idlen, NULL, box, k->key);
    int n = snprintf(token, tlen, "%s%s:", CV_SEAL_PREFIX, k->id);
    sodium_bin2base64(token + n, tlen - (size_t)n, box, blen, B64);
    free(box);
    return token;
}

static bool empty_container(const json_t *v)
{
    return (json_is_object(v) && json_object_size(v) == 0) ||
           (json_is_array(v) && json_array_size(v) == 0);
}

json_t *cv_seal_json(const json_t *v)
{
    if (!process_ring || empty_container(v))
        return json_incref((json_t *)v);
    char *plain = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
    char *token = plain ? seal_text(process_ring, plain, strlen(plain)) : NULL;
    json_t *s = token ? json_string(token) : NULL;
    free(plain);
    free(token);
    return s;
}

char *cv_seal_dumps(const json_t *v)
{
    json_t *sealed = cv_seal_json(v);
    char *text = sealed ? json_dumps(sealed, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
    json_decref(sealed);
    return text;
}

char *cv_seal_members_dumps(const json_t *obj, const json_t *names)
{
    if (!process_ring || !json_is_object(obj))
        return json_dumps(obj, JSON_COMPACT | JSON_ENCODE_ANY);
    json_t *copy = json_copy((json_t *)obj);
    const char *name;
    json_t *v;
    bool ok = copy != NULL;
    json_object_foreach((json_t *)obj, name, v)
    {
        bool named = !names;
        for (size_t i = 0; !named && i < json_array_size(names); i++)
            named = json_is_string(json_array_get(names, i)) &&
                    strcmp(json_string_value(json_array_get(names, i)), name) == 0;
        if (ok && named)
            ok = json_object_set_new(copy, name, cv_seal_json(v)) == 0;
    }
    char *text = ok ? json_dumps(copy, JSON_COMPACT) : NULL;
    json_decref(copy);
    return text;
}

bool cv_sealed_in(const char *text, size_t len)
{
    return text && memmem(text, len, "\"" CV_SEAL_PREFIX, strlen(CV_SEAL_PREFIX) + 1) != NULL;
}

/* The token starting at `t` (after its opening quote): its key id and
 * base64 spans and its length up to the closing quote. False when it is
 * not a whole token. */
static bool token_at(const char *t, const char *end, const char **id, size_t *idlen,
                     const char **b64, size_t *blen, size_t *len)
{
    const char *p = t + strlen(CV_SEAL_PREFIX);
    *id = p;
    while (p < end && id_char(*p))
        p++;
    *idlen = (size_t)(p - *id);
    if (p == end || *p != ':' || *idlen == 0 || *idlen > CV_SEAL_KEY_ID_MAX)
        return false;
    *b64 = ++p;
    while (p < end && id_char(*p))
        p++;
    *blen = (size_t)(p - *b64);
    *len = (size_t)(p - t);
    return p < end && *p == '"';
}

/* Opens one token into a malloc'ed plaintext. */
static int open_token(const char *id, size_t idlen, const char *b64, size_t blen, char **plain,
                      size_t *plen, char *errstr, size_t errstr_size)
{
    const seal_key_t *k = find_key(process_ring, id, idlen);
    if (!k)
        return cv_seterr(errstr, errstr_size, CV_EIO,
                         process_ring ? "a value is sealed with key %.*s, which the key file "
                                        "(CONVERGE_SECRET_KEY_FILE) does not hold"
                                      : "a value is sealed with key %.*s and this process has "
                                        "no key file (CONVERGE_SECRET_KEY_FILE)",
                         (int)idlen, id);
    unsigned char *box = malloc(blen ? blen : 1);
    size_t got = 0;
    int rc = box ? sodium_base642bin(box, blen, b64, blen, NULL, &got, NULL, B64) : -1;
    *plain = NULL;
    if (rc == 0 && got >= NONCE_BYTES + TAG_BYTES) {
        size_t n = got - NONCE_BYTES - TAG_BYTES;
        unsigned long long out = 0;
        *plain = malloc(n + 1);
        if (*plain && crypto_aead_xchacha20poly1305_ietf_decrypt(
                          (unsigned char *)*plain, &out, NULL, box + NONCE_BYTES, got - NONCE_BYTES,
                          (const unsigned char *)id, idlen, box, k->key) == 0) {
            (*plain)[out] = '\0';
            *plen = (size_t)out;
            free(box);
            return 0;
        }
    }
    free(box);
    free(*plain);
    *plain = NULL;
    return cv_seterr(errstr, errstr_size, CV_EIO,
                     "a value sealed with key %.*s cannot be opened: altered or cut", (int)idlen,
                     id);
}

/* Rewrites every whole token of `text`: `reseal` false replaces it (quotes
 * included) with its plaintext; true re-seals it as a token of the current
 * key (a token already of that key is kept). *out NULL when nothing changed. */
static int rewrite(const char *text, size_t len, bool reseal, char **out, char *errstr,
                   size_t errstr_size)
{
    *out = NULL;
    if (!cv_sealed_in(text, len))
        return 0;
    const char *end = text + len, *p = text, *q;
    size_t plen = strlen(CV_SEAL_PREFIX);
    cv_buf_t buf = {0};
    bool changed = false;
    while (!buf.failed && (q = memmem(p, (size_t)(end - p), "\"" CV_SEAL_PREFIX, plen + 1))) {
        const char *id, *b64;
        size_t idlen, blen, tlen;
        bool whole =
            (q == text || q[-1] != '\\') && token_at(q + 1, end, &id, &idlen, &b64, &blen, &tlen);
        if (!whole || (reseal && strlen(cv_keyring_current(process_ring)) == idlen &&
                       memcmp(cv_keyring_current(process_ring), id, idlen) == 0)) {
            cv_buf_add(&buf, p, (size_t)(q - p) + 1);
            p = q + 1;
            continue;
        }
        char *plain = NULL;
        size_t n = 0;
        int rc = open_token(id, idlen, b64, blen, &plain, &n, errstr, errstr_size);
        if (rc != 0) {
            cv_buf_free(&buf);
            return rc;
        }
        char *token = reseal ? seal_text(process_ring, plain, n) : NULL;
        cv_buf_add(&buf, p, (size_t)(q - p));
        if (!reseal)
            cv_buf_add(&buf, plain, n);
        else if (token)
            cv_buf_printf(&buf, "\"%s\"", token);
        else
            buf.failed = true; /* sealing ran out of memory */
        sodium_memzero(plain, n);
        free(plain);
        free(token);
        changed = true;
        p = q + 1 + tlen + 1;
    }
    if (!changed && !buf.failed) {
        cv_buf_free(&buf);
        return 0;
    }
    cv_buf_add(&buf, p, (size_t)(end - p));
    if (!(*out = cv_buf_take(&buf)))
        return cv_seterr(errstr, errstr_size, CV_ENOMEM, "out of memory opening sealed values");
    return 0;
}

int cv_unseal(const char *text, size_t len, char **out, char *errstr, size_t errstr_size)
{
    return rewrite(text, len, false, out, errstr, errstr_size);
}

int cv_reseal(const char *text, size_t len, char **out, char *errstr, size_t errstr_size)
{
    if (!process_ring) {
        *out = NULL;
        return cv_sealed_in(text, len) ? cv_seterr(errstr, errstr_size, CV_EIO,
                                                   "no key file (CONVERGE_SECRET_KEY_FILE)")
                                       : 0;
    }
    return rewrite(text, len, true, out, errstr, errstr_size);
}

json_t *cv_unseal_loads(const char *text, int *rc, char *errstr, size_t errstr_size)
{
    char *open = NULL;
    int r = text ? cv_unseal(text, strlen(text), &open, errstr, errstr_size) : 0;
    if (rc)
        *rc = r;
    if (!text || r != 0)
        return NULL;
    json_t *v = json_loads(open ? open : text, JSON_DECODE_ANY, NULL);
    if (open) {
        sodium_memzero(open, strlen(open));
        free(open);
    }
    return v;
}
