#include "cv_slot.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* CRC16-CCITT (XMODEM: polynomial 0x1021, initial 0), bit by bit: keys are
 * short and this is not on a path where a table would pay for itself. */
static uint16_t crc16(const char *p, size_t len)
{
    uint16_t crc = 0;
    for (size_t i = 0; i < len; i++) {
        crc ^= (uint16_t)((uint8_t)p[i] << 8);
        for (int b = 0; b < 8; b++)
            crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
    }
    return crc;
}

unsigned cv_slot(const char *key, size_t len)
{
    const char *open = memchr(key, '{', len);
    if (open) {
        size_t from = (size_t)(open - key) + 1;
        const char *close = memchr(key + from, '}', len - from);
        /* an empty tag ("{}") hashes the whole key, as Redis does */
        if (close && close > key + from)
            return crc16(key + from, (size_t)(close - key) - from) & (CV_SLOTS - 1);
    }
    return crc16(key, len) & (CV_SLOTS - 1);
}

int cv_slot_common(const char *const *keys, size_t n)
{
    int slot = -2;
    for (size_t i = 0; i < n; i++) {
        if (!keys[i])
            continue;
        int s = (int)cv_slot(keys[i], strlen(keys[i]));
        if (slot == -2)
            slot = s;
        else if (s != slot)
            return -1;
    }
    return slot == -2 ? 0 : slot;
}

int cv_slot_key_index(int argc, const char *const *argv)
{
    static const char *const keyless[] = {"PING",   "TIME",    "INFO",   "SCRIPT",  "CLUSTER",
                                          "AUTH",   "SELECT",  "MULTI",  "EXEC",    "DISCARD",
                                          "ASKING", "UNWATCH", "DBSIZE", "PUBLISH", "HELLO"};
    if (argc < 2)
        return -1;
    for (size_t i = 0; i < sizeof(keyless) / sizeof(keyless[0]); i++)
        if (strcasecmp(argv[0], keyless[i]) == 0)
            return -1;
    if (strcasecmp(argv[0], "EVAL") == 0 || strcasecmp(argv[0], "EVALSHA") == 0)
        return argc > 3 && atoi(argv[2]) > 0 ? 3 : -1;
    return 1;
}

int cv_slot_redirect_parse(const char *err, cv_slot_redirect_t *out)
{
    char word[8], addr[300];
    unsigned slot;
    if (!err || sscanf(err, "%7s %u %299s", word, &slot, addr) != 3 || slot >= CV_SLOTS)
        return -1;
    int ask = strcmp(word, "ASK") == 0;
    if (!ask && strcmp(word, "MOVED") != 0)
        return -1;
    char *colon = strrchr(addr, ':'); /* the last: an IPv6 host has colons of its own */
    char *end;
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    if (!colon || colon == addr || *end || port <= 0 || port > 65535 ||
        (size_t)(colon - addr) >= sizeof(out->host))
        return -1;
    out->ask = ask;
    out->slot = slot;
    memcpy(out->host, addr, (size_t)(colon - addr));
    out->host[colon - addr] = '\0';
    out->port = (int)port;
    return 0;
}
