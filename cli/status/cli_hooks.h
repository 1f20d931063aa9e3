/*
 * cli_hooks — clearing the hook (Heat's breakpoint) a resource waits on:
 * what `convergectl hook-clear` and a signal {"unset_hook": HOOK} both do.
 */
#ifndef CLI_HOOKS_H
#define CLI_HOOKS_H

#include <stddef.h>

#include "cli_common.h"

/*
 * Clears the hook `hook` ("" : the one it waits on) of resource `resource`
 * of stack `id` with hook_clear.lua (the event "Hook <hook> is cleared"),
 * then publishes the CHECK job that lets the resource go on; the hook
 * cleared is written into `cleared`. CLI_OK; CLI_USAGE when the resource
 * does not wait on that hook (Heat's refusal reported: `The "pre-update"
 * hook is not defined on resource "r" of Stack "s" [id]`); CLI_SERVICE.
 */
int cli_hook_clear(cli_t *cli, const char *id, const char *resource, const char *hook,
                   char *cleared, size_t size);

#endif
