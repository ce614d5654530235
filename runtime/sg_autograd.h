/* sg_autograd.h: the runtime's autograd core: grad mode, a tensor's autograd state, graph
 * nodes and their edges, saved values, version counters, and the backward engine.
 *
 * The semantics are torch.autograd's, single-threaded, without double backward. Generated
 * Autograd kernels (registered at the Autograd alias key) are this API's main caller. One such
 * kernel, for an op y = f(a, b) with a backward node type FBackward0, does:
 *
 *     if (!sg_grad_enabled() || !(sg_tensor_requires_grad(a) || sg_tensor_requires_grad(b)))
 *         return <the op below Autograd>;            (in-place ops: bump the version as well)
 *     run the op below Autograd (sg_keyset_below(ks, SG_KEY_AUTOGRAD_CPU)) into y;
 *     FBackward0 *n;                                  (embeds sg_node as its first member)
 *     sg_node_new(sizeof *n, "FBackward0", 1, 2, fbackward0_apply, fbackward0_release,
 *                 (sg_node **)&n);
 *     sg_node_set_next(&n->base, 0, a); sg_node_set_next(&n->base, 1, b);
 *     sg_saved_init(&n->self, a); ...                 (what the formulas need)
 *     sg_tensor_set_grad_fn(y, &n->base, 0);          (also records y's shape for the engine)
 *     sg_node_release(&n->base);                      (y holds it now)
 *
 * Ownership. A tensor holds its grad_fn; a node holds the nodes its edges lead to, and its
 * saved values. A leaf that requires grad has one accumulator node (PyTorch's AccumulateGrad):
 * edges to the leaf lead to it, it holds the leaf, and the leaf points back to it without a
 * reference, so no cycle forms and the accumulator goes with the last graph that uses it. A
 * saved value is a detached alias (same storage and view, no autograd state), so saving an
 * output of the node itself makes no cycle either.
 *
 * Version counters live on the storage, so views share them. A saved value remembers the
 * version it was saved at and refuses to unpack after an in-place change.
 *
 * Threads: grad mode and node sequence numbers are per thread. Reference counts are atomic;
 * a tensor's autograd state and a graph are not to be changed by two threads at once.
 */
#ifndef SG_AUTOGRAD_H
#define SG_AUTOGRAD_H

#include "sg_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- grad mode --------------------------------------------------------------------------- */

/* Thread-local, on by default. Rationale: read inline (one TLS load) because every generated
 * Autograd kernel asks it first; written only through sg_grad_set_enabled. */
#if defined(__cplusplus)
extern thread_local bool sg_grad_mode_tls;
#elif defined(__GNUC__)
extern _Thread_local bool sg_grad_mode_tls __attribute__((tls_model("initial-exec")));
#else
extern _Thread_local bool sg_grad_mode_tls;
#endif

static inline bool sg_grad_enabled(void) { return sg_grad_mode_tls; }
/* Sets the calling thread's mode and returns the previous one: torch.no_grad() is
 *     bool was = sg_grad_set_enabled(false); ...; sg_grad_set_enabled(was);              */
bool sg_grad_set_enabled(bool on);

/* ---- a tensor's autograd state ----------------------------------------------------------- */

typedef struct sg_node sg_node;

/* Makes a leaf require grad (or not). SG_EINVAL for a tensor that has a grad_fn (only leaves
 * may change it; detach it first) and, for on, for a dtype that is neither floating nor
 * complex. */
sg_status sg_tensor_set_requires_grad(sg_tensor *t, bool on);
/* A leaf that requires grad, or a tensor with a grad_fn. NULL: false. */
bool      sg_tensor_requires_grad(const sg_tensor *t);
/* No grad_fn (a tensor that does not require grad is a leaf too, as in PyTorch). */
bool      sg_tensor_is_leaf(const sg_tensor *t);
/* The accumulated gradient (.grad): a new reference, or NULL where there is none. */
sg_status sg_tensor_grad(const sg_tensor *t, sg_tensor **out);
/* Sets .grad (a reference is taken); NULL clears it (zero_grad with set_to_none). The grad must
 * have t's dtype, sizes and device, and not be t itself. */
sg_status sg_tensor_set_grad(sg_tensor *t, sg_tensor *grad);
/* A new tensor over the same storage and view (offset, sizes, strides), without autograd
 * state; it shares t's version counter. */
sg_status sg_tensor_detach(sg_tensor *t, sg_tensor **out);
/* Borrowed; NULL for a leaf. */
sg_node  *sg_tensor_grad_fn(const sg_tensor *t);
/* Which output of its grad_fn t is (0 for a leaf). */
uint32_t  sg_tensor_output_nr(const sg_tensor *t);

/* For generated in-place kernels, before they write t where an input needs a gradient and grad
 * mode is on (PyTorch's check_inplace): SG_EINVAL, naming op, where t is a leaf that requires
 * grad ("a leaf Variable that requires grad is being used in an in-place operation."), a view
 * of one ("a view of a leaf Variable ..."), a view made under no_grad of a tensor that requires
 * grad (PyTorch forbids writing it under grad), or a view of a base that is not contiguous. */
sg_status sg_autograd_check_inplace(const sg_tensor *t, const char *op);
/* Marks t, a result of a view op that shares its storage with base (an input), as a view:
 * generated kernels of view ops call it where an input requires grad. With grad mode on, t
 * becomes a differentiable view of base (of base's base where base is a view itself): an
 * in-place write through t then rebases base's history (sg_autograd_rebase_history). With grad
 * mode off, t is a view made under no_grad, which check_inplace refuses. A t that does not
 * share base's storage (a kernel gave a copy) is left alone. SG_ENOMEM, or SG_EINVAL for a NULL
 * tensor. */
sg_status sg_autograd_mark_view(sg_tensor *t, sg_tensor *base);
/* What an in-place kernel calls after the op wrote t, with fn the node of the change (its edge
 * 0 for t): t's grad_fn becomes fn (PyTorch's rebase_history). Where t is a differentiable view,
 * its base's grad_fn becomes a CopySlices node that runs fn on the view's part of the base's
 * gradient (edge 0: the base's history before; the others: fn's), and t's grad_fn is made again
 * from the base's (an AsStridedBackward0 node). */
sg_status sg_autograd_rebase_history(sg_tensor *t, sg_node *fn);
/* For generated in-place kernels where an operand requires grad, after check_inplace: SG_EINVAL
 * where grad mode is on and t, which does not require grad and so is about to gain a history
 * from the operand, shares its storage with another tensor (a view not marked, a base with
 * views, a value saved for backward): that history would not reach the others (PyTorch gives
 * it to their base: CopySlices), so the write is refused rather than leave them without it. */
sg_status sg_autograd_check_inplace_shared(const sg_tensor *t, const char *op);

/* ---- version counters -------------------------------------------------------------------- */

/* Every in-place and out= op bumps the version of each tensor it writes. Rationale: the bump is
 * in the generated Autograd kernel of every mutating op (LIB_autograd.c), which runs at the
 * backend's Autograd key whether grad mode is on or off; functional ops pay nothing, and there
 * is no extra dispatch key (PyTorch's ADInplaceOrView) to pass through. A caller that excludes
 * the Autograd keys (sg_tls_keys_exclude) or calls a kernel below them writes without a bump,
 * as PyTorch's inference mode does. */
static inline uint32_t sg_tensor_version(const sg_tensor *t) {
    return __atomic_load_n(&t->storage->version, __ATOMIC_RELAXED);
}
/* What an in-place kernel (and an out= one) calls after it wrote t. */
static inline void sg_tensor_bump_version(sg_tensor *t) {
    __atomic_fetch_add(&t->storage->version, 1u, __ATOMIC_RELAXED);
}

/* ---- nodes ------------------------------------------------------------------------------- */

/* Where a gradient goes: input slot input_nr of node (NULL: nowhere). */
typedef struct sg_edge {
    sg_node *node;
    uint32_t input_nr;
} sg_edge;

/* A node's backward function. grads: nin incoming gradients, borrowed (an entry is NULL where
 * that output got none; where all are NULL the engine does not call apply). out: nnext slots,
 * zeroed by the engine; apply fills out[i] where next[i].node is not NULL (PyTorch's
 * grad_input_mask) with a new reference, or leaves it NULL (no gradient). It runs with grad
 * mode off. On failure it returns the status with a message; the engine releases whatever it
 * left in out. */
typedef sg_status (*sg_node_apply_fn)(sg_node *n, sg_tensor *const *grads, sg_tensor **out);
/* Drops the node's saved values (sg_saved_release on each); may be NULL. */
typedef void (*sg_node_release_fn)(sg_node *n);

/* What the gradient arriving at one input of a node must be: the shape, dtype and device of
 * the op's output it stands for (PyTorch's InputMetadata), recorded by sg_tensor_set_grad_fn.
 * The engine reduces a gradient of a broadcast shape to it (sum_to), casts one of another
 * dtype, and refuses one it cannot conform. */
typedef struct sg_input_meta {
    int32_t   ndim;     /* -1: not recorded (the engine then checks nothing) */
    uint8_t   dtype;
    sg_device device;
    int64_t  *sizes;    /* ndim entries: small below, or allocated where ndim > 6 */
    int64_t   small[6];
} sg_input_meta;

/* The first member of every node type. Fields are set by sg_node_new, sg_node_set_next and
 * sg_tensor_set_grad_fn; generated code reads them. */
struct sg_node {
    int32_t            refs;           /* atomic */
    uint32_t           nin, nnext;     /* incoming gradients (the op's outputs); edges */
    const char        *name;           /* "MulBackward0": a static string */
    uint64_t           seq;            /* creation order on its thread (PyTorch's sequence_nr);
                                          the engine runs later nodes first */
    sg_edge           *next;           /* nnext edges, in the node's own allocation */
    sg_input_meta     *in;             /* nin entries, in the node's own allocation */
    sg_node_apply_fn   apply;
    sg_node_release_fn release_saved;
    bool               saved_released; /* release_saved has run: a second backward fails */
    sg_node           *gc_link;        /* the runtime's: nodes being freed (sg_node_release) */
};

/* A node of size bytes (at least sizeof(sg_node); the node type's saved values zeroed), with
 * nnext edges to nowhere, one reference, and the thread's next sequence number. nin >= 1. */
sg_status sg_node_new(size_t size, const char *name, uint32_t nin, uint32_t nnext,
                      sg_node_apply_fn apply, sg_node_release_fn release_saved, sg_node **out);
void      sg_node_retain(sg_node *n);
/* NULL is a no-op. At zero: release_saved (unless it ran), the edges dropped, freed.
 * Rationale: iterative (freed nodes are linked through gc_link), so dropping a chain of any
 * length uses no stack. */
void      sg_node_release(sg_node *n);
/* Edge i of n: to input's grad_fn at input's output number, or, for a leaf that requires grad,
 * to its accumulator (made at the first edge and kept while a graph uses it); no edge where
 * input is NULL or does not require grad. Replaces what edge i held. */
sg_status sg_node_set_next(sg_node *n, uint32_t i, sg_tensor *input);
/* t, output nr of the op that made n, gets n as its grad_fn (a reference is taken; a grad_fn t
 * had is dropped, as an in-place op rebases t's history), and n records t's shape, dtype and
 * device as input nr's (sg_input_meta). SG_EINVAL where t is a leaf that requires grad or
 * nr >= n->nin. */
sg_status sg_tensor_set_grad_fn(sg_tensor *t, sg_node *n, uint32_t nr);

/* ---- saved values (PyTorch's SavedVariable) ---------------------------------------------- */

/* The history of an op that has no derivative (op: its static name, "aten::foo"): one node
 * whose edges go to inputs[0..nin) (NULL or not requiring grad: no edge) and which is the
 * grad_fn of every floating output (NULL entries skipped); a backward through it fails with
 * "the derivative for 'aten::foo' is not implemented". */
sg_status sg_autograd_not_implemented(const char *op, sg_tensor *const *inputs, uint32_t nin,
                                      sg_tensor *const *outputs, uint32_t nout);

typedef struct sg_saved {
    sg_tensor *t;         /* a detached alias (or clone) of what was saved, or its metadata
                             (meta_only); NULL: none */
    uint32_t   version;   /* its version when saved */
    bool       meta_only; /* only its sizes, strides, offset, dtype and device were kept: no
                             storage, no version check (sg_saved_init_meta) */
} sg_saved;

/* Saves t (NULL saves "no tensor", an absent Tensor?). */
sg_status sg_saved_init(sg_saved *s, sg_tensor *t);
/* Saves t's value as it is now, for an in-place op that is about to change it and whose
 * formulas read it (PyTorch's original_self): a clone, so the change does not reach it. */
sg_status sg_saved_init_original(sg_saved *s, sg_tensor *t);
/* Saves t for formulas that read only its properties (sizes, strides, dtype, options, geometry),
 * as PyTorch saves self_sym_sizes or self_options in place of self: a header with t's metadata
 * and no storage, so that none of t's elements stay alive for it (sg_autograd_saved_bytes counts
 * nothing), a later in-place change (even squeeze_) does not touch it, and no version is
 * checked. */
sg_status sg_saved_init_meta(sg_saved *s, sg_tensor *t);
/* The saved tensor, a new reference (NULL where none was saved); for a value saved by
 * sg_saved_init_meta, the header of its metadata, which has no storage: read its fields, never
 * hand it to an op. Fails with SG_ESTATE naming n where n's saved values were released by an
 * earlier backward, and with SG_EINVAL where the tensor was changed in place since, in
 * PyTorch's words: "one of the variables needed for gradient computation has been modified by
 * an inplace operation: [float32 [3]], which is saved by MulBackward0, is at version 1;
 * expected version 0 instead. ...". n may be NULL (the message then names no node). */
sg_status sg_saved_get(const sg_saved *s, const sg_node *n, sg_tensor **out);
void      sg_saved_release(sg_saved *s);
/* The bytes of the tensors that live saved values hold, over all threads: numel x element size
 * of each (a storage saved twice counts twice; metadata saved alone holds none), as PyTorch's
 * saved-tensor hooks see them. */
int64_t   sg_autograd_saved_bytes(void);

/* ---- the engine -------------------------------------------------------------------------- */

/* Backward from n roots: grads[i] is d(loss)/d(roots[i]) (grads may be NULL, as may an entry:
 * then the root must have one element and gets ones). Runs every node reachable from the
 * roots once its incoming gradients are in (later nodes first among those ready), with grad
 * mode off. Each gradient a node returns is conformed to the input it goes to (its
 * sg_input_meta): a broadcast shape summed down (aten::sum.dim_IntList), another dtype cast
 * (aten::_to_copy); another device, or a shape that does not broadcast to it, fails naming the
 * node. Gradients that meet at one input are summed (aten::add.Tensor); the ops are called
 * through the dispatcher. It accumulates into the .grad of the leaves that require grad (a
 * new tensor each time, never in place). Without retain_graph, each node's saved values are
 * released after it runs. Fails for a root that does not require grad, a grad whose shape,
 * dtype or device is not its root's, a graph whose saved values were released ("Trying to
 * backward through the graph a second time"), all found before any node runs, so every .grad
 * stays as it was; and for a failing node (its name in the message), after the nodes that ran
 * before it. */
sg_status sg_backward(sg_tensor *const *roots, sg_tensor *const *grads, size_t n,
                      bool retain_graph);

#ifdef __cplusplus
}
#endif
#endif
