/* rt_dispatch.h: the dispatcher's internals, shared by op.c (definitions and lookup),
 * dispatch.c (registration and tables), override.c and call.c. */
#ifndef SG_RT_DISPATCH_H
#define SG_RT_DISPATCH_H

#include "sg_dispatch.h"
#include "sg_schema.h"
#include "sg_api.h"

#include <pthread.h>

/* What a boxed call checks beyond tags and tensors (sg_op.checks): arguments that may hold a
 * list, string, enum or bool (their pointers, lengths, ranges), and arguments the op writes. */
enum { SG_OP_CHECK_VALUES = 1, SG_OP_CHECK_WRITTEN = 2 };

/* Whether a boxed call that leaves an argument out can fill it in (sg_op.fill): the schema
 * gives it no default, a default with a boxed value, or one the runtime has no value for. */
enum { SG_FILL_NONE, SG_FILL_OK, SG_FILL_CANNOT };

/* What a registration is. */
enum { REG_KERNEL, REG_FALLTHROUGH, REG_OVERRIDE };

/* A registration, which is also its handle. Kept (unlinked) after release until shutdown, so a
 * second release is caught rather than a use after free. */
struct sg_handle {
    struct sg_handle *next;     /* in its stack (newest first) or override list */
    struct sg_handle *all_next; /* every registration, for shutdown */
    sg_op            *op;       /* NULL for a backend fallback */
    uint8_t           key;      /* sg_key, alias keys included */
    uint8_t           what;     /* REG_* */
    bool              released;
    sg_kernel         k;        /* REG_KERNEL; REG_OVERRIDE: boxed = implementation */
    sg_override_pred  pred;     /* REG_OVERRIDE */
    sg_override_typed typed;    /* REG_OVERRIDE: its typed functions (pred NULL: boxed only);
                                   k.boxed is then the op's adapter, k.unboxed its redispatch */
    int32_t           priority; /* REG_OVERRIDE */
    uint64_t          seq;      /* registration order */
};
typedef struct sg_handle reg;

/* A published table and what it owns. */
typedef struct tbl {
    sg_table     t;
    struct tbl  *retired; /* older tables of the same op */
    void        *owned;   /* override states made for this table (a chain, see override.c) */
} tbl;

/* What a boxed call checks of one argument. Rationale: as large as an sg_any, so the boxed
 * call's loop reaches an argument and its checks through one index. */
typedef struct arg_check {
    int32_t  fast_tag;     /* SG_ANY_TENSOR where the argument takes a tensor, else -1 (no
                              tag): the one test a tensor argument needs */
    uint32_t accepts;      /* the sg_any tags it takes (a mask) */
    uint32_t item_accepts; /* the tags a LIST's items may carry (all: any) */
    uint32_t unused;       /* (to an sg_any's size) */
} arg_check;
_Static_assert(sizeof(arg_check) == sizeof(sg_any), "one index for both");

struct sg_op {
    sg_op_head  head;
    /* sg_op_call_boxed's first stop where a generated library gave one (atomic; set once under
     * sg__lock, typed before it), and the typed function it calls. Beside head: a boxed call
     * through them reads nothing else of the op. */
    sg_boxed_entry *entry;
    sg_fn           typed;
    sg_op      *all_next;   /* every op, definition order, for fallbacks and shutdown */
    char       *name;       /* "aten::add" */
    char       *overload;   /* "Tensor" or "" */
    char       *text;       /* canonical schema, namespace included */
    sg_arena   *arena;      /* the parsed schema lives here (the runtime's one arena for ops) */
    char       *source;     /* the schema text as given to sg_op_define */
    sg_schema   schema;
    int32_t     nargs, nrets;
    arg_check  *argc;       /* per argument: what a boxed call checks */
    int32_t    *tensor_args;  /* arguments that are tensors or tensor lists */
    int32_t     ntensor_args;
    int32_t    *written_args; /* tensor arguments the op writes ((a!)) */
    int32_t     nwritten;
    uint32_t    checks;       /* SG_OP_CHECK_*: what a boxed call checks after its one pass */
    int32_t     device_arg;   /* the Device argument of a factory op (no tensor arguments), or -1 */
    sg_any     *defaults;     /* per argument: its default as a boxed call passes it (where
                                 fill says SG_FILL_OK); NULL where the schema has none */
    uint8_t    *fill;         /* per argument: SG_FILL_*; NULL where the schema has no default */
    reg        *regs[SG_KEY__ALIAS_END]; /* per key, newest first */
    reg        *overrides[SG_KEY__COUNT]; /* priority high to low, then registration order */
    bool        overrides_off; /* sg_op_set_overrides_enabled(op, false) */
    tbl        *current;
};

/* The dispatcher's lock: held by every writer (definitions, registrations, table builds) and by
 * error paths that read registrations. Readers on the hot path never take it. */
extern pthread_mutex_t sg__lock;
/* Every op, newest first; the first op defined. Under sg__lock. */
extern sg_op *sg__ops;

/* Builds and publishes op's table from its registrations (lock held). */
sg_status sg__rebuild(sg_op *op);
/* Same for every op (lock held). */
sg_status sg__rebuild_all(void);
/* Frees the tables an op has had (lock held, nothing in flight). */
void      sg__free_tables(sg_op *op);

/* override.c: the entry for key k of op, with its overrides in front of stock (lock held). The
 * state the entry points to is chained onto t->owned. */
sg_status sg__override_entry(sg_op *op, sg_key k, const sg_entry *stock, bool stock_falls,
                             tbl *t, sg_entry *out);
void      sg__override_free(void *owned);
bool      sg__overrides_on(void); /* the switch, the environment read once (lock held) */

/* call.c: boxed kernels the tables point to. */
sg_boxed sg__missing_kernel;
sg_boxed sg__no_boxed_kernel;
sg_boxed sg__backend_select;

/* error.c: how many messages this thread has set (sg_error, sg_error_clear), so a record made
 * beside a message can tell whether that message is still the last one. */
uint64_t sg__error_seq(void);

/* op.c */
void sg__ops_free(void);

/* defaults.c: converts op's schema defaults into op->defaults and op->fill (lock held, arena
 * memory). A default without a boxed value is no error: only a call that leaves it out fails. */
sg_status sg__op_defaults(sg_op *op);
/* Whether v is a value the boxed call takes for argument i: a tag it accepts, well-formed as
 * sg_op_call_boxed checks it (call.c). */
bool      sg__arg_value_ok(const sg_op *op, int32_t i, const sg_any *v);
/* A boxed call with nargs < op->nargs (nargs >= 0): the arguments left out filled in from the
 * defaults, then called; SG_EINVAL, naming the first argument left out that cannot be filled. */
sg_status sg__call_filling(const sg_op *op, const sg_any *args, int32_t nargs, sg_any *rets,
                           int32_t nrets);

/* wrappers.c: the generated libraries' op handles (sg_op_desc tables), set back to
 * sg_op_uninit by sg_runtime_shutdown (lock held). */
sg_status sg__op_slots_add(const sg_op_desc *table, size_t n);
/* SG_ESTATE: fn was given sg_op_uninit, an op handle of a library whose init has not run. */
sg_status sg__uninit_error(const char *fn);
void      sg__op_slots_reset(void);

#endif
