/* dsl.h: DSL kernels ahead of time, the generator's side (docs/dsl.md). Private to gen/.
 *
 *   dsl_decl.c     reads declarations (kernels/dsl/NAME.yaml) against the model: every key
 *                  checked, the predicate type-checked, the grid expanded into artifacts with
 *                  unique prefixes
 *   dsl_launch.c   ... their `outputs` and `launch`
 *   dsl_read.c     what the readers share (dsl_load.h): the op resolved, expressions read
 *                  against its arguments
 *   dsl_set.c      the set of declarations: its arena, the declaration files read
 *   dsl_table.c    decision tables: shape classes of a matrix product and their backends
 *   dsl_when_c.c   `when_c`, the escape hatch: a user's C function, its name checked
 *   dsl_plan.c     the plan JSON the exporter builds from
 *   dsl_sidecar.c  the exporter's sidecars and binaries, checked against the plan
 *   dsl_emit.c     OUT/LIB_dsl.c and OUT/LIB_dsl.h, with dsl_emit_when.c, dsl_table_emit.c
 *                  and dsl_c.c (dsl_emit.h); dsl_out.c adds them to the run's outputs
 *
 * Everything lives in the set's arena; sg_dsl_free releases it at once. */
#ifndef SG_DSL_H
#define SG_DSL_H

#include "codegen.h"
#include "dsl_expr.h"

/* An expression of a declaration: its text, where it is, its checked tree. */
typedef struct sg_dsl_expr {
    sg_dsl_text  text;
    sg_dsl_node *node;
} sg_dsl_expr;

typedef struct sg_dsl_gridvar {
    const char   *name;
    sg_pos        pos;
    sg_dsl_type   type;   /* SG_DSLT_INT or SG_DSLT_DTYPE */
    sg_dsl_value *values;
    uint32_t      n;
} sg_dsl_gridvar;

/* The most dims an output's `sizes` may list: runtime/sg_tensor.h's SG_MAX_DIMS. */
enum { SG_DSL_MAX_DIMS = 64 };

/* An output takes the sizes of an argument (`like`) or its own (`sizes`). */
typedef struct sg_dsl_output {
    uint32_t     like;      /* index of the op's Tensor argument whose sizes (and dtype) it
                             * takes; without meaning where nsizes > 0 */
    sg_dsl_expr *sizes;     /* int expressions of the arguments and grid variables */
    uint32_t     nsizes;    /* 0: like's sizes */
    int          dtype;     /* index in sg_dsl_dtypes, -1: like's */
    int          dtype_var; /* a grid variable's index, -1: none (dtype or like's) */
    int64_t      keep_last; /* the last keep_last dims of like's sizes set to 1 */
    bool         zero;      /* a scratch tensor filled with zeros before the launch */
    sg_pos       pos;
} sg_dsl_output;

/* A kernel parameter: [name, type, value]. */
typedef struct sg_dsl_param {
    const char *name;
    const char *type;     /* as written: "*fp32", "*dtype", "i32" */
    bool        ptr;
    int         base;     /* the scalar type's index in sg_dsl_dtypes, -1: from grid_var */
    int         grid_var; /* a dtype grid variable naming the type, -1: none */
    sg_dsl_expr value;
    sg_pos      pos;
} sg_dsl_param;

typedef struct sg_dsl_constexpr {
    const char *name;
    sg_dsl_expr value;
} sg_dsl_constexpr;

typedef struct sg_dsl_decl sg_dsl_decl;

/* The DSLs a declaration may name, one row each: dsl_decl.c reads `dsl` and `compiler` by it,
 * dsl_sidecar.c the sidecar's kind and compiler, dsl_emit.c how an artifact is linked. */
typedef struct sg_dsl_lang {
    const char *name;    /* `dsl: NAME` */
    const char *package; /* `compiler: PACKAGE==VERSION`, and the sidecar's compiler name */
    const char *kind;    /* the sidecar's kind */
    bool        object;  /* an object file with its own loader and entry, linked into the
                          * library (no image in LIB_dsl.c, no launch grid or warps) */
} sg_dsl_lang;

extern const sg_dsl_lang sg_dsl_langs[];
extern const uint32_t    sg_dsl_nlangs;

/* One artifact to build: a grid point for one arch. */
typedef struct sg_dsl_artifact {
    sg_dsl_decl  *decl;
    uint32_t      point;  /* index of the point in the declaration's grid */
    uint32_t      arch;   /* index in decl->caps */
    const char   *prefix;
    sg_dsl_value *vals;   /* the point's value of each grid variable */
    sg_dsl_value *cvals;  /* each constexpr's value at the point */
    uint32_t      warps, stages; /* num_warps and num_stages at the point (not an object's) */
    /* from the sidecar (dsl_sidecar.c) */
    bool          have_sidecar;
    const unsigned char *image;
    size_t        image_size;
    const char   *symbol; /* the kernel (an image), the entry function (an object) */
    uint32_t      shared, nhidden;
    bool         *div16;  /* per parameter: the compiler assumed 16-byte alignment */
    bool         *int32;  /* per parameter: the compiler assumed an int32 value */
} sg_dsl_artifact;

struct sg_dsl_decl {
    const char      *name;
    sg_pos           pos;        /* the entry */
    const char      *file;       /* the declaration's path as given */
    const sg_op     *op;
    const char      *op_name;    /* "aten::_fused_rms_norm" as written */
    const sg_dsl_lang *lang;
    const char      *dsl, *compiler, *compiler_version;
    sg_pos           compiler_pos;
    const char      *source;     /* as written, relative to the declaration */
    const char      *source_path; /* absolute */
    char             source_sha[65];
    const char      *kernel;
    int32_t         *caps;       /* 10 * major + minor per arch, as written */
    const char     **arch_names; /* "sm_90" */
    uint32_t         narchs;
    int32_t          priority;
    sg_dsl_gridvar  *grid;
    uint32_t         ngrid;
    uint32_t         npoints;
    sg_dsl_expr      when;
    const char      *when_c;     /* the user's C function ANDed after `when`, NULL: none */
    sg_pos           when_c_pos;
    sg_dsl_output   *outputs;
    uint32_t         noutputs;
    sg_dsl_output   *scratch;    /* `sizes` and a dtype each; not returned */
    uint32_t         nscratch;
    sg_dsl_expr      launch_grid[3]; /* not for an object DSL: */
    sg_dsl_expr      num_warps, num_stages; /* int expressions over grid variables */
    sg_dsl_constexpr *constexprs;
    uint32_t         nconstexprs;
    sg_dsl_param    *params;
    uint32_t         nparams;
    sg_dsl_sym      *syms;       /* the names its expressions may use */
    uint32_t         nsyms;
    uint32_t         first, nartifacts; /* its artifacts in the set */
    bool             is_template; /* `template: true`: no override of its own; its points run
                                   * where a decision table picks them, or by index */
};

/* A decision table (`table:`, dsl_table.c): shape classes of a matrix product and what serves
 * each, written by a tuner. */
enum { SG_DSL_USE_HEURISTIC, SG_DSL_USE_CUBLASLT, SG_DSL_USE_CUBLAS, SG_DSL_USE_TEMPLATE };

/* The fields of a cuBLASLt configuration: sg_gemm_lt_config's, sg_dsl_lt_keys. */
enum { SG_DSL_LT_FIELDS = 9 };

typedef struct sg_dsl_rule {
    int                dtype;      /* index in sg_dsl_dtypes */
    int                layout;     /* sg_gemm_layout: 0 nn, 1 nt, 2 tn, 3 tt */
    int64_t            m_lo, m_hi, n, k;
    int64_t            batch_lo, batch_hi; /* inclusive; [1, 1] where the table has no batch */
    int                use;        /* SG_DSL_USE_* */
    int32_t            algo[SG_DSL_LT_FIELDS]; /* SG_DSL_USE_CUBLASLT: sg_gemm_lt_config's */
    const sg_dsl_decl *tpl;        /* SG_DSL_USE_TEMPLATE: the template, and its artifact */
    uint32_t           art;        /*   (index among tpl's) at the table's capability */
    const char        *gain;       /* as written; NULL where absent */
    sg_pos             pos;
    /* a template's, kept from the reading to sg_dsl_link_tables: its name and point */
    const char        *tpl_name;
    sg_pos             tpl_pos;
    const void        *point;      /* the `point` mapping (an sg_ynode of the set's arena) */
} sg_dsl_rule;

/* "algo", "tile", ...: sg_gemm_lt_config's fields in order, NULL-ended (dsl_table.c). */
extern const char *const sg_dsl_lt_keys[];

/* A table's functions: its keys are sg_dsl_fn_keys[i] (dsl_table.c). */
enum { SG_DSL_FN_CUBLASLT, SG_DSL_FN_CUBLAS, SG_DSL_FN_TF32, SG_DSL_NFNS };
extern const char *const sg_dsl_fn_keys[SG_DSL_NFNS];

typedef struct sg_dsl_table {
    sg_dsl_decl        *dc;        /* name, op, priority, file, position and the names its
                                    * expressions may use (no grid, no artifacts) */
    int32_t             cap;       /* the capability it was tuned on: it applies there only */
    const char        **tuned;     /* key, value pairs of `tuned`, in the file's order */
    uint32_t            ntuned;
    uint32_t            a, b;      /* the operands' argument indices */
    sg_dsl_expr         m, n, k;
    sg_dsl_expr         batch;     /* `batch`, where has_batch; else the batch is 1 */
    bool                has_batch;
    /* the functions the generated code calls, by SG_DSL_FN_*, NULL where not named:
     * cuBLASLt's algorithm (the op's arguments after the configuration and ks), cuBLAS's own
     * choice (after ks), and bool F(void), whether float32 may run through TF32 (float32 rules
     * need it); and where each is named */
    const char         *fn[SG_DSL_NFNS];
    sg_pos              fn_pos[SG_DSL_NFNS];
    uint32_t            nlt;       /* the rules that use cuBLASLt */
    uint32_t            nblas;     /* the rules that use cuBLAS */
    uint32_t            nf32;      /* the float32 rules */
    sg_dsl_rule        *rules;     /* sorted by (dtype, layout, n, k, batch_lo, m_lo) */
    uint32_t            nrules;
    const sg_dsl_decl **tpls;      /* the templates its rules use, each once */
    uint32_t            ntpls;
} sg_dsl_table;

typedef struct sg_dsl_set {
    sg_arena         *a;
    sg_dsl_decl     **decls;
    uint32_t          ndecls, capdecls;
    sg_dsl_artifact  *arts;
    uint32_t          narts, caparts;
    sg_dsl_table    **tables;
    uint32_t          ntables, captables;
    const char      **files; /* the declaration files as given, for banners */
    uint32_t          nfiles;
    /* the object artifacts' runtime library, once its bytes matched a sidecar's SHA-256 (every
     * artifact of a DSL names the same one: read and hashed once) */
    const char       *runtime_path, *runtime_sha;
} sg_dsl_set;

/* 0, or -1 when out of memory. */
int  sg_dsl_init(sg_dsl_set *s);
void sg_dsl_free(sg_dsl_set *s);
/* The file's bytes as a source of the set's (diagnostics quote it); NULL after an error,
 * reported to d (dsl_set.c). */
sg_source *sg_dsl_read_source(sg_dsl_set *s, const char *path, sg_diag *d);
/* The same for len bytes of text, given as the file's (a copy is kept). */
sg_source *sg_dsl_source(sg_dsl_set *s, const char *path, const char *text, size_t len,
                         sg_diag *d);
/* Reads the declarations of `path` against m (loaded and validated): errors to d. Returns the
 * number of errors added. Declarations of all files share one namespace of names and of
 * prefixes. */
int sg_dsl_load(sg_dsl_set *s, const sg_model *m, const char *path, sg_diag *d);
/* The same for len bytes of text read as the file `path` (files it names are found beside
 * path). */
int sg_dsl_load_buffer(sg_dsl_set *s, const sg_model *m, const char *path, const char *text,
                       size_t len, sg_diag *d);
/* The declaration or table (its dc) called name, among those read so far; NULL where none. */
const sg_dsl_decl *sg_dsl_find_decl(const sg_dsl_set *s, const char *name);
/* Expands dc's grid into artifacts of s (each point, for each arch), with their constexprs
 * and unique prefixes. Returns the number of errors added (dsl_plan.c). */
int sg_dsl_expand(sg_dsl_set *s, sg_dsl_decl *dc, sg_diag *d);
/* Checks `when_c: name` of dc (its op resolved, its grid and `when` read): a C identifier
 * outside the reserved spaces, not an argument's or an op's C name, and not another
 * declaration's when_c with other parameter types. Sets dc->when_c; errors to d; false after
 * one (dsl_when_c.c). */
bool sg_dsl_when_c(const sg_dsl_set *s, sg_dsl_decl *dc, const char *name, sg_pos pos,
                   sg_diag *d);
/* Whether `name`, a function the code generated for dc calls (`key` names it in messages),
 * is neither hidden by the C name of an argument of dc's op nor among the names generated
 * for an op of the set; else an error at pos (dsl_when_c.c). */
bool sg_dsl_fn_name_free(const sg_dsl_set *s, const sg_dsl_decl *dc, const char *key,
                         const char *name, sg_pos pos, sg_diag *d);
/* After dc's expansion: an error where dc has a when_c that no call could reach (its `when`
 * is false at every point). Returns the number of errors added. */
int sg_dsl_when_c_reached(const sg_dsl_set *s, const sg_dsl_decl *dc, sg_diag *d);
/* The Triton type of parameter p at artifact a ("*fp32"). */
void sg_dsl_param_type(sg_buf *b, const sg_dsl_param *p, const sg_dsl_artifact *a);
/* The plan JSON (docs/dsl.md): the same set gives the same bytes. */
void sg_dsl_plan(sg_buf *b, const sg_dsl_set *s);
/* Reads DIR/PREFIX.json and DIR/PREFIX.cubin of every artifact and checks them against the
 * declarations (docs/dsl.md lists what is refused). Returns the number of errors added. */
int sg_dsl_read_artifacts(sg_dsl_set *s, const char *dir, sg_diag *d);
/* The C of LIB_dsl.c and LIB_dsl.h; inputs name the schema files for the banner. */
void sg_dsl_emit_c(sg_buf *c, sg_buf *h, const sg_dsl_set *s, const char *lib,
                   const char *const *inputs, uint32_t ninputs);

/* After every declaration file is read: each table rule's template found (a declaration with
 * `template: true` of the table's op, in any file) and its point among the template's
 * artifacts at the table's capability. Returns the number of errors added (dsl_table.c). */
int sg_dsl_link_tables(sg_dsl_set *s, sg_diag *d);

/* Looks symbol up in an ELF64 image's symbol table: 0 a defined function, 1 another kind of
 * symbol, 2 absent, -1 not a well-formed ELF64 file (*why says how). Bounds-checked. */
int sg_dsl_elf_symbol(const unsigned char *img, size_t n, const char *symbol, const char **why);
/* Adds LIB_dsl.c and LIB_dsl.h to outs (dsl_out.c). -1 when out of memory. */
int sg_dsl_add_outputs(sg_outputs *outs, const sg_dsl_set *s, const char *lib,
                       const char *const *inputs, uint32_t ninputs);
/* Marks the files an earlier run with --dsl wrote as stale for this run's outputs (removed
 * unless written again). -1 when out of memory. */
int sg_dsl_mark_stale(sg_outputs *outs);
/* Writes b to path through a temporary file and a rename, unless path holds those bytes
 * already. Problems on err; 0 or -1. */
int sg_dsl_write_file(const char *path, const sg_buf *b, FILE *err);

/* What the banner of LIB_dsl.c and LIB_dsl.h ends with: sg_stale's mark for them. */
extern const char sg_dsl_banner_mark[];

#endif
