/*
 * What the libFuzzer targets of tests/fuzz share: the entry points'
 * declarations, the start of LLVMFuzzerInitialize and, for a target that
 * defines FUZZ_NAME before including this file, fail().
 */
#ifndef CV_FUZZ_UTIL_H
#define CV_FUZZ_UTIL_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The arguments are not used; jansson's hash seed is fixed so that a run
 * can be repeated. */
static inline void fuzz_init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    json_object_seed(1);
}

#ifdef FUZZ_NAME
/* A property does not hold: abort, and libFuzzer keeps the input. */
static void fail(const char *what, const char *detail)
{
    fprintf(stderr, FUZZ_NAME ": %s: %s\n", what, detail);
    abort();
}
#endif

#endif
