/* cpu_fallback.c: sg_cpu_fallback, a boxed fallback that runs an op's CPU kernel for a backend
 * that has no kernel of its own (sg_backend.h says what it does).
 *
 * Rationale: each device tensor is mirrored on the CPU storage for storage, with its own sizes,
 * strides and offset, rather than copied view by view. Arguments that share device storage then
 * share CPU storage (an in-place op on overlapping views sees what the device would), and a
 * view the CPU kernel returns maps back to the device storage at the same offset, whatever
 * as_strided or select made of it. The price: a small view of a big storage copies all of it.
 */
#include "rt_dispatch.h"
#include "rt_internal.h"
#include "sg_backend.h"

#include <stdlib.h>
#include <string.h>

/* One device storage and its CPU mirror. */
typedef struct mirror {
    sg_storage *dev;
    sg_storage *cpu;
} mirror;

typedef struct fb {
    const sg_op *op;
    mirror      *m;
    int32_t      nm, cap;
} fb;

/* The CPU storage mirroring s (copied over on first use). */
static sg_status mirror_of(fb *f, sg_storage *s, sg_storage **out) {
    for (int32_t i = 0; i < f->nm; i++)
        if (f->m[i].dev == s) {
            *out = f->m[i].cpu;
            return SG_OK;
        }
    if (f->nm == f->cap) {
        int32_t cap = f->cap ? f->cap * 2 : 8;
        mirror *m = realloc(f->m, (size_t)cap * sizeof *m);
        if (!m) return sg_error(SG_ENOMEM, "%s: CPU fallback: out of memory", f->op->name);
        f->m = m;
        f->cap = cap;
    }
    sg_storage *c = NULL;
    sg_status   st = sg__storage_new(SG_CPU, s->nbytes, &c);
    if (st) return st;
    const sg_device_impl *impl = sg__device_impl((sg_device_type)s->device.type);
    if (!impl) {
        st = sg_error(SG_EDEVICE, "%s: CPU fallback: no implementation for %s", f->op->name,
                      sg_device_type_name((sg_device_type)s->device.type));
    } else if (s->nbytes && s->data) {
        st = impl->copy_to_host(c->data, s->device, s->data, s->nbytes);
    }
    if (st) {
        sg__storage_release(c);
        return st;
    }
    f->m[f->nm++] = (mirror){s, c};
    *out = c;
    return SG_OK;
}

/* t on the CPU: t itself (a new reference) where it is there, else a view of its mirror. */
static sg_status to_cpu(fb *f, sg_tensor *t, sg_tensor **out) {
    *out = NULL;
    if (!t) return SG_OK;
    if (t->device.type == SG_DEV_CPU) {
        *out = sg_tensor_retain(t);
        return SG_OK;
    }
    sg_storage *c = NULL;
    sg_status   st = mirror_of(f, t->storage, &c);
    if (!st)
        st = sg__tensor_new(c, (sg_dtype)t->dtype, t->sizes, t->strides, t->ndim, t->offset, out);
    if (!st) (*out)->flags |= (uint8_t)(t->flags & SG_TENSOR_WRAPPED_NUMBER);
    return st;
}

/* The CPU arguments: tensors mirrored, lists rebuilt, Device arguments made CPU. */
static sg_status build_args(fb *f, const sg_any *args, int32_t nargs, sg_any *cpu) {
    sg_status st = SG_OK;
    for (int32_t i = 0; i < nargs; i++) {
        cpu[i] = args[i];
        const sg_any *v = &args[i];
        if (v->tag == SG_ANY_TENSOR) {
            cpu[i].u.t = NULL;
            if (!st) st = to_cpu(f, v->u.t, &cpu[i].u.t);
        } else if (v->tag == SG_ANY_TENSOR_LIST || v->tag == SG_ANY_OPT_TENSOR_LIST) {
            sg_tensor **l = calloc(v->len ? (size_t)v->len : 1, sizeof *l);
            cpu[i].u.tensors = l;
            if (!l) {
                cpu[i].tag = SG_ANY_NONE; /* nothing to free */
                if (!st) st = sg_error(SG_ENOMEM, "%s: CPU fallback: out of memory", f->op->name);
                continue;
            }
            for (int32_t j = 0; j < v->len && !st; j++) st = to_cpu(f, v->u.tensors[j], &l[j]);
        } else if (v->tag == SG_ANY_DEVICE) {
            cpu[i].u.dev = SG_CPU;
        }
    }
    return st;
}

static void free_args(sg_any *cpu, int32_t nargs) {
    for (int32_t i = 0; i < nargs; i++) {
        if (cpu[i].tag == SG_ANY_TENSOR) {
            sg_tensor_release(cpu[i].u.t);
        } else if (cpu[i].tag == SG_ANY_TENSOR_LIST || cpu[i].tag == SG_ANY_OPT_TENSOR_LIST) {
            for (int32_t j = 0; j < cpu[i].len; j++) sg_tensor_release(cpu[i].u.tensors[j]);
            free((void *)cpu[i].u.tensors);
        }
    }
}

/* dev[...] = cpu[...] for a written argument, resizing dev first where the kernel resized its
 * CPU twin (an out= argument): to the twin's strides too where they are dense in some order
 * (a pointwise kernel gives a resized out= its inputs' layout). */
static sg_status write_back(sg_tensor *dev, sg_tensor *cpu) {
    if (!dev || !cpu || dev == cpu || dev->device.type == SG_DEV_CPU) return SG_OK;
    sg_status st = sg_tensor_resize_out_strided_(
        dev, cpu->sizes, sg_tensor_is_dense(cpu) ? cpu->strides : NULL, cpu->ndim);
    return st ? st : sg_tensor_copy_(dev, cpu);
}

/* The device tensor for CPU result r, which may alias the argument pair (dev, cpu): dev itself
 * where r is cpu, a view of dev's storage where r views cpu's mirror, else a copy on target. */
static sg_status result_back(sg_tensor *r, sg_tensor *dev, sg_tensor *cpu, sg_device target,
                             sg_tensor **out) {
    *out = NULL;
    if (dev && cpu && dev != cpu) {
        if (r == cpu) {
            *out = sg_tensor_retain(dev);
            return SG_OK;
        }
        if (r->storage == cpu->storage)
            return sg__tensor_new(dev->storage, (sg_dtype)r->dtype, r->sizes, r->strides, r->ndim,
                                  r->offset, out);
    } else if (dev && r == dev) {
        *out = sg_tensor_retain(r);
        return SG_OK;
    }
    if (target.type == SG_DEV_CPU) {
        *out = sg_tensor_retain(r);
        return SG_OK;
    }
    if (!r->offset) return sg_tensor_to(r, target, out);
    /* a view into its storage (a row of where(condition)'s result): the storage moves whole,
     * so the result keeps its offset as on the CPU */
    int64_t    n = (int64_t)r->storage->nbytes, one = 1;
    sg_tensor *whole = NULL, *moved = NULL;
    sg_status  st = sg__tensor_new(r->storage, SG_UINT8, &n, &one, 1, 0, &whole);
    if (!st) st = sg_tensor_to(whole, target, &moved);
    if (!st)
        st = sg__tensor_new(moved->storage, (sg_dtype)r->dtype, r->sizes, r->strides, r->ndim,
                            r->offset, out);
    sg_tensor_release(whole);
    sg_tensor_release(moved);
    return st;
}

/* The device results go to: the Device argument where one is given, else the device of the
 * first tensor argument off the CPU, else the CPU. */
static sg_device target_of(const sg_op *op, const sg_any *args, int32_t nargs) {
    for (int32_t i = 0; i < nargs; i++)
        if (args[i].tag == SG_ANY_DEVICE && op->schema.args[i].type &&
            sg_type_base(op->schema.args[i].type)->kind == SG_TY_DEVICE)
            return args[i].u.dev;
    for (int32_t i = 0; i < nargs; i++) {
        const sg_any *v = &args[i];
        if (v->tag == SG_ANY_TENSOR && v->u.t->device.type != SG_DEV_CPU) return v->u.t->device;
        if (v->tag == SG_ANY_TENSOR_LIST || v->tag == SG_ANY_OPT_TENSOR_LIST)
            for (int32_t j = 0; j < v->len; j++)
                if (v->u.tensors[j] && v->u.tensors[j]->device.type != SG_DEV_CPU)
                    return v->u.tensors[j]->device;
    }
    return SG_CPU;
}

/* Result slot r (from the CPU kernel) replaced by its device counterpart. */
static sg_status fix_result(const sg_op *op, int32_t r, const sg_any *args, const sg_any *cpu,
                            sg_device target, sg_any *ret) {
    int32_t a = sg_op_ret_alias_arg(op, r);
    if (ret->tag == SG_ANY_TENSOR) {
        sg_tensor *dev = NULL, *c = NULL, *back;
        if (a >= 0 && args[a].tag == SG_ANY_TENSOR) dev = args[a].u.t, c = cpu[a].u.t;
        sg_status st = result_back(ret->u.t, dev, c, target, &back);
        if (st) return st;
        sg_tensor_release(ret->u.t);
        ret->u.t = back;
        return SG_OK;
    }
    if (ret->tag == SG_ANY_TENSOR_LIST || ret->tag == SG_ANY_OPT_TENSOR_LIST) {
        sg_tensor **items = (sg_tensor **)ret->u.tensors;
        bool        list_arg = a >= 0 && (args[a].tag == SG_ANY_TENSOR_LIST ||
                                   args[a].tag == SG_ANY_OPT_TENSOR_LIST);
        for (int32_t j = 0; j < ret->len; j++) {
            if (!items[j]) continue;
            sg_tensor *dev = NULL, *c = NULL, *back;
            if (a >= 0 && args[a].tag == SG_ANY_TENSOR) {
                dev = args[a].u.t, c = cpu[a].u.t; /* split/unbind: views of one argument */
            } else if (list_arg) {
                for (int32_t k = 0; k < args[a].len; k++)
                    if (cpu[a].u.tensors[k] && (cpu[a].u.tensors[k] == items[j] ||
                                                cpu[a].u.tensors[k]->storage == items[j]->storage))
                        dev = args[a].u.tensors[k], c = cpu[a].u.tensors[k];
            }
            sg_status st = result_back(items[j], dev, c, target, &back);
            if (st) return st;
            sg_tensor_release(items[j]);
            items[j] = back;
        }
    }
    return SG_OK;
}

sg_status sg_cpu_fallback(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                          int32_t nrets, void *ctx) {
    (void)ctx, (void)ks;
    int32_t nargs = op ? op->nargs : 0;
    if (!op || (nargs > 0 && !args) || (nrets > 0 && !rets))
        return sg_error(SG_EINVAL, "sg_cpu_fallback: %s is NULL",
                        !op ? "op" : nargs > 0 && !args ? "args" : "rets");
    fb      f = {op, NULL, 0, 0};
    sg_any  small[16];
    sg_any *cpu = nargs <= 16 ? small : malloc((size_t)nargs * sizeof *cpu);
    if (!cpu) return sg_error(SG_ENOMEM, "%s: CPU fallback: out of memory", op->name);
    sg_status st = build_args(&f, args, nargs, cpu);
    if (!st) st = sg_op_redispatch_boxed(op, SG_KEYSET(SG_KEY_CPU), cpu, rets, nrets);
    /* written arguments first, so that a result aliasing one sees the new values */
    for (int32_t w = 0; w < op->nwritten && !st; w++) {
        int32_t a = op->written_args[w];
        if (a >= nargs) continue;
        if (args[a].tag == SG_ANY_TENSOR) {
            st = write_back(args[a].u.t, cpu[a].u.t);
        } else if (args[a].tag == SG_ANY_TENSOR_LIST || args[a].tag == SG_ANY_OPT_TENSOR_LIST) {
            for (int32_t j = 0; j < args[a].len && !st; j++)
                st = write_back(args[a].u.tensors[j], cpu[a].u.tensors[j]);
        }
    }
    sg_device target = target_of(op, args, nargs);
    for (int32_t r = 0; r < nrets && r < op->nrets && !st; r++)
        st = fix_result(op, r, args, cpu, target, &rets[r]);
    if (st)
        for (int32_t r = 0; r < nrets; r++) sg_any_release(&rets[r]);
    free_args(cpu, nargs);
    if (cpu != small) free(cpu);
    for (int32_t i = 0; i < f.nm; i++) sg__storage_release(f.m[i].cpu);
    free(f.m);
    return st;
}
