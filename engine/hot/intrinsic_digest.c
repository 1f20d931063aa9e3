/*
 * intrinsic_digest — Heat's digest function ({digest: [sha256, value]},
 * heat/engine/hot/functions.py: Digest) over cv__digest.
 *
 * Heat hashes value.encode('latin-1'): each character of the string is one
 * byte, and a character past U+00FF is an error, not its UTF-8 bytes. The
 * same is done here so that a digest computed by Heat and by us agree.
 */
#include "cv__digest.h"
#include "cv__fn_messages.h"
#include "cv__template_internal.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* The algorithm named by `name` in lowercase, as Heat accepts it in any
 * case; false when it is too long to be one. */
static bool lowercase_name(const char *name, char *out, size_t size)
{
    size_t n = strlen(name);
    if (n >= size)
        return false;
    for (size_t i = 0; i <= n; i++)
        out[i] = (char)tolower((unsigned char)name[i]);
    return true;
}

/* The latin-1 bytes of UTF-8 `s` (valid, as jansson keeps strings); 0 and
 * the first code point that has none in *bad when there is one. */
static int to_latin1(const char *s, size_t len, unsigned char *out, size_t *out_len,
                     unsigned long *bad)
{
    size_t n = 0;
    for (size_t i = 0; i < len; n++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x80) {
            out[n] = c;
            i++;
        } else if ((c & 0xe0) == 0xc0 && i + 1 < len && c <= 0xc3) {
            out[n] = (unsigned char)(((c & 0x1f) << 6) | ((unsigned char)s[i + 1] & 0x3f));
            i += 2;
        } else {
            unsigned long cp = (c & 0xe0) == 0xc0   ? c & 0x1f
                               : (c & 0xf0) == 0xe0 ? c & 0x0f
                                                    : c & 0x07;
            size_t more = (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : 3;
            for (size_t k = 1; k <= more && i + k < len; k++)
                cp = cp << 6 | ((unsigned char)s[i + k] & 0x3f);
            *bad = cp;
            return -1;
        }
    }
    *out_len = n;
    return 0;
}

json_t *cv__fn_digest(const json_t *args, cv__budget_t *budget, char *errstr, size_t errstr_size)
{
    bool strings = json_is_array(args);
    for (size_t i = 0; strings && i < json_array_size(args); i++)
        strings = json_is_string(json_array_get(args, i));
    if (!strings)
        return cv__fn_fail(errstr, errstr_size, CV__DIGEST_NOT_STRINGS);
    if (json_array_size(args) != 2)
        return cv__fn_fail(errstr, errstr_size, CV__DIGEST_USAGE);
    const json_t *alg = json_array_get(args, 0), *value = json_array_get(args, 1);
    char name[16], hex[CV__DIGEST_HEX_MAX];
    unsigned char *bytes = malloc(json_string_length(value) + 1);
    size_t n = 0;
    unsigned long bad = 0;
    if (!bytes)
        return cv__fn_fail(errstr, errstr_size, "out of memory");
    int rc = to_latin1(json_string_value(value), json_string_length(value), bytes, &n, &bad);
    if (rc == 0 && (!lowercase_name(json_string_value(alg), name, sizeof(name)) ||
                    cv__digest_hex(name, bytes, n, hex) != 0)) {
        free(bytes);
        return cv__fn_fail(errstr, errstr_size, CV__DIGEST_ALGORITHM);
    }
    free(bytes);
    if (rc != 0)
        return cv__fn_fail(errstr, errstr_size,
                           "digest: 'latin-1' codec can't encode character U+%04lX: ordinal not in "
                           "range(256)",
                           bad);
    if (CV__NODE_BYTES + strlen(hex) > budget->left)
        return cv__fn_too_large(budget, errstr, errstr_size, "digest");
    budget->left -= CV__NODE_BYTES + strlen(hex);
    json_t *out = json_string(hex);
    return out ? out : cv__fn_fail(errstr, errstr_size, "out of memory");
}
