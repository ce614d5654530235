/* sg_schema.h: the schema language (aten function schemas), as a small library.
 *
 * Parses one schema string such as
 *     my_ops::add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
 * into plain data (sg_schema), prints it back in canonical form, and nothing else: no YAML,
 * no Lua, no I/O. The generator and the runtime both link it (the runtime defines ops from
 * schema strings at run time, as TORCH_LIBRARY's def does).
 *
 * Memory: everything a parse produces lives in an sg_arena the caller owns; freeing the arena
 * frees the schema. Strings in the model are NUL-terminated copies, never pointers into the
 * source text, so the source may be freed after the parse.
 *
 * Grammar accepted (PyTorch's runtime schema parser's, which is a superset of torchgen's):
 *   schema   := [ns '::'] name ['.' overload] '(' args ')' '->' returns
 *   args     := [arg (',' arg)*] with one optional bare '*' (keyword-only from there on)
 *               and an optional trailing '...' (varargs)
 *   arg      := type [ '[' N ']' [annot] ['?'] ] name ['=' default]
 *   returns  := type [name] | '(' [type [name] (',' type [name])*] [',' '...'] ')' | '...'
 *   type     := base [annot] ( '[]' [annot] | '?' )*
 *   base     := Tensor | int | SymInt | ... (sg_type_kind) | t (type variable)
 *             | Tuple(...) | Dict(k, v) | Future(t) | RRef(t) | Await(t) | Union(...)
 *             | __torch__.torch.classes.a.b
 *   annot    := '(' set ['!'] ['->' set] ')' | '!'      set := (ident | '*') ('|' ...)*
 * An annotation may follow a named type (any of them, as in c10: int(a), Dict(k, v)(a)) or
 * '[]'; torchgen's stricter rules (annotations on Tensor only) are the validator's.
 * Whitespace between tokens is free.
 */
#ifndef SG_SCHEMA_H
#define SG_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- arena ------------------------------------------------------------------------------- */

/* A bump allocator: many small allocations, one free. alloc may be NULL (malloc and free, big
 * chunks on transparent huge pages where the system has them: see arena.c);
 * otherwise it is called as alloc(ud, NULL, n) to allocate and alloc(ud, p, 0) to free, so tests
 * can inject failures. */
typedef void *(*sg_alloc_fn)(void *ud, void *ptr, size_t size);
typedef struct sg_arena sg_arena;

sg_arena *sg_arena_new(sg_alloc_fn alloc, void *ud);
void      sg_arena_free(sg_arena *a);
/* Returns 8-byte aligned zeroed memory, or NULL when out of memory. */
void     *sg_arena_alloc(sg_arena *a, size_t n);
char     *sg_arena_strndup(sg_arena *a, const char *s, size_t n);
size_t    sg_arena_used(const sg_arena *a);
/* Room for n bytes ahead in one chunk, for an arena about to take about that much: fewer,
 * bigger chunks. false when out of memory (the arena works on). */
bool      sg_arena_reserve(sg_arena *a, size_t n);
/* Moves every block of `from` into a (they live until a is freed) and frees `from`. false,
 * with nothing done, where the two arenas allocate through different hooks. */
bool      sg_arena_adopt(sg_arena *a, sg_arena *from);

/* ---- types ------------------------------------------------------------------------------- */

/* Every type the corpus or PyTorch's parser knows. The order is the order of the info table
 * (sg_type_infos); SG_TY__COUNT guards it. */
typedef enum sg_type_kind {
    /* leaf types, spelled by name */
    SG_TY_TENSOR,
    SG_TY_INT,
    SG_TY_SYMINT,
    SG_TY_FLOAT,
    SG_TY_SYMFLOAT,
    SG_TY_BOOL,
    SG_TY_SYMBOOL,
    SG_TY_COMPLEX,
    SG_TY_STR,
    SG_TY_SCALAR,
    SG_TY_SCALAR_TYPE,
    SG_TY_LAYOUT,
    SG_TY_MEMORY_FORMAT,
    SG_TY_DEVICE,
    SG_TY_DEVICE_INDEX,
    SG_TY_GENERATOR,
    SG_TY_DIMNAME,
    SG_TY_DIMVECTOR,
    SG_TY_STORAGE,
    SG_TY_STREAM,
    SG_TY_QSCHEME,
    SG_TY_QUANTIZER,
    SG_TY_CONST_QUANTIZER_PTR,
    SG_TY_GRAPH_MODULE,
    SG_TY_CAPSULE,
    SG_TY_ANY,
    SG_TY_ANY_CLASS,
    SG_TY_ANY_ENUM,
    SG_TY_NONE,      /* "NoneType" (also "None" as a type) */
    SG_TY_VAR,       /* a type variable: t, t1, T (name in sg_type.name) */
    SG_TY_CLASS,     /* __torch__.torch.classes.ns.Name (full name in sg_type.name) */
    /* constructed types */
    SG_TY_OPTIONAL,  /* elems[0]? */
    SG_TY_LIST,      /* elems[0][] or elems[0][size] */
    SG_TY_TUPLE,     /* Tuple(elems...) or (elems...) */
    SG_TY_DICT,      /* Dict(elems[0], elems[1]) */
    SG_TY_FUTURE,    /* Future(elems[0]) */
    SG_TY_RREF,      /* RRef(elems[0]) */
    SG_TY_AWAIT,     /* Await(elems[0]) */
    SG_TY_UNION,     /* Union(elems...) */
    SG_TY__COUNT
} sg_type_kind;

enum {
    SG_TYF_LEAF      = 1u << 0, /* spelled by a name alone */
    SG_TYF_ALIASABLE = 1u << 1, /* may carry an alias annotation */
    SG_TYF_TORCHGEN  = 1u << 2, /* torchgen's BaseTy knows it (aten entries may use it) */
    SG_TYF_CALL      = 1u << 3, /* constructed as Name(args...) */
};

typedef struct sg_type_info {
    const char *name;  /* spelling in a schema ("ScalarType", "Dict"); NULL where none */
    unsigned    flags; /* SG_TYF_* */
} sg_type_info;

extern const sg_type_info sg_type_infos[SG_TY__COUNT];

/* An alias annotation: Tensor(a), (a!), (a|b), (a -> *), (a! -> a|b), (*), and the fresh-set
 * shorthand Tensor!. Set members are names; "*" is the wildcard. */
typedef struct sg_alias {
    const char **before;
    const char **after;   /* == before (same array) unless an arrow was written */
    uint32_t     nbefore;
    uint32_t     nafter;
    bool         write;   /* '!' */
    bool         arrow;   /* '->' written */
    bool         fresh;   /* Tensor!: a fresh written set with no name */
    uint32_t     offset;  /* byte offset of '(' (or '!') in the schema text */
} sg_alias;

typedef struct sg_type sg_type;
struct sg_type {
    sg_type_kind kind;
    int32_t      size;    /* SG_TY_LIST: fixed size N of T[N], or -1 */
    const char  *name;    /* SG_TY_VAR, SG_TY_CLASS: the name as written */
    sg_type    **elems;   /* constructed types: element types */
    uint32_t     nelems;
    sg_alias    *alias;   /* annotation on this node (Tensor(a), T[](a)), or NULL */
    uint32_t     offset;  /* byte offset in the schema text */
};

/* ---- default values ---------------------------------------------------------------------- */

typedef enum sg_value_kind {
    SG_VAL_NONE,    /* None */
    SG_VAL_BOOL,    /* True / False */
    SG_VAL_INT,     /* 1, -100, 010 (decimal: 10) */
    SG_VAL_FLOAT,   /* 1.0, 1e-05 (always finite) */
    SG_VAL_COMPLEX, /* 1j, 2.5j (imaginary literal) */
    SG_VAL_STR,     /* 'linear', "L" (escapes decoded as c10 decodes them) */
    SG_VAL_LIST,    /* [0,1], [] */
    SG_VAL_IDENT,   /* a named constant: Mean, long, contiguous_format */
} sg_value_kind;

typedef struct sg_value sg_value;
struct sg_value {
    sg_value_kind kind;
    union {
        bool    b;
        int64_t i;
        double  f;                                /* FLOAT, and the imaginary part of COMPLEX */
        struct { const char *s; size_t len; } str; /* STR (decoded, may hold NUL) and IDENT */
        struct { sg_value *items; uint32_t n; } list;
    } u;
};

/* ---- arguments and schemas --------------------------------------------------------------- */

typedef struct sg_arg {
    const char *name;          /* NULL for an unnamed return */
    sg_type    *type;
    const char *default_text;  /* the default's source text, NULL if none */
    sg_value   *default_value; /* parsed default, NULL if none */
    bool        kwarg_only;    /* after '*' */
    bool        write;         /* its annotation writes ('!'), on the type or an element,
                                * and the type is Tensor-like (Tensor, Tensor?, Tensor[],
                                * Tensor?[]); int(a!) keeps its annotation but is not written */
    uint32_t    offset;        /* byte offset of the argument's first character */
    uint32_t    name_offset;   /* byte offset of the name (== offset when unnamed) */
    uint32_t    default_offset;
} sg_arg;

/* What an op does to its arguments, torchgen's SchemaKind. */
typedef enum sg_schema_kind {
    SG_KIND_FUNCTIONAL,
    SG_KIND_INPLACE,
    SG_KIND_OUT,
    SG_KIND_MUTABLE,
    SG_KIND_SCRATCH,
    SG_KIND__COUNT
} sg_schema_kind;

extern const char *const sg_schema_kind_names[SG_KIND__COUNT];

typedef struct sg_schema {
    const char *ns;        /* "my_ops", or NULL where none was written */
    const char *name;      /* as written: "add_", "__iand__" */
    const char *overload;  /* "" where none */
    const char *base;      /* name with in-place '_' and augmented dunder 'i' stripped: "add", "__and__" */
    bool        inplace;   /* add_, __iand__ */
    bool        dunder;    /* __and__ */
    sg_arg     *args;
    uint32_t    nargs;
    uint32_t    npositional; /* args[0..npositional) are positional, the rest keyword-only */
    bool        star;        /* a bare '*' was written (it may be followed by nothing) */
    bool        varargs;     /* '...' ends the arguments */
    sg_arg     *rets;
    uint32_t    nrets;
    bool        varret;      /* '...' ends the returns */
    bool        ret_parens;  /* returns written in parentheses */
    sg_schema_kind kind;         /* torchgen's SchemaKind (sg_schema_kind_of) */
    int32_t     self_index;      /* the first positional argument named self, or -1 */
    uint32_t    name_offset;     /* of name (after any ns::) */
    uint32_t    overload_offset; /* of the overload name, or of '(' where none */
} sg_schema;

/* ---- parsing ----------------------------------------------------------------------------- */

typedef struct sg_schema_error {
    uint32_t offset;    /* byte offset into the schema text where the problem is */
    char     msg[256];
} sg_schema_error;

enum { SG_SCHEMA_OK = 0, SG_SCHEMA_ESYNTAX = 1, SG_SCHEMA_ENOMEM = 2 };

/* Limits on hostile input, each refused with a located error: a type's tree (every '[]', '?'
 * and constructed type counts one level: Tensor?[] is 3) and a list default's nesting are at
 * most SG_SCHEMA_MAX_DEPTH deep; a schema has at most 256 arguments and 256 returns, a list
 * default at most 256 items, a constructed type at most 64 element types, an alias set at
 * most 64 names. The parse takes time linear in the text's length. */
enum { SG_SCHEMA_MAX_DEPTH = 32 };

/* Parses text[0..len) into *out. Returns SG_SCHEMA_OK, or an error code with *err filled.
 * Checks what PyTorch (c10's schema parser) checks when a library defines a schema: the
 * grammar, known types, annotations only where c10 reads them, overload names ('default' and
 * names starting with '__' are reserved), default values that fit their type and that c10
 * reads as written (no nan/inf, no value beyond a double's or an int64's range, no '\x'
 * escape, see docs/schema-language.md), and that no positional argument without a default
 * follows one with a default (lists excepted). */
int sg_schema_parse(const char *text, size_t len, sg_arena *arena, sg_schema *out,
                    sg_schema_error *err);

/* torchgen's reading of an operator name (name[0..n)): a dunder is __x__ with no '_' inside;
 * in-place is a trailing '_' on a non-dunder, or an augmented-assignment dunder (__iadd__).
 * base_len: the length of the base name when it is a prefix of the name (in-place '_'
 * dropped); an augmented dunder's base drops the 'i' instead (__iand__ -> __and__). */
typedef struct sg_name_info {
    bool   dunder;
    bool   inplace;
    bool   augmented; /* __iadd__ and its kin */
    size_t base_len;
} sg_name_info;

sg_name_info sg_name_classify(const char *name, size_t n);

/* Derived facts (the first three as the parser worked them out). */
static inline sg_schema_kind sg_schema_kind_of(const sg_schema *s) { return s->kind; }
static inline bool sg_arg_is_write(const sg_arg *a) { return a->write; }
/* keyword-only and written */
static inline bool sg_arg_is_out(const sg_schema *s, const sg_arg *a) {
    (void)s;
    return a->kwarg_only && a->write;
}
bool            sg_schema_is_mutable(const sg_schema *s); /* any argument written */
/* The argument a return is: the written argument whose annotation's first set the return's
 * written annotation names (`-> Tensor(a!)` of `Tensor(a!) self`), or -1 for a new result. */
int32_t         sg_ret_arg(const sg_schema *s, const sg_arg *ret);
/* The first annotation inside the type (Tensor(a!)[] gives a!), or NULL. */
const sg_alias *sg_type_alias(const sg_type *t);
/* The innermost element type of lists and optionals: Tensor for Tensor?[]. */
const sg_type  *sg_type_base(const sg_type *t);
bool            sg_type_is_tensor_like(const sg_type *t); /* Tensor, Tensor?, Tensor[], Tensor?[] */

/* ---- printing ---------------------------------------------------------------------------- */

/* A growable string. With a sink set, it streams instead: once it holds more than
 * SG_BUF_STREAM bytes, the next append first hands everything to the sink, so emitters write
 * large outputs through a small window of memory; an append of SG_BUF_STREAM bytes or more
 * goes to the sink as it is, without a copy. */
typedef bool (*sg_buf_sink)(void *ud, const char *data, size_t len);

typedef struct sg_buf {
    char       *data;
    size_t      len, cap;
    bool        oom;         /* set when an append could not grow; data stays valid */
    bool        sink_failed; /* the sink refused bytes; later appends are dropped */
    sg_buf_sink sink;
    void       *sink_ud;
} sg_buf;

enum { SG_BUF_STREAM = 64 * 1024 };

void sg_buf_init(sg_buf *b);
void sg_buf_free(sg_buf *b);
void sg_buf_set_sink(sg_buf *b, sg_buf_sink sink, void *ud);
/* Hands what is held to the sink (if any); false when the sink failed now or before, or the
 * buffer ran out of memory. */
bool sg_buf_flush(sg_buf *b);
/* Appends n bytes (that may hold NUL). The buffer stays NUL-terminated. */
void sg_buf_putn_slow(sg_buf *b, const char *s, size_t n);
/* Rationale: printers append a few bytes at a time, millions of times over a large schema
 * set; where there is room and no sink the append is a memcpy in the caller, and only growing
 * and streaming go out of line. */
static inline void sg_buf_putn(sg_buf *b, const char *s, size_t n) {
    if (!b->sink && !b->oom && n < b->cap - b->len) {
        memcpy(b->data + b->len, s, n);
        b->len += n;
        b->data[b->len] = '\0';
        return;
    }
    sg_buf_putn_slow(b, s, n);
}
static inline void sg_buf_puts(sg_buf *b, const char *s) { sg_buf_putn(b, s, strlen(s)); }
static inline void sg_buf_putc(sg_buf *b, char c) { sg_buf_putn(b, &c, 1); }
void sg_buf_printf(sg_buf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Prints a type; with_alias false leaves annotations out ("Tensor?[]", "SymInt[2]?"). */
void sg_type_print(sg_buf *b, const sg_type *t, bool with_alias);
/* The type as sg_type_print(b, t, false) spells it, written to dst[0..cap) without a NUL;
 * returns the length, or 0 where it does not fit or is a tuple or a constructed type such as
 * Dict(...) (print those with sg_type_print). Rationale: the spelling of nearly every type is
 * a few bytes that emitters want in place, not through a buffer. */
size_t sg_type_spell(const sg_type *t, char *dst, size_t cap);
void sg_alias_print(sg_buf *b, const sg_alias *a);
/* Prints the canonical form: one space after each ',', ' -> ' between arguments and returns,
 * defaults as written, parentheses around returns unless there is exactly one (torchgen's form).
 * Parsing the output gives an identical model. with_ns false leaves the namespace out. */
void sg_schema_print(sg_buf *b, const sg_schema *s, bool with_ns);

/* Compares two models (names, types, annotations, defaults, flags); offsets are ignored. */
bool sg_schema_equal(const sg_schema *a, const sg_schema *b);

#ifdef __cplusplus
}
#endif
#endif
