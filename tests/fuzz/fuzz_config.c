/*
 * fuzz_config — the writers of the config types on arbitrary input: the
 * YAML writer of OS::Heat::CloudConfig (engine/hot/rtype_yaml_dump.c) on
 * any JSON value, and OS::Heat::MultipartMime's message on any part text,
 * as inline text and as a multipart message to take apart.
 *
 * The first byte chooses: even, the rest is JSON for the YAML writer; odd,
 * the rest is the text of a part. Besides never crashing or leaking, the
 * YAML ends with a line break and is valid UTF-8 ASCII (allow_unicode is
 * off: everything else is escaped), and the message begins with its
 * multipart header and ends with its close delimiter.
 */
#define FUZZ_NAME "fuzz_config"
#include "cv__rtype_internal.h"
#include "fuzz_util.h"

#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    fuzz_init(argc, argv);
    return 0;
}

static void check_yaml(const uint8_t *data, size_t size)
{
    json_t *v = json_loadb((const char *)data, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
    if (!v)
        return;
    char *yaml = cv__yaml_dump(v);
    if (!yaml)
        fail("no YAML", "out of memory");
    size_t n = strlen(yaml);
    if (n == 0 || yaml[n - 1] != '\n')
        fail("YAML does not end with a line break", yaml);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)yaml[i] >= 0x80 || (yaml[i] < 0x20 && yaml[i] != '\n'))
            fail("YAML holds a character PyYAML would escape", yaml);
    free(yaml);
    json_decref(v);
}

static void check_mime(const uint8_t *data, size_t size)
{
    json_t *text = json_stringn_nocheck((const char *)data, strnlen((const char *)data, size));
    json_t *props = json_pack("{s:[{s:O,s:s},{s:O,s:s,s:s}]}", "parts", "config", text, "type",
                              "multipart", "config", text, "type", "text", "filename", "f.sh");
    char *mime = cv__mime_message(props, "fuzz");
    if (!mime)
        fail("no message", "out of memory");
    if (strncmp(mime, "Content-Type: multipart/mixed; boundary=\"", 41) != 0)
        fail("no multipart header", mime);
    size_t n = strlen(mime);
    if (n < 4 || strcmp(mime + n - 3, "--\n") != 0)
        fail("no close delimiter", mime);
    free(mime);
    json_decref(props);
    json_decref(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    if (data[0] % 2 == 0)
        check_yaml(data + 1, size - 1);
    else
        check_mime(data + 1, size - 1);
    return 0;
}
