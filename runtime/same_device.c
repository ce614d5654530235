/* same_device.c: aten's same-device rule for a call's tensor arguments (sg_backend.h). */
#include "rt_dispatch.h"
#include "sg_backend.h"

#include <stdio.h>
#include <string.h>

/* Ops that move data between devices, and those marked by sg_op_allow_mixed_devices. */
static const char *const movers[] = {"aten::copy_", "aten::copy", "aten::_to_copy", "aten::to",
                                     "aten::_copy_from", "aten::_copy_from_and_resize"};
enum { MARKED_MAX = 64 };
/* Rationale: marked[i] is written before nmarked counts it (release), so readers need no lock. */
static const sg_op    *marked[MARKED_MAX];
static int             nmarked;
static pthread_mutex_t marked_lock = PTHREAD_MUTEX_INITIALIZER;

sg_status sg_op_allow_mixed_devices(const sg_op *op) {
    if (!op) return sg_error(SG_EINVAL, "sg_op_allow_mixed_devices: op is NULL");
    sg_status st = SG_OK;
    pthread_mutex_lock(&marked_lock);
    bool there = false;
    for (int i = 0; i < nmarked; i++) there |= marked[i] == op;
    if (!there) {
        if (nmarked == MARKED_MAX) {
            st = sg_error(SG_ENOMEM, "sg_op_allow_mixed_devices: at most %d ops can be marked",
                          MARKED_MAX);
        } else {
            marked[nmarked] = op;
            __atomic_store_n(&nmarked, nmarked + 1, __ATOMIC_RELEASE);
        }
    }
    pthread_mutex_unlock(&marked_lock);
    return st;
}

/* Asked only once devices differ, so a call whose devices agree pays for none of this. */
static bool exempt(const sg_op *op) {
    for (size_t i = 0; i < sizeof movers / sizeof movers[0]; i++)
        if (!strcmp(op->name, movers[i])) return true;
    int n = __atomic_load_n(&nmarked, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++)
        if (marked[i] == op) return true;
    return false;
}

/* A wrapped scalar: a CPU 0-dim tensor the op reads (aten lets it sit beside any device). */
static bool cpu_scalar(const sg_op *op, int32_t arg, const sg_tensor *t) {
    return t->device.type == SG_DEV_CPU && t->ndim == 0 &&
           !(arg >= 0 && arg < op->nargs && op->schema.args[arg].write);
}

/* The state of a scan: the first device seen and where. */
typedef struct scan {
    const sg_tensor *first;
    int32_t          first_arg;
} scan;

static sg_status mismatch(const sg_op *op, const scan *s, int32_t arg, const sg_tensor *t) {
    if (exempt(op)) return SG_OK;
    char a[32], b[32];
    sg_device_format(s->first->device, a, sizeof a);
    sg_device_format(t->device, b, sizeof b);
    const char *name = arg >= 0 && arg < op->nargs && op->schema.args[arg].name
                           ? op->schema.args[arg].name
                           : "?";
    return sg_error(SG_EINVAL, "%s%s%s: Expected all tensors to be on the same device, but "
                               "found at least two devices, %s and %s! (argument %d '%s' is on "
                               "%s)",
                    op->name, *op->overload ? "." : "", op->overload, a, b, (int)arg, name, b);
}

static sg_status visit(const sg_op *op, scan *s, int32_t arg, const sg_tensor *t) {
    if (!t || cpu_scalar(op, arg, t)) return SG_OK;
    if (!s->first) {
        s->first = t;
        s->first_arg = arg;
        return SG_OK;
    }
    return sg_device_eq(t->device, s->first->device) ? SG_OK : mismatch(op, s, arg, t);
}

sg_status sg_check_same_device(const sg_op *op, const sg_any *args, int32_t nargs) {
    if (!op) return sg_error(SG_EINVAL, "sg_check_same_device: op is NULL");
    if (nargs > 0 && !args) return sg_error(SG_EINVAL, "sg_check_same_device: args is NULL");
    scan      s = {NULL, -1};
    sg_status st = SG_OK;
    for (int32_t k = 0; k < op->ntensor_args && !st; k++) {
        int32_t a = op->tensor_args[k];
        if (a >= nargs) break;
        const sg_any *v = &args[a];
        if (v->tag == SG_ANY_TENSOR)
            st = visit(op, &s, a, v->u.t);
        else if (v->tag == SG_ANY_TENSOR_LIST || v->tag == SG_ANY_OPT_TENSOR_LIST)
            for (int32_t j = 0; j < v->len && !st; j++) st = visit(op, &s, a, v->u.tensors[j]);
    }
    return st;
}

sg_status sg_check_same_device_slow(const sg_op *op, const sg_tensor *const *ts,
                                    const int32_t *argi, int32_t n) {
    if (!op) return sg_error(SG_EINVAL, "sg_check_same_device: op is NULL");
    if (n > 0 && !ts) return sg_error(SG_EINVAL, "sg_check_same_device: ts is NULL");
    scan      s = {NULL, -1};
    sg_status st = SG_OK;
    for (int32_t k = 0; k < n && !st; k++) st = visit(op, &s, argi ? argi[k] : k, ts[k]);
    return st;
}
