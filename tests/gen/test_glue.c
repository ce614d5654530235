/* test_glue.c: generated glue, linked with the runtime: ops defined by the library's init,
 * the op table, typed and boxed calls before and after kernels are registered, and the
 * runtime's error when none is. Built twice: over the shipped schemas and over PyTorch's corpus
 * (GLUE_INIT, GLUE_FIND and GLUE_NOPS name that library's functions). */
#include "check.h"
#include GLUE_HEADER

#include <string.h>

static float data[4] = {-1, 2, -3, 4};

/* A typed abs kernel: writes |x| into a new CPU tensor. */
static sg_status abs_cpu(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    sg_status st = sg_tensor_empty(self->sizes, self->ndim, SG_FLOAT32, SG_CPU, ret);
    if (st) return st;
    const float *in = sg_tensor_data(self);
    float       *out = sg_tensor_data(*ret);
    for (int64_t i = 0; i < sg_tensor_numel(self); i++) out[i] = in[i] < 0 ? -in[i] : in[i];
    return SG_OK;
}

/* A boxed add kernel: result = self + alpha * other, alpha an int or float Scalar. */
static sg_status add_boxed(const sg_op *op, sg_keyset ks, const sg_any *args, sg_any *rets,
                           int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)nrets;
    sg_tensor *a = args[0].u.t, *b = args[1].u.t, *out;
    double     alpha = sg_scalar_to_double(sg_unbox_scalar(&args[2]));
    sg_status  st = sg_tensor_empty(a->sizes, a->ndim, SG_FLOAT32, SG_CPU, &out);
    if (st) return st;
    const float *x = sg_tensor_data(a), *y = sg_tensor_data(b);
    float       *z = sg_tensor_data(out);
    for (int64_t i = 0; i < sg_tensor_numel(a); i++) z[i] = x[i] + (float)alpha * y[i];
    rets[0] = sg_any_tensor(out);
    return SG_OK;
}

/* structured mul: a meta function (same shape as self) and one out kernel */
static int meta_calls;
static sg_status mul_meta(sg_tensor *self, sg_tensor *other, sg_meta *outs) {
    (void)other;
    meta_calls++;
    outs[0].ndim = self->ndim;
    outs[0].dtype = (sg_dtype)self->dtype;
    outs[0].device = self->device;
    for (int32_t i = 0; i < self->ndim; i++) outs[0].sizes[i] = self->sizes[i];
    return SG_OK;
}

static sg_status mul_out_cpu(sg_keyset ks, sg_tensor *self, sg_tensor *other, sg_tensor *out,
                             sg_tensor **ret) {
    (void)ks;
    const float *x = sg_tensor_data(self), *y = sg_tensor_data(other);
    float       *z = sg_tensor_data(out);
    for (int64_t i = 0; i < sg_tensor_numel(out); i++) z[i] = x[i] * y[i];
    *ret = sg_tensor_retain(out);
    return SG_OK;
}

/* relu_ in place: its autogen out variant relu.out copies, then runs it */
static sg_status relu__cpu(sg_keyset ks, sg_tensor *self, sg_tensor **ret) {
    (void)ks;
    float *x = sg_tensor_data(self);
    for (int64_t i = 0; i < sg_tensor_numel(self); i++) x[i] = x[i] < 0 ? 0 : x[i];
    *ret = sg_tensor_retain(self);
    return SG_OK;
}

static void test_composites(sg_tensor *t) {
    int64_t    n[1] = {4};
    sg_tensor *r = NULL, *buf;
    CHECK(aten_mul_Tensor(t, t, &r) == SG_ENOKERNEL || sg_last_status() == SG_EUNSUPPORTED);
    sg_handle *h;
    CHECK(aten_mul_out_register(SG_KEY_CPU, mul_out_cpu, &h) == SG_OK);
    CHECK(aten_mul_Tensor(t, t, &r) == SG_EUNSUPPORTED);
    CHECK_STR(sg_last_error(), "aten::mul.Tensor runs as structured aten::mul.out, whose meta "
                               "function is not set (aten_mul_out_set_meta)");
    aten_mul_out_set_meta(mul_meta);
    /* functional: meta, a fresh output, the out kernel */
    CHECK(aten_mul_Tensor(t, t, &r) == SG_OK && r && meta_calls == 1);
    CHECK(r && ((float *)sg_tensor_data(r))[2] == 9 && r != t);
    sg_tensor_release(r);
    /* in place: meta checks self can hold the result, the out kernel writes self */
    float v[4] = {1, 2, 3, 4};
    CHECK(sg_tensor_from_blob(v, n, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &buf) == SG_OK);
    CHECK(aten_mul__Tensor(buf, buf, &r) == SG_OK && r == buf && v[3] == 16);
    sg_tensor_release(r);
    sg_tensor_release(buf);
    CHECK(sg_handle_release(h) == SG_OK);

    /* autogen relu.out from relu_: copy into out, then relu_ on out */
    CHECK(aten_relu__register(SG_KEY_CPU, relu__cpu, &h) == SG_OK);
    float o[4] = {9, 9, 9, 9};
    CHECK(sg_tensor_from_blob(o, n, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &buf) == SG_OK);
    CHECK(aten_relu_out(t, buf, &r) == SG_OK && r == buf);
    CHECK(o[0] == 0 && o[1] == 2 && o[2] == 0 && o[3] == 4 && data[0] == -1);
    sg_tensor_release(r);
    sg_tensor_release(buf);
    CHECK(sg_handle_release(h) == SG_OK);
}

int main(void) {
    CHECK(GLUE_INIT() == SG_OK);
    CHECK(GLUE_INIT() == SG_OK); /* twice: the ops are the same */

    /* the table: sorted, and the lookup finds entries with their descriptors */
    const sg_op_desc *d = GLUE_FIND("aten::add", "Tensor");
    CHECK(d && strcmp(d->cname, "aten_add_Tensor") == 0 && d->nargs == 3 && d->nrets == 1);
    CHECK(d && strcmp(d->args[2].name, "alpha") == 0 && d->args[2].kwarg_only &&
          strcmp(d->args[2].default_text, "1") == 0 && strcmp(d->args[2].type, "Scalar") == 0);
    CHECK(d && *d->op == aten_add_Tensor_op && aten_add_Tensor_op != NULL);
    const sg_op_desc *inplace = GLUE_FIND("add_", "Tensor");
    CHECK(inplace && inplace->args[0].write && strcmp(inplace->args[0].alias, "a!") == 0);
    CHECK(GLUE_FIND("aten::add", "NoSuchOverload") == NULL);
    for (size_t i = 1; i < GLUE_NOPS; i++) {
        int c = strcmp(GLUE_OPS[i - 1].name, GLUE_OPS[i].name);
        CHECK(c < 0 || (c == 0 && strcmp(GLUE_OPS[i - 1].overload, GLUE_OPS[i].overload) < 0));
    }

    int64_t    n[1] = {4};
    sg_tensor *t, *r = NULL;
    CHECK(sg_tensor_from_blob(data, n, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &t) == SG_OK);

    /* no kernel: the runtime's message, typed and boxed */
    CHECK(aten_abs(t, &r) == SG_ENOKERNEL && r == NULL);
    CHECK_STR(sg_last_error(), "could not run 'aten::abs' with arguments from the 'CPU' "
                               "backend (tensors on cpu); kernels are registered for: nothing");
    sg_any arg = sg_any_tensor(t), ret;
    CHECK(sg_call_by_name("aten::abs", "", &arg, 1, &ret, 1) == SG_ENOKERNEL);

    /* a typed kernel, reached typed and boxed (through the generated boxing adapter) */
    sg_handle *h;
    CHECK(aten_abs_register(SG_KEY_CPU, abs_cpu, &h) == SG_OK);
    CHECK(aten_abs(t, &r) == SG_OK && r && ((float *)sg_tensor_data(r))[2] == 3);
    sg_tensor_release(r);
    CHECK(sg_call_by_name("aten::abs", "", &arg, 1, &ret, 1) == SG_OK);
    CHECK(ret.tag == SG_ANY_TENSOR && ((float *)sg_tensor_data(ret.u.t))[0] == 1);
    sg_any_release(&ret);

    /* a boxed kernel, reached from the typed call (arguments boxed by the generated code) */
    sg_handle *h2;
    CHECK(sg_op_impl(aten_add_Tensor_op, SG_KEY_CPU, (sg_kernel){NULL, add_boxed, NULL}, &h2) ==
          SG_OK);
    r = NULL;
    CHECK(aten_add_Tensor(t, t, sg_scalar_int(2), &r) == SG_OK && r);
    CHECK(r && ((float *)sg_tensor_data(r))[1] == 6 && ((float *)sg_tensor_data(r))[2] == -9);
    sg_tensor_release(r);
    CHECK(aten_add_Tensor(t, t, sg_scalar_float(0.5), &r) == SG_OK && r &&
          ((float *)sg_tensor_data(r))[3] == 6);
    sg_tensor_release(r);

    /* a read-only tensor bound to an argument the op writes: refused before dispatch */
    sg_tensor *ro;
    CHECK(sg_tensor_from_blob(data, n, NULL, 1, SG_FLOAT32, SG_CPU, SG_STORAGE_READ_ONLY, NULL,
                              NULL, &ro) == SG_OK);
    CHECK(aten_add__Tensor(ro, t, sg_scalar_int(1), &r) == SG_EREADONLY);
    CHECK(strstr(sg_last_error(), "argument 0 'self' is written by the op") != NULL);

    test_composites(t);

    CHECK(sg_handle_release(h) == SG_OK && sg_handle_release(h2) == SG_OK);
    CHECK(aten_abs(t, &r) == SG_ENOKERNEL);
    sg_tensor_release(ro);
    sg_tensor_release(t);
    sg_runtime_shutdown();
    return check_result("test_glue");
}
