/*
 * Template resources and OS::Heat::ResourceGroup at template validation:
 * a template resource's properties against its file's parameters, the file
 * itself checked recursively with the literal values, get_attr against its
 * outputs, a group's member definition against the member type, get_attr
 * on a group, and the nesting depth limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cv_base.h"
#include "cv_template.h"
#include "test_util.h"

#define HOT "heat_template_version: 2018-08-31\n"

/* db.yaml: one parameter without a default, one with a default and a range. */
#define DB_YAML                                                                                    \
    HOT "parameters:\n"                                                                            \
        "  name: {type: string}\n"                                                                 \
        "  size:\n"                                                                                \
        "    type: number\n"                                                                       \
        "    default: 1\n"                                                                         \
        "    constraints: [{range: {min: 1, max: 10}}]\n"                                          \
        "resources:\n"                                                                             \
        "  box:\n"                                                                                 \
        "    type: OS::Heat::TestResource\n"                                                       \
        "    properties: {value: {get_param: name}}\n"                                             \
        "outputs:\n"                                                                               \
        "  addr: {value: {get_attr: [box, output]}}\n"                                             \
        "  size: {value: {get_param: size}}\n"

/* app.yaml: a template resource of its own (db.yaml). */
#define APP_YAML                                                                                   \
    HOT "parameters:\n"                                                                            \
        "  dbname: {type: string, default: appdb}\n"                                               \
        "resources:\n"                                                                             \
        "  db:\n"                                                                                  \
        "    type: db.yaml\n"                                                                      \
        "    properties: {name: {get_param: dbname}, size: 2}\n"                                   \
        "outputs:\n"                                                                               \
        "  url: {value: {get_attr: [db, addr]}}\n"

/* server.yaml: what a group of template resources is made of. */
#define SERVER_YAML                                                                                \
    HOT "parameters:\n"                                                                            \
        "  label: {type: string}\n"                                                                \
        "  port: {type: number, default: 80}\n"                                                    \
        "resources:\n"                                                                             \
        "  r: {type: OS::Heat::None}\n"                                                            \
        "outputs:\n"                                                                               \
        "  ip: {value: 10.0.0.1}\n"

static char err[2048];

static json_t *load(const char *name, const char *yaml)
{
    char lerr[512];
    json_t *doc = cv_yaml_load(yaml, strlen(yaml), name, lerr, sizeof(lerr));
    if (!doc)
        fail_msg("bad test YAML %s: %s", name, lerr);
    return doc;
}

/* What a test made, released after it even when an assertion fails. */
static json_t *owned[8];
static size_t nowned;

static int release(void **state)
{
    (void)state;
    while (nowned)
        json_decref(owned[--nowned]);
    return 0;
}

/* A files map from (name, yaml) pairs ending with NULL; released after the
 * test. */
static json_t *files_of(const char *name, ...)
{
    assert_true(nowned < sizeof(owned) / sizeof(owned[0]));
    json_t *files = owned[nowned++] = json_object();
    va_list ap;
    va_start(ap, name);
    for (const char *n = name; n; n = va_arg(ap, const char *))
        json_object_set_new(files, n, load(n, va_arg(ap, const char *)));
    va_end(ap);
    return files;
}

static int parse(const char *yaml, const json_t *files, int max_depth, cv_template_t **out)
{
    json_t *root = load("stack.yaml", yaml);
    cv_tpl_opts_t opts = {.files = files, .max_depth = max_depth};
    err[0] = '\0';
    *out = NULL;
    int rc = cv_template_from_json_opts(root, "stack.yaml", NULL, &opts, out, err, sizeof(err));
    json_decref(root);
    return rc;
}

static cv_template_t *accept_depth(const char *yaml, const json_t *files, int max_depth)
{
    cv_template_t *tpl = NULL;
    if (parse(yaml, files, max_depth, &tpl) != 0)
        fail_msg("rejected: %s", err);
    assert_non_null(tpl);
    return tpl;
}

static void accept(const char *yaml, const json_t *files)
{
    cv_template_free(accept_depth(yaml, files, 0));
}

/* Asserts the template is refused and the message holds every fragment. */
static void reject_depth(const char *yaml, const json_t *files, int max_depth, const char *f1,
                         const char *f2, const char *f3)
{
    cv_template_t *tpl = NULL;
    int rc = parse(yaml, files, max_depth, &tpl);
    if (rc == 0) {
        cv_template_free(tpl);
        fail_msg("accepted, expected an error containing \"%s\"", f1);
    }
    assert_int_equal(rc, CV_EVALIDATE);
    assert_null(tpl);
    assert_contains(err, "stack.yaml: ");
    assert_contains(err, f1);
    if (f2)
        assert_contains(err, f2);
    if (f3)
        assert_contains(err, f3);
}

static void reject(const char *yaml, const json_t *files, const char *f1, const char *f2)
{
    reject_depth(yaml, files, 0, f1, f2, NULL);
}

static size_t occurrences(const char *hay, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
        n++;
    return n;
}

/* ---------------------------------------------------------------- template resources */

static void test_template_resource_with_its_parameters_is_accepted(void **state)
{
    (void)state;
    json_t *files = files_of("db.yaml", DB_YAML, NULL);
    cv_template_t *tpl = accept_depth(HOT "resources:\n"
                                          "  db:\n"
                                          "    type: db.yaml\n"
                                          "    properties: {name: orders, size: 3}\n",
                                      files, 0);
    const cv_tpl_resource_t *db = cv_template_resource(tpl, "db");
    assert_non_null(db);
    assert_string_equal(db->type, "db.yaml");
    /* Stored as written: the child's default for size is not added. */
    assert_string_equal(json_string_value(json_object_get(db->properties, "name")), "orders");
    assert_int_equal(json_integer_value(json_object_get(db->properties, "size")), 3);
    assert_int_equal(json_object_size(db->properties), 2);
    cv_template_free(tpl);
}

static void test_template_file_not_uploaded_is_named(void **state)
{
    (void)state;
    const char *yaml = HOT "resources:\n  web:\n    type: server.yaml\n";
    reject(yaml, NULL, "stack.yaml: resources.web: ",
           "template file \"server.yaml\" was not uploaded with the stack");
    json_t *files = files_of("db.yaml", DB_YAML, NULL);
    reject(yaml, files, "resources.web: template file \"server.yaml\" was not uploaded", NULL);
    /* Without options, as before: no files at all. */
    json_t *root = load("stack.yaml", yaml);
    cv_template_t *tpl = NULL;
    assert_int_equal(cv_template_from_json(root, "stack.yaml", NULL, &tpl, err, sizeof(err)),
                     CV_EVALIDATE);
    assert_null(tpl);
    assert_contains(err, "template file \"server.yaml\" was not uploaded with the stack");
    json_decref(root);
}

static void test_unknown_property_of_a_template_resource_is_named(void **state)
{
    (void)state;
    json_t *files = files_of("db.yaml", DB_YAML, NULL);
    reject(HOT "resources:\n"
               "  db:\n"
               "    type: db.yaml\n"
               "    properties: {name: orders, colour: red}\n",
           files, "stack.yaml: resources.db.properties: ",
           "unknown property \"colour\": template db.yaml has no such parameter");
}

static void test_parameter_without_default_must_be_given(void **state)
{
    (void)state;
    json_t *files = files_of("db.yaml", DB_YAML, NULL);
    const char *expected = "property \"name\" is required: template db.yaml declares the "
                           "parameter without a default";
    reject(HOT "resources:\n  db:\n    type: db.yaml\n    properties: {size: 2}\n", files,
           "stack.yaml: resources.db.properties: ", expected);
    reject(HOT "resources:\n  db:\n    type: db.yaml\n", files,
           "resources.db.properties: ", expected);
    /* An empty YAML value counts as not given. */
    reject(HOT "resources:\n  db:\n    type: db.yaml\n    properties: {name: null}\n", files,
           "resources.db.properties: ", expected);
    /* size has a default: leaving it out is fine. */
    accept(HOT "resources:\n  db:\n    type: db.yaml\n    properties: {name: a}\n", files);
}

static void test_nested_template_is_validated_with_the_literal_values(void **state)
{
    (void)state;
    json_t *files = files_of("db.yaml", DB_YAML, NULL);
    /* size is 1..10 in db.yaml: 11 breaks the child's constraint. */
    reject(HOT "resources:\n  db:\n    type: db.yaml\n    properties: {name: a, size: 11}\n", files,
           "stack.yaml: resources.db.properties: db.yaml: parameters.size", "range");
    reject(HOT "resources:\n  db:\n    type: db.yaml\n    properties: {name: a, size: lots}\n",
           files, "resources.db.properties: db.yaml: parameters.size", NULL);
    accept(HOT "resources:\n  db:\n    type: db.yaml\n    properties: {name: a, size: 10}\n",
           files);
}

static void test_errors_inside_the_nested_template_are_reported_with_its_name(void **state)
{
    (void)state;
    json_t *files = files_of("bad.yaml",
                             HOT "resources:\n"
                                 "  x: {type: Foo::Bar}\n",
                             "typo.yaml",
                             HOT "resources:\n"
                                 "  t:\n"
                                 "    type: OS::Heat::TestResource\n"
                                 "    properties: {valu: 1}\n",
                             NULL);
    reject(HOT "resources:\n  b: {type: bad.yaml}\n", files,
           "stack.yaml: resources.b.properties: bad.yaml: resources.x: The Resource Type "
           "(Foo::Bar) could not be found.",
           NULL);
    reject(HOT "resources:\n  t: {type: typo.yaml}\n", files,
           "stack.yaml: resources.t.properties: typo.yaml: resources.t.properties.valu: unknown "
           "property",
           NULL);
}

static void test_intrinsic_valued_properties_are_checked_once_resolved(void **state)
{
    (void)state;
    json_t *files = files_of("db.yaml", DB_YAML, NULL);
    /* name has no default in db.yaml and size a range: what the parent's
     * parameters give them is known now and checked, as Heat checks it. */
    reject(HOT "parameters:\n"
               "  n: {type: string, default: x}\n"
               "  s: {type: number, default: 99}\n"
               "resources:\n"
               "  db:\n"
               "    type: db.yaml\n"
               "    properties:\n"
               "      name: {get_param: n}\n"
               "      size: {get_param: s}\n",
           files, "db.yaml: parameters.size: value 99 is outside range 1..10", NULL);
    /* What a resource's attribute gives is not known yet: checked later. */
    accept(HOT "resources:\n"
               "  v: {type: OS::Heat::Value, properties: {value: 99}}\n"
               "  db:\n"
               "    type: db.yaml\n"
               "    properties:\n"
               "      name: {get_attr: [v, value]}\n"
               "      size: {get_attr: [v, value]}\n",
           files);
    /* A call nested in a list is still a call. */
    json_t *lfiles =
        files_of("l.yaml", HOT "parameters:\n  items: {type: comma_delimited_list}\n", NULL);
    accept(HOT "parameters:\n  n: {type: string, default: x}\n"
               "resources:\n"
               "  l:\n"
               "    type: l.yaml\n"
               "    properties: {items: [a, {get_param: n}]}\n",
           lfiles);
    /* The key must still be a parameter of the file. */
    reject(HOT "parameters:\n  n: {type: string, default: x}\n"
               "resources:\n"
               "  db:\n"
               "    type: db.yaml\n"
               "    properties: {name: {get_param: n}, nom: {get_param: n}}\n",
           files, "resources.db.properties: unknown property \"nom\"", NULL);
}

static void test_get_attr_on_a_template_resource_names_an_output(void **state)
{
    (void)state;
    json_t *files = files_of("db.yaml", DB_YAML, NULL);
#define WITH_DB HOT "resources:\n  db:\n    type: db.yaml\n    properties: {name: a}\n"
    accept(WITH_DB "outputs:\n"
                   "  a: {value: {get_attr: [db, addr]}}\n"
                   "  s: {value: {get_attr: [db, size]}}\n"
                   "  id: {value: {get_attr: [db, OS::stack_id]}}\n"
                   "  all: {value: {get_attr: [db, show]}}\n",
           files);
    accept(WITH_DB "  t:\n"
                   "    type: OS::Heat::TestResource\n"
                   "    properties: {value: {get_attr: [db, addr]}}\n",
           files);
    reject(WITH_DB "outputs:\n  o: {value: {get_attr: [db, output]}}\n", files,
           "stack.yaml: outputs.o.value: ", "The Referenced Attribute (db output) is incorrect.");
    reject(WITH_DB "  t:\n"
                   "    type: OS::Heat::TestResource\n"
                   "    properties: {value: {get_attr: [db, name]}}\n",
           files,
           "resources.t.properties.value: ", "The Referenced Attribute (db name) is incorrect.");
#undef WITH_DB
}

static void test_two_levels_of_nesting_are_accepted_and_checked(void **state)
{
    (void)state;
    json_t *files = files_of("app.yaml", APP_YAML, "db.yaml", DB_YAML, NULL);
    cv_template_t *tpl = accept_depth(HOT "resources:\n"
                                          "  app: {type: app.yaml}\n"
                                          "outputs:\n"
                                          "  url: {value: {get_attr: [app, url]}}\n",
                                      files, 0);
    assert_string_equal(cv_template_resource(tpl, "app")->type, "app.yaml");
    cv_template_free(tpl);
    /* The inner level is checked too: app.yaml's db gets a bad size. */
    json_t *bad = files_of("app.yaml",
                           HOT "resources:\n"
                               "  db:\n"
                               "    type: db.yaml\n"
                               "    properties: {name: x, size: 0}\n",
                           "db.yaml", DB_YAML, NULL);
    reject(HOT "resources:\n  app: {type: app.yaml}\n", bad,
           "stack.yaml: resources.app.properties: app.yaml: resources.db.properties: db.yaml: "
           "parameters.size",
           NULL);
    /* ... and a get_attr on the inner template resource. */
    json_t *bad_attr = files_of("app.yaml",
                                HOT "resources:\n"
                                    "  db:\n"
                                    "    type: db.yaml\n"
                                    "    properties: {name: x}\n"
                                    "outputs:\n"
                                    "  u: {value: {get_attr: [db, url]}}\n",
                                "db.yaml", DB_YAML, NULL);
    reject(HOT "resources:\n  app: {type: app.yaml}\n", bad_attr,
           "resources.app.properties: app.yaml: outputs.u.value: The Referenced Attribute (db "
           "url) is incorrect.",
           NULL);
}

/* ---------------------------------------------------------------- depth */

/* A recursion is named as the cycle it is, before the depth it would
 * reach (template_limits.c). */
static void reject_cycle(const char *yaml, const json_t *files, const char *f1, const char *f2)
{
    cv_template_t *tpl = NULL;
    int rc = parse(yaml, files, 0, &tpl);
    cv_template_free(tpl);
    assert_int_equal(rc, CV_ECYCLE);
    assert_contains(err, f1);
    assert_contains(err, f2);
}

static void test_template_including_itself_is_refused_as_a_cycle(void **state)
{
    (void)state;
    json_t *files = files_of("loop.yaml", HOT "resources:\n  again: {type: loop.yaml}\n", NULL);
    reject_cycle(HOT "resources:\n  start: {type: loop.yaml}\n", files,
                 "stack.yaml: resources.start.properties: loop.yaml: resources.again.properties: ",
                 "recursion: template loop.yaml includes itself (loop.yaml -> loop.yaml)");
}

static void test_distinct_templates_nested_too_deep_hit_the_depth_limit(void **state)
{
    (void)state;
    json_t *files = files_of("l1.yaml", HOT "resources:\n  n: {type: l2.yaml}\n", "l2.yaml",
                             HOT "resources:\n  n: {type: l3.yaml}\n", "l3.yaml",
                             HOT "resources:\n  n: {type: l1b.yaml}\n", "l1b.yaml",
                             HOT "resources:\n  n: {type: l2b.yaml}\n", "l2b.yaml",
                             HOT "resources:\n  n: {type: l3b.yaml}\n", "l3b.yaml",
                             HOT "resources:\n  n: {type: OS::Heat::None}\n", NULL);
    reject_depth(HOT "resources:\n  start: {type: l1.yaml}\n", files, 0,
                 "l3b.yaml would nest stacks deeper than 5 levels (the limit)", NULL, NULL);
    /* Levels 1..5 are expanded, the 6th is refused. */
    assert_int_equal(occurrences(err, ": resources.n.properties: "), 5);
}

static void test_templates_including_each_other_are_refused_as_a_cycle(void **state)
{
    (void)state;
    json_t *files = files_of("a.yaml", HOT "resources:\n  b: {type: b.yaml}\n", "b.yaml",
                             HOT "resources:\n  a: {type: a.yaml}\n", NULL);
    reject_cycle(HOT "resources:\n  start: {type: a.yaml}\n", files,
                 "b.yaml: resources.a.properties: ",
                 "template a.yaml includes itself (a.yaml -> b.yaml -> a.yaml)");
}

static void test_max_depth_one_refuses_two_levels(void **state)
{
    (void)state;
    json_t *files = files_of("app.yaml", APP_YAML, "db.yaml", DB_YAML, NULL);
    const char *two = HOT "resources:\n  app: {type: app.yaml}\n";
    reject_depth(two, files, 1,
                 "stack.yaml: resources.app.properties: app.yaml: resources.db.properties: ",
                 "db.yaml would nest stacks deeper than 1 levels (the limit)", NULL);
    cv_template_free(accept_depth(two, files, 2));
    /* One level is within max_depth 1. */
    cv_template_free(accept_depth(
        HOT "resources:\n  db:\n    type: db.yaml\n    properties: {name: a}\n", files, 1));
}

/* ---------------------------------------------------------------- groups */

#define GROUP_OF(def)                                                                              \
    HOT "resources:\n  g:\n    type: OS::Heat::ResourceGroup\n    properties:\n" def

static void test_group_of_test_resources_is_accepted(void **state)
{
    (void)state;
    cv_template_t *tpl =
        accept_depth(GROUP_OF("      count: 3\n"
                              "      index_var: '%n%'\n"
                              "      removal_policies: [{resource_list: ['0']}]\n"
                              "      removal_policies_mode: update\n"
                              "      resource_def:\n"
                              "        type: OS::Heat::TestResource\n"
                              "        properties: {value: 'member-%n%', wait_secs: 1}\n"
                              "        metadata: {role: worker}\n"),
                     NULL, 0);
    const cv_tpl_resource_t *g = cv_template_resource(tpl, "g");
    assert_string_equal(g->type, "OS::Heat::ResourceGroup");
    assert_int_equal(json_integer_value(json_object_get(g->properties, "count")), 3);
    cv_template_free(tpl);
}

static void test_group_member_with_unknown_property_is_refused(void **state)
{
    (void)state;
    reject(GROUP_OF("      count: 2\n"
                    "      resource_def:\n"
                    "        type: OS::Heat::TestResource\n"
                    "        properties: {value: x, colour: red}\n"),
           NULL, "stack.yaml: resources.g.properties.resource_def.properties.colour: ",
           "unknown property");
    reject(GROUP_OF("      resource_def:\n"
                    "        type: OS::Heat::TestResource\n"
                    "        properties: {wait_secs: soon}\n"),
           NULL, "resources.g.properties.resource_def.properties.wait_secs: expected number", NULL);
}

static void test_group_member_of_unknown_type_is_refused(void **state)
{
    (void)state;
    reject(GROUP_OF("      resource_def: {type: Foo::Bar}\n"), NULL,
           "stack.yaml: resources.g.properties.resource_def: The Resource Type (Foo::Bar) could "
           "not be found.",
           NULL);
    reject(GROUP_OF("      resource_def: {type: server.yaml}\n"), NULL,
           "resources.g.properties.resource_def: template file \"server.yaml\" was not uploaded "
           "with the stack",
           NULL);
}

static void test_group_properties_are_validated(void **state)
{
    (void)state;
#define DEF "      resource_def: {type: OS::Heat::None}\n"
    reject(GROUP_OF("      count: -1\n" DEF), NULL,
           "stack.yaml: resources.g.properties.count: must be at least 0", NULL);
    reject(GROUP_OF("      index_var: '%i'\n" DEF), NULL,
           "resources.g.properties.index_var: must be at least 3 characters long", NULL);
    reject(GROUP_OF("      removal_policies_mode: replace\n" DEF), NULL,
           "resources.g.properties.removal_policies_mode: must be \"append\" or \"update\"", NULL);
    reject(GROUP_OF("      removal_policies: [victim]\n" DEF), NULL,
           "resources.g.properties.removal_policies[0]: expected {resource_list: [names]}", NULL);
    reject(GROUP_OF("      removal_policies: [{resource_list: ['0']}, {resource_list: '1'}]\n" DEF),
           NULL, "resources.g.properties.removal_policies[1]: expected {resource_list: [names]}",
           NULL);
    reject(GROUP_OF("      count: 1\n"), NULL,
           "resources.g.properties.resource_def: required property is missing", NULL);
    reject(GROUP_OF("      resource_def: {type: OS::Heat::None, depends_on: x}\n"), NULL,
           "resources.g.properties.resource_def.depends_on: unknown key (allowed: type, "
           "properties, metadata)",
           NULL);
    reject(GROUP_OF("      resource_def: {properties: {}}\n"), NULL,
           "resources.g.properties.resource_def.type: a string is required", NULL);
    reject(GROUP_OF("      resource_def: {type: OS::Heat::None, properties: [a]}\n"), NULL,
           "resources.g.properties.resource_def.properties: must be a map", NULL);
    /* The limits themselves are fine. */
    accept(GROUP_OF("      count: 0\n      index_var: '%i%'\n"
                    "      removal_policies: [{resource_list: []}, {}]\n" DEF),
           NULL);
#undef DEF
}

static void test_group_with_computed_member_definition_is_checked_later(void **state)
{
    (void)state;
    accept(HOT "parameters:\n  t: {type: string, default: OS::Heat::None}\n"
               "  n: {type: number, default: 2}\n"
               "resources:\n  g:\n    type: OS::Heat::ResourceGroup\n    properties:\n"
               "      count: {get_param: n}\n"
               "      resource_def: {type: {get_param: t}}\n",
           NULL);
    accept(HOT "parameters:\n  p: {type: json, default: {value: x}}\n"
               "resources:\n  g:\n    type: OS::Heat::ResourceGroup\n    properties:\n"
               "      resource_def:\n"
               "        type: OS::Heat::TestResource\n"
               "        properties: {get_param: p}\n",
           NULL);
}

static void test_group_of_template_resources(void **state)
{
    (void)state;
    json_t *files = files_of("server.yaml", SERVER_YAML, NULL);
    accept(GROUP_OF("      count: 2\n"
                    "      resource_def:\n"
                    "        type: server.yaml\n"
                    "        properties: {label: 'web-%index%'}\n"),
           files);
    reject(GROUP_OF("      resource_def:\n"
                    "        type: server.yaml\n"
                    "        properties: {label: a, flavour: big}\n"),
           files, "stack.yaml: resources.g.properties.resource_def.properties: ",
           "unknown property \"flavour\": template server.yaml has no such parameter");
    reject(GROUP_OF("      resource_def: {type: server.yaml}\n"), files,
           "resources.g.properties.resource_def.properties: ",
           "property \"label\" is required: template server.yaml");
    reject(GROUP_OF("      resource_def:\n"
                    "        type: server.yaml\n"
                    "        properties: {label: a, port: eighty}\n"),
           files, "resources.g.properties.resource_def.properties: server.yaml: parameters.port",
           NULL);
}

/* Heat validates a group on its member "0", index_var substituted: a
 * property that is only valid once the index is in is fine. */
static void test_index_var_in_member_properties_is_checked_as_substituted(void **state)
{
    (void)state;
    json_t *files = files_of("server.yaml", SERVER_YAML, NULL);
    accept(GROUP_OF("      resource_def:\n"
                    "        type: OS::Heat::TestResource\n"
                    "        properties: {value: 'v%index%', wait_secs: '%index%'}\n"),
           NULL);
    accept(GROUP_OF("      index_var: '@@@'\n"
                    "      resource_def:\n"
                    "        type: server.yaml\n"
                    "        properties: {label: a, port: '80@@@'}\n"),
           files);
    /* Not a number even with the index in. */
    reject(GROUP_OF("      resource_def:\n"
                    "        type: OS::Heat::TestResource\n"
                    "        properties: {wait_secs: 'x%index%'}\n"),
           NULL, "resources.g.properties.resource_def.properties.wait_secs: expected number", NULL);
}

/* A nested template may take its deletion policy from a parameter that the
 * parent gives through a call: unknown until the parent's values resolve. */
static void test_deletion_policy_from_a_parameter_given_later(void **state)
{
    (void)state;
    json_t *files = files_of("keep.yaml",
                             HOT "parameters:\n  policy: {type: string}\n"
                                 "resources:\n"
                                 "  r:\n"
                                 "    type: OS::Heat::None\n"
                                 "    deletion_policy: {get_param: policy}\n",
                             NULL);
    accept(HOT "parameters:\n  p: {type: string, default: Retain}\n"
               "resources:\n  k:\n    type: keep.yaml\n    properties: {policy: {get_param: p}}\n",
           files);
    reject(HOT "resources:\n  k:\n    type: keep.yaml\n    properties: {policy: Forever}\n", files,
           "resources.k.properties: keep.yaml: resources.r.deletion_policy: ",
           "invalid deletion policy \"Forever\"");
}

static void test_get_attr_on_a_group(void **state)
{
    (void)state;
#define TEST_GROUP                                                                                 \
    GROUP_OF("      count: 2\n"                                                                    \
             "      resource_def: {type: OS::Heat::TestResource}\n")
    const char *attrs[] = {"refs",       "refs_map",          "attributes", "removed_rsrc_list",
                           "resource.0", "resource.1.output", "output",     "show"};
    for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
        char doc[512];
        snprintf(doc, sizeof(doc), TEST_GROUP "outputs:\n  o: {value: {get_attr: [g, %s]}}\n",
                 attrs[i]);
        accept(doc, NULL);
    }
    accept(TEST_GROUP "outputs:\n  o: {value: {get_attr: [g, attributes, output]}}\n", NULL);
    reject(TEST_GROUP "outputs:\n  o: {value: {get_attr: [g, ip]}}\n", NULL,
           "stack.yaml: outputs.o.value: ", "The Referenced Attribute (g ip) is incorrect.");
    reject(TEST_GROUP "  t:\n    type: OS::Heat::TestResource\n"
                      "    properties: {value: {get_attr: [g, value]}}\n",
           NULL, "resources.t.properties.value: The Referenced Attribute (g value) is incorrect.",
           NULL);
#undef TEST_GROUP
}

static void test_get_attr_on_a_group_of_template_resources(void **state)
{
    (void)state;
    json_t *files = files_of("server.yaml", SERVER_YAML, NULL);
#define SERVER_GROUP GROUP_OF("      resource_def: {type: server.yaml, properties: {label: x}}\n")
    accept(SERVER_GROUP "outputs:\n"
                        "  ips: {value: {get_attr: [g, ip]}}\n"
                        "  ids: {value: {get_attr: [g, OS::stack_id]}}\n"
                        "  one: {value: {get_attr: [g, resource.0.ip]}}\n"
                        "  refs: {value: {get_attr: [g, refs]}}\n",
           files);
    /* TestResource's attribute is not one of server.yaml's outputs. */
    reject(SERVER_GROUP "outputs:\n  o: {value: {get_attr: [g, output]}}\n", files,
           "outputs.o.value: The Referenced Attribute (g output) is incorrect.", NULL);
#undef SERVER_GROUP
}

static void test_group_members_count_toward_the_depth_limit(void **state)
{
    (void)state;
    json_t *files = files_of("server.yaml", SERVER_YAML, "app.yaml",
                             HOT "resources:\n  g:\n    type: OS::Heat::ResourceGroup\n"
                                 "    properties:\n"
                                 "      resource_def: {type: OS::Heat::None}\n",
                             NULL);
    /* The group's child stack is level 1, each template member's level 2. */
    const char *group =
        GROUP_OF("      resource_def: {type: server.yaml, properties: {label: x}}\n");
    reject_depth(group, files, 1, "stack.yaml: resources.g.properties.resource_def.properties: ",
                 "server.yaml would nest stacks deeper than 1 levels (the limit)", NULL);
    cv_template_free(accept_depth(group, files, 2));
    /* A group inside a template resource: its members would be level 2. */
    const char *app = HOT "resources:\n  app: {type: app.yaml}\n";
    reject_depth(app, files, 1, "resources.app.properties: app.yaml: resources.g.properties.",
                 "resource_def: the group's members would nest stacks deeper than 1 levels", NULL);
    cv_template_free(accept_depth(app, files, 2));
}

/* ---------------------------------------------------------------- resource_facade */

#define FACADE_CHILD(arg) HOT "outputs:\n  o: {value: {resource_facade: " arg "}}\n"

/* Heat's test_resource_facade: a template resource's template may read its
 * parent's metadata, deletion_policy and update_policy. */
static void test_resource_facade_is_accepted_in_a_template_resource(void **state)
{
    (void)state;
    accept(HOT "resources:\n  c: {type: m.yaml}\n",
           files_of("m.yaml", FACADE_CHILD("metadata"), NULL));
    accept(HOT "resources:\n  c: {type: d.yaml}\n",
           files_of("d.yaml", FACADE_CHILD("deletion_policy"), NULL));
    accept(HOT "resources:\n  c: {type: u.yaml}\n",
           files_of("u.yaml", FACADE_CHILD("update_policy"), NULL));
}

/* Heat's test_resource_facade_invalid_arg. */
static void test_resource_facade_of_anything_else_is_refused(void **state)
{
    (void)state;
    reject(HOT "resources:\n  c: {type: w.yaml}\n",
           files_of("w.yaml", FACADE_CHILD("wibble"), NULL),
           "w.yaml: outputs.o.value: Incorrect arguments to \"resource_facade\" should be one of: "
           "metadata, deletion_policy, update_policy",
           NULL);
}

static void test_resource_facade_in_a_stack_of_its_own_is_refused(void **state)
{
    (void)state;
    reject(FACADE_CHILD("metadata"), NULL,
           "stack.yaml: outputs.o.value: resource_facade: only the template of a template "
           "resource has a parent resource to read",
           NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_resource_facade_is_accepted_in_a_template_resource, release),
        cmocka_unit_test_teardown(test_resource_facade_of_anything_else_is_refused, release),
        cmocka_unit_test_teardown(test_resource_facade_in_a_stack_of_its_own_is_refused, release),
        cmocka_unit_test_teardown(test_template_resource_with_its_parameters_is_accepted, release),
        cmocka_unit_test_teardown(test_template_file_not_uploaded_is_named, release),
        cmocka_unit_test_teardown(test_unknown_property_of_a_template_resource_is_named, release),
        cmocka_unit_test_teardown(test_parameter_without_default_must_be_given, release),
        cmocka_unit_test_teardown(test_nested_template_is_validated_with_the_literal_values,
                                  release),
        cmocka_unit_test_teardown(test_errors_inside_the_nested_template_are_reported_with_its_name,
                                  release),
        cmocka_unit_test_teardown(test_intrinsic_valued_properties_are_checked_once_resolved,
                                  release),
        cmocka_unit_test_teardown(test_get_attr_on_a_template_resource_names_an_output, release),
        cmocka_unit_test_teardown(test_two_levels_of_nesting_are_accepted_and_checked, release),
        cmocka_unit_test_teardown(test_template_including_itself_is_refused_as_a_cycle, release),
        cmocka_unit_test_teardown(test_distinct_templates_nested_too_deep_hit_the_depth_limit,
                                  release),
        cmocka_unit_test_teardown(test_templates_including_each_other_are_refused_as_a_cycle,
                                  release),
        cmocka_unit_test_teardown(test_max_depth_one_refuses_two_levels, release),
        cmocka_unit_test_teardown(test_group_of_test_resources_is_accepted, release),
        cmocka_unit_test_teardown(test_group_member_with_unknown_property_is_refused, release),
        cmocka_unit_test_teardown(test_group_member_of_unknown_type_is_refused, release),
        cmocka_unit_test_teardown(test_group_properties_are_validated, release),
        cmocka_unit_test_teardown(test_group_with_computed_member_definition_is_checked_later,
                                  release),
        cmocka_unit_test_teardown(test_group_of_template_resources, release),
        cmocka_unit_test_teardown(test_index_var_in_member_properties_is_checked_as_substituted,
                                  release),
        cmocka_unit_test_teardown(test_deletion_policy_from_a_parameter_given_later, release),
        cmocka_unit_test_teardown(test_get_attr_on_a_group, release),
        cmocka_unit_test_teardown(test_get_attr_on_a_group_of_template_resources, release),
        cmocka_unit_test_teardown(test_group_members_count_toward_the_depth_limit, release),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
