/*
 * The scenarios: small stacks of the built-in deterministic types, and what
 * an operator does to them while they converge.
 *
 * T1 is the stack every scenario creates: six resources of four types, with
 * get_attr, get_resource, list_join and depends_on edges, two roots (a, b),
 * a diamond (e after c and d) and a leaf reading two parents (f).
 *   a TestResource ─▶ c Value ─┬─▶ e None
 *   b RandomString ─▶ d TestResource ─┴─▶ f Value (c's value + d's id)
 * The updates change it in place (a, c), by replacement (d: its
 * update_replace_value does not allow updates), remove a resource (f), add
 * one (g), or make one fail (a, and a new h) so that a stack created with
 * rollback on rolls back.
 */
#include "scen.h"

#include <string.h>

#define HOT "\"heat_template_version\":\"2018-08-31\""
#define RES_A(v) "\"a\":{\"type\":\"OS::Heat::TestResource\",\"properties\":{\"value\":\"" v "\"}}"
#define RES_A_FAILING                                                                              \
    "\"a\":{\"type\":\"OS::Heat::TestResource\",\"properties\":{\"value\":\"a2\","                 \
    "\"fail\":true}}"
#define RES_B "\"b\":{\"type\":\"OS::Heat::RandomString\",\"properties\":{\"length\":8}}"
#define RES_C                                                                                      \
    "\"c\":{\"type\":\"OS::Heat::Value\",\"properties\":{\"value\":{\"get_attr\":[\"a\","          \
    "\"output\"]}}}"
#define RES_D(r)                                                                                   \
    "\"d\":{\"type\":\"OS::Heat::TestResource\",\"properties\":{\"value\":{\"get_attr\":[\"b\","   \
    "\"value\"]},\"update_replace_value\":\"" r "\"}}"
#define RES_E "\"e\":{\"type\":\"OS::Heat::None\",\"depends_on\":[\"c\",\"d\"]}"
#define RES_F                                                                                      \
    "\"f\":{\"type\":\"OS::Heat::Value\",\"properties\":{\"value\":{\"list_join\":[\"-\","         \
    "[{\"get_attr\":[\"c\",\"value\"]},{\"get_resource\":\"d\"}]]}}}"
#define RES_G "\"g\":{\"type\":\"OS::Heat::None\",\"depends_on\":[\"e\"]}"
#define RES_H_FAILING                                                                              \
    "\"h\":{\"type\":\"OS::Heat::TestResource\",\"properties\":{\"fail\":true},"                   \
    "\"depends_on\":[\"b\"]}"
#define OUTPUTS ",\"outputs\":{\"joined\":{\"value\":{\"get_attr\":[\"c\",\"value\"]}}}"

/* The create. */
static const char T1[] =
    "{" HOT ",\"resources\":{" RES_A("a1") "," RES_B "," RES_C "," RES_D("1") "," RES_E "," RES_F
                                                                              "}" OUTPUTS "}";
/* In place (a, c), replacement (d), removal (f), addition (g). */
static const char T2[] =
    "{" HOT ",\"resources\":{" RES_A("a2") "," RES_B "," RES_C "," RES_D("2") "," RES_E "," RES_G
                                                                              "}}";
/* Replacement only: d, whose new physical id f then reads (f in place). */
static const char T3[] =
    "{" HOT ",\"resources\":{" RES_A("a1") "," RES_B "," RES_C "," RES_D("2") "," RES_E "," RES_F
                                                                              "}" OUTPUTS "}";
/* An update that fails: a in place with fail, h created failing. */
static const char T4[] = "{" HOT ",\"resources\":{" RES_A_FAILING "," RES_B "," RES_C
                         "," RES_D("1") "," RES_E "," RES_F "," RES_H_FAILING "}}";
/* An update that replaces d and fails on i, a child of d: d's cleanup
 * waits for i, so the original d is still there when the rollback restores
 * it rather than create a third one. */
#define RES_I_FAILING                                                                              \
    "\"i\":{\"type\":\"OS::Heat::TestResource\",\"properties\":{\"fail\":true,"                    \
    "\"value\":{\"get_resource\":\"d\"}}}"
static const char T5[] = "{" HOT ",\"resources\":{" RES_A("a1") "," RES_B "," RES_C "," RES_D(
    "2") "," RES_E "," RES_F "," RES_I_FAILING "}" OUTPUTS "}";

const char scen_empty_tpl[] = "{" HOT ",\"resources\":{}}";

const scen_def_t scen_defs[] = {
    {.name = "create",
     .summary = "create of 6 resources",
     .create_tpl = T1,
     .expect = "CREATE_COMPLETE"},
    {.name = "update_during_create",
     .summary = "update (in place, replace, remove, add) begun during the create",
     .create_tpl = T1,
     .nops = 1,
     .ops = {{SCEN_OP_UPDATE, T2, 40, false}},
     .expect = "UPDATE_COMPLETE"},
    {.name = "update_during_update",
     .summary = "a second update (replace only) begun during the first",
     .create_tpl = T1,
     .nops = 2,
     .ops = {{SCEN_OP_UPDATE, T2, 0, true}, {SCEN_OP_UPDATE, T3, 30, false}},
     .expect = "UPDATE_COMPLETE"},
    {.name = "replace",
     .summary = "update replacing d (update_replace_value) after the create",
     .create_tpl = T1,
     .nops = 1,
     .ops = {{SCEN_OP_UPDATE, T3, 0, true}},
     .expect = "UPDATE_COMPLETE",
     .replaced = "d",
     .kept = "a,b,c,e"},
    {.name = "rollback",
     .summary = "failing update of a complete stack created with rollback on",
     .create_tpl = T1,
     .rollback = true,
     .nops = 1,
     .ops = {{SCEN_OP_UPDATE, T4, 0, true}},
     .expect = "ROLLBACK_COMPLETE"},
    {.name = "rollback_of_replace",
     .summary = "failing update that replaced d; the rollback restores the original d",
     .create_tpl = T1,
     .rollback = true,
     .nops = 1,
     .ops = {{SCEN_OP_UPDATE, T5, 0, true}},
     .expect = "ROLLBACK_COMPLETE",
     .kept = "a,b,c,d,e,f"},
    {.name = "rollback_during_create",
     .summary = "failing update begun during the create; rollback to the last complete one",
     .create_tpl = T1,
     .rollback = true,
     .nops = 1,
     .ops = {{SCEN_OP_UPDATE, T4, 40, false}},
     .expect = "ROLLBACK_COMPLETE"},
    {.name = "delete_during_update",
     .summary = "delete begun during an update of a complete stack",
     .create_tpl = T1,
     .nops = 2,
     .ops = {{SCEN_OP_UPDATE, T2, 0, true}, {SCEN_OP_DELETE, NULL, 30, false}},
     .expect = "DELETE_COMPLETE"},
    {.name = "delete_during_create",
     .summary = "delete begun during the create",
     .create_tpl = T1,
     .nops = 1,
     .ops = {{SCEN_OP_DELETE, NULL, 30, false}},
     .expect = "DELETE_COMPLETE"},
};

const size_t scen_ndefs = sizeof(scen_defs) / sizeof(scen_defs[0]);

const scen_def_t *scen_find(const char *name)
{
    for (size_t i = 0; i < scen_ndefs; i++)
        if (strcmp(scen_defs[i].name, name) == 0)
            return &scen_defs[i];
    return NULL;
}
