/* sg_dispatch.h: dispatch keys, ops, kernels, registration, conditional overrides, calls.
 *
 * An op (sg_op) is defined from a schema string and looked up by name once; callers keep the
 * handle. Each op has a dense table with one entry per dispatch key. A call computes a key set
 * from its tensor arguments and the thread's include/exclude sets, keeps the keys whose entry
 * is not a fallthrough (the table's mask), and runs the entry of the highest key left:
 *
 *     ks = (tensor keys | included) & ~excluded            sg_tls_apply
 *     e  = table->entry[highest bit of (ks & table->mask) | 1]    sg_dispatch_entry
 *
 * Bit 0 is SG_KEY_UNDEFINED, whose entry reports that nothing selected a kernel, so the lookup
 * has no branch. The hot path takes no lock and allocates nothing: a table is immutable once
 * published; registration builds a new one under a lock and publishes it with one atomic store.
 * Rationale: a reader may hold the old table for the duration of a call, so replaced tables are
 * kept until sg_runtime_shutdown (registrations are rare and a table is ~500 bytes).
 *
 * Keys, lowest priority first: the backends (CPU < CUDA < PrivateUse1..3 < Meta, so a CPU
 * scalar beside a CUDA tensor goes to CUDA), BackendSelect, one Autograd key per backend, and
 * Override (a layer a thread enters by including it). Every tensor selects its backend key and
 * the matching Autograd key; BackendSelect is included by default. Autograd, BackendSelect and
 * Override fall through unless something is registered for them.
 *
 * The alias keys Autograd, CompositeImplicitAutograd and CompositeExplicitAutograd exist for
 * registration only; each table entry is resolved as PyTorch resolves it:
 *   1. a kernel registered for the key itself;
 *   2. for a backend key, a CompositeExplicitAutograd kernel;
 *   3. for a backend or Autograd key, a CompositeImplicitAutograd kernel (for an Autograd key
 *      only where its backend has neither a kernel of its own nor a CompositeExplicitAutograd
 *      one, so autograd does not hide a backend kernel);
 *   4. for an Autograd key, a kernel registered for the alias Autograd;
 *   5. the key's backend fallback (a boxed kernel for every op, or a fallthrough);
 *   6. otherwise: missing (calls fail with a message naming the keys that have kernels).
 * Registering twice for one (op, key) stacks: the newest wins, and releasing it restores the
 * previous one, whatever the order of releases.
 *
 * Kernels. A kernel is an unboxed function, a boxed function, or both. An unboxed kernel's C type
 * is the op's typed signature (generated per op), with the key set first:
 *     sg_status my_abs(sg_keyset ks, sg_tensor *self, sg_tensor **out);
 * A boxed kernel takes borrowed arguments and fills caller-zeroed results (sg_boxed_fn). Both
 * receive the key set the call computed, so a kernel registered for key K redispatches to what
 * lies below it with sg_keyset_below(ks, K).
 *
 * Conditional overrides (torch._native's semantics): for (op, key), (predicate, implementation)
 * pairs ordered by priority, highest first (ties: earliest registered first). A call at that key
 * runs the first implementation whose predicate holds; where none holds it runs what the entry
 * would be without overrides, fallthrough included. An op with none pays nothing. Overrides are
 * switched off by sg_overrides_set_enabled(false) or by SG_DISABLE_OVERRIDES=1 in the
 * environment (read once, at the first registration or call that builds a table), and one op's
 * by sg_op_set_overrides_enabled(op, false). Switched off, they are out of the tables: calls
 * pay nothing for them.
 */
#ifndef SG_DISPATCH_H
#define SG_DISPATCH_H

#include "sg_any.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- keys -------------------------------------------------------------------------------- */

typedef enum sg_key {
    SG_KEY_UNDEFINED = 0,
    SG_KEY_CPU,
    SG_KEY_CUDA,
    SG_KEY_PRIVATEUSE1,
    SG_KEY_PRIVATEUSE2,
    SG_KEY_PRIVATEUSE3,
    SG_KEY_META,
    SG_KEY_BACKEND_SELECT,
    SG_KEY_AUTOGRAD_CPU,
    SG_KEY_AUTOGRAD_CUDA,
    SG_KEY_AUTOGRAD_PRIVATEUSE1,
    SG_KEY_AUTOGRAD_PRIVATEUSE2,
    SG_KEY_AUTOGRAD_PRIVATEUSE3,
    SG_KEY_AUTOGRAD_META,
    SG_KEY_OVERRIDE,
    SG_KEY__COUNT, /* keys that have table entries end here */
    /* alias keys: registration only */
    SG_KEY_AUTOGRAD = 32,
    SG_KEY_COMPOSITE_IMPLICIT_AUTOGRAD,
    SG_KEY_COMPOSITE_EXPLICIT_AUTOGRAD,
    SG_KEY__ALIAS_END
} sg_key;

#define SG_KEYSET(k)        ((sg_keyset)1 << (k))
#define SG_KEYSET_BACKENDS  (SG_KEYSET(SG_KEY_META + 1) - SG_KEYSET(SG_KEY_CPU))
#define SG_KEYSET_AUTOGRAD  (SG_KEYSET(SG_KEY_AUTOGRAD_META + 1) - SG_KEYSET(SG_KEY_AUTOGRAD_CPU))

/* "CPU", "AutogradCUDA", "CompositeImplicitAutograd"; NULL for a number that is no key. */
const char *sg_key_name(sg_key k);
bool        sg_key_is_alias(sg_key k);
/* The backend key of a device type, and the Autograd key of a backend key. */
sg_key      sg_key_of_device(sg_device_type t);
sg_key      sg_key_autograd_of(sg_key backend);
/* The keys a tensor on this device selects: its backend key and that backend's Autograd key. */
sg_keyset   sg_keyset_of_device(sg_device d);

/* The keys of ks that rank below k: what a kernel registered for k redispatches to. */
/* Keys of ks below k; for a number beyond every key (64 or more) all of ks, for a negative one
 * none (a shift by 64 or more would be undefined). */
static inline sg_keyset sg_keyset_below(sg_keyset ks, sg_key k) {
    if ((unsigned)k >= 64u) return (int)k < 0 ? 0 : ks;
    return ks & (SG_KEYSET(k) - 1);
}
static inline sg_key sg_keyset_highest(sg_keyset ks) {
    return (sg_key)(63 - __builtin_clzll(ks | 1));
}

/* The calling thread's include and exclude sets (included: BackendSelect). Save and restore
 * them around a region, e.g. to run below Autograd:
 *     sg_tls_keys saved = sg_tls_keys_get();
 *     sg_tls_keys_exclude(SG_KEYSET_AUTOGRAD);
 *     ...;
 *     sg_tls_keys_set(saved);                                                              */
typedef struct sg_tls_keys {
    sg_keyset included;
    sg_keyset excluded;
} sg_tls_keys;

/* The thread's sets as the hot path reads them: `allowed` is the complement of the excluded
 * set (Rationale: one AND instead of NOT and AND on every call). */
typedef struct sg_tls_state {
    sg_keyset included;
    sg_keyset allowed;
} sg_tls_state;

#if defined(__cplusplus)
extern thread_local sg_tls_state sg_tls_keys_state;
#elif defined(__GNUC__)
extern _Thread_local sg_tls_state sg_tls_keys_state __attribute__((tls_model("initial-exec")));
#else
extern _Thread_local sg_tls_state sg_tls_keys_state;
#endif

static inline sg_tls_keys sg_tls_keys_get(void) {
    sg_tls_keys k = {sg_tls_keys_state.included, ~sg_tls_keys_state.allowed};
    return k;
}
static inline void sg_tls_keys_set(sg_tls_keys k) {
    sg_tls_keys_state.included = k.included;
    sg_tls_keys_state.allowed = ~k.excluded;
}
static inline void sg_tls_keys_include(sg_keyset ks) { sg_tls_keys_state.included |= ks; }
static inline void sg_tls_keys_exclude(sg_keyset ks) { sg_tls_keys_state.allowed &= ~ks; }
/* The key set of a call whose tensors select ks. */
static inline sg_keyset sg_tls_apply(sg_keyset ks) {
    return (ks | sg_tls_keys_state.included) & sg_tls_keys_state.allowed;
}

/* ---- kernels ----------------------------------------------------------------------------- */

typedef struct sg_op sg_op;
typedef void (*sg_fn)(void); /* an unboxed kernel, cast to the op's typed signature to call */

/* A boxed kernel: borrowed arguments in (one per schema argument: sg_op_nargs(op) of them),
 * nrets result slots out (at least sg_op_nrets(op), zeroed by the caller), status back. ctx
 * is what was registered with it. (sg_boxed is the function type, for declarations.)
 * Rationale: six parameters all travel in registers, op, rets and nrets in those
 * sg_op_call_boxed receives them in, so the boxed call ends in a tail jump without a frame;
 * ctx comes last for that reason. */
typedef sg_status sg_boxed(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                           int32_t nrets, void *ctx);
typedef sg_boxed *sg_boxed_fn;

/* A kernel. Where both functions are given and ctx is NULL, boxed receives as its ctx a
 * `const sg_fn *` that points at the unboxed function: that is how a generated boxing adapter
 * (one per op) finds the typed kernel it adapts, with no cast between data and code pointers. */
typedef struct sg_kernel {
    sg_fn       unboxed; /* may be NULL: typed calls then go through boxed */
    sg_boxed_fn boxed;   /* may be NULL where unboxed is given: boxed calls then fail */
    void       *ctx;     /* for boxed */
} sg_kernel;

/* Where a table entry came from. */
typedef enum sg_entry_kind {
    SG_ENTRY_KERNEL,    /* registered for this key */
    SG_ENTRY_COMPOSITE_EXPLICIT,
    SG_ENTRY_COMPOSITE_IMPLICIT,
    SG_ENTRY_AUTOGRAD_ALIAS,
    SG_ENTRY_FALLBACK,
    SG_ENTRY_OVERRIDE,  /* conditional overrides in front of one of the above */
    SG_ENTRY_MISSING,   /* boxed reports the error; unboxed is NULL */
    SG_ENTRY_FALLTHROUGH,
    SG_ENTRY_OVERRIDE_TYPED /* overrides that all have typed functions (sg_override_set) */
} sg_entry_kind;

typedef struct sg_entry {
    sg_fn       unboxed; /* NULL: call boxed */
    sg_boxed_fn boxed;   /* never NULL in a table */
    void       *ctx;
    uint8_t     kind;    /* sg_entry_kind */
    uint8_t     key;     /* the key its kernel was registered under (an alias key for 2-4) */
} sg_entry;

typedef struct sg_table {
    sg_keyset mask; /* keys whose entry is not a fallthrough, plus bit 0 */
    sg_entry  entry[SG_KEY__COUNT];
} sg_table;

/* The first member of every op. Rationale: the hot path needs the table and nothing else, so
 * this is all of sg_op that callers see. */
typedef struct sg_op_head {
    sg_table *table; /* atomic */
} sg_op_head;

/* The entry a call with key set ks (TLS already applied) runs. */
static inline const sg_entry *sg_dispatch_entry(const sg_op *op, sg_keyset ks) {
    const sg_table *t = __atomic_load_n(&((const sg_op_head *)op)->table, __ATOMIC_ACQUIRE);
    return &t->entry[(unsigned)__builtin_clzll((ks & t->mask) | 1) ^ 63u];
}

/* ---- ops --------------------------------------------------------------------------------- */

/* Defines an op from a schema string (namespace "aten" where none is written), as a library's
 * def does. Defining the same schema again returns the same op; a different schema under the
 * same name and overload fails with SG_EEXISTS. Ops live until sg_runtime_shutdown. */
sg_status sg_op_define(const char *schema, sg_op **out);
/* Finds an op by qualified name and overload: ("aten::add", "Tensor"); "" or NULL for none.
 * A name without "::" is looked up in aten. Lock-free; cache the result. SG_ENOTFOUND's
 * message lists the overloads the name has, or suggests the nearest defined name. */
sg_status sg_op_find(const char *name, const char *overload, sg_op **out);

/* For a NULL op: "" and -1. */
const char *sg_op_name(const sg_op *op);     /* "aten::add" */
const char *sg_op_overload(const sg_op *op); /* "Tensor", or "" */
const char *sg_op_schema(const sg_op *op);   /* canonical schema text */
int32_t     sg_op_nargs(const sg_op *op);
int32_t     sg_op_nrets(const sg_op *op);

/* ---- registration ------------------------------------------------------------------------ */

/* Every registration hands back a handle through `out`; out may be NULL for a registration
 * that stays until sg_runtime_shutdown. */
typedef struct sg_handle sg_handle;

/* A kernel for (op, key); key may be an alias key. */
sg_status sg_op_impl(sg_op *op, sg_key key, sg_kernel k, sg_handle **out);
/* A typed kernel with the boxing adapter of its C signature: what a generated registration
 * function (ns_name_overload_register) does. */
static inline sg_status sg_op_impl_typed(sg_op *op, sg_key key, sg_fn fn, sg_boxed_fn adapter,
                                         sg_handle **out) {
    sg_kernel k = {fn, adapter, NULL};
    return sg_op_impl(op, key, k, out);
}
/* A fallthrough for (op, key): calls skip to the next key. */
sg_status sg_op_impl_fallthrough(sg_op *op, sg_key key, sg_handle **out);
/* One boxed kernel for every op at key (a backend fallback), or a fallthrough for every op. */
sg_status sg_fallback_impl(sg_key key, sg_boxed_fn fn, void *ctx, sg_handle **out);
sg_status sg_fallback_fallthrough(sg_key key, sg_handle **out);

/* A predicate decides, from the boxed arguments, whether its implementation takes the call. */
typedef bool (*sg_override_pred)(void *ctx, const sg_op *op, sg_keyset ks, const sg_any *args,
                                 int32_t nargs);
sg_status sg_op_override(sg_op *op, sg_key key, int32_t priority, sg_override_pred pred,
                         sg_boxed_fn impl, void *ctx, sg_handle **out);

/* A typed override: pred has the op's predicate type (generated: ns_name_overload_pred_fn,
 * `bool pred(void *ctx, sg_keyset ks, <the op's arguments>)`), impl the op's kernel type.
 * Typed calls consult it without boxing. Boxed calls reach it through the op's own typed call:
 * adapter is the boxing adapter of the op's C signature and redispatch the op's generated
 * ns_name_overload_redispatch, which finds the overrides in the table. The generated
 * ns_name_overload_override() passes them; C callers rarely call this directly.
 * Typed and boxed overrides of one (op, key) do not mix: registering one kind where the other is
 * fails with SG_EEXISTS. */
typedef struct sg_override_typed {
    sg_fn pred;
    sg_fn impl;
    void *ctx;
} sg_override_typed;
sg_status sg_op_override_typed(sg_op *op, sg_key key, int32_t priority, sg_override_typed o,
                               sg_boxed_fn adapter, sg_fn redispatch, sg_handle **out);

/* What the ctx of an SG_ENTRY_OVERRIDE_TYPED entry points to, for generated typed wrappers: the
 * overrides of (op, key) in the order they are tried, and what runs where none takes the call
 * (stock; where stock_falls, nothing stands behind them and the call goes below key). The items
 * (sg_override_items) are n overrides (n >= 1) and then a terminator whose pred is NULL, whose
 * impl is the stock's typed kernel (NULL where stock has none or falls through) and whose ctx
 * is this set. Rationale: a
 * walk that ends on the terminator has what it needs next without keeping the set in a
 * register across the predicates' calls. An entry of boxed overrides is an SG_ENTRY_OVERRIDE
 * one, and typed calls box for it. */
typedef struct sg_override_set {
    /* first: the entry's boxed function is the op's adapter, whose ctx (this set) must point
     * at the typed function it calls (sg_kernel): the op's typed redispatch, which the typed
     * walk also calls below the key where stock_falls */
    sg_fn        redispatch;
    sg_entry     stock;
    const sg_op *op;
    int32_t      n;
    uint8_t      key;
    bool         stock_falls;
} sg_override_set;
/* The items, which follow the set in memory (one load fewer on the way to a predicate). */
static inline const sg_override_typed *sg_override_items(const sg_override_set *s) {
    return (const sg_override_typed *)(const void *)(s + 1);
}

void      sg_overrides_set_enabled(bool on);
bool      sg_overrides_enabled(void);
/* One op's overrides, at every key: they run where both this switch and the one above are on.
 * Rebuilds that op's table only. SG_EINVAL for a NULL op (false from the query); SG_ENOMEM
 * leaves the switch and the table as they were. */
sg_status sg_op_set_overrides_enabled(sg_op *op, bool on);
bool      sg_op_overrides_enabled(const sg_op *op);

/* Undoes a registration; the handle is freed. SG_ESTATE for a handle released already. */
sg_status sg_handle_release(sg_handle *h);

/* What the entry of (op, key) is now, for tests and tools. A NULL op or a key without a table
 * entry gives an entry of kind SG_ENTRY_MISSING with no functions (and SG_EINVAL's message). */
sg_entry  sg_op_entry(const sg_op *op, sg_key key);

/* The kernel registered for key itself, the newest (alias keys too: what an op's
 * CompositeImplicitAutograd kernel is, even where a backend's kernel shadows it in the table);
 * kind SG_ENTRY_MISSING and no functions where there is none. */
sg_entry  sg_op_registered(const sg_op *op, sg_key key);

/* Frees every op, table and registration. No call may be in flight or follow. */
void      sg_runtime_shutdown(void);
/* Counts sg_runtime_shutdown calls: a library's init registers its kernels once per epoch. */
uint64_t  sg_runtime_epoch(void);

/* ---- calls ------------------------------------------------------------------------------- */

/* A boxed call: the schema's arguments in order, args[0..nargs). Trailing arguments may be left
 * out (nargs < sg_op_nargs(op)) where each of them has a default: the call fills those in from
 * the schema's defaults (as c10's boxed calls do), so the kernel always receives every
 * argument; one left out without a default (or with one that has no boxed value, see
 * sg_op_arg_default) fails with SG_EINVAL naming it, as do more arguments than the schema has.
 * Checks the count and the type of each argument, that each value is well-formed (no NULL
 * tensor, no NULL item pointer with a length, enums in range: docs/runtime.md lists it), that no
 * read-only tensor is bound to an argument the op writes, then dispatches. rets[0..nrets) are
 * zeroed by the callee on entry, and are None after any failure. args and rets may be NULL
 * where their count is 0. An op a generated library defined has a boxed entry
 * (sg_boxed_entry) that does the same through the op's typed call. */
sg_status sg_op_call_boxed(const sg_op *op, const sg_any *args, int32_t nargs, sg_any *rets,
                           int32_t nrets);
/* A boxed call's first stop where the op has one: sg_op_call_boxed passes its parameters on,
 * with the typed function given beside the entry. A generated library gives each op whose
 * arguments need no check beyond their tags (tensors, numbers, scalars) an entry of its C
 * signature: it tests the tags with constants, unboxes, and calls the op's typed wrapper, so a
 * boxed call costs what a typed one does; whatever it does not take (another count, another
 * tag, a NULL tensor) it hands to sg_op_call_boxed_generic, whose checks and messages are the
 * boxed call's. */
typedef sg_status sg_boxed_entry(const sg_op *op, const sg_any *args, int32_t nargs,
                                 sg_any *rets, int32_t nrets, sg_fn typed);
/* sg_op_call_boxed without the op's entry: what an entry calls for what it does not take. */
sg_status sg_op_call_boxed_generic(const sg_op *op, const sg_any *args, int32_t nargs,
                                   sg_any *rets, int32_t nrets);
/* Gives op its boxed entry and the typed function the entry calls (a generated library's init
 * does). An op keeps the first it is given, until sg_runtime_shutdown. */
sg_status sg_op_set_boxed_entry(sg_op *op, sg_boxed_entry *entry, sg_fn typed);
/* Calls the entry ks selects, without the thread's sets and without checks of the values (ks
 * as a kernel received it, narrowed with sg_keyset_below): a boxed kernel passes on what it
 * received, args holding sg_op_nargs(op) values. NULL op, args or rets are refused. */
sg_status sg_op_redispatch_boxed(const sg_op *op, sg_keyset ks, const sg_any *args,
                                 sg_any *rets, int32_t nrets);
/* Looks the op up and calls it boxed: ("aten::abs", "", ...); defaults as sg_op_call_boxed. */
sg_status sg_call_by_name(const char *name, const char *overload, const sg_any *args,
                          int32_t nargs, sg_any *rets, int32_t nrets);
/* The default of argument i as a boxed call fills it in (*out borrowed: it lives as long as the
 * op). SG_ENOTFOUND where the argument has no default; SG_EUNSUPPORTED where its default has
 * no boxed value (a Device default, a constant the runtime has no enumerator for, such as
 * Layout sparse_csr): the op works, but a boxed call must pass that argument. *out is None on
 * failure. */
sg_status sg_op_arg_default(const sg_op *op, int32_t i, sg_any *out);
/* The keys a boxed call's tensor arguments select (before the thread's sets); NULL op, args or
 * tensors add nothing. */
sg_keyset sg_op_keys_of_args(const sg_op *op, const sg_any *args, int32_t nargs);

/* For a kernel that computes its op through another (a composite kernel of aten::add.Tensor
 * calling aten::add.out by redispatch): where that call failed with SG_ENOKERNEL because some
 * op on its way has no kernel for the key, rewrites the thread's message to name `called`, the
 * op the user called, and the ops the call went through ("could not run 'aten::add.Tensor'
 * with arguments from the 'CUDA' backend (tensors on cuda:0): it is computed through
 * 'aten::add.out', which has no CUDA kernel (kernels are registered for: CPU)"). Returns st;
 * any other status, or a message of another origin, is left as it is. Cold: call it only
 * where st is not SG_OK.
 *     st = aten_add_out_redispatch(ks, ...);
 *     if (SG_UNLIKELY(st)) st = sg_op_error_via(st, aten_add_Tensor_op, aten_add_out_op); */
sg_status sg_op_error_via(sg_status st, const sg_op *called, const sg_op *inner);

/* For generated typed wrappers: fails with SG_EREADONLY, naming the op and the argument, where
 * t may not be written. */
sg_status sg_op_check_writable(const sg_op *op, int32_t arg, const sg_tensor *t);

#ifdef __cplusplus
}
#endif
#endif
