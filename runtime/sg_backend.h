/* sg_backend.h: what a backend author (a PrivateUse device) works with beyond sg_tensor.h's
 * sg_device_impl: the device's name, device strings, the generic device guard, streams and
 * events (served by the device's optional hooks), per-argument schema facts of an op, the
 * same-device check, and a ready CPU fallback. docs/backend.md walks through the whole flow.
 */
#ifndef SG_BACKEND_H
#define SG_BACKEND_H

#include "sg_dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the device's name ---------------------------------------------------------------------
 * A PrivateUse device type is "privateuseone" (two, three) until renamed, as PyTorch's
 * rename_privateuse1_backend does. After sg_device_rename(SG_DEV_PRIVATEUSE1, "npu"):
 *   - sg_device_type_name gives "npu", so tensors describe themselves as "float32[2] on npu:0"
 *     and every message that names a device says "npu";
 *   - device strings "npu" and "npu:1" parse (and "privateuseone:1" still does);
 *   - the dispatch keys are named after it in the style of the built-in ones (device "cuda",
 *     keys "CUDA" and "AutogradCUDA"): sg_key_name gives "NPU" and "AutogradNPU", so a missing
 *     kernel reports "... from the 'NPU' backend". The key numbers do not change.
 * A name is 1 to 15 characters of [a-z0-9_], starting with a letter, and no other device
 * type's name. A type is renamed once: renaming it again to the same name is SG_OK, to another
 * SG_EEXISTS. Rename before the first use, as in PyTorch: names read earlier stay as read. */
enum { SG_DEVICE_NAME_MAX = 15 };
sg_status sg_device_rename(sg_device_type type, const char *name);

/* Parses "cpu", "cuda", "cuda:1", "meta", "npu:0" (a renamed type), "privateuseone:0". An
 * index may follow every type but cpu and meta (whose only index, 0, may be written); where it
 * is left out, the type's current device of the calling thread is meant (sg_device_current;
 * index 0 where the backend is unavailable: the call that uses the device reports that). 
 * Fails with SG_EINVAL, naming the string and what was wrong. */
sg_status sg_device_parse(const char *s, sg_device *out);
/* "cuda:0", "npu:1", "cpu", "meta" (as aten prints devices). Writes at most n bytes, NUL
 * included; returns buf. */
char     *sg_device_format(sg_device d, char *buf, size_t n);

/* ---- the device guard, streams and events --------------------------------------------------
 * Each call goes to the device type's hook (sg_device_impl's optional entries; CUDA's are
 * built in). A type without the hook gets the behaviour of a device with one queue that runs
 * everything synchronously: current device index 0, synchronize does nothing, the stream is
 * NULL (the default one), events are SG_EUNSUPPORTED. */

/* The calling thread's current device of a type ({type, 0} where the type has no guard hook). */
sg_status sg_device_current(sg_device_type type, sg_device *out);
/* Makes dev the calling thread's current device of its type. */
sg_status sg_device_set_current(sg_device dev);
/* Waits for the work queued on the calling thread's current stream of dev. */
sg_status sg_device_synchronize(sg_device dev);

/* A device guard (c10::DeviceGuard): makes dev current and remembers what was, so a region
 * can work on dev and put things back:
 *     sg_device_guard g;
 *     if (sg_device_guard_enter(&g, dev)) return ...;
 *     ...;
 *     sg_device_guard_exit(&g);                                                             */
typedef struct sg_device_guard {
    sg_device prev;
    bool      active; /* the device was switched and must be switched back */
} sg_device_guard;
sg_status sg_device_guard_enter(sg_device_guard *g, sg_device dev);
void      sg_device_guard_exit(sg_device_guard *g);

/* The calling thread's current stream of dev (an opaque handle; NULL is the default stream),
 * and setting it. Work the runtime queues for dev (allocation, copies, zeroing) goes there. */
sg_status sg_stream_current(sg_device dev, void **stream);
sg_status sg_stream_set(sg_device dev, void *stream);

/* An event of a device: recorded on a stream, waited for by another stream or by the host. */
typedef struct sg_event sg_event;
sg_status sg_event_create(sg_device dev, sg_event **out);
void      sg_event_destroy(sg_event *ev); /* NULL is a no-op */
/* Records the event on the calling thread's current stream of its device. */
sg_status sg_event_record(sg_event *ev);
/* Makes the calling thread's current stream of dev (of the event's device type) wait for it. */
sg_status sg_event_wait(sg_event *ev, sg_device dev);
/* Blocks the host until the work the event was recorded after is done. */
sg_status sg_event_synchronize(sg_event *ev);
/* Whether that work is done (SG_OK with *done set). */
sg_status sg_event_query(sg_event *ev, bool *done);

/* ---- per-argument schema facts -------------------------------------------------------------
 * For every op, ops defined from schema strings included. Strings live as long as the op. */
typedef struct sg_arg_info {
    const char *name;         /* NULL for an unnamed return */
    char        type[64];     /* "Tensor", "int[]?", "SymInt[2]" (no annotations); truncated
                                 with "..." where longer */
    int32_t     alias;        /* the first letter of its alias set ('a' for Tensor(a!)), '*'
                                 for the wildcard, -1 where none */
    const char *alias_set;    /* the alias set's first name ("a"), or NULL */
    bool        write;        /* written by the op ('!' on a Tensor-like type) */
    bool        kwarg_only;   /* after '*' (arguments only) */
    bool        is_out;       /* kwarg-only and written: an out= argument */
    bool        is_tensor;    /* Tensor, Tensor?, Tensor[] or Tensor?[] */
    bool        has_default;
    const char *default_text; /* the default as written ("1", "None", "[0,1]"), or NULL */
} sg_arg_info;

/* Facts of argument i (0 <= i < sg_op_nargs) and of result i. SG_EINVAL for a NULL op or out,
 * or an index out of range. */
sg_status sg_op_arg_info(const sg_op *op, int32_t i, sg_arg_info *out);
sg_status sg_op_ret_info(const sg_op *op, int32_t i, sg_arg_info *out);
/* The argument result i aliases (shares an alias set with), or -1 where it is a fresh value. */
int32_t   sg_op_ret_alias_arg(const sg_op *op, int32_t i);

/* ---- the same-device check -----------------------------------------------------------------
 * aten's rule: every tensor argument of a call (lists included, None skipped) lives on one
 * device, except CPU 0-dim tensors that the op does not write (wrapped scalars), which may sit
 * beside tensors of any device. Otherwise the call fails with SG_EINVAL and aten's message:
 *   "aten::add.Tensor: Expected all tensors to be on the same device, but found at least two
 *    devices, npu:0 and cpu! (argument 1 'other' is on cpu)"
 * sg_op_call_boxed runs it where a call's tensors select more than one backend key. Ops that
 * move data between devices are exempt (aten::copy_, copy, _to_copy, to, _copy_from,
 * _copy_from_and_resize), as are ops marked with sg_op_allow_mixed_devices. */
sg_status sg_check_same_device(const sg_op *op, const sg_any *args, int32_t nargs);
/* The same over typed arguments: ts[0..n) are the op's tensor arguments (NULL: None) and
 * argi[k] the schema index of ts[k] (argi may be NULL: indexes 0..n). For generated typed
 * wrappers (docs/backend.md): the inline fast path compares device bytes only. */
sg_status sg_check_same_device_slow(const sg_op *op, const sg_tensor *const *ts,
                                    const int32_t *argi, int32_t n);
static inline sg_status sg_check_same_device_typed(const sg_op *op, const sg_tensor *const *ts,
                                                   const int32_t *argi, int32_t n) {
    const sg_tensor *first = NULL;
    bool             differ = false;
    for (int32_t k = 0; k < n; k++) {
        const sg_tensor *t = ts[k];
        if (!t) continue;
        if (!first)
            first = t;
        else
            differ |= !sg_device_eq(t->device, first->device);
    }
    return SG_LIKELY(!differ) ? SG_OK : sg_check_same_device_slow(op, ts, argi, n);
}
/* Whether b (NULL: None) is on another device than a: what generated typed wrappers test,
 * against their first Tensor argument, before they call sg_check_same_device_slow. */
static inline bool sg_tensor_other_device(const sg_tensor *a, const sg_tensor *b) {
    return b && !sg_device_eq(a->device, b->device);
}
/* For generated typed wrappers of ops with Tensor[] or Tensor?[] arguments: whether t (NULL:
 * None) is on another device than *first, the first tensor met (set by the first call that
 * meets one); the same over a list's items[0..n) (NULL items: None). Where one is, the wrapper
 * runs sg_check_same_device on its tensor arguments boxed, as a boxed call would. */
static inline bool sg_tensor_device_differs(const sg_tensor **first, const sg_tensor *t) {
    if (!t) return false;
    if (!*first) *first = t;
    return !sg_device_eq(t->device, (*first)->device);
}
static inline bool sg_tensor_list_device_differs(const sg_tensor **first,
                                                 sg_tensor *const *items, int32_t n) {
    for (int32_t i = 0; i < n; i++)
        if (sg_tensor_device_differs(first, items[i])) return true;
    return false;
}
/* Exempts op from the check (an op that takes tensors of several devices on purpose). */
sg_status sg_op_allow_mixed_devices(const sg_op *op);

/* ---- the CPU fallback ----------------------------------------------------------------------
 * A boxed kernel for every op a backend has no kernel of its own for; register it with
 *     sg_fallback_impl(SG_KEY_PRIVATEUSE1, sg_cpu_fallback, NULL, NULL);
 * It copies the tensor arguments (and tensor lists) off the device to the CPU, runs the op's
 * CPU kernel (redispatching to the CPU key), and then:
 *   - copies every tensor the op wrote ((a!): in-place and out= arguments) back into the
 *     device tensor that was passed (resizing it first where the CPU kernel resized its copy);
 *   - returns, for a result that aliases an argument (per the schema), that argument's device
 *     tensor itself (a new reference) where the CPU kernel returned the argument itself, and a
 *     view of the device tensor's storage with the CPU result's sizes, strides and offset where
 *     it returned a view (view ops);
 *   - copies every other tensor result to the device.
 * The device is the op's Device argument where it has one (a factory op reached through
 * BackendSelect, empty_like(x, device=...)), else that of the call's first tensor not on the
 * CPU. ctx is unused. */
sg_status sg_cpu_fallback(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                          int32_t nrets, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
