/* test_golden_glue.c: the glue of the golden case (every type family), linked and called: a
 * typed call that lands on a boxed kernel must box each kind of argument faithfully
 * (sg_call_boxed_sig) and unbox each kind of result; a boxed call must reach a typed kernel
 * with every argument unboxed (the generated adapters); a typed call's tensor lists are checked
 * as a boxed call's are. */
#include "check.h"
#include "golden.h"

#include <string.h>

static sg_tensor *t;

/* boxed golden::mix: checks what arrived, returns (x, 2.5) */
static sg_status mix_boxed(const sg_op *op, sg_keyset ks, const sg_any *a, sg_any *rets,
                           int32_t nrets, void *ctx) {
    int32_t nargs = sg_op_nargs(op);
    (void)ctx, (void)op, (void)ks;
    CHECK(nargs == 11 && nrets == 2);
    CHECK(a[0].tag == SG_ANY_TENSOR && a[0].u.t == t);
    CHECK(a[1].tag == SG_ANY_COMPLEX && a[1].u.c->re == 1 && a[1].u.c->im == -2);
    CHECK(a[2].tag == SG_ANY_INT && a[2].u.i == 42); /* Any: passed through as given */
    CHECK(a[3].tag == SG_ANY_LAYOUT && a[3].u.i == SG_STRIDED);
    CHECK(a[4].tag == SG_ANY_MEMORY_FORMAT && a[4].u.i == SG_CHANNELS_LAST);
    CHECK(a[5].tag == SG_ANY_DEVICE && a[5].u.dev.type == SG_DEV_META);
    CHECK(a[6].tag == SG_ANY_FLOAT_LIST && a[6].len == 2 && a[6].u.floats[1] == 0.25);
    CHECK(a[7].tag == SG_ANY_BOOL_LIST && a[7].len == 3 && !a[7].u.bools[1]);
    CHECK(a[8].tag == SG_ANY_NONE);
    CHECK(a[9].tag == SG_ANY_LIST && a[9].len == 2 && a[9].u.items[1].tag == SG_ANY_STR &&
          strcmp(a[9].u.items[1].u.s, "b") == 0);
    CHECK(a[10].tag == SG_ANY_INT && a[10].u.i == 7);
    rets[0] = sg_any_tensor(sg_tensor_retain(a[0].u.t));
    rets[1] = sg_any_float(2.5);
    return SG_OK;
}

/* typed golden::mix: reached from a boxed call through the generated adapter */
static sg_status mix_typed(sg_keyset ks, sg_tensor *x, sg_complex c, const sg_any *extra,
                           sg_layout layout, sg_memory_format mf, sg_device dev,
                           const sg_float_list *weights, sg_bool_list mask,
                           const sg_str_list *names, sg_str_list labels, const int64_t *k,
                           sg_tensor **ret_out, double *ret_score) {
    (void)ks;
    CHECK(x == t && c.re == 1 && c.im == -2 && extra && extra->u.i == 42);
    CHECK(layout == SG_STRIDED && mf == SG_CHANNELS_LAST && dev.type == SG_DEV_META);
    CHECK(weights && weights->len == 2 && weights->items[0] == 0.5);
    CHECK(mask.len == 3 && mask.items[2]);
    CHECK(names == NULL && labels.len == 2 && strcmp(labels.items[0], "a") == 0);
    CHECK(k && *k == 7);
    *ret_out = sg_tensor_retain(x);
    *ret_score = 1.5;
    return SG_OK;
}

/* typed golden::mix that sets its Tensor result, then fails (as a kernel may that releases
 * what it made): the adapter lets the kernel write that result into its boxed slot */
static sg_status mix_fails(sg_keyset ks, sg_tensor *x, sg_complex c, const sg_any *extra,
                           sg_layout layout, sg_memory_format mf, sg_device dev,
                           const sg_float_list *weights, sg_bool_list mask,
                           const sg_str_list *names, sg_str_list labels, const int64_t *k,
                           sg_tensor **ret_out, double *ret_score) {
    (void)ks, (void)c, (void)extra, (void)layout, (void)mf, (void)dev, (void)weights, (void)mask;
    (void)names, (void)labels, (void)k, (void)ret_score;
    *ret_out = x;
    return sg_error(SG_EUNSUPPORTED, "mix_fails");
}

/* golden::mix with a result of the wrong kind (an int where the schema says float) */
static sg_status mix_wrong(const sg_op *op, sg_keyset ks, const sg_any *a, sg_any *rets,
                           int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)nrets;
    rets[0] = sg_any_tensor(sg_tensor_retain(a[0].u.t));
    rets[1] = sg_any_int(3);
    return SG_OK;
}

/* a Scalar result and a ScalarType result, boxed kernels */
static sg_status item_boxed(const sg_op *op, sg_keyset ks, const sg_any *a, sg_any *rets,
                            int32_t nrets, void *ctx) {
    (void)ctx, (void)op, (void)ks, (void)a, (void)nrets;
    rets[0] = sg_any_int(-3);
    return SG_OK;
}

/* typed aten::cat and aten::index.Tensor at the CPU and Meta keys: kernels that check nothing
 * (as a plug-in backend's may not), counting their calls */
static int cat_calls, index_calls;
static sg_status cat_kernel(sg_keyset ks, sg_tensor_list tensors, int64_t dim, sg_tensor **ret) {
    (void)ks, (void)dim;
    cat_calls++;
    CHECK(tensors.len > 0 && tensors.items);
    for (int32_t i = 0; i < tensors.len; i++) CHECK(tensors.items[i] != NULL);
    *ret = sg_tensor_retain(tensors.items[0]);
    return SG_OK;
}
static sg_status index_kernel(sg_keyset ks, sg_tensor *self, sg_tensor_list indices,
                              sg_tensor **ret) {
    (void)ks;
    index_calls++;
    CHECK(indices.len > 0 && indices.items);
    *ret = sg_tensor_retain(self);
    return SG_OK;
}

/* A typed call with Tensor[] or Tensor?[] arguments is checked as a boxed one is before any
 * kernel runs: no NULL item in a Tensor[], items where there is a length, no negative length,
 * one device for every tensor (CPU 0-dim tensors aside), with the boxed call's message. */
static void typed_lists(void) {
    sg_handle *h[4];
    CHECK(aten_cat_register(SG_KEY_CPU, cat_kernel, &h[0]) == SG_OK);
    CHECK(aten_cat_register(SG_KEY_META, cat_kernel, &h[1]) == SG_OK);
    CHECK(aten_index_Tensor_register(SG_KEY_CPU, index_kernel, &h[2]) == SG_OK);
    CHECK(aten_index_Tensor_register(SG_KEY_META, index_kernel, &h[3]) == SG_OK);
    int64_t    n[1] = {2};
    sg_tensor *meta = NULL, *scalar = NULL, *out = NULL;
    CHECK(sg_tensor_empty(n, 1, SG_FLOAT32, SG_META, &meta) == SG_OK);
    CHECK(sg_tensor_zeros(NULL, 0, SG_FLOAT32, SG_CPU, &scalar) == SG_OK);

    sg_tensor *with_null[2] = {t, NULL};
    CHECK(aten_cat((sg_tensor_list){with_null, 2}, 0, &out) == SG_EINVAL && out == NULL);
    CHECK(strstr(sg_last_error(), "aten::cat: argument 0 'tensors' holds a NULL tensor in a "
                                  "Tensor[]") != NULL);
    CHECK(aten_cat((sg_tensor_list){NULL, 1}, 0, &out) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "a NULL item pointer with a nonzero length") != NULL);
    CHECK(aten_cat((sg_tensor_list){with_null, -1}, 0, &out) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "a list of negative length") != NULL);
    CHECK(cat_calls == 0);

    /* two devices: the boxed call's error, word for word */
    sg_tensor *mixed[2] = {t, meta};
    sg_any     args[2] = {sg_any_tensor_list(mixed, 2), sg_any_int(0)}, rets[1];
    char       boxed[512];
    CHECK(sg_op_call_boxed(aten_cat_op, args, 2, rets, 1) == SG_EINVAL);
    snprintf(boxed, sizeof boxed, "%s", sg_last_error());
    CHECK(strstr(boxed, "Expected all tensors to be on the same device") != NULL);
    out = NULL;
    CHECK(aten_cat((sg_tensor_list){mixed, 2}, 0, &out) == SG_EINVAL && out == NULL);
    CHECK_STR(sg_last_error(), boxed);
    CHECK(cat_calls == 0);
    /* a CPU 0-dim tensor beside a Meta one passes, as in a boxed call; one device passes */
    sg_tensor *beside[2] = {meta, scalar}, *same[2] = {t, t};
    CHECK(aten_cat((sg_tensor_list){beside, 2}, 0, &out) == SG_OK && out == meta);
    sg_tensor_release(out);
    CHECK(aten_cat((sg_tensor_list){same, 2}, 0, &out) == SG_OK && out == t);
    sg_tensor_release(out);
    CHECK(cat_calls == 2);

    /* Tensor?[]: None items pass; a list without items, or a tensor beside self on another
     * device, does not */
    sg_tensor *idx[2] = {NULL, t}, *idx_meta[2] = {NULL, meta};
    CHECK(aten_index_Tensor(t, (sg_tensor_list){idx, 2}, &out) == SG_OK && out == t);
    sg_tensor_release(out);
    CHECK(aten_index_Tensor(t, (sg_tensor_list){NULL, 2}, &out) == SG_EINVAL);
    CHECK(strstr(sg_last_error(), "a NULL item pointer with a nonzero length") != NULL);
    out = NULL;
    CHECK(aten_index_Tensor(t, (sg_tensor_list){idx_meta, 2}, &out) == SG_EINVAL && !out);
    CHECK(strstr(sg_last_error(), "(argument 1 'indices' is on meta)") != NULL);
    CHECK(index_calls == 1);

    for (int i = 0; i < 4; i++) CHECK(sg_handle_release(h[i]) == SG_OK);
    sg_tensor_release(meta);
    sg_tensor_release(scalar);
}

int main(void) {
    CHECK(golden_init() == SG_OK);
    float   v[2] = {1, 2};
    int64_t n[1] = {2};
    CHECK(sg_tensor_from_blob(v, n, NULL, 1, SG_FLOAT32, SG_CPU, 0, NULL, NULL, &t) == SG_OK);

    sg_complex  c = {1, -2};
    sg_any      extra = sg_any_int(42);
    double      w[2] = {0.5, 0.25};
    bool        m[3] = {true, false, true};
    const char *labels[2] = {"a", "b"};
    int64_t     k = 7;
    sg_float_list wl = {w, 2};
    sg_bool_list  ml = {m, 3};
    sg_str_list   ll = {labels, 2};

    /* typed call -> boxed kernel */
    sg_handle *h;
    CHECK(sg_op_impl(golden_mix_op, SG_KEY_CPU, (sg_kernel){NULL, mix_boxed, NULL}, &h) == SG_OK);
    sg_tensor *out = NULL;
    double     score = 0;
    CHECK(golden_mix(t, c, &extra, SG_STRIDED, SG_CHANNELS_LAST, SG_META, &wl, ml, NULL, ll, &k,
                     &out, &score) == SG_OK);
    CHECK(out == t && score == 2.5);
    sg_tensor_release(out);
    CHECK(sg_handle_release(h) == SG_OK);

    /* a boxed kernel breaking its schema: the typed call fails and hands nothing out */
    CHECK(sg_op_impl(golden_mix_op, SG_KEY_CPU, (sg_kernel){NULL, mix_wrong, NULL}, &h) == SG_OK);
    out = t;
    CHECK(golden_mix(t, c, &extra, SG_STRIDED, SG_CHANNELS_LAST, SG_META, &wl, ml, NULL, ll, &k,
                     &out, &score) == SG_EINVAL);
    CHECK(out == NULL);
    CHECK_STR(sg_last_error(), "a kernel returned int where a float was expected");
    CHECK(sg_handle_release(h) == SG_OK);

    /* boxed call -> typed kernel */
    CHECK(golden_mix_register(SG_KEY_CPU, mix_typed, &h) == SG_OK);
    sg_any args[11] = {sg_any_tensor(t), {SG_ANY_COMPLEX, 0, {0}}, extra,
                       sg_box_tag_i(SG_ANY_LAYOUT, SG_STRIDED),
                       sg_box_tag_i(SG_ANY_MEMORY_FORMAT, SG_CHANNELS_LAST), sg_any_device(SG_META),
                       sg_box_float_list(wl), sg_box_bool_list(ml), sg_any_none(), sg_any_none(),
                       sg_any_int(7)};
    sg_any room[2];
    args[1].u.c = &c;
    args[9] = sg_box_str_list(ll, room);
    sg_any rets[2];
    CHECK(sg_op_call_boxed(golden_mix_op, args, 11, rets, 2) == SG_OK);
    CHECK(rets[0].tag == SG_ANY_TENSOR && rets[0].u.t == t);
    CHECK(rets[1].tag == SG_ANY_FLOAT && rets[1].u.f == 1.5);
    sg_any_release(&rets[0]);
    CHECK(sg_handle_release(h) == SG_OK);

    /* the typed kernel fails after writing its Tensor result: the boxed caller's slots are None
     * and hold no pointer to release or read */
    CHECK(golden_mix_register(SG_KEY_CPU, mix_fails, &h) == SG_OK);
    rets[0] = sg_any_tensor(t); /* stale values the call zeroes */
    rets[1] = sg_any_float(9);
    CHECK(sg_op_call_boxed(golden_mix_op, args, 11, rets, 2) == SG_EUNSUPPORTED);
    CHECK_STR(sg_last_error(), "mix_fails");
    CHECK(rets[0].tag == SG_ANY_NONE && rets[0].u.t == NULL);
    CHECK(rets[1].tag == SG_ANY_NONE);
    CHECK(sg_handle_release(h) == SG_OK);

    /* a Scalar result keeps its kind through unboxing */
    CHECK(sg_op_impl(aten_item_op, SG_KEY_CPU, (sg_kernel){NULL, item_boxed, NULL}, &h) == SG_OK);
    sg_scalar s;
    CHECK(aten_item(t, &s) == SG_OK && s.kind == SG_SCALAR_INT && s.u.i == -3);
    CHECK(sg_handle_release(h) == SG_OK);

    typed_lists();

    sg_tensor_release(t);
    sg_runtime_shutdown();
    return check_result("test_golden_glue");
}
