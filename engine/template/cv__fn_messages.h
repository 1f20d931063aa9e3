/*
 * cv__fn_messages — Heat's texts for bad arguments to get_param, get_attr,
 * str_replace and list_join (heat/engine/hot/functions.py), shared by the
 * checks made when a template is validated (intrinsic_check.c) and those
 * made when a call is resolved (intrinsic.c), so both say what Heat says.
 * Texts that name the function take it as "%s".
 */
#ifndef CV__FN_MESSAGES_H
#define CV__FN_MESSAGES_H

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

#endif
