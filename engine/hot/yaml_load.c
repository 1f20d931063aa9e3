/*
 * yaml_load — YAML (and so JSON) text into a jansson tree.
 *
 * Built on libyaml's event API with an explicit stack, so nesting depth is
 * bounded by MAX_DEPTH rather than by the C stack. Aliases are expanded by
 * copying, with every copied node counted against MAX_NODES: a "billion
 * laughs" document fails fast instead of exhausting memory.
 */
#include "cv__template_internal.h"
#include "cv_base.h"

#include <yaml.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 256
#define MAX_NODES 1000000

#define TAG_PREFIX "tag:yaml.org,2002:"

typedef struct frame {
    json_t *node; /* the object or array being filled */
    char *key;    /* object only: the key waiting for its value */
    size_t key_len;
    bool have_key; /* object only: the next event is a value */
    bool merge;    /* the waiting key is the YAML merge key "<<" */
    yaml_mark_t key_mark;
    json_t *merges;  /* sources of "<<", merged in when the mapping ends */
    char *anchor;    /* anchor of this collection, registered at its end */
    size_t nodes;    /* nodes in this subtree, for alias accounting */
    unsigned height; /* nesting below this node, for the depth bound */
} frame_t;

typedef struct loader {
    const char *fname;
    const char *text;
    size_t len;
    char *errstr;
    size_t errstr_size;
    frame_t stack[MAX_DEPTH];
    int depth;
    json_t *root;
    bool root_empty; /* the document was a single empty plain scalar */
    int ndocs;
    size_t total_nodes;
    json_t *anchors; /* name -> [value, nodes, height] */
} loader_t;

static int fail_at(loader_t *ld, yaml_mark_t mark, const char *fmt, const char *arg)
{
    char msg[512];
    snprintf(msg, sizeof(msg), fmt, arg);
    return cv_seterr(ld->errstr, ld->errstr_size, CV_EPARSE, "%s:%zu:%zu: %s", ld->fname,
                     mark.line + 1, mark.column + 1, msg);
}

/* ---------------------------------------------------------------- the tree */

static int count_node(loader_t *ld, yaml_mark_t mark, size_t n)
{
    ld->total_nodes += n;
    if (ld->total_nodes > MAX_NODES)
        return fail_at(ld, mark, "document has more than %s nodes (alias expansion?)", "1000000");
    return 0;
}

static int nomem(loader_t *ld)
{
    return cv_seterr(ld->errstr, ld->errstr_size, CV_ENOMEM, "%s: out of memory", ld->fname);
}

static int register_anchor(loader_t *ld, const char *anchor, json_t *v, size_t nodes,
                           unsigned height)
{
    if (!anchor)
        return 0;
    json_t *entry = json_pack("[O,I,I]", v, (json_int_t)nodes, (json_int_t)height);
    if (!entry || json_object_set_new(ld->anchors, anchor, entry))
        return nomem(ld);
    return 0;
}

/* "<<: *base" or "<<: [*a, *b]": kept until the mapping ends, because keys
 * written in the mapping itself win over merged ones wherever they appear. */
static int add_merge(loader_t *ld, frame_t *f, json_t *v, yaml_mark_t mark)
{
    bool ok = json_is_object(v) || json_is_array(v);
    for (size_t i = 0; json_is_array(v) && i < json_array_size(v); i++)
        if (!json_is_object(json_array_get(v, i)))
            ok = false;
    if (!ok) {
        json_decref(v);
        return fail_at(ld, mark, "%s", "a merge key \"<<\" needs a mapping or a list of mappings");
    }
    if (!f->merges && !(f->merges = json_array())) {
        json_decref(v);
        return nomem(ld);
    }
    return json_array_append_new(f->merges, v) ? nomem(ld) : 0;
}

static void apply_merge_source(json_t *target, json_t *src)
{
    const char *key;
    json_t *value;
    json_object_foreach(src, key, value)
    {
        if (!json_object_get(target, key))
            json_object_set(target, key, value);
    }
}

static void apply_merges(frame_t *f)
{
    for (size_t i = 0; f->merges && i < json_array_size(f->merges); i++) {
        json_t *src = json_array_get(f->merges, i);
        if (json_is_object(src))
            apply_merge_source(f->node, src);
        for (size_t j = 0; json_is_array(src) && j < json_array_size(src); j++)
            apply_merge_source(f->node, json_array_get(src, j));
    }
}

/* Hands a finished value (stolen) to whatever contains it. */
static int add_value(loader_t *ld, json_t *v, size_t nodes, unsigned height, yaml_mark_t mark)
{
    if (ld->depth == 0) {
        ld->root = v;
        return 0;
    }
    frame_t *f = &ld->stack[ld->depth - 1];
    f->nodes += nodes;
    if (height + 1 > f->height)
        f->height = height + 1;
    if (json_is_array(f->node))
        return json_array_append_new(f->node, v) ? nomem(ld) : 0;
    f->have_key = false;
    if (f->merge) {
        f->merge = false;
        return add_merge(ld, f, v, mark);
    }
    int rc = 0;
    if (json_object_getn(f->node, f->key, f->key_len)) {
        json_decref(v);
        rc = fail_at(ld, f->key_mark, "duplicate key \"%s\"", f->key);
    } else if (json_object_setn_new(f->node, f->key, f->key_len, v)) {
        rc = nomem(ld);
    }
    free(f->key);
    f->key = NULL;
    return rc;
}

/* Whether the event at hand is the key of a mapping. */
static frame_t *waiting_key(loader_t *ld)
{
    frame_t *f = ld->depth ? &ld->stack[ld->depth - 1] : NULL;
    return f && json_is_object(f->node) && !f->have_key ? f : NULL;
}

static int set_key(loader_t *ld, frame_t *f, const char *s, size_t len, yaml_mark_t mark)
{
    if (memchr(s, '\0', len))
        return fail_at(ld, mark, "%s", "mapping keys may not contain NUL characters");
    f->key = malloc(len + 1);
    if (!f->key)
        return nomem(ld);
    memcpy(f->key, s, len);
    f->key[len] = '\0';
    f->key_len = len;
    f->key_mark = mark;
    f->have_key = true;
    return 0;
}

/* ---------------------------------------------------------------- events */

static json_t *scalar_value(loader_t *ld, const yaml_event_t *ev, int *rc)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *tag = (const char *)ev->data.scalar.tag;
    bool bad = false;
    json_t *v;
    if (!tag)
        v = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? cv__yaml_plain(s, len)
                                                             : json_stringn(s, len);
    else if (strcmp(tag, "!") == 0)
        v = json_stringn(s, len);
    else if (strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX)) == 0)
        v = cv__yaml_tagged(tag + strlen(TAG_PREFIX), s, len, &bad);
    else
        return *rc = fail_at(ld, ev->start_mark, "unsupported tag \"%s\"", tag), NULL;
    if (bad)
        *rc = fail_at(ld, ev->start_mark, "value does not match its tag !!%s",
                      tag + strlen(TAG_PREFIX));
    else if (!v)
        *rc = fail_at(ld, ev->start_mark, "%s", "scalar is not valid UTF-8");
    return v;
}

static int on_scalar(loader_t *ld, const yaml_event_t *ev)
{
    const char *s = (const char *)ev->data.scalar.value;
    size_t len = ev->data.scalar.length;
    const char *anchor = (const char *)ev->data.scalar.anchor;
    bool plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag;
    int rc = count_node(ld, ev->start_mark, 1);
    if (rc)
        return rc;
    frame_t *kf = waiting_key(ld);
    if (kf && plain && len == 2 && memcmp(s, "<<", 2) == 0) {
        kf->merge = kf->have_key = true;
        return 0;
    }
    /* Keys are text whatever they look like: JSON objects have string keys. */
    json_t *v = kf ? json_stringn(s, len) : scalar_value(ld, ev, &rc);
    if (!v)
        return rc ? rc : fail_at(ld, ev->start_mark, "%s", "scalar is not valid UTF-8");
    if (!kf && ld->depth == 0 && plain && len == 0)
        ld->root_empty = true;
    rc = register_anchor(ld, anchor, v, 1, 0);
    if (rc == 0 && kf)
        rc = set_key(ld, kf, s, len, ev->start_mark);
    if (rc || kf) {
        json_decref(v);
        return rc;
    }
    return add_value(ld, v, 1, 0, ev->start_mark);
}

static int on_alias(loader_t *ld, const yaml_event_t *ev)
{
    const char *name = (const char *)ev->data.alias.anchor;
    json_t *entry = json_object_get(ld->anchors, name);
    if (!entry)
        return fail_at(ld, ev->start_mark, "unknown anchor \"%s\"", name);
    json_t *v = json_array_get(entry, 0);
    size_t nodes = (size_t)json_integer_value(json_array_get(entry, 1));
    unsigned height = (unsigned)json_integer_value(json_array_get(entry, 2));
    int rc = count_node(ld, ev->start_mark, nodes);
    if (rc)
        return rc;
    if ((size_t)ld->depth + height > MAX_DEPTH)
        return fail_at(ld, ev->start_mark, "nesting deeper than %s levels", "256");
    frame_t *kf = waiting_key(ld);
    if (kf && !json_is_string(v))
        return fail_at(ld, ev->start_mark, "%s", "mapping keys must be scalars");
    if (kf)
        return set_key(ld, kf, json_string_value(v), json_string_length(v), ev->start_mark);
    json_t *copy = json_deep_copy(v);
    return copy ? add_value(ld, copy, nodes, height, ev->start_mark) : nomem(ld);
}

static bool collection_tag_ok(const char *tag, bool mapping)
{
    if (!tag || strcmp(tag, "!") == 0)
        return true;
    return strcmp(tag, mapping ? TAG_PREFIX "map" : TAG_PREFIX "seq") == 0;
}

static int on_start(loader_t *ld, const yaml_event_t *ev, bool mapping)
{
    const char *anchor =
        (const char *)(mapping ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor);
    const char *tag =
        (const char *)(mapping ? ev->data.mapping_start.tag : ev->data.sequence_start.tag);
    if (waiting_key(ld))
        return fail_at(ld, ev->start_mark, "%s", "mapping keys must be scalars");
    if (ld->depth >= MAX_DEPTH)
        return fail_at(ld, ev->start_mark, "nesting deeper than %s levels", "256");
    if (!collection_tag_ok(tag, mapping))
        return fail_at(ld, ev->start_mark, "unsupported tag \"%s\"", tag);
    int rc = count_node(ld, ev->start_mark, 1);
    if (rc)
        return rc;
    frame_t *f = &ld->stack[ld->depth];
    memset(f, 0, sizeof(*f));
    f->node = mapping ? json_object() : json_array();
    f->anchor = anchor ? strdup(anchor) : NULL;
    f->height = 1;
    if (!f->node || (anchor && !f->anchor)) {
        json_decref(f->node);
        free(f->anchor);
        return nomem(ld);
    }
    ld->depth++;
    return 0;
}

static int on_end(loader_t *ld, yaml_mark_t mark)
{
    frame_t f = ld->stack[--ld->depth];
    apply_merges(&f);
    json_decref(f.merges);
    free(f.key);
    size_t nodes = f.nodes + 1;
    int rc = register_anchor(ld, f.anchor, f.node, nodes, f.height);
    free(f.anchor);
    if (rc) {
        json_decref(f.node);
        return rc;
    }
    return add_value(ld, f.node, nodes, f.height, mark);
}

static int on_event(loader_t *ld, const yaml_event_t *ev)
{
    switch (ev->type) {
    case YAML_DOCUMENT_START_EVENT:
        if (++ld->ndocs > 1)
            return fail_at(ld, ev->start_mark, "%s",
                           "expected a single document in the stream, found another");
        return 0;
    case YAML_SCALAR_EVENT:
        return on_scalar(ld, ev);
    case YAML_ALIAS_EVENT:
        return on_alias(ld, ev);
    case YAML_SEQUENCE_START_EVENT:
        return on_start(ld, ev, false);
    case YAML_MAPPING_START_EVENT:
        return on_start(ld, ev, true);
    case YAML_SEQUENCE_END_EVENT:
    case YAML_MAPPING_END_EVENT:
        return on_end(ld, ev->start_mark);
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------- driver */

/* Reader errors (bad encoding) carry a byte offset instead of a mark. */
static yaml_mark_t mark_of_offset(const loader_t *ld, size_t offset)
{
    yaml_mark_t m = {0, 0, 0};
    for (size_t i = 0; i < offset && i < ld->len; i++) {
        if (ld->text[i] == '\n') {
            m.line++;
            m.column = 0;
        } else {
            m.column++;
        }
    }
    return m;
}

static int syntax_error(loader_t *ld, const yaml_parser_t *p)
{
    if (p->error == YAML_MEMORY_ERROR)
        return nomem(ld);
    const char *problem = p->problem ? p->problem : "syntax error";
    char msg[400];
    if (p->error == YAML_READER_ERROR) {
        if (p->problem_value >= 0)
            snprintf(msg, sizeof(msg), "%s (byte 0x%02X)", problem, (unsigned)p->problem_value);
        else
            snprintf(msg, sizeof(msg), "%s", problem);
        return fail_at(ld, mark_of_offset(ld, p->problem_offset), "%s", msg);
    }
    if (p->context)
        snprintf(msg, sizeof(msg), "%s (%s at line %zu)", problem, p->context,
                 p->context_mark.line + 1);
    else
        snprintf(msg, sizeof(msg), "%s", problem);
    return fail_at(ld, p->problem_mark, "%s", msg);
}

static void loader_free(loader_t *ld)
{
    while (ld->depth > 0) {
        frame_t *f = &ld->stack[--ld->depth];
        json_decref(f->node);
        json_decref(f->merges);
        free(f->key);
        free(f->anchor);
    }
    json_decref(ld->anchors);
    free(ld);
}

static int run_parser(loader_t *ld)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p))
        return nomem(ld);
    yaml_parser_set_input_string(&p, (const unsigned char *)ld->text, ld->len);
    int rc = 0;
    for (bool done = false; rc == 0 && !done;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            rc = syntax_error(ld, &p);
            break;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        rc = on_event(ld, &ev);
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return rc;
}

json_t *cv__yaml_load(const char *text, size_t len, const char *fname, bool allow_empty,
                      char *errstr, size_t errstr_size)
{
    loader_t *ld = calloc(1, sizeof(*ld));
    if (!ld || !(ld->anchors = json_object())) {
        free(ld);
        cv_seterr(errstr, errstr_size, CV_ENOMEM, "%s: out of memory", fname ? fname : "-");
        return NULL;
    }
    ld->fname = fname ? fname : "-";
    ld->text = text ? text : "";
    ld->len = text ? len : 0;
    ld->errstr = errstr;
    ld->errstr_size = errstr_size;
    json_t *root = NULL;
    if (run_parser(ld) == 0) {
        root = ld->root;
        if (!root || ld->root_empty) {
            json_decref(root);
            root = allow_empty ? json_null() : NULL;
            if (!allow_empty)
                cv_seterr(errstr, errstr_size, CV_EPARSE, "%s: empty document", ld->fname);
        }
    } else {
        json_decref(ld->root);
    }
    loader_free(ld);
    return root;
}

json_t *cv_yaml_load(const char *text, size_t len, const char *fname, char *errstr,
                     size_t errstr_size)
{
    return cv__yaml_load(text, len, fname, false, errstr, errstr_size);
}
