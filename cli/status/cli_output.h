/*
 * cli_output — turning what Redis holds into output: JSON documents (with
 * strings that are always valid UTF-8, whatever bytes a record holds) and
 * aligned text tables.
 */
#ifndef CLI_OUTPUT_H
#define CLI_OUTPUT_H

#include <jansson.h>
#include <stddef.h>

/* A JSON string of `s` (len bytes); bytes that are not UTF-8 become U+FFFD. */
json_t *cli_json_strn(const char *s, size_t len);
json_t *cli_json_str(const char *s);

/* A field of a record read from a Redis hash (an object of strings): its
 * text, "" when absent; its number, 0 when absent. */
const char *cli_field_str(const json_t *rec, const char *field);
double cli_field_num(const json_t *rec, const char *field);

/* The type a resource reports, as Heat's Resource.type(): the one the
 * template wrote (`My::Thing`), not the one the environment's
 * resource_registry maps it to. `def` is its entry of the running
 * definition ({"type", "declared_type"}: cli_def_resources; NULL when it
 * left the template), `rec` its record's fields (NULL or {} when none).
 * The definition's while the record is of the type the definition maps to
 * (a type that never updates records nothing when only the written type
 * changed), else the record's (a version being replaced or cleaned up). */
const char *cli_reported_type(const json_t *def, const json_t *rec);

/* A JSON value stored as text (attributes, outputs): the parsed value, its
 * sealed values opened (cv_seal.h), or `fallback` (a new reference is
 * taken) when the text is empty or not JSON. A value sealed with a key this
 * process lacks is "******" (cli_sealed_warn says why). */
json_t *cli_json_parse(const char *text, json_t *fallback);

/* The smallest stream id after `id` ("ms-seq"): where the next XRANGE
 * page starts (XRANGE's exclusive "(" needs Redis 6.2). */
void cli_stream_next_id(const char *id, char *buf, size_t size);

/* Says once on stderr why sealed values are shown as "******": the reader
 * has no key file, or not the key that sealed them. */
void cli_sealed_warn(const char *why);

/* Prints a document, indented, with a newline (timestamps keep ms). */
void cli_print_json(const json_t *doc);

/* Prints a document on one line (JSON Lines, for --follow). */
void cli_print_json_line(const json_t *doc);

/* An aligned table: `rows` is an array of arrays of strings, the first row
 * the header; every column but the last is padded to its widest cell. */
void cli_print_table(const json_t *rows);

/* ---- as Heat writes them ---- */

/* `v` as Python's json.dumps writes it, which Heat uses for a json
 * parameter's value in stack show: ", " and ": " between items, non-ASCII
 * and control characters as \uXXXX, reals as Python's repr ("1.5",
 * "1e+16"). A malloc'd string; NULL when out of memory. */
char *cli_py_json_dumps(const json_t *v);

/* `msg` with every limit hint of cv_limits_check ("(--max-resources,
 * CONVERGE_MAX_RESOURCES)") phrased as what a user of convergectl can
 * change: "(CONVERGE_MAX_RESOURCES, or the workers' --max-resources)";
 * convergectl has no --max-* option. (The template loader's nesting error
 * names its settings itself.) A malloc'd string; NULL when out of
 * memory. */
char *cli_limit_hints(const char *msg);

/* The failed resources of a stack's traversals `from` and later (from < 0:
 * of the last traversal in which a resource failed, and later), from its
 * events (entries as `convergectl events -o json` gives them: "resource",
 * "physical_id", "action", "status", "reason", "traversal"): [{"resource",
 * "action", "status", "reason", "physical_id"}], one per resource, with
 * its latest failure, in the order they first failed. The stack's own events (resource
 * `stack_name`) are not resources, and a refused signal (SIGNAL FAILED) is no failure of its
 * resource. A new array. */
json_t *cli_failed_resources(const json_t *events, long long from, const char *stack_name);

#endif
