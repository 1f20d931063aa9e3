/*
 * cv__fn_messages — Heat's texts for bad arguments to the intrinsic
 * functions (heat/engine/hot/functions.py), shared by the checks made when
 * a template is validated (intrinsic_check.c) and those made when a call
 * is resolved (intrinsic*.c), so both say what Heat says. Texts that name
 * the function take it as "%s".
 */
#ifndef CV__FN_MESSAGES_H
#define CV__FN_MESSAGES_H

#include <jansson.h>
#include <stddef.h>

/* A value as Python's repr() shows it, cut to `size` - 1 bytes (Heat
 * quotes repr(value)[:200]), and as type() names it (py_repr.c). */
#define CV__PY_REPR_MAX 201
void cv__py_repr(const json_t *v, char *buf, size_t size);
const char *cv__py_type(const json_t *v);

#define CV__GET_PARAM_NO_ARGS "Function \"get_param\" must have arguments"
#define CV__GET_PARAM_NOT_LIST "Argument to \"get_param\" must be string or list"
#define CV__GET_PARAM_NAME "Parameter name in \"get_param\" must be string"
#define CV__GET_PARAM_PATH "Path components in \"get_param\" must be strings"
#define CV__PARAM_MISSING "The Parameter (%s) was not provided."

#define CV__GET_ATTR_NOT_LIST "Argument to \"get_attr\" must be a list"
/* Before 2015-10-15, when the attribute could not be left out. */
#define CV__GET_ATTR_FORM                                                                          \
    "Arguments to \"get_attr\" must be of the form [resource_name, attribute, (path), ...]"
#define CV__GET_ATTR_FORMS                                                                         \
    "Arguments to \"get_attr\" can be of the next forms: [resource_name] or [resource_name, "      \
    "attribute, (path), ...]"

#define CV__REPLACE_NOT_MAP "Arguments to \"%s\" must be a map"
#define CV__REPLACE_SYNTAX                                                                         \
    "\"%s\" syntax should be %s:\n              template: This is var1 template var2\n"            \
    "              params:\n                var1: a\n                var2: string"
#define CV__REPLACE_PARAMS_MAPPING "\"%s\" parameters must be a mapping"
#define CV__REPLACE_PARAMS_MAP "\"%s\" params must be a map"
#define CV__REPLACE_TEMPLATE "\"%s\" template must be a string"
/* Before 2015-10-15, when lists and maps were not substituted as JSON. */
#define CV__REPLACE_VALUE "\"%s\" params must be strings or numbers, param %s is not valid"

/* Before 2015-10-15 list_join took one list, and said so. */
#define CV__JOIN_USAGE_ONE                                                                         \
    "Incorrect arguments to \"list_join\" should be: \"list_join\" : [ \" \", [ \"str1\", "        \
    "\"str2\"]]"
#define CV__JOIN_USAGE                                                                             \
    "Incorrect arguments to \"list_join\" should be: \"list_join\" : [ \" \", [ \"str1\", "        \
    "\"str2\"] ...]"
#define CV__JOIN_NOT_LIST "\"list_join\" must operate on a list"
#define CV__JOIN_DELIMITER "\"list_join\" delimiter must be a string"
/* Followed by the item as Python's repr shows it. */
#define CV__JOIN_ITEM "Items to join must be string, map or list not %s"

#define CV__SPLIT_USAGE                                                                            \
    "Incorrect arguments to \"str_split\" should be: \"str_split\" : [ \",\", \"apples,pears\", "  \
    "<index>]"
#define CV__SPLIT_INDEX                                                                            \
    "Incorrect index to \"str_split\" should be: \"str_split\" : [ \",\", \"apples,pears\", "      \
    "<index>]"
#define CV__SPLIT_RANGE "Incorrect index to \"str_split\" should be between 0 and %lld"

#define CV__CONCAT_USAGE                                                                           \
    "Incorrect arguments to \"%s\" should be: \"%s\" : [ [ <value 1>, <value 2> ], [ <value 3>, "  \
    "<value 4> ] ]"
/* The arguments, then the item, as JSON. */
#define CV__CONCAT_ITEM                                                                            \
    "Incorrect arguments: Items to concat must be lists. %s contains an item that is not a list: " \
    "%s"

#define CV__MERGE_USAGE                                                                            \
    "Incorrect arguments to \"map_merge\" should be: \"map_merge\" : [ { \"key1\": \"val1\" }, { " \
    "\"key2\": \"val2\" } ]"
/* The item's repr, then its type. */
#define CV__MERGE_ITEM                                                                             \
    "Incorrect arguments: Items to merge must be maps. %s is type %s instead of a dict"

#define CV__REPLACE_MAP_EXAMPLE                                                                    \
    "\"map_replace\" : [ { \"key1\": \"val1\" }, {\"keys\": {\"key1\": \"key2\"}, \"values\": "    \
    "{\"val1\": \"val2\"}}]"
#define CV__MAP_REPLACE_USAGE                                                                      \
    "Incorrect arguments to \"map_replace\" should be: " CV__REPLACE_MAP_EXAMPLE
#define CV__MAP_REPLACE_MAPS                                                                       \
    "Incorrect arguments: to \"map_replace\", arguments must be a list of maps. Example: "         \
    " " CV__REPLACE_MAP_EXAMPLE

#define CV__REPEAT_NOT_MAP "Arguments to \"repeat\" must be a map"
/* Holds "%", so passed as an argument, not a format. */
#define CV__REPEAT_SYNTAX                                                                          \
    "\"repeat\" syntax should be repeat:\n              template: This is %var%\n              "   \
    "for_each:\n                %var%: ['a', 'b', 'c']"
#define CV__REPEAT_FOR_EACH "The \"for_each\" argument to \"repeat\" must contain a map"
#define CV__REPEAT_LISTS "The values of the \"for_each\" argument to \"repeat\" must be lists"
#define CV__REPEAT_LISTS_OR_MAPS                                                                   \
    "The values of the \"for_each\" argument to \"repeat\" must be lists or maps"
#define CV__REPEAT_PERMUTATIONS "\"permutations\" should be boolean type for repeat function."
#define CV__REPEAT_LENGTHS                                                                         \
    "For repeat, the length of for_each values should be equal if no nested loop."

#define CV__DIGEST_NOT_STRINGS "Argument to function \"digest\" must be a list of strings"
#define CV__DIGEST_USAGE "Function \"digest\" usage: [\"<algorithm>\", \"<value>\"]"
/* Heat lists hashlib.algorithms_available, which depends on the host's
 * OpenSSL; these are the ones Converge has. */
#define CV__DIGEST_ALGORITHM "Algorithm must be one of md5, sha1, sha224, sha256, sha384, sha512"

#define CV__URL_NOT_MAP "The arguments to \"make_url\" must be a map"
#define CV__URL_INVALID "Invalid arguments to \"make_url\": %s"
/* The argument's name. */
#define CV__URL_NOT_STRING "The \"%s\" argument to \"make_url\" must be a string"
#define CV__URL_QUERY "The \"query\" argument to \"make_url\" must be a map"
/* The port as given, then the arguments, as Python shows them. */
#define CV__URL_PORT "Invalid URL port \"%s\" for make_url called with %s"
#define CV__URL_PORT_RANGE "Invalid URL port %lld, must be in range 1-65535"
#define CV__URL_SCHEME "URL \"scheme\" should not contain ':'"

#endif
