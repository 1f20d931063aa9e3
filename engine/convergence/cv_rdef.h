/*
 * cv_rdef — a resource's definition in a traversal, as the CHECK job reads
 * it: decoded once from the JSON text that check_begin.lua hands over (the
 * rdef hash: cv_expand_rdef, and the STACK job's environment additions,
 * write it), then read through typed fields, so that no reader spells the
 * stored keys and a key renamed in the writer is caught here, in one
 * place. Pure: no I/O.
 *
 * The properties, metadata, update policy, external id and environment
 * stay JSON: they are the user's data, resolved as JSON (intrinsic
 * functions) and handed as JSON to the template library.
 */
#ifndef CV_RDEF_H
#define CV_RDEF_H

#include "cv_base.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Heat's DeletionPolicy, as the template parser spells it (Delete, the
 * default, when the definition names none). */
typedef enum {
    CV_RDEF_DELETE,
    CV_RDEF_RETAIN,
    CV_RDEF_SNAPSHOT,
} cv_rdef_policy_t;

typedef CV_VEC(const char *) cv_rdef_names_t;

/*
 * Every pointer is borrowed from `doc`, which the definition owns: they
 * live until cv_rdef_clear. A JSON member is NULL when the definition does
 * not have it.
 */
typedef struct cv_rdef {
    json_t *doc;               /* the decoded JSON; NULL: no definition */
    const char *type;          /* the implementing type ("" when missing) */
    const char *declared_type; /* the type the template wrote; NULL: same as type */
    json_t *props;             /* the template's properties, unresolved */
    json_t *metadata;          /* unresolved */
    json_t *update_policy;     /* nested types only, unresolved */
    json_t *external_id;       /* Heat's adoption, unresolved; JSON null counts as given */
    json_t *env;               /* nested types: the child stack's environment */
    cv_rdef_policy_t deletion_policy;
    cv_rdef_names_t depends; /* the resources it depends on, in the template's order */
    bool nested;             /* a nested-stack type (check_begin loads the stack's files) */
    /* The actions the environment's registry restricts ("restricted_actions"). */
    bool restrict_update, restrict_replace;
} cv_rdef_t;

/*
 * Decodes the definition's JSON text into *d (zeroed first; it then owns
 * what it holds: cv_rdef_clear). Returns 0, CV_EPROTO with the reason in
 * errstr when the text is not a JSON object or a member has the wrong
 * shape (d is then left empty), or CV_ENOMEM.
 */
int cv_rdef_decode(cv_rdef_t *d, const char *text, char *errstr, size_t errstr_size);
void cv_rdef_clear(cv_rdef_t *d);

/* Whether *d holds a decoded definition. */
static inline bool cv_rdef_defined(const cv_rdef_t *d)
{
    return d->doc != NULL;
}

/* The policy as Heat and the record spell it: "Delete", "Retain", "Snapshot". */
const char *cv_rdef_policy_name(cv_rdef_policy_t p);

/* The depends list as the index hash records it: a compact JSON array of
 * the names. NULL when out of memory; the caller frees it. */
char *cv_rdef_depends_json(const cv_rdef_t *d);

#endif
