/* api.c: boxing helpers of the generated typed API, and static op tables. */
#include "sg_api.h"
#include "rt_dispatch.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double sg_scalar_to_double(sg_scalar s) {
    switch (s.kind) {
    case SG_SCALAR_BOOL: return s.u.b;
    case SG_SCALAR_INT: return (double)s.u.i;
    case SG_SCALAR_COMPLEX: return s.u.c.re;
    default: return s.u.f;
    }
}

void sg_tensor_list_release(sg_tensor_list *l) {
    if (!l) return;
    for (int32_t i = 0; l->items && i < l->len; i++) sg_tensor_release(l->items[i]);
    free((void *)l->items);
    l->items = NULL;
    l->len = 0;
}

sg_any sg_box_scalar(const sg_scalar *s) {
    sg_any v = sg_any_none();
    if (!s) return v;
    switch (s->kind) {
    case SG_SCALAR_BOOL: return sg_any_bool(s->u.b);
    case SG_SCALAR_INT: return sg_any_int(s->u.i);
    case SG_SCALAR_COMPLEX:
        v.tag = SG_ANY_COMPLEX;
        v.u.c = &s->u.c;
        return v;
    default: return sg_any_float(s->u.f);
    }
}

sg_scalar sg_unbox_scalar(const sg_any *v) {
    sg_scalar s = sg_scalar_int(0);
    if (!v) return s;
    switch (v->tag) {
    case SG_ANY_BOOL: return sg_scalar_bool(v->u.b);
    case SG_ANY_INT: return sg_scalar_int(v->u.i);
    case SG_ANY_FLOAT: return sg_scalar_float(v->u.f);
    case SG_ANY_COMPLEX:
        if (!v->u.c) return s;
        s.kind = SG_SCALAR_COMPLEX;
        s.u.c = *v->u.c;
        return s;
    default: return s;
    }
}

/* A list without room or items for its length boxes as None: the callee then refuses it by
 * its tag, where a list of len items at NULL would be read. */
static bool list_ok(const void *items, const void *room, int32_t len) {
    return len >= 0 && (len == 0 || (items && room));
}

sg_any sg_box_scalar_list(sg_scalar_list l, sg_any *room) {
    if (!list_ok(l.items, room, l.len)) return sg_any_none();
    for (int32_t i = 0; i < l.len; i++) room[i] = sg_box_scalar(&l.items[i]);
    sg_any v = {SG_ANY_LIST, l.len, {0}};
    v.u.items = room;
    return v;
}

sg_any sg_box_str_list(sg_str_list l, sg_any *room) {
    if (!list_ok(l.items, room, l.len)) return sg_any_none();
    for (int32_t i = 0; i < l.len; i++) room[i] = sg_box_str(l.items[i]);
    sg_any v = {SG_ANY_LIST, l.len, {0}};
    v.u.items = room;
    return v;
}

sg_int_list sg_unbox_int_list(const sg_any *v, int64_t *room, int32_t n) {
    sg_int_list l = {NULL, 0};
    if (!v) return l;
    if (v->tag == SG_ANY_INT_LIST) {
        l.items = v->u.ints;
        l.len = v->len > 0 && v->u.ints ? v->len : 0;
    } else if (v->tag == SG_ANY_INT && room && n > 0) {
        for (int32_t i = 0; i < n; i++) room[i] = v->u.i;
        l.items = room;
        l.len = n;
    }
    return l;
}

sg_scalar_list sg_unbox_scalar_list(const sg_any *v, sg_scalar *room) {
    int32_t n = v && room && v->u.items ? sg_unbox_list_len(v) : 0;
    n = n > 0 ? n : 0;
    for (int32_t i = 0; i < n; i++) room[i] = sg_unbox_scalar(&v->u.items[i]);
    sg_scalar_list l = {room, n};
    return l;
}

sg_str_list sg_unbox_str_list(const sg_any *v, const char **room) {
    int32_t n = v && room && v->u.items ? sg_unbox_list_len(v) : 0;
    n = n > 0 ? n : 0;
    for (int32_t i = 0; i < n; i++) room[i] = sg_unbox_str(&v->u.items[i]);
    sg_str_list l = {room, n};
    return l;
}

sg_any sg_box_tensor_list_result(sg_tensor_list l) {
    sg_any v = {SG_ANY_TENSOR_LIST, l.len, {0}};
    v.u.tensors = l.items;
    return v;
}

/* A result or out-pointer that is NULL: the error of fn. */
#define RESULT_ARGS(fn, v, out)                                                                \
    do {                                                                                       \
        if (!(v) || !(out))                                                                    \
            return sg_error(SG_EINVAL, "%s: %s is NULL", (fn), (v) ? "out" : "the result");    \
    } while (0)

/* A result of the wrong kind: released, and an error. */
static sg_status wrong(sg_any *v, const char *expected) {
    sg_status st = sg_error(SG_EINVAL, "a kernel returned %s where %s was expected",
                            sg_any_tag_name(v->tag), expected);
    sg_any_release(v);
    return st;
}

sg_any sg_box_scalar_result(sg_scalar s) {
    if (s.kind != SG_SCALAR_COMPLEX) return sg_box_scalar(&s);
    sg_complex *c = malloc(sizeof *c);
    if (!c) return sg_any_none();
    *c = s.u.c;
    return sg_box_complex(c);
}

sg_status sg_result_tensor(sg_any *v, sg_tensor **out) {
    RESULT_ARGS("sg_result_tensor", v, out);
    *out = NULL;
    if (v->tag != SG_ANY_TENSOR) return wrong(v, "a Tensor");
    *out = v->u.t;
    *v = sg_any_none();
    return SG_OK;
}

sg_status sg_result_opt_tensor(sg_any *v, sg_tensor **out) {
    RESULT_ARGS("sg_result_opt_tensor", v, out);
    *out = NULL;
    return v->tag == SG_ANY_NONE ? SG_OK : sg_result_tensor(v, out);
}

sg_status sg_result_int(sg_any *v, int64_t *out) {
    RESULT_ARGS("sg_result_int", v, out);
    if (v->tag != SG_ANY_INT) return wrong(v, "an int");
    *out = v->u.i;
    return SG_OK;
}

sg_status sg_result_float(sg_any *v, double *out) {
    RESULT_ARGS("sg_result_float", v, out);
    if (v->tag != SG_ANY_FLOAT) return wrong(v, "a float");
    *out = v->u.f;
    return SG_OK;
}

sg_status sg_result_bool(sg_any *v, bool *out) {
    RESULT_ARGS("sg_result_bool", v, out);
    if (v->tag != SG_ANY_BOOL) return wrong(v, "a bool");
    *out = v->u.b;
    return SG_OK;
}

sg_status sg_result_scalar(sg_any *v, sg_scalar *out) {
    RESULT_ARGS("sg_result_scalar", v, out);
    if (v->tag != SG_ANY_BOOL && v->tag != SG_ANY_INT && v->tag != SG_ANY_FLOAT &&
        v->tag != SG_ANY_COMPLEX)
        return wrong(v, "a Scalar");
    *out = sg_unbox_scalar(v);
    sg_any_release(v);
    return SG_OK;
}

sg_status sg_result_dtype(sg_any *v, sg_dtype *out) {
    RESULT_ARGS("sg_result_dtype", v, out);
    if (v->tag != SG_ANY_DTYPE) return wrong(v, "a ScalarType");
    *out = (sg_dtype)v->u.i;
    return SG_OK;
}

sg_status sg_result_any(sg_any *v, sg_any *out) {
    RESULT_ARGS("sg_result_any", v, out);
    *out = *v;
    *v = sg_any_none();
    return SG_OK;
}

sg_status sg_unbox_tensor_list_result(sg_any *v, sg_tensor_list *out) {
    RESULT_ARGS("sg_unbox_tensor_list_result", v, out);
    if (v->tag != SG_ANY_TENSOR_LIST) {
        out->items = NULL;
        out->len = 0;
        return wrong(v, "a Tensor[]");
    }
    out->items = v->u.tensors;
    out->len = v->len;
    *v = sg_any_none();
    return SG_OK;
}

/* ---- composite kernels ------------------------------------------------------------------ */

sg_status sg_meta_empty(const sg_meta *m, sg_tensor **out) {
    if (!m) {
        if (out) *out = NULL;
        return sg_error(SG_EINVAL, "sg_meta_empty: the meta is NULL");
    }
    if (m->strided)
        return sg_tensor_empty_strided(m->sizes, m->strides, m->ndim, m->dtype, m->device, out);
    return sg_tensor_empty(m->sizes, m->ndim, m->dtype, m->device, out);
}

static size_t shape_text(char *buf, size_t len, const int64_t *sizes, int32_t n) {
    size_t k = (size_t)snprintf(buf, len, "[");
    for (int32_t i = 0; i < n && k < len; i++)
        k += (size_t)snprintf(buf + k, len - k, "%s%lld", i ? ", " : "", (long long)sizes[i]);
    if (k < len) k += (size_t)snprintf(buf + k, len - k, "]");
    return k;
}

sg_status sg_meta_check(const sg_meta *m, const sg_tensor *t, const char *op) {
    if (!op) op = "sg_meta_check";
    if (!m || !t)
        return sg_error(SG_EINVAL, "%s: %s is NULL", op, m ? "the tensor" : "the meta");
    bool same = m->ndim == t->ndim;
    for (int32_t i = 0; same && i < m->ndim; i++) same = m->sizes[i] == t->sizes[i];
    if (!same) {
        char have[160], want[160];
        shape_text(have, sizeof have, t->sizes, t->ndim);
        shape_text(want, sizeof want, m->sizes, m->ndim);
        return sg_error(SG_EINVAL, "%s: output with shape %s doesn't match the broadcast shape %s",
                        op, have, want);
    }
    if (!sg_dtype_can_cast(m->dtype, (sg_dtype)t->dtype))
        return sg_error(SG_EINVAL, "%s: result type %s can't be cast to the desired output type %s",
                        op, sg_dtype_c10_name(m->dtype), sg_dtype_c10_name((sg_dtype)t->dtype));
    return SG_OK;
}

sg_status sg_tensor_clone(const sg_tensor *t, sg_tensor **out) {
    if (!out) return sg_error(SG_EINVAL, "clone: out is NULL");
    *out = NULL;
    if (!t) return sg_error(SG_EINVAL, "clone: the tensor is NULL");
    sg_status st = sg_tensor_empty(t->sizes, t->ndim, (sg_dtype)t->dtype, t->device, out);
    if (!st && (st = sg_tensor_copy_(*out, t))) {
        sg_tensor_release(*out);
        *out = NULL;
    }
    return st;
}

/* A list's items must be there for its length. */
static sg_status check_list(const char *fn, const char *what, sg_tensor_list l) {
    if (l.len < 0) return sg_error(SG_EINVAL, "%s: %s has length %d", fn, what, (int)l.len);
    if (l.len && !l.items)
        return sg_error(SG_EINVAL, "%s: %s has %d items at NULL", fn, what, (int)l.len);
    return SG_OK;
}

static sg_status new_list(int32_t n, sg_tensor_list *out) {
    out->len = 0;
    out->items = calloc(n > 0 ? (size_t)n : 1, sizeof(sg_tensor *));
    return out->items ? SG_OK : sg_error(SG_ENOMEM, "out of memory");
}

sg_status sg_tensor_list_clone(sg_tensor_list l, sg_tensor_list *out) {
    if (!out) return sg_error(SG_EINVAL, "sg_tensor_list_clone: out is NULL");
    sg_status st = check_list("sg_tensor_list_clone", "the list", l);
    if (st) {
        out->items = NULL;
        out->len = 0;
        return st;
    }
    st = new_list(l.len, out);
    for (int32_t i = 0; i < l.len && !st; i++) {
        sg_tensor **items = (sg_tensor **)out->items;
        if (l.items[i] && (st = sg_tensor_clone(l.items[i], &items[i]))) break;
        out->len = i + 1;
    }
    if (st) sg_tensor_list_release(out);
    return st;
}

/* dst[i] = src[i] by copy (sg_tensor_copy_ or sg_tensor_copy_out_); fn names the call. */
static sg_status list_copy(const char *fn, sg_tensor_list dst, sg_tensor_list src,
                           sg_status (*copy)(sg_tensor *, const sg_tensor *)) {
    sg_status st0;
    if ((st0 = check_list(fn, "dst", dst)) || (st0 = check_list(fn, "src", src))) return st0;
    if (dst.len != src.len)
        return sg_error(SG_EINVAL, "copying a list of %d tensors into a list of %d", (int)src.len,
                        (int)dst.len);
    for (int32_t i = 0; i < dst.len; i++) {
        if (!dst.items[i] || !src.items[i]) continue;
        sg_status st = copy(dst.items[i], src.items[i]);
        if (st) return st;
    }
    return SG_OK;
}

sg_status sg_tensor_list_copy_(sg_tensor_list dst, sg_tensor_list src) {
    return list_copy("sg_tensor_list_copy_", dst, src, sg_tensor_copy_);
}

sg_status sg_tensor_list_copy_out_(sg_tensor_list dst, sg_tensor_list src) {
    return list_copy("sg_tensor_list_copy_out_", dst, src, sg_tensor_copy_out_);
}

sg_status sg_tensor_list_retain(sg_tensor_list l, sg_tensor_list *out) {
    if (!out) return sg_error(SG_EINVAL, "sg_tensor_list_retain: out is NULL");
    sg_status st = check_list("sg_tensor_list_retain", "the list", l);
    if (st) {
        out->items = NULL;
        out->len = 0;
        return st;
    }
    st = new_list(l.len, out);
    if (st) return st;
    for (int32_t i = 0; i < l.len; i++) ((sg_tensor **)out->items)[i] = sg_tensor_retain(l.items[i]);
    out->len = l.len;
    return SG_OK;
}

/* ---- static op tables -------------------------------------------------------------------- */

static int compare(const sg_op_desc *d, const char *ns, size_t nsn, const char *name,
                   const char *overload) {
    int c = strncmp(d->name, ns, nsn);
    if (c) return c;
    c = strcmp(d->name + nsn, name);
    return c ? c : strcmp(d->overload, overload);
}

const sg_op_desc *sg_op_desc_find(const sg_op_desc *table, size_t n, const char *name,
                                  const char *overload) {
    if (!table || !name) return NULL;
    const char *colons = strstr(name, "::");
    const char *ns = colons ? name : "aten::";
    size_t      nsn = colons ? (size_t)(colons - name) + 2 : 6;
    const char *base = colons ? colons + 2 : name;
    if (!overload) overload = "";
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int    c = compare(&table[mid], ns, nsn, base, overload);
        if (c == 0) return &table[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

sg_status sg_op_desc_define_all(const sg_op_desc *table, size_t n) {
    if (!table && n) return sg_error(SG_EINVAL, "sg_op_desc_define_all: the table is NULL");
    sg_status st0 = sg__op_slots_add(table, n);
    if (st0) return st0;
    for (size_t i = 0; i < n; i++) {
        sg_status st = sg_op_define(table[i].schema, table[i].op);
        if (st) return st;
    }
    return SG_OK;
}
