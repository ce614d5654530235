/* model.h: the generator's model of a set of schema files.
 *
 * One sg_op per YAML entry: its parsed schema (sg_schema.h), the yaml keys as typed fields, and
 * every key also kept verbatim as a small YAML tree (for JSON output and user templates). The
 * phases, in the order the driver (cli.c) runs them: load.c reads files (yaml_tree.c turns
 * their YAML into node trees, yaml_ops.c the trees into ops), group.c derives the op groups,
 * validate.c checks the model, derive.c adds what generation needs; every emitter reads the
 * model, never the source text.
 *
 * All memory lives in the model's arena; sg_model_free releases everything at once.
 */
#ifndef SG_MODEL_H
#define SG_MODEL_H

#include "schema/sg_schema.h"

#include <stdarg.h>

/* A source file held in memory for the whole run, so diagnostics can quote its lines. */
typedef struct sg_source {
    const char *path;
    const char *text;  /* NUL-terminated copy of the file */
    size_t      len;
} sg_source;

/* A 1-based line and column (column in bytes) in a source. */
typedef struct sg_pos {
    const sg_source *src;
    uint32_t         line, col;
} sg_pos;

/* A YAML value as read, with its position. Scalars keep their text; tag-less. */
typedef enum sg_ynode_kind { SG_Y_SCALAR, SG_Y_SEQ, SG_Y_MAP } sg_ynode_kind;
typedef struct sg_ynode sg_ynode;
struct sg_ynode {
    sg_ynode_kind kind;
    sg_pos        pos;
    const char   *text;   /* SG_Y_SCALAR */
    size_t        len;
    bool          plain;  /* SG_Y_SCALAR written without quotes */
    sg_ynode    **items;  /* SG_Y_SEQ: items; SG_Y_MAP: key, value, key, value, ... */
    uint32_t      nitems; /* count of entries in items (for a map: 2 * pairs) */
};

/* A func string's characters may not sit on one line (quoted and folded scalars, escapes):
 * a segment maps schema bytes [offset, next segment's offset) to consecutive columns from pos. */
typedef struct sg_span {
    uint32_t offset;
    sg_pos   pos;
} sg_span;

/* One line of a dispatch table: "CPU, CUDA: add_out" gives keys {CPU, CUDA}, kernel "add_out". */
typedef struct sg_dispatch {
    const char **keys;
    sg_pos      *key_pos;
    uint32_t     nkeys;
    const char  *kernel;
    sg_pos       pos;        /* the keys' */
    sg_pos       kernel_pos; /* the kernel's name */
} sg_dispatch;

typedef struct sg_strlist {
    const char **items;
    sg_pos      *pos;
    uint32_t     n;
} sg_strlist;

enum { SG_VARIANT_FUNCTION = 1u << 0, SG_VARIANT_METHOD = 1u << 1 };
/* Tri-state yaml booleans: absent keys keep torchgen's defaults, but emitters can tell. */
typedef enum sg_tribool { SG_UNSET = -1, SG_FALSE = 0, SG_TRUE = 1 } sg_tribool;

typedef struct sg_op sg_op;
typedef struct sg_group sg_group;

struct sg_op {
    sg_schema   schema;
    const char *ns;          /* schema.ns, or "aten" where none was written */
    const char *func;        /* the func string as given */
    sg_pos      pos;         /* the entry ('- func:' line) */
    sg_span    *spans;       /* schema byte offset -> source position */
    uint32_t    nspans;
    bool        parsed;      /* false when the func string did not parse (schema is unusable) */

    /* yaml keys, typed (absent: zero / NULL / SG_UNSET) */
    unsigned    variants;          /* SG_VARIANT_*; function alone when absent */
    bool        has_variants;
    sg_dispatch *dispatch;
    uint32_t    ndispatch;
    bool        has_dispatch;
    sg_tribool  structured;
    const char *structured_delegate;
    const char *structured_inherits;
    sg_strlist  precomputed;       /* one item per line */
    sg_strlist  autogen;           /* comma-separated names */
    sg_strlist  tags;
    const char *device_check;      /* NoCheck | ExactSame */
    sg_tribool  device_guard;
    const char *python_module;
    sg_strlist  cpp_no_default_args;
    sg_tribool  manual_cpp_binding;
    sg_tribool  manual_kernel_registration;
    const char *category_override;
    sg_tribool  use_const_ref_for_mutable_tensors;
    sg_ynode   *ufunc_inner_loop;  /* map as written */

    /* every key as written, in order: keys[i] / values[i] */
    const char **keys;
    sg_ynode   **values;
    uint32_t     nkeys;

    /* derived by group.c */
    sg_group    *group;

    /* derived by derive.c (sg_model_derive; zero until it runs) */
    sg_op       *structured_out;    /* the structured out op named by structured_delegate */
    bool         structured_is_out; /* a structured out op (structured: True, kind out) */
    sg_op      **delegates;         /* the ops whose structured_delegate names this one */
    uint32_t     ndelegates;
    sg_op       *autogen_from;      /* an op that `autogen:` asks for: the op it derives from */
    const char  *autogen_kind;      /* then "out" or "functional"; NULL for written ops */
    struct sg_op_c *c;              /* code generation's facts (derive.h); NULL until derived */
};

/* The functional / in-place / out / mutable variants of one base name and signature. */
struct sg_group {
    const char *signature;  /* the grouping key, printed */
    sg_op      *ops[SG_KIND__COUNT]; /* indexed by sg_schema_kind; NULL where absent */
    sg_op      *view;   /* the aliasing view op (torchgen's is_view_op, not in-place) whose
                           `_copy` twin, if any, is ops[SG_KIND_FUNCTIONAL]; NULL where none */
};

typedef struct sg_tag {
    const char *name;
    const char *desc;
    sg_pos      pos;
} sg_tag;

typedef struct sg_model {
    sg_arena   *arena;
    sg_source **sources;
    uint32_t    nsources, capsources;
    sg_op     **ops;
    uint32_t    nops, capops;
    sg_tag     *tags;         /* from tags.yaml inputs */
    uint32_t    ntags, captags;
    bool        have_tags;    /* a tags file was given: tags are checked against it */
    const sg_source *derivatives; /* a derivatives.yaml among the inputs (deriv.h), or NULL */
    sg_group  **groups;
    uint32_t    ngroups;
} sg_model;

/* ---- diagnostics ------------------------------------------------------------------------- */

typedef enum sg_severity { SG_NOTE, SG_WARNING, SG_ERROR } sg_severity;

typedef struct sg_diag {
    sg_buf   out;       /* rendered messages, gcc style */
    uint32_t nerrors;
    uint32_t nwarnings;
    uint32_t max_errors; /* stop rendering past this many (0: no limit) */
} sg_diag;

void sg_diag_init(sg_diag *d);
void sg_diag_free(sg_diag *d);
/* Renders "file:line:col: error: message", then the source line and a caret under col. */
void sg_diag_report(sg_diag *d, sg_severity sev, sg_pos pos, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* The same for a caller's own variadic reporter; a zero pos gives a message with no position. */
void sg_diag_vreport(sg_diag *d, sg_severity sev, sg_pos pos, const char *fmt, va_list ap);
/* A message with no position ("schemagen: error: ..."). */
void sg_diag_plain(sg_diag *d, sg_severity sev, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- model ------------------------------------------------------------------------------- */

int          sg_model_init(sg_model *m);    /* 0, or -1 when out of memory */
void         sg_model_free(sg_model *m);
/* Copies path and text into the arena. text NULL: makes zeroed room for len bytes instead,
 * for the caller to fill (the loader reads files straight into it). */
sg_source   *sg_model_add_source(sg_model *m, const char *path, const char *text, size_t len);
sg_op       *sg_model_add_op(sg_model *m);
sg_tag      *sg_model_add_tag(sg_model *m);
/* Moves the ops of `from` (and the memory they live in) after m's; `from` keeps its sources,
 * if any, and is then only to be freed. -1 when out of memory, with nothing moved. */
int          sg_model_take_ops(sg_model *m, sg_model *from);
/* Bytes the model's arena hands out. */
size_t       sg_model_memory(const sg_model *m);
/* Source position of byte offset `off` of op's func string. */
sg_pos       sg_op_pos_at(const sg_op *op, uint32_t off);
/* The yaml keys torchgen knows, one table (model.c): the shape of each key's value and the
 * typed field of sg_op it fills. */
typedef enum sg_key_shape {
    SG_KEY_FUNC,     /* the schema string: func, spans, schema, parsed */
    SG_KEY_VARIANTS, /* "function, method": variants, has_variants */
    SG_KEY_DISPATCH, /* a mapping of dispatch keys to kernels: dispatch, has_dispatch */
    SG_KEY_BOOL,     /* True or False: an sg_tribool */
    SG_KEY_STR,      /* a string */
    SG_KEY_SEQ,      /* a list of strings: an sg_strlist */
    SG_KEY_CSV,      /* comma-separated names: an sg_strlist */
    SG_KEY_TAGS,     /* a list or comma-separated names: an sg_strlist */
    SG_KEY_MAP,      /* a mapping kept as written: an sg_ynode */
} sg_key_shape;

typedef struct sg_op_keydef {
    const char  *name;
    sg_key_shape shape;
    size_t       off; /* of the field in sg_op (0 for func, variants and dispatch) */
} sg_op_keydef;

/* The known key `name`, or NULL. */
const sg_op_keydef *sg_op_keydef_find(const char *name);
/* Whether `key` is one of the boolean yaml keys (structured, device_guard, ...). */
bool         sg_op_key_is_bool(const char *key);
/* The value of yaml key `key` as written, or NULL. */
const sg_ynode *sg_op_key(const sg_op *op, const char *key);

/* ---- phases ------------------------------------------------------------------------------ */

/* Reads a file: a schema file (a YAML sequence of entries) or a tags file (entries with `tag:`),
 * told apart by content. Errors go to d; returns the number of errors added. */
int sg_load_file(sg_model *m, const char *path, sg_diag *d);
/* Same, from memory (tests, fuzzing). */
int sg_load_buffer(sg_model *m, const char *path, const char *text, size_t len, sg_diag *d);
/* Derives groups (sg_op.group, m->groups); run after loading, before validation. */
int sg_model_group(sg_model *m, sg_diag *d);
/* Applies every rule of docs/rules.md; returns the number of errors added. */
int sg_validate(sg_model *m, sg_diag *d);
/* Whether `name` is a dispatch key PyTorch knows (validate_yaml.c's table; SG-209). */
bool sg_dispatch_key_known(const char *name);

#endif
