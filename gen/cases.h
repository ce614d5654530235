/* cases.h: the conformance case plan (--emit=cases, docs/conformance.md) and its override file
 * (--case-overrides FILE): what the generic rules of cases.c cannot know about an op (an index
 * in range, sizes that fit, positive inputs, the shapes a DSL kernel takes), kept as data.
 *
 * The file is read against a validated model; every fact names ops and arguments the model has,
 * or it is an error at its file:line:col. cases.c asks sg_case_fact_names which facts apply to
 * the op it writes cases for, in file order (a later fact wins over an earlier one).
 */
#ifndef SG_CASES_H
#define SG_CASES_H

#include "model.h"
#include "schema/sg_type_table.h"

/* The longest token a case may hold (bytes). */
enum { SG_CASE_TOKEN_MAX = 319 };

/* One line of the file: a fact about one argument of the ops it names, or an extra case. */
typedef struct sg_case_fact {
    const char  *ns, *name; /* the ops named: NAME and its in-place form NAME_ */
    const char  *overload;  /* NULL: every overload; "" the overload-less one (`-`) */
    const char  *arg;       /* the argument; NULL for an extra case */
    const char  *sizes;     /* sizes=, values=, dtype= (tensors), token= (others); NULL: not */
    const char  *values;    /*   given */
    const char  *dtype;
    const char  *token;
    const char **tokens;    /* an extra case: one token per schema argument */
    uint32_t     ntokens;
    sg_pos       pos;       /* the line's */
} sg_case_fact;

typedef struct sg_case_overrides {
    sg_arena     *a;
    const char   *path; /* as given (the plan's banner names its last component) */
    sg_case_fact *facts;
    uint32_t      n, cap;
} sg_case_overrides;

/* Reads the override file at path against m (validated, without errors): 0, or -1 with the
 * errors in d (each at its file:line:col; a file that cannot be read, out of memory). */
int  sg_case_overrides_load(sg_case_overrides *ov, const sg_model *m, const char *path,
                            sg_diag *d);
void sg_case_overrides_free(sg_case_overrides *ov);

/* Whether fact f names op (its name or NAME_, and its overload where f gives one). */
bool sg_case_fact_names(const sg_case_fact *f, const sg_op *op);
/* NULL where tok is a plan token an argument of family fam takes, else why not. */
const char *sg_case_token_misfit(sg_type_family_id fam, const char *tok);

/* The plan: one line per case, for every op the rules of cases.c cover; the ops they leave out
 * are listed, with why, in comment lines. ov (or NULL) adds its facts and cases. */
void sg_emit_cases(sg_buf *b, const sg_model *m, const sg_case_overrides *ov);

#endif
